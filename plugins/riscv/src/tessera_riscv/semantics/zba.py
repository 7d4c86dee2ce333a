"""Zba: address generation — shift-and-add, and RV64's unsigned-word (``.uw``) forms.

``sh1add``/``sh2add``/``sh3add`` are one body with the shift amount a constant of
each copy; the ``.uw`` forms take the low 32 bits of ``rs1`` zero-extended and exist
only on RV64.
"""

from __future__ import annotations

from typing import Any

from tessera_riscv.formats import BOTH, OP, OP_32, OP_IMM_32, PURE, RV64, SH, R, Row, bits
from tessera_riscv.semantics import REGISTRY
from tessera_riscv.semantics.xlen import M32, M64, XMASK, XlenFunctions, placeholder, specialise

REF = REGISTRY.ref
PER_XLEN = XlenFunctions(REGISTRY)
XREF = PER_XLEN.ref

ROWS = (
    Row("sh1add", bits(OP, 2, 0x10), R, "alu", BOTH, PURE, XREF("sh1add")),
    Row("sh2add", bits(OP, 4, 0x10), R, "alu", BOTH, PURE, XREF("sh2add")),
    Row("sh3add", bits(OP, 6, 0x10), R, "alu", BOTH, PURE, XREF("sh3add")),
    Row("add.uw", bits(OP_32, 0, 0x04), R, "alu", RV64, PURE, REF("add.uw")),
    Row("sh1add.uw", bits(OP_32, 2, 0x10), R, "alu", RV64, PURE, REF("sh1add.uw")),
    Row("sh2add.uw", bits(OP_32, 4, 0x10), R, "alu", RV64, PURE, REF("sh2add.uw")),
    Row("sh3add.uw", bits(OP_32, 6, 0x10), R, "alu", RV64, PURE, REF("sh3add.uw")),
    Row("slli.uw", bits(OP_IMM_32, 1, f6=0x02), SH, "alu", RV64, PURE, REF("slli.uw")),
)

#: the shift of ``shNadd``: replaced in each instruction's copy (registered below)
SHIFT: int = placeholder("SHIFT")


def shadd(h: Any, ins: Any) -> None:
    x = h.x
    x[ins.rd] = ((x[ins.rs1] << SHIFT) + x[ins.rs2]) & XMASK


def shadd_uw(h: Any, ins: Any) -> None:
    x = h.x
    x[ins.rd] = (((x[ins.rs1] & M32) << SHIFT) + x[ins.rs2]) & M64


@REGISTRY.op("add.uw")
def add_uw(h: Any, ins: Any) -> None:
    x = h.x
    x[ins.rd] = ((x[ins.rs1] & M32) + x[ins.rs2]) & M64


@REGISTRY.op("slli.uw")
def slli_uw(h: Any, ins: Any) -> None:
    x = h.x
    x[ins.rd] = ((x[ins.rs1] & M32) << ins.shamt) & M64


def _register() -> None:
    """``shNadd`` per XLEN and ``shNadd.uw`` (RV64), one copy per shift."""
    for n in (1, 2, 3):
        PER_XLEN.add(f"sh{n}add", shadd, SHIFT=n)
        REGISTRY.register(f"sh{n}add.uw", specialise(shadd_uw, f"sh{n}add_uw", SHIFT=n))
    PER_XLEN.register()


_register()
