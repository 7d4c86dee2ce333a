"""The command line of the faults plugin: ``tessera run --fault SPEC`` and ``tessera faults targets``.

A spec is checked in :func:`configure`, which ``tessera run``/``resume`` call after
loading the program and before the run: a bad one is one line and exit status 64
(a configuration error), and the program never starts.
"""

from __future__ import annotations

import json
import os
import weakref
from typing import Any

import click

from tessera.errors import ConfigError

#: machine -> where --fault-out writes the records when the run ends
OUTPUTS: weakref.WeakKeyDictionary[Any, str] = weakref.WeakKeyDictionary()


def options() -> list[click.Option]:
    """Fresh option objects (the CLI adds them to both ``run`` and ``resume``)."""
    return [
        click.Option(["--fault", "fault"], multiple=True, metavar="SPEC",
                     help="Inject a fault: target=...,model=flip|random|zero|stuck0|stuck1|skip,"
                          "bit=B,k=K,at=retired:N|step:N|cycle:C|pc:ADDR#K|class:C#N[@AGENT],seed=S "
                          "(repeatable; docs/faults.md)."),
        click.Option(["--fault-out", "fault_out"], default=None, metavar="FILE",
                     help="Write what each --fault did (JSON) when the run ends."),
    ]


def configure(machine: Any, values: dict[str, Any]) -> None:
    """Arm the faults the command line asks for (``tessera_run_configure``)."""
    from tessera_faults.injector import inject

    specs = tuple(values.get("fault") or ())
    out = values.get("fault_out")
    if out is not None and not specs:
        raise ConfigError("--fault-out needs --fault SPEC")
    if out is not None:
        check_writable(out)
        OUTPUTS[machine] = out
    for spec in specs:
        inject(machine, spec)


def check_writable(path: str) -> None:
    if os.path.isdir(path):
        raise ConfigError(f"--fault-out {path}: it is a directory")
    parent = os.path.dirname(os.path.abspath(path))
    if not os.path.isdir(parent):
        raise ConfigError(f"--fault-out {path}: directory {parent} does not exist")


def write_records(machine: Any) -> None:
    """``--fault-out``: the records of the machine's faults, as a JSON list."""
    path = OUTPUTS.get(machine)
    if path is None:
        return
    from tessera_faults.injector import records

    try:
        with open(path, "w") as fh:
            json.dump(records(machine), fh, indent=2, sort_keys=True)
            fh.write("\n")
    except OSError as exc:
        raise ConfigError(f"cannot write {path}: {exc.strerror or exc}") from None


# ------------------------------------------------------------------ tessera faults ...


@click.group("faults")
def faults() -> None:
    """Fault injection: targets, instruction classes, campaigns and their reports (docs/faults.md)."""


def _add_campaign_commands() -> None:
    from tessera_faults.campaign.cli import plan, run
    from tessera_faults.demos.cli import demo
    from tessera_faults.report.cli import report

    faults.add_command(demo)
    faults.add_command(run)
    faults.add_command(plan)
    faults.add_command(report)


@faults.command("targets")
@click.option("--arch", "arch_name", required=True, help="Architecture.")
@click.option("--set", "settings", multiple=True, metavar="KEY=VALUE",
              help="Architecture configuration (sizes follow it: --set lanes=8).")
@click.option("--json", "as_json", is_flag=True, help="Machine-readable output.")
@click.pass_obj
def targets(obj: Any, arch_name: str, settings: tuple[str, ...], as_json: bool) -> int:
    """List the fault targets of an architecture's machine, with their sizes."""
    from tessera.cli.params import parse_settings
    from tessera.machine import Machine
    from tessera_faults.targets import targets_of

    arch = obj.host.architecture(arch_name)
    machine = Machine(arch, host=obj.host, config=parse_settings(settings, getattr(arch, "settings", None)))
    found = list(targets_of(machine).values())
    if as_json:
        click.echo(json.dumps([t.describe() for t in found], indent=2))
        return 0
    from rich.console import Console  # rich only for tables, not for --json
    from rich.table import Table

    table = Table(title=f"Fault targets of {arch.name}")
    for col in ("target", "kind", "agent", "entries", "size", "from", "what"):
        table.add_column(col, overflow="fold")
    for t in found:
        table.add_row(t.name, t.kind, t.agent or "-", f"{t.entries:,}", t.size_text(), t.plugin, t.doc)
    Console(width=max(120, Console().width)).print(table)
    return 0


@faults.command("classes")
@click.option("--arch", "arch_name", required=True, help="Architecture.")
@click.option("--json", "as_json", is_flag=True, help="Machine-readable output.")
@click.pass_obj
def classes(obj: Any, arch_name: str, as_json: bool) -> int:
    """List the instruction classes an ``at=class:C`` trigger can name, with their rows."""
    from tessera_faults.triggers import class_table

    table_rows = class_table(obj.host.architecture(arch_name))
    if as_json:
        click.echo(json.dumps([{"class": c, "from": kinds, "rows": n} for c, kinds, n in table_rows], indent=2))
        return 0
    from rich.console import Console
    from rich.table import Table

    table = Table(title=f"Instruction classes of {arch_name} (mnemonics are classes too)")
    for col in ("class", "from", "rows"):
        table.add_column(col)
    for name, kinds, n in table_rows:
        table.add_row(name, ", ".join(kinds), str(n))
    Console(width=max(100, Console().width)).print(table)
    return 0


_add_campaign_commands()
