"""MMU-support instructions: TLBRD, TLBRW, PTGHASH, SHPTENDX (spec 4.9, 5.4, 5.5).

TLBRD/TLBRW move one TLB entry between the TLB and a vector register using the
16-element layout of spec 5.4: elements 0..3 the TLB entry words, 4..7 the PMT
entry, 8..9 the PTE address, 10..11 the PMTE address, 12..15 zero (elements past
NLANES are not transferred; a TLBRW from a narrower register writes them as 0).
Ra selects the entry: bits 2:0 the way, bits 14:5 the set (= VA[23:14]).  They
are machine-mode only (PRIV 53 otherwise) [PROPOSAL, spec 1.6], and a vector
destination is written under the lane mask like any vector result.

* TLBRD with a scalar Rt returns element 0 (the PTE word); a way number 5..7
  reads as all zeros.
* TLBRW writes Vb to the way the replacement policy (PTBR.AL) picks for the named
  way — fixed: that way; LRU: way 3; random: a pseudo-random way 0..3; way 4 is
  always written as named (HDL) — and returns in Vt the entry it replaced (so
  software can see the A/M bits of what it evicted).  Way 5..7: nothing is written
  and Vt receives zeros.  A scalar Rb cannot supply an entry: UNIMP.  Every thread
  drops decoded code that might depend on the old entry.

PTGHASH and SHPTENDX use :mod:`tessera_phoenix.mmu.hashing`, the same rules the
hardware walker uses; they run in any mode.
"""

from __future__ import annotations

from typing import Any

from tessera_phoenix import exceptions
from tessera_phoenix.mmu import hashing
from tessera_phoenix.semantics import op
from tessera_phoenix.semantics.lanes import (
    T_BIT,
    count,
    elementwise,
    mask_of,
    read_scalar,
    vector_bits,
    write_elements,
    write_vector_bits,
)

M32 = 0xFFFF_FFFF
ELEMENTS = 16


def _selector(thread: Any, ins: Any) -> tuple[int, int]:
    ra = read_scalar(thread, ins.ra, ins.address)
    return ra & 7, (ra >> 5) & 0x3FF


def _put_entry(thread: Any, ins: Any, words: list[int]) -> None:
    spec = ins.rt
    if not spec & T_BIT:
        thread.wr(spec & 63, words[0])
        return
    bits = 0
    for i, w in enumerate(words[:ELEMENTS]):
        bits |= (w & M32) << (32 * i)
    write_vector_bits(thread, spec & 63, bits, thread.lane_mask(mask_of(ins), ins.address))


@op("tlbrd")
def tlbrd(thread: Any, ins: Any) -> None:
    exceptions.require_machine(thread, "TLBRD")
    way, s = _selector(thread, ins)
    _put_entry(thread, ins, thread.shared.mmu.read_entry(way, s))


@op("tlbrw")
def tlbrw(thread: Any, ins: Any) -> None:
    exceptions.require_machine(thread, "TLBRW")
    if not ins.rb & T_BIT:
        raise exceptions.undefined(ins)
    way, s = _selector(thread, ins)
    bits = vector_bits(thread, ins.rb & 63)
    words = [(bits >> (32 * i)) & M32 for i in range(min(ELEMENTS, thread.lanes))]
    old = thread.shared.mmu.write_entry(thread, way, s, words)
    _put_entry(thread, ins, old if old is not None else [0] * ELEMENTS)


@op("ptghash")
def ptghash(thread: Any, ins: Any) -> None:
    asid = thread.asid & 0x3FF
    hmask = thread.shared.hmask

    # a lambda, not a nested def: its value is not a ``return`` the engine could take for a PC
    elementwise(thread, ins, lambda a, w: hashing.ptghash(a, asid, hmask), (ins.ra,), w=32)


@op("shptendx")
def shptendx(thread: Any, ins: Any) -> None:
    if not ins.rb & T_BIT:
        raise exceptions.undefined(ins)
    pc = ins.address
    vpn = read_scalar(thread, ins.ra, pc) >> hashing.HPAGE_BITS
    asid = thread.asid & 0x3FF
    bits = vector_bits(thread, ins.rb & 63)
    result = M32
    for i in range(min(hashing.PTG_ENTRIES, thread.lanes // 2)):
        if hashing.shpte_matches((bits >> (64 * i + 32)) & M32, vpn, asid):
            result = i
            break
    write_elements(thread, ins.rt, [result] * count(thread, 32), 32, mask_of(ins), pc)
