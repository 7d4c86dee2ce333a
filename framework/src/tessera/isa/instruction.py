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
    #: Set when the entry is filled (tessera.engine.translate): the semantic function before
    #: any instrumentation, whether the fast engine may put it in a block, its observers.
    semantic: Any
    installed: Any
    blockable: bool
    observers: tuple[Any, ...]
    observer_calls: tuple[tuple[Any, str], ...]

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

    def __repr__(self) -> str:
        ops = ", ".join(f"{k}={v}" for k, v in self.operands.items())
        return f"<{self.mnemonic} {ops} @ {self.address:#x} word={self.word:#x}>"

    def __reduce__(self) -> tuple[Any, ...]:
        # Cache entries are rebuilt after restore; pickling keeps only what decode gave.
        return (Instruction, (self.encoding, self.word, self.address, self.size, self.operands))
