"""``tessera plugins`` and ``tessera archs``: what is installed and in what state."""

from __future__ import annotations

import json
from typing import Any

import click
from rich.console import Console
from rich.table import Table

from tessera.plugins import ACTIVE


@click.command()
@click.option("--json", "as_json", is_flag=True, help="Machine-readable output.")
@click.pass_obj
def plugins(obj: Any, as_json: bool) -> int:
    """List plugins: distribution, version, API, hooks implemented, status."""
    host = obj.host
    host.architectures()  # discovery may mark a plugin failed; show that
    records = sorted(host.records.values(), key=lambda r: r.name)
    if as_json:
        click.echo(json.dumps([
            {"name": r.name, "distribution": r.distribution, "version": r.version,
             "api_version": r.api_version, "status": r.status, "reason": r.reason, "hooks": r.hooks}
            for r in records], indent=2))
        return 0
    if not records:
        click.echo("No Tessera plugins are installed (entry-point group 'tessera').")
        return 0
    table = Table(title="Tessera plugins", show_lines=False)
    for col in ("plugin", "distribution", "version", "API", "status", "hooks"):
        table.add_column(col, overflow="fold")
    for r in records:
        status = r.status if r.status == ACTIVE else f"{r.status}: {r.reason}"
        hooks = ", ".join(h.removeprefix("tessera_") for h in r.hooks) or "-"
        table.add_row(r.name, r.distribution, r.version, str(r.api_version or "-"), status, hooks)
    Console(width=max(100, Console().width)).print(table)
    return 0


@click.command()
@click.option("--json", "as_json", is_flag=True, help="Machine-readable output.")
@click.pass_obj
def archs(obj: Any, as_json: bool) -> int:
    """List the architectures the installed plugins provide."""
    found = obj.host.architectures()
    rows = [{"name": a.name, "plugin": plugin, "word_bits": a.word_bits, "endian": a.endian,
             "instructions": len(a.encodings), "capabilities": sorted(a.capabilities),
             "caches": [{"name": c.name, "size": c.size, "ways": c.ways, "line": c.line,
                         "sets": c.sets, "latency": c.latency, "policy": c.policy} for c in a.caches],
             "description": a.description}
            for a, plugin in (found[k] for k in sorted(found))]
    if as_json:
        click.echo(json.dumps(rows, indent=2))
        return 0
    if not rows:
        click.echo("No architectures are installed. Install an architecture plugin "
                   "(e.g. pip install tessera-phoenix).")
        return 0
    table = Table(title="Tessera architectures")
    for col in ("arch", "plugin", "word", "endian", "instructions", "description"):
        table.add_column(col, overflow="fold")
    for r in rows:
        table.add_row(r["name"], r["plugin"], f"{r['word_bits']} bits", r["endian"],
                      str(r["instructions"]), r["description"])
    Console(width=max(100, Console().width)).print(table)
    return 0
