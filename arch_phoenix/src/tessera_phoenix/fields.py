"""Instruction fields of the 48-bit encoding (spec 2.2–2.3), by name.

These names are the operand attributes semantic functions read (``ins.rt``,
``ins.imm`` …).  7-bit register specifiers use the ``reg`` naming file (r0..r63 for
T = 0, v0..v63 for T = 1); branch operands are 6-bit scalar registers.

The complete immediate of a form (its own field merged with any postfix, spec 2.4)
is not a field: :func:`tessera_phoenix.encoding.refine` stores it as ``ins.value``.
``n``/``ni`` (the compare selector N) and ``fill``/``rm`` appear as operands only in
the generic rows that spell out a value the named mnemonics do not cover.
"""

from __future__ import annotations

from typing import Any

from tessera.isa import Field

SIZES = ("b", "w", "t", "o", "h", "s5", "s6", "s7")
ROUNDING = ("rne", "rtz", "rm2", "rm3", "rm4", "rm5", "rm6", "rm7")


def _fields(kind: str, rows: tuple[tuple[str, str], ...], **common: Any) -> tuple[Field, ...]:
    """One :class:`Field` of ``kind`` per (name, bits) row, all with the same options."""
    return tuple(Field(name, bits, kind=kind, **common) for name, bits in rows)


FIELDS = (
    # register specifiers {T, R[5:0]}
    *_fields("reg", (("rt", "12:6"), ("ra", "19:13"), ("rb", "26:20"), ("rc", "33:27")), regfile="reg"),
    # size and lane mask, present in most formats
    Field("sz", "41:39", kind="enum", names=SIZES, default=2),
    Field("mask", "47:42", kind="reg", regfile="r", default=0),
    # immediates and displacements (signed)
    *_fields("imm", (("imm", "38:20"), ("imm13", "32:20")), signed=True),
    Field("bdisp", "38:22", kind="pcrel"),
    # branch operands (scalar only)
    *_fields("reg", (("bra", "18:13"), ("brb", "11:6")), regfile="r"),
    Field("bit", "11:6", kind="uimm"),
    # R2 sub-fields
    Field("fill", "33:33", kind="uimm", default=0),
    Field("rm", "36:34", kind="enum", names=ROUNDING, default=0),
    *_fields("uimm", (("shamt", "25:20"), ("remask_e", "25:25"), ("amt", "24:20"))),
    # CSR
    Field("csr", "33:20", kind="uimm"),
    # call/jump
    Field("target", "47:8", kind="uimm"),
    Field("reltarget", "47:8", kind="pcrel"),
    Field("lk", "7:6", kind="enum", names=("lk0", "lr1", "lr2", "lk3")),
    # postfix: immediate bits {47:6, 2:0}
    Field("pimm", "47:6,2:0", kind="imm", signed=True),
    # queues, cache, REX
    *_fields("uimm", (("q", "16:13"), ("ic", "8:6"), ("dc", "11:9"), ("tm", "7:6"), ("irq4", "11:8"),
                      ("v", "33:33"))),
    # compare selector N: CMP/FCMP bits 30:27, CMPI/FCMPI bits 36:33 (generic rows only)
    *_fields("uimm", (("n", "30:27"), ("ni", "36:33"))),
)

FIELD_MAP = {f.name: f for f in FIELDS}
