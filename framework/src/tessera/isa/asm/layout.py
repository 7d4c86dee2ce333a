"""Pass state and section layout, and the :class:`Context` handed to extension hooks.

Every instruction form is one word long, so addresses are known without encoding
anything.  The assembler walks the statements several times; each walk is one
:class:`_Pass`, which owns that walk's sections (each with its own location
counter), symbol values, deferred assignments and output chunks.  Layout passes
only count bytes so labels get addresses; they repeat until the start addresses
of floating sections (placed after the previous one, :data:`SECTION_ALIGN`-aligned)
stop moving.  The final pass emits bytes and :meth:`_Pass.program` merges them
into a :class:`~tessera.isa.asm.program.Program`.

A pass also keeps what error recovery needs: the errors of the statements that
failed, where each statement left the location counter (so the final pass can put
it back where the layout had it after a failed statement, and later labels do not
move), and the names whose definition failed (an undefined-symbol error about one
of them is a consequence, not a new mistake, and is not reported again).

Numeric local labels (``1:``) are renamed by the assembler to one internal name per
definition (``"1:0"``, ``"1:1"`` …, which no source text can spell); :class:`_Symbols`
resolves a reference (``1b``/``1f``) to one of them from the statement being
processed.  Internal names are left out of the program's symbol table.

:class:`Context` is the narrow, documented view of one statement in one pass that
directive handlers and plugin hooks work through, so they never touch the pass
state directly.  It lives here because it is a thin facade over :class:`_Pass`.
"""

from __future__ import annotations

from bisect import bisect_right
from collections import ChainMap
from collections.abc import Iterator, Mapping
from types import MappingProxyType
from typing import TYPE_CHECKING

from tessera.errors import AssemblyError
from tessera.isa.asm.program import MAX_OUTPUT, Program
from tessera.isa.asm.syntax import Statement, _num, _short, _skip_space, split_operands
from tessera.isa.expr import (
    ExpressionError,
    UndefinedSymbol,
    evaluate,
    local_reference,
    read_string,
)

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
        self.lookup: Mapping[str, int | None] = _Symbols(ChainMap(self.values, known), self)
        self.deferred: list[tuple[str, str, int, int]] = []  # name, expr, location, index
        self.sections: dict[str, _Section] = {}
        self.chunks: list[tuple[int, bytes, int, int]] = []
        self.total = 0
        self.entry: tuple[int, int] | None = None
        self.globals: set[str] = set()
        self.section = self.switch(".text", 1)
        #: Index of the statement being processed (for local label references).
        self.index = 0
        #: Errors of this pass's statements, in the order met.
        self.errors: list[AssemblyError] = []
        #: Errors that only follow from a failed definition (``cascade`` set): not reported.
        self.cascades: list[AssemblyError] = []
        #: Indices of the statements that failed in this pass.
        self.failed: set[int] = set()
        #: ``(section, location)`` after each statement (kept by layout passes).
        self.after: list[tuple[str, int]] = []
        #: Names whose definition failed (uses of them are not reported again).
        self.poisoned: set[str] = set(asm._poisoned)

    def record(self, error: AssemblyError) -> None:
        """Keep ``error`` of the statement being processed."""
        (self.cascades if getattr(error, "cascade", False) else self.errors).append(error)

    def local_name(self, label: str, direction: str) -> str | None:
        """The internal name ``label`` + ``direction`` means here, or ``None`` if none."""
        places = self.asm._local_labels.get(label, ())
        k = bisect_right(places, self.index)  # definitions up to this statement
        if direction == "b":
            k -= 1
        return local_name(label, k) if 0 <= k < len(places) else None

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
            err = (f"label {shown(name)!r} moved between passes; a pseudo-instruction or "
                   "directive produced a different number of bytes the second time")
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
        if self.total + size > MAX_OUTPUT:  # not counted: later statements are judged alone
            raise AssemblyError(f"program output exceeds {MAX_OUTPUT >> 20} MiB",
                                file=self.asm.file, line=line, column=column)
        self.total += size
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
        symbols = {k: v for k, v in self.values.items() if v is not None and not is_local(k)}
        entry = self.entry[0] if self.entry else symbols.get("_start")
        labels = frozenset(k for k in symbols if self.kinds.get(k, ("",))[0] == "label")
        return Program(tuple((a, bytes(d)) for a, d in segments), symbols, entry, labels)


class _Symbols(Mapping[str, "int | None"]):
    """The symbols an expression of the current statement sees.

    Named symbols come from the pass (then from the previous pass, for forward
    references); a local label reference ``1b``/``1f`` is resolved to the internal
    name of the definition it means for the statement being processed.
    """

    def __init__(self, chain: ChainMap, state: _Pass) -> None:
        self._chain, self._state = chain, state

    def __getitem__(self, key: str) -> int | None:
        ref = local_reference(key)
        if ref is not None:
            name = self._state.local_name(*ref)
            if name is None:
                raise KeyError(key)
            key = name
        return self._chain[key]

    def __iter__(self) -> Iterator[str]:
        return (k for k in self._chain if not is_local(k))

    def __len__(self) -> int:
        return sum(1 for _ in self)


def local_name(label: str, index: int) -> str:
    """The internal name of the ``index``-th definition of numeric label ``label``."""
    return f"{label}:{index}"


def is_local(name: str) -> bool:
    """Whether ``name`` is the internal name of a numeric local label."""
    return ":" in name


def shown(name: str) -> str:
    """A symbol name as the user wrote it (a local label's digits)."""
    return name.partition(":")[0]


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
            if not state.final and not layout:
                return 0
            ref = local_reference(exc.name)
            if ref is not None and state.local_name(*ref) is None:
                message = (f"local label reference {exc.name!r}: no label {ref[0]}: "
                           + ("at or before this line" if ref[1] == "b" else "after this line"))
            elif layout and not state.final:
                message = (f"undefined symbol {exc.name!r} (a value that decides the layout "
                           "must be defined before it is used)")
            else:
                message = exc.message
            err = self.error(message, offset + exc.offset)
            if exc.name in state.poisoned:  # its definition failed and was reported
                err.cascade = True  # type: ignore[attr-defined]
            raise err from None
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
