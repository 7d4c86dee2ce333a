"""MMA numerics: one tile x one tile -> one accumulator tile (tile.md 5.5, M1-M6).

``D[m][n] = (negd ? -D : D)[m][n] + sum_k (neg1 ? -A : A)[m][k] * B[k][n]`` with M = N =
tile_bytes // row_bytes and K = row_bytes // element bytes (two 4-bit elements per byte).

* Layouts: A row-major M x K (``trans_a``: stored K x M, element (m,k) at ``(k*M + m)``); B is
  K-major, i.e. stored as B^T, N rows of K (``trans_b``: row-major K x N); with
  ``transpose_granule=8`` a transposed operand is byte-transposed instead; D row-major M x N of
  the accumulator type; an fp16 accumulator uses the first ``M*N*2`` bytes and leaves the rest
  of the D tile as it was.
* Floats: every product is exact (float64 holds them all), the products and D are added exactly
  (:mod:`.exactsum`) and the sum is rounded once, round-to-nearest-even, to the accumulator.
  Any NaN operand, Inf*0 or Inf-Inf gives the canonical NaN of the accumulator (fp32
  0x7FC00000, fp16 0x7E00); an exact zero sum is +0 unless every term is -0.  Overflow gives Inf.
* tf32 operands are fp32 words whose low 13 mantissa bits are ignored (truncation toward zero);
  a NaN word stays NaN even if its payload lived only in those bits.
* Integers: exact int64 dot products, D added, result wrapped mod 2^32 (no saturation).
  ``neg_a`` negates the A elements before the products, ``neg_d`` negates D (-(-2^31) wraps).
"""

from __future__ import annotations

import attrs
import numpy as np
import numpy.typing as npt

from . import formats as F
from .exactsum import exact_sum_ro, ro_two_sum
from .rounding import RNE, round_float


@attrs.frozen
class MmaType:
    """One row of the mmauop table: A and B operand formats and the accumulator format."""

    code: int
    a: F.Format
    b: F.Format
    acc: F.Format
    name: str

    def k(self, row_bytes: int = 64) -> int:
        """Reduction length for a row of ``row_bytes``."""
        return row_bytes * 8 // self.a.bits


def _t(code: int, a: F.Format, b: F.Format, acc: F.Format, name: str) -> tuple[int, MmaType]:
    return code, MmaType(code, a, b, acc, name)


MMA_TYPES: dict[int, MmaType] = dict([
    _t(0x00, F.FP16, F.FP16, F.FP32, "f16.f16.f32"),
    _t(0x01, F.BF16, F.BF16, F.FP32, "bf16.bf16.f32"),
    _t(0x02, F.FP16, F.FP16, F.FP16, "f16.f16.f16"),
    _t(0x03, F.TF32, F.TF32, F.FP32, "tf32.tf32.f32"),
    _t(0x04, F.FP32, F.FP32, F.FP32, "f32.f32.f32"),
    _t(0x05, F.E4M3, F.E4M3, F.FP32, "e4m3.e4m3.f32"),
    _t(0x06, F.E4M3, F.E5M2, F.FP32, "e4m3.e5m2.f32"),
    _t(0x07, F.E5M2, F.E4M3, F.FP32, "e5m2.e4m3.f32"),
    _t(0x08, F.E5M2, F.E5M2, F.FP32, "e5m2.e5m2.f32"),
    _t(0x09, F.INT8, F.INT8, F.INT32, "s8.s8.s32"),
    _t(0x0A, F.UINT8, F.UINT8, F.INT32, "u8.u8.s32"),
    _t(0x0B, F.INT8, F.UINT8, F.INT32, "s8.u8.s32"),
    _t(0x0C, F.UINT8, F.INT8, F.INT32, "u8.s8.s32"),
    _t(0x0D, F.INT4, F.INT4, F.INT32, "s4.s4.s32"),
    _t(0x0E, F.UINT4, F.UINT4, F.INT32, "u4.u4.s32"),
])

_TF32_DROP = np.uint64(0xFFFFE000)


def _operand(data: bytes, fmt: F.Format) -> npt.NDArray:
    """Decode one operand tile to exact float64 / int64 values (flat, storage order)."""
    bits = F.codes(data, fmt)
    if fmt is F.TF32:
        nan = F.is_nan_code(bits, F.FP32)
        vals = F.to_float64(bits & _TF32_DROP, F.FP32)
        return np.where(nan, np.nan, vals)
    return F.to_float64(bits, fmt) if fmt.is_float else F.to_int64(bits, fmt)


def _byte_transpose(data: bytes, rows: int, row_bytes: int) -> bytes:
    """Undo an 8-bit-granular transpose: stored ``row_bytes x rows`` bytes -> ``rows x row_bytes``."""
    return np.frombuffer(data, dtype=np.uint8).reshape(row_bytes, rows).T.tobytes()


def mma(d: bytes, a: bytes, b: bytes, code: int, *, trans_a: bool = False, trans_b: bool = False,
        neg_a: bool = False, neg_d: bool = False, row_bytes: int = 64, transpose_granule: int = 0) -> bytes:
    """Return the new D tile of one MMA (see the module docstring for the exact rules).

    ``transpose_granule`` (tile.md M5): 0 transposes in units of the element (default); 8
    transposes bytes, so a transposed operand is the ``row_bytes x M`` byte matrix whose
    transpose is the untransposed layout (multi-byte elements are split across rows).
    """
    t = MMA_TYPES.get(code)
    if t is None:
        raise ValueError(f"unknown mmauop 0x{code:02x}")
    tile = len(d)
    if len(a) != tile or len(b) != tile:
        raise ValueError("mma: A, B and D must be tiles of the same size")
    if row_bytes <= 0 or tile % row_bytes:
        raise ValueError(f"mma: tile of {tile} bytes is not a whole number of {row_bytes}-byte rows")
    m = n = tile // row_bytes
    k = t.k(row_bytes)
    d_bytes = m * n * t.acc.nbytes
    if d_bytes > tile:
        raise ValueError(f"mma: a {m}x{n} {t.acc.name} accumulator does not fit a {tile}-byte tile")
    if transpose_granule not in (0, 8):
        raise ValueError(f"mma: transpose_granule must be 0 (element) or 8, not {transpose_granule}")
    a, b = bytes(a), bytes(b)
    if transpose_granule == 8:
        a = _byte_transpose(a, m, row_bytes) if trans_a else a
        b = _byte_transpose(b, n, row_bytes) if trans_b else b
        trans_a = trans_b = False
    av = _operand(a, t.a)
    bv = _operand(b, t.b)
    amat = av.reshape(k, m).T if trans_a else av.reshape(m, k)
    bmat = bv.reshape(k, n) if trans_b else bv.reshape(n, k).T
    if neg_a:
        amat = -amat
    dv = F.decode(bytes(d[:d_bytes]), t.acc).reshape(m, n)
    if neg_d:
        dv = -dv
    if t.acc.is_float:
        out_bits = _float_mma(amat, bmat, dv, t)
    else:
        out_bits = _int_mma(amat, bmat, dv)
    return F.pack(out_bits, t.acc) + bytes(d[d_bytes:])


def _int_mma(amat: npt.NDArray[np.int64], bmat: npt.NDArray[np.int64], dv: npt.NDArray[np.int64]
             ) -> npt.NDArray[np.uint64]:
    """Exact int64 dot products (|sum| < 2^24 * 128), D added, wrapped to 32 bits."""
    total = amat.astype(np.int64) @ bmat.astype(np.int64) + dv
    return (total & 0xFFFFFFFF).astype(np.uint64).ravel()


def _lsb_exponent(v: npt.NDArray[np.float64], fmt: F.Format) -> npt.NDArray[np.int64]:
    """A lower bound on the exponent of the last significant bit of each value (zeros: huge)."""
    ex = np.frexp(v)[1].astype(np.int64)
    lsb = np.maximum(ex - 1 - fmt.mbits, 1 - fmt.bias - fmt.mbits)
    return np.where(v == 0, 1 << 20, lsb)


def _float_mma(amat: npt.NDArray[np.float64], bmat: npt.NDArray[np.float64], dv: npt.NDArray[np.float64],
               t: MmaType) -> npt.NDArray[np.uint64]:
    """Exact sum of products per element, D added exactly, one RNE rounding.

    Fast path (the common case): when every product of an element is a multiple of ``2^L`` and
    the sum of their magnitudes stays below ``2^(52+L)``, every partial sum is exactly
    representable, so a float64 matmul (any order, with or without FMA) is exact; D is then
    added with :func:`ro_two_sum`.  Elements that fail the bound go through the integer
    super-accumulator; elements with a non-finite operand use IEEE float64 arithmetic, whose
    Inf/NaN result is exact.
    """
    k = amat.shape[1]
    fin_a: npt.NDArray[np.bool_] = np.isfinite(amat)
    fin_b: npt.NDArray[np.bool_] = np.isfinite(bmat)
    row_ok = np.asarray(fin_a.all(axis=1))
    col_ok = np.asarray(fin_b.all(axis=0))
    finite = row_ok[:, None] & col_ok[None, :] & np.isfinite(dv)
    a0 = np.where(fin_a, amat, 0.0)
    b0 = np.where(fin_b, bmat, 0.0)
    low = _lsb_exponent(a0, t.a).min(axis=1)[:, None] + _lsb_exponent(b0, t.b).min(axis=0)[None, :]
    bound = np.abs(a0) @ np.abs(b0)
    fast = finite & (bound < np.ldexp(1.0, np.clip(low + 52, -1000, 1000).astype(np.int32)))
    sp = a0 @ b0
    zero = fast & (sp == 0)
    if zero.any():
        # an exact zero is -0 only if every product is -0 (IEEE sum of signed zeros)
        nonzero = (a0 != 0).astype(np.int64) @ (b0 != 0).astype(np.int64)
        sa = np.signbit(a0).astype(np.int64)
        sb = np.signbit(b0).astype(np.int64)
        negs = sa @ (1 - sb) + (1 - sa) @ sb
        sp = np.where(zero, np.where((nonzero == 0) & (negs == k), -0.0, 0.0), sp)
    exact = np.where(fast, ro_two_sum(sp, np.where(fast, dv, 0.0)), 0.0)
    slow = finite & ~fast
    if slow.any():
        ms, ns = np.nonzero(slow)
        terms = np.concatenate([amat[ms] * bmat[:, ns].T, dv[ms, ns][:, None]], axis=1)
        exact[ms, ns] = exact_sum_ro(terms)
    if not finite.all():
        ms, ns = np.nonzero(~finite)
        with np.errstate(invalid="ignore", over="ignore"):
            exact[ms, ns] = (amat[ms] * bmat[:, ns].T).sum(axis=1) + dv[ms, ns]
    bits, _, _ = round_float(exact.ravel(), t.acc, RNE)
    return bits
