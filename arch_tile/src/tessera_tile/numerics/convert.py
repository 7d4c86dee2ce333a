"""Element format conversions: TALU convert ops 0x20-0x27 and Tile Move FP scalars.

Rules (``trm`` as in tile.md 5.4):

* float -> float: one rounding with the FP mode trm[2:0]; NaN -> canonical NaN (NV for a
  signalling NaN); overflow -> Inf or the largest finite number by mode, or, with the saturate
  bit trm[5], always the largest finite number (counted as saturation).  e4m3 has no Inf: an
  overflow or an Inf input becomes NaN (OCP non-saturating; an Inf input also sets NV), or
  +-448 when saturating.
* float -> int: RISC-V ``fcvt`` semantics: rounded with trm[2:0] (``f2i_rounding="frm"``,
  default) or with the integer mode trm[4:3] (``"irm"``); out-of-range values and +-Inf clamp to
  the bounds and NaN gives the largest integer, all with NV (never counted as saturation);
  an inexact in-range result sets NX.
* int -> float: exact integer rounded with trm[2:0] (NX/OF as IEEE).
* int -> int: sign-extension when widening; narrowing wraps (keeps the low bits) or, with the
  saturate bit, clamps (counted as saturation).  No fflags.
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

from . import formats as F
from .formats import NV, Format
from .rounding import Trm, float_mode_name, int_mode_name, round_float, to_int_saturating

U64 = npt.NDArray[np.uint64]
U8 = npt.NDArray[np.uint8]
B = npt.NDArray[np.bool_]

F2I_ROUNDING = ("frm", "irm")


def int_result(v: npt.NDArray, fmt: Format, saturate: bool) -> tuple[U64, B]:
    """Integer values (any range) to ``fmt`` bit patterns: wrap, or clamp when ``saturate``."""
    v = np.asarray(v)
    if saturate:
        over = (v < fmt.int_min) | (v > fmt.int_max)
        v = np.where(v < fmt.int_min, fmt.int_min, np.where(v > fmt.int_max, fmt.int_max, v))
    else:
        over = np.zeros(v.shape, bool)
    mask = (1 << fmt.bits) - 1
    bits = np.asarray(v & mask, dtype=np.int64) if v.dtype == object else v.astype(np.int64) & mask
    return bits.astype(np.uint64), over


def f2i_mode(trm: Trm, f2i_rounding: str) -> str:
    """The rounding mode name used when a real value becomes an integer element."""
    if f2i_rounding == "frm":
        return float_mode_name(trm.frm)
    if f2i_rounding == "irm":
        return int_mode_name(trm.irm)
    raise ValueError(f"f2i_rounding must be one of {F2I_ROUNDING}, not {f2i_rounding!r}")


def float_to_int(x: npt.NDArray[np.float64], fmt: Format, trm: Trm, f2i_rounding: str
                 ) -> tuple[U64, U8]:
    """Float64 values to integer-format bits with ``fcvt`` clamping; (bits, flags)."""
    v, flags = to_int_saturating(x, f2i_mode(trm, f2i_rounding), fmt.int_min, fmt.int_max)
    return (v & ((1 << fmt.bits) - 1)).astype(np.uint64), flags


def convert_codes(bits: U64, src: Format, dst: Format, trm: Trm, *, f2i_rounding: str = "frm"
                  ) -> tuple[U64, U8, B]:
    """Element bit patterns of ``src`` to ``dst``: (bits, per-element fflags, saturated mask)."""
    none = np.zeros(bits.shape, bool)
    if src.is_float:
        x = F.to_float64(bits, src)
        snan = np.where(F.is_snan_code(bits, src), NV, 0).astype(np.uint8)
        if dst.is_float:
            out, flags, sat = round_float(x, dst, trm.frm, saturate=trm.sat)
            if dst.inf_code is None and not trm.sat:     # an Inf operand has no e4m3 encoding
                snan |= np.where(np.isinf(x), NV, 0).astype(np.uint8)
            return out, flags | snan, sat
        out, flags = float_to_int(x, dst, trm, f2i_rounding)
        return out, flags | snan, none
    v = F.to_int64(bits, src)
    if dst.is_float:
        return round_float(v.astype(np.float64), dst, trm.frm, saturate=trm.sat)
    out, sat = int_result(v, dst, trm.sat)
    return out, np.zeros(bits.shape, np.uint8), sat


def convert(src: bytes, src_fmt: Format | int | str, dst_fmt: Format | int | str, *, trm: int,
            f2i_rounding: str = "frm") -> tuple[bytes, int, bool]:
    """Convert every element of ``src``; returns (dst bytes, accrued fflags, saturated).

    ``src_fmt``/``dst_fmt``: a :class:`Format`, a ``tfmt`` code or a format name (``"fp64"``
    for an FPR scalar).  NaN-boxing of FPR values is the caller's job.
    """
    s = F.lookup(src_fmt)
    d = F.lookup(dst_fmt)
    out, flags, sat = convert_codes(F.codes(src, s), s, d, Trm.parse(trm), f2i_rounding=f2i_rounding)
    return F.pack(out, d), int(np.bitwise_or.reduce(flags, initial=0)), bool(sat.any())
