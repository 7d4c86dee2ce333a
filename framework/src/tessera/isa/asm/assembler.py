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
beats a bad register, which beats operands of the wrong shape).

Architecture plugins extend the assembler here, by subclassing :class:`Assembler`
and overriding :meth:`~Assembler.expand`, :meth:`~Assembler.directive` or
:meth:`~Assembler.parse_operand`; that is why these live together in one class.
"""

from __future__ import annotations

from tessera.errors import AssemblyError, EncodeError
from tessera.isa.asm.directives import _BUILTINS, BuiltinDirectives
from tessera.isa.asm.forms import Candidate, FormTable, UnknownSuffix
from tessera.isa.asm.layout import MAX_LAYOUT_ROUNDS, Context, _Pass
from tessera.isa.asm.program import Program
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
)
from tessera.isa.decoder import Decoder
from tessera.isa.description import Architecture, Field
from tessera.isa.encoder import Encoder
from tessera.isa.expr import ExpressionError, evaluate

__all__ = ["MAX_EXPANSION_DEPTH", "Assembler", "assemble"]

#: How deep pseudo-instructions may expand into further pseudo-instructions.
MAX_EXPANSION_DEPTH = 8


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
        self._table = FormTable(arch)
        self._space = 1 << arch.address_bits

    # -- extension points ------------------------------------------------------------
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
        """Assemble ``text``; ``.text`` starts at ``base``.  Errors are :class:`AssemblyError`."""
        self.file = file
        if not 0 <= base < self._space:
            raise AssemblyError(f"base address {_num(base)} is outside the address space",
                                file=file)
        statements = [self.parse_line(line, number)
                      for number, line in enumerate(text.split("\n"), 1)]
        origins: dict[str, int] = {}
        for _ in range(MAX_LAYOUT_ROUNDS):
            layout = self._walk(statements, _Pass(self, final=False, base=base,
                                                  origins=origins, known={}))
            origins = layout.next_origins()
            if origins == layout.used:
                break
        else:
            sec = next(s for s in layout.sections.values() if s.name in layout.used)
            raise AssemblyError("section placement does not settle (a section's size depends "
                                "on where it is placed)", file=file, line=sec.line, column=1)
        final = self._walk(statements, _Pass(self, final=True, base=base, origins=origins,
                                             known=self._resolve(layout)))
        for name, sec in final.sections.items():
            before = layout.sections.get(name)
            if before is None or before.extent != sec.extent:
                raise AssemblyError(f"section {name} changed size between passes (a pseudo-"
                                    "instruction or directive is not deterministic)",
                                    file=file, line=sec.line, column=1)
        return final.program()

    def parse_line(self, text: str, line: int) -> Statement:
        """Split one source line into labels and a statement (no evaluation)."""
        code = self._strip_comment(text).rstrip(_SPACE)
        labels, pos = [], 0
        while m := _LABEL.match(code, pos):
            labels.append((m.group(1), m.start(1) + 1))
            pos = m.end()
        pos = _skip_space(code, pos)
        if pos == len(code):
            return Statement(line, tuple(labels))
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
        return Statement(line, tuple(labels), kind, name, m.start(1) + 1, code[start:], start + 1)

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

    def _walk(self, statements: list[Statement], state: _Pass) -> _Pass:
        for stmt in statements:
            self._statement(stmt, state, 0)
        return state

    def _resolve(self, layout: _Pass) -> dict[str, int | None]:
        """Values for the final pass: layout symbols plus assignments that referred forward.

        Every value is evaluated (none is ``None``); the type is the one the passes'
        symbol lookup (a ``ChainMap`` over ``_Pass.values``) needs.
        """
        table: dict[str, int | None] = {k: v for k, v in layout.values.items() if v is not None}
        pending = list(layout.deferred)
        progress = True
        while pending and progress:
            progress = False
            for item in list(pending):
                name, expr, location = item
                try:
                    table[name] = evaluate(expr, table, location)
                except ExpressionError:
                    continue
                pending.remove(item)
                progress = True
        return table

    # -- statements ------------------------------------------------------------------
    def _statement(self, stmt: Statement, state: _Pass, depth: int) -> None:
        for name, column in stmt.labels:
            state.define(name, state.section.location, "label", stmt.line, column)
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
        best: tuple[tuple[int, int], AssemblyError] | None = None
        for cand in candidates:
            word, score, error = self._try_form(cand, ctx, name_offset)
            if error is None:
                ctx.emit(self.encoder.to_bytes(word), name_offset)
                return
            if best is None or score > best[0]:
                best = (score, error)
        assert best is not None  # candidates is not empty and every one failed
        score, error = best
        if score[0] == 0 and len(candidates) > 1:  # no form had the right shape: list them all
            shapes = " or ".join(repr(c.form.shape) for c in candidates[:4])
            error = ctx.error(f"expected {shapes}", score[1])
        raise error

    def _try_form(self, cand: Candidate, ctx: Context, name_offset: int
                  ) -> tuple[int, tuple[int, int], AssemblyError | None]:
        """Encode the line as ``cand``: ``(word, score, error)``; higher scores got further.

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
            return 0, (0, far), ctx.error(message, far)
        values = dict(cand.fixed)
        where = dict.fromkeys(values, name_offset + cand.suffix_at)  # name -> error offset
        for k, (name, (start, end)) in enumerate(zip(variant.slots, spans)):
            try:
                values[name] = self.parse_operand(self._fields[name], ctx.args[start:end], ctx,
                                                  start)
            except AssemblyError as exc:
                return 0, (1, k), exc
            where[name] = start
        if variant.omitted is not None:
            default = self._fields[variant.omitted].default
            assert default is not None  # Architecture refuses an optional operand without one
            values[variant.omitted] = default
            where[variant.omitted] = len(ctx.args)
        fields = [self._fields[name] for name in where]
        for k, field in enumerate(fields):
            try:
                field.insert(0, values[field.name])
            except EncodeError as exc:
                message = f"{enc.mnemonic}: {exc.message}"
                if field.kind == "pcrel":
                    target = (ctx.location + values[field.name]) % self._space
                    message += f" (target {target:#x})"
                return 0, (2, k), ctx.error(message, where[field.name], cls=EncodeError)
        try:
            word = self.encoder.encode(enc, values)
        except EncodeError as exc:
            return 0, (3, 0), ctx.error(exc.message, 0, cls=EncodeError)
        ins = self.decoder.decode(word, ctx.location)
        if ins.encoding == enc:  # another (alias) form may claim the word; that is fine
            for k, field in enumerate(fields):
                if ins.operands[field.name] != values[field.name]:
                    return 0, (3, k), ctx.error(
                        f"{enc.mnemonic}: {field.name}={_num(values[field.name])} does not "
                        "survive encoding with the other operands (fields share bits)",
                        where[field.name], cls=EncodeError)
        return word, (4, 0), None


def assemble(arch: Architecture, text: str, *, file: str = "<input>", base: int = 0) -> Program:
    """Assemble ``text`` with ``arch.assembler`` (a subclass) if set, else :class:`Assembler`."""
    cls = arch.assembler or Assembler
    return cls(arch).assemble(text, file=file, base=base)
