"""The MMU: effective address → physical address for one thread and one access kind.

Machine mode bypasses translation (spec 1.6) — the common case, decided by one
test of the status word so machine-mode programs pay nothing.  MPRV (STATUS bit
17) makes loads and stores of machine mode use the previous mode (status stack
entry 1); fetches ignore it, and it is honoured only in machine mode so a lower
mode can never borrow the identity map.  Other modes look the address up in the
shared TLB; a miss raises TLB (4) when PTBR.S = 1, else the hardware walks the
page table and fills the TLB by PTBR.AL.

Faults (BADADDR = the effective address):

* TLB entry present but the access right is missing: load DRF (51), store DWF
  (50), fetch EXF (2, "executable fault": the page is there but not executable).
* walk finds no mapping: fetch CPF (57), load/store DPF (58); PTP/PTBR level
  mismatch: LVL (59); a table read from unmapped memory: IBE (1) / DBE (60).

Accessed/modified: a translated access sets A (bit 7) in the TLB entry, a store
also M (bit 8).  They live in the TLB only (software reads them with TLBRD); the
page tables in memory are never written by the hardware.  [PROPOSAL]

Translation changes — TLBRW, a hardware fill that evicts a valid entry, a PMA
table change — bump :attr:`MMU.generation` and ask every thread's view to drop
decoded instructions made under the old translation (views compare contexts, so
a thread in machine mode keeps its cache).
"""

from __future__ import annotations

from typing import Any

from tessera.control import Trap
from tessera_phoenix import causes
from tessera_phoenix.mmu import ptbr as P
from tessera_phoenix.mmu import walk as W
from tessera_phoenix.mmu.tlb import A_BIT, M_BIT, PAGE_BITS, PINNED_WAY, R_BIT, SETS, TLB, W_BIT, X_BIT

MPRV = 1 << 17
MODE_BITS = 0xC00
READ, WRITE, EXEC = "r", "w", "x"

RIGHT = {READ: R_BIT, WRITE: W_BIT, EXEC: X_BIT}
DENIED = {READ: (causes.DRF, "data read fault"), WRITE: (causes.DWF, "data write fault"),
          EXEC: (causes.EXF, "executable fault")}
TOUCH = {READ: A_BIT, WRITE: A_BIT | M_BIT, EXEC: A_BIT}


def translates(thread: Any, access: str) -> bool:
    """Does ``access`` by ``thread`` go through the TLB (False: identity)?"""
    st = thread.status_stack[0]
    if st & MODE_BITS != MODE_BITS:
        return True
    if not st & MPRV or access == EXEC:
        return False
    return thread.status_stack[1] & MODE_BITS != MODE_BITS


def _walk_trap(kind: str, va: int, access: str) -> Trap:
    if kind == W.LEVEL:
        return Trap(causes.LVL, va, name="page-table level error")
    if kind == W.BUS:
        if access == EXEC:
            return Trap(causes.IBE, va, name="instruction bus error (page-table walk)")
        return Trap(causes.DBE, va, name="data bus error (page-table walk)")
    if access == EXEC:
        return Trap(causes.CPF, va, name="code page fault")
    return Trap(causes.DPF, va, name="data page fault")


class MMU:
    """Translation for every thread of a core; state (the TLB) is shared by them."""

    def __init__(self, shared: Any, phys: Any) -> None:
        self.shared = shared
        self.phys = phys
        self.tlb = TLB()
        self.generation = 0

    # ------------------------------------------------------------------ translation

    def translate(self, thread: Any, va: int, access: str) -> int:
        """Physical address for ``va`` (32 bits) or a Trap; may fill and update the TLB."""
        st = thread.status_stack[0]
        if st & MODE_BITS == MODE_BITS:
            if not st & MPRV or access == EXEC or thread.status_stack[1] & MODE_BITS == MODE_BITS:
                return va
        return self.lookup(thread, va, access)

    def lookup(self, thread: Any, va: int, access: str) -> int:
        """Translate through the TLB (walking the table on a miss), checking the access right."""
        tlb = self.tlb
        hit = tlb.find(va, thread.asid & 0x3FF)
        if hit is None:
            way, e = self._miss(thread, va, access)
        else:
            way, e = hit
        w0 = e[0]
        if not w0 & RIGHT[access]:
            cause, name = DENIED[access]
            raise Trap(cause, va, name=name)
        touched = w0 | TOUCH[access]
        if touched != w0:
            e[0] = touched
        if 0 < way < PINNED_WAY and P.policy(thread.ptbr) == P.AL_LRU:
            tlb.touch((va >> PAGE_BITS) & (SETS - 1), way)
        return ((e[1] & 0xFFF) << 36) | ((w0 >> 10) << PAGE_BITS) | (va & 0x3FFF)

    def _miss(self, thread: Any, va: int, access: str) -> tuple[int, list[int]]:
        ptbr = thread.ptbr
        if P.software_managed(ptbr):
            raise Trap(causes.TLB, va, name="TLB miss")
        try:
            entry = W.walk(self.phys, ptbr, va, thread.asid & 0x3FF, self.shared.hmask)
        except W.WalkFault as fault:
            raise _walk_trap(fault.kind, va, access) from None
        tlb = self.tlb
        way = tlb.fill_way(ptbr)
        s = (va >> PAGE_BITS) & (SETS - 1)
        evicts = tlb.valid(way, s)
        tlb.ways[way][s] = entry
        if evicts:
            self.changed()
        return way, entry

    def peek(self, thread: Any, va: int) -> int:
        """Where a fetch of ``va`` would go, with no side effect and no trap (``va`` if unknown)."""
        if not translates(thread, EXEC):
            return va
        hit = self.tlb.find(va, thread.asid & 0x3FF)
        if hit is not None:
            e = hit[1]
        else:
            if P.software_managed(thread.ptbr):
                return va
            try:
                e = W.walk(self.phys, thread.ptbr, va, thread.asid & 0x3FF, self.shared.hmask)
            except W.WalkFault:
                return va
        return ((e[1] & 0xFFF) << 36) | ((e[0] >> 10) << PAGE_BITS) | (va & 0x3FFF)

    # ------------------------------------------------------------------ software access (TLBRD/TLBRW)

    def read_entry(self, way: int, s: int) -> list[int]:
        return self.tlb.read(way, s)

    def write_entry(self, thread: Any, requested_way: int, s: int, words: list[int]) -> list[int] | None:
        """TLBRW: write the way the policy picks for ``requested_way``; returns the replaced entry."""
        way = self.tlb.write_way(thread.ptbr, requested_way)
        if way is None:
            return None
        old = self.tlb.read(way, s)
        self.tlb.write(way, s, words)
        self.changed()
        return old

    def state(self) -> dict[str, Any]:
        """JSON-able TLB contents (non-empty entries) and replacement state, for dumps."""
        return {"tlb": [[way, s, *words] for way, s, words in self.tlb.entries()],
                "rng": self.tlb.rng, "generation": self.generation}

    # ------------------------------------------------------------------ translation changes

    def changed(self) -> None:
        """Some translation may differ now: views re-decode what they cached under the old one."""
        self.generation += 1
        flush_views(self.shared)


def flush_views(shared: Any) -> None:
    """Ask every thread's view to drop decoded code whose translation may have changed."""
    machine = shared.machine
    if machine is None:
        return
    for agent in machine.agents:
        flush = getattr(getattr(agent, "space", None), "flush", None)
        if flush is not None:
            flush()
