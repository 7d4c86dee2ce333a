"""The Tessera plugin ``faults``: hook implementations (the entry point names this module).

Installed but unused, the plugin costs nothing per instruction: ``tessera run``
imports this module (it adds ``--fault``), and every hook first asks the registry of
armed faults, which is empty, and returns ``None`` — no callback is woven into any
decode-cache entry.  Everything else is imported when a fault is armed.
"""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING, Any

import tessera

if TYPE_CHECKING:  # annotations only: every `tessera run` imports this module
    import click

    from tessera.machine import RunResult
    from tessera.protocols import (
        ArchitectureLike,
        CommandCollector,
        InstructionLike,
        Instrumentation,
        MachineLike,
    )

TESSERA_API_VERSION = 1

#: Read by the conformance suite: an injected fault changes results on purpose, and the
#: same fault gives the same result (its `tool-determinism` check); idle, it changes nothing.
TESSERA_CONFORMANCE: dict[str, Any] = {
    "xfail": {},
    "modifies_state": "a fault (--fault SPEC) changes a register, memory or the instruction stream on purpose",
}


def _inject() -> Any:
    """The injector module if a fault was ever armed in this process, else ``None`` (no import)."""
    return sys.modules.get("tessera_faults.injector")


@tessera.hookimpl
def tessera_run_options() -> list[click.Option]:
    from tessera_faults import cli

    return cli.options()


@tessera.hookimpl
def tessera_run_configure(machine: MachineLike, options: dict[str, Any]) -> None:
    if not options.get("fault") and options.get("fault_out") is None:
        return
    from tessera_faults import cli

    cli.configure(machine, options)


@tessera.hookimpl
def tessera_execute_instrument(machine: MachineLike, arch: ArchitectureLike,
                               ins: InstructionLike) -> Instrumentation | None:
    inject = _inject()
    return inject.instrument(machine, arch, ins) if inject is not None else None


def _liveness() -> Any:
    """The campaign's def/use recorder module if a campaign imported it, else ``None``."""
    return sys.modules.get("tessera_faults.campaign.liveness")


@tessera.hookimpl
def tessera_execute_observe(machine: MachineLike, arch: ArchitectureLike, ins: InstructionLike) -> Any:
    live = _liveness()
    recorder = live.LIVENESS.get(machine) if live is not None else None
    return recorder.observer(arch, ins) if recorder is not None else None


@tessera.hookimpl
def tessera_trap(machine: MachineLike, agent: Any, trap: Any) -> None:
    live = _liveness()
    recorder = live.LIVENESS.get(machine) if live is not None else None
    if recorder is not None:
        recorder.trap(agent)


@tessera.hookimpl
def tessera_run_finished(machine: MachineLike, result: RunResult) -> None:
    inject = _inject()
    if inject is None:
        return
    inject.run_finished(machine, result)
    from tessera_faults import cli

    cli.write_records(machine)


@tessera.hookimpl
def tessera_cli_commands(cli: CommandCollector) -> None:
    """``tessera faults targets --arch X``."""
    from tessera_faults.cli import faults

    cli.add_command(faults)


@tessera.hookimpl
def tessera_conformance_cases(arch: ArchitectureLike) -> list[dict[str, Any]] | None:
    """RISC-V programs whose result a fault must change, and leave alone when idle."""
    from tessera_faults.conformance import cases

    return cases(arch)


@tessera.hookimpl
def tessera_bench_workloads() -> list[type]:
    """``tessera bench``'s ``faults-fastforward``, ``faults-scaling`` and ``faults-armed``
    (imported only when the bench asks)."""
    from tessera_faults.bench import workloads

    return list(workloads())


@tessera.hookimpl
def tessera_tool_demos(host: Any) -> list[dict[str, Any]]:
    """``tessera demo``: a small campaign per installed architecture (imported only then)."""
    from tessera_faults.demos import available

    return [{"name": d.label, "arch": d.arch, "description": d.description, "run": _demo_runner(d, host)}
            for d in available(host)]


def _demo_runner(demo: Any, host: Any) -> Any:
    """The ``run`` of one demo: its campaign in ``tessera demo``'s scratch directory, then
    ``(ok, "80 faults: masked 5, ...")`` — no results path, the directory goes away."""

    def run(workdir: Any) -> tuple[bool, str]:
        from tessera_faults.demos import run_demo

        result = run_demo(demo, host, workdir)
        return result.ok, result.counts()

    return run
