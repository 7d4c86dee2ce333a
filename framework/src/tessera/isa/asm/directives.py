"""The built-in directives (``.word``, ``.ascii``, ``.align``, ``.section`` …).

They are methods of the :class:`BuiltinDirectives` mixin, which
:class:`~tessera.isa.asm.assembler.Assembler` inherits, rather than free functions:
:data:`_BUILTINS` maps each directive to a method *name* that is looked up on the
assembler instance, so an architecture's ``Assembler`` subclass can override one
handler (``_d_data``, ``_d_align`` …) as well as add directives through
``Assembler.directive``, which may run a built-in under another spelling with
:meth:`BuiltinDirectives.builtin_directive`.  Keeping them out of ``assembler.py`` leaves that module
about statements and instruction forms only.

Symbol assignment (``name = expr``, ``.equ``, ``.set``) lives here too, since the
directives and the assignment statement share it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from tessera.errors import AssemblyError
from tessera.isa.asm.layout import Context
from tessera.isa.asm.syntax import _NAME, _SECTION_NAME, _num, _short
from tessera.isa.expr import ExpressionError, evaluate

if TYPE_CHECKING:
    from tessera.isa.description import Architecture

__all__ = ["BuiltinDirectives"]

_DATA_SIZES = {".byte": 1, ".half": 2, ".word": 4, ".dword": 8}


class BuiltinDirectives:
    """Handlers of the built-in directives, mixed into :class:`Assembler`.

    Each handler takes the statement's :class:`Context` and runs in every pass.
    """

    arch: Architecture
    _space: int

    def builtin_directive(self, name: str, ctx: Context) -> bool:
        """Run built-in directive ``name`` on the statement ``ctx``; ``False`` if there is none.

        For an architecture's :meth:`~tessera.isa.asm.Assembler.directive` that spells a
        built-in its own way: RISC-V's ``.align n`` is ``builtin_directive(".p2align", ctx)``.
        ``ctx.name`` becomes ``name`` (usage errors name the built-in).
        """
        handler = _BUILTINS.get(name)
        if handler is None:
            return False
        ctx.name = name
        getattr(self, handler)(ctx)
        return True

    # -- symbol assignment (``name = expr``, ``.equ``, ``.set``) ---------------------------
    def _assign(self, ctx: Context, name: str, name_offset: int, expr: str, offset: int,
                kind: str) -> None:
        if not _NAME.fullmatch(name):
            raise ctx.error(f"{_short(name)} is not a valid symbol name", name_offset)
        state = ctx._state
        try:
            if state.final:
                value = ctx.value(expr, offset)
            else:
                try:
                    value = evaluate(expr, state.lookup, state.section.location)
                except ExpressionError:  # may refer forward; the final pass reports real errors
                    value = None
                    state.deferred.append((name, expr, state.section.location, state.index))
            ctx.define(name, value, kind=kind, offset=name_offset)
        except AssemblyError:
            state.poisoned.add(name)  # later uses of it are not new errors
            raise

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
        items = ctx.split()
        if len(items) != 2 and items and _NAME.fullmatch(items[0][1]):
            ctx._state.poisoned.add(items[0][1])  # a failed definition: uses are no new errors
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
    **dict.fromkeys((".global", ".globl", ".weak"), "_d_global"),  # no linker: weak = global
    **dict.fromkeys((".text", ".data", ".section"), "_d_section"),
    ".org": "_d_org",
    ".entry": "_d_entry",
}
