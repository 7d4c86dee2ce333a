"""The instruction formats every extension's encoding rows are written in.

Major opcodes, the masks of the fixed fields (funct3, funct7 …), the operand syntax
of each format, and :class:`Row`, one line of an extension's table.  The extension
modules of :mod:`tessera_riscv.semantics` write their rows with these next to their
functions; :mod:`tessera_riscv.encoding` assembles the rows into one table per XLEN
(and re-exports these names, the ones other plugins' rows use: ``CUSTOM_0``, ``F3`` …).
This module imports neither, so both can import it.
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType
from typing import Any, NamedTuple

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

#: The XLENs a row exists for.
BOTH, RV32, RV64 = (32, 64), (32,), (64,)

#: The flag of rows whose instruction only writes ``rd`` (with ``rd`` = x0 it is a nop).
PURE = frozenset({"pure"})


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


class Row(NamedTuple):
    """One line of an extension's encoding table, for the XLENs in ``xlens``.

    ``semantics`` names the function the row runs: a
    :class:`~tessera.isa.SemanticRef` (``REGISTRY.ref("nop")``), or, for a function
    written once and copied per XLEN, an
    :class:`~tessera_riscv.semantics.xlen.XlenRef` (``PER_XLEN.ref("add")``: ``rv32_add``
    in the RV32 table, ``rv64_add`` in the RV64 one).  ``variants`` are the functions
    :func:`tessera_riscv.encoding.refine` may install instead, besides the ones the
    table derives from the flags (see :func:`tessera_riscv.encoding.encodings`).
    """

    mnemonic: str
    bits: tuple[int, int]
    syntax: str
    timing: str
    xlens: tuple[int, ...]
    flags: frozenset[str]
    semantics: Any
    variants: Mapping[str, Any] = MappingProxyType({})
