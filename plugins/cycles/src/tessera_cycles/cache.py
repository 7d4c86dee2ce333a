"""A set-associative cache with true LRU replacement, for cycle models.

The cache keeps tags only (no data): :meth:`Cache.access` answers how many stall cycles
a data or instruction access costs, and counts hits and misses.  Policy is
write-back / write-allocate: a store that misses allocates its line exactly like a load.
Write-back traffic (dirty evictions) is *not* timed: an eviction costs nothing beyond the
miss penalty of the access that caused it, so loads and stores are indistinguishable here
and the cache takes no "is a write" argument.
"""

from __future__ import annotations

from typing import Any


def _check_power_of_two(cache: str, what: str, value: object) -> int:
    """Return *value* when it is a positive power of two, else raise a one-line ValueError."""
    if isinstance(value, bool) or not isinstance(value, int) or value <= 0 or value & (value - 1):
        raise ValueError(f"cache {cache!r}: {what} must be a positive power of two, got {value!r}")
    return value


class Cache:
    """A set-associative, true-LRU, write-back/write-allocate cache (tags only).

    ``size`` and ``line`` are in bytes, ``ways`` is the associativity (1 = direct mapped,
    ``size // line`` = fully associative).  Each set is a short Python list of the line
    numbers it holds, least recently used first; a line number (address // line) is
    unique within its set, so it serves as the tag.  A miss costs ``miss_penalty`` stall
    cycles per line; dirty write-backs are not modelled (see the module docstring).
    """

    def __init__(self, name: str, size: int, ways: int, line: int, miss_penalty: int) -> None:
        _check_power_of_two(name, "size", size)
        _check_power_of_two(name, "ways", ways)
        _check_power_of_two(name, "line", line)
        if size % (ways * line):
            raise ValueError(f"cache {name!r}: size {size} is not a multiple of ways*line = {ways * line}")
        if isinstance(miss_penalty, bool) or not isinstance(miss_penalty, int) or miss_penalty < 0:
            raise ValueError(f"cache {name!r}: miss_penalty must be a non-negative integer, got {miss_penalty!r}")
        self.name = name
        self.size = size
        self.ways = ways
        self.line = line
        self.miss_penalty = miss_penalty
        self.sets = size // (ways * line)
        # shifts and masks instead of division: all three sizes are powers of two
        self._line_shift = line.bit_length() - 1
        self._set_mask = self.sets - 1
        self._lines: list[list[int]] = [[] for _ in range(self.sets)]
        self.accesses = 0
        self.hits = 0
        self.misses = 0
        # [mru_lo, mru_end): the bytes of the line touched last, the most recent of its set
        # (empty at first).  An access wholly inside it is a hit that changes no LRU order,
        # so a caller on a hot path may count it as ``accesses += 1; hits += 1`` and skip
        # the call to :meth:`access` (the cycle models do, for fetches and data accesses).
        self.mru_lo = 1
        self.mru_end = 0

    def access(self, address: int, size: int = 1) -> int:
        """Touch every line that bytes [address, address+size) cover; return the stall cycles.

        Lines are touched in address order (an unaligned access spanning two lines touches
        both); each missing line costs ``miss_penalty`` and is allocated, evicting its set's
        least recently used line when the set is full.  ``accesses`` counts calls,
        ``hits``/``misses`` count lines.
        """
        self.accesses += 1
        shift = self._line_shift
        number = first = address >> shift
        last = (address + size - 1) >> shift
        stall = 0
        while number <= last:
            lines = self._lines[number & self._set_mask]
            if lines and lines[-1] == number:          # most recently used: nothing to reorder
                self.hits += 1
            elif number in lines:
                lines.remove(number)
                lines.append(number)
                self.hits += 1
            else:
                self.misses += 1
                stall += self.miss_penalty
                if len(lines) >= self.ways:
                    del lines[0]
                lines.append(number)
            number += 1
        if last >= first:
            self.mru_lo = last << shift
            self.mru_end = self.mru_lo + self.line
        return stall

    def stats(self) -> dict[str, Any]:
        """The geometry and counters; ``hit_rate`` is 1.0 while no line was touched."""
        touched = self.hits + self.misses
        return {
            "name": self.name, "size": self.size, "ways": self.ways, "line": self.line,
            "accesses": self.accesses, "hits": self.hits, "misses": self.misses,
            "hit_rate": self.hits / touched if touched else 1.0,
        }
