"""A decoded instruction: one object per decoded address, kept in the decode cache.

The object doubles as the decode-cache entry: ``run`` is the (possibly
instrumented) function the engine calls, ``next`` the fall-through PC and
``cycles`` the nominal cost charged by the timing model.  Operand values are plain
attributes (``ins.rd``), so semantic functions read them at attribute speed.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from tessera.isa.description import Encoding

if TYPE_CHECKING:
    from tessera.control import Trap


class Instruction:
    """A word decoded at an address.  Operand fields are attributes of the object."""

    #: What executing it raises; only the ILLEGAL instruction has it (see ``Decoder.illegal``).
    trap: Trap
    #: Set when the entry is filled (tessera.engine.fill): the semantic function before
    #: any instrumentation, whether the fast engine may put it in a block, its observers.
    semantic: Any
    installed: Any
    blockable: bool
    observers: tuple[Any, ...]
    observer_calls: tuple[tuple[Any, str], ...]
    #: An instruction that was not fetched but *issued by another one* (an expander's
    #: output: Tensix MOP and REPLAY) says so here: a short name of what issued it
    #: (``"MOP"``, ``"REPLAY from MOP"``), and its :attr:`address` is the issuing
    #: instruction's.  ``None`` for every fetched instruction.  The architecture sets it
    #: before the observers are asked for (``tessera_execute_observe``); tools read it once
    #: per decoded instruction (a trace marks the line and lists it under its issuer).
    issued_by: str | None = None

    def __init__(
        self, encoding: Encoding, word: int, address: int, size: int, operands: dict[str, int]
    ) -> None:
        self.encoding = encoding
        self.mnemonic = encoding.mnemonic
        self.word = word
        self.address = address
        self.size = size
        self.next = address + size
        self.span = size  # bytes of code this decoded entry depends on (see Architecture.refine)
        self.operands = operands
        self.run = encoding.semantics
        self.cycles = 1
        self.__dict__.update(operands)

    if TYPE_CHECKING:  # operand fields are attributes set from ``operands``: ints, to a type checker
        def __getattr__(self, name: str) -> int: ...

    def __repr__(self) -> str:
        ops = ", ".join(f"{k}={v}" for k, v in self.operands.items())
        return f"<{self.mnemonic} {ops} @ {self.address:#x} word={self.word:#x}>"

    def __reduce__(self) -> tuple[Any, ...]:
        # Cache entries are rebuilt after restore; pickling keeps only what decode gave.
        return (Instruction, (self.encoding, self.word, self.address, self.size, self.operands))


#: What may still change on a sealed instruction: nothing.  (``run`` once was: late-bound
#: semantics rebound it on first use.  Rows now name their function with a
#: :class:`~tessera.isa.SemanticRef`, which the engine resolves before sealing.)
WRITABLE_AFTER_FILL: frozenset[str] = frozenset()


class ReadOnlyInstruction(AttributeError):
    """A semantic function (or a hook) wrote an attribute of a decoded instruction.

    Decoded instructions are shared by every execution of their address, and the fast
    engine folds their fields into translated blocks as constants, so a write would
    make the two engines disagree.  Both engines raise this instead, at the write.
    The engine reports it as a :class:`~tessera.errors.PluginError`."""


def _sealed_setattr(self: Instruction, name: str, value: Any) -> None:
    if name in WRITABLE_AFTER_FILL:
        object.__setattr__(self, name, value)
        return
    raise ReadOnlyInstruction(
        f"ins.{name} written after decoding ({self.mnemonic} at {self.address:#x}): decoded "
        "instructions are read-only once in the decode cache; keep changing state on the agent "
        "(docs/writing-plugins.md, rules for semantic functions)")


_SEALED: dict[type, type] = {}


def seal(ins: Instruction) -> Instruction:
    """Make ``ins`` read-only (except :data:`WRITABLE_AFTER_FILL`): done when its cache entry is filled.

    Switches the object to a subclass of its own class whose ``__setattr__`` refuses
    writes, so reading attributes costs nothing extra (the per-instruction path)."""
    cls = type(ins)
    if cls.__dict__.get("_sealed"):
        return ins
    sealed = _SEALED.get(cls)
    if sealed is None:
        sealed = _SEALED[cls] = type(cls.__name__, (cls,), {"__setattr__": _sealed_setattr,
                                                             "__slots__": (), "_sealed": True,
                                                             "__module__": cls.__module__,
                                                             "__qualname__": cls.__qualname__})
    ins.__class__ = sealed
    return ins


def unseal(ins: Instruction) -> Instruction:
    """Undo :func:`seal` (an entry filled again, e.g. after its cache was flushed)."""
    cls = type(ins)
    if cls.__dict__.get("_sealed"):
        object.__setattr__(ins, "__class__", cls.__bases__[0])
    return ins
