"""The address space as one thread sees it: translation and PMA checks on top of memory.

Every data access and every instruction fetch of a thread goes through its view:
effective address → (machine mode: unchanged; otherwise the MMU's translation) →
PMA check (when enabled) → the machine's physical address space.  Faults become the
architecture's exceptions (TLB miss, page fault, PMA, DBE) raised as
:class:`~tessera.control.Trap` with the effective address as ``tval`` (BADADDR).
Callers split data accesses that cross a 16 KiB page (each page translates on its
own); :meth:`ThreadView.fetch` splits instructions itself.

Fetch faults leave :meth:`~ThreadView.fetch` as :class:`FetchFault`, a
``MemoryFault`` carrying the trap: the engine turns it back into the trap through
``exceptions.memory_trap``, while the postfix look-ahead of a decode-cache fill
(which swallows memory faults) simply sees "no postfix" instead of faulting the
instruction in front of an unmapped page.

Decoded instructions are cached per view and keyed by *virtual* address, so the
cache is only valid for one translation context (machine mode, or ASID + PTBR +
TLB generation; plus the PMA table generation).  :meth:`ThreadView.flush` drops the
cache when that context changed and is a no-op otherwise, so callers may call it
after anything that might change translation (exception entry, RTI, REX, PTBR or
ASID writes, TLBRW).  The cache indexes entries by *physical* page and is kept by
the physical space (:meth:`~tessera.memory.space.AddressSpace.view_cache`), so a store
to code invalidates them whatever virtual address they were decoded at.

With the test-bench memory (``memory=testbench``) every physical address is folded
onto the bench memory's home copy (:func:`tessera_phoenix.testbench.fold`) right
after translation, so all aliases of a byte are one physical address to the decode
caches and to self-modifying-code checks.
"""

from __future__ import annotations

from typing import Any

from tessera.control import Trap
from tessera.engine import DecodeCache
from tessera.errors import MemoryFault
from tessera_phoenix import causes
from tessera_phoenix.mmu.unit import translates
from tessera_phoenix.testbench import HOME, SIZE, fold

MASK32 = 0xFFFF_FFFF
READ, WRITE, EXEC = "r", "w", "x"
PAGE = 1 << 14
#: STATUS bits that decide "machine mode without MPRV" (identity for loads/stores)
_M_MPRV = 0x20C00
_M_ONLY = 0x00C00


class FetchFault(MemoryFault):
    """An instruction fetch the thread may not make; ``trap`` is the exception it raises."""

    def __init__(self, trap: Trap) -> None:
        super().__init__(trap.name, address=trap.tval, access="fetch")
        self.trap = trap


class Placed:
    """Where a translated fetch landed, in the terms the engine's decode-cache fill uses.

    ``end`` is the first *virtual* address past the bytes that are known to be
    physically contiguous (the end of the region, or of the 16 KiB page), so the
    engine caches an instruction only if it lies wholly inside; ``region`` is the
    physical region (None for an instruction split across two pages, never cached).
    """

    __slots__ = ("region", "end", "cacheable", "pa")

    def __init__(self, region: Any, end: int, pa: int) -> None:
        self.region = region
        self.end = end
        self.pa = pa
        self.cacheable = region is not None and region.cacheable


class ViewDecodeCache(DecodeCache):
    """A view's decoded instructions, keyed by virtual address, indexed by physical page."""

    def __init__(self, view: ThreadView) -> None:
        super().__init__()
        self.view = view

    def add(self, address: int, size: int, ins: Any, physical: int | None = None) -> None:
        super().add(address, size, ins, self.view.translate_quiet(address) if physical is None else physical)


class ThreadView:
    """Translation + PMA for one thread: the engine's :class:`~tessera.memory.view.AgentSpace`."""

    def __init__(self, name: str, phys: Any, shared: Any) -> None:
        self.name = name
        self.phys = phys
        self.shared = shared
        self.endian = phys.endian
        self.address_bits = phys.address_bits
        self.limit = phys.limit
        self.thread: Any = None
        self._current_agent: Any = None
        #: the test bench folds every physical address onto its one memory (:func:`fold`)
        self.bench = shared.config.memory == "testbench"
        self._ctx: tuple[int, ...] = self._context()

    @property
    def current_agent(self) -> Any:
        return self._current_agent

    @current_agent.setter
    def current_agent(self, agent: Any) -> None:
        # the engine announces the executing thread here once per slice; memory watches
        # wrap the physical space, so it must know too
        self._current_agent = agent
        self.phys.current_agent = agent

    # ------------------------------------------------------------------ translation

    def translate(self, va: int, access: str) -> int:
        """Physical address for effective address ``va`` (raises the architecture's traps).

        Machine mode without MPRV (the common case) is the identity, decided by one test
        of the status word; everything else asks the MMU, which knows the full rule.
        """
        va &= MASK32
        mmu = self.shared.mmu
        thread = self.thread
        if mmu is None or thread.status_stack[0] & _M_MPRV == _M_ONLY:
            pa = va
        else:
            pa = mmu.translate(thread, va, access)
        self._check_pma(pa, access, va)
        return fold(pa) if self.bench else pa

    def translate_quiet(self, va: int) -> int:
        """Where a fetch of ``va`` goes, without side effects or traps (``va`` if unknown)."""
        mmu = self.shared.mmu
        pa = va if mmu is None or self.thread is None else mmu.peek(self.thread, va & MASK32)
        return fold(pa) if self.bench else pa

    peek = translate_quiet

    # ------------------------------------------------------------------ engine interface

    def fetch(self, address: int, size: int) -> tuple[int, Any]:
        va = address & MASK32
        thread = self.thread
        mmu = self.shared.mmu
        try:
            if mmu is None or not translates(thread, EXEC):
                self._check_pma(va, EXEC, va)
                if self.bench:
                    return self._bench_fetch(va, size)
                return self._phys_fetch(va, size, va)
            off = va & (PAGE - 1)
            if off + size <= PAGE:
                pa = mmu.translate(thread, va, EXEC)
                self._check_pma(pa, EXEC, va)
                if self.bench:
                    pa = fold(pa)  # a page never crosses the end of the bench memory
                word, region = self._phys_fetch(pa, size, va)
                return word, Placed(region, va + min(region.end - pa, PAGE - off), pa)
            # the instruction straddles two pages: both halves translate on their own
            first = PAGE - off
            va2 = (va + first) & MASK32
            pa = mmu.translate(thread, va, EXEC)
            self._check_pma(pa, EXEC, va)
            pa2 = mmu.translate(thread, va2, EXEC)
            self._check_pma(pa2, EXEC, va2)
            if self.bench:
                pa, pa2 = fold(pa), fold(pa2)
            low, _ = self._phys_fetch(pa, first, va)
            high, _ = self._phys_fetch(pa2, size - first, va2)
            return low | (high << (8 * first)), Placed(None, va, pa)
        except Trap as trap:
            raise FetchFault(trap) from None

    def _bench_fetch(self, va: int, size: int) -> tuple[int, Any]:
        """An untranslated fetch from the test-bench memory (wrapping at its end, as the bench does)."""
        pa = fold(va)
        first = HOME + SIZE - pa
        if size <= first:
            word, region = self._phys_fetch(pa, size, va)
            return word, Placed(region, va + (region.end - pa), pa)
        low, _ = self._phys_fetch(pa, first, va)
        high, _ = self._phys_fetch(HOME, size - first, (va + first) & MASK32)
        return low | (high << (8 * first)), Placed(None, va, pa)

    def _check_pma(self, pa: int, access: str, va: int) -> None:
        pma = self.shared.pma
        if pma is not None and pma.enabled:
            pma.check(pa, access, va)

    def _phys_fetch(self, pa: int, size: int, va: int) -> tuple[int, Any]:
        try:
            return self.phys.fetch(pa, size)
        except MemoryFault:
            raise Trap(causes.IBE, va, name="instruction bus error") from None

    def decode_cache(self, key: Any, make: Any = None) -> Any:
        # kept by the physical space, so its stores reach it; ``make`` (the engine's plain
        # DecodeCache) goes unused: a view's cache indexes entries by physical address
        return self.phys.view_cache(self.name, key, lambda: ViewDecodeCache(self))

    def mark_code(self, region: Any, address: int, size: int) -> None:
        if isinstance(region, Placed):
            if region.region is not None:
                self.phys.mark_code(region.region, region.pa, size)
            return
        self.phys.mark_code(region, self.translate_quiet(address), size)

    # ------------------------------------------------------------------ translation changes

    def _context(self) -> tuple[int, ...]:
        """What the decoded instructions of this view depend on besides memory contents."""
        shared = self.shared
        pma = shared.pma
        pgen = pma.generation if pma is not None else 0
        mmu = shared.mmu
        t = self.thread
        if mmu is None or t is None or not translates(t, EXEC):
            return (pgen,)
        return (pgen, t.asid & 0x3FF, t.ptbr, mmu.generation)

    def flush(self, force: bool = False) -> None:
        """Drop this thread's decoded instructions if its translation changed (always if ``force``)."""
        ctx = self._context()
        if ctx == self._ctx and not force:
            return
        self._ctx = ctx
        self.phys.clear_view_caches(self.name)

    # ------------------------------------------------------------------ data access

    def read(self, va: int, size: int) -> int:
        pa = self.translate(va, READ)
        try:
            return self.phys.read(pa, size)
        except MemoryFault:
            raise Trap(causes.DBE, va & MASK32, name="data bus error") from None

    def write(self, va: int, size: int, value: int) -> None:
        pa = self.translate(va, WRITE)
        try:
            self.phys.write(pa, size, value)
        except MemoryFault:
            raise Trap(causes.DBE, va & MASK32, name="data bus error") from None
