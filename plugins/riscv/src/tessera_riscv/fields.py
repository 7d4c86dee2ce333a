"""The integer register file and the instruction fields of the RISC-V base formats.

Field names are part of the extension point: an extension's encoding rows may use
any of them (``rd``, ``rs1``, ``rs2``, ``imm`` …) without redefining them.  Bit
pieces are listed most significant first, as :class:`tessera.isa.Field` wants:
the B-type offset ``imm[12|10:5|4:1|11]`` is ``"31,7,30:25,11:8"`` with ``scale=1``.
"""

from __future__ import annotations

from tessera.isa import Field, RegisterFile
from tessera_riscv import csrs

#: ABI names, the canonical (disassembly) names of x0..x31.
ABI_NAMES = ("zero", "ra", "sp", "gp", "tp", "t0", "t1", "t2", "s0", "s1",
             "a0", "a1", "a2", "a3", "a4", "a5", "a6", "a7",
             "s2", "s3", "s4", "s5", "s6", "s7", "s8", "s9", "s10", "s11",
             "t3", "t4", "t5", "t6")

#: FENCE predecessor/successor sets: bit 3 = I, 2 = O, 1 = R, 0 = W; the empty set is "0".
FENCE_SETS = tuple("".join(c for bit, c in ((8, "i"), (4, "o"), (2, "r"), (1, "w")) if v & bit) or "0"
                   for v in range(16))

#: AMO ordering suffix (bits 26:25 = aq, rl): ``amoadd.w.aqrl``; the plain mnemonic is 0.
AQRL_NAMES = ("", "rl", "aq", "aqrl")


def register_file(xlen: int) -> RegisterFile:
    """``x0``–``x31``, named by the ABI; ``x<n>`` and ``fp`` are accepted too."""
    aliases = {f"x{i}": i for i in range(32)}
    aliases["fp"] = 8
    return RegisterFile("x", 32, xlen, names=ABI_NAMES, aliases=aliases, zero=0)


def fields(xlen: int) -> tuple[Field, ...]:
    """Every field of the base table for ``xlen`` (32 or 64)."""
    return (
        Field("rd", "11:7", kind="reg", regfile="x"),
        Field("rs1", "19:15", kind="reg", regfile="x"),
        Field("rs2", "24:20", kind="reg", regfile="x"),
        Field("imm", "31:20", kind="imm", signed=True),               # I-type
        Field("simm", "31:25,11:7", kind="imm", signed=True),         # S-type
        Field("boff", "31,7,30:25,11:8", kind="pcrel", scale=1),      # B-type
        Field("joff", "31,19:12,20,30:21", kind="pcrel", scale=1),    # J-type
        Field("imm20", "31:12", kind="uimm"),                         # U-type (lui, auipc)
        Field("shamt", "24:20" if xlen == 32 else "25:20", kind="uimm"),
        Field("shamtw", "24:20", kind="uimm"),                        # RV64 *W shifts
        Field("csr", "31:20", kind="enum", names=csrs.operand_names(xlen)),
        Field("zimm", "19:15", kind="uimm"),                          # csrr*i
        Field("pred", "27:24", kind="enum", names=FENCE_SETS),
        Field("succ", "23:20", kind="enum", names=FENCE_SETS),
        Field("aqrl", "26:25", kind="enum", names=AQRL_NAMES, default=0),
    )
