"""Tessera's cycles per instruction next to Blackhole silicon's, point by point.

Why this exists: a cycle model is only as good as its agreement with the hardware it
claims to time.  This module runs the silicon benchmarks' probes on the emulated tile
(:mod:`tessera_cycles.probes`) and sets each derived figure beside the one the primary
datasets give (:mod:`tessera_cycles.silicon`), with the error and whether it is within
:data:`TOLERANCE`.

Tracked points (the configurations a model is held to; silicon.md §3, §4, §6):

* ``tensixbench-blackhole.csv`` (X1, the primary tensixbench run, ``dvalid_setup=once``):
  every phase-A probe at t1, t2 and t3;
* ``riscvbench-blackhole.csv`` (the primary riscvbench run): phases r, t and c at t1, t2
  and t3 — except the series the benchmark's own validity gate (R² ≥ 0.99 per series)
  refused: rv_store_spread at t2 and t3, where thread 0's contended rows fail it (the
  reason phase R is marked invalid in that file).  Such a point is listed, untracked, with
  the reason.

The silicon figure is the benchmarks' own: ``(slope − loop_overhead slope) / unroll``
per thread (``subtract_control=True``), averaged over the variant's threads; Tessera's is
the same derivation over the same threads.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import attrs

from tessera_cycles import probes, silicon

__all__ = ["DATASETS", "R2_GATE", "Row", "TOLERANCE", "as_json", "compare", "markdown", "points"]

#: a point agrees when Tessera is within this many percent of silicon
TOLERANCE = 10.0
#: the benchmarks' validity gate on each slope series (silicon.md §1)
R2_GATE = 0.99
#: suite -> (primary dataset, phase)
DATASETS = {"tensix-a": ("tensixbench-blackhole.csv", "A"), "riscv-r": ("riscvbench-blackhole.csv", "r"),
            "riscv-t": ("riscvbench-blackhole.csv", "t"), "riscv-c": ("riscvbench-blackhole.csv", "c")}
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


def points(suites: Iterable[str] | None = None) -> list[Row]:
    """Every point of ``suites`` (default all) with its silicon figure, not yet measured."""
    out: list[Row] = []
    for suite in _suites(suites):
        name, phase = DATASETS[suite]
        data = silicon.load(name)
        for variant, threads in probes.VARIANTS.items():
            for probe in data.values("probe", phase=phase, variant=variant):
                if probe == silicon.CONTROL_PROBE:
                    continue
                assert isinstance(probe, str)
                eq: dict[str, silicon.Value] = {"phase": phase, "variant": variant}
                unit = str(data.rows_where(probe=probe, **eq)[0]["unit"])
                figure = sum(data.cycles_per_instruction(probe, subtract_control=True, thread=t, **eq)
                             for t in threads) / len(threads)
                refused = _refused(data, probe, threads, eq)
                notes = [n for n in (NOTES.get(probe, ""), CONTENDED if len(threads) > 1 else "") if n]
                if refused:
                    notes.insert(0, refused)
                out.append(Row(name, suite, phase, probe, unit, variant, threads, figure,
                               tracked=not refused, note="; ".join(notes)))
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
    """The base the silicon run used (its smallest ``n``): 32 for both primary files."""
    name, phase = DATASETS[suite]
    ns = silicon.load(name).values("n", phase=phase, probe=silicon.CONTROL_PROBE)
    return int(min(int(n) for n in ns))


def compare(config: Mapping[str, Any] | None = None, suites: Iterable[str] | None = None, *,
            base_blocks: int | None = None, engine: str = "fast") -> list[Row]:
    """Run every variant of ``suites`` (default all) with ``config`` (default
    ``{"cycles": "tensix"}``, the Tensix tile model) and compare with silicon.

    ``base_blocks`` None runs the silicon's own points (32 × 1..4 blocks): the probes run
    back to back without a drain, as on the card, so a probe's first point starts behind
    the previous probe's queued work, a bias that shrinks with the base — at the silicon's
    base it is the silicon's own.  A smaller base is faster (seconds rather than about a
    minute for tensix-a) and moves such points by a few percent."""
    config = {"cycles": "tensix"} if config is None else dict(config)
    rows = points(suites)
    done: dict[tuple[str, str], probes.Measurement] = {}
    out: list[Row] = []
    for row in rows:
        key = (row.suite, row.variant)
        if key not in done:
            base = silicon_base_blocks(row.suite) if base_blocks is None else base_blocks
            done[key] = probes.measure(row.suite, row.variant, config=config, base_blocks=base, engine=engine)
        ours = done[key].cycles_per_instruction(row.probe)
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
        lines.append(f"| {r.dataset} | {r.probe} | {r.unit} | {r.variant} | {r.silicon:.3f} | {ours} | {error} "
                     f"| {within} | {r.note} |")
    tracked = [r for r in rows if r.tracked and r.within is not None]
    lines += ["", f"{sum(1 for r in tracked if r.within)} of {len(tracked)} tracked points within "
              f"{TOLERANCE:g} % of silicon."]
    return "\n".join(lines) + "\n"


def as_json(rows: Sequence[Row]) -> str:
    """The rows as a JSON array of objects (the :class:`Row` fields)."""
    return json.dumps([attrs.asdict(r) for r in rows], indent=2, ensure_ascii=False)
