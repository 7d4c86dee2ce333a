"""Workload ``phoenix``: the integer sum loop in rfPhoenix assembly, on both engines.

The loop is the one of the bundled ``sum.s`` example (``add`` / ``addi`` / ``bne``:
three 48-bit instructions per iteration), with the count loaded by ``ldi`` (the
assembler adds an immediate postfix when the count needs one) and the run ended by
the self-loop that halts a thread.  The machine has one thread and a small DRAM, so
building it costs little; thread 0's ``r2`` must hold the sum.

The rfPhoenix plugin's contribution to ``tessera bench`` (hook
``tessera_bench_workloads`` in :mod:`tessera_phoenix.plugin`, which imports this
module only when the bench asks).
"""

from __future__ import annotations

from typing import Any

from tessera.bench.hosts import architecture_plugin, minimal_host
from tessera.bench.model import Context, Sample, Variant, Workload
from tessera.bench.runs import expected_sum, require, timed_run
from tessera.bench.targets import Target

ITERATIONS = 100_000
ENGINES = ("fast", "step")


def loop_source(iterations: int) -> str:
    return "\n".join([
        f"        ldi     r1, {iterations}",
        "        ldi     r2, 0",
        "loop:   add     r2, r2, r1",
        "        addi    r1, r1, -1",
        "        bne     r1, r0, loop",
        "done:   bra     done",
        "",
    ])


class PhoenixLoop(Workload):
    name = "phoenix"
    title = "rfPhoenix integer loop"
    scalar = True
    order = 10
    targets = (Target("phoenix-vs-riscemu", "rfPhoenix loop, fast engine, speed vs riscemu",
                      ("phoenix", "vs_riscemu", "fast"), 20.0, True, "x", aim=40.0),)

    def prepare(self, ctx: Context) -> list[Variant]:
        from tessera.isa.asm import assemble

        arch, plugin_name, plugin = architecture_plugin(ctx.host, "phoenix", "tessera-phoenix")
        self.arch = arch
        self.host = minimal_host((plugin, plugin_name))
        self.iterations = ctx.size(ITERATIONS, quick=ITERATIONS)
        self.program = assemble(arch, loop_source(self.iterations), file="<bench:phoenix>",
                                base=arch.reset_pc)
        self.size = {"iterations": self.iterations, "instructions_per_iteration": 3}
        self.check = {"what": "thread 0 r2 == sum(1..iterations) mod 2**32",
                      "expected": expected_sum(self.iterations)}
        return [Variant(engine, self._runner(engine), f"engine={engine}") for engine in ENGINES]

    def _runner(self, engine: str) -> Any:
        def run() -> Sample:
            from tessera.loaders import place
            from tessera.machine import Machine

            machine = Machine(self.arch, host=self.host, engine=engine,
                              config={"threads": 1, "dram": 1 << 20})
            for address, blob in self.program.segments:
                place(machine, address, blob, what="the phoenix bench loop")
            machine.set_entry(self.arch.reset_pc)
            seconds, result = timed_run(machine, max_steps=3 * self.iterations + 100)
            thread: Any = machine.agents[0]
            require("r2", thread.regs["r"][2], self.check["expected"])
            return Sample(seconds, result.steps, {"engine": machine.engine})

        return run


def workloads() -> list[type[Workload]]:
    """What the rfPhoenix plugin offers ``tessera bench``."""
    return [PhoenixLoop]
