"""``--cycles-report``: where the time went, as a table (rich) or a JSON file."""

from __future__ import annotations

import json
from typing import Any

__all__ = ["render", "write_json"]

STALLS = ("data", "load_use", "mul_div", "branch", "jump", "icache", "dcache")
#: short column heads, so the table fits 80 columns
HEADS = {"data": "data", "load_use": "ld-use", "mul_div": "mul/div", "branch": "branch", "jump": "jump",
         "icache": "I$", "dcache": "D$"}


def render(report: dict[str, Any]) -> Any:
    """The report as rich renderables: one table of agents, one of caches and predictors."""
    if "core" in report:
        return _render_barrel(report)
    if report.get("model") == "tile":
        return _render_engines(report)
    if "units" in report:
        return _render_tile(report)
    from rich.table import Table

    params = report["params"]
    title = f"cycles: {report['model']} model, clock {report['clock']:,}; stall cycles by cause"
    harts = Table(title=title, title_justify="left")
    for col in ("agent", "instr", "cycles", "CPI", *(HEADS[s] for s in STALLS)):
        harts.add_column(col, justify="left" if col == "agent" else "right")
    units = Table(title="caches and branch prediction", title_justify="left")
    for col in ("agent", "unit", "accesses", "hits", "misses", "hit rate"):
        units.add_column(col, justify="left" if col in ("agent", "unit") else "right")
    for name, rep in report["agents"].items():
        stalls = rep["stalls"]
        harts.add_row(name, f"{rep['instructions']:,}", f"{rep['cycles']:,}", f"{rep['cpi']:.3f}",
                      *(f"{stalls.get(s, 0):,}" for s in STALLS))
        for unit in ("icache", "dcache"):
            c = rep.get(unit)
            if c:
                units.add_row(name, f"{unit} {c['size'] // 1024} KiB {c['ways']}-way {c['line']} B",
                              f"{c['accesses']:,}", f"{c['hits']:,}", f"{c['misses']:,}", f"{c['hit_rate']:.2%}")
        pred = rep.get("predictor")
        if pred:
            right = pred["predictions"] - pred["mispredictions"]
            units.add_row(name, f"predictor {pred['name']}", f"{pred['predictions']:,}", f"{right:,}",
                          f"{pred['mispredictions']:,}", f"{pred['accuracy']:.2%}")
    note = ", ".join(f"{k}={v}" for k, v in params.items())
    return harts, units, f"parameters: {note}"


def write_json(report: dict[str, Any], path: str) -> None:
    with open(path, "w", encoding="utf-8") as fh:
        json.dump(report, fh, indent=2, sort_keys=True)
        fh.write("\n")


def _render_barrel(report: dict[str, Any]) -> Any:
    """A barrel model's report: the core's issue rate, each thread's waits by cause, the caches."""
    from rich.table import Table

    core = report["core"]
    title = (f"cycles: {report['model']} model, clock {report['clock']:,}; {core['instructions']:,} instructions "
             f"issued, {core['ipc']:.3f} per cycle; cycles each thread waited to issue, by cause")
    threads = Table(title=title, title_justify="left")
    for col in ("thread", "instr", "CPI", "dependency", "own (bubble, I$)", "slot taken"):
        threads.add_column(col, justify="left" if col == "thread" else "right")
    for name, rep in report["agents"].items():
        waits = rep["issue_stalls"]
        threads.add_row(name, f"{rep['instructions']:,}", f"{rep['cpi']:.3f}", f"{waits['dependency']:,}",
                        f"{waits['thread']:,}", f"{waits['slot']:,}")
    units = Table(title="caches", title_justify="left")
    for col in ("unit", "accesses", "hits", "misses", "hit rate"):
        units.add_column(col, justify="left" if col == "unit" else "right")
    for unit in ("icache", "dcache"):
        c = core.get(unit)
        if c:
            units.add_row(f"{unit} {c['size'] // 1024} KiB {c['ways']}-way {c['line']} B", f"{c['accesses']:,}",
                          f"{c['hits']:,}", f"{c['misses']:,}", f"{c['hit_rate']:.2%}")
    note = ", ".join(f"{k}={v}" for k, v in report["params"].items())
    return threads, units, f"parameters: {note}"


def _render_tile(report: dict[str, Any]) -> Any:
    """The tensix model's report: each baby core's stalls, each Tensix thread's waits, each unit's load."""
    from rich.table import Table

    agents = report["agents"]
    cores = Table(title=f"cycles: {report['model']} model, clock {report['clock']:,}; baby RISC-V cores, stall "
                        "cycles by cause", title_justify="left")
    causes = ("data", "divide", "load", "store", "fifo", "sync", "fetch")
    for col in ("core", "instr", "cycles", "CPI", *causes):
        cores.add_column(col, justify="left" if col == "core" else "right")
    threads = Table(title="Tensix threads: cycles waited at the gate, by cause", title_justify="left")
    waits = ("unit", "source", "dest", "sfpu", "fpu", "l1", "sync", "empty")
    for col in ("thread", "instr", "expanded", "done at", *waits):
        threads.add_column(col, justify="left" if col == "thread" else "right")
    for name, rep in agents.items():
        if "stalls" in rep:
            cores.add_row(name, f"{rep['instructions']:,}", f"{rep['cycles']:,}", f"{rep['cpi']:.3f}",
                          *(f"{rep['stalls'].get(c, 0):,}" for c in causes))
        else:
            threads.add_row(name, f"{rep['instructions']:,}", f"{rep['expanded']:,}", f"{rep['cycles']:,}",
                            *(f"{rep['waits'].get(w, 0):,}" for w in waits))
    units = Table(title="backend units (shared by the three threads)", title_justify="left")
    for col in ("unit", "instr", "busy cycles", "busy"):
        units.add_column(col, justify="left" if col == "unit" else "right")
    for name, rep in report["units"].items():
        units.add_row(name, f"{rep['instructions']:,}", f"{rep['busy']:,}", f"{rep['utilisation']:.1%}")
    note = ", ".join(f"{k}={v}" for k, v in report["params"].items())
    if not cores.row_count:   # the coprocessor alone (direct mode): no baby cores
        return threads, units, f"parameters: {note}"
    return cores, threads, units, f"parameters: {note}"


def _render_engines(report: dict[str, Any]) -> Any:
    """The tile model's report: each hart's pipeline stalls (``tile``: waiting for its
    engines), each engine's operations, busy and queued cycles."""
    from rich.table import Table

    harts = Table(title=f"cycles: {report['model']} model, clock {report['clock']:,}; stall cycles by cause",
                  title_justify="left")
    causes = ("data", "branch", "jump", "icache", "dcache", "tile")
    heads = {**HEADS, "tile": "tile"}
    for col in ("hart", "instr", "cycles", "CPI", *(heads[c] for c in causes)):
        harts.add_column(col, justify="left" if col == "hart" else "right")
    for name, rep in report["agents"].items():
        stalls = rep["stalls"]
        harts.add_row(name, f"{rep['instructions']:,}", f"{rep['cycles']:,}", f"{rep['cpi']:.3f}",
                      *(f"{stalls.get(c, 0):,}" for c in causes))
    engines = Table(title="tile engines", title_justify="left")
    for col in ("engine", "ops", "busy", "queued", "done at", "busy %"):
        engines.add_column(col, justify="left" if col == "engine" else "right")
    for name, rep in report["units"].items():
        engines.add_row(name, f"{rep['instructions']:,}", f"{rep['busy']:,}", f"{rep.get('queued', 0):,}",
                        f"{rep.get('done_at', 0):,}", f"{rep['utilisation']:.1%}")
    note = ", ".join(f"{k}={v}" for k, v in report["params"].items())
    return harts, engines, f"parameters: {note}"
