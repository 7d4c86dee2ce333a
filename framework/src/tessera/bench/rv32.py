"""Workload ``rv32``: a C sum loop compiled for RV32IM, on both engines.

The program is ``data/sum.c`` built by ``data/build.py`` with
``riscv64-unknown-elf-gcc -march=rv32im -mabi=ilp32 -O1 -nostdlib``; the ELF is
package data, so no cross compiler is needed to run the bench.  Its loop body is
``add`` / ``addi`` / ``bnez``.  Before each size the ``iterations`` global is
patched through the ELF's symbol table (``tessera.bench.elfpatch``); after the run
the ``result`` global must hold the sum.  :func:`rv32_machine` is shared with the
``hooks`` and ``tracing`` workloads, which run the same program under other hosts.
"""

from __future__ import annotations

from importlib import resources
from typing import Any

from tessera.bench.elfpatch import patch_symbol
from tessera.bench.hosts import architecture_plugin, minimal_host
from tessera.bench.model import BenchFailure, Context, Sample, Variant, Workload
from tessera.bench.runs import expected_sum, require, timed_run
from tessera.machine import Machine

ITERATIONS = 300_000
ENGINES = ("fast", "step")
ELF_NAME = "sum-rv32im.elf"
RAM = 1 << 20  # the ELF is linked at 0x10000; the stack goes at the top of this


def elf_image() -> bytes:
    """The prebuilt ELF (package data)."""
    return resources.files("tessera.bench").joinpath("data", ELF_NAME).read_bytes()


class Rv32Program:
    """The compiled loop for one iteration count: the patched image, and how to check it."""

    def __init__(self, arch: Any, iterations: int) -> None:
        if not 1 <= iterations <= 0xFFFF_FFFF:
            raise BenchFailure(f"iterations must be 1..2**32-1, not {iterations}")
        self.arch = arch
        self.iterations = iterations
        self.image = patch_symbol(elf_image(), "iterations", iterations)
        self.expected = expected_sum(iterations)
        self.max_steps = 3 * iterations + 1000

    def machine(self, host: Any, engine: str | None = None) -> Machine:
        """A fresh machine with the program loaded (nothing run yet); ``None``: the default engine."""
        from tessera.loaders.elf import load_elf

        machine = Machine(self.arch, host=host, engine=engine, config={"echo": False, "ram": RAM})
        load_elf(machine, f"<bench:{ELF_NAME}>", self.image)
        return machine

    def run(self, machine: Machine) -> Sample:
        """Time the run of a machine from :meth:`machine` and check the sum it stored."""
        seconds, result = timed_run(machine, max_steps=self.max_steps)
        require("result", machine.space.read(machine.symbol("result"), 4), self.expected)
        require("exit status", result.exit_code or 0, 0)
        return Sample(seconds, result.steps, {"engine": machine.engine})

    @property
    def check(self) -> dict[str, Any]:
        return {"what": "the global `result` == sum(1..iterations) mod 2**32, exit status 0",
                "expected": self.expected}


class Rv32Loop(Workload):
    name = "rv32"
    title = "compiled RV32 loop"
    scalar = True

    def prepare(self, ctx: Context) -> list[Variant]:
        arch, plugin_name, plugin = architecture_plugin(ctx.host, "rv32im")
        self.host = minimal_host((plugin, plugin_name))
        self.program = Rv32Program(arch, ctx.size(ITERATIONS, quick=ITERATIONS))
        self.size = {"iterations": self.program.iterations, "instructions_per_iteration": 3,
                     "elf": ELF_NAME}
        self.check = self.program.check
        return [Variant(engine, self._runner(engine), f"engine={engine}") for engine in ENGINES]

    def _runner(self, engine: str) -> Any:
        def run() -> Sample:
            return self.program.run(self.program.machine(self.host, engine))

        return run
