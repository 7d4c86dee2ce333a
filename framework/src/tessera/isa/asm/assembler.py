"""The :class:`Assembler`: statements, extension points and instruction forms.

This is the driver that ties the other modules together: it parses source lines
into :class:`~tessera.isa.asm.syntax.Statement` objects, runs the layout and final
passes (:mod:`tessera.isa.asm.layout`), dispatches each statement to an
assignment, a directive (plugin hook first, then
:mod:`tessera.isa.asm.directives`) or an instruction, and encodes instructions.

An instruction line is tried against each form its mnemonic may stand for
(:mod:`tessera.isa.asm.forms` resolves mnemonic suffixes such as ``ld.b`` and the
variants of a form with an optional last operand) in table order; when none fits,
the error of the form that got furthest is reported (a value that does not fit
beats a bad operand, which beats operands of the wrong shape; between two bad
operands, the one further into the line wins).  When the mnemonic has several forms
and none got past its operands' spelling, the error lists every form as written
(``ld expects one of: ld x, byte | ld i, nnn | ...``), and an operand that is a
literal word of another form (``i``) is never called an unknown register.

Errors do not stop the assembly: every statement that fails is recorded and the
passes continue (:mod:`tessera.isa.asm.layout` keeps what recovery needs), so one
run reports every error, in source order, as one exception
(:mod:`tessera.isa.asm.report`).  Numeric local labels (``1:``, ``1b``, ``1f``) are
numbered here, once, after parsing.

Architecture plugins extend the assembler here, by subclassing :class:`Assembler`
and overriding :meth:`~Assembler.expand`, :meth:`~Assembler.directive` or
:meth:`~Assembler.parse_operand`; that is why these live together in one class.
"""

from __future__ import annotations

from collections import ChainMap
from typing import NamedTuple

import attrs

from tessera.errors import AssemblyError, EncodeError
from tessera.isa.asm.directives import _BUILTINS, BuiltinDirectives
from tessera.isa.asm.forms import Candidate, FormTable, UnknownSuffix
from tessera.isa.asm.layout import MAX_LAYOUT_ROUNDS, Context, _Pass, _Symbols, local_name
from tessera.isa.asm.program import Program
from tessera.isa.asm.report import combine
from tessera.isa.asm.syntax import (
    _ASSIGN,
    _LABEL,
    _SPACE,
    _WORD,
    Statement,
    _match_template,
    _num,
    _short,
    _skip_quoted,
    _skip_space,
    _suggest,
    blank_block_comments,
)
from tessera.isa.decoder import Decoder
from tessera.isa.description import Architecture, Encoding, Field
from tessera.isa.encoder import Encoder
from tessera.isa.expr import ExpressionError, evaluate, local_label

__all__ = ["MAX_EXPANSION_DEPTH", "Assembler", "assemble"]

#: How deep pseudo-instructions may expand into further pseudo-instructions.
MAX_EXPANSION_DEPTH = 8


class _Attempt(NamedTuple):
    """One form tried on an instruction line.

    ``score`` orders failures (higher got further): ``(0, position)`` operands of the
    wrong shape, ``(1, position)`` an operand that does not read (bad register,
    bad expression), ``(2, position)`` a value that does not fit, ``(3, k)`` fields
    that collide, ``(4, 0)`` success; ``position`` is where the problem is in the
    operand text.  ``operand`` is the text of the operand that did not
    read, if that is what failed.
    """

    word: int
    score: tuple[int, int]
    error: AssemblyError | None
    operand: str = ""


class Assembler(BuiltinDirectives):
    """Two-pass assembler driven by an architecture's encoding table.

    Use :func:`assemble` or ``Assembler(arch).assemble(text)``.  To extend it for an
    architecture, subclass and set ``Architecture.assembler`` to the subclass::

        class MyAssembler(Assembler):
            def expand(self, mnemonic, operands, location):
                if mnemonic == "mv":                      # mv rd, rs -> addi rd, rs, 0
                    return [f"addi {operands}, 0"]
                return None

            def directive(self, name, args, ctx):
                if name == ".byte3":                      # three copies of a byte
                    value = ctx.value()                   # 0 in layout passes if undefined
                    if not -128 <= value <= 255:
                        raise ctx.error(f"{value} does not fit in a byte")
                    ctx.emit(bytes([value & 0xFF]) * 3)
                    return True
                return False

    Hooks run in every pass and must yield the same number of bytes each time.
    During :meth:`assemble`, ``self.context`` is the :class:`Context` of the statement
    being processed, so ``expand`` can evaluate operands with ``self.context.value``
    (pass ``layout=True`` when the value decides how many lines are produced).
    """

    def __init__(self, arch: Architecture, decoder: Decoder | None = None) -> None:
        self.arch = arch
        #: Used to read every encoded word back, catching forms whose fields collide.
        self.decoder = decoder if decoder is not None else Decoder(arch)
        self.encoder = Encoder(arch)
        self.file = "<input>"
        self.context: Context | None = None
        self._fields = arch.field_map
        self._files = arch.register_file_map
        self._table = FormTable(arch, self.assembles)
        self._space = 1 << arch.address_bits
        #: numeric local label -> indices of the statements defining it, in order
        self._local_labels: dict[str, list[int]] = {}
        #: names whose definition failed in the layout passes (see ``_Pass.poisoned``)
        self._poisoned: set[str] = set()

    # -- extension points ------------------------------------------------------------
    def assembles(self, encoding: Encoding) -> bool:
        """May source text be assembled into row ``encoding``?  Every row by default.

        Asked once per row when the assembler is made.  Override to keep out rows that
        exist for decoding only (Tensix's rows for words with reserved bits set, which
        share their syntax with the clean row).
        """
        return True

    def expand(self, mnemonic: str, operands_text: str, location: int) -> list[str] | None:
        """Rewrite a pseudo-instruction into source lines, or return ``None``.

        Called for every instruction line before the encoding table is consulted, with
        the lower-cased mnemonic, the operand text and the address of the line.  The
        returned lines are assembled in place (they may be directives or further
        pseudo-instructions, but not labels).  Errors in them are reported at the
        original line.
        """
        return None

    def directive(self, name: str, args_text: str, ctx: Context) -> bool:
        """Handle directive ``name`` (lower-cased, with its dot); return ``True`` if handled.

        Called before the built-in directives, so a plugin may also redefine one.
        Returning ``False`` falls back to the built-ins, then to an "unknown directive"
        error.  See :class:`Context` for what a handler can do.
        """
        return False

    def parse_operand(self, field: Field, text: str, ctx: Context, offset: int) -> int:
        """The value ``field`` stores for operand ``text`` (``offset`` into ``ctx.args``).

        Registers by name or alias, enum names case-insensitively, anything else as
        an expression; a ``pcrel`` expression is the absolute target and the result
        the offset from the instruction, wrapped to the address space.  Override for
        other spellings (``#imm``, ``%reg`` …).
        """
        if field.kind == "reg":
            assert field.regfile is not None  # Field refuses a reg field without a regfile
            regs = self._files[field.regfile]
            index = regs.index(text)
            if index is None:
                names = [n.lower() for n in (*regs.names, *regs.aliases)]
                raise ctx.error(f"unknown register {_short(text)}{_suggest(text, names)}", offset)
            return index
        if field.kind == "enum":
            for i, name in enumerate(field.names):
                if name.lower() == text.lower():
                    return i
        value = ctx.value(text, offset)
        if field.kind != "pcrel":
            return value
        if not 0 <= value < self._space:
            raise ctx.error(f"target {_num(value)} is outside the {self.arch.address_bits}-bit "
                            "address space", offset)
        delta = (value - ctx.location) % self._space
        return delta - self._space if delta >= self._space >> 1 else delta

    # -- driver ----------------------------------------------------------------------
    def assemble(self, text: str, *, file: str = "<input>", base: int = 0) -> Program:
        """Assemble ``text``; ``.text`` starts at ``base``.

        Errors are reported all at once: the exception (an :class:`AssemblyError`,
        an :class:`EncodeError` when the first problem is one) is the first error in
        source order and lists every error in ``errors`` (:mod:`tessera.isa.asm.report`).
        """
        self.file = file
        if not 0 <= base < self._space:
            raise combine([AssemblyError(f"base address {_num(base)} is outside the address "
                                         "space", file=file)])
        statements, errors = self._parse(text)
        self._poisoned = set()
        origins: dict[str, int] = {}
        for _ in range(MAX_LAYOUT_ROUNDS):
            layout = self._walk(statements, _Pass(self, final=False, base=base,
                                                  origins=origins, known={}))
            origins = layout.next_origins()
            if origins == layout.used:
                break
        else:
            sec = next(s for s in layout.sections.values() if s.name in layout.used)
            errors.append(AssemblyError("section placement does not settle (a section's size "
                                        "depends on where it is placed)",
                                        file=file, line=sec.line, column=1))
            raise combine(_in_source_order(errors))
        known = self._resolve(layout)
        self._poisoned = layout.poisoned | {name for name, *_ in layout.deferred
                                            if known.get(name) is None}
        final = self._walk(statements, _Pass(self, final=True, base=base, origins=origins,
                                             known=known), layout)
        errors += layout.errors + final.errors
        if not errors:  # only consequences of failed definitions: they are the errors then
            errors = layout.cascades + final.cascades
        if errors:
            raise combine(_in_source_order(errors))
        for name, sec in final.sections.items():
            before = layout.sections.get(name)
            if before is None or before.extent != sec.extent:
                raise combine([AssemblyError(
                    f"section {name} changed size between passes (a pseudo-instruction or "
                    "directive is not deterministic)", file=file, line=sec.line, column=1)])
        return final.program()

    def _parse(self, text: str) -> tuple[list[Statement], list[AssemblyError]]:
        """Every line as a statement, and the lines' syntax errors.

        ``/* ... */`` comments are blanked first (they may span lines).  A line that does not parse keeps its labels (so uses of them are not errors
        too) and produces nothing.  Numeric local labels get one internal name per
        definition (:func:`~tessera.isa.asm.layout.local_name`), in source order.
        """
        statements: list[Statement] = []
        errors: list[AssemblyError] = []
        self._local_labels = {}
        text, unclosed = blank_block_comments(text, self.arch.comment_chars)
        if unclosed is not None:
            errors.append(AssemblyError("unterminated /* comment", file=self.file,
                                        line=unclosed[0], column=unclosed[1]))
        for number, line in enumerate(text.split("\n"), 1):
            try:
                stmt = self.parse_line(line, number)
            except AssemblyError as exc:
                errors.append(exc)
                code = self._strip_comment(line).rstrip(_SPACE)
                stmt = Statement(number, self._labels(code)[0])
            if any(name[0].isdigit() for name, _ in stmt.labels):
                stmt = attrs.evolve(stmt, labels=self._number_labels(stmt.labels, len(statements)))
            statements.append(stmt)
        return statements, errors

    def _number_labels(self, labels: tuple[tuple[str, int], ...], index: int
                       ) -> tuple[tuple[str, int], ...]:
        out = []
        for name, column in labels:
            if name[0].isdigit():
                places = self._local_labels.setdefault(local_label(name), [])
                name = local_name(local_label(name), len(places))
                places.append(index)
            out.append((name, column))
        return tuple(out)

    def parse_line(self, text: str, line: int) -> Statement:
        """Split one source line into labels and a statement (no evaluation)."""
        code = self._strip_comment(text).rstrip(_SPACE)
        labels, pos = self._labels(code)
        pos = _skip_space(code, pos)
        if pos == len(code):
            return Statement(line, labels)
        m = _ASSIGN.match(code, pos)
        kind = "assign" if m else ""
        m = m or _WORD.match(code, pos)
        if m is None:
            raise AssemblyError(f"expected a label, directive or instruction, not {code[pos]!r}",
                                file=self.file, line=line, column=pos + 1)
        name = m.group(1)
        if not kind:
            kind = "directive" if name.startswith(".") else "instruction"
            name = name.lower()
        start = _skip_space(code, m.end())
        return Statement(line, labels, kind, name, m.start(1) + 1, code[start:], start + 1)

    @staticmethod
    def _labels(code: str) -> tuple[tuple[tuple[str, int], ...], int]:
        """The labels at the start of ``code`` with their columns, and where they end."""
        labels, pos = [], 0
        while m := _LABEL.match(code, pos):
            labels.append((m.group(1), m.start(1) + 1))
            pos = m.end()
        return tuple(labels), pos

    def _strip_comment(self, line: str) -> str:
        i = 0
        while i < len(line):
            c = line[i]
            if c in self.arch.comment_chars or line.startswith("//", i):
                return line[:i]
            if c in "\"'":
                i = _skip_quoted(line, i)
            else:
                i += 1
        return line

    def _walk(self, statements: list[Statement], state: _Pass, layout: _Pass | None = None
              ) -> _Pass:
        """One pass over ``statements``; ``layout`` (the final pass only) is the last layout pass.

        A statement that fails is recorded and the walk goes on.  In a layout pass an
        instruction that failed before taking room still takes one word, so later
        addresses are what they would be once it is fixed.  The final pass does not
        redo a statement the layout pass already found wrong, and after a failed
        statement puts the location counter where the layout had it, so no later
        label "moves" and no later distance is off because of an earlier error.
        """
        for index, stmt in enumerate(statements):
            state.index = index
            for name, column in stmt.labels:
                try:
                    state.define(name, state.section.location, "label", stmt.line, column)
                except AssemblyError as exc:
                    state.record(exc)
            if not stmt.kind:
                if layout is None:
                    state.after.append((state.section.name, state.section.location))
                continue
            start = (state.section, state.section.location)
            failed = layout is not None and index in layout.failed
            if not failed:
                try:
                    self._statement(stmt, state, 0)
                except AssemblyError as exc:
                    state.record(exc)
                    failed = True
            if failed:
                state.failed.add(index)
                self._recover(stmt, state, start, layout)
            if layout is None:
                state.after.append((state.section.name, state.section.location))
        return state

    def _recover(self, stmt: Statement, state: _Pass, start: tuple, layout: _Pass | None) -> None:
        """Put the location counter where the failed ``stmt`` should have left it."""
        if layout is not None:
            name, location = layout.after[state.index]
            state.switch(name, stmt.line).location = location
        elif stmt.kind == "instruction" and (state.section, state.section.location) == start:
            try:
                state.put(self.arch.word_bytes, None, stmt.line, stmt.column)
            except AssemblyError:
                pass  # no room for it either; that error is already reported

    def _resolve(self, layout: _Pass) -> dict[str, int | None]:
        """Values for the final pass: layout symbols plus assignments that referred forward.

        Every value is evaluated (none is ``None``); the type is the one the passes'
        symbol lookup (a ``ChainMap`` over ``_Pass.values``) needs.  Each deferred
        assignment is evaluated as from its own statement, so its local label
        references (``1f``) mean what they mean there.
        """
        table: dict[str, int | None] = {k: v for k, v in layout.values.items() if v is not None}
        symbols = _Symbols(ChainMap(table), layout)
        pending = list(layout.deferred)
        progress = True
        while pending and progress:
            progress = False
            for item in list(pending):
                name, expr, location, index = item
                layout.index = index
                try:
                    table[name] = evaluate(expr, symbols, location)
                except ExpressionError:
                    continue
                pending.remove(item)
                progress = True
        return table

    # -- statements ------------------------------------------------------------------
    def _statement(self, stmt: Statement, state: _Pass, depth: int) -> None:
        """Assemble one statement's assignment, directive or instruction (labels are
        defined by the caller)."""
        if not stmt.kind:
            return
        ctx = self.context = Context(self, state, stmt)
        if stmt.kind == "assign":
            self._assign(ctx, stmt.name, stmt.column - stmt.args_column, ctx.args, 0, "set")
        elif stmt.kind == "directive":
            if not self.directive(stmt.name, stmt.args, ctx):
                handler = _BUILTINS.get(stmt.name)
                if handler is None:
                    raise AssemblyError(
                        f"unknown directive {stmt.name!r}{_suggest(stmt.name, sorted(_BUILTINS))}",
                        file=self.file, line=stmt.line, column=stmt.column)
                getattr(self, handler)(ctx)
        else:
            lines = self.expand(stmt.name, stmt.args, state.section.location)
            if lines is None:
                self._instruction(ctx, stmt)
            else:
                self._expansion(stmt, lines, state, depth)

    def _expansion(self, stmt: Statement, lines: list[str], state: _Pass, depth: int) -> None:
        try:
            if depth >= MAX_EXPANSION_DEPTH:
                raise AssemblyError(f"pseudo-instructions nest deeper than {MAX_EXPANSION_DEPTH}")
            for text in lines:
                sub = self.parse_line(text, stmt.line)
                if sub.labels:
                    raise AssemblyError("an expansion may not define labels")
                self._statement(sub, state, depth + 1)
        except AssemblyError as exc:  # columns inside generated text mean nothing to the user
            exc.line, exc.column = stmt.line, stmt.column
            if depth == 0:
                exc.message += f" (in the expansion of {stmt.name!r})"
                exc.args = (exc.message,)
            raise

    def _instruction(self, ctx: Context, stmt: Statement) -> None:
        try:
            candidates = self._table.lookup(stmt.name)
        except UnknownSuffix as exc:
            raise AssemblyError(exc.message, file=self.file, line=stmt.line,
                                column=stmt.column + exc.index) from None
        if not candidates:
            raise AssemblyError(
                f"unknown mnemonic {stmt.name!r}{_suggest(stmt.name, self._table.mnemonics)}",
                file=self.file, line=stmt.line, column=stmt.column)
        name_offset = stmt.column - stmt.args_column  # the mnemonic, relative to the operands
        if not ctx.final:
            ctx.fill(self.arch.word_bytes, 0, name_offset)
            return
        attempts = []
        for cand in candidates:
            attempt = self._try_form(cand, ctx, name_offset)
            if attempt.error is None:
                ctx.emit(self.encoder.to_bytes(attempt.word), name_offset)
                return
            attempts.append(attempt)
        raise self._form_error(stmt, ctx, candidates, attempts)

    def _form_error(self, stmt: Statement, ctx: Context, candidates: list[Candidate],
                    attempts: list[_Attempt]) -> AssemblyError:
        """The error for a line no form fits (see the module docstring)."""
        best = max(attempts, key=lambda a: a.score)  # the first of the furthest, table order
        error = best.error
        assert error is not None  # only failed attempts are passed
        cascade = next((a.error for a in attempts if getattr(a.error, "cascade", False)), None)
        if cascade is not None:  # a use of a symbol whose definition failed: not a new error
            return cascade
        shapes = list(dict.fromkeys(c.form.shape for c in candidates))
        if len(shapes) == 1 or best.score[0] >= 2:
            return error
        listing = f"{stmt.name} expects one of: {' | '.join(shapes)}"
        literals = set().union(*(c.form.literals for c in candidates))
        if best.score[0] == 0:
            return ctx.error(listing, best.score[1])
        if best.operand.strip().lower() in literals:  # "i" of "ld i, nnn" is no register
            return AssemblyError(listing, file=error.file, line=error.line, column=error.column)
        if sum(a.score[0] > 0 for a in attempts) < 2:  # one form has the shape: it is meant
            return error
        return AssemblyError(f"{error.message} ({listing})", file=error.file, line=error.line,
                             column=error.column)

    def _try_form(self, cand: Candidate, ctx: Context, name_offset: int) -> _Attempt:
        """Encode the line as ``cand``; the attempt's score says how far it got.

        The operand text is matched against the form's syntax variants in order (with
        its optional operand, then without); operands not written in the text (the
        suffix field, a left-out optional operand) take the candidate's fixed value
        or the field default, and their errors point at the suffix or the line's end.
        """
        enc, far = cand.form.encoding, 0
        for variant in cand.form.variants:
            spans, furthest = _match_template(variant.parts, ctx.args)
            if spans is not None:
                break
            far = max(far, furthest)
        else:
            message = (f"{enc.mnemonic} takes no operands" if not cand.form.variants[0].slots
                       else f"expected {cand.form.shape!r}")
            return _Attempt(0, (0, far), ctx.error(message, far))
        values = dict(cand.fixed)
        where = dict.fromkeys(values, name_offset + cand.suffix_at)  # name -> error offset
        for name, (start, end) in zip(variant.slots, spans):
            text = ctx.args[start:end]
            try:
                values[name] = self.parse_operand(self._fields[name], text, ctx, start)
            except AssemblyError as exc:  # a value the operand's own reader found too big
                level = 2 if isinstance(exc, EncodeError) else 1  # is a value problem
                return _Attempt(0, (level, start), exc, text)
            where[name] = start
        if variant.omitted is not None:
            default = self._fields[variant.omitted].default
            assert default is not None  # Architecture refuses an optional operand without one
            values[variant.omitted] = default
            where[variant.omitted] = len(ctx.args)
        fields = [self._fields[name] for name in where]
        for field in fields:
            try:
                field.insert(0, values[field.name])
            except EncodeError as exc:
                message = f"{enc.mnemonic}: {exc.message}"
                if field.kind == "pcrel":
                    target = (ctx.location + values[field.name]) % self._space
                    message += f" (target {target:#x})"
                return _Attempt(0, (2, where[field.name]),
                                ctx.error(message, where[field.name], cls=EncodeError))
        try:
            word = self.encoder.encode(enc, values)
        except EncodeError as exc:
            return _Attempt(0, (3, 0), ctx.error(exc.message, 0, cls=EncodeError))
        ins = self.decoder.decode(word, ctx.location)
        if ins.encoding == enc:  # another (alias) form may claim the word; that is fine
            for k, field in enumerate(fields):
                if ins.operands[field.name] != values[field.name]:
                    return _Attempt(0, (3, k), ctx.error(
                        f"{enc.mnemonic}: {field.name}={_num(values[field.name])} does not "
                        "survive encoding with the other operands (fields share bits)",
                        where[field.name], cls=EncodeError))
        return _Attempt(word, (4, 0), None)


def assemble(arch: Architecture, text: str, *, file: str = "<input>", base: int = 0) -> Program:
    """Assemble ``text`` with ``arch.assembler`` (a subclass) if set, else :class:`Assembler`."""
    cls = arch.assembler_class()
    return cls(arch).assemble(text, file=file, base=base)


def _in_source_order(errors: list[AssemblyError]) -> list[AssemblyError]:
    """``errors`` sorted by line and column, each reported once (passes repeat some)."""
    seen: dict[tuple, AssemblyError] = {}
    for err in errors:
        seen.setdefault((type(err), err.line, err.column, err.message), err)
    return sorted(seen.values(), key=lambda e: (e.line, e.column))
