"""FMA_BH: the Blackhole SFPU's partially fused multiply-add, bit-exact and vectorised.

Spec ``tensix-sfpu.md`` §4.2 (a prose restatement of the vendor's ``fma_model_bh``).
Two implementations of the same function, both on numpy arrays of FP32 bit patterns:

* :func:`fma_bh_exact` — the step list of §4.2 transcribed literally onto int64
  arrays (any shape).  It is the reference, and the path for lanes the fast path
  does not cover (Inf/NaN, overflowing products, results near the denormal range).
* :func:`fma_bh` — the hot path for the vector unit: the same result with fewer
  numpy operations.  It uses the observation that, away from the range edges, the
  result is ``RNE24(A ± B)`` where ``A`` and ``B`` are the product and the addend
  sticky-shifted onto the common grid ``2^(E-153)`` (steps 2, 5).  ``A ± B`` is an
  integer below 2^29, so it is exact in float64; scaling it by the grid is exact; and
  numpy's float64 → float32 conversion rounds to nearest even, which is precisely
  what steps 8–9 do when the result is a normal number (a right shift of at most two
  bits with a sticky bit, then RNE on three guard bits, equals RNE of the exact
  integer).  Lanes whose alignment exponent ``E`` is outside [27, 251] — the only
  ones that can produce Inf, NaN, a denormal-range result, the denormal round-up
  quirk or the signed-zero rule of step 4 — are recomputed by the exact path.

The fast path is about 28 numpy calls on (3, 32) / (2, 32) arrays.  No float shortcut
(computing ``x·y + z`` in float64 and checking it) is possible: on random FP32 data
FMA_BH differs from a correctly rounded fused multiply-add in 4–8 % of the lanes
(the sticky-folded product and the semi-sticky alignment), so almost every 32-lane
vector would need the integer path anyway.

Inputs are the values *after* the instruction's negate bits were applied.
"""

from __future__ import annotations

import numpy as np

_I64 = np.int64
_U32 = np.uint32
CANONICAL_NAN = 0x7FC0_0000
INF = 0x7F80_0000


def _sticky_shift(v: np.ndarray, k: np.ndarray) -> np.ndarray:
    """``v >> k`` with the semi-sticky rule of §4.2: bit 0 set if bits were lost,
    unless the shifted value is 0 (then the operand vanishes).  ``v`` ≥ 0, k ≥ 0."""
    k = np.minimum(k, 63)
    w = v >> k
    lost = (w << k) != v
    return w | (lost & (w != 0))


def fma_bh_exact(x: np.ndarray, y: np.ndarray, z: np.ndarray) -> np.ndarray:
    """FMA_BH(x, y, z) on arrays of FP32 bit patterns (uint32), literally per §4.2."""
    x = np.asarray(x, dtype=_U32).astype(_I64)
    y = np.asarray(y, dtype=_U32).astype(_I64)
    z = np.asarray(z, dtype=_U32).astype(_I64)
    # step 1: unpack; zero and denormals have significand 0 (sign kept)
    sx, ex, fx = x >> 31, (x >> 23) & 255, x & 0x7FFFFF
    sy, ey, fy = y >> 31, (y >> 23) & 255, y & 0x7FFFFF
    sz, ez, fz = z >> 31, (z >> 23) & 255, z & 0x7FFFFF
    mx = np.where(ex != 0, fx | 0x800000, 0)
    my = np.where(ey != 0, fy | 0x800000, 0)
    mz = np.where(ez != 0, fz | 0x800000, 0)
    # step 2: product with three guard bits, 23 low bits folded into a sticky bit
    sp = sx ^ sy
    p8 = (mx * my) << 3
    mp = (p8 >> 23) | ((p8 & 0x7FFFFF) != 0)
    ep = ex + ey - 127
    mz3 = mz << 3
    # step 5: align on E = max(ep, ez)
    big_e = np.maximum(ep, ez)
    a = _sticky_shift(mp, big_e - ep)
    b = _sticky_shift(mz3, big_e - ez)
    # step 6: add magnitudes; ties go to the product's sign
    sr = np.where(a >= b, sp, sz)
    r = np.where(sp == sz, a + b, np.abs(a - b))
    # step 8: normalise to the leading 1 at bit 26
    t = np.frexp(r.astype(np.float64))[1].astype(_I64) - 1     # MSB index (r < 2^29: exact)
    n = t - 26
    e2 = big_e + n
    low = e2 <= 0
    n = np.where(low, n + 1, n)
    e2 = np.where(low, 0, e2)
    left = np.minimum(np.maximum(-n, 0), 63)
    right = np.maximum(n, 0)
    rr = np.where(n <= 0, r << left, _sticky_shift(r, right))
    # step 9: round to nearest even on the three low bits, then flush exponent-0 results
    rv = (e2 << 23) + ((rr >> 3) & 0x7FFFFF)
    rv = rv + (((rr & 7) + (rv & 1)) > 4)
    rv = np.where(rv < (1 << 23), 0, rv)
    out = (sr << 31) | rv
    # step 8 overflow, step 7 exact zero, step 4 zero product, step 3 specials (last wins)
    out = np.where(e2 >= 255, (sr << 31) | INF, out)
    signed_zero = (sz & sp) << 31
    out = np.where(r == 0, signed_zero, out)
    pzero = (mp == 0) | (ep < 0)
    out = np.where(pzero, np.where(mz != 0, z, signed_zero), out)
    xinf, yinf, zinf = (ex == 255) & (fx == 0), (ey == 255) & (fy == 0), (ez == 255) & (fz == 0)
    nan = (((ex == 255) & (fx != 0)) | ((ey == 255) & (fy != 0)) | ((ez == 255) & (fz != 0))
           | (xinf & (my == 0)) | (yinf & (mx == 0)) | (zinf & (xinf | yinf) & (sz != sp)))
    special = (ex == 255) | (ey == 255) | (ez == 255) | (ep >= 255)
    spec = np.where(nan, CANONICAL_NAN, np.where(zinf, z, (sp << 31) | INF))
    out = np.where(special, spec, out)
    return out.astype(_U32)


# ---------------------------------------------------------------- the fast path
#: biased exponent of (bits >> 23) (sign included, 9 bits) → exponent used for the
#: alignment: 0 (zero/denormal) → -2000 so that the operand vanishes or the lane is
#: sent to the exact path; 255 (Inf/NaN) → +2000 so that the lane is sent there too.
_EXP_OF = np.arange(512, dtype=_I64) & 255
_EXP_OF[_EXP_OF == 0] = -2000
_EXP_OF[_EXP_OF == 255] = 2000
_EXP_OF -= 153                    # exponents relative to the grid exponent: 2^(e-153)
_EXP_OF.setflags(write=False)
#: sign bit of (bits >> 23) as +1.0 / -1.0
_SIGN_OF = 1.0 - 2.0 * (np.arange(512) >> 8)
_SIGN_OF.setflags(write=False)
LANES = 32


def _const(value: int, shape: tuple[int, ...], dtype: type) -> np.ndarray:
    a = np.full(shape, value, dtype=dtype)
    a.setflags(write=False)
    return a


# Constants as whole arrays of the operand's dtype: numpy combines two small arrays of
# one dtype much faster than it broadcasts a scalar or casts between dtypes.
_C23 = _const(23, (3, LANES), _I64)
_CMAN = _const(0x7FFFFF, (3, LANES), _I64)
_CHID = _const(0x800000, (3, LANES), _I64)
_C1 = _const(1, (2, LANES), _I64)
_C3 = _const(3, (LANES,), _I64)
_C6 = _const(6, (LANES,), _I64)
_C20 = _const(20, (LANES,), _I64)
_CLO = _const(27 - 153, (LANES,), _I64)
_CSPAN = _const(252 - 27, (LANES,), np.uint64)
_C63 = _const(63, (2, LANES), _I64)


class _Work:
    """Preallocated work arrays of the fast path, with their row views made once (the
    vector unit runs one instruction at a time, so one set per process is enough)."""

    def __init__(self) -> None:
        self.i64 = np.empty((3, LANES), dtype=_I64)
        self.sh23 = np.empty((3, LANES), dtype=_I64)
        self.e = np.empty((3, LANES), dtype=_I64)
        self.sgn = np.empty((3, LANES), dtype=np.float64)
        self.m = np.empty((3, LANES), dtype=_I64)
        self.big_e = np.empty((1, LANES), dtype=_I64)
        self.t = np.empty(LANES, dtype=_I64)
        self.t_u64 = self.t.view(np.uint64)
        self.v = np.empty((2, LANES), dtype=_I64)
        self.sh = np.empty((2, LANES), dtype=_I64)
        self.w = np.empty((2, LANES), dtype=_I64)
        self.w2 = np.empty((2, LANES), dtype=_I64)
        self.ab = np.empty((2, LANES), dtype=np.float64)
        self.rf = np.empty(LANES, dtype=np.float64)
        self.e0, self.e1, self.e2 = self.e
        self.e12 = self.e[1:]                 # (ep - 20, ez) once e1 holds ep - 20
        self.big_e0 = self.big_e[0]
        self.s0, self.s1, self.s2 = self.sgn
        self.s12 = self.sgn[1:]               # (sign of x·y, sign of z) once s1 holds the product
        self.m0, self.m1, self.m2 = self.m
        self.v0, self.v1 = self.v
        self.ab0, self.ab1 = self.ab


_W = _Work()


def fma_bh(xyz: np.ndarray) -> np.ndarray:
    """FMA_BH on a stacked (3, 32) uint32 array of (x, y, z) rows; returns (32,) uint32.

    Equal to :func:`fma_bh_exact` for every input (see the module doc for why);
    other shapes go to the exact path.
    """
    if xyz.shape != (3, LANES):
        return fma_bh_exact(xyz[0], xyz[1], xyz[2])
    w = _W
    i64, sh23, e, t, big_e = w.i64, w.sh23, w.e, w.t, w.big_e0
    np.copyto(i64, xyz)
    np.right_shift(i64, _C23, out=sh23)               # sign and exponent, 0..511
    _EXP_OF.take(sh23, out=e)                        # alignment exponents
    # with ê = e - 153: ê0 + ê1 + 6 = ep - 20 - 153 (the product's shift base), and
    # E' = max(ê0 + ê1 + 26, ê2) = E - 153, the power of two of the common grid
    np.add(w.e0, w.e1, out=w.e1)
    np.add(w.e1, _C6, out=w.e1)
    np.add(w.e1, _C20, out=t)
    np.maximum(t, w.e2, out=big_e)                   # E' = max(ep, ez) - 153
    np.subtract(big_e, _CLO, out=t)
    if np.count_nonzero(np.greater_equal(w.t_u64, _CSPAN)):
        return fma_bh_exact(xyz[0], xyz[1], xyz[2])  # E outside [27, 251]
    m, v, sh, ww, w2 = w.m, w.v, w.sh, w.w, w.w2
    np.bitwise_and(i64, _CMAN, out=m)
    np.bitwise_or(m, _CHID, out=m)
    np.multiply(w.m0, w.m1, out=w.v0)                # P = mx·my; A = P >> (E-ep+20)
    np.left_shift(w.m2, _C3, out=w.v1)               # 8·mz;       B = 8mz >> (E-ez)
    np.subtract(w.big_e, w.e12, out=sh)
    np.minimum(sh, _C63, out=sh)
    np.right_shift(v, sh, out=ww)
    np.left_shift(ww, sh, out=w2)
    np.subtract(v, w2, out=w2)                       # the bits shifted out
    np.minimum(w2, ww, out=w2)                       # ... count only if something is left
    np.minimum(w2, _C1, out=w2)
    np.bitwise_or(ww, w2, out=ww)                    # A, B with their sticky bits
    ab = w.ab
    np.copyto(ab, ww)
    _SIGN_OF.take(sh23, out=w.sgn)
    np.multiply(w.s0, w.s1, out=w.s1)                # sign of the product
    np.multiply(ab, w.s12, out=ab)
    np.add(w.ab0, w.ab1, out=w.rf)                   # A ± B: exact, |A ± B| < 2^29
    np.ldexp(w.rf, big_e, out=w.rf)                  # × 2^(E-153): exact
    return w.rf.astype(np.float32).view(_U32)        # RNE to FP32 = steps 8-9
