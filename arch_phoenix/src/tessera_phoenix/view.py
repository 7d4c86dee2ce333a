"""The address space as one thread sees it: translation and PMA checks on top of memory.

Every data access and every instruction fetch of a thread goes through its view:
effective address → (machine mode: unchanged; otherwise the MMU's translation) →
PMA check (when enabled) → the machine's physical address space.  Faults become the
architecture's exceptions (TLB miss, page fault, PMA, DBE) raised as
:class:`~tessera.control.Trap` with the effective address as ``tval`` (BADADDR).

The engine's decode cache lives on the physical space, keyed per view, so writes to
code invalidate it; a change of translation (mode, ASID, PTBR, TLB write) flushes the
view's cache through :meth:`flush`.
"""

from __future__ import annotations

from typing import Any

from tessera.control import Trap

from tessera_phoenix import causes

MASK32 = 0xFFFF_FFFF
READ, WRITE, EXEC = "r", "w", "x"


class ThreadView:
    """Translation + PMA for one thread; quacks like an address space for the engine."""

    def __init__(self, name: str, phys: Any, shared: Any) -> None:
        self.name = name
        self.phys = phys
        self.shared = shared
        self.endian = phys.endian
        self.address_bits = phys.address_bits
        self.limit = phys.limit
        self.thread: Any = None
        self.current_agent: Any = None

    # ------------------------------------------------------------------ translation

    def translate(self, va: int, access: str) -> int:
        """Physical address for effective address ``va`` (raises the architecture's traps)."""
        va &= MASK32
        mmu = self.shared.mmu
        pa = va if mmu is None else mmu.translate(self.thread, va, access)
        pma = self.shared.pma
        if pma is not None and self.shared.config.pma:
            pma.check(pa, access, va)
        return pa

    # ------------------------------------------------------------------ engine interface

    def fetch(self, address: int, size: int) -> tuple[int, Any]:
        # TODO(mmu): an instruction straddling two pages needs both halves translated
        return self._phys_fetch(self.translate(address, EXEC), size, address)

    def _phys_fetch(self, pa: int, size: int, va: int) -> tuple[int, Any]:
        from tessera.errors import MemoryFault

        try:
            return self.phys.fetch(pa, size)
        except MemoryFault:
            raise Trap(causes.IBE, va, name="instruction bus error") from None

    def decode_cache(self, key: Any) -> Any:
        return self.phys.decode_cache((key, self.name))

    def mark_code(self, region: Any, address: int, size: int) -> None:
        self.phys.mark_code(region, self.translate_quiet(address), size)

    def translate_quiet(self, va: int) -> int:
        mmu = self.shared.mmu
        return va if mmu is None else mmu.peek(self.thread, va & MASK32)

    def flush(self) -> None:
        """Drop this thread's decoded instructions (its translation changed)."""
        for key, cache in self.phys._caches.items():
            if isinstance(key, tuple) and key[-1] == self.name:
                cache.clear()

    # ------------------------------------------------------------------ data access

    def read(self, va: int, size: int) -> int:
        from tessera.errors import MemoryFault

        pa = self.translate(va, READ)
        try:
            return self.phys.read(pa, size)
        except MemoryFault:
            raise Trap(causes.DBE, va & MASK32, name="data bus error") from None

    def write(self, va: int, size: int, value: int) -> None:
        from tessera.errors import MemoryFault

        pa = self.translate(va, WRITE)
        try:
            self.phys.write(pa, size, value)
        except MemoryFault:
            raise Trap(causes.DBE, va & MASK32, name="data bus error") from None
