"""Benchmark: ns per 32-lane SFPU instruction in Tensix direct mode, beside the numpy floor.

Variants, measured in one process run and interleaved (the best of ``--repeat`` is kept):

* ``kernel``  — a realistic SFPU kernel over one 32×32 FP32 tile of Dest (32 slices of
  4 rows × 8 columns): per slice SFPLOAD, exp(x) by a Horner chain (SFPMAD, SFPMUL,
  SFPADDI), 1/x by a seed and two Newton steps (SFPMAD with a negated product, SFPMUL),
  their product, SFPSTORE — 13 instructions, 420 in all with the constants and END;
* ``sfpnop``  — the same number of SFPNOPs: the engine's dispatch cost per instruction
  with semantics that do nothing;
* ``numpy-floor`` — no emulator: per instruction, the least numpy work a 32-lane FP32
  multiply-add needs (``multiply``, ``add``, a masked ``copyto``: three ufunc calls on
  preallocated arrays).

The kernel's results are checked against a float64 evaluation of the same sequence.
This is a benchmark, not a test:
``python benchmarks/tensix_sfpu.py [--runs N] [--repeat K] [--quick] [--json]``.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import sys
import time
from typing import Any

import numpy as np

SLICES = 32                     # a 32x32 FP32 tile = 32 SFPLOAD slices of 32 lanes
CONSTANTS = {"L4": 0x3D2B, "L5": 0x3E2A, "L6": 0x4000, "L7": 0x403A}   # 1/24, 1/6, 2, 2.90625 (BF16)


def kernel_source() -> str:
    lines = [f"sfploadi {reg},{imm},0" for reg, imm in CONSTANTS.items()]
    for s in range(SLICES):
        a = 2 * s                                   # Dst32b rows 4*(s//2).., even/odd columns
        lines += [
            f"sfpload L0,{a},3,7",                   # x
            "sfpmad L1,L0,L4,L5,0",                  # x/24 + 1/6
            "sfpmul L1,L1,L0,L9,0",                  # * x
            "sfpaddi L1,16128,0",                    # + 1/2
            "sfpmad L1,L1,L0,L10,0",                 # * x + 1
            "sfpmad L1,L1,L0,L10,0",                 # * x + 1        = e(x)
            "sfpmad L3,L0,L6,L7,1",                  # r = 2.90625 - 2x
            "sfpmad L2,L0,L3,L6,1",                  # t = 2 - x r
            "sfpmul L3,L3,L2,L9,0",                  # r = r t
            "sfpmad L2,L0,L3,L6,1",
            "sfpmul L3,L3,L2,L9,0",
            "sfpmul L1,L1,L3,L9,0",                  # e(x) / x
            f"sfpstore {a},L1,3,7",
        ]
    lines.append("end")
    return "\n".join(lines) + "\n"


def _bf16(imm: int) -> float:
    return float(np.array([imm << 16], dtype=np.uint32).view(np.float32)[0])


def reference(x: np.ndarray) -> np.ndarray:
    c24, c6, two, seed = (_bf16(CONSTANTS[r]) for r in ("L4", "L5", "L6", "L7"))
    x = x.astype(np.float64)
    e = 1 + x * (1 + x * (0.5 + x * (c6 + x * c24)))
    r = seed - two * x
    for _ in range(2):
        r = r * (two - x * r)
    return e * r


def tile_values() -> np.ndarray:
    """x in [0.5, 1): one value per Dst32b cell of the tile (rows 0..63, 16 columns)."""
    return (0.5 + (np.arange(64 * 16) % 509) / 1024).astype(np.float32).reshape(64, 16)


def dest_bits(x: np.ndarray) -> np.ndarray:
    """Dest (1024x16 uint16) holding ``x`` as FP32 in Dst32b rows 0..63 (no remap/swizzle)."""
    bits = np.zeros((1024, 16), dtype=np.uint16)
    u = x.view(np.uint32)
    hi = u >> 16
    cell = ((hi & 0x8000) | ((hi & 0x7F) << 8) | ((hi >> 7) & 0xFF)).astype(np.uint16)
    for r in range(64):
        p = ((r >> 3) << 4) | (r & 7)               # Adj32: high halves, low halves 8 rows on
        bits[p] = cell[r]
        bits[p + 8] = (u[r] & 0xFFFF).astype(np.uint16)
    return bits


def read_tile(bits: np.ndarray) -> np.ndarray:
    out = np.empty((64, 16), dtype=np.uint32)
    for r in range(64):
        p = ((r >> 3) << 4) | (r & 7)
        h = bits[p].astype(np.uint32)
        b = (h & 0x8000) | ((h & 0xFF) << 7) | ((h >> 8) & 0x7F)
        out[r] = (b << 16) | bits[p + 8]
    return out.view(np.float32)


class DirectMode:
    """A Tensix machine with one kernel loaded, rerun from the start on each call."""

    def __init__(self, source: str) -> None:
        import tessera_tensix.plugin
        from tessera.engine.agent import RUNNABLE
        from tessera.isa.asm import assemble
        from tessera.machine import Machine
        from tessera.plugins import PluginHost
        from tessera_tensix.arch import TENSIX_BH

        host = PluginHost(load_entry_points=False, use_environment=False)
        host.register(tessera_tensix.plugin, "tensix")
        self.machine = Machine(TENSIX_BH, host=host)
        _start, blob = assemble(TENSIX_BH, source).image()
        self.machine.space.write_bytes(0, blob)
        self.thread = self.machine.agents[0]
        self.runnable = RUNNABLE
        self.instructions = len(blob) // 4

    def run(self, dest: np.ndarray | None) -> tuple[float, int]:
        if dest is not None:
            self.machine.tensix.dest.bits[:] = dest
        self.thread.pc = 0
        self.thread.status = self.runnable
        start = time.perf_counter()
        result = self.machine.run(max_steps=100_000)
        seconds = time.perf_counter() - start
        if result.reason != "halted" or result.exit_code != 0:
            raise SystemExit(f"kernel did not end cleanly: {result}")
        return seconds, result.steps


def numpy_floor(count: int) -> tuple[float, int]:
    a = np.full(32, 0.75, dtype=np.float32)
    b = np.full(32, 1.25, dtype=np.float32)
    t = np.empty(32, dtype=np.float32)
    d = np.empty(32, dtype=np.float32)
    en = np.ones(32, dtype=bool)
    multiply, add, copyto = np.multiply, np.add, np.copyto
    start = time.perf_counter()
    for _ in range(count):
        multiply(a, b, out=t)
        add(t, a, out=t)
        copyto(d, t, where=en)
    return time.perf_counter() - start, count


def machine_description() -> str:
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


def measure(runs: int, repeat: int) -> dict[str, Any]:
    x = tile_values()
    dest = dest_bits(x)
    kernel = DirectMode(kernel_source())
    nops = DirectMode("sfpnop\n" * (kernel.instructions - 1) + "end\n")
    kernel.run(dest)                                   # warm the decode caches and check once
    got = read_tile(kernel.machine.tensix.dest.bits)
    want = reference(x)
    err = float(np.max(np.abs(got - want) / want))
    if not err < 1e-5:
        raise SystemExit(f"kernel results are wrong: max relative error {err:.3g}")
    nops.run(None)
    best: dict[str, tuple[float, int]] = {}
    for _ in range(repeat):
        for name in ("kernel", "sfpnop", "numpy-floor"):
            seconds = steps = 0
            for _ in range(runs):
                if name == "kernel":
                    s, n = kernel.run(dest)
                elif name == "sfpnop":
                    s, n = nops.run(None)
                else:
                    s, n = numpy_floor(kernel.instructions)
                seconds += s
                steps += n
            if name not in best or seconds / steps < best[name][0] / best[name][1]:
                best[name] = (seconds, steps)
    ns = {name: 1e9 * s / n for name, (s, n) in best.items()}
    return {
        "benchmark": "tensix_sfpu",
        "kernel_instructions": kernel.instructions,
        "runs": runs,
        "repeat": repeat,
        "python": platform.python_version(),
        "numpy": np.__version__,
        "machine": machine_description(),
        "max_relative_error": err,
        "ns_per_instruction": ns,
        "kernel_over_floor": ns["kernel"] / ns["numpy-floor"],
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=None, help="kernel runs per measurement (default 50; 5 with --quick)")
    parser.add_argument("--repeat", type=int, default=None, help="measurements per variant (default 5; 1 with --quick)")
    parser.add_argument("--quick", action="store_true", help="a short run (a smoke test of the script)")
    parser.add_argument("--json", action="store_true", help="print the results as JSON")
    args = parser.parse_args(argv)
    runs = args.runs or (5 if args.quick else 50)
    repeat = args.repeat or (1 if args.quick else 5)
    if runs < 1 or repeat < 1:
        parser.error("--runs and --repeat must be at least 1")
    report = measure(runs, repeat)
    if args.json:
        print(json.dumps(report, indent=2))
        return 0
    print(f"Tensix direct mode, exp/recip kernel over a 32x32 FP32 tile "
          f"({report['kernel_instructions']} instructions), {runs} runs, best of {repeat}; "
          f"Python {report['python']}, numpy {report['numpy']}")
    print(f"{'variant':<12} {'ns/instruction':>15}")
    for name, value in report["ns_per_instruction"].items():
        print(f"{name:<12} {value:>15.0f}")
    print(f"kernel / numpy floor: {report['kernel_over_floor']:.1f}x")
    return 0


if __name__ == "__main__":
    sys.exit(main())
