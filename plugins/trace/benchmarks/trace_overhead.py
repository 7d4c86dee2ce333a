"""Benchmark: what tracing costs, per format, on the RV32 sum loop.

The loop of ``benchmarks/riscv_vs_riscemu.py`` (``add``/``addi``/``bne``, three
instructions per iteration) runs untraced and then with each trace format writing to
a temporary file; the best of ``--repeat`` runs is kept.  Reported: seconds,
nanoseconds per retired instruction, and the traced/untraced ratio (the goal for
``text`` is at most 5x).  This is a benchmark, not a test:
``python plugins/trace/benchmarks/trace_overhead.py [--iterations N] [--repeat K]
[--engine fast|step] [--json]``.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import sys
import tempfile
import time
from typing import Any

CODE = 0x1_0000
FORMATS = ("text", "jsonl", "perfetto", "profile")


def loop_source(iterations: int) -> str:
    hi = (iterations + 0x800) >> 12
    lo = iterations - (hi << 12)
    return "\n".join(["    addi a0, zero, 0", f"    lui a1, {hi}", f"    addi a1, a1, {lo}", "loop:",
                      "    add a0, a0, a1", "    addi a1, a1, -1", "    bne a1, zero, loop",
                      "    addi a7, zero, 93", "    ecall", ""])


def run_once(iterations: int, engine: str, fmt: str | None, out_dir: str) -> tuple[float, int]:
    import tessera_riscv
    import tessera_riscv.plugin
    import tessera_trace
    from tessera.isa.asm import assemble
    from tessera.machine import Machine
    from tessera.plugins import PluginHost

    host = PluginHost(load_entry_points=False, use_environment=False)
    host.register(tessera_riscv.plugin, "riscv")
    host.register(tessera_trace.plugin, "trace")           # installed in both variants
    machine = Machine(tessera_riscv.RV32IM, host=host, config={"echo": False, "ram": 1 << 20},
                      engine=engine)
    program = assemble(machine.arch, loop_source(iterations), file="<sum>", base=CODE)
    for address, blob in program.segments:
        machine.space.write_bytes(address, bytes(blob))
    machine.set_entry(CODE)
    tracer = None
    if fmt is not None:
        tracer = tessera_trace.attach(machine, fmt, os.path.join(out_dir, f"trace.{fmt}"))
    start = time.perf_counter()
    result = machine.run(max_steps=3 * iterations + 100)
    if tracer is not None:
        tracer.close()                                     # writing the tail is part of the cost
    seconds = time.perf_counter() - start
    assert result.reason == "halted", result
    expected = (iterations * (iterations + 1) // 2) & 0xFFFF_FFFF
    assert machine.agent("hart0").x[10] == expected
    return seconds, result.steps


def measure(iterations: int, repeat: int, engine: str) -> dict[str, Any]:
    best: dict[str, tuple[float, int]] = {}
    with tempfile.TemporaryDirectory() as out_dir:
        for _ in range(repeat):
            for fmt in (None, *FORMATS):                  # interleaved: noise spreads over all
                seconds, steps = run_once(iterations, engine, fmt, out_dir)
                name = fmt or "untraced"
                if name not in best or seconds < best[name][0]:
                    best[name] = (seconds, steps)
    base = best["untraced"][0]
    return {
        "benchmark": "trace_overhead", "iterations": iterations, "repeat": repeat, "engine": engine,
        "python": platform.python_version(),
        "variants": {name: {"seconds": s, "instructions": n, "ns_per_instruction": 1e9 * s / n,
                            "ratio": s / base} for name, (s, n) in best.items()},
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--iterations", type=int, default=200_000)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--engine", choices=("fast", "step"), default="step")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    report = measure(args.iterations, args.repeat, args.engine)
    if args.json:
        print(json.dumps(report, indent=2))
        return 0
    print(f"RV32 sum loop, {args.iterations} iterations, engine={args.engine}, best of {args.repeat}")
    print(f"{'variant':<10} {'seconds':>9} {'ns/instr':>9} {'ratio':>7}")
    for name, v in report["variants"].items():
        print(f"{name:<10} {v['seconds']:>9.3f} {v['ns_per_instruction']:>9.0f} {v['ratio']:>6.2f}x")
    return 0


if __name__ == "__main__":
    sys.exit(main())
