"""Hardware page-table walks (spec 5.5): PTBR.Type picks the hierarchical or the hashed table.

A walk turns a virtual address into the 12-word TLB entry the MMU installs, or
raises :class:`WalkFault` naming what went wrong; the MMU maps that to the cause
code (page fault on fetch or data, level error, bus error), so the walkers stay
free of trap policy.  Walks read physical memory directly: table reads are not
subject to the PMA check and never modify the tables (the hardware keeps A and M
in the TLB entry only — see :mod:`tessera_phoenix.mmu.unit`).

Hierarchical (Type 1), PTBR.LVL levels:

* LVL = 2 (the 32-bit layout of the spec): the level-1 table at the PTBR base holds
  64 page-table pointers indexed by VA[31:26].  PTP = leaf-table PA[31:14] at 31:14,
  PPNX at 13:2 (PA[47:36] of every page the leaf's PTEs map — the leaf table itself
  lies below 4 GiB), LVL at 1:0 which must be 1 (else level error); a PTP whose PPN
  field is all ones is invalid (page fault).  The leaf table is one 16 KiB page of
  4096 PTEs indexed by VA[25:14].
* LVL = 1: a flat table of 2^18 PTEs at the PTBR base indexed by VA[31:14], PPNX 0.
  [PROPOSAL]
* any other LVL: level error.

A PTE has the TLB word-0 format; RWX = 0 means not present (page fault).
PA = {PPNX, PTE.PPN, VA[13:0]}.

Hashed (Type 0): see :mod:`tessera_phoenix.mmu.hashing` for the hash, the probe
sequence and the small-PTE format.  The first valid SHPTE matching the 64 KiB page
and the thread's ASID (or G) translates; the 16 KiB TLB entry covers the quarter
of that page containing VA.  No match after :data:`~hashing.PROBES` groups: page fault.
"""

from __future__ import annotations

from typing import Any

from tessera.errors import MemoryFault
from tessera_phoenix.mmu import hashing
from tessera_phoenix.mmu import ptbr as P
from tessera_phoenix.mmu.tlb import PAGE_BITS, WORDS

PAGE_FAULT, LEVEL, BUS = "page", "level", "bus"
INVALID_PTP = 0x3FFFF
M32 = 0xFFFF_FFFF


class WalkFault(Exception):
    """The walk found no usable translation; ``kind`` is page, level or bus."""

    def __init__(self, kind: str) -> None:
        super().__init__(kind)
        self.kind = kind


def walk(phys: Any, ptbr: int, va: int, asid: int, hmask: int) -> list[int]:
    """The TLB entry (12 words) translating ``va`` for ``asid`` under ``ptbr``."""
    if P.hierarchical(ptbr):
        return walk_tree(phys, ptbr, va, asid)
    return walk_hashed(phys, ptbr, va, asid, hmask)


def _read(phys: Any, pa: int, size: int) -> int:
    try:
        return phys.read(pa, size)
    except MemoryFault:
        raise WalkFault(BUS) from None


def _entry(w0: int, va: int, asid: int, ppnx: int, pte_addr: int) -> list[int]:
    e = [0] * WORDS
    e[0] = w0 & M32
    e[1] = ((va >> 24) << 24) | ((asid & 0x3FF) << 12) | (ppnx & 0xFFF)
    e[2] = e[8] = pte_addr & M32
    e[3] = e[9] = (pte_addr >> 32) & 0xFFFF
    return e


def walk_tree(phys: Any, ptbr: int, va: int, asid: int) -> list[int]:
    base = P.base(ptbr)
    levels = P.levels(ptbr)
    if levels == 2:
        ptp = _read(phys, base + 4 * (va >> 26), 4)
        if ptp >> 14 == INVALID_PTP:
            raise WalkFault(PAGE_FAULT)
        if ptp & 3 != 1:
            raise WalkFault(LEVEL)
        ppnx = (ptp >> 2) & 0xFFF          # for the pages the PTEs map, not for the table
        pte_addr = (ptp & 0xFFFF_C000) + 4 * ((va >> PAGE_BITS) & 0xFFF)
    elif levels == 1:
        ppnx = 0
        pte_addr = base + 4 * (va >> PAGE_BITS)
    else:
        raise WalkFault(LEVEL)
    pte = _read(phys, pte_addr, 4)
    if not pte & 0x1C:
        raise WalkFault(PAGE_FAULT)
    return _entry(pte, va, asid, ppnx, pte_addr)


def walk_hashed(phys: Any, ptbr: int, va: int, asid: int, hmask: int) -> list[int]:
    base = P.base(ptbr)
    vpn = va >> hashing.HPAGE_BITS
    for group in hashing.probe_groups(vpn, asid, hmask):
        addr = base + group * hashing.PTG_BYTES
        ptg = _read(phys, addr, hashing.PTG_BYTES)
        for i in range(hashing.PTG_ENTRIES):
            w0 = (ptg >> (64 * i)) & M32
            w1 = (ptg >> (64 * i + 32)) & M32
            if hashing.shpte_valid(w0) and hashing.shpte_matches(w1, vpn, asid):
                return _from_shpte(w0, w1, va, asid, addr + hashing.SHPTE_BYTES * i)
    raise WalkFault(PAGE_FAULT)


def _from_shpte(w0: int, w1: int, va: int, asid: int, pte_addr: int) -> list[int]:
    pa_page = (hashing.shpte_ppn(w0) << hashing.HPAGE_BITS) | (va & 0xC000)
    ppn = (pa_page >> PAGE_BITS) & 0x3F_FFFF
    ppnx = pa_page >> 36
    rwx = (w0 >> 18) & 7
    te = ((ppn << 10) | ((w0 >> 21) & 1) << 8 | ((w0 >> 17) & 1) << 7 | ((w1 >> 21) & 1) << 6
          | ((w0 >> 16) & 1) << 5 | rwx << 2)
    return _entry(te, va, asid, ppnx, pte_addr)
