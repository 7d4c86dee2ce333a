"""The ``tile`` architecture: RV64IM + the tile extension, composed with ``tessera_riscv.make_arch``.

:func:`make_tile_arch` builds a variant that decodes ACE words on other major opcodes
(tile.md G2: Andes' option to use custom-0/1/2 too); the registered ``tile`` uses
custom-3 only.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import attrs

from tessera.isa import Architecture
from tessera_riscv import RiscvExtension, make_arch
from tessera_riscv.hart import dump as riscv_dump
from tessera_tile import encodings, tables
from tessera_tile.board import TileBuild
from tessera_tile.config import tile_settings

#: The ISA-string extension a tile ELF names in its ``Tag_RISCV_arch`` (docs/tile.md "ELF files").
ELF_EXTENSIONS = frozenset({"xtile"})

DESCRIPTION = ("RISC-V RV64IM host with the SiOrigin-style tile extension through Andes ACE "
               "(tile.md reconstruction): sequencer, tile registers, LSU/TMA/MMA/ALU engines")


def dump(agent: Any) -> dict[str, Any]:
    """``Architecture.dump``: the hart's CSRs plus its tile-side state."""
    out = riscv_dump(agent)
    thread = getattr(agent, "tile", None)
    if thread is not None:
        out["tile"] = thread.state()
    return out


def extension(opcodes: Iterable[str] = ("custom-3",)) -> RiscvExtension:
    t = tables.builtin()
    names = tuple(opcodes)
    return RiscvExtension("tile", fields=(encodings.payload_field(t),),  # type: ignore[arg-type]
                          encodings=encodings.rows(t, list(names)),  # type: ignore[arg-type]
                          build=TileBuild(names), timing={encodings.TIMING_CLASS: 1},
                          settings=tile_settings())


def make_tile_arch(name: str = "tile", opcodes: Iterable[str] = ("custom-3",), **overrides: Any) -> Architecture:
    """The tile architecture decoding ACE words on ``opcodes`` (names: ``custom-0`` .. ``custom-3``)."""
    from tessera_tile.asm import TileAssembler
    from tessera_tile.disasm import TileDisassembler
    from tessera_tile.examples import examples

    values: dict[str, Any] = {"description": DESCRIPTION, "assembler": TileAssembler,
                              "disassembler": TileDisassembler, "dump": dump, "examples": examples(),
                              # an ELF runs here without --arch only if built for it
                              # (-march=rv64im_xtile1p0); a plain RV64 ELF runs on rv64im
                              "elf_extensions": ELF_EXTENSIONS}
    values.update(overrides)
    arch = make_arch(name, 64, extensions=[extension(opcodes)], **values)
    capabilities: set[str] = {*arch.capabilities, "multi-agent", "sync", "async-engine", "tile"}
    return attrs.evolve(arch, capabilities=capabilities)  # type: ignore[arg-type]


TILE = make_tile_arch()
