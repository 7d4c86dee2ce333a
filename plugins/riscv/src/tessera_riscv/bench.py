"""The riscv plugin's ``tessera bench`` workloads: ``rv32``, ``mark``, ``riscemu`` (the peer) and ``hooks``.

* ``rv32`` — a C sum loop compiled for RV32IM, on both engines.  The program is
  ``data/bench/sum.c`` built by ``data/bench/build.py`` with
  ``riscv64-unknown-elf-gcc -march=rv32im -mabi=ilp32 -O1 -nostdlib``; the ELF is
  package data, so no cross compiler is needed to run the bench.  Its loop body is
  ``add`` / ``addi`` / ``bnez``.  Before each size the ``iterations`` global is
  patched through the ELF's symbol table (``tessera.bench.elfpatch``); after the run
  the ``result`` global must hold the sum.  The same program is what other workloads
  run (:meth:`Rv32Loop.program_for`: ``hooks`` here, the trace plugin's ``tracing``) and
  what the core's ``startup`` workload times ``tessera run`` of
  (:meth:`Rv32Loop.startup_commands`).
* ``mark`` — a compiled program shaped like real code (lists, matrices, a state
  machine, CRCs: ``data/bench/mark.c``) on both engines and in Unicorn, with steady
  state and translation time apart (:mod:`tessera_riscv.bench_mark`).
* ``riscemu`` — the same loop in riscemu, the peer every instruction-set workload's
  speed is stated against (:mod:`tessera_riscv.bench_peer`).
* ``hooks`` — what idle hook families cost on the ``rv32`` program
  (:mod:`tessera_riscv.bench_hooks`).  It lives here because it needs a real
  architecture's program and a host holding only that architecture's plugin, and
  its variant names (``riscv-only``) are part of the report's format.

Offered through ``tessera_bench_workloads`` in :mod:`tessera_riscv.plugin`, which
imports this module only when the bench asks; it imports nothing heavy itself.
"""

from __future__ import annotations

from importlib import resources
from pathlib import Path
from typing import Any

from tessera.bench.elfpatch import patch_symbol
from tessera.bench.hosts import architecture_plugin, minimal_host
from tessera.bench.model import BenchFailure, CommandRun, Context, Sample, Variant, Workload
from tessera.bench.runs import expected_sum, require, timed_run
from tessera.bench.targets import Target

ARCH = "rv32im"
DISTRIBUTION = "tessera-riscv"
ITERATIONS = 300_000
ENGINES = ("fast", "step")
ELF_NAME = "sum-rv32im.elf"
RAM = 1 << 20  # the ELF is linked at 0x10000; the stack goes at the top of this
#: iterations of the loop in the ``startup`` run commands: a few thousand instructions
STARTUP_ITERATIONS = 1000


def elf_image() -> bytes:
    """The prebuilt ELF (package data)."""
    return resources.files("tessera_riscv").joinpath("data", "bench", ELF_NAME).read_bytes()


class Rv32Program:
    """The compiled loop for one iteration count: the patched image, and how to check it."""

    def __init__(self, arch: Any, iterations: int, plugin: tuple[Any, str]) -> None:
        if not 1 <= iterations <= 0xFFFF_FFFF:
            raise BenchFailure(f"iterations must be 1..2**32-1, not {iterations}")
        self.arch = arch
        self.iterations = iterations
        #: ``(plugin object, name)`` providing ``arch``, for the hosts other workloads build
        self.plugin = plugin
        self.image = patch_symbol(elf_image(), "iterations", iterations)
        self.expected = expected_sum(iterations)
        self.max_steps = 3 * iterations + 1000

    @classmethod
    def for_context(cls, ctx: Context, iterations: int) -> Rv32Program:
        """The program on the command's ``rv32im`` (:class:`~tessera.bench.model.Skip` without it)."""
        arch, plugin_name, plugin = architecture_plugin(ctx.host, ARCH, DISTRIBUTION)
        return cls(arch, iterations, (plugin, plugin_name))

    def machine(self, host: Any, engine: str | None = None, config: dict[str, Any] | None = None) -> Any:
        """A fresh machine with the program loaded (nothing run yet); ``None``: the default engine;
        ``config``: more configuration keys (a tool's: a cycle model)."""
        from tessera.loaders import load_elf
        from tessera.machine import Machine

        machine = Machine(self.arch, host=host, engine=engine, config={"echo": False, "ram": RAM, **(config or {})})
        load_elf(machine, f"<bench:{ELF_NAME}>", self.image)
        return machine

    def run(self, machine: Any) -> Sample:
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
    order = 20
    targets = (
        Target("rv32-vs-riscemu", "compiled RV32 loop, fast engine, speed vs riscemu",
               ("rv32", "vs_riscemu", "fast"), 20.0, True, "x", aim=40.0),
        Target("startup-run", "tessera run --arch rv32im of a tiny program, whole process",
               ("startup", "derived", "seconds", "run-rv32"), 0.35, False, "s"),
    )

    def prepare(self, ctx: Context) -> list[Variant]:
        self.program = Rv32Program.for_context(ctx, ctx.size(ITERATIONS, quick=ITERATIONS))
        self.host = minimal_host(self.program.plugin)
        self.size = {"iterations": self.program.iterations, "instructions_per_iteration": 3,
                     "elf": ELF_NAME}
        self.check = self.program.check
        return [Variant(engine, self._runner(engine), f"engine={engine}") for engine in ENGINES]

    def _runner(self, engine: str) -> Any:
        def run() -> Sample:
            return self.program.run(self.program.machine(self.host, engine))

        return run

    @classmethod
    def program_for(cls, ctx: Context, iterations: int) -> Rv32Program:
        return Rv32Program.for_context(ctx, iterations)

    @classmethod
    def startup_commands(cls, ctx: Context, directory: Path) -> list[CommandRun]:
        architecture_plugin(ctx.host, ARCH, DISTRIBUTION)   # Skip: no run variants
        program = directory / "sum.elf"
        program.write_bytes(patch_symbol(elf_image(), "iterations", STARTUP_ITERATIONS))
        size = {"iterations": STARTUP_ITERATIONS}
        return [
            CommandRun("run-rv32", ("run", "--arch", ARCH, str(program)),
                       f"tessera run --arch {ARCH} (a {STARTUP_ITERATIONS}-iteration loop)", size=size),
            CommandRun("run-rv32-elf", ("run", str(program)),
                       "tessera run, the architecture chosen from the ELF", size=size),
        ]


def workloads() -> list[type[Workload]]:
    """What the riscv plugin offers ``tessera bench``, in its hook's answer."""
    from tessera_riscv.bench_hooks import IdleHooks
    from tessera_riscv.bench_mark import CompiledMark
    from tessera_riscv.bench_peer import RiscemuLoop

    return [Rv32Loop, CompiledMark, RiscemuLoop, IdleHooks]
