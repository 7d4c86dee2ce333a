"""The physical-memory-attribute table: 8 regions checked on every physical access (spec 5.6).

Each region has start and end (inclusive, compared at 16-byte granularity, i.e.
PA[47:4]), a PMT address, a card-table address, the AT attribute word (bit 0 X,
1 W, 2 R, 3 C, 6:4 access granularity, 15:8 device type, 18:16 STPTR shift) and a
LOCK word.  When several regions match, the highest-numbered one decides (HDL); an
address no region covers, or an access whose right (R/W/X) the deciding region
lacks, raises PMA (61) with BADADDR = the effective address.  Only the start
address of an access is checked (HDL).  Granularity, C, device type and the
PMT/CTA addresses are stored and readable but have no effect (no caches, no
STPTR instruction exists).

The per-access check must be cheap, so the table is flattened — whenever it is
written — into sorted, disjoint segments, each labelled with the attributes of its
deciding region, and the last segment used is remembered.  Everything is plain
data so snapshots restore it exactly.
"""

from __future__ import annotations

import bisect
from itertools import pairwise
from typing import Any

from tessera.control import Trap
from tessera_phoenix import causes

REGIONS = 8
LOCKED = 0x4C4F_434B     # "LOCK": 'L' in the most significant byte, as the HDL compares
UNLOCKED = 0x554E_4C4B   # "UNLK"
A48 = (1 << 48) - 1
AT_X, AT_W, AT_R, AT_C = 1, 2, 4, 8
RIGHT = {"r": AT_R, "w": AT_W, "x": AT_X}
NO_ACCESS = 0x0FF00

#: HDL reset table: (start, end, pmt, cta, at); vacant slots cover only the last 16 bytes
DEFAULT_TABLE = (
    (0xFFFF_FFFF, 0xFFFF_FFFF, 0, 0, NO_ACCESS),          # 0 vacant
    (0x0000_0000, 0x1FFF_FFFF, 0x2400, 0, 0x0010F),       # 1 DRAM: C R W X
    (0xFFFF_FFFF, 0xFFFF_FFFF, 0, 0, NO_ACCESS),          # 2 vacant
    (0xFFFF_FFFF, 0xFFFF_FFFF, 0, 0, NO_ACCESS),          # 3 vacant
    (0xFFFC_0000, 0xFFFC_FFFF, 0x2300, 0, 0x0020F),       # 4 scratch RAM: C R W X
    (0xFFFF_FFFF, 0xFFFF_FFFF, 0, 0, NO_ACCESS),          # 5 vacant
    (0xFF80_0000, 0xFF9F_FFFF, 0x0300, 0, 0x00206),       # 6 I/O: R W
    (0xFFFD_0000, 0xFFFF_FFFF, 0, 0, 0x0000D),            # 7 boot ROM: C R X
)

START, END, PMT, CTA, AT, LOCK = range(6)


class PMA:
    """The region table and the check; :mod:`.pmaio` exposes it as registers."""

    def __init__(self, enabled: bool = True) -> None:
        self.enabled = enabled
        self.regions: list[list[int]] = [[s, e, p, c, a, LOCKED] for s, e, p, c, a in DEFAULT_TABLE]
        self.generation = 0
        self.segments: list[tuple[int, int, int, int]] = []
        self._starts: list[int] = []
        self._last: tuple[int, int, int, int] = (1, 0, 0, -1)
        self.rebuild()

    # ------------------------------------------------------------------ the check

    def check(self, pa: int, access: str, va: int) -> None:
        """Raise PMA (61, tval = ``va``) unless the region deciding ``pa`` grants ``access``."""
        seg = self._last
        if not seg[0] <= pa <= seg[1]:
            found = self.segment_at(pa)
            if found is None:
                raise Trap(causes.PMA, va, name="PMA check failed (no region)", pa=pa)
            seg = self._last = found
        if not seg[2] & RIGHT[access]:
            raise Trap(causes.PMA, va, name="PMA check failed", pa=pa, region=seg[3])

    def segment_at(self, pa: int) -> tuple[int, int, int, int] | None:
        """(first byte, last byte, AT, region number) of the segment holding ``pa``."""
        i = bisect.bisect_right(self._starts, pa) - 1
        if i >= 0 and pa <= self.segments[i][1]:
            return self.segments[i]
        return None

    def region_of(self, pa: int) -> int | None:
        seg = self.segment_at(pa)
        return None if seg is None else seg[3]

    def state(self) -> dict[str, Any]:
        """JSON-able region table: [start, end, pmt, cta, at, lock] per region, for dumps."""
        return {"enabled": self.enabled, "regions": [list(r) for r in self.regions]}

    # ------------------------------------------------------------------ table changes

    def rebuild(self) -> None:
        """Flatten the 8 (possibly overlapping) regions into disjoint segments."""
        spans = []
        for n, r in enumerate(self.regions):
            lo, hi = (r[START] & A48) >> 4, (r[END] & A48) >> 4
            if lo <= hi:
                spans.append((lo, hi, n))
        cuts = sorted({lo for lo, _, _ in spans} | {hi + 1 for _, hi, _ in spans})
        segments: list[tuple[int, int, int, int]] = []
        for a, b in pairwise(cuts):
            winner = max((n for lo, hi, n in spans if lo <= a and b - 1 <= hi), default=None)
            if winner is None:
                continue
            at = self.regions[winner][AT]
            first, last = a << 4, (b << 4) - 1
            if segments and segments[-1][3] == winner and segments[-1][1] + 1 == first:
                first = segments.pop()[0]
            segments.append((first, last, at, winner))
        self.segments = segments
        self._starts = [s[0] for s in segments]
        self._last = (1, 0, 0, -1)  # empty: the next check searches
        self.generation += 1
