"""Pass state and section layout, and the :class:`Context` handed to extension hooks.

Every instruction form is one word long, so addresses are known without encoding
anything.  The assembler walks the statements several times; each walk is one
:class:`_Pass`, which owns that walk's sections (each with its own location
counter), symbol values, deferred assignments and output chunks.  Layout passes
only count bytes so labels get addresses; they repeat until the start addresses
of floating sections (placed after the previous one, :data:`SECTION_ALIGN`-aligned)
stop moving.  The final pass emits bytes and :meth:`_Pass.program` merges them
into a :class:`~tessera.isa.asm.program.Program`.

:class:`Context` is the narrow, documented view of one statement in one pass that
directive handlers and plugin hooks work through, so they never touch the pass
state directly.  It lives here because it is a thin facade over :class:`_Pass`.
"""

from __future__ import annotations

from collections import ChainMap
from collections.abc import Mapping
from types import MappingProxyType
from typing import TYPE_CHECKING

from tessera.errors import AssemblyError
from tessera.isa.asm.program import MAX_OUTPUT, Program
from tessera.isa.asm.syntax import Statement, _num, _short, _skip_space, split_operands
from tessera.isa.expr import ExpressionError, UndefinedSymbol, evaluate, read_string

if TYPE_CHECKING:
    from tessera.isa.asm.assembler import Assembler

__all__ = ["Context", "MAX_LAYOUT_ROUNDS", "SECTION_ALIGN"]

#: Alignment of a section placed after the previous one.
SECTION_ALIGN = 16
#: Layout rounds before giving up on sections whose placement keeps moving.
MAX_LAYOUT_ROUNDS = 16


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
                 origins: Mapping[str, int], known: dict[str, int | None]) -> None:
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
                                 "layout must be defined before it is used)",
                                 offset + exc.offset) from None
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
