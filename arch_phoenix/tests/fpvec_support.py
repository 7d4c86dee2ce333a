"""Helpers for the FP/vector semantics tests (test_fpvec_*.py).

Semantic functions are called directly with decoded-like objects built from words
in the spec's real bit layouts (section 2.3), so the sub-fields the semantics read
from the word (Sz, Mask, RM, N, Cnd) are the ones the decoder would see.  Float
constants come from numpy/struct, an oracle independent of our softfloat module.
"""

from __future__ import annotations

import struct
import types
from typing import Any

import numpy as np
from tessera_phoenix import exceptions
from tessera_phoenix.board import build
from tessera_phoenix.fields import FIELDS
from tessera_phoenix.registers import GPR, REG
from tessera_phoenix.semantics import load_all

from tessera.isa import Architecture
from tessera.machine import Machine

OPS = load_all()
ARCH = Architecture("phoenix-fpvec-test", 48, (GPR, REG), FIELDS, (), build=build,
                    take_trap=exceptions.take_trap, illegal=exceptions.illegal,
                    reset_pc=0xFFFD0000, quantum=1, solo_quantum=1024)
PC = 0x2000
M32 = 0xFFFF_FFFF
QNAN32 = 0x7FC0_0000

# R2 funcs, R1 funcs, major opcodes (spec 3.1-3.3)
F = {"veins": 0, "vshuf": 2, "vex": 3, "vsllvi": 32, "vsrlvi": 33, "vsllv": 34, "vsrlv": 35,
     "fadd": 36, "fsub": 37}
F1 = {"vcmprss": 20, "ffinite": 32, "fneg": 35, "frsqrte": 36, "fres": 37, "fsigmoid": 38,
      "itof": 40, "ftoi": 41, "fabs": 42, "fnabs": 43, "fclass": 44, "fman": 45, "fsign": 46,
      "ftrunc": 47}
OP = {"fma": 36, "fms": 37, "fnma": 38, "fnms": 39, "fcmpi": 30, "fcmp": 31, "fbcc": 29}


def thread(lanes: int = 16, **config: Any) -> Any:
    m = Machine(ARCH, host=None, config={"dram": 1 << 20, "lanes": lanes, **config})
    return m.agents[0]


def v(n: int) -> int:
    """7-bit specifier of vector register ``n``."""
    return 0x40 | n


# ---------------------------------------------------------------------------- words

def r2(func: int, rt: int, ra: int, rb: int, *, sz: int = 2, mask: int = 0, rm: int = 0,
       opcode: int = 2) -> int:
    return (mask << 42 | sz << 39 | rm << 34 | (func & 63) << 27 | (rb & 127) << 20
            | (ra & 127) << 13 | (rt & 127) << 6 | opcode)


def r1(func1: int, rt: int, ra: int, **kw: Any) -> int:
    return r2(1, rt, ra, func1 & 63, **kw)


def r3(opcode: int, rt: int, ra: int, rb: int, rc: int, *, sz: int = 2, mask: int = 0,
       rm: int = 0) -> int:
    return (mask << 42 | sz << 39 | rm << 34 | (rc & 127) << 27 | (rb & 127) << 20
            | (ra & 127) << 13 | (rt & 127) << 6 | opcode)


def fcmp_word(n: int, rt: int, ra: int, rb: int, *, sz: int = 2, mask: int = 0) -> int:
    return r2(n & 15, rt, ra, rb, sz=sz, mask=mask, opcode=31)  # bits 32:31 = 0, 30:27 = N


def fcmpi_word(n: int, rt: int, ra: int, imm13: int = 0, *, sz: int = 2, mask: int = 0) -> int:
    return (mask << 42 | sz << 39 | (n & 15) << 33 | (imm13 & 0x1FFF) << 20 | (ra & 127) << 13
            | (rt & 127) << 6 | 30)


def fbcc_word(cnd: int, ra: int, rb: int, disp: int, *, sz: int = 2) -> int:
    return cnd << 45 | sz << 39 | (disp & 0x1FFFF) << 22 | (ra & 63) << 13 | (rb & 63) << 6 | 29


def ins(word: int, value: int | None = None, address: int = PC) -> Any:
    """A decoded-like instruction with the operand attributes of the operand contract."""
    return types.SimpleNamespace(
        word=word, address=address, next=address + 6, value=value,
        rt=(word >> 6) & 127, ra=(word >> 13) & 127, rb=(word >> 20) & 127,
        rc=(word >> 27) & 127, bra=(word >> 13) & 63, brb=(word >> 6) & 63)


def run(t: Any, name: str, word: int, value: int | None = None, address: int = PC) -> Any:
    return OPS[name](t, ins(word, value, address))


# ---------------------------------------------------------------------------- registers

def vset(t: Any, n: int, elements: list[int], w: int = 32) -> None:
    """Set vector register ``n`` from W-bit elements (missing elements = 0)."""
    bits = 0
    for i, x in enumerate(elements):
        bits |= (x & ((1 << w) - 1)) << (w * i)
    for lane in range(t.lanes):
        t.vr[n][lane] = (bits >> (32 * lane)) & M32


def vget(t: Any, n: int, w: int = 32) -> list[int]:
    bits = 0
    for lane in range(t.lanes):
        bits |= int(t.vr[n][lane]) << (32 * lane)
    return [(bits >> (w * i)) & ((1 << w) - 1) for i in range(t.lanes * 32 // w)]


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
