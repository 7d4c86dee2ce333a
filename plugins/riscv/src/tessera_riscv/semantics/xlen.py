"""One body per instruction for both XLENs: the XLEN constants and their per-XLEN copies.

Most RV32 and RV64 instructions differ only in a few numbers — the register mask, the
sign bit, the shift-amount mask, the register width in bits and bytes.  A semantic
function that needs them is written once, reading the module constants :data:`XMASK`,
:data:`XSIGN`, :data:`XSHIFT`, :data:`XLEN` and :data:`XBYTES`, and is registered
through an :class:`XlenFunctions`: at the end of its module,
:meth:`XlenFunctions.register` makes one copy per XLEN with the constants replaced
(:func:`tessera.isa.specialised`) and registers it as ``rv32_<mnemonic>`` /
``rv64_<mnemonic>``.  The fast engine inlines the copies with the constants as
literals; the step engine reads them as module globals.

Outside a copy the constants are placeholders that refuse arithmetic, so calling an
unspecialised original fails at once instead of computing with the wrong width.  A
function that reads none of them is the same for both XLENs: it is registered once,
under its mnemonic, with ``REGISTRY.op``.

Not a module of semantic functions: the registry does not import it (``skip``).
"""

from __future__ import annotations

import types
from collections.abc import Callable
from typing import Any

import attrs

from tessera.isa import SemanticRef, SemanticsRegistry, specialised
from tessera_riscv.formats import BOTH

M32 = 0xFFFF_FFFF
M64 = 0xFFFF_FFFF_FFFF_FFFF

#: the constants a per-XLEN function may read, by XLEN
CONSTANTS: dict[int, dict[str, int]] = {
    xlen: {"XLEN": xlen, "XMASK": (1 << xlen) - 1, "XSIGN": 1 << (xlen - 1), "XSHIFT": xlen - 1,
           "XBYTES": xlen // 8}
    for xlen in BOTH
}


class Unspecialised:
    """The value of a constant outside the copies that replace it: arithmetic with it fails."""

    def __init__(self, name: str) -> None:
        self.name = name

    def __repr__(self) -> str:
        return f"<{self.name}: set only in the per-XLEN copies of a semantic function>"


def placeholder(name: str) -> Any:
    """A module constant that :func:`tessera.isa.specialised` replaces in each copy."""
    return Unspecialised(name)


XLEN: int = placeholder("XLEN")
XMASK: int = placeholder("XMASK")
XSIGN: int = placeholder("XSIGN")
XSHIFT: int = placeholder("XSHIFT")
XBYTES: int = placeholder("XBYTES")


def sext32(v: int) -> int:
    """The low 32 bits of ``v``, sign-extended to 64 (RV64's ``*W`` results)."""
    return (((v & M32) ^ 0x8000_0000) - 0x8000_0000) & M64


def specialise(fn: Callable[..., Any], name: str, **constants: Any) -> Callable[..., Any]:
    """:func:`tessera.isa.specialised` for a function of this package (a plain ``def``)."""
    if not isinstance(fn, types.FunctionType):
        raise TypeError(f"{name}: only a plain function can be specialised, not {fn!r}")
    return specialised(fn, name, **constants)


def xlen_name(xlen: int, mnemonic: str) -> str:
    """The name a per-XLEN copy is registered (and reported) under: ``rv64_add_uw``."""
    return f"rv{xlen}_" + mnemonic.replace(".", "_")


@attrs.frozen
class XlenRef:
    """A row's function that exists once per XLEN: ``rv32_<mnemonic>`` or ``rv64_<mnemonic>``."""

    registry: SemanticsRegistry = attrs.field(eq=False, repr=False)
    mnemonic: str

    def at(self, xlen: int) -> SemanticRef:
        """The registry reference the row of the ``xlen`` table holds."""
        return self.registry.ref(xlen_name(xlen, self.mnemonic))


class XlenFunctions:
    """The per-XLEN functions of one module, registered as copies at the module's end.

    ``@PER_XLEN.op("add")`` (or :meth:`add` with extra constants, for one body shared
    by several instructions) records a function; :meth:`register`, called once every
    name the functions read is defined, makes and registers the copies.
    """

    def __init__(self, registry: SemanticsRegistry) -> None:
        self.registry = registry
        self.pending: list[tuple[str, Callable[..., Any], tuple[int, ...], dict[str, Any]]] = []

    def op(self, mnemonic: str, xlens: tuple[int, ...] = BOTH, /,
           **constants: Any) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
        """Decorator: ``fn`` is ``mnemonic`` for each of ``xlens``."""

        def deco(fn: Callable[..., Any]) -> Callable[..., Any]:
            self.add(mnemonic, fn, xlens, **constants)
            return fn

        return deco

    def add(self, mnemonic: str, fn: Callable[..., Any], xlens: tuple[int, ...] = BOTH, /,
            **constants: Any) -> None:
        """``fn`` is ``mnemonic`` for each of ``xlens``, with ``constants`` replaced as well."""
        self.pending.append((mnemonic, fn, xlens, constants))

    def ref(self, mnemonic: str) -> XlenRef:
        """What a row names: the copy of ``mnemonic`` for the row's table's XLEN."""
        return XlenRef(self.registry, mnemonic)

    def register(self) -> None:
        """Make and register every recorded function's copies (once, at the module's end)."""
        for mnemonic, fn, xlens, constants in self.pending:
            code = getattr(fn, "__code__", None)
            if code is None or not set(code.co_names) & CONSTANTS[32].keys():
                raise ValueError(f"{fn.__module__}.{fn.__qualname__} reads no XLEN constant: "
                                 f"register it once, with REGISTRY.op({mnemonic!r})")
            for xlen in xlens:
                name = xlen_name(xlen, mnemonic)
                values = {k: v for k, v in CONSTANTS[xlen].items() if k in getattr(fn, "__globals__", ())}
                self.registry.register(name, specialise(fn, name, **values, **constants))
        self.pending.clear()
