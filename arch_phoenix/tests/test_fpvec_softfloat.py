"""The exact IEEE arithmetic core (semantics/softfloat.py) against independent oracles.

Oracles: numpy's IEEE add/multiply (round to nearest even) and, for FMA, division
and round-toward-zero which numpy cannot do, an exact Fraction value rounded by a
bracket search over numpy's ``nextafter`` — no code shared with the module.
"""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tessera_phoenix.semantics import softfloat as sf
from tessera_phoenix.semantics.softfloat import F16, F32, F64, F128, RNE, RTZ

DTYPES = {16: (np.float16, np.uint16), 32: (np.float32, np.uint32), 64: (np.float64, np.uint64)}
FMT = {16: F16, 32: F32, 64: F64}


def as_float(bits: int, w: int) -> np.floating:
    ft, ut = DTYPES[w]
    return np.array([bits], dtype=ut).view(ft)[0]


def as_bits(x: np.floating, w: int) -> int:
    ft, ut = DTYPES[w]
    return int(np.array([x], dtype=ft).view(ut)[0])


def exact(bits: int, w: int) -> Fraction:
    return Fraction(float(as_float(bits, w)))


def oracle(r: Fraction, w: int, rm: int) -> int:
    """The correctly rounded ``r`` in binary``w`` by bracketing with nextafter."""
    ft, _ = DTYPES[w]
    info = np.finfo(ft)
    top = Fraction(2) ** int(info.maxexp)          # "value" of infinity for rounding ties
    neg, a = r < 0, abs(r)
    if a == 0:
        return as_bits(ft(-0.0 if neg else 0.0), w)

    def val(x: np.floating) -> Fraction:
        return top if np.isinf(x) else Fraction(float(x))

    with np.errstate(over="ignore"):
        try:
            c = ft(float(a))
        except OverflowError:
            c = ft(np.inf)
        if np.isinf(c):
            c = np.nextafter(c, ft(0))                 # start from the largest finite value
        while val(c) > a:
            c = np.nextafter(c, ft(0))
        lo = c
        hi = np.nextafter(lo, ft(np.inf))
    if val(lo) == a or rm == RTZ:
        pick = lo
    else:
        d_lo, d_hi = a - val(lo), val(hi) - a
        if d_lo < d_hi:
            pick = lo
        elif d_hi < d_lo:
            pick = hi
        else:
            pick = lo if as_bits(lo, w) % 2 == 0 else hi
    return as_bits(-pick if neg else pick, w)


def floats(w: int) -> st.SearchStrategy[int]:
    """Bit patterns: raw random bits, ordinary values, and values near 1.0 (cancellation)."""
    raw = st.integers(0, (1 << w) - 1)
    ordinary = st.floats(width=w, allow_nan=False).map(lambda x: as_bits(DTYPES[w][0](x), w))
    near_one = st.integers(-64, 64).map(lambda d: (FMT[w].one + d) & FMT[w].mask)
    return st.one_of(raw, ordinary, near_one)


def is_nan(bits: int, w: int) -> bool:
    return bool(np.isnan(as_float(bits, w)))


# ---------------------------------------------------------------------------- add / multiply

@pytest.mark.parametrize("w", [16, 32, 64])
@settings(max_examples=300, deadline=None)
@given(data=st.data())
def test_fpvec_add_matches_numpy_rne(w, data):
    a, b = data.draw(floats(w)), data.draw(floats(w))
    with np.errstate(all="ignore"):
        expect = as_float(a, w) + as_float(b, w)
    got = sf.add(FMT[w], a, b, RNE)
    if np.isnan(expect):
        assert got == FMT[w].qnan  # canonical quiet NaN, never a payload
    else:
        assert got == as_bits(expect, w)


@pytest.mark.parametrize("w", [16, 32, 64])
@settings(max_examples=300, deadline=None)
@given(data=st.data())
def test_fpvec_multiply_via_fma_matches_numpy(w, data):
    a, b = data.draw(floats(w)), data.draw(floats(w))
    with np.errstate(all="ignore"):
        expect = as_float(a, w) * as_float(b, w)
    got = sf.fma(FMT[w], a, b, FMT[w].sign, RNE)  # a*b + (-0) keeps the product's zero sign
    if np.isnan(expect):
        assert got == FMT[w].qnan
    else:
        assert got == as_bits(expect, w)


@pytest.mark.parametrize("w", [16, 32])
@settings(max_examples=300, deadline=None)
@given(data=st.data())
def test_fpvec_add_rtz_is_truncation_of_exact_sum(w, data):
    a, b = data.draw(floats(w)), data.draw(floats(w))
    if is_nan(a, w) or is_nan(b, w) or np.isinf(as_float(a, w)) or np.isinf(as_float(b, w)):
        return
    r = exact(a, w) + exact(b, w)
    got = sf.add(FMT[w], a, b, RTZ)
    if r == 0:
        assert got in (0, FMT[w].sign)
    else:
        assert got == oracle(r, w, RTZ)


# ---------------------------------------------------------------------------- fused multiply-add

@pytest.mark.parametrize("w", [16, 32])
@pytest.mark.parametrize("rm", [RNE, RTZ])
@settings(max_examples=300, deadline=None)
@given(data=st.data())
def test_fpvec_fma_single_rounding(w, rm, data):
    a, b, c = data.draw(floats(w)), data.draw(floats(w)), data.draw(floats(w))
    if any(is_nan(x, w) or np.isinf(as_float(x, w)) for x in (a, b, c)):
        return
    r = exact(a, w) * exact(b, w) + exact(c, w)
    got = sf.fma(FMT[w], a, b, c, rm)
    if r == 0:
        assert got in (0, FMT[w].sign)
    else:
        assert got == oracle(r, w, rm)


def test_fpvec_fma_differs_from_double_rounding():
    """1+2^-23 plus 2^-24(1-2^-40): just below a binary32 tie.

    Rounding first to binary64 lands exactly on the tie, which then rounds to even
    (1+2^-22); a single rounding gives 1+2^-23.
    """
    a = as_bits(np.float32(1 + 2.0**-20), 32)
    b = as_bits(np.float32(2.0**-24 * (1 - 2.0**-20)), 32)
    c = 0x3F80_0001
    via_double = np.float32(np.float64(as_float(a, 32)) * np.float64(as_float(b, 32))
                            + np.float64(as_float(c, 32)))
    assert as_bits(via_double, 32) == 0x3F80_0002          # the trap we must avoid
    assert sf.fma(F32, a, b, c, RNE) == 0x3F80_0001
    assert sf.fma(F32, a, b, c, RTZ) == 0x3F80_0001


def test_fpvec_fma_special_values():
    inf, ninf, one, zero, nzero = F32.inf, F32.inf | F32.sign, F32.one, 0, F32.sign
    assert sf.fma(F32, inf, zero, one) == F32.qnan                   # inf * 0
    assert sf.fma(F32, inf, one, ninf) == F32.qnan                   # inf - inf
    assert sf.fma(F32, inf, one, inf) == inf
    assert sf.fma(F32, one, one, ninf) == ninf
    assert sf.fma(F32, 0x7F80_0001, one, one) == F32.qnan            # sNaN in -> canonical qNaN
    assert sf.fma(F32, nzero, one, zero) == zero                     # -0 + +0 = +0
    assert sf.fma(F32, nzero, one, nzero) == nzero                   # -0 + -0 = -0
    assert sf.fma(F32, zero, one, nzero, neg_product=True) == nzero  # -(+0) - 0 ... both negative
    assert sf.fma(F32, one, one, one, neg_product=True) == 0         # -1 + 1 = +0 exactly
    assert sf.fma(F32, one, one, one, neg_product=True, rm=RTZ) == 0
    assert sf.fma(F32, zero, inf, F32.qnan) == F32.qnan


# ---------------------------------------------------------------------------- rounding corners

def test_fpvec_overflow_and_signed_zero_rules():
    big = F32.max_finite
    assert sf.add(F32, big, big, RNE) == F32.inf
    assert sf.add(F32, big, big, RTZ) == big
    assert sf.add(F32, big | F32.sign, big | F32.sign, RTZ) == big | F32.sign
    assert sf.add(F32, F32.one, F32.one | F32.sign, RNE) == 0         # x - x = +0
    assert sf.add(F32, F32.one, F32.one | F32.sign, RTZ) == 0
    assert sf.add(F32, F32.sign, F32.sign) == F32.sign                # -0 + -0 = -0
    assert sf.add(F32, 0, F32.sign) == 0                              # +0 + -0 = +0
    assert sf.add(F32, F32.inf, F32.inf | F32.sign) == F32.qnan


def test_fpvec_subnormal_results_and_gradual_underflow():
    tiny = 1                                                          # smallest subnormal
    assert sf.add(F32, tiny, tiny) == 2
    half = as_bits(np.float32(0.5), 32)
    assert sf.fma(F32, tiny, half, 0, RNE) == 0                       # tie 0.5 ulp -> even (0)
    assert sf.fma(F32, 3, half, 0, RNE) == 2                          # 1.5 ulp -> 2
    assert sf.fma(F32, 3, half, 0, RTZ) == 1
    smallest_normal = 0x0080_0000
    assert sf.add(F32, smallest_normal, smallest_normal | F32.sign) == 0
    assert sf.add(F32, 0x007F_FFFF, 1) == smallest_normal            # subnormal carries into normal


def test_fpvec_binary128_basics():
    one = F128.one
    two = sf.add(F128, one, one)
    assert two == (F128.bias + 1) << F128.fbits
    third = sf.recip(F128, sf.from_int(F128, 3))
    # 1/3 in binary128: significand 0x5555...5 rounded (the 113-bit pattern ends in ...0101)
    assert sf.to_pyfloat(F128, third) == pytest.approx(1 / 3, rel=1e-16)
    assert sf.fma(F128, third, sf.from_int(F128, 3), one | F128.sign) != 0   # 3*(1/3)-1 exact residue
    assert sf.convert(F32, F128, F32.one) == one
    assert sf.convert(F128, F32, third) == as_bits(np.float32(1 / 3), 32)


# ---------------------------------------------------------------------------- conversions

@pytest.mark.parametrize("x, rne, rtz", [
    (2.5, 2, 2), (3.5, 4, 3), (-2.5, -2, -2), (-3.7, -4, -3), (0.49999997, 0, 0), (0.5, 0, 0),
    (1.5, 2, 1), (-0.0, 0, 0), (2147483520.0, 2147483520, 2147483520),
])
def test_fpvec_to_int_rounding(x, rne, rtz):
    bits = as_bits(np.float32(x), 32)
    assert sf.to_int(F32, bits, 32, RNE) == rne & 0xFFFF_FFFF
    assert sf.to_int(F32, bits, 32, RTZ) == rtz & 0xFFFF_FFFF


@pytest.mark.parametrize("x, expect", [
    (2147483648.0, 0x7FFF_FFFF), (1e30, 0x7FFF_FFFF), (float("inf"), 0x7FFF_FFFF),
    (-2147483648.0, 0x8000_0000), (-1e30, 0x8000_0000), (float("-inf"), 0x8000_0000),
    (float("nan"), 0x7FFF_FFFF),
])
def test_fpvec_to_int_saturates(x, expect):
    assert sf.to_int(F32, as_bits(np.float32(x), 32), 32) == expect


def test_fpvec_to_int_narrow_and_nan_with_sign():
    assert sf.to_int(F16, as_bits(np.float16(40000.0), 16), 16) == 0x7FFF
    assert sf.to_int(F16, as_bits(np.float16(-40000.0), 16), 16) == 0x8000
    assert sf.to_int(F32, 0xFFC0_0000, 32) == 0x7FFF_FFFF               # negative NaN -> max too


@pytest.mark.parametrize("n", [0, 1, -1, 16777216, 16777217, 16777219, -16777219, 2**31 - 1, -2**31])
def test_fpvec_from_int(n):
    assert sf.from_int(F32, n, RNE) == as_bits(np.float32(n), 32)       # numpy rounds to nearest
    rtz = sf.from_int(F32, n, RTZ)
    assert abs(exact(rtz, 32)) <= abs(n) and exact(rtz, 32) * n >= 0


def test_fpvec_trunc():
    for x, t in [(2.7, 2.0), (-2.7, -2.0), (0.3, 0.0), (1e20, 1e20), (8388607.5, 8388607.0)]:
        assert sf.trunc(F32, as_bits(np.float32(x), 32)) == as_bits(np.float32(t), 32)
    assert sf.trunc(F32, as_bits(np.float32(-0.3), 32)) == F32.sign    # keeps the sign of zero
    assert sf.trunc(F32, F32.inf | F32.sign) == F32.inf | F32.sign
    assert sf.trunc(F32, 0x7F80_0001) == F32.qnan
    assert sf.trunc(F32, 1) == 0                                       # subnormal -> +0


# ---------------------------------------------------------------------------- estimates

@settings(max_examples=300, deadline=None)
@given(st.integers(1, 0x7F7F_FFFF))
def test_fpvec_recip_is_correctly_rounded(bits):
    r = 1 / exact(bits, 32)
    expect = oracle(r, 32, RNE)
    assert sf.recip(F32, bits) == expect
    assert sf.recip(F32, bits | F32.sign) == expect | F32.sign


@settings(max_examples=300, deadline=None)
@given(st.integers(1, 0x7F7F_FFFF))
def test_fpvec_rsqrt_within_half_ulp(bits):
    x = exact(bits, 32)
    got = sf.rsqrt(F32, bits)
    y = exact(got, 32)
    # correctly rounded <=> the neighbours are not closer: check with exact squares
    # |y - 1/sqrt(x)| <= half ulp(y)  <=>  y is within the rounding interval of 1/sqrt(x)
    ulp = Fraction(2) ** (math.frexp(float(y))[1] - 24)
    lo, hi = y - ulp / 2, y + ulp / 2
    # 1/sqrt(x) in [lo, hi]  <=>  lo^2 * x <= 1 <= hi^2 * x
    assert lo * lo * x <= 1 <= hi * hi * x


def test_fpvec_estimate_special_values():
    assert sf.recip(F32, 0) == F32.inf
    assert sf.recip(F32, F32.sign) == F32.inf | F32.sign
    assert sf.recip(F32, F32.inf) == 0
    assert sf.recip(F32, F32.inf | F32.sign) == F32.sign
    assert sf.recip(F32, 0x7FA0_0000) == F32.qnan
    assert sf.recip(F32, 1) == F32.inf                                 # 1/subnormal overflows
    assert sf.recip(F32, as_bits(np.float32(4.0), 32)) == as_bits(np.float32(0.25), 32)
    assert sf.rsqrt(F32, 0) == F32.inf
    assert sf.rsqrt(F32, F32.sign) == F32.inf | F32.sign
    assert sf.rsqrt(F32, F32.inf) == 0
    assert sf.rsqrt(F32, as_bits(np.float32(-4.0), 32)) == F32.qnan
    assert sf.rsqrt(F32, F32.inf | F32.sign) == F32.qnan
    assert sf.rsqrt(F32, as_bits(np.float32(4.0), 32)) == as_bits(np.float32(0.5), 32)
    assert sf.rsqrt(F32, as_bits(np.float32(2.0), 32)) == as_bits(np.float32(1 / math.sqrt(2)), 32)


@pytest.mark.parametrize("x", [-8.0, -7.99, -3.0, -1.0, -0.1, 0.25, 1.0, 2.5, 7.5, 8.0])
def test_fpvec_sigmoid_accuracy_inside_range(x):
    bits = as_bits(np.float32(x), 32)
    xv = float(np.float32(x))
    want = 1 / (1 + math.exp(-xv))
    got = float(as_float(sf.sigmoid(F32, bits), 32))
    assert abs(got - want) <= float(np.spacing(np.float32(want)))    # within 1 ulp
    assert 0.0 < got < 1.0


def test_fpvec_sigmoid_saturation_and_specials():
    def s(x):
        return sf.sigmoid(F32, as_bits(np.float32(x), 32))
    assert s(8.000001) == F32.one and s(1e30) == F32.one and s(float("inf")) == F32.one
    assert s(-8.000001) == 0 and s(-1e30) == 0 and s(float("-inf")) == 0
    assert s(0.0) == as_bits(np.float32(0.5), 32) == s(-0.0)
    assert s(8.0) != F32.one                                          # the limit itself is inside
    assert sf.sigmoid(F32, 0x7FC0_0001) == F32.qnan
    assert sf.sigmoid(F16, as_bits(np.float16(100.0), 16)) == F16.one


# ---------------------------------------------------------------------------- compare/class

def test_fpvec_compare_relation_bits():
    one, two = F32.one, as_bits(np.float32(2.0), 32)
    rel = sf.compare(F32, one, two)
    assert rel == (1 << 1 | 1 << 2 | 1 << 3 | 1 << 5 | 1 << 12)       # LT LE |a|<|b| NE ordered
    assert sf.compare(F32, 0, F32.sign) == (1 << 0 | 1 << 2 | 1 << 9 | 1 << 11 | 1 << 12)
    nan = sf.compare(F32, F32.qnan, one)
    assert nan == (1 << 4 | 1 << 5 | 1 << 11)                         # unordered, NE, |NaN| >= |1|


def test_fpvec_classify_bits():
    assert sf.classify(F32, F32.inf | F32.sign) == 1 << 0 | 1 << 1 | 1 << 31
    assert sf.classify(F32, F32.sign | 5) == 1 << 1 | 1 << 2 | 1 << 31
    assert sf.classify(F32, F32.sign) == 1 << 1 | 1 << 3 | 1 << 31
    assert sf.classify(F32, 0) == 1 << 4 | 1 << 6
    assert sf.classify(F32, 5) == 1 << 5 | 1 << 6
    assert sf.classify(F32, F32.one) == 1 << 6
    assert sf.classify(F32, F32.inf) == 1 << 6 | 1 << 7
    assert sf.classify(F32, 0x7F80_0001) == 1 << 6 | 1 << 8
    assert sf.classify(F32, 0xFFC0_0000) == 1 << 1 | 1 << 9 | 1 << 31
    assert sf.classify(F16, 0x8000, 16) == 1 << 1 | 1 << 3 | 1 << 15  # sign at the element's top bit
