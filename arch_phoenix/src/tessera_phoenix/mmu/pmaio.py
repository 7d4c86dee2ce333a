"""The PMA register window at physical 0xFF9F0000 (spec 5.6, HDL layout).

Region n occupies 16 32-bit words at byte offset 0x40 * n: 0/1 start low/high,
2/3 end, 4/5 PMT address, 6/7 card-table address (high words keep 16 bits, so
addresses are 48 bits), 8 AT (20 bits), 14 LOCK; the other words read 0 and
ignore writes.  Only word-address bits 8:2 are decoded, so the 512-byte block
repeats through the 4 KiB window (HDL).  A region's registers accept writes only
while its LOCK word holds "UNLK" (0x554E4C4B, 'U' in the most significant byte,
as the HDL's string compare sees it); LOCK itself is always writable, and writing
anything else (normally "LOCK") locks the region again.  Reset: every region locked.

Accesses of any size and alignment are assembled from (or merged into) the words
they touch, little-endian, so byte and halfword accesses behave like memory.
"""

from __future__ import annotations

from typing import Any

from tessera_phoenix.mmu import pma as T
from tessera_phoenix.mmu.unit import flush_views

WINDOW_BASE = 0xFF9F_0000
WINDOW_SIZE = 0x1000
M32 = 0xFFFF_FFFF
_LOW = {0: T.START, 2: T.END, 4: T.PMT, 6: T.CTA}
_HIGH = {1: T.START, 3: T.END, 5: T.PMT, 7: T.CTA}
AT_WORD, LOCK_WORD = 8, 14


class PMAWindow:
    """MMIO device presenting a :class:`~tessera_phoenix.mmu.pma.PMA` as registers.

    It holds the shared state (not a callback) so it pickles with the machine; after a
    write that changes the table, every thread's view drops decoded code, since a
    fetch right (X) may have changed.
    """

    def __init__(self, pma: T.PMA, shared: Any) -> None:
        self.pma = pma
        self.shared = shared

    # ------------------------------------------------------------------ word level

    def read_word(self, index: int) -> int:
        region = self.pma.regions[(index >> 4) & 7]
        w = index & 15
        if w in _LOW:
            return region[_LOW[w]] & M32
        if w in _HIGH:
            return (region[_HIGH[w]] >> 32) & 0xFFFF
        if w == AT_WORD:
            return region[T.AT]
        if w == LOCK_WORD:
            return region[T.LOCK]
        return 0

    def write_word(self, index: int, value: int) -> bool:
        """Store one register; True if the region table (not just a LOCK word) changed."""
        region = self.pma.regions[(index >> 4) & 7]
        w = index & 15
        value &= M32
        if w == LOCK_WORD:
            region[T.LOCK] = value
            return False
        if region[T.LOCK] != T.UNLOCKED:
            return False
        if w in _LOW:
            f = _LOW[w]
            new = (region[f] & ~M32) | value
        elif w in _HIGH:
            f = _HIGH[w]
            new = (region[f] & M32) | ((value & 0xFFFF) << 32)
        elif w == AT_WORD:
            f, new = T.AT, value & 0xF_FFFF
        else:
            return False
        if region[f] == new:
            return False
        region[f] = new
        return True

    # ------------------------------------------------------------------ MMIO device interface

    def read(self, offset: int, size: int) -> int:
        value = 0
        for k in range(size):
            off = offset + k
            byte = (self.read_word((off >> 2) & 0x7F) >> (8 * (off & 3))) & 0xFF
            value |= byte << (8 * k)
        return value

    def write(self, offset: int, size: int, value: int) -> None:
        changed = False
        first, last = offset >> 2, (offset + size - 1) >> 2
        for word in range(first, last + 1):
            index = word & 0x7F
            merged = self.read_word(index)
            for k in range(size):
                off = offset + k
                if off >> 2 == word:
                    shift = 8 * (off & 3)
                    merged = (merged & ~(0xFF << shift)) | (((value >> (8 * k)) & 0xFF) << shift)
            changed |= self.write_word(index, merged)
        if changed:
            self.pma.rebuild()
            flush_views(self.shared)
