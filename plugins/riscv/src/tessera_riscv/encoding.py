"""The encoding table: one per XLEN, assembled from the extensions' rows, and ``refine``.

Each extension module of :mod:`tessera_riscv.semantics` (``base``, ``system``, ``m``,
``zicsr``, ``zba``, ``zbb``, ``zaamo``) keeps its rows next to its functions: a
:class:`~tessera_riscv.formats.Row` names a mnemonic, its fixed bits (major opcode,
funct3, funct7/funct6/funct12 …), its operand syntax, the timing class, the XLENs it
exists for, free-form flags and the function it runs.  :func:`encodings` turns the
rows for one XLEN into :class:`tessera.isa.Encoding` records, in a fixed order;
RV32 and RV64 differ only in which rows exist, in the width of the shift-amount
field and in which copy of a per-XLEN function a row names.  The formats' names
(``CUSTOM_0``, ``F3``, ``bits`` …) live in :mod:`tessera_riscv.formats` and are
re-exported here, where other plugins' rows have always found them.

Bits that are neither fixed nor an operand are ignored when decoding, as the
specification asks for FENCE's ``fm``/``rs1``/``rd`` and FENCE.I's immediate and
registers; the assembler writes them as 0.

Flags used by :func:`refine` (and shown to tools):

* ``rv32`` / ``rv64`` — a row of the base table for that XLEN;
* ``pure`` — the instruction only writes ``rd``: with ``rd`` = x0 it becomes a nop;
* ``branch``, ``jump`` — control transfers (their targets are precomputed);
* ``load``, ``store``, ``amo``, ``csr``, ``system``, ``alias``.

Every function ``refine`` may install instead of a row's own is one of the row's
declared ``variants`` (``tessera semantics --arch rv64im`` lists them):

* ``misaligned-fetch`` (every row, extensions' rows included: :func:`with_fetch_trap`)
  — the instruction sits at an address that is not 4-byte aligned;
* ``misaligned-target`` (branches, ``jal``) — the precomputed target is misaligned;
* ``x0`` (``pure`` rows: :func:`~tessera_riscv.semantics.base.nop`; ``jal``: ``j``)
  — ``rd`` is x0;
* ``li`` (``addi``) — ``addi rd, x0, imm``: the value is precomputed.
"""

from __future__ import annotations

from typing import Any

import attrs

from tessera.isa import ILLEGAL, Encoding, swap
from tessera_riscv import traps
from tessera_riscv.formats import (  # re-exported: other plugins' rows are written with these
    AMO,
    AUIPC,
    BRANCH,
    CUSTOM_0,
    CUSTOM_1,
    CUSTOM_2,
    CUSTOM_3,
    F3,
    F5,
    F6,
    F7,
    IMM12,
    JAL,
    JALR,
    LOAD,
    LUI,
    MISC_MEM,
    OP,
    OP_32,
    OP_IMM,
    OP_IMM_32,
    OPCODE,
    RS2,
    STORE,
    SYSTEM,
    Row,
    bits,
)
from tessera_riscv.semantics import REGISTRY, base, m, system, zaamo, zba, zbb, zicsr
from tessera_riscv.semantics.xlen import XlenRef

__all__ = [
    "AMO", "AUIPC", "BRANCH", "CUSTOM_0", "CUSTOM_1", "CUSTOM_2", "CUSTOM_3", "F3", "F5", "F6", "F7", "IMM12",
    "JAL", "JALR", "LOAD", "LUI", "MISC_MEM", "OP", "OP_32", "OP_IMM", "OP_IMM_32", "OPCODE", "RS2", "STORE",
    "SYSTEM", "ROWS", "TIMING", "Row", "bits", "encodings", "refine", "with_fetch_trap",
]

#: The whole table, in decoding and listing order (the order the single table had).
ROWS: tuple[Row, ...] = (base.ROWS + system.ROWS + base.WORD_ROWS + m.ROWS + zicsr.ROWS + zba.ROWS
                         + zbb.ROWS + zaamo.ROWS)

TIMING = {"default": 1, "alu": 1, "mul": 1, "div": 1, "load": 1, "store": 1, "amo": 1,
          "branch": 1, "jump": 1, "csr": 1, "system": 1, "trap": 1}

MISALIGNED_FETCH = REGISTRY.ref("misaligned_fetch")
_IMPLIED = {"pure": ("x0", REGISTRY.ref("nop")), "branch": ("misaligned-target", REGISTRY.ref("misaligned_branch"))}


def _at(xlen: int, fn: Any) -> Any:
    """A row's function for the ``xlen`` table: the copy an :class:`XlenRef` names, else itself."""
    return fn.at(xlen) if isinstance(fn, XlenRef) else fn


def _variants(xlen: int, row: Row) -> dict[str, Any]:
    """The row's declared variants, those its flags imply, and ``misaligned-fetch``."""
    out = {name: _at(xlen, fn) for name, fn in row.variants.items()}
    for flag in sorted(row.flags & _IMPLIED.keys()):
        name, fn = _IMPLIED[flag]
        out.setdefault(name, fn)
    out.setdefault("misaligned-fetch", MISALIGNED_FETCH)
    return out


def encodings(xlen: int) -> tuple[Encoding, ...]:
    """The base encoding table for ``xlen`` (32 or 64)."""
    out = []
    for row in ROWS:
        if xlen not in row.xlens:
            continue
        match, mask = row.bits
        suffix = "aqrl" if "amo" in row.flags else None
        out.append(Encoding(row.mnemonic, match, mask, row.syntax, _at(xlen, row.semantics), row.timing,
                            row.flags | {f"rv{xlen}"}, suffix=suffix, variants=_variants(xlen, row)))
    return tuple(out)


def with_fetch_trap(enc: Encoding) -> Encoding:
    """``enc`` (an extension's row) declaring the ``misaligned-fetch`` variant every RISC-V row has."""
    if enc.variant("misaligned-fetch") is not None:
        return enc
    return attrs.evolve(enc, variants=(*enc.variants, ("misaligned-fetch", MISALIGNED_FETCH)))


# ---------------------------------------------------------------------------- refine

def refine(ins: Any, peek: Any) -> None:
    """Specialise a decoded base instruction once, when it enters the decode cache.

    Precomputes branch and jump targets, link values and ``lui``/``auipc``/``li``
    results, and installs the row's declared variants (:func:`tessera.isa.swap`):
    ``x0`` for pure instructions writing x0 and ``jal x0``, ``li`` for
    ``addi rd, x0, imm``, and the instruction-address-misaligned traps for words at
    addresses that are not 4-byte aligned (``misaligned-fetch``, any row) and for
    control transfers to such addresses (``misaligned-target``).  An undecodable word
    at such an address takes the misaligned trap too (its trap changes, not its
    function).  Rows of extensions (without the base table's ``rv32``/``rv64`` flag)
    are otherwise left alone.
    """
    enc = ins.encoding
    if ins.address & 3:
        if enc is ILLEGAL:
            ins.trap = traps.trap(traps.INSTRUCTION_MISALIGNED, ins.address)
        else:
            swap(ins, "misaligned-fetch")
        return
    flags = enc.flags
    if "rv64" in flags:
        mask = (1 << 64) - 1
    elif "rv32" in flags:
        mask = (1 << 32) - 1
    else:
        return
    name = enc.mnemonic
    if "branch" in flags:
        ins.target = (ins.address + ins.boff) & mask
        if ins.target & 3:
            ins.taken = ins.run  # the row's own function says whether the branch is taken
            swap(ins, "misaligned-target")
        return
    if name == "jal":
        ins.target = (ins.address + ins.joff) & mask
        ins.link = (ins.address + 4) & mask
        if ins.target & 3:
            swap(ins, "misaligned-target")
        elif not ins.rd:
            swap(ins, "x0")
        return
    if name == "jalr":
        ins.link = (ins.address + 4) & mask
        return
    if "pure" in flags:
        if not ins.rd:
            swap(ins, "x0")
        elif name == "lui":
            ins.value = (((ins.imm20 << 12) ^ 0x8000_0000) - 0x8000_0000) & mask
        elif name == "auipc":
            ins.value = (ins.address + (((ins.imm20 << 12) ^ 0x8000_0000) - 0x8000_0000)) & mask
        elif name == "addi" and not ins.rs1:
            ins.value = ins.imm & mask
            swap(ins, "li")
