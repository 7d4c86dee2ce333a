"""Generic table-driven assembler shared by every architecture plugin.

The assembler knows no instruction set.  Everything it needs comes from the
:class:`~tessera.isa.description.Architecture`: the mnemonics and operand syntax of
each form (``Encoding.syntax`` such as ``"{rd}, {imm}({rs1})"``), how each operand
is written (``Field.kind``), register names, word size, endianness and comment
characters.  So an architecture gets an assembler for free, and one whose encoding
table assembles is one whose table round-trips through the disassembler.

Design:

* **Parsing.**  Each source line becomes one :class:`Statement` (labels, then an
  assignment, a directive or an instruction) before any pass runs, so syntax errors
  are found once and every later error can name ``file:line:column``.
* **Passes.**  Every instruction form has the size of one word, so addresses are
  known without encoding anything.  Layout passes walk the statements to give every
  label its address; they repeat until the start addresses of floating sections
  (sections placed after the previous one) stop moving, which normally takes one or
  two rounds.  A final pass evaluates every operand with all symbols known, encodes
  and emits bytes.  Values that decide the layout (``.org``, ``.space``, ``.align``)
  must therefore be computable when first met; operand values may refer forward.
* **Forms.**  An instruction line is tried against each form of its mnemonic in table
  order.  A form's syntax template is matched with its literal text required
  (punctuation and words, case-insensitive) and each ``{slot}`` capturing one balanced operand; the
  operand is then read by its field's kind.  A last slot written ``{slot?}`` may be
  left out with the separator before it, and a form with a suffix field is also
  found by ``mnemonic.suffix`` (``ld.b``); both take the field default when not
  written, mirroring what the disassembler leaves out.  When no form fits, the error
  of the form that got furthest is reported (a value that does not fit beats a bad
  register, which beats operands of the wrong shape); for an overloaded mnemonic
  whose forms all failed on their operands, the error lists every form.
* **Output.**  Bytes are collected as ``(address, data)`` pieces, checked for
  overlaps and merged into the sorted segments of a :class:`Program`.
* **Errors.**  A failing statement is recorded and the passes go on (it keeps the
  room it would take, so later addresses are real); every error is reported at
  once, in source order, as one exception that is the first error and lists all in
  ``errors`` (:mod:`~tessera.isa.asm.report`).  Uses of a name whose definition
  failed are not reported again.
* **Local labels.**  GNU numeric labels (``1:``, referenced as ``1b``/``1f``) get one
  internal name per definition after parsing; the symbol view of each statement
  resolves a reference to the right one.

The language itself (for users and plugin authors) is described in docs/assembler.md.

Architecture plugins extend the assembler by subclassing :class:`Assembler` and
setting ``Architecture.assembler``: override :meth:`Assembler.expand` for
pseudo-instructions, :meth:`Assembler.directive` for extra directives and
:meth:`Assembler.parse_operand` for unusual operand spellings.

The package is split by job:

* :mod:`~tessera.isa.asm.program`: the :class:`Program` output record;
* :mod:`~tessera.isa.asm.syntax`: statements, operand splitting and syntax templates;
* :mod:`~tessera.isa.asm.layout`: sections, passes and the hook :class:`Context`;
* :mod:`~tessera.isa.asm.forms`: mnemonic lookup (suffixes), optional-operand variants;
* :mod:`~tessera.isa.asm.assembler`: the :class:`Assembler` driver and :func:`assemble`;
* :mod:`~tessera.isa.asm.directives`: the built-in directives, mixed into the assembler;
* :mod:`~tessera.isa.asm.report`: the exception carrying every error of a run.

Import from ``tessera.isa.asm`` itself; the modules are an implementation detail.
"""

# The limits (MAX_*, SECTION_ALIGN) stay importable from here but, as before, are not
# part of ``import *``; ``X as X`` marks them as deliberate re-exports.
from tessera.isa.asm.assembler import MAX_EXPANSION_DEPTH as MAX_EXPANSION_DEPTH
from tessera.isa.asm.assembler import Assembler, assemble
from tessera.isa.asm.layout import MAX_LAYOUT_ROUNDS as MAX_LAYOUT_ROUNDS
from tessera.isa.asm.layout import SECTION_ALIGN as SECTION_ALIGN
from tessera.isa.asm.layout import Context
from tessera.isa.asm.program import MAX_OUTPUT as MAX_OUTPUT
from tessera.isa.asm.program import Program
from tessera.isa.asm.syntax import Statement, split_operands

__all__ = ["Assembler", "Context", "Program", "Statement", "assemble", "split_operands"]
