"""The Tessera plugin ``trace``: hook implementations (the entry point names this module).

Installed but unused, the plugin costs nothing per instruction: every hook first asks
the registry for the machine's tracers and returns ``None`` (or ``[]``) when there
are none, so no observer is woven into decode-cache entries and no memory is
watched.  The hooks that do run per machine or per event (sync events, traps, the
end of a run) return just as quickly.
"""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING, Any

import tessera

if TYPE_CHECKING:  # annotations only: every `tessera run` imports this module
    import click

    from tessera.bench.model import Workload
    from tessera.control import Trap
    from tessera.machine import RunResult
    from tessera.memory import AddressSpace, Watch
    from tessera.protocols import ArchitectureLike, CpuLike, InstructionLike, MachineLike, Observer
    from tessera.sync import SyncEvent

TESSERA_API_VERSION = 1

#: Read by the conformance suite: tracing observes and changes nothing.
TESSERA_CONFORMANCE: dict[str, Any] = {"xfail": {}, "modifies_state": False}


def tracers_of(machine: MachineLike) -> list[Any]:
    """The machine's open tracers, without importing the tracer (and the formats, numpy…).

    Every ``tessera run`` imports this module (the plugin adds ``--trace``), so it stays
    light: no tracer can exist before :mod:`tessera_trace.tracer` was imported, and the
    hooks of an untraced run never import it.
    """
    tracer = sys.modules.get("tessera_trace.tracer")
    return tracer.tracers_of(machine) if tracer is not None else []


@tessera.hookimpl
def tessera_run_options() -> list[click.Option]:
    from tessera_trace import cli

    return cli.options()


@tessera.hookimpl
def tessera_run_configure(machine: MachineLike, options: dict[str, Any]) -> None:
    from tessera_trace import cli

    cli.configure(machine, options)


@tessera.hookimpl
def tessera_execute_observe(machine: MachineLike, arch: ArchitectureLike,
                            ins: InstructionLike) -> Observer | None:
    tracers = tracers_of(machine)
    if not tracers:
        return None
    observers = [ob for ob in (t.observer(arch, ins) for t in tracers) if ob is not None]
    if not observers:
        return None
    if len(observers) == 1:
        return observers[0]
    chain = tuple(observers)

    def each(agent: CpuLike, ins: InstructionLike) -> None:
        for ob in chain:
            ob(agent, ins)

    return each


@tessera.hookimpl
def tessera_memory_watches(machine: MachineLike, space: AddressSpace) -> list[Watch]:
    return [w for t in tracers_of(machine) for w in t.watches(space)]


@tessera.hookimpl
def tessera_sync_event(machine: MachineLike, event: SyncEvent) -> None:
    for tracer in tracers_of(machine):
        tracer.on_sync(event)


@tessera.hookimpl
def tessera_trap(machine: MachineLike, agent: CpuLike, trap: Trap) -> None:
    for tracer in tracers_of(machine):
        tracer.on_trap(agent, trap)


@tessera.hookimpl
def tessera_trap_taken(machine: MachineLike, agent: CpuLike, trap: Trap) -> None:
    for tracer in tracers_of(machine):
        tracer.on_trap_taken(agent, trap)


@tessera.hookimpl(trylast=True)
def tessera_machine_ready(machine: MachineLike) -> None:
    # after the other plugins set registers up: that is not an instruction's doing
    for tracer in tracers_of(machine):
        tracer.resync()


@tessera.hookimpl
def tessera_run_finished(machine: MachineLike, result: RunResult) -> None:
    for tracer in list(tracers_of(machine)):
        tracer.on_run_finished(result)


@tessera.hookimpl
def tessera_bench_workloads() -> list[type[Workload]]:
    """``tessera bench``'s ``tracing`` and ``tracing-mark`` workloads (imported only when the bench asks)."""
    from tessera_trace.bench import workloads

    return workloads()
