"""The SFPU's partially fused multiply-adds, bit-exact and vectorised: FMA_BH (Blackhole)
and FMA_WH (Wormhole B0).

FMA_BH: spec ``tensix-sfpu.md`` §4.2 (a prose restatement of the vendor's ``fma_model_bh``).
FMA_WH: the Wormhole variant documented by the vendor's ISA pages
``WormholeB0/TensixTile/TensixCoprocessor/SFPMAD.md`` ("IEEE754 conformance / divergence")
and ``Miscellaneous/FMA/README.md`` ("Differences between fma_model_wh and fma_model_bh");
the step list is in :func:`fma_wh_exact`.  Each has two implementations of the same
function on FP32 bit patterns:

* :func:`fma_bh_exact` / :func:`fma_wh_exact` — the step list transcribed literally onto
  int64 numpy arrays (any shape).  They are the references the tests compare against.
* :func:`fma_bh` / :func:`fma_wh` / :func:`mad_lreg_code` / :func:`addi_lreg` — the hot
  path: the same steps as a per-lane loop compiled by numba (``cache=True``: the first
  process compiles in about a second, later ones load the cache).  ``mad_lreg_code`` and
  ``addi_lreg`` read and write the LReg rows in place, applying EN(L) (§3.2), for the
  common SFPMAD / SFPADDI forms (no INDIRECT_VA / INDIRECT_VD, VD < 8), with either
  chip's arithmetic.

Both chips' compiled kernels live in this one module on purpose: numba's cache is keyed
on the source file of the function compiled, not on the files of the functions it calls,
so a lane loop in one module calling a kernel from another could keep running a stale
compiled copy after that other module changed.

Inputs are the values *after* the instruction's negate bits were applied (Wormhole has
none).
"""

from __future__ import annotations

import math
from typing import Any, TypeAlias

import numpy as np
from numba import njit, typeof

_I64 = np.int64
#: A lane value inside the compiled kernels: numba types a Python ``int`` and an
#: ``np.int64`` alike (int64), and the kernels pass both.
Int64: TypeAlias = "int | np.int64"
_U32 = np.uint32
CANONICAL_NAN = 0x7FC0_0000
INF = 0x7F80_0000
#: The bits every Wormhole NaN result has set (its seed, before other bits leak in)
WH_NAN = 0x7F80_0001


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


def fma_wh_exact(x: np.ndarray, y: np.ndarray, z: np.ndarray) -> np.ndarray:
    """FMA_WH(x, y, z) on arrays of FP32 bit patterns (uint32): Wormhole B0's SFPMAD.

    The steps are FMA_BH's (§4.2) with the five differences the vendor lists for the
    Wormhole model (``Miscellaneous/FMA/README.md``; ``WormholeB0/.../SFPMAD.md``):

    1. *NaN seeds.*  An invalid case (a NaN x or y, Inf × zero, or Inf + a product of the
       opposite sign that is infinite **or a finite product whose exponent overflows**)
       sets a NaN seed ``s_p | 0x7F800001``; a NaN z (when nothing above applies) sets
       ``s_z | 0x7F800001``.  The seed is not returned at once: the datapath runs on (an
       overflowing product exponent clamped to 255, a zero or underflowed product taken as
       m_p = 0, e_p = 0) and every result bit it would have produced is OR-ed into the
       seed.  So NaNs have at least 0x7F800001 set, and more bits can leak in.
    2. *Zeros are +0.*  A zero product returns z unchanged when m_z ≠ 0, else +0; an exact
       cancellation, a flush and an underflow return +0 (or the NaN seed).
    3. *Blatant denormals* — a normalised exponent E' < 0 — return +0 before rounding.
       E' = 0 is not bumped (FMA_BH shifts one more bit there): the value is packed with
       exponent field 0 and rounded; only a carry into bit 23 keeps it (as the smallest
       normal), anything else flushes to +0.
    4. *Sticky bug.*  The normalising right shift by n ∈ {1, 2} keeps only bit 0 of R as
       the sticky bit: ``(R >> n) | (R & 1)``, so with n = 2 bit 1 is lost.
    5. Rounding overflow (E' ≥ 255) gives the NaN seed when one is set, else ±Inf.
    """
    x = np.asarray(x, dtype=_U32).astype(_I64)
    y = np.asarray(y, dtype=_U32).astype(_I64)
    z = np.asarray(z, dtype=_U32).astype(_I64)
    # step 1: unpack as FMA_BH (zero and denormals have significand 0)
    sx, ex, fx = x >> 31, (x >> 23) & 255, x & 0x7FFFFF
    sy, ey, fy = y >> 31, (y >> 23) & 255, y & 0x7FFFFF
    sz, ez, fz = z >> 31, (z >> 23) & 255, z & 0x7FFFFF
    mx = np.where(ex != 0, fx | 0x800000, 0)
    my = np.where(ey != 0, fy | 0x800000, 0)
    mz = np.where(ez != 0, fz | 0x800000, 0)
    # step 2: the product as FMA_BH (Inf/NaN significands take part: they may leak)
    sp = sx ^ sy
    p8 = (mx * my) << 3
    mp = (p8 >> 23) | ((p8 & 0x7FFFFF) != 0)
    ep = ex + ey - 127
    mz3 = mz << 3
    # step 3: specials; an invalid case only seeds a NaN (difference 1)
    special = (ex == 255) | (ey == 255) | (ez == 255) | (ep >= 255)
    xnan, ynan, znan = (ex == 255) & (fx != 0), (ey == 255) & (fy != 0), (ez == 255) & (fz != 0)
    xinf, yinf, zinf = (ex == 255) & (fx == 0), (ey == 255) & (fy == 0), (ez == 255) & (fz == 0)
    huge_p = (ex == 255) | (ey == 255) | (ep >= 255)
    invalid = (xnan | ynan | (xinf & (my == 0)) | (yinf & (mx == 0))
               | (zinf & huge_p & (sz != sp)))
    seed = np.where(special & invalid, (sp << 31) | WH_NAN,
                    np.where(special & znan, (sz << 31) | WH_NAN, 0))
    nan = seed != 0
    early_special = special & ~nan                       # ±Inf: z itself, or the product's
    special_out = np.where(zinf, z, (sp << 31) | INF)
    ep = np.where(special, np.minimum(ep, 255), ep)
    # step 4: zero or underflowed product (difference 2: a zero result is +0)
    pzero = (mp == 0) | (ep < 0)
    early_zero = pzero & ~nan
    zero_out = np.where(mz != 0, z, 0)
    mp = np.where(pzero, 0, mp)
    ep = np.where(pzero, 0, ep)
    # step 5: align on E = max(ep, ez), semi-sticky as FMA_BH
    big_e = np.maximum(ep, ez)
    a = _sticky_shift(mp, big_e - ep)
    b = _sticky_shift(mz3, big_e - ez)
    # step 6: add magnitudes; ties go to the product's sign
    sr = np.where(a >= b, sp, sz)
    r = np.where(sp == sz, a + b, np.abs(a - b))
    # step 8: normalise to the leading 1 at bit 26; no extra shift at E' = 0 (difference 3)
    t = np.frexp(r.astype(np.float64))[1].astype(_I64) - 1     # MSB index (r < 2^29: exact)
    n = t - 26
    e2 = big_e + n
    left = np.minimum(np.maximum(-n, 0), 63)
    right = np.minimum(np.maximum(n, 0), 63)
    rr = np.where(n <= 0, r << left, (r >> right) | (r & 1))   # difference 4
    # step 9: round to nearest even on the three low bits
    rv = (e2 << 23) + ((rr >> 3) & 0x7FFFFF)
    rv = rv + (((rr & 7) + (rv & 1)) > 4)
    out = np.where(nan, seed, sr << 31) | rv
    # flushes (exponent field 0 after rounding, or E' < 0), overflow, exact zero,
    # then the early returns of steps 4 and 3 (last wins)
    out = np.where((rv < (1 << 23)) | (e2 < 0), seed, out)
    out = np.where(e2 >= 255, np.where(nan, seed, (sr << 31) | INF), out)
    out = np.where(r == 0, seed, out)
    out = np.where(early_zero, zero_out, out)
    out = np.where(early_special, special_out, out)
    return out.astype(_U32)


# ---------------------------------------------------------------- the compiled path
@njit(cache=True, inline="always")
def _sticky1(v: Int64, k: Int64) -> Int64:
    if k > 63:
        k = 63
    w = v >> k
    if w != 0 and (w << k) != v:
        w |= 1
    return w


@njit(cache=True)
def _fma1(x: Int64, y: Int64, z: Int64) -> Int64:
    """FMA_BH of one lane (int64 holding FP32 bit patterns), the steps of §4.2."""
    sx, ex, fx = x >> 31, (x >> 23) & 255, x & 0x7FFFFF
    sy, ey, fy = y >> 31, (y >> 23) & 255, y & 0x7FFFFF
    sz, ez, fz = z >> 31, (z >> 23) & 255, z & 0x7FFFFF
    mx = (fx | 0x800000) if ex != 0 else 0
    my = (fy | 0x800000) if ey != 0 else 0
    mz = (fz | 0x800000) if ez != 0 else 0
    sp = sx ^ sy
    ep = ex + ey - 127
    # step 3: specials (Inf/NaN operands, overflowing product exponent)
    if ex == 255 or ey == 255 or ez == 255 or ep >= 255:
        xinf = ex == 255 and fx == 0
        yinf = ey == 255 and fy == 0
        zinf = ez == 255 and fz == 0
        if ((ex == 255 and fx != 0) or (ey == 255 and fy != 0) or (ez == 255 and fz != 0)
                or (xinf and my == 0) or (yinf and mx == 0)
                or (zinf and (xinf or yinf) and sz != sp)):
            return CANONICAL_NAN
        if zinf:
            return z
        return (sp << 31) | INF
    # step 2: product with three guard bits, 23 low bits folded into a sticky bit
    p8 = (mx * my) << 3
    mp = p8 >> 23
    if (p8 & 0x7FFFFF) != 0:
        mp |= 1
    signed_zero = (sz & sp) << 31
    # step 4: zero product
    if mp == 0 or ep < 0:
        return z if mz != 0 else signed_zero
    # step 5: align on E = max(ep, ez)
    big_e = ep if ep > ez else ez
    a = _sticky1(mp, big_e - ep)
    b = _sticky1(mz << 3, big_e - ez)
    # step 6: add magnitudes; ties go to the product's sign
    sr = sp if a >= b else sz
    r = a + b if sp == sz else (a - b if a >= b else b - a)
    # step 7: exact zero
    if r == 0:
        return signed_zero
    # step 8: normalise to the leading 1 at bit 26
    t = math.frexp(float(r))[1] - 1                  # MSB index (r < 2^29: exact)
    n = t - 26
    e2 = big_e + n
    if e2 <= 0:
        n += 1
        e2 = 0
    if e2 >= 255:
        return (sr << 31) | INF
    rr = (r << -n) if n <= 0 else _sticky1(r, n)
    # step 9: round to nearest even on the three low bits, then flush exponent-0 results
    rv = (e2 << 23) + ((rr >> 3) & 0x7FFFFF)
    if (rr & 7) + (rv & 1) > 4:
        rv += 1
    if rv < (1 << 23):
        rv = 0
    return (sr << 31) | rv


@njit(cache=True)
def _fma1_wh(x: Int64, y: Int64, z: Int64) -> Int64:
    """FMA_WH of one lane, the steps of :func:`fma_wh_exact` with early returns."""
    sx, ex, fx = x >> 31, (x >> 23) & 255, x & 0x7FFFFF
    sy, ey, fy = y >> 31, (y >> 23) & 255, y & 0x7FFFFF
    sz, ez, fz = z >> 31, (z >> 23) & 255, z & 0x7FFFFF
    mx = (fx | 0x800000) if ex != 0 else 0
    my = (fy | 0x800000) if ey != 0 else 0
    mz = (fz | 0x800000) if ez != 0 else 0
    sp = sx ^ sy
    ep = ex + ey - 127
    p8 = (mx * my) << 3
    mp = p8 >> 23
    if (p8 & 0x7FFFFF) != 0:
        mp |= 1
    # step 3: specials; an invalid case seeds a NaN and the datapath runs on
    seed: Int64 = 0
    if ex == 255 or ey == 255 or ez == 255 or ep >= 255:
        xinf = ex == 255 and fx == 0
        yinf = ey == 255 and fy == 0
        zinf = ez == 255 and fz == 0
        huge_p = ex == 255 or ey == 255 or ep >= 255
        if ((ex == 255 and fx != 0) or (ey == 255 and fy != 0)
                or (xinf and my == 0) or (yinf and mx == 0)
                or (zinf and huge_p and sz != sp)):
            seed = (sp << 31) | WH_NAN
        elif ez == 255 and fz != 0:
            seed = (sz << 31) | WH_NAN
        elif zinf:
            return z
        else:
            return (sp << 31) | INF
        if ep > 255:
            ep = 255
    # step 4: zero or underflowed product
    if mp == 0 or ep < 0:
        if seed == 0:
            return z if mz != 0 else 0
        mp = 0
        ep = 0
    # step 5: align on E = max(ep, ez)
    big_e = ep if ep > ez else ez
    a = _sticky1(mp, big_e - ep)
    b = _sticky1(mz << 3, big_e - ez)
    # step 6: add magnitudes; ties go to the product's sign
    sr = sp if a >= b else sz
    r = a + b if sp == sz else (a - b if a >= b else b - a)
    # step 7: exact zero is +0
    if r == 0:
        return seed
    # step 8: normalise to the leading 1 at bit 26; E' < 0 flushes before rounding
    t = math.frexp(float(r))[1] - 1                  # MSB index (r < 2^29: exact)
    n = t - 26
    e2 = big_e + n
    if e2 >= 255:
        return seed if seed != 0 else (sr << 31) | INF
    if e2 < 0:
        return seed
    rr = (r << -n) if n <= 0 else (r >> n) | (r & 1)
    # step 9: round to nearest even, then flush exponent-0 results to +0
    rv = (e2 << 23) + ((rr >> 3) & 0x7FFFFF)
    if (rr & 7) + (rv & 1) > 4:
        rv += 1
    if rv < (1 << 23):
        return seed
    return (seed if seed != 0 else sr << 31) | rv


@njit(cache=True)
def fma_wh(xyz: np.ndarray) -> np.ndarray:
    """FMA_WH on a stacked (3, n) array of FP32 bit patterns (x, y, z rows); returns
    (n,) uint32.  A compiled per-lane loop (numba), equal to :func:`fma_wh_exact`."""
    n = xyz.shape[1]
    out = np.empty(n, dtype=np.uint32)
    for i in range(n):
        out[i] = _fma1_wh(np.int64(xyz[0, i]), np.int64(xyz[1, i]), np.int64(xyz[2, i]))
    return out


@njit(cache=True)
def fma_bh(xyz: np.ndarray) -> np.ndarray:
    """FMA_BH on a stacked (3, n) array of FP32 bit patterns (x, y, z rows); returns
    (n,) uint32.  A compiled per-lane loop (numba), equal to :func:`fma_bh_exact`."""
    n = xyz.shape[1]
    out = np.empty(n, dtype=np.uint32)
    for i in range(n):
        out[i] = _fma1(np.int64(xyz[0, i]), np.int64(xyz[1, i]), np.int64(xyz[2, i]))
    return out


def compiled_entry(dispatcher: Any, *example: Any) -> Any:
    """The compiled entry point of numba ``dispatcher`` for the exact types of ``example``
    (compiled now, or loaded from the cache).  Calling it skips numba's per-call type
    dispatch (about 100 ns an argument); callers must pass arguments of exactly those
    types (dtype, dimensions, layout, read-only-ness), which the fixed-type SFPU state
    arrays do."""
    sig = tuple(typeof(a) for a in example)
    dispatcher.compile(sig)
    try:  # numba internals: stable for years, but fall back to the checked path if they move
        return dispatcher.overloads[sig].entry_point
    except (AttributeError, KeyError, TypeError):
        return dispatcher


@njit(cache=True)
def mad_lreg_code(lreg: np.ndarray, lane_flags: np.ndarray, use_lane_flags: np.ndarray,
                  lane_config: np.ndarray, code: int) -> None:
    """The common SFPMAD: LReg[vd][L] = FMA(LReg[va] ^ neg_x, LReg[vb], LReg[vc] ^ neg_z)
    in the enabled lanes (EN(L) of §3.2: LaneFlags if UseLaneFlags, and not switched off
    by LaneConfig[L & 7].ROW_MASK bit L >> 3).  No INDIRECT_VA / INDIRECT_VD.  The
    register fields come packed into one int (fewer arguments to dispatch):
    ``va | vb << 4 | vc << 8 | vd << 12``, bit 16 negates x, bit 17 negates z, bit 18
    selects FMA_WH (Wormhole) instead of FMA_BH."""
    va = code & 15
    vb = (code >> 4) & 15
    vc = (code >> 8) & 15
    vd = (code >> 12) & 15
    neg_x = ((code >> 16) & 1) << 31
    neg_z = ((code >> 17) & 1) << 31
    wh = (code >> 18) & 1
    n = lreg.shape[1]
    for i in range(n):
        if use_lane_flags[i] and not lane_flags[i]:
            continue
        if (lane_config[i & 7] >> ((i >> 3) + 12)) & 1:
            continue
        x = np.int64(lreg[va, i]) ^ neg_x
        z = np.int64(lreg[vc, i]) ^ neg_z
        if wh:
            lreg[vd, i] = _fma1_wh(x, np.int64(lreg[vb, i]), z)
        else:
            lreg[vd, i] = _fma1(x, np.int64(lreg[vb, i]), z)


@njit(cache=True)
def addi_lreg(lreg: np.ndarray, lane_flags: np.ndarray, use_lane_flags: np.ndarray,
              lane_config: np.ndarray, vd: int, imm: int, neg_c: int, addi: bool,
              wh: bool) -> None:
    """The common SFPADDI / SFPMULI with c = LReg[vd] ^ neg_c, in the enabled lanes (as
    :func:`mad_lreg_code`): SFPADDI FMA(imm, 1.0, c), SFPMULI FMA(imm, c, +0); FMA is
    FMA_WH when ``wh`` (Wormhole), else FMA_BH."""
    n = lreg.shape[1]
    for i in range(n):
        if use_lane_flags[i] and not lane_flags[i]:
            continue
        if (lane_config[i & 7] >> ((i >> 3) + 12)) & 1:
            continue
        c = np.int64(lreg[vd, i]) ^ neg_c
        if addi:
            x, y, z = np.int64(imm), np.int64(0x3F80_0000), c
        else:
            x, y, z = np.int64(imm), c, np.int64(0)
        lreg[vd, i] = _fma1_wh(x, y, z) if wh else _fma1(x, y, z)


#: :func:`mad_lreg_code` for the SFPU state arrays (uint32 (17, 32) LRegs, bool (32,)
#: LaneFlags / UseLaneFlags, uint32 (32,) LaneConfig), without per-call type dispatch.
mad_lreg_code_direct = compiled_entry(
    mad_lreg_code, np.zeros((17, 32), dtype=_U32), np.zeros(32, dtype=np.bool_),
    np.zeros(32, dtype=np.bool_), np.zeros(32, dtype=_U32), 0)
#: :func:`addi_lreg` for the SFPU state arrays, without per-call type dispatch.
addi_lreg_direct = compiled_entry(
    addi_lreg, np.zeros((17, 32), dtype=_U32), np.zeros(32, dtype=np.bool_),
    np.zeros(32, dtype=np.bool_), np.zeros(32, dtype=_U32), 0, 0, 0, True, False)
