"""Workload ``riscemu``: the same RV32 sum loop in riscemu, a pure-Python RISC-V emulator.

riscemu (``pip install riscemu``, in ``requirements-bench.txt``) is the reference
the scalar workloads' speed is stated against (the core's runner compares every
instruction-set workload with the workload named :data:`tessera.bench.PEER`): it
runs in this same process, on the same interpreter, so the ratio says how much
faster Tessera's engine is and not how fast this machine is.  The loop is written as
assembly text (riscemu assembles it itself) with the same three instructions per
iteration as ``data/bench/sum.c`` compiles to; ``a0`` must hold the sum.  Without
riscemu the workload is skipped and every ratio to it is ``null``.  The riscv plugin
offers it because the peer is a RISC-V emulator running a RISC-V loop.
"""

from __future__ import annotations

import contextlib
import io
import time
from typing import Any

from tessera.bench.model import BenchFailure, Context, Sample, Skip, Variant, Workload
from tessera.bench.runs import expected_sum, require

ITERATIONS = 100_000  # riscemu is ~10x slower than Tessera: a third of rv32's work is plenty
INSTALL = "pip install -r requirements-bench.txt (or: pip install riscemu)"


def riscemu_version() -> str | None:
    """The installed riscemu's version, or ``None``."""
    import importlib.metadata as md

    try:
        return md.version("riscemu")
    except md.PackageNotFoundError:
        return None


def loop_source(iterations: int) -> str:
    """The sum loop in riscemu's assembly dialect, ending in the exit system call."""
    hi = (iterations + 0x800) >> 12
    lo = iterations - (hi << 12)
    return "\n".join([
        ".text", ".globl main", "main:",
        "    addi a0, zero, 0",
        f"    lui a1, {hi}",
        f"    addi a1, a1, {lo}",
        "loop:",
        "    add a0, a0, a1",
        "    addi a1, a1, -1",
        "    bne a1, zero, loop",
        "    addi a7, zero, 93",
        "    ecall",
        "",
    ])


class RiscemuLoop(Workload):
    name = "riscemu"    # = tessera.bench.PEER: the runner compares with this workload
    title = "riscemu RV32 loop (peer)"
    order = 30

    def prepare(self, ctx: Context) -> list[Variant]:
        if riscemu_version() is None:
            raise Skip(f"riscemu is not installed, so ratios to it are null: {INSTALL}")
        try:
            import riscemu  # noqa: F401 - imported only to see whether it imports
        except Exception as exc:  # noqa: BLE001 - a broken peer install is a skip, not a failure
            raise Skip(f"riscemu does not import ({type(exc).__name__}: {exc}): {INSTALL}") from None
        self.iterations = ctx.size(ITERATIONS, quick=30_000)
        if self.iterations >= 0x7FFF_F800:
            raise BenchFailure("too many iterations for the riscemu loop's lui/addi pair")
        self.size = {"iterations": self.iterations, "instructions_per_iteration": 3}
        self.check = {"what": "a0 == sum(1..iterations) mod 2**32", "expected": expected_sum(self.iterations)}
        return [Variant("riscemu", self._run, f"riscemu {riscemu_version()}, RV32I+RV32M, user mode")]

    def _run(self) -> Sample:
        cpu = self._cpu()
        out = io.StringIO()
        start = time.perf_counter()
        with contextlib.redirect_stdout(out):  # riscemu may announce the exit: keep --json clean
            try:
                cpu.launch(False)
            except Exception as exc:
                raise BenchFailure(f"riscemu raised {type(exc).__name__}: {exc}") from exc
        seconds = time.perf_counter() - start
        require("a0", int(cpu.regs.get("a0").unsigned()), self.check["expected"])
        return Sample(seconds, int(cpu.cycle))

    def _cpu(self) -> Any:
        from riscemu.config import RunConfig
        from riscemu.instructions import InstructionSetDict
        from riscemu.riscemu_main import RiscemuMain, RiscemuSource

        main = RiscemuMain(RunConfig(verbosity=0, ignore_exit_code=True, debug_on_exception=False))
        main.selected_ins_sets = [InstructionSetDict[name] for name in ("RV32I", "RV32M")]
        main.register_all_program_loaders()
        main.input_files = [RiscemuSource("sum.asm", io.StringIO(loop_source(self.iterations)))]
        with contextlib.redirect_stdout(io.StringIO()):
            main.instantiate_cpu()
            main.load_programs()
        return main.cpu
