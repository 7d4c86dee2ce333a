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

from tessera.isa import Field

SIZES = ("b", "w", "t", "o", "h", "s5", "s6", "s7")

FIELDS = (
    # register specifiers {T, R[5:0]}
    Field("rt", "12:6", kind="reg", regfile="reg"),
    Field("ra", "19:13", kind="reg", regfile="reg"),
    Field("rb", "26:20", kind="reg", regfile="reg"),
    Field("rc", "33:27", kind="reg", regfile="reg"),
    # size and lane mask, present in most formats
    Field("sz", "41:39", kind="enum", names=SIZES, default=2),
    Field("mask", "47:42", kind="reg", regfile="r", default=0),
    # immediates and displacements (signed)
    Field("imm", "38:20", kind="imm", signed=True),
    Field("imm13", "32:20", kind="imm", signed=True),
    Field("bdisp", "38:22", kind="pcrel"),
    # branch operands (scalar only)
    Field("bra", "18:13", kind="reg", regfile="r"),
    Field("brb", "11:6", kind="reg", regfile="r"),
    Field("bit", "11:6", kind="uimm"),
    # R2 sub-fields
    Field("fill", "33:33", kind="uimm", default=0),
    Field("rm", "36:34", kind="enum", names=("rne", "rtz", "rm2", "rm3", "rm4", "rm5", "rm6", "rm7"),
          default=0),
    Field("shamt", "25:20", kind="uimm"),
    Field("remask_e", "25:25", kind="uimm"),
    Field("amt", "24:20", kind="uimm"),
    # CSR
    Field("csr", "33:20", kind="uimm"),
    # call/jump
    Field("target", "47:8", kind="uimm"),
    Field("reltarget", "47:8", kind="pcrel"),
    Field("lk", "7:6", kind="enum", names=("lk0", "lr1", "lr2", "lk3")),
    # postfix: immediate bits {47:6, 2:0}
    Field("pimm", "47:6,2:0", kind="imm", signed=True),
    # queues, cache, REX
    Field("q", "16:13", kind="uimm"),
    Field("ic", "8:6", kind="uimm"),
    Field("dc", "11:9", kind="uimm"),
    Field("tm", "7:6", kind="uimm"),
    Field("irq4", "11:8", kind="uimm"),
    Field("v", "33:33", kind="uimm"),
    # compare selector N: CMP/FCMP bits 30:27, CMPI/FCMPI bits 36:33 (generic rows only)
    Field("n", "30:27", kind="uimm"),
    Field("ni", "36:33", kind="uimm"),
)

FIELD_MAP = {f.name: f for f in FIELDS}
