"""Architecture description and the tools generated from its encoding table."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from tessera.isa.decoder import ILLEGAL, Decoder
from tessera.isa.description import (
    CONTROL_FLAGS,
    TRANSFER_FLAGS,
    Architecture,
    CacheSpec,
    Encoding,
    Example,
    Field,
    MemoryRegionSpec,
    RegisterFile,
    RegisterRef,
    RegisterUses,
)
from tessera.isa.disasm import Disassembler
from tessera.isa.encoder import Encoder
from tessera.isa.instruction import Instruction
from tessera.isa.registry import SemanticRef, SemanticsRegistry, specialised, swap

if TYPE_CHECKING:
    from tessera.isa.asm import Assembler, Program, assemble

__all__ = [
    "Architecture", "CacheSpec", "Encoding", "Example", "Field", "MemoryRegionSpec", "RegisterFile",
    "RegisterRef", "RegisterUses",
    "CONTROL_FLAGS", "TRANSFER_FLAGS",
    "Decoder", "Disassembler", "Encoder", "Instruction", "ILLEGAL",
    "SemanticRef", "SemanticsRegistry", "specialised", "swap",
    "Assembler", "Program", "assemble",
]

# The assembler is loaded on first use: ``import tessera.isa`` (done by every plugin and
# the simulator core) should not pay for it, and ``tessera.isa.asm`` imports modules of
# this package, so importing it lazily also keeps the package free of import cycles.
_ASSEMBLER_NAMES = frozenset({"Assembler", "Program", "assemble"})


def __getattr__(name: str) -> Any:
    if name in _ASSEMBLER_NAMES:
        from tessera.isa import asm

        value = getattr(asm, name)
        globals()[name] = value
        return value
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted({*globals(), *_ASSEMBLER_NAMES})
