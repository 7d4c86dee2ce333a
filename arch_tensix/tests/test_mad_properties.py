"""Hypothesis properties where the vectors run out: the vectorised FMA_BH (fast path and
exact path) against a one-lane Python model written from the spec's step list,
IEEE facts of SFPADD/SFPMUL (§4.3), and one-lane models of SFP_STOCH_RND, SFPCAST,
SFPLUTFP32 and the PRNG for modes and operand mixes the vector files do not cover."""

from __future__ import annotations

import math

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st
from tensix_mad_support import (
    SFP_STOCH_RND,
    SFPADD,
    SFPARECIP,
    SFPCAST,
    SFPLUTFP32,
    SFPMAD,
    SFPMUL,
    Thread,
    execute,
    fma_ref,
    lreg,
    set_lreg,
    u2f,
)

from tessera_tensix.fma import fma_bh, fma_bh_exact
from tessera_tensix.semantics.convert import prng_next

M32 = 0xFFFF_FFFF
LANES = 32
# exponents at the edges of every range the FMA distinguishes, plus ordinary ones
EDGE_EXPONENTS = [0, 1, 2, 3, 25, 26, 27, 28, 62, 63, 64, 100, 126, 127, 128, 129, 150, 190,
                  191, 192, 250, 251, 252, 253, 254, 255]


@st.composite
def fp32(draw) -> int:
    kind = draw(st.integers(0, 3))
    if kind == 0:
        return draw(st.integers(0, M32))
    sign = draw(st.integers(0, 1))
    exp = draw(st.sampled_from(EDGE_EXPONENTS)) if kind == 1 else draw(st.integers(100, 154))
    man = draw(st.sampled_from([0, 1, 0x400000, 0x7FFFFF, 0x7FFFFE, 0x000FFF, 0x7FF000])
               if draw(st.booleans()) else st.integers(0, 0x7FFFFF))
    return (sign << 31) | (exp << 23) | man


def lanes32(elem):
    return st.lists(elem, min_size=LANES, max_size=LANES)


@settings(max_examples=100, deadline=None)
@given(lanes32(st.tuples(fp32(), fp32(), fp32())))
def test_fma_fast_and_exact_paths_match_the_one_lane_model(triples):
    xyz = np.array(triples, dtype=np.uint64).T.astype(np.uint32).copy()
    want = [fma_ref(x, y, z) for x, y, z in triples]
    assert [int(v) for v in fma_bh(xyz)] == want
    assert [int(v) for v in fma_bh_exact(xyz[0], xyz[1], xyz[2])] == want


def test_fma_fast_path_equals_exact_path_on_many_random_lanes():
    """131,072 lanes of random bits and of exponent-biased values (incl. every edge)."""
    rng = np.random.default_rng(2024)
    bits = rng.integers(0, 1 << 32, size=(3, 1 << 16), dtype=np.uint64).astype(np.uint32)
    edge = np.array(EDGE_EXPONENTS, dtype=np.uint32)
    biased = (bits & np.uint32(0x807FFFFF)) | (rng.choice(edge, size=bits.shape) << np.uint32(23))
    for xyz in (bits, biased):
        ref = fma_bh_exact(xyz[0], xyz[1], xyz[2])
        fast = np.concatenate([fma_bh(np.ascontiguousarray(xyz[:, s:s + LANES]))
                               for s in range(0, xyz.shape[1], LANES)])
        assert np.array_equal(fast, ref)


@st.composite
def close_operands(draw):
    """Product and addend of nearly equal magnitude (cancellation), any signs."""
    x, y = draw(fp32()), draw(fp32())
    p = u2f(x) * u2f(y)
    if not math.isfinite(p) or p == 0 or abs(p) > 1e37 or abs(p) < 1e-37:
        return x, y, draw(fp32())
    z = int(np.array([-p], dtype=np.float32).view(np.uint32)[0])
    return x, y, (z + draw(st.integers(-3, 3))) & M32


@settings(max_examples=60, deadline=None)
@given(lanes32(close_operands()))
def test_fma_cancellation_matches_the_one_lane_model(triples):
    xyz = np.array(triples, dtype=np.uint64).T.astype(np.uint32).copy()
    assert [int(v) for v in fma_bh(xyz)] == [fma_ref(*t) for t in triples]


def _ftz(u: int) -> float:
    return 0.0 * (-1 if u >> 31 else 1) if (u >> 23) & 255 == 0 else u2f(u)


def _f32_bits(v: float) -> int:
    return int(np.array([v], dtype=np.float32).view(np.uint32)[0])


@settings(max_examples=50, deadline=None)
@given(lanes32(st.tuples(fp32(), fp32())))
def test_sfpadd_is_a_correctly_rounded_add_for_normal_results(pairs):
    """§4.3: multiplying by exactly 1.0 keeps the product exact, so SFPADD rounds once."""
    t = Thread()
    set_lreg(t, 0, [a for a, _ in pairs])
    set_lreg(t, 1, [b for _, b in pairs])
    execute(t, SFPADD(10, 0, 1, 2, 0))
    for (a, b), got in zip(pairs, lreg(t, 2)):
        if (a >> 23) & 255 == 255 or (b >> 23) & 255 == 255:
            continue
        exact = _ftz(a) + _ftz(b)                        # exact in float64 for FP32 inputs... almost:
        if abs(exact) < 2.0**-125 or abs(exact) >= 2.0**127:
            continue                                     # flushed / overflowing results: other rules
        if (a >> 23) & 255 and (b >> 23) & 255 and abs(((a >> 23) & 255) - ((b >> 23) & 255)) > 28:
            continue                                     # float64 sum itself rounded: not comparable
        assert got == _f32_bits(exact)


@settings(max_examples=50, deadline=None)
@given(lanes32(st.tuples(fp32(), fp32())))
def test_sfpmul_is_a_correctly_rounded_multiply_in_range(pairs):
    t = Thread()
    set_lreg(t, 0, [a for a, _ in pairs])
    set_lreg(t, 1, [b for _, b in pairs])
    execute(t, SFPMUL(0, 1, 9, 2, 0))
    for (a, b), got in zip(pairs, lreg(t, 2)):
        ea, eb = (a >> 23) & 255, (b >> 23) & 255
        if ea in (0, 255) or eb in (0, 255) or not 127 <= ea + eb < 382:
            continue
        exact = u2f(a) * u2f(b)                          # exact in float64
        if abs(exact) < 2.0**-125 or abs(exact) >= 2.0**127:
            continue
        assert got == _f32_bits(exact)


@settings(max_examples=60, deadline=None)
@given(lanes32(st.tuples(fp32(), fp32(), fp32())), st.integers(0, 3))
def test_sfpmad_instruction_matches_the_model_for_every_negate_combination(triples, mod1):
    t = Thread()
    for i in range(3):
        set_lreg(t, i, [tr[i] for tr in triples])
    execute(t, SFPMAD(0, 1, 2, 3, mod1))
    na, nc = (mod1 & 1) << 31, (mod1 >> 1) << 31
    assert lreg(t, 3) == [fma_ref(x ^ na, y, z ^ nc) for x, y, z in triples]


# ---------------------------------------------------------------- SFP_STOCH_RND, one lane (§9)
def stochrnd_ref(x: int, vb: int, v: int, mod1: int, rnd: int, imm5: int, use_imm5: bool) -> int:
    thr = {0: 0x400000, 2: 0x7FFFFF}.get(rnd, v & 0x7FFFFF)
    e = (x >> 23) & 255
    if mod1 in (0, 1):
        if e == 0:
            return 0
        if e == 255:
            return x & 0xFF800000
        keep, cut = (0x1FFF, 10) if mod1 == 0 else (0xFFFF, 7)
        d = x & keep
        r = x - d
        if d >= thr >> cut:
            r += keep + 1
        return r & M32
    if mod1 in (4, 5):
        s = x >> 31
        m = (x & 0x7FFFFFFF) << 23
        m >>= imm5 if use_imm5 else vb & 31
        q = (m >> 23) + (1 if (m & 0x7FFFFF) >= thr else 0)
        if mod1 == 4:
            return min(q, 255)
        q = min(q, 127)
        return ((s << 31) if q else 0) | q
    top = {2: 255, 3: 127, 6: 65535, 7: 32767}[mod1]
    s = x >> 31 if mod1 in (3, 7) else 0
    k = e - 127
    if k < -1:
        return 0
    if k >= 16:
        return (s << 31) | top
    m = (x & 0x7FFFFF) | 0x800000
    m = m << k if k >= 0 else m >> 1
    q = min((m >> 23) + (1 if (m & 0x7FFFFF) >= thr else 0), top)
    return ((s << 31) if q else 0) | q


@settings(max_examples=80, deadline=None)
@given(lanes32(st.tuples(fp32(), st.integers(0, M32), st.integers(0, M32))),
       st.integers(0, 7), st.integers(0, 3), st.integers(0, 31), st.booleans())
def test_stochrnd_matches_the_one_lane_model(lanes, mod1, rnd, imm5, use_imm5):
    t = Thread()
    set_lreg(t, 1, [x for x, _, _ in lanes])
    set_lreg(t, 2, [b for _, b, _ in lanes])
    t.sfpu.prng[:] = [v for _, _, v in lanes]
    execute(t, SFP_STOCH_RND(rnd, imm5, 2, 1, 3, mod1 | (8 if use_imm5 else 0)))
    assert lreg(t, 3) == [stochrnd_ref(x, b, v, mod1, rnd, imm5, use_imm5) for x, b, v in lanes]


# ---------------------------------------------------------------- SFPCAST, one lane (§12)
def cast_ref(x: int, mode: int, v: int) -> int:
    s = x >> 31
    if mode in (0, 1):
        m = x & 0x7FFFFFFF
        if m == 0:
            return s << 31
        lz = 32 - m.bit_length()
        n = (m << lz) & M32
        r = (s << 31) + ((157 - lz) << 23) + (n >> 8)
        if mode == 0:
            up = (n >> 7) & 1 and ((n >> 8) & 1 or n & 0x7F)
        else:
            up = (n & 0xFE) > ((v >> 9) & 0xFE)
        return (r + (1 if up else 0)) & M32
    neg = (-x) & M32
    if mode == 2:
        return neg if s else x
    return (neg | 0x80000000) if s else x


@settings(max_examples=150, deadline=None)
@given(lanes32(st.tuples(st.one_of(st.integers(0, M32), st.integers(0, 1 << 26)),
                         st.integers(0, M32))), st.integers(0, 15))
def test_sfpcast_matches_the_one_lane_model(lanes, mod1):
    t = Thread()
    set_lreg(t, 1, [x for x, _ in lanes])
    t.sfpu.prng[:] = [v for _, v in lanes]
    execute(t, SFPCAST(1, 2, mod1))
    assert lreg(t, 2) == [cast_ref(x, mod1 & 3, v) for x, v in lanes]


# ---------------------------------------------------------------- SFPARECIP accuracy (§8)
@settings(max_examples=100, deadline=None)
@given(lanes32(st.integers(0x00800000, 0x7E7FFFFF)), st.booleans())
def test_sfparecip_recip_is_within_the_documented_bounds(mags, negative):
    t = Thread()
    sign = 0x80000000 if negative else 0
    set_lreg(t, 0, [m | sign for m in mags])
    execute(t, SFPARECIP(0, 0, 1, 0))
    for m, r in zip(mags, lreg(t, 1)):
        x, y = u2f(m), u2f(r & 0x7FFFFFFF)
        assert r >> 31 == (1 if negative else 0)
        assert 0.9944 / x < y < 1.0054 / x


@settings(max_examples=100, deadline=None)
@given(lanes32(st.integers(0, 0x3FFFFFFF)))
def test_sfparecip_exp_is_within_the_documented_bounds(mags):
    t = Thread()
    set_lreg(t, 0, mags)
    execute(t, SFPARECIP(0, 0, 1, 2))
    for m, r in zip(mags, lreg(t, 1)):
        x = u2f(m) if (m >> 23) else 0.0
        assert 0.9922 * math.exp(x) <= u2f(r) <= 1.016 * math.exp(x)


# ---------------------------------------------------------------- SFPLUTFP32 FP32 table (§6.2)
@settings(max_examples=30, deadline=None)
@given(st.lists(lanes32(fp32()), min_size=8, max_size=8), st.sampled_from([0, 1, 4, 5]))
def test_lutfp32_fp32_table_is_fma_of_the_selected_piece(regs, mod1):
    t = Thread()
    for i, row in enumerate(regs[:7]):
        set_lreg(t, i, row)
    execute(t, SFPLUTFP32(7, mod1))
    for lane, got in enumerate(lreg(t, 7)):
        x = regs[3][lane]
        b = x & 0x7FFFFFFF
        i = 0 if b < 0x3F800000 else 1 if b < 0x40000000 else 2
        want = fma_ref(regs[i][lane], b, regs[4 + i][lane])
        if mod1 & 4:
            want = (want & 0x7FFFFFFF) | (x & 0x80000000)
        assert got == want


# ---------------------------------------------------------------- PRNG (§16.2)
@given(st.lists(st.integers(0, M32), min_size=1, max_size=64))
def test_prng_step_is_the_documented_lfsr(states):
    got = prng_next(np.array(states, dtype=np.uint64).astype(np.uint32))
    for s, n in zip(states, got):
        t = bin(s & 0x80200003).count("1")
        assert int(n) == ((~t & 1) << 31) | (s >> 1)
