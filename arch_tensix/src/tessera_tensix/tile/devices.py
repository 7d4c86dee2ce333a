"""The per-core windows of a tile, mapped into each core's own space.

* ``INSTRN_BUF_BASE``..: instruction push (:mod:`tessera_tensix.tile.push`);
* ``TENSIX_MOP_CFG_BASE``: the TRISC's thread's ``MopCfg[0..8]`` (MOPExpander.md,
  "Configuration": nine write-only words; a read returns the value, a store elsewhere in
  the window is ignored);
* ``0xFFBD8000``: the Dest debug window of RISCV T<i> (:mod:`tessera_tensix.debug_window`,
  shaped by ``RISC_DEST_ACCESS_CTRL_SEC<i>_*``).
"""

from __future__ import annotations

from typing import Any

from tessera_tensix.debug_window import DestWindow
from tessera_tensix.tile import memmap
from tessera_tensix.tile.push import PushWindow


class MopCfgWindow:
    """``TENSIX_MOP_CFG_BASE`` of RISCV T<i>: thread T<i>'s MOP expander configuration."""

    def __init__(self, thread: Any) -> None:
        self.thread = thread

    def write(self, offset: int, size: int, value: int) -> None:
        from tessera_tensix.mop import expander_of

        expander_of(self.thread).store(offset, value)

    def read(self, offset: int, size: int) -> int:
        from tessera_tensix.mop import CFG_WORDS, expander_of

        index = offset // 4
        return expander_of(self.thread).cfg[index] if offset % 4 == 0 and index < CFG_WORDS else 0


def install(machine: Any, tile: Any) -> None:
    """Map the push and MOP-configuration windows of every core."""
    for name, hart in tile.harts.items():
        hart.tensix_fifo = (tile.fifos[0] if name == "brisc"
                            else tile.fifos[int(name[-1])] if name.startswith("trisc") else None)
    for name, hart in tile.harts.items():
        own = tile.own[name]
        own.add_mmio("instrn_buf", memmap.INSTRN_BUF_BASE, 0x3_0000, PushWindow(hart, tile.fifos))
        if name.startswith("trisc"):
            own.add_mmio("mop_cfg", memmap.TENSIX_MOP_CFG_BASE, 0x24, MopCfgWindow(tile.thread_of(name)))
            # RISC_DEST_ACCESS_CTRL_SEC<i> of the accessing TRISC shapes the window
            hart.dest_window_sec = int(name[-1])
            own.add_mmio("dest_window", memmap.DEST_WINDOW_BASE, 0x8000, DestWindow(tile.core, own))
    from tessera_tensix.tile import mailboxes, pcbufs, regwindows

    mailboxes.install(machine, tile)       # TENSIX_MAILBOX0..3_BASE
    pcbufs.install(machine, tile)          # PC_BUF_BASE: PCBufs, TTSync, semaphores
    regwindows.install(machine, tile)      # REGFILE_BASE, TENSIX_CFG_BASE, TDMA-RISC
