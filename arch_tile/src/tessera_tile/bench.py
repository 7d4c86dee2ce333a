"""Workload ``tile-harts``: a sum loop on 16 harts of the tile machine, on both engines.

The tile machine's harts are scheduler agents like rfPhoenix's threads, and each hart
brings four tile engines (LSU, TMA, MMA, ALU) that are agents too, idle here: a
16-hart machine has 80 agents.  This workload measures what running many harts costs
the scheduler and the engines: the total instructions per second of all harts, with
one hart doing the same total work beside it (``derived.over_one_hart``).

Every hart starts at the program entry, reads ``mhartid`` (hart ``g`` has ``g``:
the ``hartid`` setting is 0), sums ``1..n - g`` in its own registers, where ``n`` is
``iterations`` on 16 harts and ``16 * iterations`` on one
(``add`` / ``addi`` / ``bnez``, as the ``rv32`` loop), stores the sum in
``results[g]`` and exits; each slot is checked against its own sum, so a hart that
ran with another's registers, or a hart that never ran, is caught.  Sixteen harts are
two PEs of eight (``tile.threads_per_pe=8``, ``tile.pes_per_cluster=2``); one hart is
one PE of one.

The tile plugin's contribution to ``tessera bench`` (hook ``tessera_bench_workloads``
in :mod:`tessera_tile.plugin`, which imports this module only when the bench asks).
"""

from __future__ import annotations

from typing import Any

from tessera.bench.hosts import architecture_plugin, minimal_host
from tessera.bench.model import Context, Sample, Variant, Workload
from tessera.bench.runs import require, scaling, scaling_comparison, timed_run

#: loop iterations per hart of the 16-hart run (hart ``g`` does ``ITERATIONS - g``; one
#: hart alone does 16 times as many: the same total work)
ITERATIONS = 10_000
ENGINES = ("fast", "step")
#: harts of each variant -> the tile settings that make them
HARTS = {16: {"tile.threads_per_pe": 8, "tile.pes_per_cluster": 2},
         1: {"tile.threads_per_pe": 1, "tile.pes_per_cluster": 1}}
LOAD_ADDRESS = 0x10000
MASK64 = (1 << 64) - 1


def hart_source(iterations: int, harts: int) -> str:
    """Each hart sums ``1..iterations - mhartid`` and stores it in ``results[mhartid]``."""
    return f"""\
        .text
        .globl _start
_start:
        csrr    t0, mhartid
        li      a1, {iterations}
        sub     a1, a1, t0
        li      a2, 0
loop:   add     a2, a2, a1
        addi    a1, a1, -1
        bnez    a1, loop
        la      t1, results
        slli    t2, t0, 3
        add     t1, t1, t2
        sd      a2, 0(t1)
        li      a0, 0
        li      a7, 93                  # exit (this hart)
        ecall
        .data
        .align  3
results:
        .space  {8 * harts}
"""


def variant_name(engine: str, harts: int) -> str:
    return f"{engine}-{harts}h"


class TileHarts(Workload):
    name = "tile-harts"
    title = "tile extension: the sum loop on 16 harts"
    order = 14

    def prepare(self, ctx: Context) -> list[Variant]:
        arch, plugin_name, plugin = architecture_plugin(ctx.host, "tile", "tessera-tile")
        self.arch = arch
        self.host = minimal_host((plugin, plugin_name))
        most = max(HARTS)
        # every hart needs at least one iteration: iterations - g >= 1
        self.iterations = ctx.size(ITERATIONS, minimum=2 * most, quick=5_000)
        self.programs = {n: self._assemble(n) for n in HARTS}
        self.size = {"iterations": self.iterations, "harts": sorted(HARTS, reverse=True),
                     "iterations_per_hart": {f"{n}h": self.per_hart(n) for n in HARTS},
                     "instructions_per_iteration": 3}
        self.check = {"what": "results[g] == sum(1..iterations_per_hart - g) for every hart g "
                              "(expected: by hart), exit status 0",
                      "expected": {f"{n}h": [self.expected(n, g) for g in range(n)] for n in HARTS}}
        return [Variant(variant_name(engine, n), self._runner(engine, n),
                        f"engine={engine}, {n} hart(s): " + ", ".join(f"{k}={v}" for k, v in HARTS[n].items()))
                for n in sorted(HARTS, reverse=True) for engine in ENGINES]

    def per_hart(self, harts: int) -> int:
        """Iterations of each hart (less its number) when ``harts`` share the total work."""
        return self.iterations * max(HARTS) // harts

    def expected(self, harts: int, hart: int) -> int:
        n = self.per_hart(harts) - hart
        return (n * (n + 1) // 2) & MASK64

    def _assemble(self, harts: int) -> Any:
        from tessera.isa.asm import assemble

        return assemble(self.arch, hart_source(self.per_hart(harts), harts), file="<bench:tile-harts>",
                        base=LOAD_ADDRESS)

    def _runner(self, engine: str, harts: int) -> Any:
        program = self.programs[harts]

        def run() -> Sample:
            from tessera.loaders import place
            from tessera.machine import Machine

            machine = Machine(self.arch, host=self.host, engine=engine, config=dict(HARTS[harts]))
            for address, blob in program.segments:
                place(machine, address, blob, what="the tile-harts bench loop")
            machine.symbols.update(program.symbols)
            machine.set_entry(program.entry if program.entry is not None else LOAD_ADDRESS)
            seconds, result = timed_run(machine, max_steps=harts * (3 * self.per_hart(harts) + 100))
            require("exit status", result.exit_code or 0, 0)
            base = machine.symbol("results")
            for g in range(harts):
                require(f"results[{g}]", machine.space.read(base + 8 * g, 8), self.expected(harts, g))
            return Sample(seconds, result.steps, {"engine": machine.engine, "harts": harts})

        return run

    def derive(self, best: dict[str, Sample]) -> dict[str, Any]:
        over, fast_over_step = scaling(best, tuple(HARTS), "h", ENGINES)
        return {"over_one_hart": over, "fast_over_step": fast_over_step}

    @classmethod
    def comparison(cls, entry: dict[str, Any], variant: str) -> list[str]:
        return scaling_comparison(entry["derived"], variant, "over_one_hart", "1 hart")


def workloads() -> list[type[Workload]]:
    """What the tile plugin offers ``tessera bench``."""
    return [TileHarts]
