"""Bundled example kernels (``tessera demo --arch tensix``).

``datacopy.s``, ``eltwise_add.s``, ``matmul.s`` (Blackhole; ``*_wh.s`` for Wormhole B0) —
the whole coprocessor: three threads, unpackers, matrix unit, packers, MOP and replay;
see :mod:`.coprocessor`.

``exp_recip.s`` (Blackhole) — an SFPU kernel in direct mode: it writes x = 0.5 into a
4×8 slice of Dest, then evaluates exp(x) by a Horner chain of SFPMADs and 1/x by Newton
steps, and stores both back (FP32).  The check decodes Dest and compares with the same
sequence evaluated in double precision.  ``exp_wh.s`` is the Wormhole B0 variant (exp
only, AddrMod 3).
"""

from __future__ import annotations

from importlib import resources
from typing import Any

import numpy as np

from tessera.isa import Example
from tessera_tensix.examples.coprocessor import EXAMPLES as COPROCESSOR
from tessera_tensix.examples.coprocessor import EXAMPLES_WH as COPROCESSOR_WH

#: The BF16 constants the kernel loads with SFPLOADI (value of each 16-bit immediate).
C24, C6, HALF, R0, TWO = (float(np.array([b << 16], dtype=np.uint32).view(np.float32)[0])
                          for b in (0x3D2B, 0x3E2A, 0x3F00, 0x403A, 0x4000))


def _source(name: str) -> str:
    return resources.files(__name__).joinpath(name).read_text(encoding="utf-8")


def dest_fp32(dest: Any, row: int, col: int) -> float:
    """The FP32 value of Dst32b[row][col] (no remap, no swizzle; rows < 8)."""
    hi, lo = int(dest.bits[row, col]), int(dest.bits[row + 8, col])
    bf16 = (hi & 0x8000) | ((hi & 0xFF) << 7) | ((hi >> 8) & 0x7F)
    return float(np.array([(bf16 << 16) | lo], dtype=np.uint32).view(np.float32)[0])


def expected(x: float = 0.5) -> tuple[float, float]:
    e = 1 + x * (1 + x * (HALF + x * (C6 + x * C24)))
    r = R0 - TWO * x
    for _ in range(2):
        r = r * (TWO - x * r)
    return e, r


def _check(machine: Any, result: Any, *, recip: bool) -> str | None:
    if result.exit_code != 0:
        return f"exit status {result.exit_code}"
    dest = machine.ext["tensix"].dest
    want_e, want_r = expected()
    for row in range(4):
        for lane in range(8):
            got_e = dest_fp32(dest, row, 2 * lane)
            if abs(got_e - want_e) > 1e-6 * want_e:
                return f"Dest[{row}][{2 * lane}] = {got_e!r}, expected exp(0.5) ~ {want_e!r}"
            got_r = dest_fp32(dest, row, 2 * lane + 1)
            if recip and abs(got_r - want_r) > 1e-6 * want_r:
                return f"Dest[{row}][{2 * lane + 1}] = {got_r!r}, expected 1/0.5 ~ {want_r!r}"
    return None


def check_exp_recip(machine: Any, result: Any) -> str | None:
    return _check(machine, result, recip=True)


def check_exp(machine: Any, result: Any) -> str | None:
    return _check(machine, result, recip=False)


EXP_RECIP = Example(
    name="exp-recip",
    description="SFPU kernel: exp(x) by a SFPMAD Horner chain and 1/x by Newton steps over a Dest slice",
    source=_source("exp_recip.s"),
    max_steps=1000,
    check=check_exp_recip,
)

EXP_WH = Example(
    name="exp",
    description="SFPU kernel (Wormhole B0): exp(x) by a SFPMAD Horner chain over a Dest slice",
    source=_source("exp_wh.s"),
    max_steps=1000,
    check=check_exp,
)

EXAMPLES = (EXP_RECIP, *COPROCESSOR)
EXAMPLES_WH = (EXP_WH, *COPROCESSOR_WH)


def for_chip(chip: str) -> tuple[Example, ...]:
    """The examples of a chip (``bh``: exp and 1/x, datacopy, eltwise add, matmul; ``wh``:
    exp, with Wormhole's AddrMod, and the Wormhole versions of the other three)."""
    return EXAMPLES if chip == "bh" else EXAMPLES_WH
