"""The decode cache: what the engine decoded, by address, and the blocks built from it.

Engine state, kept per architecture in the address space the code was fetched from
(:meth:`tessera.memory.space.AddressSpace.decode_cache`), because a write to that
space's code pages must drop the entries decoded from the bytes it overwrote.  The
space knows only that a cache can ``invalidate`` a range and ``clear``; the entries
(instructions filled by :mod:`tessera.engine.fill`) and the translated blocks
(:mod:`tessera.engine.blocks`) are the engine's.
"""

from __future__ import annotations

from typing import Any

from tessera.memory.regions import CODE_PAGE_BITS

__all__ = ["DecodeCache"]


class DecodeCache(dict):
    """``address → Instruction``, with a page index so a write drops only what it touched.

    A ``dict`` subclass so the engine's ``cache.get(pc)`` is the C method.  Each entry
    remembers the physical bytes it was decoded from (``physical`` differs from the
    key when an architecture translates addresses), so a write invalidates exactly
    the entries whose bytes it overlaps: data stored next to code costs a page look-up,
    not a re-decode of the page.
    """

    #: bumped (process-wide) whenever any cache drops an entry: a barrel run
    #: (:mod:`tessera.machine.barrel`) compares it to notice code being written
    generation = 0

    def __init__(self) -> None:
        super().__init__()
        self.pages: dict[int, set[int]] = {}
        self.extent: dict[int, tuple[int, int]] = {}
        #: translated blocks of the fast engine (tessera.engine.blocks), by start address
        self.blocks: dict[int, Any] = {}
        #: entry address -> blocks containing that instruction (dropped with it)
        self.block_members: dict[int, list[Any]] = {}

    def add(self, address: int, size: int, ins: Any, physical: int | None = None) -> None:
        start = address if physical is None else physical
        self[address] = ins
        self.extent[address] = (start, start + size)
        for page in range(start >> CODE_PAGE_BITS, ((start + size - 1) >> CODE_PAGE_BITS) + 1):
            self.pages.setdefault(page, set()).add(address)

    def invalidate(self, start: int, end: int) -> set[int]:
        """Drop entries whose bytes overlap ``[start, end)``; return the pages still holding code."""
        live = set()
        for page in range(start >> CODE_PAGE_BITS, ((end - 1) >> CODE_PAGE_BITS) + 1):
            addrs = self.pages.get(page)
            if not addrs:
                continue
            for addr in [a for a in addrs if self.extent[a][0] < end and start < self.extent[a][1]]:
                self._drop(addr)
            if self.pages.get(page):
                live.add(page)
        return live

    def _drop(self, addr: int) -> None:
        DecodeCache.generation += 1
        self.pop(addr, None)
        members: list[Any] = self.block_members.pop(addr, [])
        blocks = self.blocks
        for blk in members:
            blk.stale = True  # a running block notices and leaves (BlockExit)
            start: int = blk.start
            if blocks.get(start) is blk:
                del blocks[start]
        lo, hi = self.extent.pop(addr)
        for page in range(lo >> CODE_PAGE_BITS, ((hi - 1) >> CODE_PAGE_BITS) + 1):
            addrs = self.pages.get(page)
            if addrs is not None:
                addrs.discard(addr)
                if not addrs:
                    del self.pages[page]

    def clear(self) -> None:
        DecodeCache.generation += 1
        super().clear()
        self.pages.clear()
        self.extent.clear()
        for block in self.blocks.values():
            block.stale = True
        self.blocks.clear()
        self.block_members.clear()
