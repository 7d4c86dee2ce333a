"""Tessera's cycles per instruction next to Blackhole silicon's, point by point.

Why this exists: a cycle model is only as good as its agreement with the hardware it
claims to time.  This module runs the silicon benchmarks' probes on the emulated tile
(:mod:`tessera_cycles.probes`) and sets each derived figure beside the one the primary
datasets give (:mod:`tessera_cycles.silicon`), with the error and whether it is within
:data:`TOLERANCE`.

Tracked points (the configurations a model is held to; silicon.md §3, §4, §6):

* ``tensixbench-blackhole.csv`` (X1, the primary tensixbench run, ``dvalid_setup=once``):
  every phase-A probe at t1, t2 and t3; and phase B's interpretable figures (silicon.md
  §2.2, §4.1), from the math thread's (thread 1) cycles per ``matmul_tiles`` call at each
  fidelity: HiFi2−LoFi (16 more MVMULs), HiFi4−HiFi2 (32 more) and (HiFi4−LoFi)/48, the
  cost of one MVMUL the MOP expander replays.  The per-fidelity figures themselves are
  listed untracked: a silicon call also waits for the feeder's pages and the unpack
  thread, which the ``tensix-b`` probe does not run (the differences cancel them);
* ``riscvbench-blackhole.csv`` (the primary riscvbench run): phases r, t and c at t1, t2
  and t3 — except the series the benchmark's own validity gate (R² ≥ 0.99 per series)
  refused: rv_store_spread at t2 and t3, where thread 0's contended rows fail it (the
  reason phase R is marked invalid in that file).  Such a point is listed, untracked, with
  the reason.  Phases f and g (the fetch ramp) likewise, g's intermediates from the runs
  that measured them (:data:`EXTRA`);
* the queue probes, one cold burst per point (riscvbench phase q from
  ``riscvbench-qdrain.csv``, phase s from the primary file): each point is the shot's
  cycles less the timer's own (:func:`harness_cycles`), tracked for the loop form from
  :data:`BURST_TRACKED_FROM` up; the cascade and shorter bursts are listed untracked.

The silicon figure is the benchmarks' own: ``(slope − loop_overhead slope) / unroll``
per thread (``subtract_control=True``), averaged over the variant's threads — phase B's
the raw slope per call (it has no control), combined across fidelities as above; Tessera's
is the same derivation over the same threads.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import attrs

from tessera_cycles import probes, silicon

__all__ = ["DATASETS", "PHASE_B", "R2_GATE", "Row", "TOLERANCE", "as_json", "compare", "markdown", "points",
           "summary"]

#: a point agrees when Tessera is within this many percent of silicon
TOLERANCE = 10.0
#: the benchmarks' validity gate on each slope series (silicon.md §1)
R2_GATE = 0.99
#: suite -> (primary dataset, phase)
DATASETS = {"tensix-a": ("tensixbench-blackhole.csv", "A"), "tensix-b": ("tensixbench-blackhole.csv", "B"),
            "riscv-r": ("riscvbench-blackhole.csv", "r"), "riscv-t": ("riscvbench-blackhole.csv", "t"),
            "riscv-c": ("riscvbench-blackhole.csv", "c"), "riscv-f": ("riscvbench-blackhole.csv", "f"),
            "riscv-g": ("riscvbench-blackhole.csv", "g"), "riscv-q": ("riscvbench-qdrain.csv", "q"),
            "riscv-s": ("riscvbench-blackhole.csv", "s")}
#: a burst point is tracked from this burst length up: below, two runs of one program on
#: the card differ by up to 5 cycles (riscvbench-qdrain.csv against its 2026-08-09 repeat,
#: and s_solo_plain against s_co_plain, the same program at t1), half the tolerance or more
BURST_TRACKED_FROM = 32
CASCADE_NOTE = ("untracked: the cascade, one cold straight-line shot (its instruction fetch timed), not monotone "
                "on the card at n ≤ 16 (phase Q's validity gate refused the primary file for it); the loop form "
                "measures the queue (silicon.md §2.3)")
SHORT_NOTE = (f"untracked: a burst shorter than {BURST_TRACKED_FROM}: one cold shot, which two runs of one program "
              "read up to 5 cycles apart")
#: probes of a suite its primary dataset lacks, and the dataset that measured each: phase
#: g's intermediates, each built with the 4 KiB anchor in a run of its own (``--gset``;
#: silicon.md §3: 2026-08-05 gset 1, 2 and 2026-08-09 gset 3, 4)
EXTRA: dict[str, tuple[tuple[str, str], ...]] = {
    "riscv-g": (("riscvbench-blackhole-2026-08-09-gset3.csv", "g_1152"),
                ("riscvbench-blackhole-gset1.csv", "g_1536"),
                ("riscvbench-blackhole-2026-08-09-gset4.csv", "g_1408"),
                ("riscvbench-blackhole-gset2.csv", "g_1792"))}
#: phase B's rows: probe -> (weight of each fidelity's cycles per call, tracked, note).  The
#: silicon figure and Tessera's are the same weighted sum of the fidelities' slopes
PHASE_B: dict[str, tuple[dict[str, float], bool, str]] = {
    "matmul_tiles HiFi2−LoFi": ({"HiFi2": 1.0, "LoFi": -1.0}, True,
                                "16 more MVMULs replayed by the MOP expander (and the high-fidelity MOP's end op)"),
    "matmul_tiles HiFi4−HiFi2": ({"HiFi4": 1.0, "HiFi2": -1.0}, True, "32 more MVMULs replayed by the MOP expander"),
    "matmul_tiles (HiFi4−LoFi)/48": ({"HiFi4": 1 / 48, "LoFi": -1 / 48}, True,
                                     "per MVMUL the MOP expander replays (pushed one by one: ~6, phase A MVMUL)"),
    **{f"matmul_tiles {fidelity}": ({fidelity: 1.0}, False,
                                    "untracked: a silicon call also waits for the feeder's pages and the unpack "
                                    "thread's Src handoff, which the probe does not run; only differences between "
                                    "fidelities are interpretable (silicon.md §2.2)")
       for fidelity in probes.FIDELITIES},
}
#: phase B's rows: their variant, the silicon thread they read (the math thread), and the
#: variant (thread set) the tensix-b probe runs
PHASE_B_VARIANT, PHASE_B_THREAD, PHASE_B_RUN = "phase B", 1, "t1"
#: what a reader must know about some points (still tracked)
NOTES = {
    "MVMUL": "each op pushed by itself: the Wait-Gate regime (~6), not the MOP-replayed ~1 (phase B)",
    "ELWADD": "each op pushed by itself: the Wait-Gate regime",
    "ELWMUL": "each op pushed by itself: the Wait-Gate regime",
    "tt_pad": "cycles per group of 16 addi",
    "tt_fuse2": "cycles per group (2 pushes + 16 addi)",
    "tt_fuse4": "cycles per group (4 adjacent pushes + 16 addi)",
    "tt_spread4": "cycles per group (4 pushes, each followed by an addi, + 12 addi)",
    "c_xor_nt": "per xori + branch",
    "c_xor_t": "per xori + branch",
    "c_xor_alt": "per xori + branch",
    **{f"{phase}_{k}": f"a loop body of {4 * k} bytes" for phase, ks in probes.FOOTPRINTS.items() for k in ks},
}
CONTENDED = "contended: upstream reads t2/t3 as ratios to t1"


@attrs.frozen
class Row:
    """One configuration (dataset, phase, probe, unit, variant) and both figures.

    ``tessera``, ``error_pct`` and ``within`` are None for a point not measured (its
    suite not run).  ``tracked`` is False, with the reason in ``note``, for a point the
    comparison does not hold a model to."""

    dataset: str
    suite: str
    phase: str
    probe: str
    unit: str
    variant: str
    threads: tuple[int, ...]
    silicon: float
    tessera: float | None = None
    error_pct: float | None = None
    within: bool | None = None
    tracked: bool = True
    note: str = ""
    #: a burst point's burst length (riscvbench phases q and s), None for a slope figure
    n: int | None = None

    @property
    def label(self) -> str:
        """The probe, and a burst point's length: how tables name the point."""
        return self.probe if self.n is None else f"{self.probe} n={self.n}"


def points(suites: Iterable[str] | None = None) -> list[Row]:
    """Every point of ``suites`` (default all) with its silicon figure, not yet measured."""
    out: list[Row] = []
    for suite in _suites(suites):
        name, phase = DATASETS[suite]
        data = silicon.load(name)
        if suite == "tensix-b":
            out += _phase_b_points(data, suite)
            continue
        if any(p.burst for p in probes.probes(suite)):
            out += _burst_points(data, suite, phase)
            continue
        sources = [(data, None), *((silicon.load(extra), probe) for extra, probe in EXTRA.get(suite, ()))]
        for variant, threads in probes.VARIANTS.items():
            for source, only in sources:
                for probe in source.values("probe", phase=phase, variant=variant):
                    if probe != silicon.CONTROL_PROBE and only in (None, probe):
                        assert isinstance(probe, str)
                        out.append(_slope_row(source, suite, phase, probe, variant, threads))
    return out


def _slope_row(data: silicon.Dataset, suite: str, phase: str, probe: str, variant: str,
               threads: tuple[int, ...]) -> Row:
    """A slope probe's row: the benchmarks' figure averaged over the variant's threads."""
    eq: dict[str, silicon.Value] = {"phase": phase, "variant": variant}
    unit = str(data.rows_where(probe=probe, **eq)[0]["unit"])
    figure = sum(data.cycles_per_instruction(probe, subtract_control=True, thread=t, **eq)
                 for t in threads) / len(threads)
    refused = _refused(data, probe, threads, eq)
    notes = [n for n in (NOTES.get(probe, ""), CONTENDED if len(threads) > 1 else "") if n]
    if refused:
        notes.insert(0, refused)
    return Row(data.name, suite, phase, probe, unit, variant, threads, figure, tracked=not refused,
               note="; ".join(notes))


def harness_cycles(points: Iterable[tuple[int, int]]) -> float:
    """The timer's own cycles in one timed region: the intercept of the empty control
    loop's cycles over its loop count (two clock reads, a loop's entry and exit)."""
    return silicon.slope([{"n": n, "cycles": c} for n, c in points])[1]


def _silicon_points(data: silicon.Dataset, probe: str, **eq: silicon.Value) -> list[tuple[int, int]]:
    return [(int(r["n"]), int(r["cycles"])) for r in data.rows_where(probe=probe, **eq)]  # type: ignore[arg-type]


def _burst_points(data: silicon.Dataset, suite: str, phase: str) -> list[Row]:
    """A burst probe's rows, one per burst length: the cycles of the shot less the
    timer's own (:func:`harness_cycles` of the control in the same phase, variant and
    thread), averaged over the threads that report it — what the burst itself cost, on
    silicon and in Tessera alike.  Only the loop form's bursts from
    :data:`BURST_TRACKED_FROM` on are tracked."""
    out = []
    found = {p.name: p for p in probes.probes(suite)}
    for variant in probes.variants(suite):
        for probe in data.values("probe", phase=phase, variant=variant):
            if probe == silicon.CONTROL_PROBE:
                continue
            assert isinstance(probe, str)
            eq: dict[str, silicon.Value] = {"phase": phase, "variant": variant}
            threads = tuple(sorted(int(t) for t in data.values("thread", probe=probe, **eq)))  # type: ignore[arg-type]
            unit = str(data.rows_where(probe=probe, **eq)[0]["unit"])
            net: dict[int, list[float]] = {}
            for t in threads:
                harness = harness_cycles(_silicon_points(data, silicon.CONTROL_PROBE, thread=t, **eq))
                for n, cycles in _silicon_points(data, probe, thread=t, **eq):
                    net.setdefault(n, []).append(cycles - harness)
            for n, values in sorted(net.items()):
                if not found[probe].block:
                    note, tracked = CASCADE_NOTE, False
                elif n < BURST_TRACKED_FROM:
                    note, tracked = SHORT_NOTE, False
                else:
                    note, tracked = "", True
                if len(threads) > 1:
                    note = "; ".join(x for x in (note, CONTENDED) if x)
                out.append(Row(data.name, suite, phase, probe, unit, variant, threads, sum(values) / len(values),
                               tracked=tracked, note=note, n=n))
    return out


def _phase_b_points(data: silicon.Dataset, suite: str) -> list[Row]:
    """Phase B's rows (:data:`PHASE_B`): weighted sums of the math thread's slopes."""
    name, phase = DATASETS[suite]
    (series,) = {str(p) for p in data.values("probe", phase=phase)}       # matmul_tiles
    unit = str(data.rows_where(phase=phase, probe=series)[0]["unit"])
    per_call: dict[str, float] = {}
    r2: dict[str, float] = {}
    for fidelity in probes.FIDELITIES:
        eq: dict[str, silicon.Value] = {"phase": phase, "variant": fidelity, "thread": PHASE_B_THREAD}
        per_call[fidelity] = data.cycles_per_instruction(series, phase=phase, variant=fidelity,
                                                         thread=PHASE_B_THREAD)
        r2[fidelity] = silicon.r_squared(data.rows_where(probe=series, **eq))
    out = []
    for probe, (weights, tracked, note) in PHASE_B.items():
        figure = sum(w * per_call[f] for f, w in weights.items())
        refused = next((f"untracked: silicon {f} on thread {PHASE_B_THREAD} fails the R² ≥ {R2_GATE} gate "
                        f"({r2[f]:.4f})" for f in weights if r2[f] < R2_GATE), "")
        notes = "; ".join(n for n in (refused, note) if n)
        out.append(Row(name, suite, phase, probe, unit, PHASE_B_VARIANT, (PHASE_B_THREAD,), figure,
                       tracked=tracked and not refused, note=notes))
    return out


def _refused(data: silicon.Dataset, probe: str, threads: Sequence[int], eq: Mapping[str, silicon.Value]) -> str:
    """Why the benchmark's own gate refused this point's silicon series ("" if it did not)."""
    for thread in threads:
        for name in (probe, silicon.CONTROL_PROBE):
            r2 = silicon.r_squared(data.rows_where(probe=name, thread=thread, **eq))
            if r2 < R2_GATE:
                return (f"untracked: silicon {name} on thread {thread} fails the R² ≥ {R2_GATE} gate "
                        f"({r2:.4f}; contended rows, no cost claimed from them)")
    return ""


def _suites(suites: Iterable[str] | None) -> list[str]:
    chosen = list(probes.SUITES if suites is None else suites)
    unknown = [s for s in chosen if s not in DATASETS]
    if unknown:
        raise ValueError(f"no suite {', '.join(unknown)}; known: {', '.join(probes.SUITES)}")
    return chosen


def silicon_base_blocks(suite: str) -> int:
    """The base the silicon run used (its smallest ``n``): 32 blocks for both primary
    files' slope phases, 64 ``matmul_tiles`` calls for phase B."""
    name, phase = DATASETS[suite]
    eq: dict[str, silicon.Value] = {} if suite == "tensix-b" else {"probe": silicon.CONTROL_PROBE}
    ns = silicon.load(name).values("n", phase=phase, **eq)
    return int(min(int(n) for n in ns))


def compare(config: Mapping[str, Any] | None = None, suites: Iterable[str] | None = None, *,
            base_blocks: int | None = None, engine: str = "fast") -> list[Row]:
    """Run every variant of ``suites`` (default, or None: all of :data:`probes.SUITES`)
    with ``config`` (default ``{"cycles": "tensix"}``, the Tensix tile model) and compare
    with silicon.

    ``base_blocks`` None runs the silicon's own points (32 × 1..4 blocks; phase B 64 × 1..4
    calls, a fraction of a second): the phase-A and riscvbench probes run
    back to back without a drain, as on the card, so a probe's first point starts behind
    the previous probe's queued work, a bias that shrinks with the base — at the silicon's
    base it is the silicon's own.  A smaller base is faster (seconds rather than about a
    minute for tensix-a) and moves such points by a few percent."""
    config = {"cycles": "tensix"} if config is None else dict(config)
    rows = points(suites)
    done: dict[tuple[str, str], probes.Measurement] = {}
    out: list[Row] = []
    for row in rows:
        phase_b = row.suite == "tensix-b"
        key = (row.suite, PHASE_B_RUN if phase_b else row.variant)
        if key not in done:
            base = silicon_base_blocks(row.suite) if base_blocks is None else base_blocks
            done[key] = probes.measure(row.suite, key[1], config=config, base_blocks=base, engine=engine)
        got = done[key]
        if phase_b:
            ours = sum(w * got.cycles_per_instruction(f, PHASE_B_THREAD) for f, w in PHASE_B[row.probe][0].items())
        elif row.n is not None:
            ours = sum(dict(got.series[row.probe, t].points)[row.n] - harness_cycles(got.series[probes.CONTROL, t].points)
                       for t in row.threads) / len(row.threads)
        else:
            ours = got.cycles_per_instruction(row.probe)
        if row.silicon == 0:    # a burst the timer's own cycles cancel on silicon: no relative error
            out.append(attrs.evolve(row, tessera=ours))
            continue
        error = 100.0 * (ours - row.silicon) / row.silicon
        out.append(attrs.evolve(row, tessera=ours, error_pct=error, within=abs(error) <= TOLERANCE))
    return out


def markdown(rows: Sequence[Row]) -> str:
    """A table (one line per row; untracked rows say why) and a count of the tracked
    points within :data:`TOLERANCE`, for docs/cycles.md."""
    lines = ["| dataset | probe | unit | variant | silicon | Tessera | error % | within 10 % | note |",
             "|---|---|---|---|---:|---:|---:|:-:|---|"]
    for r in rows:
        ours = "–" if r.tessera is None else f"{r.tessera:.3f}"
        error = "–" if r.error_pct is None else f"{r.error_pct:+.1f}"
        within = "–" if r.within is None or not r.tracked else ("yes" if r.within else "**no**")
        lines.append(f"| {r.dataset} | {r.label} | {r.unit} | {r.variant} | {r.silicon:.3f} | {ours} | {error} "
                     f"| {within} | {r.note} |")
    tracked = [r for r in rows if r.tracked and r.within is not None]
    lines += ["", f"{sum(1 for r in tracked if r.within)} of {len(tracked)} tracked points within "
              f"{TOLERANCE:g} % of silicon."]
    return "\n".join(lines) + "\n"


def summary(rows: Sequence[Row]) -> dict[str, Any]:
    """How the measured, tracked points fare: ``tracked`` (their count), ``within`` (how
    many are within :data:`TOLERANCE`), ``not_within`` (one dict per other point:
    ``dataset``, ``probe``, ``variant``, ``silicon``, ``tessera``, ``error`` in percent),
    and ``tolerance`` — for a bench workload and ``tessera cycles calibrate``."""
    tracked = [r for r in rows if r.tracked and r.within is not None]
    return {"tracked": len(tracked), "within": sum(1 for r in tracked if r.within), "tolerance": TOLERANCE,
            "not_within": [{"dataset": r.dataset, "probe": r.probe, "variant": r.variant, "silicon": r.silicon,
                            "tessera": r.tessera, "error": r.error_pct, **({} if r.n is None else {"n": r.n})}
                           for r in tracked if not r.within]}


def as_json(rows: Sequence[Row]) -> str:
    """The rows as a JSON array of objects (the :class:`Row` fields)."""
    return json.dumps([attrs.asdict(r) for r in rows], indent=2, ensure_ascii=False)
