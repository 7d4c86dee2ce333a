"""Architecture description and the tools generated from its encoding table."""

from tessera.isa.description import (
    Architecture,
    Encoding,
    Example,
    Field,
    MemoryRegionSpec,
    RegisterFile,
)
from tessera.isa.decoder import ILLEGAL, Decoder
from tessera.isa.disasm import Disassembler
from tessera.isa.encoder import Encoder
from tessera.isa.instruction import Instruction

__all__ = [
    "Architecture", "Encoding", "Example", "Field", "MemoryRegionSpec", "RegisterFile",
    "Decoder", "Disassembler", "Encoder", "Instruction", "ILLEGAL",
]
