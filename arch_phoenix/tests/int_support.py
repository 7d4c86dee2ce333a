"""Helpers for the integer-semantics tests (test_int_*.py): machines and real bit layouts.

The semantic functions are called directly with decoded-like objects, so the tests
do not depend on the encoding table; the words are built with the spec's layouts
(section 2.3) so word-derived sub-fields (N, F, Sz, Mask, Cnd, Lk, bit 39) are the
ones the real decoder would see.
"""

from __future__ import annotations

import types
from typing import Any

from tessera.isa import Architecture
from tessera.machine import Machine

from tessera_phoenix import exceptions
from tessera_phoenix.board import build
from tessera_phoenix.fields import FIELDS
from tessera_phoenix.registers import GPR, REG
from tessera_phoenix.semantics import load_all

OPS = load_all()
ARCH = Architecture("phoenix-int-test", 48, (GPR, REG), FIELDS, (), build=build,
                    take_trap=exceptions.take_trap, illegal=exceptions.illegal,
                    reset_pc=0xFFFD0000, quantum=1, solo_quantum=1024)
PC = 0x1000
M32 = 0xFFFF_FFFF


def machine(**config: Any) -> Machine:
    return Machine(ARCH, host=None, config={"dram": 1 << 20, **config})


def thread(**config: Any) -> Any:
    return machine(**config).agents[0]


def v(n: int) -> int:
    """The 7-bit specifier of vector register ``n``."""
    return 0x40 | n


# ---------------------------------------------------------------------------- words


def r2(func: int, rt: int, ra: int, rb: int, *, sz: int = 2, mask: int = 0, f: int = 0,
       opcode: int = 2) -> int:
    return (mask << 42 | sz << 39 | f << 33 | (func & 63) << 27 | (rb & 127) << 20
            | (ra & 127) << 13 | (rt & 127) << 6 | opcode)


def r1(func1: int, rt: int, ra: int, **kw: Any) -> int:
    return r2(1, rt, ra, func1 & 63, **kw)


def ri(opcode: int, rt: int, ra: int, imm: int, *, sz: int = 2, mask: int = 0) -> int:
    return mask << 42 | sz << 39 | (imm & 0x7FFFF) << 20 | (ra & 127) << 13 | (rt & 127) << 6 | opcode


def cmp_word(n: int, rt: int, ra: int, rb: int, **kw: Any) -> int:
    return r2(n & 15, rt, ra, rb, opcode=15, **kw)  # bits 32:31 = 0, 30:27 = N


def cmpi_word(n: int, rt: int, ra: int, imm13: int, *, sz: int = 2, mask: int = 0) -> int:
    return (mask << 42 | sz << 39 | (n & 15) << 33 | (imm13 & 0x1FFF) << 20 | (ra & 127) << 13
            | (rt & 127) << 6 | 14)


def bcc_word(cnd: int, ra: int, rb: int, disp: int, *, sz: int = 2) -> int:
    return cnd << 45 | sz << 39 | (disp & 0x1FFFF) << 22 | (ra & 63) << 13 | (rb & 63) << 6 | 28


def j_word(opcode: int, target: int, lk: int = 0) -> int:
    return (target & ((1 << 40) - 1)) << 8 | lk << 6 | opcode


def ls_word(opcode: int, rt: int, ra: int, disp: int, *, sz: int = 2, mask: int = 0) -> int:
    return ri(opcode, rt, ra, disp, sz=sz, mask=mask)


def ins(word: int, value: int | None = None, address: int = PC, **extra: Any) -> Any:
    """A decoded-like instruction: 7-bit specifiers straight from the word, plus ``value``."""
    fields = {"rt": (word >> 6) & 127, "ra": (word >> 13) & 127, "rb": (word >> 20) & 127}
    fields.update(extra)
    return types.SimpleNamespace(word=word, address=address, next=address + 6, value=value,
                                 **fields)


def run(t: Any, name: str, word: int, value: int | None = None, address: int = PC,
        **extra: Any) -> Any:
    return OPS[name](t, ins(word, value, address, **extra))


def vset(t: Any, n: int, values: list[int]) -> None:
    """Set vector register ``n`` lane by lane (missing lanes = 0)."""
    t.vr[n][:] = 0
    for i, x in enumerate(values):
        t.vr[n][i] = x & M32


def vget(t: Any, n: int) -> list[int]:
    return [int(x) for x in t.vr[n]]


# R2 funcs / R1 funcs / major opcodes used by the tests (spec 3.1–3.3)
F = {"add": 4, "sub": 5, "mul": 6, "and": 8, "or": 9, "xor": 10, "andc": 11, "nand": 12,
     "nor": 13, "xnor": 14, "orc": 15, "remask": 22, "slli": 24, "srli": 25, "srai": 26,
     "sll": 27, "srl": 28, "sra": 29, "stx": 40, "cachex": 41, "stcrx": 42, "ldx": 44,
     "ldux": 45, "ldsrx": 46}
F1 = {"cntlz": 0, "cntpop": 2, "mcmprss": 17, "sextb": 56, "sextw": 57}
OP = {"addi": 4, "subfi": 5, "muli": 6, "andi": 8, "ori": 9, "xori": 10, "nop": 11,
      "jmp": 24, "bra": 25, "ret": 26, "bcc": 28, "store": 40, "cache": 41, "stcr": 42,
      "load": 44, "loadu": 45, "ldsr": 46}
