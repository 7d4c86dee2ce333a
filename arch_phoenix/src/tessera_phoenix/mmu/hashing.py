"""Hashed page tables: the PTG hash, the probe sequence and the small-PTE match rule.

One module so PTGHASH, SHPTENDX and the hardware walker can never disagree: an OS
that inserts a mapping with PTGHASH + SHPTENDX finds it where the walker looks.

Hash (spec 5.5, the HDL formula, used verbatim by PTGHASH): with ``s`` the index of
the most significant 1 in HMASK (0 when HMASK = 0),
``hash = ((x ^ (ASID << s)) & ((HMASK << 10) | 0x3FF)) & 0xFFFF``.
The HDL applies it to the raw address, which would put the bytes of one page in
different groups; the walker therefore hashes the 64 KiB virtual page number
``x = VA >> 16`` (the number a small hash PTE stores), and software computes the
group of a page with ``srli t,va,16 ; ptghash t,t``.  [PROPOSAL]

Groups: a PTG is 8 small hash PTEs (SHPTE, 64 bits = word 0 then word 1, 64 bytes
per group = one 16-lane vector); group ``g`` is at table base + 64 * g.  Collisions:
quadratic probing, the n-th retry examines group ``(hash + n*n) & table_mask`` with
``table_mask = ((HMASK << 10) | 0x3FF) & 0xFFFF``, at most :data:`PROBES` groups.

SHPTE: word 0 = V 31, VPN[18:16] 27:25, PPN[18:16] 24:22, M 21, RWX 20:18 (R 20,
W 19, X 18), A 17, C 16, PPN[15:0] 15:0; word 1 = ASID 31:22, G 21, bounce count
20:17, VPN[15:0] 15:0.  Page numbers count 64 KiB pages (spec C29).
"""

from __future__ import annotations

#: groups examined before a hashed walk gives up (the range of the 4-bit bounce count)
PROBES = 16
PTG_ENTRIES = 8
PTG_BYTES = 64
SHPTE_BYTES = 8
HPAGE_BITS = 16


def ptghash(x: int, asid: int, hmask: int) -> int:
    """The HDL page-table-group hash of ``x`` (16 bits)."""
    hmask &= 0xFFFF_FFFF
    s = hmask.bit_length() - 1 if hmask else 0
    return ((x ^ ((asid & 0x3FF) << s)) & ((hmask << 10) | 0x3FF)) & 0xFFFF


def table_mask(hmask: int) -> int:
    return (((hmask & 0xFFFF_FFFF) << 10) | 0x3FF) & 0xFFFF


def probe_groups(vpn: int, asid: int, hmask: int) -> list[int]:
    """The group numbers a walk for 64 KiB page ``vpn`` examines, in order."""
    h = ptghash(vpn, asid, hmask)
    mask = table_mask(hmask)
    return [(h + n * n) & mask for n in range(PROBES)]


def shpte_matches(w1: int, vpn: int, asid: int) -> bool:
    """SHPTENDX's rule: VPN[15:0] equal and (ASID equal or G set).  V is not tested."""
    return (w1 & 0xFFFF) == (vpn & 0xFFFF) and ((w1 >> 22) == (asid & 0x3FF) or bool(w1 >> 21 & 1))


def shpte_valid(w0: int) -> bool:
    return bool(w0 >> 31)


def shpte_ppn(w0: int) -> int:
    """The 19-bit 64 KiB physical page number of a small hash PTE."""
    return (((w0 >> 22) & 7) << 16) | (w0 & 0xFFFF)
