"""Format conversions: convert() and the TALU convert ops 0x20-0x27."""

from __future__ import annotations

import struct
from fractions import Fraction

import ml_dtypes
import numpy as np
import pytest
from test_tile_numerics_reference import MODES, NAN, fields, ref_round_flags, ref_round_int, ref_value

from tessera_tile.numerics import talu
from tessera_tile.numerics.convert import convert
from tessera_tile.numerics.formats import FP64, TFMT

FLOATS = {0: "fp32", 1: "fp16", 2: "bf16", 3: "fp8e4m3", 4: "fp8e5m2"}
INTS = {5: 32, 6: 16, 7: 8}
TILE = 1024


def _all_codes(width: int) -> np.ndarray:
    return np.arange(1 << (8 * width), dtype=np.uint64)


@pytest.mark.parametrize("narrow", [1, 2, 3, 4])
def test_round_trip_through_wider_formats_is_identity(narrow):
    """Every code of the 8/16-bit float formats survives narrow -> fp32 -> narrow (NaN canonical)."""
    name = FLOATS[narrow]
    width = fields(name)[3]
    codes = _all_codes(width)
    src = codes.astype(f"<u{width}").tobytes()
    wide, f1, s1 = convert(src, narrow, 0, trm=0)
    back, f2, s2 = convert(wide, 0, narrow, trm=0)
    got = np.frombuffer(back, f"<u{width}").astype(np.uint64)
    nan = np.array([ref_value(int(c), name) is NAN for c in codes])
    canon = {1: 0x7E00, 2: 0x7FC0, 3: 0x7F, 4: 0x7E}[narrow]
    assert (got[~nan] == codes[~nan]).all() and (got[nan] == canon).all()
    assert not s1 and not s2 and f2 == 0
    assert f1 == (0x10 if narrow != 3 else 0)           # signalling NaNs exist except in e4m3
    if narrow in (3, 4):                                 # and through fp16 as well
        mid, _, _ = convert(src, narrow, 1, trm=0)
        again = np.frombuffer(convert(mid, 1, narrow, trm=0)[0], np.uint8).astype(np.uint64)
        assert (again[~nan] == codes[~nan]).all()


@pytest.mark.parametrize("dst", [1, 2, 3, 4])
def test_fp32_to_narrow_every_mode(dst):
    name = FLOATS[dst]
    rng = np.random.default_rng(dst)
    x = (rng.standard_normal(400) * np.exp2(rng.integers(-30, 30, 400).astype(float))).astype(np.float32)
    width = fields(name)[3]
    for frm, mode in enumerate(MODES):
        for sat in (False, True):
            out, flags, saturated = convert(x.tobytes(), 0, dst, trm=frm | (sat << 5))
            got = np.frombuffer(out, f"<u{width}").tolist()
            want_flags = 0
            want_sat = False
            for i, v in enumerate(x.tolist()):
                code, f = ref_round_flags(Fraction(v), name, mode, sat)
                assert got[i] == code, (name, mode, v)
                want_flags |= f
                want_sat |= sat and bool(f & 0x04)
            assert flags == want_flags and saturated == want_sat


@pytest.mark.parametrize("dst", [0, 1, 2, 3, 4])
def test_int32_to_float_every_mode(dst):
    name = FLOATS[dst]
    rng = np.random.default_rng(10 + dst)
    v = rng.integers(-(2**31), 2**31, 300)
    v[:3] = [0, -(2**31), 2**24 + 1]
    width = fields(name)[3]
    for frm, mode in enumerate(MODES):
        out, flags, _ = convert(v.astype(np.int32).tobytes(), 5, dst, trm=frm)
        got = np.frombuffer(out, f"<u{width}").tolist()
        want_flags = 0
        for i, x in enumerate(v.tolist()):
            code, f = ref_round_flags(Fraction(x), name, mode)
            assert got[i] == code, (name, mode, x)
            want_flags |= f
        assert flags == want_flags


@pytest.mark.parametrize("dst", [5, 6, 7])
def test_float_to_int_fcvt_rules(dst):
    bits = INTS[dst]
    lo, hi = -(1 << (bits - 1)), (1 << (bits - 1)) - 1
    rng = np.random.default_rng(20 + dst)
    x = (rng.standard_normal(300) * 2.0 ** rng.integers(0, bits + 2, 300)).astype(np.float32)
    x[:6] = [np.nan, np.inf, -np.inf, 2.5, -2.5, -0.5]
    for rm_field in ("frm", "irm"):
        for m in range(5 if rm_field == "frm" else 4):
            mode = MODES[m] if rm_field == "frm" else ("rnu", "rne", "rdn", "rod")[m]
            t = m if rm_field == "frm" else m << 3
            out, flags, sat = convert(x.tobytes(), 0, dst, trm=t, f2i_rounding=rm_field)
            got = np.frombuffer(out, f"<i{bits // 8}").tolist()
            want_flags = 0
            for i, v in enumerate(x.tolist()):
                if v != v:
                    want, f = hi, 0x10
                elif v in (float("inf"), float("-inf")):
                    want, f = (hi if v > 0 else lo), 0x10
                else:
                    r, inexact = ref_round_int(Fraction(v), mode)
                    want = min(max(r, lo), hi)
                    f = 0x10 if want != r else (0x01 if inexact else 0)
                assert got[i] == want, (rm_field, mode, v)
                want_flags |= f
            assert flags == want_flags and not sat


def test_int_to_int_wrap_or_saturate():
    v = np.array([300, -300, 127, -128, 70000, -1], np.int32)
    out, _, sat = convert(v.tobytes(), 5, 7, trm=0)
    assert np.frombuffer(out, np.int8).tolist() == [44, -44, 127, -128, 112, -1] and not sat
    out, _, sat = convert(v.tobytes(), 5, 7, trm=0x20)
    assert np.frombuffer(out, np.int8).tolist() == [127, -128, 127, -128, 127, -1] and sat
    out, _, _ = convert(v.tobytes(), 5, 6, trm=0)
    assert np.frombuffer(out, np.int16).tolist() == [300, -300, 127, -128, 70000 - 65536, -1]
    out, f, sat = convert(np.array([-5, 7], np.int8).tobytes(), 7, 5, trm=0x20)
    assert np.frombuffer(out, np.int32).tolist() == [-5, 7] and f == 0 and not sat


def test_e4m3_infinity_and_saturation():
    # 464 is the tie between 448 (max, even) and the missing 480: RNE keeps 448; 465 overflows
    x = np.array([np.inf, -np.inf, 1000.0, -1000.0, 465.0, 464.0], np.float32)
    out, f, sat = convert(x.tobytes(), 0, 3, trm=0)
    assert list(out) == [0x7F, 0x7F, 0x7F, 0x7F, 0x7F, 0x7E] and f == 0x10 | 0x04 | 0x01 and not sat
    out, f, sat = convert(x.tobytes(), 0, 3, trm=0x20)
    assert list(out) == [0x7E, 0xFE, 0x7E, 0xFE, 0x7E, 0x7E] and sat and not f & 0x10
    out, _, _ = convert(x.tobytes(), 0, 4, trm=0)             # e5m2 keeps infinities
    assert list(out)[:2] == [0x7C, 0xFC]


def test_fp64_scalar_source_and_format_names():
    x = np.array([1.0 + 2.0**-30, np.nan, -3.0e300, 2.0**-149], np.float64)
    out, f, _ = convert(x.tobytes(), "fp64", "fp32", trm=3)                     # RUP
    got = np.frombuffer(out, np.uint32).tolist()
    assert got == [0x3F800001, 0x7FC00000, 0xFF7FFFFF, 0x00000001]
    assert f == 0x01 | 0x04
    out, _, _ = convert(np.array([1.5], np.float16).tobytes(), TFMT[1], FP64, trm=0)
    assert struct.unpack("<d", out)[0] == 1.5
    with pytest.raises(ValueError, match="unknown data format"):
        convert(bytes(4), "fp128", 0, trm=0)
    with pytest.raises(ValueError, match="f2i_rounding"):
        convert(bytes(4), 0, 5, trm=0, f2i_rounding="up")


def test_convert_ops_element_count_and_undisturbed_rest():
    rng = np.random.default_rng(30)
    old = rng.integers(0, 256, TILE, dtype=np.uint8).tobytes()
    src32 = rng.standard_normal(256).astype(np.float32)
    r = talu.unary(0x21, src32.tobytes(), old, fmt=0, trm=0)                  # fp32 -> fp16: 256 elems
    assert r.data[:512] == src32.astype(np.float16).tobytes() and r.data[512:] == old[512:]
    src16 = rng.standard_normal(512).astype(np.float16)
    r = talu.unary(0x20, src16.tobytes(), old, fmt=1, trm=0)                  # fp16 -> fp32: 256 elems
    assert r.data == src16[:256].astype(np.float32).tobytes()
    src8 = rng.integers(-128, 128, TILE).astype(np.int8)
    r = talu.unary(0x25, src8.tobytes(), old, fmt=7, trm=0)                   # int8 -> int32
    assert np.frombuffer(r.data, np.int32).tolist() == src8[:256].tolist()
    r = talu.unary(0x22, src32.tobytes(), old, fmt=0, trm=0)                  # fp32 -> bf16 (RNE)
    assert r.data[:512] == src32.astype(ml_dtypes.bfloat16).tobytes() and r.data[512:] == old[512:]
    r = talu.unary(0x23, src32.tobytes(), old, fmt=0, trm=0, neg=True)        # neg1 before the convert
    assert r.data[:256] == (-src32).astype(ml_dtypes.float8_e4m3fn).tobytes() and r.data[256:] == old[256:]
    r = talu.unary(0x27, src32.tobytes(), old, fmt=0, trm=0, active_granules=0)
    assert r.fflags == 0                                                       # nothing active, no flags
    r = talu.unary(0x27, src32.tobytes(), old, fmt=0, trm=0)
    assert r.fflags == 0x01 and r.data[256:] == old[256:]
    assert np.frombuffer(r.data[:256], np.int8).tolist() == np.rint(src32).astype(np.int8).tolist()


def test_reserved_rounding_mode_only_matters_when_rounding_to_float():
    v = np.array([300], np.int32).tobytes()
    assert convert(v, 5, 7, trm=7)[0] == bytes([44])
    with pytest.raises(ValueError, match="reserved FP rounding mode 7"):
        convert(v, 5, 0, trm=7)
    with pytest.raises(ValueError, match="reserved FP rounding mode 5"):
        convert(np.array([1.5], np.float32).tobytes(), 0, 5, trm=5)
    assert convert(np.array([1.5], np.float32).tobytes(), 0, 5, trm=5 | (1 << 3), f2i_rounding="irm")[0] == \
        np.array([2], np.int32).tobytes()                                        # RNE from trm[4:3]
