"""An independent, slow, exact reference for the tile numerics, and its own sanity tests.

The other ``test_tile_numerics_*`` modules import the helpers from here.  Nothing in this file
uses :mod:`tessera_tile.numerics`: values are Python integers scaled by powers of two, rounding
is textbook integer division, and the format parameters are written out again below.
"""

from __future__ import annotations

import math
import struct
from fractions import Fraction

import ml_dtypes
import numpy as np
import pytest

# name: (exponent bits, mantissa bits, has infinities (IEEE) / fn style, storage bytes)
SPECS = {
    "fp32": (8, 23, True, 4),
    "fp16": (5, 10, True, 2),
    "bf16": (8, 7, True, 2),
    "fp8e4m3": (4, 3, False, 1),
    "fp8e5m2": (5, 2, True, 1),
    "fp64": (11, 52, True, 8),
}
NAN = "nan"
MODES = ("rne", "rtz", "rdn", "rup", "rmm")


POS_INF = float("inf")
NEG_INF = float("-inf")


def fields(name: str) -> tuple[int, int, bool, int, int]:
    eb, mb, ieee, nbytes = SPECS[name]
    return eb, mb, ieee, nbytes, (1 << (eb - 1)) - 1


def ref_value(bits: int, name: str):
    """Exact value of a bit pattern: a Fraction, +-inf (float) or NAN; -0.0 for negative zero."""
    eb, mb, ieee, nbytes, bias = fields(name)
    sign = (bits >> (eb + mb)) & 1
    field = (bits >> mb) & ((1 << eb) - 1)
    mant = bits & ((1 << mb) - 1)
    if ieee and field == (1 << eb) - 1:
        if mant:
            return NAN
        return NEG_INF if sign else POS_INF
    if not ieee and field == (1 << eb) - 1 and mant == (1 << mb) - 1:
        return NAN
    if field == 0:
        mag = Fraction(mant, 1) * Fraction(2) ** (1 - bias - mb)
    else:
        mag = Fraction(mant + (1 << mb), 1) * Fraction(2) ** (field - bias - mb)
    if mag == 0:
        return -0.0 if sign else Fraction(0)
    return -mag if sign else mag


def max_code(name: str) -> int:
    eb, mb, ieee, _, _ = fields(name)
    return (((1 << eb) - 1) << mb) - 1 if ieee else (1 << (eb + mb)) - 2


def nan_code(name: str) -> int:
    eb, mb, ieee, _, _ = fields(name)
    if ieee:
        return (((1 << eb) - 1) << mb) | (1 << (mb - 1))
    return (1 << (eb + mb)) - 1


def _round_int(n: Fraction, mode: str, negative: bool) -> int:
    """Round a non-negative Fraction (a magnitude) to an integer."""
    fl = n.numerator // n.denominator
    rem = n - fl
    if rem == 0:
        return fl
    if mode == "rne":
        return fl + (rem > Fraction(1, 2) or (rem == Fraction(1, 2) and fl % 2 == 1))
    if mode == "rtz":
        return fl
    if mode == "rdn":
        return fl + negative
    if mode == "rup":
        return fl + (not negative)
    if mode == "rmm":
        return fl + (rem >= Fraction(1, 2))
    raise AssertionError(mode)


def ref_round(value, name: str, mode: str = "rne", saturate: bool = False) -> int:
    """Bit pattern of ``value`` (Fraction, +-inf, NAN, -0.0) rounded into format ``name``."""
    eb, mb, ieee, _, bias = fields(name)
    sign_bit = 1 << (eb + mb)
    if value is NAN or (isinstance(value, float) and math.isnan(value)):
        return nan_code(name)
    if isinstance(value, float) and math.isinf(value):
        neg = value < 0
        if ieee:
            return (((1 << eb) - 1) << mb) | (sign_bit if neg else 0)
        return (max_code(name) | (sign_bit if neg else 0)) if saturate else nan_code(name)
    if isinstance(value, float):          # only -0.0 / 0.0 reach here
        assert value == 0
        return sign_bit if math.copysign(1, value) < 0 else 0
    v = Fraction(value)
    if v == 0:
        return 0
    neg = v < 0
    mag = -v if neg else v
    emin = 1 - bias
    e = max(mag.numerator.bit_length() - mag.denominator.bit_length(), emin)
    while Fraction(2) ** e > mag and e > emin:
        e -= 1
    while Fraction(2) ** (e + 1) <= mag:
        e += 1
    quantum = Fraction(2) ** (e - mb)
    n = _round_int(mag / quantum, mode, neg)
    if n == 1 << (mb + 1):
        n >>= 1
        e += 1
    if n < (1 << mb):
        code = n
    else:
        code = ((e + bias) << mb) | (n - (1 << mb))
    if code > max_code(name):
        away = mode in ("rne", "rmm") or (mode == "rup" and not neg) or (mode == "rdn" and neg)
        if saturate or not away:
            code = max_code(name)
        elif ieee:
            code = ((1 << eb) - 1) << mb
        else:
            return nan_code(name)
    return code | (sign_bit if neg else 0)


def to_fraction(x: float):
    """Exact value of a Python float for the reference (keeping -0.0, inf and NaN markers)."""
    if math.isnan(x):
        return NAN
    if math.isinf(x) or x == 0:
        return x
    return Fraction(x)


def scaled_ints(codes, name: str) -> tuple[list[int], int]:
    """Finite values of a format as integers N with value = N / 2^S (one S for the format)."""
    eb, mb, _, _, bias = fields(name)
    scale = bias - 1 + mb
    out = []
    for c in codes:
        c = int(c)
        field = (c >> mb) & ((1 << eb) - 1)
        mant = c & ((1 << mb) - 1)
        n = (mant + ((1 << mb) if field else 0)) << max(field - 1, 0)
        out.append(-n if (c >> (eb + mb)) & 1 else n)
    return out, scale


def round_scaled(num: int, scale: int, name: str, mode: str = "rne") -> int:
    """Round num / 2^scale (exact integer pair) into ``name``."""
    if num == 0:
        return 0
    return ref_round(Fraction(num, 1 << scale) if scale >= 0 else Fraction(num << -scale), name, mode)


def f32_bits(x: float) -> int:
    return struct.unpack("<I", struct.pack("<f", x))[0]


def random_codes(rng: np.random.Generator, name: str, count: int, *,
                 max_exp_field: int | None = None, min_exp_field: int = 0) -> np.ndarray:
    """Random finite bit patterns of a format (optionally with a limited exponent field range)."""
    eb, mb, ieee, nbytes, bias = fields(name)
    top = (1 << eb) - 1
    hi = top - 1 if ieee else top
    if max_exp_field is not None:
        hi = min(hi, max_exp_field)
    field = rng.integers(min_exp_field, hi + 1, count)
    mant = rng.integers(0, 1 << mb, count)
    if not ieee:
        mant = np.where(field == top, np.minimum(mant, (1 << mb) - 2), mant)
    sign = rng.integers(0, 2, count)
    codes = (sign << (eb + mb)) | (field << mb) | mant
    return codes.astype(np.uint64)


# -- sanity of the reference itself ---------------------------------------------------------

_DTYPES = {"fp32": np.float32, "fp16": np.float16, "bf16": ml_dtypes.bfloat16,
           "fp8e4m3": ml_dtypes.float8_e4m3fn, "fp8e5m2": ml_dtypes.float8_e5m2}
_UINTS = {1: np.uint8, 2: np.uint16, 4: np.uint32}


@pytest.mark.parametrize("name", list(_DTYPES))
def test_reference_decode_matches_ml_dtypes(name):
    nbytes = SPECS[name][3]
    count = 1 << (8 * nbytes) if nbytes <= 2 else 4000
    rng = np.random.default_rng(3)
    codes = np.arange(count, dtype=np.uint64) if nbytes <= 2 else rng.integers(0, 1 << 32, count)
    with np.errstate(invalid="ignore"):
        vals = np.asarray(codes, dtype=_UINTS[nbytes]).view(_DTYPES[name]).astype(np.float64)
    for c, v in zip(codes.tolist(), vals.tolist(), strict=True):
        r = ref_value(c, name)
        if r is NAN:
            assert math.isnan(v)
        else:
            assert float(r) == v and math.copysign(1, float(r)) == math.copysign(1, v)


@pytest.mark.parametrize("name", list(_DTYPES))
def test_reference_rne_matches_numpy_casts(name):
    """ml-dtypes/numpy casts from float64 round to nearest even: the reference must agree."""
    rng = np.random.default_rng(5)
    eb, mb, _, nbytes, bias = fields(name)
    x = rng.standard_normal(3000) * np.exp2(rng.integers(-bias - mb - 3, bias + 3, 3000))
    with np.errstate(over="ignore"):
        got = np.asarray(x).astype(_DTYPES[name]).view(_UINTS[nbytes]).astype(np.uint64)
    for v, g in zip(x.tolist(), got.tolist(), strict=True):
        if name == "fp8e4m3" and abs(v) >= 464:
            continue  # ml-dtypes' overflow NaN may carry a sign; the reference's NaN is canonical
        want = ref_round(Fraction(v), name, "rne")
        assert want == g, (name, v, hex(want), hex(g))


def test_reference_directed_modes_bracket_the_value():
    rng = np.random.default_rng(9)
    for v in (rng.standard_normal(200) * 1e3).tolist():
        dn = ref_value(ref_round(Fraction(v), "fp16", "rdn"), "fp16")
        up = ref_value(ref_round(Fraction(v), "fp16", "rup"), "fp16")
        assert dn <= Fraction(v) <= up
        tz = ref_value(ref_round(Fraction(v), "fp16", "rtz"), "fp16")
        assert abs(tz) <= abs(Fraction(v))


# -- flags ----------------------------------------------------------------------------------

FLAG_NV, FLAG_DZ, FLAG_OF, FLAG_UF, FLAG_NX = 0x10, 0x08, 0x04, 0x02, 0x01


def _floor_log2(mag: Fraction) -> int:
    e = mag.numerator.bit_length() - mag.denominator.bit_length()
    while Fraction(2) ** e > mag:
        e -= 1
    while Fraction(2) ** (e + 1) <= mag:
        e += 1
    return e


def ref_round_flags(value, name: str, mode: str = "rne", saturate: bool = False) -> tuple[int, int]:
    """(bit pattern, IEEE flags OF/UF/NX) of rounding an exact finite value; tininess after rounding."""
    code = ref_round(value, name, mode, saturate)
    if isinstance(value, float) or value == 0:
        return code, 0
    eb, mb, ieee, _, bias = fields(name)
    v = Fraction(value)
    neg = v < 0
    mag = -v if neg else v
    e = _floor_log2(mag)
    unbounded = _round_int(mag / Fraction(2) ** (e - mb), mode, neg) * Fraction(2) ** (e - mb)
    maxval = ref_value(max_code(name), name)
    over = unbounded > maxval
    got = None if over else ref_value(code, name)
    inexact = over or got != v
    flags = (FLAG_OF | FLAG_NX) if over else (FLAG_NX if inexact else 0)
    if not over and inexact and unbounded < Fraction(2) ** (1 - bias):
        flags |= FLAG_UF
    return code, flags


def ref_round_int(x: Fraction, mode: str) -> tuple[int, bool]:
    """Round to an integer with an FP mode or a fixed-point mode (rnu, rod); (value, inexact)."""
    fl = x.numerator // x.denominator
    rem = x - fl
    if rem == 0:
        return fl, False
    half = Fraction(1, 2)
    up = {
        "rne": rem > half or (rem == half and fl % 2 == 1),
        "rtz": x < 0,
        "rdn": False,
        "rup": True,
        "rmm": rem > half or (rem == half and x > 0),
        "rnu": rem >= half,
        "rod": fl % 2 == 0,
    }[mode]
    return fl + up, True
