"""The tag-only LRU cache of the cycle models: geometry checks, LRU order, line splitting."""

from __future__ import annotations

import pytest

from tessera_cycles.cache import Cache


def test_two_way_lru_evicts_the_least_recently_used_line():
    # 64 bytes, 2 ways, 32-byte lines: a single set holding two lines
    cache = Cache("t", 64, 2, 32, 10)
    a, b, c = 0, 32, 64
    assert [cache.access(x) for x in (a, b, a, c)] == [10, 10, 0, 10]   # miss, miss, hit, miss
    # A was used after B, so C evicted B: A still hits, B misses again
    assert cache.access(a) == 0
    assert cache.access(b) == 10
    # LRU order after C's fill was [A, C]; touching A made it [C, A], so B's refill evicted C
    assert cache.access(a) == 0
    assert cache.access(c) == 10
    assert (cache.hits, cache.misses, cache.accesses) == (3, 5, 8)   # hits: A, A, A; misses: A B C B C


def test_four_way_lru_order_follows_the_last_use():
    cache = Cache("t", 128, 4, 32, 1)          # one set of 4 lines
    for line in (0, 1, 2, 3):                   # fill: LRU order 0 1 2 3
        cache.access(line * 32)
    cache.access(0)                             # 1 2 3 0
    cache.access(2 * 32)                        # 1 3 0 2
    assert cache.access(4 * 32) == 1            # evicts line 1 -> 3 0 2 4
    assert cache.access(3 * 32) == 0            # 3 survived -> 0 2 4 3
    assert cache.access(1 * 32) == 1            # 1 was evicted; this evicts 0 -> 2 4 3 1
    assert cache.access(0) == 1
    assert cache.misses == 4 + 1 + 1 + 1        # the fill, line 4, line 1, line 0


def test_direct_mapped_conflicts_and_separate_sets():
    cache = Cache("d", 1024, 1, 32, 20)         # 32 sets of one line
    assert cache.sets == 32
    # 0 and 1024 both map to set 0: every access evicts the other
    assert sum(cache.access(x, 4) for x in (0, 1024, 0, 1024)) == 4 * 20
    # 0 and 32 are different sets: after the first touch both hit
    fresh = Cache("d", 1024, 1, 32, 20)
    assert [fresh.access(x, 4) for x in (0, 32, 0, 32)] == [20, 20, 0, 0]


def test_an_access_counts_every_line_it_covers_in_address_order():
    cache = Cache("t", 1024, 2, 32, 7)
    assert cache.access(30, 4) == 2 * 7         # bytes 30..33: lines 0 and 1
    assert (cache.accesses, cache.misses, cache.hits) == (1, 2, 0)
    assert cache.access(28, 4) == 0             # bytes 28..31: line 0 only, a hit
    assert cache.access(32, 64) == 7            # bytes 32..95: lines 1 (hit), 2 (miss)
    assert (cache.accesses, cache.misses, cache.hits) == (3, 3, 2)
    # one set of 2 ways: a line-crossing access touches its first line before its second,
    # so the second is the most recent and a third line evicts the first
    tiny = Cache("t", 64, 2, 32, 1)
    tiny.access(31, 2)                          # lines 0 then 1
    tiny.access(64)                             # line 2 evicts line 0
    assert tiny.access(32) == 0                 # line 1 still there
    assert tiny.access(0) == 1                  # line 0 was evicted


def test_the_most_recent_line_window_follows_the_last_line_touched():
    cache = Cache("t", 1024, 2, 32, 1)
    assert not cache.mru_lo <= 0 < cache.mru_end          # empty before any access
    cache.access(30, 4)                                   # lines 0 then 1
    assert (cache.mru_lo, cache.mru_end) == (32, 64)
    cache.access(0x200)                                   # a miss in set 0: the window moves
    assert (cache.mru_lo, cache.mru_end) == (0x200, 0x220)
    cache.access(40)                                      # a hit in line 1 (set 1)
    assert (cache.mru_lo, cache.mru_end) == (32, 64)


def test_stats_report_geometry_and_counters():
    cache = Cache("dcache", 256, 2, 16, 5)
    assert cache.stats()["hit_rate"] == 1.0     # nothing touched yet
    for address in (0, 4, 8, 12, 16):           # line 0: miss hit hit hit; line 1: miss
        cache.access(address, 4)
    assert cache.stats() == {
        "name": "dcache", "size": 256, "ways": 2, "line": 16,
        "accesses": 5, "hits": 3, "misses": 2, "hit_rate": 3 / 5,
    }


@pytest.mark.parametrize(("args", "bad"), [
    ((1000, 2, 32, 1), "1000"),        # size not a power of two
    ((1024, 3, 32, 1), "3"),           # ways
    ((1024, 2, 0, 1), "0"),            # line
    ((64, 2, 64, 1), "128"),           # two 64-byte ways do not fit in 64 bytes
    ((1024, 2, 32, -1), "-1"),         # penalty
])
def test_bad_geometry_is_a_one_line_error_naming_cache_and_value(args, bad):
    with pytest.raises(ValueError) as error:
        Cache("l1d", *args)
    message = str(error.value)
    assert "\n" not in message
    assert "'l1d'" in message and bad in message
