"""Workload ``phoenix``: the integer sum loop in rfPhoenix assembly, on both engines.

The loop is the one of the bundled ``sum.s`` example (``add`` / ``addi`` / ``bne``:
three 48-bit instructions per iteration), with the count loaded by ``ldi`` (the
assembler adds an immediate postfix when the count needs one) and the run ended by
the self-loop that halts a thread.  The machine has one thread and a small DRAM, so
building it costs little; thread 0's ``r2`` must hold the sum.

Workload ``phoenix-threads``: the same loop on 1, 2 and 4 hardware threads at once,
on both engines.  rfPhoenix interleaves its runnable threads one instruction each
(``quantum=1``), so this measures what running several threads costs: the total
instructions per second of all threads against one thread doing the same total work
(``derived.over_one_thread``; the target asks 4 threads for at least 0.8 of one
thread's rate).  Every thread starts at the reset address (CR0 enables all of them),
reads its number from ``HARTID`` and sums ``1..n - tid`` in its own registers, where
``n`` is ``iterations`` on 4 threads, twice that on 2 and 4 times on 1; each thread's
``r2`` is checked against its own sum, so a thread that ran with another's registers
or count, or did not run, is caught.

The rfPhoenix plugin's contribution to ``tessera bench`` (hook
``tessera_bench_workloads`` in :mod:`tessera_phoenix.plugin`, which imports this
module only when the bench asks).
"""

from __future__ import annotations

from typing import Any

from tessera.bench.hosts import architecture_plugin, minimal_host
from tessera.bench.model import Context, Sample, Variant, Workload
from tessera.bench.runs import expected_sum, require, scaling, scaling_comparison, timed_run
from tessera.bench.targets import Target

ITERATIONS = 100_000
ENGINES = ("fast", "step")
#: loop iterations per thread of ``phoenix-threads`` on 4 threads (thread ``t`` does
#: ``THREAD_ITERATIONS - t``); fewer threads share the same total work
THREAD_ITERATIONS = 20_000
THREAD_COUNTS = (1, 2, 4)


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


def threads_source(iterations: int) -> str:
    """The sum loop, each thread counting down from ``iterations`` minus its thread number."""
    return "\n".join([
        "        csrrd   r3, r0, hartid",       # hartid setting 0: HARTID = thread number
        f"        ldi     r1, {iterations}",
        "        sub     r1, r1, r3",
        "        ldi     r2, 0",
        "loop:   add     r2, r2, r1",
        "        addi    r1, r1, -1",
        "        bne     r1, r0, loop",
        "done:   bra     done",
        "",
    ])


def thread_variant(engine: str, threads: int) -> str:
    return f"{engine}-{threads}t"


class PhoenixThreads(Workload):
    name = "phoenix-threads"
    title = "rfPhoenix loop on 1, 2 and 4 hardware threads"
    order = 12
    targets = (Target("phoenix-threads", "rfPhoenix, 4 threads' total rate / 1 thread's, fast engine",
                      ("phoenix-threads", "derived", "over_one_thread", "fast-4t"), 0.8, True, "x"),)

    def prepare(self, ctx: Context) -> list[Variant]:
        from tessera.isa.asm import assemble

        arch, plugin_name, plugin = architecture_plugin(ctx.host, "phoenix", "tessera-phoenix")
        self.arch = arch
        self.host = minimal_host((plugin, plugin_name))
        # every thread needs at least one iteration: iterations - tid >= 1
        self.iterations = ctx.size(THREAD_ITERATIONS, minimum=2 * max(THREAD_COUNTS), quick=5_000)
        self.size = {"iterations": self.iterations, "threads": list(THREAD_COUNTS),
                     "iterations_per_thread": {f"{n}t": self.per_thread(n) for n in THREAD_COUNTS},
                     "instructions_per_iteration": 3}
        self.check = {"what": "thread t's r2 == sum(1..iterations_per_thread - t) mod 2**32, "
                              "for every thread t (expected: by thread)",
                      "expected": {f"{n}t": [expected_sum(self.per_thread(n) - t) for t in range(n)]
                                   for n in THREAD_COUNTS}}
        self.programs = {n: assemble(arch, threads_source(self.per_thread(n)),
                                     file="<bench:phoenix-threads>", base=arch.reset_pc)
                         for n in THREAD_COUNTS}
        return [Variant(thread_variant(engine, n), self._runner(engine, n),
                        f"engine={engine}, threads={n}, all enabled at reset")
                for engine in ENGINES for n in THREAD_COUNTS]

    def per_thread(self, threads: int) -> int:
        """Iterations of each thread (less its number) when ``threads`` share the total work."""
        return self.iterations * max(THREAD_COUNTS) // threads

    def _runner(self, engine: str, threads: int) -> Any:
        program = self.programs[threads]
        expected = self.check["expected"][f"{threads}t"]

        def run() -> Sample:
            from tessera.loaders import place
            from tessera.machine import Machine

            machine = Machine(self.arch, host=self.host, engine=engine,
                              config={"threads": threads, "reset_cr0": (1 << threads) - 1,
                                      "dram": 1 << 20})
            for address, blob in program.segments:
                place(machine, address, blob, what="the phoenix-threads bench loop")
            machine.set_entry(self.arch.reset_pc)
            seconds, result = timed_run(machine, max_steps=threads * (3 * self.per_thread(threads) + 100))
            for tid in range(threads):
                thread: Any = machine.agents[tid]
                require(f"t{tid} r2", thread.regs["r"][2], expected[tid])
            return Sample(seconds, result.steps, {"engine": machine.engine, "threads": threads})

        return run

    def derive(self, best: dict[str, Sample]) -> dict[str, Any]:
        over, fast_over_step = scaling(best, THREAD_COUNTS, "t", ENGINES)
        return {"over_one_thread": over, "fast_over_step": fast_over_step}

    @classmethod
    def comparison(cls, entry: dict[str, Any], variant: str) -> list[str]:
        return scaling_comparison(entry["derived"], variant, "over_one_thread", "1 thread")


def workloads() -> list[type[Workload]]:
    """What the rfPhoenix plugin offers ``tessera bench``."""
    return [PhoenixLoop, PhoenixThreads]
