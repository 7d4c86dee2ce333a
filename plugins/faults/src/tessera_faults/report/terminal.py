"""A campaign report as rich tables on the terminal (``tessera faults report RESULTS``).

Renders the dict of :func:`tessera_faults.report.summary.summarize` and nothing else, so
the terminal, the HTML page and ``--json`` always agree.  Rates are percentages of the
injected faults with their interval in brackets; a rate over no injected fault is ``-``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from rich import box
from rich.console import Console
from rich.table import Table
from rich.text import Text

__all__ = ["percent", "interval", "print_report"]


def percent(rate: float | None) -> str:
    return "-" if rate is None else f"{100 * rate:.1f}%"


def interval(stat: Mapping[str, Any]) -> str:
    """``[low, high]`` in percent, or ``-`` when nothing was injected."""
    if stat.get("rate") is None:
        return "-"
    return f"[{100 * stat['low']:.1f}, {100 * stat['high']:.1f}]"


def _headline(summary: Mapping[str, Any]) -> str:
    c = summary["campaign"]
    totals = summary["totals"]
    parts = [f"campaign {c['name']}" if c["name"] is not None else f"results {c['results_file'] or '(in memory)'}"]
    if c["program"] is not None:
        parts.append(f"{c['program']} on {c['arch']}")
    if c["golden"] and c["golden"].get("steps") is not None:
        parts.append(f"golden run {c['golden']['steps']:,} steps, exit {c['golden'].get('exit')}")
    done = f"{c['results']:,}" + (f" of {c['planned']:,}" if c["planned"] is not None else "")
    parts.append(f"{done} faults: {totals['injected']:,} injected, {totals['not-injected']:,} not injected, "
                 f"{totals['error']:,} errors")
    parts.append(f"rates over the injected faults, {100 * summary['confidence']:g}% Wilson intervals")
    if c["metadata_file"] is None:
        parts.append("no campaign metadata (no population sizes)")
    return "; ".join(parts)


def _outcomes_table(summary: Mapping[str, Any]) -> Table:
    conf = summary["confidence"]
    totals = summary["totals"]
    table = _table(f"Outcomes of {totals['injected']:,} injected faults")
    for col in ("outcome", "faults", "rate", f"{100 * conf:g}% interval"):
        table.add_column(col, justify="left" if col == "outcome" else "right")
    for name, stat in totals["outcomes"].items():
        table.add_row(name, f"{stat['count']:,}", percent(stat["rate"]), interval(stat))
    fail = totals["failures"]
    table.add_row("failures", f"{fail['count']:,}", percent(fail["rate"]), interval(fail), style="bold")
    for name in ("not-injected", "error"):
        table.add_row(name, f"{totals[name]:,}", "not counted", "", style="dim")
    return table


#: short column headings of the outcomes, so that a group table fits 120 columns
_SHORT = {"masked": "mask", "latent": "lat", "sdc": "sdc", "detected": "det", "crash": "crash",
          "hang": "hang", "deadlock": "dlock"}


def _table(title: str) -> Table:
    """A compact table (a rule under the heading, two spaces between columns)."""
    return Table(title=title, box=box.SIMPLE_HEAD, pad_edge=False, collapse_padding=True, caption_justify="left")


def _group_table(title: str, key: str, groups: Mapping[str, Mapping[str, Any]], outcomes: list[str],
                 before: list[tuple[str, Any]] | None = None, after: list[tuple[str, Any]] | None = None) -> Table:
    """One row per group: injected, each outcome's share of them (%), what was not counted
    (not injected, tool errors), the failure rate and its interval."""
    table = _table(title)
    table.add_column(key, overflow="fold", min_width=12)  # a long name folds, the numbers stay whole
    columns = [c for c, _ in before or []] + ["injected"] + [_SHORT.get(o, o) for o in outcomes]
    columns += ["n/i", "err", "fail%", "interval"] + [c for c, _ in after or []]
    for col in columns:
        table.add_column(col, justify="right", no_wrap=True)
    for name, g in groups.items():
        cells: list[Any] = [Text(name)] + [render(g) for _, render in before or []] + [f"{g['injected']:,}"]
        cells += [_share(g["outcomes"][o]["rate"]) for o in outcomes]
        cells += [f"{g['not-injected']:,}", f"{g['error']:,}", _share(g["failures"]["rate"]), interval(g["failures"])]
        cells += [render(g) for _, render in after or []]
        table.add_row(*cells)
    return table


def _share(rate: float | None) -> str:
    return "-" if rate is None else f"{100 * rate:.1f}"


def _size(value: int | None) -> str:
    """A population's size, short (the JSON has it exact): 51.6M."""
    if value is None:
        return "-"
    for unit, suffix in ((10**12, "T"), (10**9, "G"), (10**6, "M"), (10**3, "k")):
        if value >= max(unit, 10_000):  # 9,999 stays as it is
            return f"{value / unit:.1f}{suffix}"
    return f"{value:,}"


def _bits(value: int | None) -> str:
    return "-" if value is None else f"{value:,}"


def _structure_table(summary: Mapping[str, Any]) -> Table:
    """Per structure: what hit it and failed, and its AVF (uniform faults only) with the bits."""
    weighted = summary["avf"]["weighted"]
    table = _table("Per structure: AVF = failure fraction of the faults drawn uniformly from it")
    if weighted["rate"] is not None:
        table.caption = Text(f"size-weighted AVF {percent(weighted['rate'])} {interval(weighted)} over "
                         f"{weighted['bits']:,} bits ({', '.join(weighted['structures'])})")
    table.add_column("structure", overflow="fold", min_width=12)
    for col in ("injected", "failures", "interval", "uniform", "AVF", "AVF interval", "bits", "vulnerable bits"):
        table.add_column(col, justify="right", no_wrap=True)
    for name, g in summary["structures"].items():
        avf = g["avf"]
        table.add_row(Text(name), f"{g['injected']:,}", percent(g["failures"]["rate"]), interval(g["failures"]),
                      f"{avf['injected']:,}", percent(avf["rate"]), interval(avf), _bits(g["bits"]),
                      "-" if g["vulnerable_bits"] is None else f"{g['vulnerable_bits']:,.1f}")
    return table


def print_report(summary: Mapping[str, Any], console: Console | None = None) -> None:
    """Print the report's tables: outcomes, populations, structures, models, classes, timeline."""
    console = console or Console(width=max(120, Console().width))
    # the group tables show the outcomes that occurred (all of them when none did): narrower
    outcomes = [o for o, stat in summary["totals"]["outcomes"].items() if stat["count"]] \
        or list(summary["totals"]["outcomes"])
    console.print(Text(_headline(summary)))  # Text: names from the files are not rich markup
    console.print(_outcomes_table(summary))
    if summary["populations"]:
        console.print(_group_table("Per population (outcomes in % of the injected faults; n/i not injected, err tool errors)", "population",
                                   summary["populations"], outcomes, before=[("size", lambda g: _size(g["size"]))]))
    if summary["structures"]:
        console.print(_structure_table(summary))
    if summary["models"]:
        console.print(_group_table("Per fault model (outcomes in % of the injected faults)", "model",
                                   summary["models"], outcomes))
    if summary["classes"]:
        console.print(_group_table("Per instruction class (destination of the class's N-th execution)", "class",
                                   summary["classes"], outcomes))
    timeline = summary["timeline"]
    if timeline["bins"]:
        console.print(_timeline_table(timeline))


def _timeline_table(timeline: Mapping[str, Any]) -> Table:
    if timeline["source"] == "golden":
        title = f"Failure fraction over the golden run's {timeline['steps']:,} steps"
    else:
        title = f"Failure fraction over steps 0-{timeline['steps']:,} (no golden run known: up to the latest fault)"
    table = _table(title)
    if timeline["unplaced"]:
        table.caption = f"{timeline['unplaced']:,} injected faults have no step in their result and are not in this table"
    for col in ("steps", "faults", "failures", "interval"):
        table.add_column(col, justify="right")
    for b in timeline["bins"]:
        table.add_row(f"{b['first']:,}-{b['last']:,}", f"{b['faults']:,}", percent(b["rate"]), interval(b))
    return table
