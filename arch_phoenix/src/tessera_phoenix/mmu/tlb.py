"""The unified TLB: 5 ways x 1024 sets of 16 KiB pages (spec 5.4).

Storage is plain Python data so a machine snapshot captures it exactly: one dict
per way mapping a set index to that entry's 12 words (the TLBRD/TLBRW vector
elements 0..11: TLB words 0..3, PMT entry 4..7, PTE address 8..9, PMTE address
10..11).  An absent set means an all-zero (invalid) entry, so the 5120-entry
array costs nothing until it is filled and snapshots stay small.

Entry word 0 is the PTE (PPN[35:14] at 31:10, SW 9, M 8, A 7, G 6, C 5, R 4,
W 3, X 2, LVL 1:0); word 1 holds VPN = VA[31:24] at 31:24, the ASID at 23:12 (10
bits used) and PPNX = PA[47:36] at 11:0.  An entry hits when the tag matches, its
ASID matches or G is set, and RWX != 0 (RWX = 0 is the invalid encoding).

Replacement (PTBR.AL of the thread that misses or writes): ways 0..3 are the
hardware's; way 4 is only ever written by software.  Fixed: hardware fills way 0
and TLBRW writes the way it names.  LRU: fills and TLBRW (ways 0..3) replace way 3,
and every hit in ways 1..3 moves that entry to way 0, shifting the younger ones
down (HDL behaviour).  Random: a 32-bit xorshift generator kept here (so runs and
snapshots are deterministic) picks one of ways 0..3.
"""

from __future__ import annotations

from tessera_phoenix.mmu import ptbr as P

WAYS = 5
SETS = 1024
PINNED_WAY = 4
WORDS = 12
PAGE_BITS = 14
PAGE = 1 << PAGE_BITS

RWX = 0x1C
R_BIT, W_BIT, X_BIT = 0x10, 0x08, 0x04
G_BIT = 0x40
C_BIT = 0x20
A_BIT = 0x80
M_BIT = 0x100

RNG_SEED = 0x2545_F491
M32 = 0xFFFF_FFFF


def set_of(va: int) -> int:
    return (va >> PAGE_BITS) & (SETS - 1)


class TLB:
    """Entries, lookup and replacement; knows nothing of page tables or traps."""

    def __init__(self) -> None:
        self.ways: list[dict[int, list[int]]] = [{} for _ in range(WAYS)]
        self.rng = RNG_SEED
        self.preload()

    # ------------------------------------------------------------------ reset

    def preload(self) -> None:
        """Way 4, sets 0x3F0..0x3FF: identity map of 0xFFFC0000..0xFFFFFFFF (HDL reset).

        Global, RWX = 7, cacheable, modified — so lower modes can run the boot ROM
        and scratch RAM before any page table exists.
        """
        for page in range(16):
            va = 0xFFFC_0000 + page * PAGE
            entry = [0] * WORDS
            entry[0] = ((va >> PAGE_BITS) << 10) | M_BIT | G_BIT | C_BIT | RWX
            entry[1] = (va >> 24) << 24
            self.ways[PINNED_WAY][set_of(va)] = entry

    # ------------------------------------------------------------------ lookup

    def find(self, va: int, asid: int) -> tuple[int, list[int]] | None:
        """(way, entry) of the valid entry translating ``va`` for ``asid``, or None."""
        s = (va >> PAGE_BITS) & (SETS - 1)
        tag = va >> 24
        for way, table in enumerate(self.ways):
            e = table.get(s)
            if e is not None:
                w0, w1 = e[0], e[1]
                if w0 & RWX and w1 >> 24 == tag and (w0 & G_BIT or (w1 >> 12) & 0x3FF == asid):
                    return way, e
        return None

    def touch(self, s: int, way: int) -> None:
        """LRU: the entry just used in ``way`` (1..3) becomes way 0; ways 0..way-1 age by one."""
        ways = self.ways
        moved = ways[way].pop(s, None)
        for k in range(way, 0, -1):
            older = ways[k - 1].pop(s, None)
            if older is not None:
                ways[k][s] = older
        if moved is not None:
            ways[0][s] = moved

    # ------------------------------------------------------------------ replacement

    def random_way(self) -> int:
        x = self.rng
        x ^= (x << 13) & M32
        x ^= x >> 17
        x ^= (x << 5) & M32
        self.rng = x
        return (x >> 8) & 3

    def fill_way(self, ptbr: int) -> int:
        """The way a hardware table walk replaces under the thread's policy."""
        pol = P.policy(ptbr)
        if pol == P.AL_LRU:
            return 3
        if pol == P.AL_RANDOM:
            return self.random_way()
        return 0

    def write_way(self, ptbr: int, requested: int) -> int | None:
        """The way a TLBRW naming ``requested`` (Ra[2:0]) writes; None if no such way."""
        if requested == PINNED_WAY:
            return PINNED_WAY
        if requested >= WAYS:
            return None
        pol = P.policy(ptbr)
        if pol == P.AL_LRU:
            return 3
        if pol == P.AL_RANDOM:
            return self.random_way()
        return requested

    # ------------------------------------------------------------------ raw access

    def read(self, way: int, s: int) -> list[int]:
        """A copy of the 12 words of entry (way, set); zeros for an empty or absent way."""
        if not 0 <= way < WAYS:
            return [0] * WORDS
        e = self.ways[way].get(s & (SETS - 1))
        return list(e) if e is not None else [0] * WORDS

    def write(self, way: int, s: int, words: list[int]) -> None:
        words = [w & M32 for w in (list(words) + [0] * WORDS)[:WORDS]]
        table = self.ways[way]
        if any(words):
            table[s & (SETS - 1)] = words
        else:
            table.pop(s & (SETS - 1), None)

    def valid(self, way: int, s: int) -> bool:
        e = self.ways[way].get(s)
        return e is not None and bool(e[0] & RWX)

    def entries(self) -> list[tuple[int, int, list[int]]]:
        """Every stored entry as (way, set, words), for dumps and tests."""
        return [(w, s, list(e)) for w, table in enumerate(self.ways) for s, e in sorted(table.items())]
