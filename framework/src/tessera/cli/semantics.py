"""``tessera semantics``: which semantic functions the fast engine inlines, which it calls, and why.

For a plugin author the answer to "why is my instruction slow in blocks" or "will
the fast engine fold this": every encoding row of an architecture with the
function(s) it runs — the row's own and any its ``refine`` swaps in — and
:func:`tessera.semantics.inline_report` for each; with each row's declared control
flags, and the rows whose flags disagree with their code
(:func:`tessera.semantics.control_flow_rows`).
"""

from __future__ import annotations

import json
from typing import Any

import click


def report_rows(arch: Any) -> list[dict[str, Any]]:
    """One JSON-able record per (row, function): the ``--json`` output."""
    from tessera.semantics import control_flow_rows, function_name, inline_report, row_functions

    functions = row_functions(arch)
    flow = {id(r.encoding): r for r in control_flow_rows(arch, functions)}
    out = []
    for item in functions:
        row = flow[id(item.encoding)]
        report = inline_report(item.function) if item.function is not None else None
        out.append({
            "mnemonic": item.encoding.mnemonic,
            "function": function_name(item.function),
            "via": item.via,
            "inlined": report.inlined if report else False,
            "terminal": report.terminal if report else False,
            "reason": report.reason if report else "the row has no semantic function",
            "control_flags": sorted(row.flags),
            "flag_check": row.problem,
        })
    return out


@click.command()
@click.option("--arch", "arch_name", required=True, help="Architecture.")
@click.option("--json", "as_json", is_flag=True, help="Machine-readable output.")
@click.pass_obj
def semantics(obj: Any, arch_name: str, as_json: bool) -> int:
    """For every instruction of an architecture: is its semantic function inlined by the
    fast engine or called, may it end a block, and why."""
    arch = obj.host.architecture(arch_name)
    rows = report_rows(arch)
    if as_json:
        click.echo(json.dumps(rows, indent=2))
        return 0
    from rich.console import Console  # rich only for tables, not for --json
    from rich.table import Table

    inlined = sum(1 for r in rows if r["inlined"])
    table = Table(title=f"{arch.name}: semantic functions in the fast engine",
                  caption=f"{len(rows)} row functions: {inlined} inlined, {len(rows) - inlined} called")
    for col in ("mnemonic", "function"):  # whole names, so that they can be searched for
        table.add_column(col, no_wrap=True, min_width=max((len(r[col]) for r in rows), default=1))
    for col in ("via", "inlined", "terminal", "flags", "reason"):
        table.add_column(col, overflow="fold")
    for r in rows:
        table.add_row(r["mnemonic"], r["function"], r["via"], "yes" if r["inlined"] else "no",
                      "yes" if r["terminal"] else "no", " ".join(r["control_flags"]) or "-", r["reason"])
    console = Console(width=max(140, Console().width))  # names are long: wider than the other tables
    console.print(table)
    problems = dict.fromkeys(f"{r['mnemonic']}: {r['flag_check']}" for r in rows if r["flag_check"])
    declared = "declared" if arch.control_flow == "flags" else "not declared (control_flow='code')"
    click.echo(f"control flags {declared}: {len(problems)} row(s) disagree with their code")
    for line in problems:
        click.echo(f"  {line}")
    return 0
