"""The tile architectures: ``tensix-tile`` (Blackhole) and ``tensix-tile-wh`` (Wormhole B0).

A tile architecture is what its baby RISC-V cores execute — RV32IM + Zicsr (and the
RISC-V plugin's Zba, Zbb, Zaamo) with the ``.ttinsn`` push extension — composed
through the RISC-V plugin's extension point (:func:`tessera_riscv.make_arch`), with a
board of its own (:func:`tessera_tensix.tile.board.build_tile`): L1, the Tensix
coprocessor and its fed threads, RISCV B and T0..T2.  The Tensix threads run the
Tensix architecture of the same chip (``tensix`` / ``tensix-wh``).
"""

from __future__ import annotations

from typing import Any

from tessera_tensix.config import settings


class TileBoard:
    """``Architecture.build`` of a tile (a class, so the record pickles)."""

    def __init__(self, chip: str) -> None:
        self.chip = chip

    def __call__(self, machine: Any) -> None:
        from tessera_tensix.arch import TENSIX_BH, TENSIX_WH
        from tessera_tensix.tile.board import build_tile

        build_tile(machine, TENSIX_WH if self.chip == "wh" else TENSIX_BH, machine.arch, self.chip)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, TileBoard) and other.chip == self.chip

    def __hash__(self) -> int:
        return hash(("tensix-tile", self.chip))


def _tile(name: str, chip: str, description: str) -> Any:
    from tessera_riscv import RiscvExtension, make_arch
    from tessera_tensix.examples.tile import examples
    from tessera_tensix.tile import asserts, push

    ext = RiscvExtension("ttinsn", fields=(push.TTBITS,), encodings=push.rows(),  # type: ignore[arg-type]
                         timing=push.TIMING)
    return make_arch(name, 32, extensions=[ext], description=description, build=TileBoard(chip),
                     # vendor ELFs name no extension (their .ttinsn words are .word data):
                     # they run here when --arch or a kernel manifest chooses the tile
                     elf_extensions={"xttinsn"},
                     reset_pc=0, settings=settings(chip), examples=examples(chip),
                     take_trap=asserts.take_trap,   # a failed LLK_ASSERT says so, and where
                     cli_flags={
                         "lenient": ("lenient", True, "continue with hardware-like behaviour where a "
                                                      "Tensix rule is broken")},
                     capabilities={"traps", "mmio", "zicsr", "zba", "zbb", "zaamo", "extensions",
                                   "sync", "multi-agent", "bulk-data"})


TILE_BH = _tile("tensix-tile", "bh", "Tenstorrent Tensix tile (Blackhole): baby RISC-V cores B, T0..T2 "
                                     "pushing to the Tensix coprocessor")
TILE_WH = _tile("tensix-tile-wh", "wh", "Tenstorrent Tensix tile (Wormhole B0): baby RISC-V cores B, T0..T2 "
                                        "pushing to the Tensix coprocessor")
