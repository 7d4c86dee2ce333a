"""The encoding table: shared row definitions, one generated table per XLEN, and ``refine``.

Each :data:`ROWS` entry names a mnemonic, its fixed bits (major opcode, funct3,
funct7/funct6/funct12 …), its operand syntax, the timing class, the XLENs it exists
for and free-form flags.  :func:`encodings` turns the rows for one XLEN into
:class:`tessera.isa.Encoding` records with that XLEN's semantic functions; RV32 and
RV64 differ only in which rows exist and in the width of the shift-amount field.

Bits that are neither fixed nor an operand are ignored when decoding, as the
specification asks for FENCE's ``fm``/``rs1``/``rd`` and FENCE.I's immediate and
registers; the assembler writes them as 0.

Flags used by :func:`refine` (and shown to tools):

* ``rv32`` / ``rv64`` — a row of the base table for that XLEN;
* ``pure`` — the instruction only writes ``rd``: with ``rd`` = x0 it becomes a nop;
* ``branch``, ``jump`` — control transfers (their targets are precomputed);
* ``load``, ``store``, ``amo``, ``csr``, ``system``, ``alias``.
"""

from __future__ import annotations

from typing import Any

from tessera.isa import Encoding
from tessera_riscv import semantics

# major opcodes (bits 6:0)
LOAD, MISC_MEM, OP_IMM, AUIPC, OP_IMM_32 = 0x03, 0x0F, 0x13, 0x17, 0x1B
STORE, AMO, OP, LUI, OP_32 = 0x23, 0x2F, 0x33, 0x37, 0x3B
BRANCH, JALR, JAL, SYSTEM = 0x63, 0x67, 0x6F, 0x73
#: The major opcodes the specification reserves for custom extensions.
CUSTOM_0, CUSTOM_1, CUSTOM_2, CUSTOM_3 = 0x0B, 0x2B, 0x5B, 0x7B

OPCODE = 0x7F
F3 = 0x7 << 12
F7 = 0x7F << 25
F6 = 0x3F << 26
F5 = 0x1F << 27
RS2 = 0x1F << 20
IMM12 = 0xFFF << 20

R = "{rd}, {rs1}, {rs2}"
I = "{rd}, {rs1}, {imm}"  # noqa: E741 - the RISC-V format's name
U = "{rd}, {rs1}"
SH = "{rd}, {rs1}, {shamt}"
SHW = "{rd}, {rs1}, {shamtw}"
LD = "{rd}, {imm}({rs1})"
ST = "{rs2}, {simm}({rs1})"
BR = "{rs1}, {rs2}, {boff}"
CSR = "{rd}, {csr}, {rs1}"
CSRI = "{rd}, {csr}, {zimm}"
AMO_SYNTAX = "{rd}, {rs2}, ({rs1})"

BOTH, RV32, RV64 = (32, 64), (32,), (64,)


def bits(opcode: int, f3: int | None = None, f7: int | None = None, *, f6: int | None = None,
         f12: int | None = None, f5: int | None = None, rs2: int | None = None,
         word: int | None = None) -> tuple[int, int]:
    """``(match, mask)`` from the fixed fields of a form."""
    if word is not None:
        return word, 0xFFFF_FFFF
    match, mask = opcode, OPCODE
    for value, field, shift in ((f3, F3, 12), (f7, F7, 25), (f6, F6, 26), (f12, IMM12, 20),
                                (f5, F5, 27), (rs2, RS2, 20)):
        if value is not None:
            match |= value << shift
            mask |= field
    return match, mask


#: One row: (mnemonic, (match, mask), syntax, timing, xlens, flags)
Row = tuple[str, tuple[int, int], str, str, tuple[int, ...], frozenset[str]]
ROWS: tuple[Row, ...]
_P, _B, _J = frozenset({"pure"}), frozenset({"branch"}), frozenset({"jump"})
_L, _S, _A = frozenset({"load"}), frozenset({"store"}), frozenset({"amo", "sync"})
_C, _Y = frozenset({"csr", "system"}), frozenset({"system"})

ROWS = (
    # ---- RV32I / RV64I
    ("lui", bits(LUI), "{rd}, {imm20}", "alu", BOTH, _P),
    ("auipc", bits(AUIPC), "{rd}, {imm20}", "alu", BOTH, _P),
    ("jal", bits(JAL), "{rd}, {joff}", "jump", BOTH, _J),
    ("jalr", bits(JALR, 0), LD, "jump", BOTH, _J),
    ("beq", bits(BRANCH, 0), BR, "branch", BOTH, _B),
    ("bne", bits(BRANCH, 1), BR, "branch", BOTH, _B),
    ("blt", bits(BRANCH, 4), BR, "branch", BOTH, _B),
    ("bge", bits(BRANCH, 5), BR, "branch", BOTH, _B),
    ("bltu", bits(BRANCH, 6), BR, "branch", BOTH, _B),
    ("bgeu", bits(BRANCH, 7), BR, "branch", BOTH, _B),
    ("lb", bits(LOAD, 0), LD, "load", BOTH, _L),
    ("lh", bits(LOAD, 1), LD, "load", BOTH, _L),
    ("lw", bits(LOAD, 2), LD, "load", BOTH, _L),
    ("ld", bits(LOAD, 3), LD, "load", RV64, _L),
    ("lbu", bits(LOAD, 4), LD, "load", BOTH, _L),
    ("lhu", bits(LOAD, 5), LD, "load", BOTH, _L),
    ("lwu", bits(LOAD, 6), LD, "load", RV64, _L),
    ("sb", bits(STORE, 0), ST, "store", BOTH, _S),
    ("sh", bits(STORE, 1), ST, "store", BOTH, _S),
    ("sw", bits(STORE, 2), ST, "store", BOTH, _S),
    ("sd", bits(STORE, 3), ST, "store", RV64, _S),
    ("nop", bits(0, word=0x0000_0013), "", "alu", BOTH, frozenset({"alias"})),
    ("addi", bits(OP_IMM, 0), I, "alu", BOTH, _P),
    ("slti", bits(OP_IMM, 2), I, "alu", BOTH, _P),
    ("sltiu", bits(OP_IMM, 3), I, "alu", BOTH, _P),
    ("xori", bits(OP_IMM, 4), I, "alu", BOTH, _P),
    ("ori", bits(OP_IMM, 6), I, "alu", BOTH, _P),
    ("andi", bits(OP_IMM, 7), I, "alu", BOTH, _P),
    ("slli", bits(OP_IMM, 1, 0x00), SH, "alu", RV32, _P),
    ("srli", bits(OP_IMM, 5, 0x00), SH, "alu", RV32, _P),
    ("srai", bits(OP_IMM, 5, 0x20), SH, "alu", RV32, _P),
    ("slli", bits(OP_IMM, 1, f6=0x00), SH, "alu", RV64, _P),
    ("srli", bits(OP_IMM, 5, f6=0x00), SH, "alu", RV64, _P),
    ("srai", bits(OP_IMM, 5, f6=0x10), SH, "alu", RV64, _P),
    ("add", bits(OP, 0, 0x00), R, "alu", BOTH, _P),
    ("sub", bits(OP, 0, 0x20), R, "alu", BOTH, _P),
    ("sll", bits(OP, 1, 0x00), R, "alu", BOTH, _P),
    ("slt", bits(OP, 2, 0x00), R, "alu", BOTH, _P),
    ("sltu", bits(OP, 3, 0x00), R, "alu", BOTH, _P),
    ("xor", bits(OP, 4, 0x00), R, "alu", BOTH, _P),
    ("srl", bits(OP, 5, 0x00), R, "alu", BOTH, _P),
    ("sra", bits(OP, 5, 0x20), R, "alu", BOTH, _P),
    ("or", bits(OP, 6, 0x00), R, "alu", BOTH, _P),
    ("and", bits(OP, 7, 0x00), R, "alu", BOTH, _P),
    ("fence", bits(MISC_MEM, 0), "{pred}, {succ}", "system", BOTH, _Y),
    ("fence.tso", bits(0, word=0x8330_000F), "", "system", BOTH, _Y),
    ("fence.i", bits(MISC_MEM, 1), "", "system", BOTH, _Y),
    ("ecall", bits(0, word=0x0000_0073), "", "system", BOTH, frozenset({"system", "trap", "halt"})),
    ("ebreak", bits(0, word=0x0010_0073), "", "system", BOTH, frozenset({"system", "trap"})),
    ("mret", bits(0, word=0x3020_0073), "", "jump", BOTH, frozenset({"system", "jump", "trap"})),
    ("wfi", bits(0, word=0x1050_0073), "", "system", BOTH, frozenset({"system", "wait"})),
    # ---- RV64I *W
    ("addiw", bits(OP_IMM_32, 0), I, "alu", RV64, _P),
    ("slliw", bits(OP_IMM_32, 1, 0x00), SHW, "alu", RV64, _P),
    ("srliw", bits(OP_IMM_32, 5, 0x00), SHW, "alu", RV64, _P),
    ("sraiw", bits(OP_IMM_32, 5, 0x20), SHW, "alu", RV64, _P),
    ("addw", bits(OP_32, 0, 0x00), R, "alu", RV64, _P),
    ("subw", bits(OP_32, 0, 0x20), R, "alu", RV64, _P),
    ("sllw", bits(OP_32, 1, 0x00), R, "alu", RV64, _P),
    ("srlw", bits(OP_32, 5, 0x00), R, "alu", RV64, _P),
    ("sraw", bits(OP_32, 5, 0x20), R, "alu", RV64, _P),
    # ---- M
    ("mul", bits(OP, 0, 0x01), R, "mul", BOTH, _P),
    ("mulh", bits(OP, 1, 0x01), R, "mul", BOTH, _P),
    ("mulhsu", bits(OP, 2, 0x01), R, "mul", BOTH, _P),
    ("mulhu", bits(OP, 3, 0x01), R, "mul", BOTH, _P),
    ("div", bits(OP, 4, 0x01), R, "div", BOTH, _P),
    ("divu", bits(OP, 5, 0x01), R, "div", BOTH, _P),
    ("rem", bits(OP, 6, 0x01), R, "div", BOTH, _P),
    ("remu", bits(OP, 7, 0x01), R, "div", BOTH, _P),
    ("mulw", bits(OP_32, 0, 0x01), R, "mul", RV64, _P),
    ("divw", bits(OP_32, 4, 0x01), R, "div", RV64, _P),
    ("divuw", bits(OP_32, 5, 0x01), R, "div", RV64, _P),
    ("remw", bits(OP_32, 6, 0x01), R, "div", RV64, _P),
    ("remuw", bits(OP_32, 7, 0x01), R, "div", RV64, _P),
    # ---- Zicsr
    ("csrrw", bits(SYSTEM, 1), CSR, "csr", BOTH, _C),
    ("csrrs", bits(SYSTEM, 2), CSR, "csr", BOTH, _C),
    ("csrrc", bits(SYSTEM, 3), CSR, "csr", BOTH, _C),
    ("csrrwi", bits(SYSTEM, 5), CSRI, "csr", BOTH, _C),
    ("csrrsi", bits(SYSTEM, 6), CSRI, "csr", BOTH, _C),
    ("csrrci", bits(SYSTEM, 7), CSRI, "csr", BOTH, _C),
    # ---- Zba
    ("sh1add", bits(OP, 2, 0x10), R, "alu", BOTH, _P),
    ("sh2add", bits(OP, 4, 0x10), R, "alu", BOTH, _P),
    ("sh3add", bits(OP, 6, 0x10), R, "alu", BOTH, _P),
    ("add.uw", bits(OP_32, 0, 0x04), R, "alu", RV64, _P),
    ("sh1add.uw", bits(OP_32, 2, 0x10), R, "alu", RV64, _P),
    ("sh2add.uw", bits(OP_32, 4, 0x10), R, "alu", RV64, _P),
    ("sh3add.uw", bits(OP_32, 6, 0x10), R, "alu", RV64, _P),
    ("slli.uw", bits(OP_IMM_32, 1, f6=0x02), SH, "alu", RV64, _P),
    # ---- Zbb
    ("andn", bits(OP, 7, 0x20), R, "alu", BOTH, _P),
    ("orn", bits(OP, 6, 0x20), R, "alu", BOTH, _P),
    ("xnor", bits(OP, 4, 0x20), R, "alu", BOTH, _P),
    ("clz", bits(OP_IMM, 1, f12=0x600), U, "alu", BOTH, _P),
    ("ctz", bits(OP_IMM, 1, f12=0x601), U, "alu", BOTH, _P),
    ("cpop", bits(OP_IMM, 1, f12=0x602), U, "alu", BOTH, _P),
    ("sext.b", bits(OP_IMM, 1, f12=0x604), U, "alu", BOTH, _P),
    ("sext.h", bits(OP_IMM, 1, f12=0x605), U, "alu", BOTH, _P),
    ("max", bits(OP, 6, 0x05), R, "alu", BOTH, _P),
    ("maxu", bits(OP, 7, 0x05), R, "alu", BOTH, _P),
    ("min", bits(OP, 4, 0x05), R, "alu", BOTH, _P),
    ("minu", bits(OP, 5, 0x05), R, "alu", BOTH, _P),
    ("zext.h", bits(OP, 4, 0x04, rs2=0), U, "alu", RV32, _P),
    ("zext.h", bits(OP_32, 4, 0x04, rs2=0), U, "alu", RV64, _P),
    ("rol", bits(OP, 1, 0x30), R, "alu", BOTH, _P),
    ("ror", bits(OP, 5, 0x30), R, "alu", BOTH, _P),
    ("rori", bits(OP_IMM, 5, 0x30), SH, "alu", RV32, _P),
    ("rori", bits(OP_IMM, 5, f6=0x18), SH, "alu", RV64, _P),
    ("orc.b", bits(OP_IMM, 5, f12=0x287), U, "alu", BOTH, _P),
    ("rev8", bits(OP_IMM, 5, f12=0x698), U, "alu", RV32, _P),
    ("rev8", bits(OP_IMM, 5, f12=0x6B8), U, "alu", RV64, _P),
    ("clzw", bits(OP_IMM_32, 1, f12=0x600), U, "alu", RV64, _P),
    ("ctzw", bits(OP_IMM_32, 1, f12=0x601), U, "alu", RV64, _P),
    ("cpopw", bits(OP_IMM_32, 1, f12=0x602), U, "alu", RV64, _P),
    ("rolw", bits(OP_32, 1, 0x30), R, "alu", RV64, _P),
    ("rorw", bits(OP_32, 5, 0x30), R, "alu", RV64, _P),
    ("roriw", bits(OP_IMM_32, 5, 0x30), SHW, "alu", RV64, _P),
)

#: Zaamo: funct5 of each operation; ``.w`` on both, ``.d`` on RV64 (aq/rl as a suffix).
AMO_FUNCT5 = (("amoswap", 0x01), ("amoadd", 0x00), ("amoxor", 0x04), ("amoand", 0x0C),
              ("amoor", 0x08), ("amomin", 0x10), ("amomax", 0x14), ("amominu", 0x18),
              ("amomaxu", 0x1C))


def _amo_rows() -> list[Row]:
    rows: list[Row] = []
    for size, f3, xlens in ((".w", 2, BOTH), (".d", 3, RV64)):
        for name, f5 in AMO_FUNCT5:
            rows.append((name + size, bits(AMO, f3, f5=f5), AMO_SYNTAX, "amo", xlens, _A))
    return rows


ALL_ROWS = ROWS + tuple(_amo_rows())

TIMING = {"default": 1, "alu": 1, "mul": 1, "div": 1, "load": 1, "store": 1, "amo": 1,
          "branch": 1, "jump": 1, "csr": 1, "system": 1, "trap": 1}


def encodings(xlen: int) -> tuple[Encoding, ...]:
    """The base encoding table for ``xlen`` (32 or 64)."""
    fns = semantics.functions(xlen)
    out = []
    for mnemonic, (match, mask), syntax, timing, xlens, flags in ALL_ROWS:
        if xlen not in xlens:
            continue
        suffix = "aqrl" if "amo" in flags else None
        out.append(Encoding(mnemonic, match, mask, syntax, fns[mnemonic], timing,
                            flags | {f"rv{xlen}"}, suffix=suffix))
    return tuple(out)


# ---------------------------------------------------------------------------- refine

def refine(ins: Any, peek: Any) -> None:
    """Specialise a decoded base instruction once, when it enters the decode cache.

    Precomputes branch and jump targets, link values and ``lui``/``auipc`` results;
    turns ``pure`` instructions writing x0 into nops; and installs the
    instruction-address-misaligned trap for words at addresses that are not 4-byte
    aligned and for control transfers to such addresses.  Rows of extensions (without
    the base table's ``rv32``/``rv64`` flag) are left alone.
    """
    enc = ins.encoding
    flags = enc.flags
    if ins.address & 3:
        ins.run = semantics.misaligned_fetch
        return
    if "rv64" in flags:
        xlen = 64
    elif "rv32" in flags:
        xlen = 32
    else:
        return
    mask = (1 << xlen) - 1
    name = enc.mnemonic
    if "branch" in flags:
        ins.target = (ins.address + ins.boff) & mask
        if ins.target & 3:
            ins.taken = ins.run
            ins.run = semantics.misaligned_branch
        return
    if name == "jal":
        ins.target = (ins.address + ins.joff) & mask
        ins.link = (ins.address + 4) & mask
        if ins.target & 3:
            ins.run = semantics.misaligned_jump
        elif not ins.rd:
            ins.run = semantics.functions(xlen)["j"]
        return
    if name == "jalr":
        ins.link = (ins.address + 4) & mask
        return
    if "pure" in flags:
        if not ins.rd:
            ins.run = semantics.nop
        elif name == "lui":
            ins.value = (((ins.imm20 << 12) ^ 0x8000_0000) - 0x8000_0000) & mask
        elif name == "auipc":
            ins.value = (ins.address + (((ins.imm20 << 12) ^ 0x8000_0000) - 0x8000_0000)) & mask
        elif name == "addi" and not ins.rs1:
            ins.value = ins.imm & mask
            ins.run = semantics.set_value
