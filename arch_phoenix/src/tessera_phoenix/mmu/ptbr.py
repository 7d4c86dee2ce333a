"""The fields of PTBR (CSR 0x1003, spec 5.5), decoded in one place.

PTBR is a per-thread CSR that the MMU reads on every TLB miss and whose AL field
picks the replacement policy on every fill and every LRU update; naming the bits
here keeps the walkers and the TLB from each re-deriving them.

Layout: 31:13 table base (8 KiB aligned), 10:8 LVL (levels of the hierarchical
table), 7:6 AL (0 fixed, 1 LRU, 2 random, 3 reserved = fixed), 4 S (1 = software
miss handling: a miss raises TLB), 0 Type (0 hashed, 1 hierarchical).
"""

from __future__ import annotations

BASE_MASK = 0xFFFF_E000
S_BIT = 1 << 4
TYPE_TREE = 1

AL_FIXED, AL_LRU, AL_RANDOM = 0, 1, 2


def base(ptbr: int) -> int:
    """Physical address of the page table (level-1 pointers, flat table or hash table)."""
    return ptbr & BASE_MASK


def levels(ptbr: int) -> int:
    return (ptbr >> 8) & 7


def policy(ptbr: int) -> int:
    """TLB replacement policy; the reserved code 3 acts as fixed."""
    al = (ptbr >> 6) & 3
    return AL_FIXED if al == 3 else al


def software_managed(ptbr: int) -> bool:
    return bool(ptbr & S_BIT)


def hierarchical(ptbr: int) -> bool:
    return bool(ptbr & TYPE_TREE)
