"""The command line of the cycles plugin: ``--cycles``, ``--cycles-report`` and ``tessera cycles list``.

``--cycles MODEL`` is named like the configuration key ``cycles`` the plugin declares,
so the core turns it into ``--set cycles=MODEL`` before the machine is built (the
model owns the clock from the first instruction).  ``--cycles-report`` prints where
the time went when the run ends (a table on stderr), or writes it as JSON to a file.
"""

from __future__ import annotations

import json
import os
import sys
import weakref
from typing import Any

import click

from tessera.errors import ConfigError

#: machine -> where --cycles-report goes ("-": a table on stderr)
REPORTS: weakref.WeakKeyDictionary[Any, str] = weakref.WeakKeyDictionary()


def options() -> list[click.Option]:
    """Fresh option objects (the CLI adds them to both ``run`` and ``resume``)."""
    from tessera_cycles.models import MODELS

    return [
        click.Option(["--cycles", "cycles"], default=None, metavar="MODEL",
                     help=f"Run with a cycle model that owns the clock: {', '.join(('auto', *MODELS))} "
                          "(= --set cycles=MODEL; parameters with --set cycles.NAME=V; `tessera cycles list`)."),
        click.Option(["--cycles-report", "cycles_report"], is_flag=False, flag_value="-", default=None,
                     metavar="[FILE]", help="When the run ends, say where the time went: a table on stderr, "
                                            "or JSON written to FILE."),
    ]


def configure(machine: Any, values: dict[str, Any]) -> None:
    """Check ``--cycles-report`` (``tessera_run_configure``)."""
    from tessera_cycles.live import model_of

    path = values["cycles_report"]
    if model_of(machine) is None:
        raise ConfigError("--cycles-report needs a cycle model (--cycles MODEL)")
    if path != "-":
        if os.path.isdir(path):
            raise ConfigError(f"--cycles-report {path}: it is a directory")
        parent = os.path.dirname(os.path.abspath(path))
        if not os.path.isdir(parent):
            raise ConfigError(f"--cycles-report {path}: directory {parent} does not exist")
    REPORTS[machine] = path


def write_report(machine: Any) -> None:
    """Print or write the report asked for (``tessera_run_finished``)."""
    path = REPORTS.get(machine)
    if path is None:
        return
    from tessera_cycles import report as make  # the function (tables.py renders it)
    from tessera_cycles.tables import render, write_json

    rep = make(machine)
    if rep is None:
        return
    if path != "-":
        try:
            write_json(rep, path)
        except OSError as exc:
            raise ConfigError(f"cannot write {path}: {exc.strerror or exc}") from None
        return
    from rich.console import Console

    console = Console(file=sys.stderr)
    for part in render(rep):
        console.print(part)


@click.group("cycles")
def cycles() -> None:
    """Cycle models: which exist, what they model, their parameters (docs/cycles.md)."""


@cycles.command("list")
@click.option("--json", "as_json", is_flag=True, help="Print the models as JSON.")
def list_models(as_json: bool) -> None:
    """The cycle models, the architectures they apply to and their parameters (--set cycles.NAME=V)."""
    from tessera_cycles.models import MODELS, info

    models = [info(name) for name in MODELS]
    if as_json:
        click.echo(json.dumps([{"name": m.name, "doc": m.doc, "applies_to": m.applies_text,
                                "params": [{"name": f"cycles.{p}", "default": d, "doc": t} for p, d, t in m.params]}
                               for m in models], indent=2))
        return
    from rich.console import Console
    from rich.table import Table

    console = Console()
    for m in models:
        table = Table(title=f"{m.name}: {m.doc}\napplies to {m.applies_text}; --cycles {m.name}",
                      title_justify="left")
        table.add_column("parameter")
        table.add_column("default", justify="right")
        table.add_column("meaning")
        for p, d, t in m.params:
            table.add_row(f"cycles.{p}", str(d).lower() if isinstance(d, bool) else str(d), t)
        console.print(table)
