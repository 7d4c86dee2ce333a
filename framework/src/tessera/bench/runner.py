"""Running the selected workloads interleaved, keeping the best samples, building the report.

Every round runs every variant of every workload once, in a fixed order, and
``--repeat`` rounds are run; each variant keeps its best sample (highest rate: the
least disturbed run).  Interleaving spreads machine noise — another job starting,
a frequency change — over all variants instead of penalising whichever ran last,
which is what makes same-run ratios trustworthy.

The workloads are those the command's host offers (:mod:`tessera.bench.registry`).
The report is a plain JSON-able dict (``tessera bench --json`` prints it as is):
``machine`` facts, ``settings``, one entry per workload (``status`` ok / skipped /
failed, its ``size``, ``check``, best ``variants``, ``derived`` numbers and, for
instruction-set workloads, ``vs_riscemu`` ratios), the ``targets`` and ``failures``.
Every ratio is computed from the ``rate`` values reported beside it.
"""

from __future__ import annotations

import gc
from collections.abc import Callable, Iterable
from typing import Any

from tessera.bench import PEER
from tessera.bench.machineinfo import machine_facts
from tessera.bench.model import BenchFailure, Context, Sample, Skip, Variant, Workload
from tessera.bench.registry import offered_workloads, unavailable_plugins
from tessera.bench.targets import evaluate

#: the report key of each instruction-set workload's ratios to the peer
PEER_KEY = f"vs_{PEER}"


class UnknownWorkload(ValueError):
    """``only`` names a workload that no enabled plugin (nor the core) offers."""


class BenchReport(dict[str, Any]):
    """The report: the dict ``--json`` prints, plus what only the text form needs.

    ``classes`` maps each reported workload's name to its class (the text form asks
    it how to show its rates and phrase its comparisons); ``notes`` are lines about
    plugins that are installed but not active, printed with the tables.  Neither is
    part of the JSON.
    """

    def __init__(self, data: dict[str, Any], classes: dict[str, type[Workload]], notes: list[str]) -> None:
        super().__init__(data)
        self.classes = classes
        self.notes = notes


Progress = Callable[[str, str, int], None]


def run_bench(host: Any, *, only: Iterable[str] = (), repeat: int = 3, scale: float = 1.0,
              progress: Progress | None = None, quick: bool = False) -> BenchReport:
    """Measure the workloads named in ``only`` (all offered by default) and return the report.

    :class:`UnknownWorkload` when ``only`` names a workload ``host`` does not offer.
    """
    offered = offered_workloads(host)
    wanted = set(only)
    unknown = sorted(wanted - set(offered))
    if unknown:
        raise UnknownWorkload(f"workload(s) {', '.join(unknown)} not available: no enabled plugin "
                              f"offers them (available: {', '.join(offered) or 'none'})")
    names = [n for n in offered if n in wanted] or list(offered)   # always in report order
    ctx = Context(host, scale, quick, offered)
    facts = machine_facts()
    workloads = [offered[n]() for n in names]
    entries: dict[str, dict[str, Any]] = {}
    active: list[tuple[Workload, list[Variant]]] = []
    try:
        active = _prepare(ctx, workloads, entries)
        best = _measure(active, entries, repeat, progress)
    finally:
        for wl in workloads:
            wl.close()
    for wl, _variants in active:
        _finish(wl, entries[wl.name], best[wl.name])
    _compare_with_peer(workloads, entries, offered)
    failures = [f"{name}: {e['error']}" for name, e in entries.items() if e["status"] == "failed"]
    report = {
        "tessera_bench": 1,
        "machine": facts,
        "settings": {"repeat": repeat, "scale": scale, "quick": quick, "only": names},
        "workloads": entries,
        "targets": evaluate(entries, _targets(offered)),
        "failures": failures,
        "ok": not failures,
    }
    return BenchReport(report, {wl.name: type(wl) for wl in workloads},
                       [] if wanted else unavailable_plugins(host))


def _targets(offered: dict[str, type[Workload]]) -> list[Any]:
    """Every offered workload's targets, in the order of the workloads they read (a
    workload's own before those another contributes about it)."""
    rank = {name: i for i, name in enumerate(offered)}
    targets = [(rank.get(t.path[0], len(rank)), cls.name != t.path[0], t)
               for cls in offered.values() for t in cls.targets]
    return [t for *_key, t in sorted(targets, key=lambda item: item[:2])]


def _entry(wl: Workload) -> dict[str, Any]:
    return {"title": wl.title, "status": "ok", "note": None, "error": None, "unit": wl.unit,
            "scalar": wl.scalar, "size": {}, "check": None, "variants": {}, "skipped_variants": {},
            "derived": {}, PEER_KEY: None}


def _prepare(ctx: Context, workloads: list[Workload],
             entries: dict[str, dict[str, Any]]) -> list[tuple[Workload, list[Variant]]]:
    active = []
    for wl in workloads:
        entry = entries[wl.name] = _entry(wl)
        try:
            variants = wl.prepare(ctx)
        except Skip as skip:
            entry["status"], entry["note"] = "skipped", str(skip)
            continue
        except BenchFailure as exc:
            entry["status"], entry["error"] = "failed", f"preparing: {exc}"
            continue
        entry["size"] = dict(wl.size)
        entry["check"] = {**wl.check, "samples_checked": 0, "passed": False}
        active.append((wl, variants))
    return active


def _measure(active: list[tuple[Workload, list[Variant]]], entries: dict[str, dict[str, Any]],
             repeat: int, progress: Progress | None) -> dict[str, dict[str, tuple[Variant, Sample]]]:
    best: dict[str, dict[str, tuple[Variant, Sample]]] = {wl.name: {} for wl, _ in active}
    for round_no in range(repeat):
        for wl, variants in active:
            entry = entries[wl.name]
            if entry["status"] == "failed":
                continue
            for variant in list(variants):
                if progress is not None:
                    progress(wl.name, variant.name, round_no)
                for _ in range(max(1, wl.samples_per_round)):
                    gc.collect()  # garbage of the previous sample is not this one's cost
                    try:
                        sample = variant.run()
                    except Skip as skip:
                        variants.remove(variant)
                        entry["skipped_variants"][variant.name] = str(skip)
                        break
                    except BenchFailure as exc:
                        entry["status"], entry["error"] = "failed", f"{variant.name}: {exc}"
                        break
                    entry["check"]["samples_checked"] += 1
                    kept = best[wl.name].get(variant.name)
                    if kept is None or sample.rate > kept[1].rate:
                        best[wl.name][variant.name] = (variant, sample)
                if entry["status"] == "failed":
                    break
    return best


def _finish(wl: Workload, entry: dict[str, Any], best: dict[str, tuple[Variant, Sample]]) -> None:
    samples = {name: sample for name, (_v, sample) in best.items()}
    entry["variants"] = {
        name: {"description": variant.description, "seconds": sample.seconds, "count": sample.count,
               "rate": sample.rate, **sample.extra}
        for name, (variant, sample) in best.items()}
    if entry["status"] == "failed":
        return
    entry["check"]["passed"] = entry["check"]["samples_checked"] > 0
    entry["derived"] = wl.derive(samples)
    if wl.scalar and "fast" in samples and "step" in samples:
        entry["derived"]["fast_over_step"] = samples["fast"].rate / samples["step"].rate


def _compare_with_peer(workloads: list[Workload], entries: dict[str, dict[str, Any]],
                       offered: dict[str, type[Workload]]) -> None:
    """``vs_riscemu``: each instruction-set variant's rate over the peer's (``None`` without it)."""
    peer = entries.get(PEER)
    peer_rate = None
    if peer is not None and peer["status"] == "ok" and PEER in peer["variants"]:
        peer_rate = peer["variants"][PEER]["rate"]
    for wl in workloads:
        entry = entries[wl.name]
        if not wl.scalar or entry["status"] != "ok":
            continue
        entry[PEER_KEY] = {name: (v["rate"] / peer_rate if peer_rate else None)
                           for name, v in entry["variants"].items()}
        if peer_rate is None:
            if PEER not in offered:
                entry["note"] = f"{PEER} is not offered by any enabled plugin: ratios to it are null"
            elif peer is None:
                entry["note"] = f"{PEER} was not measured (add --only {PEER})"
            else:
                entry["note"] = f"{PEER} was not measured: ratios to it are null"
