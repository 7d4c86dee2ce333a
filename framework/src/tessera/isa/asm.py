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
  order.  A form's syntax template is matched with literal punctuation required
  (whitespace-tolerant) and each ``{slot}`` capturing one balanced operand; the
  operand is then read by its field's kind.  When no form fits, the error of the form
  that got furthest is reported (a value that does not fit beats a bad register,
  which beats operands of the wrong shape).
* **Output.**  Bytes are collected as ``(address, data)`` pieces, checked for
  overlaps and merged into the sorted segments of a :class:`Program`.

Architecture plugins extend the assembler by subclassing :class:`Assembler` and
setting ``Architecture.assembler``: override :meth:`Assembler.expand` for
pseudo-instructions, :meth:`Assembler.directive` for extra directives and
:meth:`Assembler.parse_operand` for unusual operand spellings.
"""

from __future__ import annotations

import difflib
import re
from collections import ChainMap
from collections.abc import Iterator, Mapping
from types import MappingProxyType

import attrs

from tessera.errors import AssemblyError, EncodeError
from tessera.isa.decoder import Decoder
from tessera.isa.description import Architecture, Encoding, Field
from tessera.isa.encoder import Encoder
from tessera.isa.expr import ExpressionError, UndefinedSymbol, evaluate, read_string

__all__ = ["Assembler", "Context", "Program", "Statement", "assemble", "split_operands"]

#: Most bytes one program may produce, and the largest span :meth:`Program.image` builds.
MAX_OUTPUT = 256 << 20
#: Alignment of a section placed after the previous one.
SECTION_ALIGN = 16
#: How deep pseudo-instructions may expand into further pseudo-instructions.
MAX_EXPANSION_DEPTH = 8
#: Layout rounds before giving up on sections whose placement keeps moving.
MAX_LAYOUT_ROUNDS = 16

_SPACE = " \t\r\f\v"
_IDENT = r"[A-Za-z_.$][A-Za-z0-9_.$]*"
_S = r"[ \t\r\f\v]*"
_LABEL = re.compile(rf"{_S}({_IDENT}){_S}:")
_ASSIGN = re.compile(rf"{_S}({_IDENT}){_S}=(?!=)")
_WORD = re.compile(rf"{_S}({_IDENT})")
_NAME = re.compile(_IDENT)
_SECTION_NAME = re.compile(r"[A-Za-z0-9_.$]+")
_CHAR = re.compile(r"'(?:\\(?:x[0-9a-fA-F]{1,2}|[0-7]{1,3}|.)|[^\\'])'")
_SLOT = re.compile(r"\{(\w+)\}")
_DATA_SIZES = {".byte": 1, ".half": 2, ".word": 4, ".dword": 8}


# --------------------------------------------------------------------------- output


@attrs.frozen
class Program:
    """Assembled output: byte segments, the symbol table and the entry point.

    ``segments`` are ``(address, data)`` pairs, sorted, non-empty, non-overlapping
    and not touching (adjacent output is merged).  ``entry`` comes from ``.entry``,
    else the symbol ``_start``, else ``None``.
    """

    segments: tuple[tuple[int, bytes], ...] = ()
    symbols: Mapping[str, int] = attrs.field(
        factory=dict, converter=lambda m: MappingProxyType(dict(m)), hash=False)
    entry: int | None = None

    @property
    def size(self) -> int:
        """Number of bytes produced (gaps between segments not counted)."""
        return sum(len(data) for _, data in self.segments)

    def image(self, fill: int = 0) -> tuple[int, bytes]:
        """``(address, data)``: one blob from the lowest to the highest byte, gaps filled.

        Loaders that want a flat image use this; a span over :data:`MAX_OUTPUT`
        (typically two ``.org`` far apart) is refused rather than allocated.
        """
        if not self.segments:
            return 0, b""
        start = self.segments[0][0]
        end = self.segments[-1][0] + len(self.segments[-1][1])
        if end - start > MAX_OUTPUT:
            raise AssemblyError(
                f"program spans {end - start:#x} bytes ({start:#x}..{end:#x}), more than the "
                f"{MAX_OUTPUT >> 20} MiB a flat image may have")
        blob = bytearray(bytes([fill]) * (end - start))
        for addr, data in self.segments:
            blob[addr - start:addr - start + len(data)] = data
        return start, bytes(blob)


# --------------------------------------------------------------------------- lexing


@attrs.frozen
class Statement:
    """One parsed source line.

    ``kind`` is ``""`` (labels only or blank), ``"assign"`` (``name = expr``),
    ``"directive"`` or ``"instruction"``; ``name`` is the assigned symbol, the
    directive or the mnemonic (directives and mnemonics lower-cased).  Columns are
    1-based: ``column`` of the name, ``args_column`` of the operand text ``args``.
    """

    line: int
    labels: tuple[tuple[str, int], ...] = ()
    kind: str = ""
    name: str = ""
    column: int = 0
    args: str = ""
    args_column: int = 0


def _skip_space(text: str, i: int) -> int:
    while i < len(text) and text[i] in _SPACE:
        i += 1
    return i


def _skip_quoted(text: str, i: int) -> int:
    """Index after the string or character literal starting at ``text[i]``."""
    if text[i] == "'":
        m = _CHAR.match(text, i)
        return m.end() if m else i + 1
    i += 1
    while i < len(text) and text[i] != '"':
        i += 2 if text[i] == "\\" else 1
    return min(i + 1, len(text))


def split_operands(text: str) -> list[tuple[int, str]]:
    """Split at commas outside parentheses and quotes: ``[(offset, stripped piece)]``.

    Offsets are 0-based into ``text``, so callers can point columns at each piece.
    Empty text gives ``[]``; empty pieces (``"1,,2"``) are kept as ``""``.
    """
    if not text.strip(_SPACE):
        return []
    pieces, start, depth, i = [], 0, 0, 0
    while i <= len(text):
        if i == len(text) or (text[i] == "," and depth <= 0):
            lead = _skip_space(text, start)
            pieces.append((lead, text[lead:i].rstrip(_SPACE)))
            start = i + 1
        elif text[i] in "\"'":
            i = _skip_quoted(text, i)
            continue
        elif text[i] == "(":
            depth += 1
        elif text[i] == ")":
            depth -= 1
        i += 1
    return pieces


def _short(text: str, limit: int = 32) -> str:
    return repr(text if len(text) <= limit else text[:limit] + "...")


def _num(value: int) -> str:
    return str(value) if value.bit_length() <= 64 else f"a {value.bit_length()}-bit value"


def _suggest(word: str, candidates: list[str]) -> str:
    close = difflib.get_close_matches(word.lower(), candidates, n=1, cutoff=0.6)
    return f"; did you mean {close[0]!r}?" if close else ""


# --------------------------------------------------------------------------- templates


def _compile_template(syntax: str) -> tuple[tuple[str, str], ...]:
    """Template parts: ``("slot", field)``, ``("lit", chars)`` or ``("sep", "")``.

    Literal text matches with optional whitespace before each character; whitespace
    alone between two slots is a required separator.
    """
    pieces = _SLOT.split(syntax)
    parts = []
    for i, piece in enumerate(pieces):
        if i % 2:
            parts.append(("slot", piece))
        elif piece.strip(_SPACE):
            parts.append(("lit", "".join(c for c in piece if c not in _SPACE)))
        elif piece and 0 < i < len(pieces) - 1:
            parts.append(("sep", ""))
    return tuple(parts)


def _match_template(parts: tuple[tuple[str, str], ...],
                    text: str) -> tuple[list[tuple[int, int]] | None, int]:
    """Match operand text: ``(slot spans, furthest position)``; spans ``None`` on failure.

    A slot captures balanced text without a comma at the top level.  Slots are tried
    shortest first with backtracking; failures are memoised, so the cost stays
    polynomial whatever the input.
    """
    n = len(text)
    failed: set[tuple[int, int]] = set()
    furthest = 0

    def could_end(j: int, nxt: tuple[str, str] | None) -> bool:
        if nxt is None:
            return _skip_space(text, j) == n
        if nxt[0] == "sep":
            return j < n and text[j] in _SPACE
        if nxt[0] == "lit":
            k = _skip_space(text, j)
            return k < n and text[k] == nxt[1][0]
        return True

    def ends(i: int, nxt: tuple[str, str] | None) -> Iterator[int]:
        nonlocal furthest
        depth, j = 0, i
        while j <= n:
            furthest = max(furthest, j)
            if j > i and depth == 0 and could_end(j, nxt):
                yield j
            if j == n or (text[j] == "," and depth == 0):
                return
            if text[j] in "\"'":
                j = _skip_quoted(text, j)
                continue
            if text[j] == "(":
                depth += 1
            elif text[j] == ")":
                depth -= 1
                if depth < 0:
                    return
            j += 1

    def step(k: int, i: int) -> list[tuple[int, int]] | None:
        nonlocal furthest
        furthest = max(furthest, i)
        if (k, i) in failed:
            return None
        result = None
        if k == len(parts):
            j = _skip_space(text, i)
            furthest = max(furthest, j)
            result = [] if j == n else None
        elif parts[k][0] == "lit":
            j = i
            for c in parts[k][1]:
                j = _skip_space(text, j)
                furthest = max(furthest, j)
                if j >= n or text[j] != c:
                    break
                j += 1
            else:
                result = step(k + 1, j)
        elif parts[k][0] == "sep":
            j = _skip_space(text, i)
            result = step(k + 1, j) if j > i else None
        else:
            start = _skip_space(text, i)
            for end in ends(start, parts[k + 1] if k + 1 < len(parts) else None):
                rest = step(k + 1, end)
                if rest is not None:
                    result = [(start, len(text[:end].rstrip(_SPACE)))] + rest
                    break
        if result is None:
            failed.add((k, i))
        return result

    return step(0, 0), furthest


# --------------------------------------------------------------------------- pass state


class _Section:
    __slots__ = ("name", "line", "location", "end")

    def __init__(self, name: str, origin: int, line: int) -> None:
        self.name, self.line, self.location = name, line, origin
        self.end: int | None = None  # end of the highest output, None before any

    @property
    def extent(self) -> int:
        return self.location if self.end is None else self.end


class _Pass:
    """Everything one walk over the statements builds: sections, symbols, output."""

    def __init__(self, asm: Assembler, *, final: bool, base: int,
                 origins: Mapping[str, int], known: Mapping[str, int]) -> None:
        self.asm, self.final, self.base = asm, final, base
        self.origins = origins          # floating-section origins to use
        self.used: dict[str, int] = {}  # floating-section origins actually used
        self.known = known              # the previous pass's values, for forward references
        self.values: dict[str, int | None] = {}
        self.kinds: dict[str, tuple[str, int]] = {}
        self.lookup = ChainMap(self.values, known)
        self.deferred: list[tuple[str, str, int]] = []
        self.sections: dict[str, _Section] = {}
        self.chunks: list[tuple[int, bytes, int, int]] = []
        self.total = 0
        self.entry: tuple[int, int] | None = None
        self.globals: set[str] = set()
        self.section = self.switch(".text", 1)

    def switch(self, name: str, line: int) -> _Section:
        sec = self.sections.get(name)
        if sec is None:
            if name == ".text":
                origin = self.base
            else:
                guess = _align(list(self.sections.values())[-1].extent, SECTION_ALIGN)
                origin = self.used[name] = self.origins.get(name, guess)
            sec = self.sections[name] = _Section(name, origin, line)
        self.section = sec
        return sec

    def next_origins(self) -> dict[str, int]:
        """Where floating sections belong given this pass's section sizes."""
        out, prev = {}, None
        for name, sec in self.sections.items():
            if prev is not None and name in self.used:
                out[name] = _align(prev.extent, SECTION_ALIGN)
            prev = sec
        return out

    def define(self, name: str, value: int | None, kind: str, line: int, column: int) -> None:
        err = None
        if name == ".":
            err = "'.' is the current location and cannot be defined"
        elif name in self.kinds and not (kind == "set" == self.kinds[name][0]):
            err = f"{name!r} is already defined on line {self.kinds[name][1]}"
        elif self.final and kind == "label" and self.known.get(name) != value:
            err = (f"label {name!r} moved between passes; a pseudo-instruction or directive "
                   "produced a different number of bytes the second time")
        if err:
            raise AssemblyError(err, file=self.asm.file, line=line, column=column)
        self.kinds[name] = (kind, line)
        self.values[name] = value

    def put(self, size: int, data: bytes | None, line: int, column: int) -> None:
        """Account for ``size`` bytes at the location counter; keep ``data`` in the final pass."""
        sec = self.section
        space = 1 << self.asm.arch.address_bits
        if sec.location + size > space:
            raise AssemblyError(
                f"output at {sec.location:#x} runs past the end of the "
                f"{self.asm.arch.address_bits}-bit address space",
                file=self.asm.file, line=line, column=column)
        self.total += size
        if self.total > MAX_OUTPUT:
            raise AssemblyError(f"program output exceeds {MAX_OUTPUT >> 20} MiB",
                                file=self.asm.file, line=line, column=column)
        if self.final and size:
            self.chunks.append((sec.location, data if data is not None else bytes(size),
                                line, column))
        sec.location += size
        if size:
            sec.end = max(sec.end or 0, sec.location)

    def program(self) -> Program:
        segments: list[list] = []
        owner = None  # the chunk reaching furthest so far
        for chunk in sorted(self.chunks, key=lambda c: c[0]):
            addr, data, line, column = chunk
            if owner is not None and addr < owner[0] + len(owner[1]):
                first, second = sorted((owner, chunk), key=lambda c: (c[2], c[3]))
                raise AssemblyError(f"output at {addr:#x} overlaps output of line {first[2]}",
                                    file=self.asm.file, line=second[2], column=second[3])
            if owner is None or addr + len(data) > owner[0] + len(owner[1]):
                owner = chunk
            if segments and segments[-1][0] + len(segments[-1][1]) == addr:
                segments[-1][1] += data
            else:
                segments.append([addr, bytearray(data)])
        symbols = {k: v for k, v in self.values.items() if v is not None}
        entry = self.entry[0] if self.entry else symbols.get("_start")
        return Program(tuple((a, bytes(d)) for a, d in segments), symbols, entry)


def _align(value: int, alignment: int) -> int:
    return value + (-value % alignment)


# --------------------------------------------------------------------------- context


class Context:
    """One statement in one pass, as directive handlers (and hooks) see it.

    A handler reads its operand text (``args``; ``split()`` cuts it at commas),
    evaluates expressions with :meth:`value`, and produces bytes with :meth:`emit`
    or :meth:`fill`.  It runs in every pass: in layout passes (``final`` false) only
    the number of bytes matters and undefined symbols evaluate to 0, so a handler
    must produce the same number of bytes in every pass.  Errors are made with
    :meth:`error` so they point at the right column.
    """

    def __init__(self, asm: Assembler, state: _Pass, stmt: Statement) -> None:
        self.assembler = asm
        self._state = state
        self.file, self.line = asm.file, stmt.line
        self.name, self.args, self.column = stmt.name, stmt.args, stmt.args_column

    @property
    def final(self) -> bool:
        """True in the pass that emits bytes; every symbol is known then."""
        return self._state.final

    @property
    def location(self) -> int:
        """The current address (``.``)."""
        return self._state.section.location

    @property
    def section(self) -> str:
        return self._state.section.name

    @property
    def symbols(self) -> Mapping[str, int | None]:
        """Symbols known at this point (read only; ``None`` means not yet evaluated)."""
        return MappingProxyType(dict(self._state.lookup))

    def error(self, message: str, offset: int = 0, *,
              cls: type[AssemblyError] = AssemblyError) -> AssemblyError:
        """An error at ``offset`` characters into ``args`` (raise it)."""
        return cls(message, file=self.file, line=self.line, column=self.column + offset)

    def split(self, text: str | None = None) -> list[tuple[int, str]]:
        """``args`` (or ``text``) cut at top-level commas: ``[(offset, piece)]``."""
        return split_operands(self.args if text is None else text)

    def value(self, text: str | None = None, offset: int = 0, *, layout: bool = False) -> int:
        """Evaluate an expression found ``offset`` characters into ``args``.

        With ``layout=True`` the value decides how many bytes follow, so it must be
        computable now: a symbol defined further down is an error even in a layout
        pass.  Otherwise an undefined symbol reads as 0 until the final pass.
        """
        text = self.args if text is None else text
        state = self._state
        try:
            return evaluate(text, state.lookup, state.section.location)
        except UndefinedSymbol as exc:
            if layout and not state.final:
                raise self.error(f"undefined symbol {exc.name!r} (a value that decides the "
                                 "layout must be defined before it is used)", offset + exc.offset)
            if not state.final:
                return 0
            raise exc.at(self.file, self.line, self.column + offset) from None
        except ExpressionError as exc:
            raise exc.at(self.file, self.line, self.column + offset) from None

    def string(self, text: str, offset: int = 0) -> bytes:
        """Decode a ``"..."`` literal that must make up all of ``text``."""
        try:
            data, end = read_string(text)
        except ExpressionError as exc:
            raise exc.at(self.file, self.line, self.column + offset) from None
        if end != len(text):
            end = _skip_space(text, end)
            raise self.error(f"unexpected {_short(text[end:])} after the string", offset + end)
        return data

    def emit(self, data: bytes, offset: int = 0) -> None:
        """Place ``data`` at the location counter and advance it."""
        self._state.put(len(data), bytes(data), self.line, self.column + offset)

    def fill(self, count: int, value: int = 0, offset: int = 0) -> None:
        """Emit ``count`` copies of byte ``value`` (nothing is allocated in layout passes)."""
        if count < 0:
            raise self.error(f"negative size {count}", offset)
        if count > MAX_OUTPUT:
            raise self.error(f"{count} bytes exceed the {MAX_OUTPUT >> 20} MiB output limit",
                             offset)
        data = bytes([value & 0xFF]) * count if self.final else None
        self._state.put(count, data, self.line, self.column + offset)

    def org(self, address: int, offset: int = 0) -> None:
        """Move the location counter of the current section."""
        bits = self.assembler.arch.address_bits
        if not 0 <= address <= 1 << bits:
            raise self.error(f"address {_num(address)} is outside the {bits}-bit address space",
                             offset)
        self._state.section.location = address

    def define(self, name: str, value: int | None, *, kind: str = "set", offset: int = 0) -> None:
        """Give ``name`` a value; ``kind`` ``"set"`` may be redefined, ``"equ"`` not."""
        self._state.define(name, value, kind, self.line, self.column + offset)


# --------------------------------------------------------------------------- assembler


class Assembler:
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
        self._templates: dict[Encoding, tuple[tuple[str, str], ...]] = {}
        self._forms: dict[str, list[Encoding]] = {}  # arch.encodings_named, precomputed
        for enc in arch.encodings:
            self._forms.setdefault(enc.mnemonic.lower(), []).append(enc)
        self._mnemonics = sorted(self._forms)
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

    def _resolve(self, layout: _Pass) -> dict[str, int]:
        """Values for the final pass: layout symbols plus assignments that referred forward."""
        table = {k: v for k, v in layout.values.items() if v is not None}
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

    def _assign(self, ctx: Context, name: str, name_offset: int, expr: str, offset: int,
                kind: str) -> None:
        if not _NAME.fullmatch(name):
            raise ctx.error(f"{_short(name)} is not a valid symbol name", name_offset)
        state = ctx._state
        if state.final:
            value = ctx.value(expr, offset)
        else:
            try:
                value = evaluate(expr, state.lookup, state.section.location)
            except ExpressionError:  # may refer forward; the final pass reports real errors
                value = None
                state.deferred.append((name, expr, state.section.location))
        ctx.define(name, value, kind=kind, offset=name_offset)

    def _instruction(self, ctx: Context, stmt: Statement) -> None:
        forms = self._forms.get(stmt.name)
        if not forms:
            raise AssemblyError(
                f"unknown mnemonic {stmt.name!r}{_suggest(stmt.name, self._mnemonics)}",
                file=self.file, line=stmt.line, column=stmt.column)
        if not ctx.final:
            ctx.fill(self.arch.word_bytes, 0, stmt.column - stmt.args_column)
            return
        best: tuple[tuple[int, int], AssemblyError] | None = None
        for enc in forms:
            word, score, error = self._try_form(enc, ctx)
            if error is None:
                ctx.emit(self.encoder.to_bytes(word), stmt.column - stmt.args_column)
                return
            if best is None or score > best[0]:
                best = (score, error)
        score, error = best
        if score[0] == 0 and len(forms) > 1:  # no form had the right shape: list them all
            shapes = " or ".join(repr(self._shape(e)) for e in forms[:4])
            error = ctx.error(f"expected {shapes}", score[1])
        raise error

    @staticmethod
    def _shape(enc: Encoding) -> str:
        operands = _SLOT.sub(r"\1", enc.syntax)
        return f"{enc.mnemonic} {operands}".rstrip()

    def _try_form(self, enc: Encoding, ctx: Context
                  ) -> tuple[int, tuple[int, int], AssemblyError | None]:
        """Encode the line as form ``enc``: ``(word, score, error)``; higher scores got further."""
        parts = self._templates.get(enc)
        if parts is None:
            parts = self._templates[enc] = _compile_template(enc.syntax)
        spans, furthest = _match_template(parts, ctx.args)
        if spans is None:
            message = (f"{enc.mnemonic} takes no operands" if not enc.operand_names
                       else f"expected {self._shape(enc)!r}")
            return 0, (0, furthest), ctx.error(message, furthest)
        fields = [self._fields[name] for name in enc.operand_names]
        values = {}
        for k, (field, (start, end)) in enumerate(zip(fields, spans)):
            try:
                values[field.name] = self.parse_operand(field, ctx.args[start:end], ctx, start)
            except AssemblyError as exc:
                return 0, (1, k), exc
        for k, field in enumerate(fields):
            try:
                field.insert(0, values[field.name])
            except EncodeError as exc:
                message = f"{enc.mnemonic}: {exc.message}"
                if field.kind == "pcrel":
                    target = (ctx.location + values[field.name]) % self._space
                    message += f" (target {target:#x})"
                return 0, (2, k), ctx.error(message, spans[k][0], cls=EncodeError)
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
                        spans[k][0], cls=EncodeError)
        return word, (4, 0), None

    # -- built-in directives -----------------------------------------------------------
    def _args(self, ctx: Context, low: int, high: int, usage: str) -> list[tuple[int, str]]:
        items = ctx.split()
        if not low <= len(items) <= high:
            raise ctx.error(f"usage: {ctx.name} {usage}")
        for offset, text in items:
            if not text:
                raise ctx.error("missing operand", offset)
        return items

    def _byte_value(self, ctx: Context, items: list[tuple[int, str]], index: int) -> int:
        if len(items) <= index or not ctx.final:
            return 0
        offset, text = items[index]
        value = ctx.value(text, offset)
        if not -128 <= value <= 255:
            raise ctx.error(f"fill value {_num(value)} does not fit in a byte", offset)
        return value

    def _d_data(self, ctx: Context) -> None:
        size = _DATA_SIZES[ctx.name]
        items = self._args(ctx, 1, 1 << 30, "value[, value ...]")
        if not ctx.final:
            ctx.fill(size * len(items))
            return
        low, high = -(1 << (8 * size - 1)), (1 << (8 * size)) - 1
        for offset, text in items:
            value = ctx.value(text, offset)
            if not low <= value <= high:
                raise ctx.error(f"value {_num(value)} does not fit in {size} byte"
                                f"{'s' if size > 1 else ''} ({low}..{high})", offset)
            ctx.emit((value & high).to_bytes(size, self.arch.endian), offset)

    def _d_strings(self, ctx: Context) -> None:
        for offset, text in self._args(ctx, 1, 1 << 30, '"text"[, "text" ...]'):
            data = ctx.string(text, offset)
            ctx.emit(data if ctx.name == ".ascii" else data + b"\0", offset)

    def _d_space(self, ctx: Context) -> None:
        items = self._args(ctx, 1, 2, "size[, fill]")
        size = ctx.value(items[0][1], items[0][0], layout=True)
        ctx.fill(size, self._byte_value(ctx, items, 1), items[0][0])

    def _d_align(self, ctx: Context) -> None:
        items = self._args(ctx, 1, 2, "alignment[, fill]")
        offset, text = items[0]
        value = ctx.value(text, offset, layout=True)
        if ctx.name == ".p2align":
            if not 0 <= value <= self.arch.address_bits:
                raise ctx.error(f"alignment exponent {_num(value)} is not in "
                                f"0..{self.arch.address_bits}", offset)
            value = 1 << value
        elif value < 1 or value & (value - 1) or value > self._space:
            raise ctx.error(f"alignment {_num(value)} is not a power of two in the address "
                            "space", offset)
        ctx.fill(-ctx.location % value, self._byte_value(ctx, items, 1), offset)

    def _d_org(self, ctx: Context) -> None:
        (offset, text), = self._args(ctx, 1, 1, "address")
        ctx.org(ctx.value(text, offset, layout=True), offset)

    def _d_equ(self, ctx: Context) -> None:
        (name_offset, name), (offset, expr) = self._args(ctx, 2, 2, "name, value")
        self._assign(ctx, name, name_offset, expr, offset, "equ" if ctx.name == ".equ" else "set")

    def _d_global(self, ctx: Context) -> None:
        for offset, name in self._args(ctx, 1, 1 << 30, "name[, name ...]"):
            if not _NAME.fullmatch(name):
                raise ctx.error(f"{_short(name)} is not a valid symbol name", offset)
            ctx._state.globals.add(name)

    def _d_entry(self, ctx: Context) -> None:
        (offset, text), = self._args(ctx, 1, 1, "address")
        if not ctx.final:
            return
        state = ctx._state
        if state.entry is not None:
            raise ctx.error(f"the entry point is already set on line {state.entry[1]}")
        value = ctx.value(text, offset)
        if not 0 <= value < self._space:
            raise ctx.error(f"entry point {_num(value)} is outside the address space", offset)
        state.entry = (value, ctx.line)

    def _d_section(self, ctx: Context) -> None:
        if ctx.name != ".section":
            if ctx.args:
                raise ctx.error(f"{ctx.name} takes no operands")
            name = ctx.name
        else:
            items = self._args(ctx, 1, 1 << 30, "name[, flags ...]")
            name = items[0][1]
            if not _SECTION_NAME.fullmatch(name):
                raise ctx.error(f"{_short(name)} is not a valid section name", items[0][0])
        ctx._state.switch(name, ctx.line)


#: Built-in directives and the methods handling them (subclasses may override the methods).
_BUILTINS = {
    **dict.fromkeys(_DATA_SIZES, "_d_data"),
    **dict.fromkeys((".ascii", ".asciz", ".string"), "_d_strings"),
    **dict.fromkeys((".space", ".zero"), "_d_space"),
    **dict.fromkeys((".align", ".p2align"), "_d_align"),
    **dict.fromkeys((".equ", ".set"), "_d_equ"),
    **dict.fromkeys((".global", ".globl"), "_d_global"),
    **dict.fromkeys((".text", ".data", ".section"), "_d_section"),
    ".org": "_d_org",
    ".entry": "_d_entry",
}


def assemble(arch: Architecture, text: str, *, file: str = "<input>", base: int = 0) -> Program:
    """Assemble ``text`` with ``arch.assembler`` (a subclass) if set, else :class:`Assembler`."""
    cls = arch.assembler or Assembler
    return cls(arch).assemble(text, file=file, base=base)
