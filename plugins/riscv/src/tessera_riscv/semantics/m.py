"""M: integer multiplication and division (with RV64's 32-bit word forms).

Division never traps: by zero it gives all ones (``div``/``divu``) or the dividend
(``rem``/``remu``); the most negative number divided by -1 wraps to itself with
remainder 0, as the specification's table says.
"""

from __future__ import annotations

from typing import Any

from tessera_riscv.formats import BOTH, OP, OP_32, PURE, RV64, R, Row, bits
from tessera_riscv.semantics import REGISTRY
from tessera_riscv.semantics.xlen import M32, M64, XLEN, XMASK, XSIGN, XlenFunctions, sext32

op = REGISTRY.op
REF = REGISTRY.ref
PER_XLEN = XlenFunctions(REGISTRY)
XREF = PER_XLEN.ref

ROWS = (
    Row("mul", bits(OP, 0, 0x01), R, "mul", BOTH, PURE, XREF("mul")),
    Row("mulh", bits(OP, 1, 0x01), R, "mul", BOTH, PURE, XREF("mulh")),
    Row("mulhsu", bits(OP, 2, 0x01), R, "mul", BOTH, PURE, XREF("mulhsu")),
    Row("mulhu", bits(OP, 3, 0x01), R, "mul", BOTH, PURE, XREF("mulhu")),
    Row("div", bits(OP, 4, 0x01), R, "div", BOTH, PURE, XREF("div")),
    Row("divu", bits(OP, 5, 0x01), R, "div", BOTH, PURE, XREF("divu")),
    Row("rem", bits(OP, 6, 0x01), R, "div", BOTH, PURE, XREF("rem")),
    Row("remu", bits(OP, 7, 0x01), R, "div", BOTH, PURE, REF("remu")),
    Row("mulw", bits(OP_32, 0, 0x01), R, "mul", RV64, PURE, REF("mulw")),
    Row("divw", bits(OP_32, 4, 0x01), R, "div", RV64, PURE, REF("divw")),
    Row("divuw", bits(OP_32, 5, 0x01), R, "div", RV64, PURE, REF("divuw")),
    Row("remw", bits(OP_32, 6, 0x01), R, "div", RV64, PURE, REF("remw")),
    Row("remuw", bits(OP_32, 7, 0x01), R, "div", RV64, PURE, REF("remuw")),
)


@PER_XLEN.op("mul")
def mul(h: Any, ins: Any) -> None:
    x = h.x
    x[ins.rd] = (x[ins.rs1] * x[ins.rs2]) & XMASK


@PER_XLEN.op("mulh")
def mulh(h: Any, ins: Any) -> None:
    x = h.x
    x[ins.rd] = ((((x[ins.rs1] ^ XSIGN) - XSIGN) * ((x[ins.rs2] ^ XSIGN) - XSIGN)) >> XLEN) & XMASK


@PER_XLEN.op("mulhsu")
def mulhsu(h: Any, ins: Any) -> None:
    x = h.x
    x[ins.rd] = ((((x[ins.rs1] ^ XSIGN) - XSIGN) * x[ins.rs2]) >> XLEN) & XMASK


@PER_XLEN.op("mulhu")
def mulhu(h: Any, ins: Any) -> None:
    x = h.x
    x[ins.rd] = (x[ins.rs1] * x[ins.rs2]) >> XLEN


@PER_XLEN.op("div")
def div(h: Any, ins: Any) -> None:
    x = h.x
    b = x[ins.rs2]
    if not b:
        x[ins.rd] = XMASK                       # division by zero: all ones
        return
    a = (x[ins.rs1] ^ XSIGN) - XSIGN
    b = (b ^ XSIGN) - XSIGN
    q = abs(a) // abs(b)                        # truncate towards zero
    x[ins.rd] = (-q if (a < 0) != (b < 0) else q) & XMASK   # MIN / -1 = MIN (wraps)


@PER_XLEN.op("divu")
def divu(h: Any, ins: Any) -> None:
    x = h.x
    b = x[ins.rs2]
    x[ins.rd] = x[ins.rs1] // b if b else XMASK


@PER_XLEN.op("rem")
def rem(h: Any, ins: Any) -> None:
    x = h.x
    b = x[ins.rs2]
    if not b:
        x[ins.rd] = x[ins.rs1]                  # remainder of division by zero: the dividend
        return
    a = (x[ins.rs1] ^ XSIGN) - XSIGN
    r = abs(a) % abs((b ^ XSIGN) - XSIGN)       # sign of the dividend; MIN % -1 = 0
    x[ins.rd] = (-r if a < 0 else r) & XMASK


@op("remu")
def remu(h: Any, ins: Any) -> None:
    x = h.x
    b = x[ins.rs2]
    x[ins.rd] = x[ins.rs1] % b if b else x[ins.rs1]


# ---------------------------------------------------------------- RV64 word forms


@op("mulw")
def mulw(h: Any, ins: Any) -> None:
    x = h.x
    x[ins.rd] = sext32(x[ins.rs1] * x[ins.rs2])


@op("divw")
def divw(h: Any, ins: Any) -> None:
    x = h.x
    b = x[ins.rs2] & M32
    if not b:
        x[ins.rd] = M64
        return
    a = ((x[ins.rs1] & M32) ^ 0x8000_0000) - 0x8000_0000
    b = (b ^ 0x8000_0000) - 0x8000_0000
    q = abs(a) // abs(b)
    x[ins.rd] = sext32(-q if (a < 0) != (b < 0) else q)


@op("divuw")
def divuw(h: Any, ins: Any) -> None:
    x = h.x
    b = x[ins.rs2] & M32
    x[ins.rd] = sext32((x[ins.rs1] & M32) // b) if b else M64


@op("remw")
def remw(h: Any, ins: Any) -> None:
    x = h.x
    b = x[ins.rs2] & M32
    if not b:
        x[ins.rd] = sext32(x[ins.rs1])
        return
    a = ((x[ins.rs1] & M32) ^ 0x8000_0000) - 0x8000_0000
    r = abs(a) % abs((b ^ 0x8000_0000) - 0x8000_0000)
    x[ins.rd] = sext32(-r if a < 0 else r)


@op("remuw")
def remuw(h: Any, ins: Any) -> None:
    x = h.x
    b = x[ins.rs2] & M32
    x[ins.rd] = sext32((x[ins.rs1] & M32) % b if b else x[ins.rs1])


PER_XLEN.register()
