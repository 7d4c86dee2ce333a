"""Helpers for the FP/vector semantics tests (test_fpvec_*.py).

Semantic functions are called directly with decoded-like objects built from words
in the spec's real bit layouts (section 2.3), so the sub-fields the semantics read
from the word (Sz, Mask, RM, N, Cnd) are the ones the decoder would see.  Float
constants come from numpy/struct, an oracle independent of our softfloat module.
"""

from __future__ import annotations

import struct
from typing import Any

import numpy as np
from phoenix_support import (  # noqa: F401 - re-exported for the test_fpvec_* modules
    M32,
    bcc_word,
    cmp_word,
    cmpi_word,
    r1,
    r2,
    r3,
    thread,
    v,
    vget,
    vset,
)
from phoenix_support import run as _run

PC = 0x2000
QNAN32 = 0x7FC0_0000

# R2 funcs, R1 funcs, major opcodes (spec 3.1-3.3)
F = {"veins": 0, "vshuf": 2, "vex": 3, "vsllvi": 32, "vsrlvi": 33, "vsllv": 34, "vsrlv": 35,
     "fadd": 36, "fsub": 37}
F1 = {"vcmprss": 20, "ffinite": 32, "fneg": 35, "frsqrte": 36, "fres": 37, "fsigmoid": 38,
      "itof": 40, "ftoi": 41, "fabs": 42, "fnabs": 43, "fclass": 44, "fman": 45, "fsign": 46,
      "ftrunc": 47}
OP = {"fma": 36, "fms": 37, "fnma": 38, "fnms": 39, "fcmpi": 30, "fcmp": 31, "fbcc": 29}


def run(t: Any, name: str, word: int, value: int | None = None, address: int = PC) -> Any:
    """:func:`phoenix_support.run` at this module's default address."""
    return _run(t, name, word, value, address)


def fcmp_word(n: int, rt: int, ra: int, rb: int, *, sz: int = 2, mask: int = 0) -> int:
    return cmp_word(n, rt, ra, rb, sz=sz, mask=mask, opcode=OP["fcmp"])


def fcmpi_word(n: int, rt: int, ra: int, imm13: int = 0, *, sz: int = 2, mask: int = 0) -> int:
    return cmpi_word(n, rt, ra, imm13, sz=sz, mask=mask, opcode=OP["fcmpi"])


def fbcc_word(cnd: int, ra: int, rb: int, disp: int, *, sz: int = 2) -> int:
    return bcc_word(cnd, ra, rb, disp, sz=sz, opcode=OP["fbcc"])


# ---------------------------------------------------------------------------- floats

def f32(x: float) -> int:
    return struct.unpack("<I", struct.pack("<f", x))[0]


def f16(x: float) -> int:
    return int(np.array([x], dtype=np.float16).view(np.uint16)[0])


def f64(x: float) -> int:
    return struct.unpack("<Q", struct.pack("<d", x))[0]


def val32(bits: int) -> float:
    return struct.unpack("<f", struct.pack("<I", bits & M32))[0]


def val16(bits: int) -> float:
    return float(np.array([bits], dtype=np.uint16).view(np.float16)[0])


def val64(bits: int) -> float:
    return struct.unpack("<d", struct.pack("<Q", bits))[0]
