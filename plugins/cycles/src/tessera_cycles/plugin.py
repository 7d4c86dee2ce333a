"""The Tessera plugin ``cycles``: hook implementations (the entry point names this module).

Installed but unused, the plugin costs nothing per instruction: a machine whose
configuration leaves ``cycles`` off gets no model, and every per-machine hook asks the
registry of models (empty) and returns ``None``.  ``tessera run`` imports this module
(it adds ``--cycles`` and ``--cycles-report``), so it imports nothing heavy.
"""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING, Any

import tessera

if TYPE_CHECKING:  # annotations only: every `tessera run` imports this module
    import click

    from tessera.machine import RunResult
    from tessera.memory import AddressSpace, Watch
    from tessera.protocols import (
        ArchitectureLike,
        CommandCollector,
        InstructionLike,
        MachineLike,
        TimingModel,
    )
    from tessera.settings import Settings

TESSERA_API_VERSION = 1

#: Read by the conformance suite: a cycle model changes the clock, never a result; the
#: transparency check runs every program with the model for its architecture (where one applies).
#: The one exception is a program that reads the clock: the vendor's tile firmware (RISCV B's
#: boot delays) keeps wall-clock values in registers, which then hold the modelled time.
TESSERA_CONFORMANCE: dict[str, Any] = {
    "xfail": {"transparency:tensix-tile*:llk-datacopy": "the vendor's firmware reads the wall clock (RISCV B's "
                                                        "boot delays): its registers hold the modelled time"},
    "modifies_state": False, "settings": {"cycles": "auto"}}


def _model(machine: Any) -> Any:
    """The machine's model, without importing the model's modules when none was ever built."""
    live = sys.modules.get("tessera_cycles.live")
    return live.model_of(machine) if live is not None else None


@tessera.hookimpl
def tessera_tool_settings() -> Settings:
    from tessera_cycles.models import declared_settings

    return declared_settings()


@tessera.hookimpl
def tessera_timing_model(machine: MachineLike, arch: ArchitectureLike) -> TimingModel | None:
    if not any(k == "cycles" or k.startswith("cycles.") for k in machine.tool_config):  # type: ignore[attr-defined]
        return None  # no model asked for: nothing imported (models.build refuses stray parameters)
    from tessera_cycles.models import build

    return build(machine)  # type: ignore[no-any-return]


@tessera.hookimpl
def tessera_execute_observe(machine: MachineLike, arch: ArchitectureLike, ins: InstructionLike) -> Any:
    model = _model(machine)
    return model.observer(arch, ins) if model is not None else None


@tessera.hookimpl
def tessera_memory_watches(machine: MachineLike, space: AddressSpace) -> list[Watch] | None:
    model = _model(machine)
    return model.watches(space) if model is not None else None


@tessera.hookimpl
def tessera_machine_ready(machine: MachineLike) -> None:
    model = _model(machine)
    if model is not None:
        from tessera_cycles.models import check_agents

        check_agents(machine, model.name)


@tessera.hookimpl
def tessera_run_options() -> list[click.Option]:
    from tessera_cycles import cli

    return cli.options()


@tessera.hookimpl
def tessera_run_configure(machine: MachineLike, options: dict[str, Any]) -> None:
    if options.get("cycles_report") is None and options.get("cycles_trace") is None:
        return
    from tessera_cycles import cli

    cli.configure(machine, options)


@tessera.hookimpl
def tessera_run_finished(machine: MachineLike, result: RunResult) -> None:
    cli = sys.modules.get("tessera_cycles.cli")
    if cli is not None:
        cli.write_report(machine)


@tessera.hookimpl
def tessera_bench_workloads() -> list[type]:
    """``tessera bench``'s ``cycles-inorder`` (imported only when the bench asks)."""
    from tessera_cycles.bench import workloads

    return list(workloads())


@tessera.hookimpl
def tessera_tool_demos(host: Any) -> list[dict[str, Any]]:
    """``tessera demo``: each architecture's first example under its cycle model."""
    from tessera_cycles.demos import demos

    return demos(host)


@tessera.hookimpl
def tessera_cli_commands(cli: CommandCollector) -> None:
    from tessera_cycles.cli import cycles

    cli.add_command(cycles)
