"""Zbb: basic bit manipulation — logic with negate, counts, min/max, extension, rotates, bytes.

``zext.h``, ``rori`` and ``rev8`` have different encodings on RV32 and RV64 (one
row each); the ``*w`` counts and rotates exist only on RV64.
"""

from __future__ import annotations

from typing import Any

from tessera_riscv.formats import (
    BOTH,
    OP,
    OP_32,
    OP_IMM,
    OP_IMM_32,
    PURE,
    RV32,
    RV64,
    SH,
    SHW,
    R,
    Row,
    U,
    bits,
)
from tessera_riscv.semantics import REGISTRY
from tessera_riscv.semantics.xlen import M32, XBYTES, XLEN, XMASK, XSHIFT, XSIGN, XlenFunctions, sext32

op = REGISTRY.op
REF = REGISTRY.ref
PER_XLEN = XlenFunctions(REGISTRY)
XREF = PER_XLEN.ref

ROWS = (
    Row("andn", bits(OP, 7, 0x20), R, "alu", BOTH, PURE, XREF("andn")),
    Row("orn", bits(OP, 6, 0x20), R, "alu", BOTH, PURE, XREF("orn")),
    Row("xnor", bits(OP, 4, 0x20), R, "alu", BOTH, PURE, XREF("xnor")),
    Row("clz", bits(OP_IMM, 1, f12=0x600), U, "alu", BOTH, PURE, XREF("clz")),
    Row("ctz", bits(OP_IMM, 1, f12=0x601), U, "alu", BOTH, PURE, XREF("ctz")),
    Row("cpop", bits(OP_IMM, 1, f12=0x602), U, "alu", BOTH, PURE, REF("cpop")),
    Row("sext.b", bits(OP_IMM, 1, f12=0x604), U, "alu", BOTH, PURE, XREF("sext.b")),
    Row("sext.h", bits(OP_IMM, 1, f12=0x605), U, "alu", BOTH, PURE, XREF("sext.h")),
    Row("max", bits(OP, 6, 0x05), R, "alu", BOTH, PURE, XREF("max")),
    Row("maxu", bits(OP, 7, 0x05), R, "alu", BOTH, PURE, REF("maxu")),
    Row("min", bits(OP, 4, 0x05), R, "alu", BOTH, PURE, XREF("min")),
    Row("minu", bits(OP, 5, 0x05), R, "alu", BOTH, PURE, REF("minu")),
    Row("zext.h", bits(OP, 4, 0x04, rs2=0), U, "alu", RV32, PURE, REF("zext.h")),
    Row("zext.h", bits(OP_32, 4, 0x04, rs2=0), U, "alu", RV64, PURE, REF("zext.h")),
    Row("rol", bits(OP, 1, 0x30), R, "alu", BOTH, PURE, XREF("rol")),
    Row("ror", bits(OP, 5, 0x30), R, "alu", BOTH, PURE, XREF("ror")),
    Row("rori", bits(OP_IMM, 5, 0x30), SH, "alu", RV32, PURE, XREF("rori")),
    Row("rori", bits(OP_IMM, 5, f6=0x18), SH, "alu", RV64, PURE, XREF("rori")),
    Row("orc.b", bits(OP_IMM, 5, f12=0x287), U, "alu", BOTH, PURE, XREF("orc.b")),
    Row("rev8", bits(OP_IMM, 5, f12=0x698), U, "alu", RV32, PURE, XREF("rev8")),
    Row("rev8", bits(OP_IMM, 5, f12=0x6B8), U, "alu", RV64, PURE, XREF("rev8")),
    Row("clzw", bits(OP_IMM_32, 1, f12=0x600), U, "alu", RV64, PURE, REF("clzw")),
    Row("ctzw", bits(OP_IMM_32, 1, f12=0x601), U, "alu", RV64, PURE, REF("ctzw")),
    Row("cpopw", bits(OP_IMM_32, 1, f12=0x602), U, "alu", RV64, PURE, REF("cpopw")),
    Row("rolw", bits(OP_32, 1, 0x30), R, "alu", RV64, PURE, REF("rolw")),
    Row("rorw", bits(OP_32, 5, 0x30), R, "alu", RV64, PURE, REF("rorw")),
    Row("roriw", bits(OP_IMM_32, 5, 0x30), SHW, "alu", RV64, PURE, REF("roriw")),
)

#: ``orc.b``: each byte becomes 0xFF unless it is zero (a ``bytes.translate`` table)
ORC_TABLE = bytes([0] + [0xFF] * 255)


# ---------------------------------------------------------------- logic with negate


@PER_XLEN.op("andn")
def andn(h: Any, ins: Any) -> None:
    x = h.x
    x[ins.rd] = x[ins.rs1] & (x[ins.rs2] ^ XMASK)


@PER_XLEN.op("orn")
def orn(h: Any, ins: Any) -> None:
    x = h.x
    x[ins.rd] = x[ins.rs1] | (x[ins.rs2] ^ XMASK)


@PER_XLEN.op("xnor")
def xnor(h: Any, ins: Any) -> None:
    x = h.x
    x[ins.rd] = x[ins.rs1] ^ x[ins.rs2] ^ XMASK


# ---------------------------------------------------------------- counts


@PER_XLEN.op("clz")
def clz(h: Any, ins: Any) -> None:
    x = h.x
    x[ins.rd] = XLEN - x[ins.rs1].bit_length()


@PER_XLEN.op("ctz")
def ctz(h: Any, ins: Any) -> None:
    x = h.x
    v = x[ins.rs1]
    x[ins.rd] = (v & -v).bit_length() - 1 if v else XLEN


@op("cpop")
def cpop(h: Any, ins: Any) -> None:
    x = h.x
    x[ins.rd] = x[ins.rs1].bit_count()


# ---------------------------------------------------------------- min / max


@PER_XLEN.op("max")
def max_(h: Any, ins: Any) -> None:
    x = h.x
    a, b = x[ins.rs1], x[ins.rs2]
    x[ins.rd] = a if a ^ XSIGN > b ^ XSIGN else b


@op("maxu")
def maxu(h: Any, ins: Any) -> None:
    x = h.x
    a, b = x[ins.rs1], x[ins.rs2]
    x[ins.rd] = a if a > b else b


@PER_XLEN.op("min")
def min_(h: Any, ins: Any) -> None:
    x = h.x
    a, b = x[ins.rs1], x[ins.rs2]
    x[ins.rd] = a if a ^ XSIGN < b ^ XSIGN else b


@op("minu")
def minu(h: Any, ins: Any) -> None:
    x = h.x
    a, b = x[ins.rs1], x[ins.rs2]
    x[ins.rd] = a if a < b else b


# ---------------------------------------------------------------- sign and zero extension


@PER_XLEN.op("sext.b")
def sext_b(h: Any, ins: Any) -> None:
    x = h.x
    x[ins.rd] = (((x[ins.rs1] & 0xFF) ^ 0x80) - 0x80) & XMASK


@PER_XLEN.op("sext.h")
def sext_h(h: Any, ins: Any) -> None:
    x = h.x
    x[ins.rd] = (((x[ins.rs1] & 0xFFFF) ^ 0x8000) - 0x8000) & XMASK


@op("zext.h")
def zext_h(h: Any, ins: Any) -> None:
    x = h.x
    x[ins.rd] = x[ins.rs1] & 0xFFFF


# ---------------------------------------------------------------- rotates


@PER_XLEN.op("rol")
def rol(h: Any, ins: Any) -> None:
    x = h.x
    a, s = x[ins.rs1], x[ins.rs2] & XSHIFT
    x[ins.rd] = ((a << s) | (a >> (XLEN - s))) & XMASK


@PER_XLEN.op("ror")
def ror(h: Any, ins: Any) -> None:
    x = h.x
    a, s = x[ins.rs1], x[ins.rs2] & XSHIFT
    x[ins.rd] = ((a >> s) | (a << (XLEN - s))) & XMASK


@PER_XLEN.op("rori")
def rori(h: Any, ins: Any) -> None:
    x = h.x
    a, s = x[ins.rs1], ins.shamt
    x[ins.rd] = ((a >> s) | (a << (XLEN - s))) & XMASK


# ---------------------------------------------------------------- bytes


@PER_XLEN.op("orc.b")
def orc_b(h: Any, ins: Any) -> None:
    x = h.x
    x[ins.rd] = int.from_bytes(x[ins.rs1].to_bytes(XBYTES, "little").translate(ORC_TABLE), "little")


@PER_XLEN.op("rev8")
def rev8(h: Any, ins: Any) -> None:
    x = h.x
    x[ins.rd] = int.from_bytes(x[ins.rs1].to_bytes(XBYTES, "little"), "big")


# ---------------------------------------------------------------- RV64 word forms


@op("clzw")
def clzw(h: Any, ins: Any) -> None:
    x = h.x
    x[ins.rd] = 32 - (x[ins.rs1] & M32).bit_length()


@op("ctzw")
def ctzw(h: Any, ins: Any) -> None:
    x = h.x
    v = x[ins.rs1] & M32
    x[ins.rd] = (v & -v).bit_length() - 1 if v else 32


@op("cpopw")
def cpopw(h: Any, ins: Any) -> None:
    x = h.x
    x[ins.rd] = (x[ins.rs1] & M32).bit_count()


@op("rolw")
def rolw(h: Any, ins: Any) -> None:
    x = h.x
    a, s = x[ins.rs1] & M32, x[ins.rs2] & 31
    x[ins.rd] = sext32((a << s) | (a >> (32 - s)))


@op("rorw")
def rorw(h: Any, ins: Any) -> None:
    x = h.x
    a, s = x[ins.rs1] & M32, x[ins.rs2] & 31
    x[ins.rd] = sext32((a >> s) | (a << (32 - s)))


@op("roriw")
def roriw(h: Any, ins: Any) -> None:
    x = h.x
    a, s = x[ins.rs1] & M32, ins.shamtw
    x[ins.rd] = sext32((a >> s) | (a << (32 - s)))


PER_XLEN.register()
