"""Correct rounding of exact values into element formats, with every RISC-V rounding mode.

The numeric routines compute each result *exactly* and hand it over as a float64 that is either
the exact value or its **round-to-odd** image at 53 bits (the exact value truncated to 53 bits
with the last bit ORed with "anything below was non-zero", see :mod:`.exactsum`).  Rounding a
round-to-odd value to any precision of at most 51 bits gives, for every rounding mode, the same
result and the same inexact/underflow status as rounding the exact value, because the odd last
bit keeps the value strictly inside the same interval between two target numbers.  All target
precisions here (fp32: 24 bits, int32 conversions: 32 bits) satisfy that, so one float64 per
element is enough to carry an exact result of any width.

``trm`` (tile.md 5.4): bits [2:0] FP rounding mode as RISC-V ``frm`` (0 RNE, 1 RTZ, 2 RDN,
3 RUP, 4 RMM; 5-7 are reserved: using them is a ValueError, the caller's illegal instruction),
bits [4:3] integer rounding (0 RNU, 1 RNE, 2 RDN, 3 ROD, the RVV ``vxrm`` modes), bit [5]
saturate.
"""

from __future__ import annotations

import attrs
import numpy as np
import numpy.typing as npt

from .formats import NV, NX, OF, UF, Format

RNE, RTZ, RDN, RUP, RMM = 0, 1, 2, 3, 4
FRM_NAMES = {RNE: "rne", RTZ: "rtz", RDN: "rdn", RUP: "rup", RMM: "rmm"}
# Integer (fixed-point) rounding modes of trm[4:3].  They are mapped onto distinct internal codes
# so that one rounding routine serves both fields.
RNU, IRNE, IRDN, ROD = 0, 1, 2, 3
_INT_TO_INTERNAL = {RNU: "rnu", IRNE: "rne", IRDN: "rdn", ROD: "rod"}

F64 = npt.NDArray[np.float64]
U8 = npt.NDArray[np.uint8]


@attrs.frozen
class Trm:
    """The decoded ``trm`` CSR."""

    frm: int
    irm: int
    sat: bool

    @classmethod
    def parse(cls, trm: int) -> Trm:
        return cls(trm & 7, (trm >> 3) & 3, bool((trm >> 5) & 1))

    def float_mode(self) -> int:
        """The FP rounding mode; a reserved value (5, 6, 7) is an illegal instruction."""
        if self.frm not in FRM_NAMES:
            raise ValueError(f"reserved FP rounding mode {self.frm} in trm")
        return self.frm


def round_float(x: F64, fmt: Format, frm: int, *, saturate: bool = False
                ) -> tuple[npt.NDArray[np.uint64], U8, npt.NDArray[np.bool_]]:
    """Round exact (or round-to-odd) float64 values into ``fmt``.

    Returns (bit patterns, per-element fflags, per-element "saturated" mask).  IEEE 754 with
    RISC-V conventions: NaN results are the canonical NaN, tininess is detected after rounding,
    overflow goes to infinity or to the largest finite number depending on the mode.  With
    ``saturate`` an overflow gives the largest finite number (and the saturated mask).  For the
    fn formats (e4m3fn) the value that would be infinity is NaN (OCP "non-saturating"), with
    the flags of whatever produced the infinity (OF, DZ; none here for an infinite input).
    Signalling-NaN inputs are the caller's business (it ORs NV).
    """
    if frm not in FRM_NAMES:
        raise ValueError(f"reserved FP rounding mode {frm} in trm")
    x = np.asarray(x, dtype=np.float64)
    if fmt.bits == 64:
        out = np.where(np.isnan(x), np.float64(np.nan), x).view(np.uint64).copy()
        out[np.isnan(x)] = np.uint64(fmt.nan_code)
        return out, np.zeros(x.shape, np.uint8), np.zeros(x.shape, bool)
    mb = fmt.mbits
    emin = 1 - fmt.bias
    qmin = emin - mb
    neg = np.signbit(x)
    finite = np.isfinite(x)
    special = not finite.all()
    nonzero = x != 0
    m, ex = np.frexp(np.where(finite, x, 1.0) if special else x)
    sig = (np.abs(m) * 2.0 ** 53).astype(np.int64)  # exact: < 2^53
    msb = ex.astype(np.int64) - 1                  # value = sig * 2^(msb - 52)
    lsb = np.maximum(msb - mb, qmin)
    q, inexact = round_shift(sig, lsb - msb + 52, neg, frm)
    code = ((lsb - qmin) << mb) + q
    if special:
        inexact &= finite
    flags = inexact.astype(np.uint8)               # NX
    sat = np.zeros(x.shape, bool)
    low = nonzero & inexact & (msb < emin)
    if low.any():
        # tiny after rounding: the value rounded with an unbounded exponent is below 2^emin
        qu, _ = round_shift(sig, np.full_like(sig, 52 - mb), neg, frm)
        tiny = (msb < emin - 1) | (qu < (1 << (mb + 1)))
        flags |= np.where(low & tiny, UF, 0).astype(np.uint8)
    overflow = finite & (code > fmt.max_code)
    if overflow.any():
        away = _rounds_away(frm, neg)
        big = np.where(away & ~np.bool_(saturate),
                       fmt.inf_code if fmt.inf_code is not None else fmt.nan_code, fmt.max_code)
        code = np.where(overflow, big, code)
        sat = overflow & (big == fmt.max_code) & np.bool_(saturate)
        flags |= np.where(overflow, OF | NX, 0).astype(np.uint8)
    code = np.where(nonzero, code, 0)
    if special:
        inf = np.isinf(x)
        if fmt.inf_code is not None:
            code = np.where(inf, fmt.inf_code, code)
        else:
            code = np.where(inf, fmt.max_code if saturate else fmt.nan_code, code)
            sat |= inf & np.bool_(saturate)
    nan_result = code == fmt.nan_code                # includes fn-format overflow and Inf
    code = np.where(neg & ~nan_result, code | fmt.sign_code, code)
    if special:
        code = np.where(np.isnan(x), fmt.nan_code, code)
    return code.astype(np.uint64), flags, sat


def _rounds_away(frm: int, neg: npt.NDArray[np.bool_]) -> npt.NDArray[np.bool_]:
    """Whether an overflow goes to infinity (True) or stops at the largest finite number."""
    if frm in (RNE, RMM):
        return np.ones(neg.shape, bool)
    if frm == RTZ:
        return np.zeros(neg.shape, bool)
    return neg if frm == RDN else ~neg


def round_shift(sig: npt.NDArray[np.int64], shift: npt.NDArray[np.int64], neg: npt.NDArray[np.bool_],
                frm: int) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.bool_]]:
    """Round the magnitude ``sig * 2^-shift`` (sig < 2^53, shift >= 1) to an integer.

    ``neg`` is the sign of the value the magnitude belongs to (directed modes need it).  Shifts
    past 62 are clamped: with sig < 2^53 everything is then below half an ulp, as it would be.
    """
    sh = np.clip(shift, 1, 62)
    q = sig >> sh
    rem = sig & ((np.int64(1) << sh) - 1)
    half = np.int64(1) << (sh - 1)
    inexact = rem != 0
    if frm == RNE:
        inc = (rem > half) | ((rem == half) & ((q & 1) == 1))
    elif frm == RTZ:
        inc = np.zeros(q.shape, bool)
    elif frm == RDN:
        inc = inexact & neg
    elif frm == RUP:
        inc = inexact & ~neg
    else:  # RMM
        inc = rem >= half
    return q + inc.astype(np.int64), inexact


def round_to_integer(x: F64, mode: str) -> tuple[F64, npt.NDArray[np.bool_]]:
    """Round float64 values to integral float64 values; returns (rounded, inexact).

    ``mode``: the FP modes "rne" "rtz" "rdn" "rup" "rmm" and the fixed-point modes "rnu" (round
    half up, toward +inf), "rod" (round to odd: floor, then set the last bit when inexact).
    Works by floor + fraction, both exact in float64, so no intermediate rounding can creep in.
    NaN and infinities come back unchanged.
    """
    x = np.asarray(x, dtype=np.float64)
    with np.errstate(invalid="ignore"):
        f = np.floor(x)
        r = x - f                       # exact, in [0, 1)
        odd = np.fmod(f, 2.0) != 0
    inexact = np.isfinite(x) & (r != 0)
    half = r == 0.5
    if mode == "rne":
        up = (r > 0.5) | (half & odd)
    elif mode == "rtz":
        up = inexact & (x < 0)
    elif mode == "rdn":
        up = np.zeros(x.shape, bool)
    elif mode == "rup":
        up = inexact
    elif mode == "rmm":
        up = (r > 0.5) | (half & (x >= 0))
    elif mode == "rnu":
        up = r >= 0.5
    elif mode == "rod":
        up = inexact & ~odd
    else:
        raise ValueError(f"unknown rounding mode {mode!r}")
    out = np.where(np.isfinite(x), f + up, x)
    return out, inexact


def float_mode_name(frm: int) -> str:
    if frm not in FRM_NAMES:
        raise ValueError(f"reserved FP rounding mode {frm} in trm")
    return FRM_NAMES[frm]


def int_mode_name(irm: int) -> str:
    return _INT_TO_INTERNAL[irm & 3]


def to_int_saturating(x: F64, mode: str, lo: int, hi: int
                      ) -> tuple[npt.NDArray[np.int64], U8]:
    """Float64 to integers in [lo, hi] the RISC-V ``fcvt`` way.

    Rounds with ``mode``; out-of-range values and infinities clamp to the nearest bound, NaN
    gives ``hi``; those set NV (and not NX), an in-range inexact conversion sets NX.
    """
    r, inexact = round_to_integer(x, mode)
    nan = np.isnan(r)
    low = r < lo
    high = (r > hi) | nan
    v = np.clip(np.where(nan, 0.0, r), lo, hi).astype(np.int64)
    v = np.where(high, hi, np.where(low, lo, v))
    bad = low | high
    flags = np.where(bad, NV, np.where(inexact, NX, 0)).astype(np.uint8)
    return v, flags
