"""Printing a bench report: rich tables for people, JSON for machines.

The text form shows, per workload and variant, the work done, the best time, the
rate (as the workload's ``rate_style`` says: M instr/s, ns or ms per unit) and the
comparison that variant exists for: the generic ones here (vs the peer, fast vs
step), the workload's own (overhead, slowdown, ...) from its class's
``comparison``; then the targets as met / not met, then every note.  Nothing here
computes a number the JSON does not hold; a report read back from JSON (a plain
dict, without the classes) prints with the generic comparisons only.
"""

from __future__ import annotations

import json
from typing import Any

from rich.console import Console
from rich.table import Table

from tessera.bench import PEER
from tessera.bench.machineinfo import describe
from tessera.bench.model import Workload


def to_json(report: dict[str, Any]) -> str:
    return json.dumps(report, indent=2)


def _rate(style: str, unit: str, variant: dict[str, Any]) -> str:
    short = {"instructions": "instr", "commands": "command"}.get(unit, unit)
    if style == "ns":
        return f"{1e9 / variant['rate']:,.0f} ns/{short}"
    if style == "ms":   # e.g. whole processes: the time one takes
        return f"{1e3 / variant['rate']:,.0f} ms/{short}"
    return f"{variant['rate'] / 1e6:.3f} M {short}/s"


def _comparison(cls: type[Workload] | None, entry: dict[str, Any], variant_name: str) -> str:
    derived = entry["derived"]
    parts = []
    vs = (entry.get(f"vs_{PEER}") or {}).get(variant_name)
    if vs is not None:
        parts.append(f"{vs:.1f}x {PEER}")
    if variant_name == "fast" and "fast_over_step" in derived:
        parts.append(f"{derived['fast_over_step']:.2f}x step")
    if cls is not None:
        parts += cls.comparison(entry, variant_name)
    return ", ".join(parts)


def results_table(report: dict[str, Any]) -> Table:
    table = Table(title="tessera bench (best of each variant)", title_justify="left")
    for col, justify in (("workload", "left"), ("variant", "left"), ("work", "right"),
                         ("best s", "right"), ("rate", "right"), ("compared", "left")):
        table.add_column(col, justify=justify)  # type: ignore[arg-type]
    classes: dict[str, type[Workload]] = getattr(report, "classes", {})
    for name, entry in report["workloads"].items():
        cls = classes.get(name)
        style = cls.rate_style if cls is not None else ("ms" if entry["unit"] == "commands" else "rate")
        if entry["status"] == "skipped":
            table.add_row(name, "-", "", "", "", f"skipped: {entry['note']}")
            continue
        first = True
        for vname, v in entry["variants"].items():
            table.add_row(name if first else "", vname, f"{v['count']:,}", f"{v['seconds']:.3f}",
                          _rate(style, entry["unit"], v), _comparison(cls, entry, vname))
            first = False
        for vname, note in entry["skipped_variants"].items():
            table.add_row(name if first else "", vname, "", "", "", f"skipped: {note}")
            first = False
        if entry["status"] == "failed":
            table.add_row(name if first else "", "", "", "", "", f"[bold red]FAILED: {entry['error']}[/]")
    return table


def _fmt(value: float | None, unit: str) -> str:
    if value is None:
        return "-"
    if unit == "ns":
        return f"{value:,.0f} ns"
    if unit == "%":
        return f"{value:+.2f} %"
    if unit == "s":
        return f"{value * 1e3:,.0f} ms"
    if unit == "instr/s":
        return f"{value / 1e6:,.2f} M instr/s"
    return f"{value:.2f}x"


def targets_table(report: dict[str, Any]) -> Table:
    table = Table(title="targets", title_justify="left")
    for col in ("target", "measured", "wanted", "status"):
        table.add_column(col)
    for t in report["targets"]:
        wanted = f"{t['comparison']} {_fmt(t['limit'], t['unit']).lstrip('+')}"
        if t["aim"] is not None:
            wanted += f" (aim {_fmt(t['aim'], t['unit'])})"
        status = {True: "[green]met[/]", False: "[bold red]not met[/]", None: "not measured"}[t["met"]]
        table.add_row(t["description"], _fmt(t["value"], t["unit"]), wanted, status)
    return table


def print_text(report: dict[str, Any], console: Console | None = None) -> None:
    console = console or Console(width=max(120, Console().width))
    console.print(describe(report["machine"]), highlight=False)
    s = report["settings"]
    console.print(f"repeat {s['repeat']}, scale {s['scale']:g}, workloads: {', '.join(s['only'])}",
                  highlight=False)
    console.print(results_table(report))
    console.print(targets_table(report))
    for name, entry in report["workloads"].items():
        if entry["note"] and entry["status"] != "skipped":
            console.print(f"note: {name}: {entry['note']}", highlight=False)
    for note in getattr(report, "notes", ()):
        console.print(f"note: {note}", highlight=False)
