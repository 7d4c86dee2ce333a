"""Benchmark: instructions/s of Tessera's RV32IM hart against riscemu, in one process run.

Both run the same RV32 sum loop (``add``/``addi``/``bne``, three instructions per
iteration, then the exit system call):

* ``tessera``  — the loop assembled by Tessera's assembler from the ``rv32im``
  encoding table, run by a machine whose plugin host has only the riscv plugin
  (so every hook family is idle, as in a normal ``tessera run``);
* ``riscemu``  — the same loop as riscemu assembly text, run by riscemu's
  user-mode CPU (``pip install riscemu``).

Each variant runs ``--repeat`` times, interleaved, and the best time is kept. The
checked result (the loop's sum in a0) must agree.  This is a benchmark, not a test:
``python benchmarks/riscv_vs_riscemu.py [--iterations N] [--repeat K] [--quick] [--json]``.
"""

from __future__ import annotations

import argparse
import io
import json
import os
import platform
import sys
import time
from typing import Any

CODE = 0x1_0000


def loop_source(iterations: int, *, riscemu: bool) -> str:
    """The sum loop: a0 = iterations + (iterations - 1) + ... + 1 (mod 2**32), then exit."""
    hi = (iterations + 0x800) >> 12
    lo = iterations - (hi << 12)
    head = ".text\n.globl main\nmain:\n" if riscemu else ""
    return head + "\n".join([
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


def expected_sum(iterations: int) -> int:
    return (iterations * (iterations + 1) // 2) & 0xFFFF_FFFF


def run_tessera(iterations: int) -> tuple[float, int, int]:
    import tessera_riscv
    import tessera_riscv.plugin
    from tessera.isa.asm import assemble
    from tessera.machine import Machine
    from tessera.plugins import PluginHost

    host = PluginHost(load_entry_points=False, use_environment=False)
    host.register(tessera_riscv.plugin, "riscv")
    machine = Machine(tessera_riscv.RV32IM, host=host, config={"echo": False, "ram": 1 << 20})
    program = assemble(machine.arch, loop_source(iterations, riscemu=False), file="<sum>", base=CODE)
    for address, blob in program.segments:
        machine.space.write_bytes(address, bytes(blob))
    machine.set_entry(CODE)
    hart = machine.agent("hart0")
    start = time.perf_counter()
    result = machine.run(max_steps=3 * iterations + 100)
    seconds = time.perf_counter() - start
    assert result.reason == "halted", result
    return seconds, result.steps, hart.x[10]


def run_riscemu(iterations: int) -> tuple[float, int, int]:
    from riscemu.config import RunConfig
    from riscemu.instructions import InstructionSetDict
    from riscemu.riscemu_main import RiscemuMain, RiscemuSource

    main = RiscemuMain(RunConfig(verbosity=0, ignore_exit_code=True, debug_on_exception=False))
    main.selected_ins_sets = [InstructionSetDict[name] for name in ("RV32I", "RV32M")]
    main.register_all_program_loaders()
    main.input_files = [RiscemuSource("sum.asm", io.StringIO(loop_source(iterations, riscemu=True)))]
    main.instantiate_cpu()
    main.load_programs()
    cpu = main.cpu
    start = time.perf_counter()
    cpu.launch(False)
    seconds = time.perf_counter() - start
    return seconds, cpu.cycle, int(cpu.regs.get("a0").unsigned())


RUNNERS = {"tessera": run_tessera, "riscemu": run_riscemu}


def machine_description() -> str:
    """CPU model and core count (from /proc/cpuinfo where there is one)."""
    model = platform.processor() or platform.machine()
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    model = line.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    return f"{model}, {os.cpu_count()} cores, {platform.system()}"


def measure(iterations: int, repeat: int) -> dict[str, Any]:
    best: dict[str, tuple[float, int]] = {}
    for _ in range(repeat):
        for name, runner in RUNNERS.items():       # interleaved: noise spreads over both
            seconds, steps, a0 = runner(iterations)
            if a0 != expected_sum(iterations):
                raise SystemExit(f"{name}: wrong sum {a0:#x}, expected {expected_sum(iterations):#x}")
            if name not in best or seconds < best[name][0]:
                best[name] = (seconds, steps)
    rates = {name: steps / seconds for name, (seconds, steps) in best.items()}
    return {
        "benchmark": "riscv_vs_riscemu",
        "iterations": iterations,
        "repeat": repeat,
        "python": platform.python_version(),
        "machine": machine_description(),
        "variants": {name: {"seconds": best[name][0], "instructions": best[name][1],
                            "instructions_per_second": rates[name]} for name in best},
        "ratio_tessera_over_riscemu": rates["tessera"] / rates["riscemu"],
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--iterations", type=int, default=None,
                        help="loop iterations per run (default 300000; 30000 with --quick)")
    parser.add_argument("--repeat", type=int, default=None, help="runs per variant (default 3; 1 with --quick)")
    parser.add_argument("--quick", action="store_true", help="a short run (a smoke test of the script)")
    parser.add_argument("--json", action="store_true", help="print the results as JSON")
    args = parser.parse_args(argv)
    iterations = args.iterations or (30_000 if args.quick else 300_000)
    repeat = args.repeat or (1 if args.quick else 3)
    if not 1 <= iterations < 0x7FFF_F800:
        parser.error("--iterations must be between 1 and 2**31 - 2049")
    try:
        import riscemu  # noqa: F401
    except ImportError:
        print("riscemu is not installed: pip install riscemu", file=sys.stderr)
        return 2
    report = measure(iterations, repeat)
    if args.json:
        print(json.dumps(report, indent=2))
        return 0
    print(f"RV32 sum loop, {iterations} iterations (3 instructions each), best of {repeat}; "
          f"Python {report['python']}")
    print(f"{'variant':<10} {'instructions':>13} {'seconds':>9} {'M instr/s':>10}")
    for name, v in report["variants"].items():
        print(f"{name:<10} {v['instructions']:>13} {v['seconds']:>9.3f} "
              f"{v['instructions_per_second'] / 1e6:>10.3f}")
    print(f"tessera / riscemu: {report['ratio_tessera_over_riscemu']:.2f}x")
    return 0


if __name__ == "__main__":
    sys.exit(main())
