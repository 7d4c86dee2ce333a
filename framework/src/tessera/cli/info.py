"""``tessera plugins`` and ``tessera archs``: what is installed and in what state."""

from __future__ import annotations

import json
from typing import Any

import click

from tessera.errors import ConfigError
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
    from rich.console import Console  # rich only for tables, not for --json
    from rich.table import Table

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
@click.argument("names", nargs=-1, metavar="[ARCH]...")
@click.option("--json", "as_json", is_flag=True, help="Machine-readable output.")
@click.option("--settings", "show_settings", is_flag=True,
              help="List each architecture's settings (--set KEY=VALUE): kind, default, range, meaning.")
@click.pass_obj
def archs(obj: Any, names: tuple[str, ...], as_json: bool, show_settings: bool) -> int:
    """List the architectures the installed plugins provide (only ARCH... if given)."""
    found = obj.host.architectures()
    unknown = [n for n in names if n not in found]
    if unknown:
        raise ConfigError(f"unknown architecture {unknown[0]!r} "
                          f"(known: {', '.join(sorted(found)) or 'none installed'})")
    if names:
        found = {n: found[n] for n in names}
    if show_settings:
        return _list_settings(found, as_json)
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
    from rich.console import Console
    from rich.table import Table

    table = Table(title="Tessera architectures")
    for col in ("arch", "plugin", "word", "endian", "instructions", "description"):
        table.add_column(col, overflow="fold")
    for r in rows:
        table.add_row(r["name"], r["plugin"], f"{r['word_bits']} bits", r["endian"],
                      str(r["instructions"]), r["description"])
    Console(width=max(100, Console().width)).print(table)
    return 0


def _list_settings(found: dict[str, Any], as_json: bool) -> int:
    """``tessera archs --settings``: every declared setting of each architecture."""
    out = []
    for name in sorted(found):
        arch, plugin = found[name]
        declared = arch.settings
        out.append({"arch": name, "plugin": plugin, "declared": declared is not None,
                    "settings": declared.describe() if declared is not None else []})
    if as_json:
        click.echo(json.dumps(out, indent=2, default=str))
        return 0
    from rich.console import Console
    from rich.table import Table

    console = Console(width=max(100, Console().width))
    for entry in out:
        if not entry["declared"]:
            console.print(f"{entry['arch']}: settings not declared by plugin {entry['plugin']} "
                          "(see its documentation)")
            continue
        table = Table(title=f"{entry['arch']} settings (--set KEY=VALUE)")
        for col in ("key", "kind", "default", "range", "meaning"):
            table.add_column(col, overflow="fold")
        declared = found[entry["arch"]][0].settings
        for setting in declared.items:
            table.add_row(*_setting_row(setting))
        for family in declared.families:
            if family.closed:
                for setting in family.settings:
                    table.add_row(*_setting_row(setting))
            else:
                row = family.describe()
                table.add_row(row["key"], row["kind"], "-", row["range"], row["help"])
        console.print(table)
    return 0


def _setting_row(setting: Any) -> tuple[str, str, str, str, str]:
    meaning = setting.help + (f" (range: {setting.note})" if setting.note and setting.kind in ("int", "size")
                              else "")
    return setting.name, setting.kind, setting.default_text, setting.range_text, meaning
