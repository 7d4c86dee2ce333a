"""TALU element operations for the integer formats (int32, int16, int8).

Results are computed exactly (int64, or Python integers where int32 intermediate products could
pass 2^63) and then wrapped to the element width, or clamped when the saturate bit trm[5] is set
(counted as saturation) -- for add, sub, mul, div, neg, abs, fma/fms/nfma, dequantize, lerp and
row-sum.  Bitwise ops, shifts, comparisons, max/min, select and clamp cannot leave the range.

* div: quotient truncated toward zero (RISC-V); x/0 = -1 (all ones); MIN/-1 = MIN wrapped, MAX
  when saturating.  No fflags (RISC-V integer division never sets them).
* sll/srl/sra: shift amount = b mod element bits (RVV); srl is logical on the element width.
* Comparisons give 1/0; max/min/comparisons are signed.
* SFU ops: the integer is converted to fp32 (RNE), the function evaluated as for floats, and the
  fp32 result converted back with RISC-V fcvt rules (see :mod:`.convert`): fflags apply.
* quantize ``sat_int8(a*b + c)`` (exact, no rounding needed), dequantize ``(a-c)*b``.
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

from . import formats as F
from . import sfu
from .convert import float_to_int, int_result
from .formats import Format
from .rounding import RNE, Trm, round_float

U64 = npt.NDArray[np.uint64]
U8 = npt.NDArray[np.uint8]
I64 = npt.NDArray[np.int64]
B = npt.NDArray[np.bool_]
Out = tuple[U64, U8, B]


def _zeros(shape: tuple[int, ...]) -> U8:
    return np.zeros(shape, np.uint8)


def _out(v: npt.NDArray, fmt: Format, trm: Trm, saturating: bool = True) -> Out:
    bits, sat = int_result(v, fmt, trm.sat and saturating)
    return bits, _zeros(bits.shape), sat


def _wide(v: I64, fmt: Format) -> npt.NDArray:
    """Python-integer arrays for int32 products of differences, which can pass 2^63."""
    return v.astype(object) if fmt.bits > 16 else v


def negate(bits: U64, fmt: Format, trm: Trm) -> tuple[U64, B]:
    """The neg1/neg2 input stage: two's-complement negation in the element width."""
    b, sat = int_result(-F.to_int64(bits, fmt), fmt, trm.sat)
    return b, sat


def unary(name: str, bits: U64, fmt: Format, trm: Trm, *, f2i_rounding: str = "frm") -> Out:
    v = F.to_int64(bits, fmt)
    shape = bits.shape
    if name in ("copy", "floor"):
        return bits, _zeros(shape), np.zeros(shape, bool)
    if name == "neg":
        return _out(-v, fmt, trm)
    if name == "abs":
        return _out(np.abs(v), fmt, trm)
    if name == "relu":
        return _out(np.maximum(v, 0), fmt, trm, False)
    if name == "not":
        return _out(~v, fmt, trm, False)
    if name == "zero":
        return _out(np.zeros_like(v), fmt, trm, False)
    if name == "sign":
        return _out(np.sign(v), fmt, trm, False)
    if name in sfu.FUNCTIONS:
        x32, f_in, _ = round_float(v.astype(np.float64), F.FP32, RNE)
        y, f_fn = sfu.evaluate(name, F.to_float64(x32, F.FP32))
        y32, f_out, _ = round_float(y, F.FP32, RNE)
        out, f_cvt = float_to_int(F.to_float64(y32, F.FP32), fmt, trm, f2i_rounding)
        return out, f_in | f_fn | f_out | f_cvt, np.zeros(shape, bool)
    raise ValueError(f"unary op {name!r} is not an element operation")


def binary(name: str, a_bits: U64, b_bits: U64, fmt: Format, trm: Trm) -> Out:
    a = F.to_int64(a_bits, fmt)
    b = F.to_int64(b_bits, fmt)
    w = fmt.bits
    if name == "add":
        return _out(a + b, fmt, trm)
    if name == "sub":
        return _out(a - b, fmt, trm)
    if name == "mul":
        return _out(a * b, fmt, trm)                   # |a*b| <= 2^62
    if name == "div":
        safe = np.where(b == 0, 1, b)
        q = np.abs(a) // np.abs(safe)
        q = np.where((a < 0) != (safe < 0), -q, q)
        return _out(np.where(b == 0, -1, q), fmt, trm)
    if name == "max":
        return _out(np.maximum(a, b), fmt, trm, False)
    if name == "min":
        return _out(np.minimum(a, b), fmt, trm, False)
    if name in ("and", "or", "xor"):
        op = {"and": np.bitwise_and, "or": np.bitwise_or, "xor": np.bitwise_xor}[name]
        return _out(op(a, b), fmt, trm, False)
    sh = b & (w - 1)
    if name == "sll":
        return _out(a << sh, fmt, trm, False)
    if name == "srl":
        return _out((a & ((1 << w) - 1)) >> sh, fmt, trm, False)
    if name == "sra":
        return _out(a >> sh, fmt, trm, False)
    if name in ("cmpeq", "cmplt", "cmple"):
        res = {"cmpeq": np.equal, "cmplt": np.less, "cmple": np.less_equal}[name](a, b)
        return _out(res.astype(np.int64), fmt, trm, False)
    raise ValueError(f"binary op {name!r} is not an element operation")


def ternary(name: str, a_bits: U64, b_bits: U64, c_bits: U64, fmt: Format, trm: Trm) -> Out:
    a, b, c = (F.to_int64(x, fmt) for x in (a_bits, b_bits, c_bits))
    if name == "fma":
        return _out(a * b + c, fmt, trm)
    if name == "fms":
        return _out(a * b - c, fmt, trm)
    if name == "nfma":
        return _out(c - a * b, fmt, trm)
    if name == "select":
        return _out(np.where(c != 0, a, b), fmt, trm, False)
    if name == "clamp":
        return _out(np.minimum(np.maximum(a, b), c), fmt, trm, False)
    if name == "dequantize":
        return _out((_wide(a, fmt) - c) * _wide(b, fmt), fmt, trm)
    if name == "lerp":
        return _out(_wide(a, fmt) + (_wide(b, fmt) - a) * _wide(c, fmt), fmt, trm)
    raise ValueError(f"ternary op {name!r} is not an element operation")


def quantize(a_bits: U64, b_bits: U64, c_bits: U64, fmt: Format) -> tuple[I64, U8, B]:
    """``sat_int8(a*b + c)`` as int8 values (an integer product needs no rounding)."""
    a, b, c = (F.to_int64(x, fmt) for x in (a_bits, b_bits, c_bits))
    total = a * b + c
    sat = (total < -128) | (total > 127)
    return np.clip(total, -128, 127), _zeros(a.shape), sat


def reduce_rows(name: str, bits: U64, fmt: Format, trm: Trm) -> Out:
    v = F.to_int64(bits, fmt)
    if name == "row-sum":
        return _out(v.sum(axis=1), fmt, trm)
    return _out(v.max(axis=1) if name == "row-max" else v.min(axis=1), fmt, trm, False)
