"""SFPLOAD → SFPSTORE round trips for every Mod0 format (and the reverse where the format
is an LReg-side one), plus hypothesis properties of the conversions.

Each format round-trips exactly on its documented domain (tensix-sfpu.md §10.1, §10.3,
§10.4): e.g. FP16 cells with exponent 0 and a non-zero mantissa are not in the FP16
domain (SFPLOAD turns them into an FP32 denormal pattern, SFPSTORE flushes it).
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from tensix_dest_support import Thread, adj32_ref, execute, sfpload, sfpstore

from tessera_tensix import dest as D

SRC, DST = 0x40, 0x84           # rows 64..67 even columns → rows 132..135 odd columns
RNG = np.random.default_rng(5)


def _domain16(mod0: int, n: int) -> np.ndarray:
    """n random 16-bit cells inside the lossless domain of format mod0."""
    h = RNG.integers(0, 1 << 16, n, dtype=np.uint32)
    if mod0 == 1:                                  # FP16: exponent 0 only with mantissa 0
        h = np.where((h & 0x1F) == 0, h & 0x8000, h)
    elif mod0 == 2:                                # BF16: exponent 0 only as signed zero
        h = np.where((h & 0xFF) == 0, h & 0x8000, h)
    elif mod0 == 5:                                # INT8: sign, 8-bit magnitude, exponent field 16
        h = (h & 0x8000) | (h & (0xFF << 5)) | 16
    elif mod0 == 13:                               # INT8_COMP: 10-bit magnitude
        h = (h & 0x8000) | (h & (0x3FF << 5)) | 16
    return h.astype(np.uint32)


def _domain32(mod0: int, n: int) -> np.ndarray:
    w = RNG.integers(0, 1 << 32, n, dtype=np.uint64).astype(np.uint32)
    if mod0 == 3:                                  # FP32: exponent (Dst cell bits 23:16) 0 only for ±0
        w = np.where((w & 0x00FF0000) == 0, w & 0x80000000, w)
    return w.astype(np.uint32)


def _put16(t: Thread, addr: int, cells: np.ndarray) -> None:
    for lane in range(32):
        row, col = (addr & ~3) + (lane >> 3), 2 * (lane & 7) + ((addr >> 1) & 1)
        t.dest.bits[row, col] = cells[lane]


def _get16(t: Thread, addr: int) -> np.ndarray:
    return np.array([t.dest.bits[(addr & ~3) + (lane >> 3), 2 * (lane & 7) + ((addr >> 1) & 1)]
                     for lane in range(32)], dtype=np.uint32)


def _put32(t: Thread, addr: int, values: np.ndarray) -> None:
    for lane in range(32):
        p = adj32_ref((addr & ~3) + (lane >> 3), False, False)
        col = 2 * (lane & 7) + ((addr >> 1) & 1)
        t.dest.bits[p, col] = values[lane] >> 16
        t.dest.bits[p + 8, col] = values[lane] & 0xFFFF


def _get32(t: Thread, addr: int) -> np.ndarray:
    out = []
    for lane in range(32):
        p = adj32_ref((addr & ~3) + (lane >> 3), False, False)
        col = 2 * (lane & 7) + ((addr >> 1) & 1)
        out.append((int(t.dest.bits[p, col]) << 16) | int(t.dest.bits[p + 8, col]))
    return np.array(out, dtype=np.uint32)


@pytest.mark.parametrize("mod0", [1, 2, 5, 6, 8, 13, 14, 15])
def test_dst16_load_store_round_trip(mod0):
    for _ in range(8):
        t = Thread()
        cells = _domain16(mod0, 32)
        _put16(t, SRC, cells)
        t.sfpu.lreg[2] = RNG.integers(0, 1 << 32, 32, dtype=np.uint64).astype(np.uint32)
        execute(t, sfpload(2, mod0, 0, SRC))
        execute(t, sfpstore(2, mod0, 0, DST))
        assert np.array_equal(_get16(t, DST), cells), mod0


@pytest.mark.parametrize("mod0", [3, 4, 10, 12])
def test_dst32_load_store_round_trip(mod0):
    for _ in range(8):
        t = Thread()
        values = _domain32(mod0, 32)
        _put32(t, SRC, values)
        execute(t, sfpload(1, mod0, 0, SRC))
        execute(t, sfpstore(1, mod0, 0, DST))
        assert np.array_equal(_get32(t, DST), values), mod0


def test_fp16_with_enable_fp16a_inf_round_trips_the_largest_value():
    t = Thread()
    t.sfpu.lane_config[:] = 1                             # ENABLE_FP16A_INF
    cells = np.full(32, 0x7FFF, dtype=np.uint32)          # +, man 0x3FF, exp 31
    cells[1::2] = 0xFFFF
    _put16(t, SRC, cells)
    execute(t, sfpload(0, 1, 0, SRC))
    assert set(t.sfpu.lreg[0].tolist()) == {0x7F800000, 0xFF800000}   # ±Inf in the LReg
    execute(t, sfpstore(0, 1, 0, DST))                   # ±Inf saturates back to exp 31/man 0x3FF
    assert np.array_equal(_get16(t, DST), cells)


@pytest.mark.parametrize("mod0", [7, 9])
def test_opaque32_store_then_16bit_loads_round_trip(mod0):
    """HI16 / LO16 SFPSTORE write a raw (HI16) or rotated (LO16) Dst32b value; reading the two
    physical halves back with the 16-bit loads of the same family rebuilds the LReg."""
    t = Thread()
    x = RNG.integers(0, 1 << 32, 32, dtype=np.uint64).astype(np.uint32)
    t.sfpu.lreg[4] = x
    execute(t, sfpstore(4, mod0, 0, SRC))
    hi_rows, lo_rows = [], []
    for lane in range(32):
        p = adj32_ref((SRC & ~3) + (lane >> 3), False, False)
        hi_rows.append(p)
        lo_rows.append(p + 8)
    hi = np.array([t.dest.bits[hi_rows[lane], 2 * (lane & 7)] for lane in range(32)], dtype=np.uint32)
    lo = np.array([t.dest.bits[lo_rows[lane], 2 * (lane & 7)] for lane in range(32)], dtype=np.uint32)
    if mod0 == 7:
        assert np.array_equal((hi << 16) | lo, x)
    else:
        assert np.array_equal((lo << 16) | hi, x)
    # and back through SFPLOAD HI16 (7) / LO16 (9) + the *_ONLY merges
    t2 = Thread()
    t2.dest.bits[:] = t.dest.bits
    # rows SRC..SRC+3 of Dst32b are Dst16b rows adj32(..) (high) and +8 (low): here 128..131 and 136..139
    assert hi_rows[:8] == [128] * 8 and lo_rows[:8] == [136] * 8
    execute(t2, sfpload(5, 7 if mod0 == 7 else 9, 0, 128))
    execute(t2, sfpload(5, 14 if mod0 == 7 else 15, 0, 136))
    assert np.array_equal(t2.sfpu.lreg[5], x)


def test_zero_format_writes_and_reads_zero():
    t = Thread()
    t.dest.bits[:] = 0xABCD
    t.sfpu.lreg[3] = 0x12345678
    execute(t, sfpload(3, 11, 0, SRC))
    assert not t.sfpu.lreg[3].any()
    execute(t, sfpstore(6, 11, 0, DST))                  # LReg[6] is 0 anyway; ZERO ignores it
    assert not _get16(t, DST).any()
    assert (_get16(t, DST + 2) == 0xABCD).all()          # odd columns untouched


def test_uint16_lo16_hi16_loads():
    t = Thread()
    cells = RNG.integers(0, 1 << 16, 32).astype(np.uint32)
    _put16(t, SRC, cells)
    for mod0, want in ((6, cells), (9, cells), (7, cells << 16)):
        execute(t, sfpload(1, mod0, 0, SRC))
        assert np.array_equal(t.sfpu.lreg[1], want), mod0


# ------------------------------------------------------------------- hypothesis properties
u32s = st.integers(0, 0xFFFF_FFFF)


@settings(max_examples=300, deadline=None)
@given(st.lists(u32s, min_size=32, max_size=32))
def test_int32_store_then_load_is_identity(values):
    t = Thread()
    x = np.array(values, dtype=np.uint32)
    t.sfpu.lreg[0] = x
    execute(t, sfpstore(0, 4, 0, 0x100))
    execute(t, sfpload(1, 4, 0, 0x100))
    assert np.array_equal(t.sfpu.lreg[1], x)


@settings(max_examples=300, deadline=None)
@given(u32s)
def test_fp32_store_load_flushes_only_denormals(x):
    arr = np.full(32, x, dtype=np.uint32)
    back = D.load_convert(3, None, D.store_convert(3, arr), arr)
    want = x & 0x80000000 if (x & 0x7F800000) == 0 else x
    assert int(back[0]) == want


@settings(max_examples=300, deadline=None)
@given(u32s)
def test_bf16_store_load_truncates(x):
    arr = np.full(32, x, dtype=np.uint32)
    back = int(D.load_convert(2, D.store_convert(2, arr), None, arr)[0])
    want = (x & 0x80000000) if (x & 0x7F800000) == 0 else (x & 0xFFFF0000)
    assert back == want


@settings(max_examples=300, deadline=None)
@given(u32s)
def test_fp16_store_saturates_and_flushes(x):
    cell = int(D.store_convert(1, np.array([x], dtype=np.uint32))[0])
    e = (x >> 23) & 0xFF
    assert cell >> 15 == x >> 31
    if e <= 112:
        assert cell & 0x7FFF == 0
    elif e > 143:
        assert cell & 0x7FFF == 0x7FFF
    else:
        assert cell & 0x1F == e - 112 and (cell >> 5) & 0x3FF == (x >> 13) & 0x3FF


@settings(max_examples=200, deadline=None)
@given(st.integers(0, 0xFFFF))
def test_shuffles_are_inverse_permutations(h):
    assert D.unshuffle_bf16(D.shuffle_bf16(h)) == h
    assert D.shuffle_bf16(D.unshuffle_bf16(h)) == h
    assert D.unshuffle_fp16(D.shuffle_fp16(h)) == h
    assert D.shuffle_fp16(D.unshuffle_fp16(h)) == h


def test_tables_match_reference_conversions():
    h = np.arange(1 << 16, dtype=np.uint32)
    zero = np.zeros_like(h)
    for mod0 in (1, 2, 5, 6, 7, 8, 9, 13):
        assert np.array_equal(D.load_table(mod0), D.load_convert(mod0, h, None, zero)), mod0
    assert np.array_equal(D.load_table(1, True), D.load_convert(1, h, None, zero, True))
    assert np.array_equal(D.load_table(5, False, True), D.load_convert(5, h, None, zero, wh=True))
    x = RNG.integers(0, 1 << 32, 50000, dtype=np.uint64).astype(np.uint32)
    assert np.array_equal(D.store_fp16_table()[x >> 13], D.store_convert(1, x))
    assert np.array_equal(D.shuffle_hi_table(True)[x >> 16], D.store_convert(2, x))
