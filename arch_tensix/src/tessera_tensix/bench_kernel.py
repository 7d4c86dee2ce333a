"""The ``sfpu`` workload's kernel: its source, its float64 reference, Dest's layout, the numpy floor.

Imported by :class:`tessera_tensix.bench.SfpuStream` when it prepares (this module
needs numpy, which listing the workloads must not import).  The workload's three
variants run in Tensix direct mode (``--arch tensix``) on one machine each that is
rewound and rerun ``runs`` times per sample:

* ``kernel`` — a realistic SFPU kernel over one 32×32 FP32 tile of Dest (32 slices
  of 32 lanes): per slice SFPLOAD, exp(x) by a Horner chain (SFPMAD, SFPMUL,
  SFPADDI), 1/x by a seed and two Newton steps, their product, SFPSTORE — 13
  instructions a slice, 421 with the constants and END.  Its results are checked
  against a float64 evaluation of the same sequence (relative error < 1e-5);
* ``sfpnop`` — as many SFPNOPs: the engine's dispatch cost with empty semantics;
* ``numpy-floor`` — no emulator: per instruction, the least numpy work a 32-lane
  FP32 multiply-add needs (``multiply``, ``add``, a masked ``copyto`` on
  preallocated arrays).  An emulator that computes lanes with numpy cannot beat it.
"""

from __future__ import annotations

import time
from typing import Any

import numpy as np

from tessera.bench.model import BenchFailure
from tessera.errors import TesseraError
from tessera.machine import Machine

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
    """The kernel's sequence evaluated in float64 (what its FP32 results must approach)."""
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
    """The FP32 values of Dst32b rows 0..63 (the inverse of :func:`dest_bits`)."""
    out = np.empty((64, 16), dtype=np.uint32)
    for r in range(64):
        p = ((r >> 3) << 4) | (r & 7)
        h = bits[p].astype(np.uint32)
        b = (h & 0x8000) | ((h & 0xFF) << 7) | ((h >> 8) & 0x7F)
        out[r] = (b << 16) | bits[p + 8]
    return out.view(np.float32)


def max_relative_error(bits: np.ndarray, want: np.ndarray) -> float:
    """The largest relative error of the tile in Dest ``bits`` against the float64 ``want``."""
    got = read_tile(bits)
    return float(np.max(np.abs(got - want) / want))


class DirectMode:
    """A Tensix machine with one kernel loaded, rerun from the start on each call."""

    def __init__(self, arch: Any, host: Any, source: str) -> None:
        from tessera.engine import RUNNABLE
        from tessera.isa.asm import assemble

        self.machine = Machine(arch, host=host)
        _start, blob = assemble(arch, source).image()
        self.machine.space.write_bytes(0, blob)
        self.thread: Any = self.machine.agents[0]
        self.runnable = RUNNABLE
        self.instructions = len(blob) // arch.word_bytes

    @property
    def dest(self) -> np.ndarray:
        """Dest's cells: the board's, declared as the machine extension ``tensix``."""
        bits: np.ndarray = self.machine.ext["tensix"].dest.bits
        return bits

    def run(self, dest: np.ndarray | None) -> tuple[float, int]:
        if dest is not None:
            self.dest[:] = dest
        self.thread.pc = 0
        self.thread.status = self.runnable
        start = time.perf_counter()
        try:
            result = self.machine.run(max_steps=100_000)
        except TesseraError as exc:
            raise BenchFailure(f"the kernel run ended in an error: {exc}") from exc
        seconds = time.perf_counter() - start
        if result.reason != "halted" or result.exit_code != 0:
            raise BenchFailure(f"the kernel did not end cleanly: {result.reason} ({result.detail})")
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
