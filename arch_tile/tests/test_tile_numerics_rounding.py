"""Rounding core and exact summation against the Fraction reference."""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
import pytest
from test_tile_numerics_reference import MODES, ref_round_flags, ref_round_int

from tessera_tile.numerics import formats as F
from tessera_tile.numerics.exactsum import exact_sum_ro, limb_sum_ro, ro_two_sum
from tessera_tile.numerics.rounding import Trm, round_float, round_to_integer, to_int_saturating

FLOAT_FORMATS = ["fp32", "fp16", "bf16", "fp8e4m3", "fp8e5m2"]


def _ro(q: Fraction) -> float:
    """Round-to-odd of an exact value at 53 bits (the contract of exact_sum_ro)."""
    if q == 0:
        return 0.0
    neg = q < 0
    mag = -q if neg else q
    e = mag.numerator.bit_length() - mag.denominator.bit_length()
    while Fraction(2) ** e > mag:
        e -= 1
    while Fraction(2) ** (e + 1) <= mag:
        e += 1
    quantum = Fraction(2) ** (e - 52)
    n = math.floor(mag / quantum)
    if n * quantum != mag:
        n |= 1
    v = float(n * quantum)
    return -v if neg else v


@pytest.mark.parametrize("name", FLOAT_FORMATS)
def test_round_float_every_mode_and_flags(name):
    fmt = F.FORMATS[name]
    rng = np.random.default_rng(hash(name) % 1000)
    span = fmt.bias + fmt.mbits + 4
    x = rng.standard_normal(1500) * np.exp2(rng.integers(-span, span, 1500).astype(float))
    half_tiny = 2.0 ** (1 - fmt.bias - fmt.mbits) / 2          # ties with zero
    top = float(F.to_float64(np.array([fmt.max_code]), fmt)[0])
    x[:4] = [half_tiny, -half_tiny, top * (1 + 2.0 ** -(fmt.mbits + 1)), 0.0]
    for frm, mode in enumerate(MODES):
        for sat in (False, True):
            bits, flags, satm = round_float(x, fmt, frm, saturate=sat)
            for i, v in enumerate(x.tolist()):
                code, f = ref_round_flags(Fraction(v), name, mode, sat)
                assert (int(bits[i]), int(flags[i])) == (code, f), (name, mode, sat, v)
                if not sat:
                    assert not satm[i]


def test_round_float_specials():
    x = np.array([np.nan, np.inf, -np.inf, -0.0, 0.0])
    bits, flags, _ = round_float(x, F.FP16, 0)
    assert bits.tolist() == [0x7E00, 0x7C00, 0xFC00, 0x8000, 0] and not flags.any()
    bits, flags, sat = round_float(x, F.E4M3, 0)
    assert bits.tolist() == [0x7F, 0x7F, 0x7F, 0x80, 0] and not flags.any() and not sat.any()
    bits, _, sat = round_float(x, F.E4M3, 0, saturate=True)
    assert bits.tolist()[1:3] == [0x7E, 0xFE] and sat.tolist() == [False, True, True, False, False]
    bits, _, _ = round_float(np.array([np.nan, 1.5]), F.FP64, 3)
    assert bits.tolist() == [0x7FF8000000000000, 0x3FF8000000000000]
    with pytest.raises(ValueError, match="reserved FP rounding mode 7"):
        round_float(x, F.FP32, 7)


def _random_rows(rng, rows: int, n: int, span: int) -> np.ndarray:
    t = rng.standard_normal((rows, n)) * np.exp2(rng.integers(-span, span, (rows, n)).astype(float))
    t[0] = 0.0
    t[1, :] = -0.0
    t[2, :2] = [2.0**300, -(2.0**300)]                       # exact cancellation plus small terms
    t[3, :] = 1.0
    t[3, 1] = -1.0
    t[3, 2:] = 0.0                                            # exact zero from cancellation
    t[4, :3] = [2.0**600, 1.0, -(2.0**600)]                   # huge span: only the limbs can do it
    t[5, :3] = [1.0, 2.0**-60, 2.0**-1000]
    return t


@pytest.mark.parametrize("span", [10, 80, 600])
def test_exact_sum_is_round_to_odd_of_the_true_sum(span):
    rng = np.random.default_rng(span)
    t = _random_rows(rng, 60, 17, span)
    for fn in (exact_sum_ro, limb_sum_ro):
        got = fn(t)
        for i in range(t.shape[0]):
            want = _ro(sum((Fraction(v) for v in t[i].tolist()), Fraction(0)))
            assert got[i] == want, (fn.__name__, i)
    assert math.copysign(1, exact_sum_ro(t)[1]) == -1 and math.copysign(1, exact_sum_ro(t)[0]) == 1
    assert math.copysign(1, exact_sum_ro(t)[3]) == 1
    assert math.copysign(1, exact_sum_ro(t, rdn=True)[3]) == -1
    assert math.copysign(1, limb_sum_ro(t, rdn=True)[0]) == 1


def test_exact_sum_many_terms_and_one_term():
    rng = np.random.default_rng(4)
    t = rng.standard_normal((8, 129)) * np.exp2(rng.integers(-60, 60, (8, 129)).astype(float))
    got = exact_sum_ro(t)
    for i in range(8):
        assert got[i] == _ro(sum((Fraction(v) for v in t[i].tolist()), Fraction(0)))
    assert exact_sum_ro(np.array([[3.5], [-0.0]])).tolist() == [3.5, -0.0]
    with pytest.raises(ValueError, match="2-D"):
        exact_sum_ro(np.zeros(3))


def test_ro_two_sum():
    a = np.array([1.0, 2.0**60, 1.0, -1.0])
    b = np.array([2.0**-60, 1.0, -1.0, 2.0**-80])
    got = ro_two_sum(a, b)
    for i in range(4):
        assert got[i] == _ro(Fraction(a[i]) + Fraction(b[i]))


@pytest.mark.parametrize("mode", [*MODES, "rnu", "rod"])
def test_round_to_integer_modes(mode):
    x = np.array([2.5, -2.5, 3.5, -0.5, 0.49999999999999994, 7.0, -7.25, 2.0**52 + 1, 1e300])
    got, inexact = round_to_integer(x, mode)
    for i, v in enumerate(x.tolist()):
        want, inex = ref_round_int(Fraction(v), mode)
        assert got[i] == want and inexact[i] == inex, (mode, v)
    r, _ = round_to_integer(np.array([np.nan, np.inf]), mode)
    assert np.isnan(r[0]) and r[1] == np.inf
    with pytest.raises(ValueError, match="unknown rounding mode"):
        round_to_integer(x, "rhu")


def test_to_int_saturating_fcvt_rules():
    x = np.array([1.5, -1.5, 1e10, -1e10, np.nan, np.inf, -np.inf, 127.4, -128.6])
    v, flags = to_int_saturating(x, "rne", -128, 127)
    assert v.tolist() == [2, -2, 127, -128, 127, 127, -128, 127, -128]
    assert flags.tolist() == [1, 1, 16, 16, 16, 16, 16, 1, 16]


def test_trm_parse():
    t = Trm.parse(0b101011)
    assert (t.frm, t.irm, t.sat) == (3, 1, True)
    assert Trm.parse(4).float_mode() == 4
    with pytest.raises(ValueError, match="reserved FP rounding mode 6"):
        Trm.parse(6).float_mode()
