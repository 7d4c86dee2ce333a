"""TALU numerics: every op of the unary, binary and ternary tables, every tfmt format.

Random tiles are checked element by element against the exact reference of
``test_tile_numerics_reference`` (Fractions, textbook rounding); the edge cases (NaN, Inf,
signalling NaNs, saturation, division by zero, integer wrap) have explicit expectations.
``active_granules`` limits both the checked elements and the accrued flags, so each rounding
mode looks at a different part of the tile.
"""

from __future__ import annotations

import math
import struct
from fractions import Fraction

import numpy as np
import pytest
from test_tile_numerics_reference import (
    FLAG_DZ,
    FLAG_NV,
    FLAG_NX,
    MODES,
    NAN,
    fields,
    random_codes,
    ref_round,
    ref_round_flags,
    ref_round_int,
    ref_value,
)

from tessera_tile.numerics import talu

FLOATS = {0: "fp32", 1: "fp16", 2: "bf16", 3: "fp8e4m3", 4: "fp8e5m2"}
INTS = {5: 32, 6: 16, 7: 8}
TILE = 1024
GRANULES = 4                      # granules checked per call (128 bytes)


def trm(frm: int = 0, irm: int = 0, sat: bool = False) -> int:
    return frm | (irm << 3) | (int(sat) << 5)


def nbytes(code: int) -> int:
    return fields(FLOATS[code])[3] if code in FLOATS else INTS[code] // 8


def tile(codes, width: int) -> bytes:
    return np.asarray(codes, dtype=np.uint64).astype(f"<u{width}").tobytes()


def codes_of(data: bytes, width: int) -> list[int]:
    return np.frombuffer(data, dtype=f"<u{width}").astype(np.int64).tolist()


def active_range(slot: int, width: int) -> tuple[int, range]:
    """Granule mask for slot ``slot`` and the element indices it covers."""
    first = (slot * GRANULES) % 32
    mask = ((1 << GRANULES) - 1) << first
    per = 32 // width
    return mask, range(first * per, (first + GRANULES) * per)


def float_operand(rng, name: str, count: int) -> np.ndarray:
    eb, mb, _, _, bias = fields(name)
    narrow = random_codes(rng, name, count, min_exp_field=max(bias - 4, 1), max_exp_field=bias + 4)
    full = random_codes(rng, name, count)
    codes = np.where(rng.random(count) < 0.5, narrow, full)
    zero = rng.random(count) < 0.05
    return np.where(zero, rng.integers(0, 2, count).astype(np.uint64) << np.uint64(eb + mb), codes)


class V:
    """A finite reference value: exact Fraction plus the sign bit (which matters for zeros)."""

    def __init__(self, q: Fraction, neg: bool) -> None:
        self.q = q
        self.neg = neg

    @classmethod
    def of(cls, code: int, name: str) -> V:
        r = ref_value(code, name)
        assert r is not NAN and not (isinstance(r, float) and math.isinf(r))
        if isinstance(r, float):
            return cls(Fraction(0), math.copysign(1, r) < 0)
        return cls(Fraction(r), r < 0)

    @property
    def zero(self) -> bool:
        return self.q == 0

    def __neg__(self) -> V:
        return V(-self.q, not self.neg)


def _add(a: V, b: V, rdn: bool) -> V:
    v = a.q + b.q
    if v != 0:
        return V(v, v < 0)
    if rdn:
        return V(v, not (a.zero and b.zero and not a.neg and not b.neg))
    return V(v, a.zero and b.zero and a.neg and b.neg)


def _mul(a: V, b: V) -> V:
    return V(a.q * b.q, a.neg != b.neg)


def _sum_zero_sign(terms: list[V], rdn: bool) -> bool:
    if all(t.zero for t in terms):
        return all(t.neg for t in terms) or (rdn and any(t.neg for t in terms))
    return rdn


def encode(v: V | str, name: str, mode: str, sat: bool) -> tuple[int, int]:
    if isinstance(v, str):
        return ref_round(NAN, name), 0
    if v.zero:
        eb, mb = fields(name)[:2]
        return (1 << (eb + mb)) if v.neg else 0, 0
    return ref_round_flags(v.q, name, mode, sat)


def ref_float(op: str, vals: list[V], name: str, mode: str, sat: bool) -> tuple[int, int]:
    """(code, flags) of one element of a float op on finite operands."""
    rdn = mode == "rdn"
    a = vals[0]
    if op in ("add", "sub"):
        return encode(_add(a, vals[1] if op == "add" else -vals[1], rdn), name, mode, sat)
    if op == "mul":
        return encode(_mul(a, vals[1]), name, mode, sat)
    if op == "div":
        b = vals[1]
        if b.zero:
            if a.zero:
                return ref_round(NAN, name), FLAG_NV
            inf = ref_round(float("-inf") if a.neg != b.neg else float("inf"), name, mode, sat)
            return inf, FLAG_DZ
        return encode(V(a.q / b.q, a.neg != b.neg), name, mode, sat)
    if op in ("fma", "fms", "nfma"):
        p = _mul(a, vals[1])
        p = -p if op == "nfma" else p
        return encode(_add(p, -vals[2] if op == "fms" else vals[2], rdn), name, mode, sat)
    if op == "dequantize":
        d = _add(a, -vals[2], rdn)
        return encode(_mul(d, vals[1]), name, mode, sat)
    if op == "lerp":
        b, c = vals[1], vals[2]
        terms = [a, _mul(b, c), -_mul(a, c)]
        total = sum((t.q for t in terms), Fraction(0))
        neg = total < 0 if total != 0 else _sum_zero_sign(terms, rdn)
        return encode(V(total, neg), name, mode, sat)
    raise AssertionError(op)


def _check_float(op: str, fcode: int, args: list[np.ndarray], result: talu.Result, idx: range,
                 mode: str, sat: bool) -> None:
    name = FLOATS[fcode]
    width = nbytes(fcode)
    got = codes_of(result.data, width)
    flags = 0
    for i in idx:
        code, f = ref_float(op, [V.of(int(x[i]), name) for x in args], name, mode, sat)
        assert got[i] == code, (op, name, mode, i, [hex(int(x[i])) for x in args], hex(got[i]), hex(code))
        flags |= f
    assert result.fflags == flags


ARITH_BINARY = {0x00: "add", 0x01: "sub", 0x02: "mul", 0x03: "div"}
ARITH_TERNARY = {0x8: "fma", 0x9: "fms", 0xA: "nfma", 0xE: "dequantize", 0xF: "lerp"}


@pytest.mark.parametrize("fcode", sorted(FLOATS))
@pytest.mark.parametrize("op", sorted(ARITH_BINARY))
def test_float_binary_arithmetic_every_mode(fcode, op):
    rng = np.random.default_rng(fcode * 16 + op)
    width = nbytes(fcode)
    n = TILE // width
    a = float_operand(rng, FLOATS[fcode], n)
    b = float_operand(rng, FLOATS[fcode], n)
    for frm, mode in enumerate(MODES):
        for sat in (False, True):
            mask, idx = active_range(frm * 2 + sat, width)
            r = talu.binary(op, tile(a, width), tile(b, width), bytes(TILE), fmt=fcode, trm=trm(frm, sat=sat),
                            active_granules=mask)
            _check_float(ARITH_BINARY[op], fcode, [a, b], r, idx, mode, sat)


@pytest.mark.parametrize("fcode", sorted(FLOATS))
@pytest.mark.parametrize("op", sorted(ARITH_TERNARY))
def test_float_ternary_arithmetic_every_mode(fcode, op):
    rng = np.random.default_rng(fcode * 16 + op + 100)
    width = nbytes(fcode)
    n = TILE // width
    a, b, c = (float_operand(rng, FLOATS[fcode], n) for _ in range(3))
    for frm, mode in enumerate(MODES):
        mask, idx = active_range(frm, width)
        r = talu.ternary(op, tile(a, width), tile(b, width), tile(c, width), bytes(TILE), fmt=fcode,
                         trm=trm(frm), active_granules=mask)
        _check_float(ARITH_TERNARY[op], fcode, [a, b, c], r, idx, mode, False)


def _max(a: V, b: V, want_max: bool) -> V:
    if a.q != b.q:
        return a if (a.q > b.q) == want_max else b
    return a if (a.neg != want_max) else b


@pytest.mark.parametrize("fcode", sorted(FLOATS))
def test_float_minmax_compare_bitwise_select_clamp(fcode):
    rng = np.random.default_rng(300 + fcode)
    name = FLOATS[fcode]
    width = nbytes(fcode)
    n = TILE // width
    a, b, c = (float_operand(rng, name, n) for _ in range(3))
    b[:8] = a[:8]                                       # some equal pairs for the comparisons
    ta, tb, tc = tile(a, width), tile(b, width), tile(c, width)
    one = ref_round(Fraction(1), name)
    res = {op: codes_of(talu.binary(code, ta, tb, bytes(TILE), fmt=fcode, trm=0).data, width)
           for code, op in talu.BINARY.items() if op not in ("sll", "srl", "sra")}
    sel = codes_of(talu.ternary(0xB, ta, tb, tc, bytes(TILE), fmt=fcode, trm=0).data, width)
    clamp = codes_of(talu.ternary(0xC, ta, tb, tc, bytes(TILE), fmt=fcode, trm=0).data, width)
    for i in range(n):
        va, vb, vc = V.of(int(a[i]), name), V.of(int(b[i]), name), V.of(int(c[i]), name)
        assert res["max"][i] == encode(_max(va, vb, True), name, "rne", False)[0]
        assert res["min"][i] == encode(_max(va, vb, False), name, "rne", False)[0]
        assert res["cmpeq"][i] == (one if va.q == vb.q else 0)
        assert res["cmplt"][i] == (one if va.q < vb.q else 0)
        assert res["cmple"][i] == (one if va.q <= vb.q else 0)
        assert res["and"][i] == int(a[i]) & int(b[i])
        assert res["or"][i] == int(a[i]) | int(b[i])
        assert res["xor"][i] == int(a[i]) ^ int(b[i])
        assert sel[i] == (int(a[i]) if vc.q != 0 else int(b[i]))
        assert clamp[i] == encode(_max(_max(va, vb, True), vc, False), name, "rne", False)[0]


@pytest.mark.parametrize("fcode", sorted(FLOATS))
def test_float_shifts_are_illegal(fcode):
    with pytest.raises(ValueError, match="not defined on float"):
        talu.binary(0x09, bytes(TILE), bytes(TILE), bytes(TILE), fmt=fcode, trm=0)


@pytest.mark.parametrize("fcode", sorted(FLOATS))
def test_float_simple_unary_and_neg_flag(fcode):
    rng = np.random.default_rng(400 + fcode)
    name = FLOATS[fcode]
    width = nbytes(fcode)
    eb, mb = fields(name)[:2]
    sign = 1 << (eb + mb)
    n = TILE // width
    a = float_operand(rng, name, n)
    ta = tile(a, width)
    run = {op: codes_of(talu.unary(code, ta, bytes(TILE), fmt=fcode, trm=0).data, width)
           for code, op in talu.UNARY.items() if code <= 0x07}
    negated = codes_of(talu.unary(0x00, ta, bytes(TILE), fmt=fcode, trm=0, neg=True).data, width)
    double = codes_of(talu.unary(0x01, ta, bytes(TILE), fmt=fcode, trm=0, neg=True).data, width)
    one = ref_round(Fraction(1), name)
    for i in range(n):
        c = int(a[i])
        v = V.of(c, name)
        assert run["copy"][i] == c and negated[i] == c ^ sign and double[i] == c
        assert run["neg"][i] == c ^ sign and run["abs"][i] == c & ~sign
        assert run["not"][i] == ~c & ((1 << (8 * width)) - 1) and run["zero"][i] == 0
        assert run["relu"][i] == (c if v.q > 0 else 0)
        assert run["sign"][i] == (one if v.q > 0 else one | sign if v.q < 0 else c)
        fl = V(Fraction(math.floor(v.q)), v.neg)
        assert run["floor"][i] == encode(fl, name, "rne", False)[0]


def _ref_sfu(op: str, x: float) -> float:
    """The SFU functions with Python's math module (NaN for domain errors)."""
    try:
        if op == "exp":
            return math.exp(x)
        if op == "exp2":
            return 2.0 ** x
        if op in ("log", "log2"):
            if x == 0:
                return float("-inf")
            return math.log(x) if op == "log" else math.log2(x)
        if op == "rcp":
            return 1.0 / x if x != 0 else math.copysign(float("inf"), x)
        if op == "sqrt":
            return math.sqrt(x) if x != 0 else x
        if op == "rsqrt":
            return 1.0 / math.sqrt(x) if x != 0 else math.copysign(float("inf"), x)
        if op == "tanh":
            return math.tanh(x)
        if op == "sigmoid":
            return 1.0 / (1.0 + math.exp(-x))
        if op == "gelu":
            return 0.5 * x * (1.0 + math.tanh(math.sqrt(2.0 / math.pi) * (x + 0.044715 * x * x * x)))
        if op == "silu":
            return x * (1.0 / (1.0 + math.exp(-x)))
        if op == "sin":
            return math.sin(x)
        if op == "cos":
            return math.cos(x)
        if op == "erf":
            return math.erf(x)
    except ValueError:
        return float("nan")
    except OverflowError:
        if op == "sigmoid":
            return 0.0
        if op == "silu":
            return -0.0
        return float("inf")
    raise AssertionError(op)


def _f32_round(x: float) -> float:
    r = ref_value(ref_round(to_exact(x), "fp32"), "fp32")
    return float("nan") if r is NAN else float(r)


def to_exact(x: float):
    if math.isnan(x):
        return NAN
    if math.isinf(x) or x == 0:
        return x
    return Fraction(x)


SFU = {code: name for code, name in talu.UNARY.items() if 0x08 <= code <= 0x15}


@pytest.mark.parametrize("fcode", sorted(FLOATS))
def test_sfu_ops_round_fp32_then_format(fcode):
    rng = np.random.default_rng(500 + fcode)
    name = FLOATS[fcode]
    width = nbytes(fcode)
    n = TILE // width
    x = rng.standard_normal(n) * 3
    codes = np.array([ref_round(Fraction(float(v)), name) for v in x], dtype=np.uint64)
    for code, op in SFU.items():
        frm = code % 5
        mask, idx = active_range(code, width)
        r = talu.unary(code, tile(codes, width), bytes(TILE), fmt=fcode, trm=trm(frm), active_granules=mask)
        got = codes_of(r.data, width)
        for i in idx:
            xv = float(ref_value(int(codes[i]), name))
            y = _f32_round(_ref_sfu(op, _f32_round(xv)))
            want = ref_round(to_exact(y), name, MODES[frm])
            assert got[i] == want, (op, name, xv, hex(got[i]), hex(want))


def test_sfu_special_values_and_flags():
    x = np.array([-1.0, 0.0, -0.0, np.inf, -np.inf, np.nan, 4.0, 1.0], np.float32)
    t = x.tobytes() + bytes(TILE - x.nbytes)

    def run(code: int) -> tuple[np.ndarray, int]:
        r = talu.unary(code, t, bytes(TILE), fmt=0, trm=0, active_granules=1)
        return np.frombuffer(r.data, np.float32)[:8], r.fflags

    log, f = run(0x0A)
    assert np.isnan(log[0]) and log[1] == -np.inf and log[2] == -np.inf and log[3] == np.inf
    assert np.isnan(log[4]) and log[6] == np.float32(math.log(4.0)) and f == FLAG_NV | FLAG_DZ | FLAG_NX
    rcp, f = run(0x0C)
    assert rcp[1] == np.inf and rcp[2] == -np.inf and rcp[3] == 0 and rcp[6] == 0.25 and f & FLAG_DZ
    sq, f = run(0x0D)
    assert np.isnan(sq[0]) and np.signbit(sq[2]) and sq[2] == 0 and sq[6] == 2.0 and f == FLAG_NV
    rs, f = run(0x0E)
    assert rs[1] == np.inf and rs[2] == -np.inf and rs[6] == 0.5 and f == FLAG_NV | FLAG_DZ
    sn, f = run(0x13)
    assert np.isnan(sn[3]) and f & FLAG_NV
    ge, _ = run(0x11)
    assert ge[3] == np.inf and ge[4] == 0 and ge[1] == 0
    si, _ = run(0x12)
    assert si[3] == np.inf and si[4] == 0
    ex, f = run(0x08)
    assert ex[3] == np.inf and ex[4] == 0 and ex[1] == 1.0 and np.isnan(ex[5])
    out = np.frombuffer(talu.unary(0x08, t, bytes(TILE), fmt=0, trm=0).data, np.uint32)
    assert out[5] == 0x7FC00000                                            # canonical NaN


def test_sfu_overflow_into_narrow_format_and_saturation():
    x = np.full(512, 12.0, np.float16)                       # exp(12) = 162755 > fp16 max
    r = talu.unary(0x08, x.tobytes(), bytes(TILE), fmt=1, trm=0)
    assert (np.frombuffer(r.data, np.uint16) == 0x7C00).all() and r.fflags & 0x04 and not r.saturated
    r = talu.unary(0x08, x.tobytes(), bytes(TILE), fmt=1, trm=trm(sat=True))
    assert (np.frombuffer(r.data, np.uint16) == 0x7BFF).all() and r.saturated
    r = talu.unary(0x08, x.tobytes(), bytes(TILE), fmt=1, trm=trm(1))         # RTZ: max finite, no sat
    assert (np.frombuffer(r.data, np.uint16) == 0x7BFF).all() and not r.saturated


# -- integer formats --------------------------------------------------------------------------

def _int_vals(rng, bits: int, n: int) -> np.ndarray:
    lo, hi = -(1 << (bits - 1)), (1 << (bits - 1))
    v = rng.integers(lo, hi, n)
    small = rng.random(n) < 0.3
    v = np.where(small, rng.integers(-5, 6, n), v)
    v[:4] = [lo, hi - 1, 0, -1]
    return v


def _wrap(v: int, bits: int) -> int:
    v &= (1 << bits) - 1
    return v - (1 << bits) if v >= 1 << (bits - 1) else v


def _sat(v: int, bits: int) -> int:
    return max(-(1 << (bits - 1)), min((1 << (bits - 1)) - 1, v))


def _tdiv(a: int, b: int) -> int:
    if b == 0:
        return -1
    q = abs(a) // abs(b)
    return -q if (a < 0) != (b < 0) else q


INT_BINARY = {
    "add": lambda a, b, w: a + b, "sub": lambda a, b, w: a - b, "mul": lambda a, b, w: a * b,
    "div": lambda a, b, w: _tdiv(a, b), "max": lambda a, b, w: max(a, b), "min": lambda a, b, w: min(a, b),
    "and": lambda a, b, w: a & b, "or": lambda a, b, w: a | b, "xor": lambda a, b, w: a ^ b,
    "sll": lambda a, b, w: a << (b % w), "srl": lambda a, b, w: (a % (1 << w)) >> (b % w),
    "sra": lambda a, b, w: a >> (b % w), "cmpeq": lambda a, b, w: int(a == b),
    "cmplt": lambda a, b, w: int(a < b), "cmple": lambda a, b, w: int(a <= b),
}
SATURATING = {"add", "sub", "mul", "div", "fma", "fms", "nfma", "dequantize", "lerp", "neg", "abs"}


@pytest.mark.parametrize("fcode", sorted(INTS))
@pytest.mark.parametrize("sat", [False, True])
def test_int_binary_ops(fcode, sat):
    bits = INTS[fcode]
    rng = np.random.default_rng(600 + fcode + sat)
    n = TILE * 8 // bits
    a, b = _int_vals(rng, bits, n), _int_vals(rng, bits, n)
    ta, tb = a.astype(f"<i{bits // 8}").tobytes(), b.astype(f"<i{bits // 8}").tobytes()
    for code, op in talu.BINARY.items():
        for neg1, neg2 in ((False, False), (True, False), (False, True)):
            r = talu.binary(code, ta, tb, bytes(TILE), fmt=fcode, trm=trm(sat=sat), neg1=neg1, neg2=neg2)
            got = np.frombuffer(r.data, f"<i{bits // 8}").tolist()
            saw_sat = False
            for i in range(n):
                x, y = int(a[i]), int(b[i])
                if neg1:
                    saw_sat |= sat and _sat(-x, bits) != -x
                    x = _sat(-x, bits) if sat else _wrap(-x, bits)
                if neg2:
                    saw_sat |= sat and _sat(-y, bits) != -y
                    y = _sat(-y, bits) if sat else _wrap(-y, bits)
                exact = INT_BINARY[op](x, y, bits)
                want = _sat(exact, bits) if sat and op in SATURATING else _wrap(exact, bits)
                saw_sat |= sat and op in SATURATING and want != exact
                assert got[i] == want, (op, bits, x, y, got[i], want)
            assert r.saturated == saw_sat and r.fflags == 0


INT_TERNARY = {
    "fma": lambda a, b, c: a * b + c, "fms": lambda a, b, c: a * b - c, "nfma": lambda a, b, c: c - a * b,
    "select": lambda a, b, c: a if c != 0 else b, "clamp": lambda a, b, c: min(max(a, b), c),
    "dequantize": lambda a, b, c: (a - c) * b, "lerp": lambda a, b, c: a + (b - a) * c,
    "quantize": lambda a, b, c: max(-128, min(127, a * b + c)),
}


@pytest.mark.parametrize("fcode", sorted(INTS))
@pytest.mark.parametrize("sat", [False, True])
def test_int_ternary_ops(fcode, sat):
    bits = INTS[fcode]
    rng = np.random.default_rng(700 + fcode + sat)
    n = TILE * 8 // bits
    a, b, c = (_int_vals(rng, bits, n) for _ in range(3))
    t = [x.astype(f"<i{bits // 8}").tobytes() for x in (a, b, c)]
    for code, op in talu.TERNARY.items():
        r = talu.ternary(code, *t, bytes(TILE), fmt=fcode, trm=trm(sat=sat))
        got = np.frombuffer(r.data, f"<i{bits // 8}").tolist()
        saw = False
        for i in range(n):
            x, y, z = int(a[i]), int(b[i]), int(c[i])
            if op in INT_TERNARY:
                exact = INT_TERNARY[op](x, y, z)
            else:
                exact = INT_BINARY[op](x, y, bits)
            want = _sat(exact, bits) if sat and op in SATURATING else _wrap(exact, bits)
            saw |= (sat and op in SATURATING and want != exact)
            if op == "quantize":
                saw |= x * y + z != exact
            assert got[i] == want, (op, bits, x, y, z, got[i], want)
        assert r.saturated == saw


@pytest.mark.parametrize("fcode", sorted(INTS))
def test_int_unary_ops(fcode):
    bits = INTS[fcode]
    rng = np.random.default_rng(800 + fcode)
    n = TILE * 8 // bits
    a = _int_vals(rng, bits, n)
    ta = a.astype(f"<i{bits // 8}").tobytes()
    expect = {
        "copy": lambda v: v, "neg": lambda v: -v, "abs": abs, "relu": lambda v: max(v, 0),
        "not": lambda v: ~v, "zero": lambda v: 0, "sign": lambda v: (v > 0) - (v < 0), "floor": lambda v: v,
    }
    for sat in (False, True):
        for code, op in talu.UNARY.items():
            if op not in expect:
                continue
            r = talu.unary(code, ta, bytes(TILE), fmt=fcode, trm=trm(sat=sat))
            got = np.frombuffer(r.data, f"<i{bits // 8}").tolist()
            wants = [(_sat if sat and op in SATURATING else _wrap)(expect[op](int(v)), bits) for v in a]
            assert got == wants, (op, bits, sat)
            assert r.saturated == (sat and op in ("neg", "abs"))   # the MIN element saturates


@pytest.mark.parametrize("fcode", sorted(INTS))
def test_int_sfu_goes_through_fp32_and_fcvt(fcode):
    bits = INTS[fcode]
    vals = np.array([0, 1, 4, 9, -4, 2, 100, -(1 << (bits - 1))], np.int64)
    data = vals.astype(f"<i{bits // 8}").tobytes()
    data += bytes(TILE - len(data))
    width = bits // 8

    def run(code: int, frm: int = 0) -> tuple[list[int], int]:
        r = talu.unary(code, data, bytes(TILE), fmt=fcode, trm=trm(frm), active_granules=1)
        return np.frombuffer(r.data, f"<i{width}")[:8].tolist(), r.fflags

    sq, f = run(0x0D)
    assert sq[:4] == [0, 1, 2, 3] and f & FLAG_NV                      # sqrt(-4) -> NaN -> MAX, NV
    assert sq[4] == (1 << (bits - 1)) - 1 and sq[5] == 1               # sqrt(2) = 1.41 -> 1 (RNE), NX
    up, _ = run(0x0D, frm=3)
    assert up[5] == 2                                                   # RUP
    lg, f = run(0x0B)
    assert lg[0] == -(1 << (bits - 1)) and lg[2] == 2 and f & FLAG_DZ   # log2(0) = -inf -> MIN
    ex, f = run(0x08)
    assert ex[6] == (1 << (bits - 1)) - 1 and f & FLAG_NV               # exp(100) out of range -> MAX


@pytest.mark.parametrize("fcode", sorted(INTS))
def test_int_row_reductions(fcode):
    bits = INTS[fcode]
    rng = np.random.default_rng(900 + fcode)
    n = TILE * 8 // bits
    a = _int_vals(rng, bits, n)
    ta = a.astype(f"<i{bits // 8}").tobytes()
    old = rng.integers(0, 256, TILE, dtype=np.uint8).tobytes()
    per = 64 * 8 // bits
    for sat in (False, True):
        for code, fn in ((0x28, sum), (0x29, max), (0x2A, min)):
            r = talu.unary(code, ta, old, fmt=fcode, trm=trm(sat=sat))
            got = np.frombuffer(r.data, f"<i{bits // 8}").reshape(16, per)
            oldm = np.frombuffer(old, f"<i{bits // 8}").reshape(16, per)
            for row in range(16):
                exact = fn(int(v) for v in a[row * per:(row + 1) * per])
                want = _sat(exact, bits) if sat and code == 0x28 else _wrap(exact, bits)
                assert got[row, 0] == want
            assert (got[:, 1:] == oldm[:, 1:]).all()


# -- float row reductions, edge cases ---------------------------------------------------------

@pytest.mark.parametrize("fcode", sorted(FLOATS))
def test_float_row_reductions(fcode):
    rng = np.random.default_rng(1000 + fcode)
    name = FLOATS[fcode]
    width = nbytes(fcode)
    n = TILE // width
    per = 64 // width
    a = float_operand(rng, name, n)
    old = rng.integers(0, 256, TILE, dtype=np.uint8).tobytes()
    for frm, mode in enumerate(MODES):
        r = talu.unary(0x28, tile(a, width), old, fmt=fcode, trm=trm(frm))
        got = codes_of(r.data, width)
        for row in range(16):
            terms = [V.of(int(c), name) for c in a[row * per:(row + 1) * per]]
            total = sum((t.q for t in terms), Fraction(0))
            neg = total < 0 if total != 0 else _sum_zero_sign(terms, mode == "rdn")
            assert got[row * per] == encode(V(total, neg), name, mode, False)[0]
            assert got[row * per + 1:(row + 1) * per] == codes_of(old, width)[row * per + 1:(row + 1) * per]
    for code, want_max in ((0x29, True), (0x2A, False)):
        got = codes_of(talu.unary(code, tile(a, width), old, fmt=fcode, trm=0).data, width)
        for row in range(16):
            vals = [V.of(int(c), name) for c in a[row * per:(row + 1) * per]]
            best = vals[0]
            for v in vals[1:]:
                best = _max(best, v, want_max)
            assert got[row * per] == encode(best, name, "rne", False)[0]


def _f32(*vals: float) -> bytes:
    data = np.array(vals, np.float32).tobytes()
    return data + bytes(TILE - len(data))


def _u32(data: bytes, n: int) -> list[int]:
    return np.frombuffer(data, np.uint32)[:n].tolist()


def test_float_nan_inf_rules():
    inf, nan = float("inf"), float("nan")
    a = _f32(inf, inf, 0.0, 1.0, nan, 1.0, 0.0, -0.0)
    b = _f32(-inf, 0.0, 0.0, 0.0, 1.0, nan, -0.0, -0.0)

    def run(code: int) -> talu.Result:
        return talu.binary(code, a, b, bytes(TILE), fmt=0, trm=0, active_granules=1)

    add = run(0x00)
    assert _u32(add.data, 8) == [0x7FC00000, 0x7F800000, 0, 0x3F800000, 0x7FC00000, 0x7FC00000, 0, 0x80000000]
    assert add.fflags == FLAG_NV                                          # Inf + -Inf only
    mul = run(0x02)
    assert _u32(mul.data, 2) == [0xFF800000, 0x7FC00000] and mul.fflags == FLAG_NV
    div = run(0x03)
    assert _u32(div.data, 4) == [0x7FC00000, 0x7F800000, 0x7FC00000, 0x7F800000]
    assert div.fflags == FLAG_NV | FLAG_DZ
    mx = run(0x04)
    assert _u32(mx.data, 8)[4:] == [0x3F800000, 0x3F800000, 0, 0x80000000] and mx.fflags == 0
    mn = run(0x05)
    assert _u32(mn.data, 8)[6:] == [0x80000000, 0x80000000]
    assert run(0x0C).fflags == 0 and run(0x0D).fflags == FLAG_NV        # quiet NaN: eq quiet, lt signals
    both_nan = talu.binary(0x04, _f32(nan), _f32(nan), bytes(TILE), fmt=0, trm=0)
    assert _u32(both_nan.data, 1) == [0x7FC00000]


def test_signalling_nan_sets_nv_and_bit_ops_do_not_canonicalise():
    s = struct.pack("<I", 0x7F800001) + bytes(TILE - 4)              # fp32 signalling NaN
    one = _f32(1.0)
    r = talu.binary(0x00, s, one, bytes(TILE), fmt=0, trm=0)
    assert _u32(r.data, 1) == [0x7FC00000] and r.fflags == FLAG_NV
    assert talu.binary(0x0C, s, one, bytes(TILE), fmt=0, trm=0).fflags == FLAG_NV
    cp = talu.unary(0x01, s, bytes(TILE), fmt=0, trm=0)
    assert _u32(cp.data, 1) == [0xFF800001] and cp.fflags == 0
    h = np.zeros(512, np.uint16)
    h[0] = 0x7C01                                                           # fp16 sNaN
    r = talu.unary(0x03, h.tobytes(), bytes(TILE), fmt=1, trm=0)
    assert np.frombuffer(r.data, np.uint16)[0] == 0x7E00 and r.fflags == FLAG_NV


def test_fma_invalid_even_with_quiet_nan_addend():
    r = talu.ternary(0x8, _f32(0.0), _f32(float("inf")), _f32(float("nan")), bytes(TILE), fmt=0, trm=0)
    assert _u32(r.data, 1) == [0x7FC00000] and r.fflags == FLAG_NV


def test_e4m3_overflow_nan_or_saturate():
    a = np.full(TILE, 0x7E, np.uint8)                                     # 448 = max
    r = talu.binary(0x00, a.tobytes(), a.tobytes(), bytes(TILE), fmt=3, trm=0)
    assert set(r.data) == {0x7F} and r.fflags & 0x04 and not r.saturated  # NaN (no Inf in e4m3)
    r = talu.binary(0x00, a.tobytes(), a.tobytes(), bytes(TILE), fmt=3, trm=trm(sat=True))
    assert set(r.data) == {0x7E} and r.saturated
    r = talu.binary(0x00, a.tobytes(), a.tobytes(), bytes(TILE), fmt=3, trm=trm(1))
    assert set(r.data) == {0x7E} and not r.saturated                     # RTZ never overflows to NaN


def test_underflow_is_tininess_after_rounding():
    # fp16: min normal 2^-14.  2^-14 - 2^-26 has 12 significant bits; RNE rounds it up to 2^-14
    # even with an unbounded exponent, so it is not tiny after rounding; RTZ leaves it tiny.
    x = np.array([2.0**-14 - 2.0**-26], np.float32)
    r = talu.unary(0x20 + 1, x.tobytes() + bytes(TILE - 4), bytes(TILE), fmt=0, trm=0, active_granules=1)
    assert np.frombuffer(r.data, np.uint16)[0] == 0x0400 and r.fflags == FLAG_NX
    r = talu.unary(0x20 + 1, x.tobytes() + bytes(TILE - 4), bytes(TILE), fmt=0, trm=trm(1),
                   active_granules=1)
    assert np.frombuffer(r.data, np.uint16)[0] == 0x03FF and r.fflags == FLAG_NX | 0x02


def test_quantize_float_formats():
    a = _f32(1.25, 2.5, 100.0, -100.0, 3.5, float("nan"), -2.5, 7.0)
    b = _f32(2.0, 1.0, 2.0, 2.0, 1.0, 1.0, 1.0, 1.0)
    c = _f32(1.0, 0.0, 0.0, 0.0, -0.5, 0.0, 0.0, 1.4)
    for irm, want in ((0, [4, 3, 127, -128, 4, 127, -2, 8]),            # RNU: 2.5->3, -0.5->0, -2.5->-2
                      (1, [3, 2, 127, -128, 4, 127, -2, 8]),            # RNE: 2.5->2, 3.5->4, -0.5->-0
                      (2, [3, 2, 127, -128, 2, 127, -3, 8]),            # RDN: floor
                      (3, [4, 3, 127, -128, 2, 127, -3, 8])):           # ROD: 2.5->3, -0.5->-1, 1.4->1
        r = talu.ternary(0xD, a, b, c, bytes(TILE), fmt=0, trm=trm(irm=irm), active_granules=1)
        got = np.frombuffer(r.data, np.float32)[:8].tolist()
        assert got == want, (irm, got)
        assert r.saturated and r.fflags == FLAG_NV
    old = bytes(range(256)) * 4
    r = talu.ternary(0xD, a, b, c, old, fmt=0, trm=trm(irm=1), quant_layout="packed", active_granules=1)
    assert list(np.frombuffer(r.data[:8], np.int8)) == [3, 2, 127, -128, 4, 127, -2, 8]
    assert r.data[256:] == old[256:]                                    # 256 fp32 elements -> 256 bytes


def test_quantize_into_fp8_rounds_the_int8_value():
    a = np.full(TILE, 0x38, np.uint8)                                    # e4m3 1.0
    b = np.full(TILE, 0x38, np.uint8)
    c = np.full(TILE, ref_round(Fraction(120), "fp8e4m3"), np.uint8)     # 120 + 1 = 121 -> 120 (RNE)
    r = talu.ternary(0xD, a.tobytes(), b.tobytes(), c.tobytes(), bytes(TILE), fmt=3, trm=0)
    assert set(r.data) == {ref_round(Fraction(120), "fp8e4m3")} and r.fflags == FLAG_NX


def test_dequantize_packed_and_element_layouts():
    q = np.array([-128, -1, 0, 5, 127], np.int8).tobytes() + bytes(TILE - 5)
    scale = _f32(*([0.5] * 256))
    zp = _f32(*([1.0] * 256))
    r = talu.ternary(0xE, q, scale, zp, bytes(TILE), fmt=0, trm=0, quant_layout="packed")
    assert np.frombuffer(r.data, np.float32)[:6].tolist() == [-64.5, -1.0, -0.5, 2.0, 63.0, -0.5]
    elem = _f32(-128, -1, 0, 5, 127)
    r2 = talu.ternary(0xE, elem, scale, zp, bytes(TILE), fmt=0, trm=0)
    assert r2.data[:20] == r.data[:20]


def test_transposes():
    rng = np.random.default_rng(5)
    src = rng.integers(0, 256, TILE, dtype=np.uint8)
    for code, es in ((0x18, 1), (0x19, 2), (0x1A, 4)):
        m = np.frombuffer(src.tobytes(), f"<u{es}").reshape(16, 64 // es)
        for fcode in (0, 7):
            r = talu.unary(code, src.tobytes(), bytes(TILE), fmt=fcode, trm=0)
            assert r.data == m.T.tobytes() and r.fflags == 0
    # neg1 negates in tfmt before the layout change: int8 -128 saturates with trm.sat
    one = np.zeros(TILE, np.int8)
    one[1] = -128
    one[2] = 7
    r = talu.unary(0x18, one.tobytes(), bytes(TILE), fmt=7, trm=trm(sat=True), neg=True)
    out = np.frombuffer(r.data, np.int8).reshape(64, 16)
    assert out[1, 0] == 127 and out[2, 0] == -7 and r.saturated


def test_row_reduction_rows_follow_row_bytes():
    x = np.arange(256, dtype=np.int32)
    r = talu.unary(0x28, x.tobytes(), bytes(TILE), fmt=5, trm=0, row_bytes=128)
    got = np.frombuffer(r.data, np.int32).reshape(8, 32)
    assert got[:, 0].tolist() == [sum(range(32 * i, 32 * i + 32)) for i in range(8)]


def test_active_granules_limit_flags():
    a = _f32(1.0, 3.0)                                       # 1/3 inexact in granule 0 only
    b = _f32(3.0, *([1.0] * 255))
    r = talu.binary(0x03, a, b, bytes(TILE), fmt=0, trm=0, active_granules=0b10)
    assert r.fflags == 0
    r = talu.binary(0x03, a, b, bytes(TILE), fmt=0, trm=0, active_granules=0b01)
    assert r.fflags == FLAG_NX
    assert talu.binary(0x03, a, b, bytes(TILE), fmt=0, trm=0).fflags == FLAG_NX


def test_errors():
    t = bytes(TILE)
    with pytest.raises(ValueError, match="unknown TALU unary op 0x16"):
        talu.unary(0x16, t, t, fmt=0, trm=0)
    with pytest.raises(ValueError, match="unknown TALU binary op 0x0f"):
        talu.binary(0x0F, t, t, t, fmt=0, trm=0)
    with pytest.raises(ValueError, match="unknown data format 8"):
        talu.unary(0x00, t, t, fmt=8, trm=0)
    with pytest.raises(ValueError, match="reserved FP rounding mode 5"):
        talu.binary(0x00, t, t, t, fmt=0, trm=5)
    with pytest.raises(ValueError, match="expected a 1024-byte tile"):
        talu.binary(0x00, t, t[:512], t, fmt=0, trm=0)
    with pytest.raises(ValueError, match="quant_layout"):
        talu.ternary(0xD, t, t, t, t, fmt=0, trm=0, quant_layout="dense")
    # a reserved frm does not matter to ops that never round
    assert talu.binary(0x06, t, t, t, fmt=0, trm=7).data == t
    assert talu.binary(0x00, t, t, t, fmt=5, trm=7).data == t


def test_tables_match_tile_md():
    assert len(talu.UNARY) == 22 + 3 + 8 + 3 and talu.UNARY[0x11] == "gelu" and talu.UNARY[0x2A] == "row-min"
    assert list(talu.BINARY) == list(range(0x0F)) and talu.BINARY[0x0B] == "sra"
    assert list(talu.TERNARY) == list(range(0x10)) and talu.TERNARY[0xD] == "quantize"


def test_ternary_low_codes_are_the_binary_ops():
    rng = np.random.default_rng(77)
    a = rng.standard_normal(256).astype(np.float32).tobytes()
    b = rng.standard_normal(256).astype(np.float32).tobytes()
    junk = rng.integers(0, 256, TILE, dtype=np.uint8).tobytes()
    pairs = {0x0: 0x00, 0x1: 0x01, 0x2: 0x02, 0x3: 0x04, 0x4: 0x05, 0x5: 0x06, 0x6: 0x07, 0x7: 0x08}
    for t_code, b_code in pairs.items():
        assert talu.ternary(t_code, a, b, junk, bytes(TILE), fmt=0, trm=0) == \
            talu.binary(b_code, a, b, bytes(TILE), fmt=0, trm=0)


def test_rounding_modes_on_float_int_exact_pairs():
    """1 + 2^-24 (a tie in fp32) under each mode, and its negation."""
    a = _f32(1.0, -1.0)
    b = _f32(2.0**-24, -(2.0**-24))
    wants = {0: (0x3F800000, 0xBF800000), 1: (0x3F800000, 0xBF800000), 2: (0x3F800000, 0xBF800001),
             3: (0x3F800001, 0xBF800000), 4: (0x3F800001, 0xBF800001)}
    for frm, want in wants.items():
        r = talu.binary(0x00, a, b, bytes(TILE), fmt=0, trm=trm(frm), active_granules=1)
        assert tuple(_u32(r.data, 2)) == want and r.fflags == FLAG_NX
    zero = talu.binary(0x01, _f32(1.0), _f32(1.0), bytes(TILE), fmt=0, trm=trm(2))
    assert _u32(zero.data, 1) == [0x80000000]                            # x - x = -0 under RDN


def test_int_quantize_rounding_field_unused_for_ints():
    a = np.array([3, -7, 100], np.int32).tobytes() + bytes(TILE - 12)
    b = np.array([5, 20, 2], np.int32).tobytes() + bytes(TILE - 12)
    c = np.array([1, 0, -100], np.int32).tobytes() + bytes(TILE - 12)
    for irm in range(4):
        r = talu.ternary(0xD, a, b, c, bytes(TILE), fmt=5, trm=trm(irm=irm))
        assert np.frombuffer(r.data, np.int32)[:3].tolist() == [16, -128, 100] and r.saturated


def test_ref_round_int_helper_modes():
    # keep the reference's fixed-point modes honest too
    assert ref_round_int(Fraction(5, 2), "rnu") == (3, True)
    assert ref_round_int(Fraction(-5, 2), "rnu") == (-2, True)
    assert ref_round_int(Fraction(-1, 2), "rod") == (-1, True)
    assert ref_round_int(Fraction(4), "rod") == (4, False)
    assert FLAG_NX == 1


def test_int_division_corner_cases():
    a = np.array([-128, 7, -7, 5, 0], np.int8).tobytes() + bytes(TILE - 5)
    b = np.array([-1, 0, 2, -2, 0], np.int8).tobytes() + bytes(TILE - 5)
    r = talu.binary(0x03, a, b, bytes(TILE), fmt=7, trm=0, active_granules=1)
    assert np.frombuffer(r.data, np.int8)[:5].tolist() == [-128, -1, -3, -2, -1] and not r.saturated
    r = talu.binary(0x03, a, b, bytes(TILE), fmt=7, trm=trm(sat=True), active_granules=1)
    assert np.frombuffer(r.data, np.int8)[:5].tolist() == [127, -1, -3, -2, -1] and r.saturated
    assert r.fflags == 0


def test_select_treats_nan_as_true_and_keeps_bits():
    a = struct.pack("<I", 0x7F800001) + bytes(TILE - 4)          # a signalling NaN, passed through
    b = _f32(5.0)
    c = _f32(float("nan"))
    r = talu.ternary(0xB, a, b, c, bytes(TILE), fmt=0, trm=0)
    assert _u32(r.data, 2) == [0x7F800001, 0] and r.fflags == 0
    r = talu.ternary(0xB, a, b, _f32(-0.0), bytes(TILE), fmt=0, trm=0)
    assert _u32(r.data, 1) == [0x40A00000]                       # -0 counts as zero


def test_larger_tiles_and_wide_granule_masks():
    big = 4096                                                   # 64 rows, 128 granules
    a = np.ones(big // 4, np.float32)
    b = np.ones(big // 4, np.float32)
    b[-1] = 3.0                                                  # 1/3: inexact in granule 127 only
    r = talu.binary(0x03, a.tobytes(), b.tobytes(), bytes(big), fmt=0, trm=0, active_granules=1 << 127)
    assert len(r.data) == big and r.fflags == FLAG_NX
    r = talu.binary(0x03, a.tobytes(), b.tobytes(), bytes(big), fmt=0, trm=0, active_granules=(1 << 127) - 1)
    assert r.fflags == 0
    t = talu.unary(0x1A, a.tobytes(), bytes(big), fmt=0, trm=0)
    assert t.data == np.frombuffer(a.tobytes(), np.uint32).reshape(64, 16).T.tobytes()


@pytest.mark.parametrize("fcode,dtype", [(0, np.float32), (1, np.float16)])
def test_any_bit_patterns_match_ieee_hardware_arithmetic(fcode, dtype):
    """numpy's fp32/fp16 +,-,*,/ and sqrt are correctly rounded (RNE): with every kind of operand
    (NaN, Inf, subnormal, zero) the results must agree, NaNs compared as NaNs."""
    width = np.dtype(dtype).itemsize
    rng = np.random.default_rng(1234 + fcode)
    ints = f"<u{width}"
    a = rng.integers(0, 1 << (8 * width), TILE // width, dtype=np.uint64).astype(ints)
    b = rng.integers(0, 1 << (8 * width), TILE // width, dtype=np.uint64).astype(ints)
    b[:16] = a[:16]                                                    # x - x, x / x
    fa, fb = a.view(dtype), b.view(dtype)
    with np.errstate(all="ignore"):
        hw = {0x00: fa + fb, 0x01: fa - fb, 0x02: fa * fb, 0x03: fa / fb}
        root = np.sqrt(fa)
    for code, want in hw.items():
        got = np.frombuffer(talu.binary(code, a.tobytes(), b.tobytes(), bytes(TILE), fmt=fcode, trm=0).data,
                            dtype)
        assert ((got.view(ints) == want.view(ints)) | (np.isnan(got) & np.isnan(want))).all(), code
    got = np.frombuffer(talu.unary(0x0D, a.tobytes(), bytes(TILE), fmt=fcode, trm=0).data, dtype)
    assert ((got.view(ints) == root.view(ints)) | (np.isnan(got) & np.isnan(root))).all()
