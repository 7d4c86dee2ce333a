"""RV32I / RV64I: upper immediates, jumps, branches, loads, stores and integer computation.

``fence``, ``ecall`` and the other system instructions of the base ISA are in
:mod:`~tessera_riscv.semantics.system`; the traps for misaligned targets in
:mod:`~tessera_riscv.semantics.misaligned`.  :data:`ROWS` is the base table both
XLENs share (``slli``/``srli``/``srai`` have a wider shift amount on RV64);
:data:`WORD_ROWS` RV64I's 32-bit word operations (``addw`` …), which read no XLEN
constant: they exist only for RV64.
"""

from __future__ import annotations

from typing import Any

from tessera_riscv import traps
from tessera_riscv.formats import (
    AUIPC,
    BOTH,
    BR,
    BRANCH,
    JAL,
    JALR,
    LD,
    LOAD,
    LUI,
    OP,
    OP_32,
    OP_IMM,
    OP_IMM_32,
    PURE,
    RV32,
    RV64,
    SH,
    SHW,
    ST,
    STORE,
    I,
    R,
    Row,
    bits,
)
from tessera_riscv.semantics import REGISTRY
from tessera_riscv.semantics.xlen import M32, M64, XMASK, XSHIFT, XSIGN, XlenFunctions, placeholder, sext32

op = REGISTRY.op
REF = REGISTRY.ref
PER_XLEN = XlenFunctions(REGISTRY)
XREF = PER_XLEN.ref

_B, _J = frozenset({"branch"}), frozenset({"jump"})
_L, _S = frozenset({"load"}), frozenset({"store"})

ROWS = (
    Row("lui", bits(LUI), "{rd}, {imm20}", "alu", BOTH, PURE, REF("set_value")),
    Row("auipc", bits(AUIPC), "{rd}, {imm20}", "alu", BOTH, PURE, REF("set_value")),
    Row("jal", bits(JAL), "{rd}, {joff}", "jump", BOTH, _J, REF("jal"),
        {"x0": REF("j"), "misaligned-target": REF("misaligned_jump")}),
    Row("jalr", bits(JALR, 0), LD, "jump", BOTH, _J, XREF("jalr")),
    Row("beq", bits(BRANCH, 0), BR, "branch", BOTH, _B, REF("beq")),
    Row("bne", bits(BRANCH, 1), BR, "branch", BOTH, _B, REF("bne")),
    Row("blt", bits(BRANCH, 4), BR, "branch", BOTH, _B, XREF("blt")),
    Row("bge", bits(BRANCH, 5), BR, "branch", BOTH, _B, XREF("bge")),
    Row("bltu", bits(BRANCH, 6), BR, "branch", BOTH, _B, REF("bltu")),
    Row("bgeu", bits(BRANCH, 7), BR, "branch", BOTH, _B, REF("bgeu")),
    Row("lb", bits(LOAD, 0), LD, "load", BOTH, _L, XREF("lb")),
    Row("lh", bits(LOAD, 1), LD, "load", BOTH, _L, XREF("lh")),
    Row("lw", bits(LOAD, 2), LD, "load", BOTH, _L, XREF("lw")),
    Row("ld", bits(LOAD, 3), LD, "load", RV64, _L, XREF("ld")),
    Row("lbu", bits(LOAD, 4), LD, "load", BOTH, _L, XREF("lbu")),
    Row("lhu", bits(LOAD, 5), LD, "load", BOTH, _L, XREF("lhu")),
    Row("lwu", bits(LOAD, 6), LD, "load", RV64, _L, XREF("lwu")),
    Row("sb", bits(STORE, 0), ST, "store", BOTH, _S, XREF("sb")),
    Row("sh", bits(STORE, 1), ST, "store", BOTH, _S, XREF("sh")),
    Row("sw", bits(STORE, 2), ST, "store", BOTH, _S, XREF("sw")),
    Row("sd", bits(STORE, 3), ST, "store", RV64, _S, XREF("sd")),
    Row("nop", bits(0, word=0x0000_0013), "", "alu", BOTH, frozenset({"alias"}), REF("nop")),
    Row("addi", bits(OP_IMM, 0), I, "alu", BOTH, PURE, XREF("addi"), {"li": REF("set_value")}),
    Row("slti", bits(OP_IMM, 2), I, "alu", BOTH, PURE, XREF("slti")),
    Row("sltiu", bits(OP_IMM, 3), I, "alu", BOTH, PURE, XREF("sltiu")),
    Row("xori", bits(OP_IMM, 4), I, "alu", BOTH, PURE, XREF("xori")),
    Row("ori", bits(OP_IMM, 6), I, "alu", BOTH, PURE, XREF("ori")),
    Row("andi", bits(OP_IMM, 7), I, "alu", BOTH, PURE, XREF("andi")),
    Row("slli", bits(OP_IMM, 1, 0x00), SH, "alu", RV32, PURE, XREF("slli")),
    Row("srli", bits(OP_IMM, 5, 0x00), SH, "alu", RV32, PURE, REF("srli")),
    Row("srai", bits(OP_IMM, 5, 0x20), SH, "alu", RV32, PURE, XREF("srai")),
    Row("slli", bits(OP_IMM, 1, f6=0x00), SH, "alu", RV64, PURE, XREF("slli")),
    Row("srli", bits(OP_IMM, 5, f6=0x00), SH, "alu", RV64, PURE, REF("srli")),
    Row("srai", bits(OP_IMM, 5, f6=0x10), SH, "alu", RV64, PURE, XREF("srai")),
    Row("add", bits(OP, 0, 0x00), R, "alu", BOTH, PURE, XREF("add")),
    Row("sub", bits(OP, 0, 0x20), R, "alu", BOTH, PURE, XREF("sub")),
    Row("sll", bits(OP, 1, 0x00), R, "alu", BOTH, PURE, XREF("sll")),
    Row("slt", bits(OP, 2, 0x00), R, "alu", BOTH, PURE, XREF("slt")),
    Row("sltu", bits(OP, 3, 0x00), R, "alu", BOTH, PURE, REF("sltu")),
    Row("xor", bits(OP, 4, 0x00), R, "alu", BOTH, PURE, REF("xor")),
    Row("srl", bits(OP, 5, 0x00), R, "alu", BOTH, PURE, XREF("srl")),
    Row("sra", bits(OP, 5, 0x20), R, "alu", BOTH, PURE, XREF("sra")),
    Row("or", bits(OP, 6, 0x00), R, "alu", BOTH, PURE, REF("or")),
    Row("and", bits(OP, 7, 0x00), R, "alu", BOTH, PURE, REF("and")),
)

WORD_ROWS = (
    Row("addiw", bits(OP_IMM_32, 0), I, "alu", RV64, PURE, REF("addiw")),
    Row("slliw", bits(OP_IMM_32, 1, 0x00), SHW, "alu", RV64, PURE, REF("slliw")),
    Row("srliw", bits(OP_IMM_32, 5, 0x00), SHW, "alu", RV64, PURE, REF("srliw")),
    Row("sraiw", bits(OP_IMM_32, 5, 0x20), SHW, "alu", RV64, PURE, REF("sraiw")),
    Row("addw", bits(OP_32, 0, 0x00), R, "alu", RV64, PURE, REF("addw")),
    Row("subw", bits(OP_32, 0, 0x20), R, "alu", RV64, PURE, REF("subw")),
    Row("sllw", bits(OP_32, 1, 0x00), R, "alu", RV64, PURE, REF("sllw")),
    Row("srlw", bits(OP_32, 5, 0x00), R, "alu", RV64, PURE, REF("srlw")),
    Row("sraw", bits(OP_32, 5, 0x20), R, "alu", RV64, PURE, REF("sraw")),
)


# ---------------------------------------------------------------- no-ops and precomputed values


@op("nop")
def nop(h: Any, ins: Any) -> None:
    """Does nothing: ``nop``, ``fence``, ``wfi``, and the ``x0`` variant of pure rows."""
    return None


@op("set_value")
def set_value(h: Any, ins: Any) -> None:
    """``x[rd] = ins.value``: ``lui``, ``auipc``, and ``addi rd, zero, imm`` (the ``li`` variant)."""
    h.x[ins.rd] = ins.value


# ---------------------------------------------------------------- control transfer


@op("jal")
def jal(h: Any, ins: Any) -> int:
    h.x[ins.rd] = ins.link
    return ins.target


@op("j")
def j(h: Any, ins: Any) -> int:
    """``jal`` with ``rd`` = x0 (its ``x0`` variant): no link."""
    return ins.target


@PER_XLEN.op("jalr")
def jalr(h: Any, ins: Any) -> int:
    x = h.x
    target = (x[ins.rs1] + ins.imm) & XMASK & ~1
    if target & 2:
        raise traps.trap(traps.INSTRUCTION_MISALIGNED, target)
    if ins.rd:
        x[ins.rd] = ins.link
    return target


@op("beq")
def beq(h: Any, ins: Any) -> int | None:
    x = h.x
    if x[ins.rs1] == x[ins.rs2]:
        return ins.target
    return None


@op("bne")
def bne(h: Any, ins: Any) -> int | None:
    x = h.x
    if x[ins.rs1] != x[ins.rs2]:
        return ins.target
    return None


@PER_XLEN.op("blt")
def blt(h: Any, ins: Any) -> int | None:
    x = h.x
    if x[ins.rs1] ^ XSIGN < x[ins.rs2] ^ XSIGN:
        return ins.target
    return None


@PER_XLEN.op("bge")
def bge(h: Any, ins: Any) -> int | None:
    x = h.x
    if x[ins.rs1] ^ XSIGN >= x[ins.rs2] ^ XSIGN:
        return ins.target
    return None


@op("bltu")
def bltu(h: Any, ins: Any) -> int | None:
    x = h.x
    if x[ins.rs1] < x[ins.rs2]:
        return ins.target
    return None


@op("bgeu")
def bgeu(h: Any, ins: Any) -> int | None:
    x = h.x
    if x[ins.rs1] >= x[ins.rs2]:
        return ins.target
    return None


# ---------------------------------------------------------------- loads and stores
# One body per shape; SIZE (bytes), ALIGN (SIZE - 1) and SIGN_BIT (of the loaded width)
# are replaced in each instruction's copies, like the XLEN constants.

SIZE: int = placeholder("SIZE")
ALIGN: int = placeholder("ALIGN")
SIGN_BIT: int = placeholder("SIGN_BIT")


def load_byte_signed(h: Any, ins: Any) -> None:
    v = h.space.read((h.x[ins.rs1] + ins.imm) & XMASK, 1)
    if ins.rd:
        h.x[ins.rd] = ((v ^ 0x80) - 0x80) & XMASK


def load_byte(h: Any, ins: Any) -> None:
    v = h.space.read((h.x[ins.rs1] + ins.imm) & XMASK, 1)
    if ins.rd:
        h.x[ins.rd] = v


def load_signed(h: Any, ins: Any) -> None:
    """A load narrower than XLEN, sign-extended (``lh``; ``lw`` on RV64)."""
    a = (h.x[ins.rs1] + ins.imm) & XMASK
    if a & ALIGN and h.trap_misaligned:
        raise traps.trap(traps.LOAD_MISALIGNED, a)
    v = h.space.read(a, SIZE)
    if ins.rd:
        h.x[ins.rd] = ((v ^ SIGN_BIT) - SIGN_BIT) & XMASK


def load(h: Any, ins: Any) -> None:
    """A zero-extended load, or one as wide as XLEN (``lhu``, ``lwu``, ``ld``; ``lw`` on RV32)."""
    a = (h.x[ins.rs1] + ins.imm) & XMASK
    if a & ALIGN and h.trap_misaligned:
        raise traps.trap(traps.LOAD_MISALIGNED, a)
    v = h.space.read(a, SIZE)
    if ins.rd:
        h.x[ins.rd] = v


def store_byte(h: Any, ins: Any) -> None:
    h.space.write((h.x[ins.rs1] + ins.simm) & XMASK, 1, h.x[ins.rs2])


def store(h: Any, ins: Any) -> None:
    x = h.x
    a = (x[ins.rs1] + ins.simm) & XMASK
    if a & ALIGN and h.trap_misaligned:
        raise traps.trap(traps.STORE_MISALIGNED, a)
    h.space.write(a, SIZE, x[ins.rs2])


def _width(size: int) -> dict[str, int]:
    return {"SIZE": size, "ALIGN": size - 1, "SIGN_BIT": 1 << (8 * size - 1)}


PER_XLEN.add("lb", load_byte_signed)
PER_XLEN.add("lbu", load_byte)
PER_XLEN.add("lh", load_signed, **_width(2))
PER_XLEN.add("lhu", load, **_width(2))
PER_XLEN.add("lw", load, RV32, **_width(4))
PER_XLEN.add("lw", load_signed, RV64, **_width(4))
PER_XLEN.add("lwu", load, RV64, **_width(4))
PER_XLEN.add("ld", load, RV64, **_width(8))
PER_XLEN.add("sb", store_byte)
PER_XLEN.add("sh", store, **_width(2))
PER_XLEN.add("sw", store, **_width(4))
PER_XLEN.add("sd", store, RV64, **_width(8))


# ---------------------------------------------------------------- integer, immediate


@PER_XLEN.op("addi")
def addi(h: Any, ins: Any) -> None:
    x = h.x
    x[ins.rd] = (x[ins.rs1] + ins.imm) & XMASK


@PER_XLEN.op("slti")
def slti(h: Any, ins: Any) -> None:
    x = h.x
    x[ins.rd] = int(x[ins.rs1] ^ XSIGN < (ins.imm & XMASK) ^ XSIGN)


@PER_XLEN.op("sltiu")
def sltiu(h: Any, ins: Any) -> None:
    x = h.x
    x[ins.rd] = int(x[ins.rs1] < ins.imm & XMASK)


@PER_XLEN.op("xori")
def xori(h: Any, ins: Any) -> None:
    x = h.x
    x[ins.rd] = (x[ins.rs1] ^ ins.imm) & XMASK


@PER_XLEN.op("ori")
def ori(h: Any, ins: Any) -> None:
    x = h.x
    x[ins.rd] = (x[ins.rs1] | ins.imm) & XMASK


@PER_XLEN.op("andi")
def andi(h: Any, ins: Any) -> None:
    x = h.x
    x[ins.rd] = x[ins.rs1] & ins.imm & XMASK


@PER_XLEN.op("slli")
def slli(h: Any, ins: Any) -> None:
    x = h.x
    x[ins.rd] = (x[ins.rs1] << ins.shamt) & XMASK


@op("srli")
def srli(h: Any, ins: Any) -> None:
    x = h.x
    x[ins.rd] = x[ins.rs1] >> ins.shamt


@PER_XLEN.op("srai")
def srai(h: Any, ins: Any) -> None:
    x = h.x
    x[ins.rd] = (((x[ins.rs1] ^ XSIGN) - XSIGN) >> ins.shamt) & XMASK


# ---------------------------------------------------------------- integer, register


@PER_XLEN.op("add")
def add(h: Any, ins: Any) -> None:
    x = h.x
    x[ins.rd] = (x[ins.rs1] + x[ins.rs2]) & XMASK


@PER_XLEN.op("sub")
def sub(h: Any, ins: Any) -> None:
    x = h.x
    x[ins.rd] = (x[ins.rs1] - x[ins.rs2]) & XMASK


@PER_XLEN.op("sll")
def sll(h: Any, ins: Any) -> None:
    x = h.x
    x[ins.rd] = (x[ins.rs1] << (x[ins.rs2] & XSHIFT)) & XMASK


@PER_XLEN.op("slt")
def slt(h: Any, ins: Any) -> None:
    x = h.x
    x[ins.rd] = int(x[ins.rs1] ^ XSIGN < x[ins.rs2] ^ XSIGN)


@op("sltu")
def sltu(h: Any, ins: Any) -> None:
    x = h.x
    x[ins.rd] = int(x[ins.rs1] < x[ins.rs2])


@op("xor")
def xor(h: Any, ins: Any) -> None:
    x = h.x
    x[ins.rd] = x[ins.rs1] ^ x[ins.rs2]


@PER_XLEN.op("srl")
def srl(h: Any, ins: Any) -> None:
    x = h.x
    x[ins.rd] = x[ins.rs1] >> (x[ins.rs2] & XSHIFT)


@PER_XLEN.op("sra")
def sra(h: Any, ins: Any) -> None:
    x = h.x
    x[ins.rd] = (((x[ins.rs1] ^ XSIGN) - XSIGN) >> (x[ins.rs2] & XSHIFT)) & XMASK


@op("or")
def or_(h: Any, ins: Any) -> None:
    x = h.x
    x[ins.rd] = x[ins.rs1] | x[ins.rs2]


@op("and")
def and_(h: Any, ins: Any) -> None:
    x = h.x
    x[ins.rd] = x[ins.rs1] & x[ins.rs2]


# ---------------------------------------------------------------- RV64I word operations


@op("addiw")
def addiw(h: Any, ins: Any) -> None:
    x = h.x
    x[ins.rd] = sext32(x[ins.rs1] + ins.imm)


@op("slliw")
def slliw(h: Any, ins: Any) -> None:
    x = h.x
    x[ins.rd] = sext32(x[ins.rs1] << ins.shamtw)


@op("srliw")
def srliw(h: Any, ins: Any) -> None:
    x = h.x
    x[ins.rd] = sext32((x[ins.rs1] & M32) >> ins.shamtw)


@op("sraiw")
def sraiw(h: Any, ins: Any) -> None:
    x = h.x
    x[ins.rd] = ((((x[ins.rs1] & M32) ^ 0x8000_0000) - 0x8000_0000) >> ins.shamtw) & M64


@op("addw")
def addw(h: Any, ins: Any) -> None:
    x = h.x
    x[ins.rd] = sext32(x[ins.rs1] + x[ins.rs2])


@op("subw")
def subw(h: Any, ins: Any) -> None:
    x = h.x
    x[ins.rd] = sext32(x[ins.rs1] - x[ins.rs2])


@op("sllw")
def sllw(h: Any, ins: Any) -> None:
    x = h.x
    x[ins.rd] = sext32(x[ins.rs1] << (x[ins.rs2] & 31))


@op("srlw")
def srlw(h: Any, ins: Any) -> None:
    x = h.x
    x[ins.rd] = sext32((x[ins.rs1] & M32) >> (x[ins.rs2] & 31))


@op("sraw")
def sraw(h: Any, ins: Any) -> None:
    x = h.x
    x[ins.rd] = ((((x[ins.rs1] & M32) ^ 0x8000_0000) - 0x8000_0000) >> (x[ins.rs2] & 31)) & M64


PER_XLEN.register()
