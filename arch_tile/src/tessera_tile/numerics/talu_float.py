"""TALU element operations for the float formats (fp32, fp16, bf16, fp8e4m3, fp8e5m2).

Every arithmetic result is formed exactly (products in float64, sums through
:mod:`.exactsum`, quotients in integers) and rounded once to the format with trm[2:0]; the
saturate bit trm[5] turns overflow into the largest finite value.  IEEE 754 / RISC-V F rules:

* NaN results are the canonical NaN; any signalling-NaN operand of an arithmetic, min/max,
  compare or conversion op sets NV; Inf-Inf, 0*Inf, 0/0, Inf/Inf set NV; x/0 sets DZ;
  cmplt/cmple with any NaN set NV (cmpeq only for signalling NaNs).
* max/min are IEEE 754-2019 maximumNumber/minimumNumber (RISC-V fmax/fmin): a NaN operand is
  ignored unless both are NaN, and -0 < +0.
* neg, abs, copy, not, and/or/xor and select work on the bit patterns (like RISC-V fsgnj): no
  canonicalisation, no flags.  Shifts are not defined on float formats (ValueError).
* Comparison results are 1.0 / 0.0 in the format.
* relu: x > 0 ? x : +0 (NaN -> canonical NaN); sign: +-1.0, zeros keep their sign; floor:
  exact, never NX (like IEEE roundToIntegral).
* Exact zeros follow IEEE: x + (-x) is +0 (-0 under RDN); lerp's exact zero is +0 (-0 under RDN)
  unless its three terms a, b*c, -(a*c) are all zero, in which case it is -0 only if all are -0
  (or, under RDN, any is).
* e4m3 (no Inf): an overflowing or infinite result is NaN, flagged as what produced it (OF+NX,
  DZ); with trm[5] it is +-448.
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

from . import formats as F
from . import sfu
from .exactsum import exact_sum_ro, ro_two_sum
from .formats import DZ, NV, Format
from .rounding import RDN, RNE, Trm, int_mode_name, round_float, round_to_integer

U64 = npt.NDArray[np.uint64]
U8 = npt.NDArray[np.uint8]
F64 = npt.NDArray[np.float64]
B = npt.NDArray[np.bool_]
Out = tuple[U64, U8, B]


def _flags(mask: npt.ArrayLike, flag: int) -> U8:
    return np.where(mask, flag, 0).astype(np.uint8)


def _none(shape: tuple[int, ...]) -> tuple[U8, B]:
    return np.zeros(shape, np.uint8), np.zeros(shape, bool)


class Operand:
    """One decoded float operand: raw bits, exact values, NaN masks."""

    def __init__(self, bits: U64, fmt: Format) -> None:
        self.bits = bits
        self.x = F.to_float64(bits, fmt)
        self.nan = np.isnan(self.x)
        self.snan = F.is_snan_code(bits, fmt)


def _round(x: F64, fmt: Format, trm: Trm, extra: U8 | None = None) -> Out:
    """Round exact/round-to-odd values with the trm mode; ORs ``extra`` flags in."""
    bits, flags, sat = round_float(x, fmt, trm.frm, saturate=trm.sat)
    return bits, flags if extra is None else flags | extra, sat


def _exact(x: F64, fmt: Format, extra: U8 | None = None) -> Out:
    """Encode values known to be representable (no rounding mode involved, so none is checked)."""
    bits, flags, sat = round_float(x, fmt, RNE)
    return bits, flags if extra is None else flags | extra, sat


def _zero_sign(res: F64, a: F64, b: F64, trm: Trm) -> F64:
    """IEEE sign of an exact-zero sum a + b: -0 if both are -0, or under RDN unless both are +0."""
    neg = (np.signbit(a) & np.signbit(b) & (a == 0) & (b == 0))
    if trm.frm == RDN:
        neg = ~((a == 0) & (b == 0) & ~np.signbit(a) & ~np.signbit(b))
    return np.where(res == 0, np.where(neg, -0.0, 0.0), res)


def exact_add(a: F64, b: F64, trm: Trm) -> tuple[F64, U8]:
    """Round-to-odd a + b with IEEE specials; returns (value, NV flags for Inf-Inf)."""
    fin = np.isfinite(a) & np.isfinite(b)
    with np.errstate(invalid="ignore"):
        naive = a + b
    r = np.where(fin, ro_two_sum(np.where(fin, a, 0.0), np.where(fin, b, 0.0)), naive)
    r = np.where(fin, _zero_sign(r, a, b, trm), r)
    return r, _flags(np.isinf(a) & np.isinf(b) & (np.signbit(a) != np.signbit(b)), NV)


def _mul(a: F64, b: F64) -> tuple[F64, U8]:
    """Exact product (every format's product fits float64) and NV for 0*Inf."""
    with np.errstate(invalid="ignore"):
        p = a * b
    return p, _flags((np.isinf(a) & (b == 0)) | ((a == 0) & np.isinf(b)), NV)


def _div(a: F64, b: F64) -> tuple[F64, U8]:
    """Round-to-odd quotient from integer significands: (sa << 38) // sb keeps >= 38 bits."""
    fin = np.isfinite(a) & np.isfinite(b) & (a != 0) & (b != 0)
    ma, ea = np.frexp(np.where(fin, a, 1.0))
    mb, eb = np.frexp(np.where(fin, b, 1.0))
    sa = (np.abs(ma) * 2.0 ** 24).astype(np.int64)   # exact: <= 24 significant bits
    sb = (np.abs(mb) * 2.0 ** 24).astype(np.int64)
    q, r = np.divmod(sa << 38, sb)
    q = q | (r != 0)
    mag = np.ldexp(q.astype(np.float64), (ea - eb - 38).astype(np.int32))
    with np.errstate(all="ignore"):
        naive = a / b
    out = np.where(fin, np.where(np.signbit(a) != np.signbit(b), -mag, mag), naive)
    flags = _flags(((a == 0) & (b == 0)) | (np.isinf(a) & np.isinf(b)), NV)
    flags |= _flags((b == 0) & np.isfinite(a) & (a != 0), DZ)
    return out, flags


def _maxmin(a: Operand, b: Operand, want_max: bool) -> tuple[F64, U8]:
    x, y = a.x, b.x
    if want_max:
        pick_x = (x > y) | ((x == y) & ~np.signbit(x))
    else:
        pick_x = (x < y) | ((x == y) & np.signbit(x))
    r = np.where(pick_x, x, y)
    r = np.where(a.nan, y, np.where(b.nan, x, r))
    return r, _flags(a.snan | b.snan, NV)


def _snan_flags(*ops: Operand) -> U8:
    m = np.zeros(ops[0].bits.shape, bool)
    for o in ops:
        m |= o.snan
    return _flags(m, NV)


def negate(bits: U64, fmt: Format) -> U64:
    return bits ^ np.uint64(fmt.sign_code)


def unary(name: str, bits: U64, fmt: Format, trm: Trm, *, f2i_rounding: str = "frm") -> Out:
    """Element-wise unary op ``name`` (a UNARY table name that is not a layout op)."""
    del f2i_rounding  # float formats never round to integers here
    shape = bits.shape
    mask = np.uint64((1 << fmt.bits) - 1)
    if name == "copy":
        return (bits, *_none(shape))
    if name == "neg":
        return (negate(bits, fmt), *_none(shape))
    if name == "abs":
        return (bits & ~np.uint64(fmt.sign_code) & mask, *_none(shape))
    if name == "not":
        return (~bits & mask, *_none(shape))
    if name == "zero":
        return (np.zeros(shape, np.uint64), *_none(shape))
    a = Operand(bits, fmt)
    nv = _snan_flags(a)
    x = a.x
    if name == "relu":
        return _exact(np.where(x > 0, x, np.where(a.nan, x, 0.0)), fmt, nv)
    if name == "sign":
        return _exact(np.where(x > 0, 1.0, np.where(x < 0, -1.0, x)), fmt, nv)
    if name == "floor":
        return _exact(np.floor(x), fmt, nv)
    if name in sfu.FUNCTIONS:
        return sfu_op(name, x, fmt, trm, nv)
    raise ValueError(f"unary op {name!r} is not an element operation")


def sfu_op(name: str, x: F64, fmt: Format, trm: Trm, extra: U8) -> Out:
    """fp32 input, function in float64, RNE to fp32, then ``trm`` rounding to ``fmt``."""
    x32, f_in, _ = round_float(x, F.FP32, RNE)
    y, f_fn = sfu.evaluate(name, F.to_float64(x32, F.FP32))
    y32, f_out, _ = round_float(y, F.FP32, RNE)
    bits, flags, sat = _round(F.to_float64(y32, F.FP32), fmt, trm)
    return bits, flags | f_in | f_fn | f_out | extra, sat


def binary(name: str, a_bits: U64, b_bits: U64, fmt: Format, trm: Trm) -> Out:
    shape = a_bits.shape
    if name in ("and", "or", "xor"):
        op = {"and": np.bitwise_and, "or": np.bitwise_or, "xor": np.bitwise_xor}[name]
        return (op(a_bits, b_bits), *_none(shape))
    if name in ("sll", "srl", "sra"):
        raise ValueError(f"{name} is not defined on float format {fmt.name}")
    a = Operand(a_bits, fmt)
    b = Operand(b_bits, fmt)
    nv = _snan_flags(a, b)
    if name in ("add", "sub"):
        r, f = exact_add(a.x, b.x if name == "add" else -b.x, trm)
        return _round(r, fmt, trm, nv | f)
    if name == "mul":
        p, f = _mul(a.x, b.x)
        return _round(p, fmt, trm, nv | f)
    if name == "div":
        q, f = _div(a.x, b.x)
        return _round(q, fmt, trm, nv | f)
    if name in ("max", "min"):
        r, f = _maxmin(a, b, name == "max")
        return _exact(r, fmt, f)
    if name in ("cmpeq", "cmplt", "cmple"):
        with np.errstate(invalid="ignore"):
            res = {"cmpeq": np.equal, "cmplt": np.less, "cmple": np.less_equal}[name](a.x, b.x)
        f = nv if name == "cmpeq" else _flags(a.nan | b.nan, NV)
        out = np.where(res, np.uint64(F.one_code(fmt)), np.uint64(0))
        return out, f, np.zeros(shape, bool)
    raise ValueError(f"binary op {name!r} is not an element operation")


def ternary(name: str, a_bits: U64, b_bits: U64, c_bits: U64, fmt: Format, trm: Trm, *,
            f2i_rounding: str = "frm") -> Out:
    """fma/fms/nfma/select/clamp/dequantize/lerp (quantize lives in :func:`quantize`)."""
    del f2i_rounding
    shape = a_bits.shape
    if name == "select":
        cond = F.to_float64(c_bits, fmt) != 0
        return (np.where(cond, a_bits, b_bits), *_none(shape))
    a, b, c = Operand(a_bits, fmt), Operand(b_bits, fmt), Operand(c_bits, fmt)
    nv = _snan_flags(a, b, c)
    if name in ("fma", "fms", "nfma"):
        p, f = _mul(a.x, b.x)
        p = -p if name == "nfma" else p
        r, g = exact_add(p, -c.x if name == "fms" else c.x, trm)
        return _round(r, fmt, trm, nv | f | g)
    if name == "clamp":
        lo, f = _maxmin(a, b, True)
        lo_bits, _, _ = _exact(lo, fmt)
        r, g = _maxmin(Operand(lo_bits, fmt), c, False)
        return _exact(r, fmt, nv | f | g)
    if name == "dequantize":
        return dequantize(a.x, b.x, c.x, fmt, trm, nv)
    if name == "lerp":
        return _lerp(a.x, b.x, c.x, fmt, trm, nv)
    raise ValueError(f"ternary op {name!r} is not an element operation")


def _naive_nv(r: F64, *xs: F64) -> U8:
    """NV for a NaN produced from non-NaN operands (Inf-Inf, 0*Inf in a naive evaluation)."""
    produced = np.isnan(r)
    for x in xs:
        produced &= ~np.isnan(x)
    return _flags(produced, NV)


def dequantize(a: F64, b: F64, c: F64, fmt: Format, trm: Trm, nv: U8) -> Out:
    """``(a - c) * b`` rounded once: exactly ``a*b - c*b`` (both products exact in float64)."""
    fin = np.isfinite(a) & np.isfinite(b) & np.isfinite(c)
    with np.errstate(all="ignore"):
        naive = (a - c) * b
        ab, cb = np.where(fin, a * b, 0.0), np.where(fin, -(c * b), 0.0)
    ro = ro_two_sum(ab, cb)
    diff_neg = np.where(a == c, np.signbit(_zero_sign(np.zeros(a.shape), a, -c, trm)), a < c)
    zero = np.where(diff_neg != np.signbit(b), -0.0, 0.0)
    r = np.where(fin, np.where(ro == 0, zero, ro), naive)
    return _round(r, fmt, trm, nv | _naive_nv(naive, a, b, c))


def _lerp(a: F64, b: F64, c: F64, fmt: Format, trm: Trm, nv: U8) -> Out:
    """``a + (b - a) * c`` rounded once: the exact sum of a, b*c and -(a*c)."""
    fin = np.isfinite(a) & np.isfinite(b) & np.isfinite(c)
    with np.errstate(all="ignore"):
        naive = a + (b - a) * c
        terms = np.stack([a, b * c, -(a * c)], axis=1)
    terms[~fin] = 0.0
    ro = exact_sum_ro(terms, rdn=trm.frm == RDN)
    r = np.where(fin, ro, naive)
    return _round(r, fmt, trm, nv | _naive_nv(naive, a, b, c))


def quantize(a_bits: U64, b_bits: U64, c_bits: U64, fmt: Format, trm: Trm
             ) -> tuple[npt.NDArray[np.int64], U8, B]:
    """``sat_int8(round(a*b) + round(c))`` as int8 values, rounding with the integer mode trm[4:3].

    NaN (in a*b or c) gives +127 with NV (RISC-V fcvt convention); +-Inf and out-of-range values
    saturate (counted as saturation, no flag).
    """
    a, b, c = Operand(a_bits, fmt), Operand(b_bits, fmt), Operand(c_bits, fmt)
    p, f = _mul(a.x, b.x)
    mode = int_mode_name(trm.irm)
    rp, _ = round_to_integer(p, mode)
    rc, _ = round_to_integer(c.x, mode)
    with np.errstate(invalid="ignore"):
        total = rp + rc
    nan = np.isnan(total)
    sat = ~nan & ((total < -128) | (total > 127))
    v = np.where(nan, 127, np.clip(np.where(nan, 0.0, total), -128, 127)).astype(np.int64)
    return v, _snan_flags(a, b, c) | f | _flags(nan, NV), sat


def reduce_rows(name: str, bits: U64, fmt: Format, trm: Trm) -> Out:
    """Row reductions over a (rows, cols) array of bits: row-sum (one rounding), row-max/min."""
    x = F.to_float64(bits, fmt)
    snan = F.is_snan_code(bits, fmt).any(axis=1)
    nv = _flags(snan, NV)
    if name == "row-sum":
        fin = np.isfinite(x).all(axis=1)
        with np.errstate(invalid="ignore"):
            naive = x.sum(axis=1)
        nv |= _naive_nv(naive, *(x[:, j] for j in range(x.shape[1])))
        r = np.empty(x.shape[0])
        r[~fin] = naive[~fin]
        if fin.any():
            r[fin] = exact_sum_ro(x[fin], rdn=trm.frm == RDN)
        return _round(r, fmt, trm, nv)
    nan = np.isnan(x)
    want_max = name == "row-max"
    filled = np.where(nan, -np.inf if want_max else np.inf, x)
    best = filled.max(axis=1) if want_max else filled.min(axis=1)
    # signed zeros: +0 beats -0 for max, -0 beats +0 for min
    zero = best == 0
    if want_max:
        has = ((x == 0) & ~np.signbit(x)).any(axis=1)
        best = np.where(zero, np.where(has, 0.0, -0.0), best)
    else:
        has = ((x == 0) & np.signbit(x)).any(axis=1)
        best = np.where(zero, np.where(has, -0.0, 0.0), best)
    best = np.where(nan.all(axis=1), np.nan, best)
    return _exact(best, fmt, nv)
