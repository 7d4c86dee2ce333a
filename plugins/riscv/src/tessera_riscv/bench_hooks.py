"""Workload ``hooks``: what idle hook families cost on the compiled RV32 loop.

Tessera's promise (docs/hooks.md) is that a hook family nobody subscribes to costs
nothing per instruction, because hooks run when a decode-cache entry is filled,
never per instruction.  The variants run the ``rv32`` program on the default engine:

* ``riscv-only`` — a host holding only the riscv plugin;
* ``idle-hooks`` — plus :class:`IdlePlugin`, which implements every run-time hook
  family and declines everything (``None`` / ``[]`` / no-op).  The overhead
  against ``riscv-only`` is the number the target (≤ 5 %) is about;
* ``observed`` — plus one execute-observe observer that does nothing (the fast
  engine keeps blocks for observers: context for tracing);
* ``subscribed`` — plus one execute-instrument before-callback that does nothing
  (instrumenting may redirect, so those instructions leave the fast path: context).

The promise is the core's, but measuring it needs a real architecture's program and a
host holding only that architecture's plugin, so the riscv plugin offers the workload
(its ``rv32`` program; the variant ``riscv-only`` and the derived
``rate_vs_riscv_only`` keep the report's names).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import tessera
from tessera.bench.hosts import minimal_host
from tessera.bench.model import Context, Sample, Variant, Workload
from tessera.bench.targets import Target
from tessera_riscv.bench import ITERATIONS, Rv32Program


def _declining(answer: Callable[[], Any] = lambda: None) -> Any:
    """A hook implementation that asks for no arguments and answers ``answer()``: "nothing here".

    pluggy passes an implementation only the arguments it names, so one shape serves
    every hook family; ``answer`` makes a fresh value per call (``list`` for hooks
    that answer with a list).
    """

    @tessera.hookimpl
    def decline(self: Any) -> Any:
        return answer()

    return decline


class IdlePlugin:
    """Implements every run-time hook family and subscribes to nothing."""

    TESSERA_API_VERSION = 1

    tessera_decode = _declining()
    tessera_execute_instrument = _declining()
    tessera_execute_observe = _declining()
    tessera_memory_regions = _declining(list)
    tessera_memory_watches = _declining(list)
    tessera_sync_event = _declining()
    tessera_timing_model = _declining()
    tessera_trap = _declining()
    tessera_trap_taken = _declining()
    tessera_run_finished = _declining()
    tessera_machine_ready = _declining()


def _nothing(agent: Any, ins: Any) -> None:
    return None


class ObservePlugin:
    """One execute-observe observer on every instruction, doing nothing."""

    TESSERA_API_VERSION = 1

    @tessera.hookimpl
    def tessera_execute_observe(self, ins: Any) -> Any:
        return _nothing


class InstrumentPlugin:
    """One execute-instrument before-callback on every instruction, doing nothing."""

    TESSERA_API_VERSION = 1

    @tessera.hookimpl
    def tessera_execute_instrument(self, ins: Any) -> Any:
        return _nothing, None


EXTRA = {
    "riscv-only": (),
    "idle-hooks": ((IdlePlugin, "idle"),),
    "observed": ((ObservePlugin, "observe"),),
    "subscribed": ((InstrumentPlugin, "instrument"),),
}


class IdleHooks(Workload):
    name = "hooks"
    title = "idle hook families (RV32 loop)"
    order = 50
    targets = (Target("idle-hooks", "idle hook families, overhead vs riscv plugin only",
                      ("hooks", "derived", "idle_overhead_percent"), 5.0, False, "%"),)

    def prepare(self, ctx: Context) -> list[Variant]:
        self.program = Rv32Program.for_context(ctx, ctx.size(ITERATIONS, quick=ITERATIONS))
        variants = []
        for name, extra in EXTRA.items():
            host = minimal_host(self.program.plugin, *[(cls(), pname) for cls, pname in extra])
            variants.append(Variant(name, self._runner(host), _describe(name)))
        self.size = {"iterations": self.program.iterations, "instructions_per_iteration": 3}
        self.check = self.program.check
        return variants

    def _runner(self, host: Any) -> Any:
        def run() -> Sample:
            return self.program.run(self.program.machine(host))

        return run

    def derive(self, best: dict[str, Sample]) -> dict[str, Any]:
        base = best.get("riscv-only")
        idle = best.get("idle-hooks")
        out: dict[str, Any] = {}
        if base is not None and idle is not None:
            out["idle_overhead_percent"] = (base.rate / idle.rate - 1.0) * 100.0
        if base is not None:
            out["rate_vs_riscv_only"] = {name: s.rate / base.rate for name, s in best.items()}
        return out

    @classmethod
    def comparison(cls, entry: dict[str, Any], variant: str) -> list[str]:
        rel = entry["derived"].get("rate_vs_riscv_only", {}).get(variant)
        if variant == "riscv-only" or rel is None:
            return []
        return [f"{(1 / rel - 1) * 100:+.1f} % time vs riscv-only"]


def _describe(name: str) -> str:
    return {
        "riscv-only": "host: riscv plugin only",
        "idle-hooks": "+ a plugin implementing every hook family, declining everything",
        "observed": "+ one do-nothing execute-observe observer per instruction",
        "subscribed": "+ one do-nothing execute-instrument before-callback per instruction",
    }[name]
