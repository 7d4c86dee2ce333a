"""Tensix data formats: the 4-bit format codes, datum widths, and bit-level conversions.

The unpackers and packers name a format with a 4-bit code (``InDataFormat``,
``OutDataFormat``, ``Unpack_data_format_cntx*`` …; WormholeB0 .../Unpackers/
FormatConversion.md, "The encoding of type names"); codes 12 and 13 name nothing.
INT8 also means UINT8 when ``ALU_FORMAT_SPEC_REG0_Src?Unsigned`` is set.  The BFP
formats keep a sign bit and a magnitude per datum (8, 4 or 2 bits) and share one 8-bit
exponent per 16 datums; BFP8/4/2 widen to BF16, the "a" variants (5-bit exponent) to
FP16 (FloatBitPatterns.md, "BFP").

Everything here is numpy block work on ``uint32`` arrays of bit patterns (Python ints
work too), with no state: the unpackers (:mod:`tessera_tensix.unpack`) and the packers
use these tables.  The SrcA/SrcB cell layouts (19 bits; SrcASrcB.md): TF32 is
``sign[18] | mantissa10[17:8] | exponent8[7:0]``; BF16 is TF32 with the three low
mantissa bits zero; FP16 puts its 5-bit exponent in the low bits of the 8-bit exponent
field; integer "8" is overlaid onto FP16 with exponent 16 (0 for magnitude 0); integer
"16" keeps the high byte at [18:11] and the low byte at [7:0].  The Dest layouts are
:mod:`tessera_tensix.dest`'s (``shuffle_bf16`` …).

One conversion the pages name but do not define, ``FP32ToFP16`` (UNPACR_Regular.md), is
modelled after the packer's late conversion to FP16 (Packers/FormatConversion.md):
FP32 denormals and values below the FP16 normal range (|x| < 2**-14) become signed
zero, exponents too large for FP16 (and FP32 Inf/NaN) saturate to the largest FP16
pattern (exponent 31, mantissa 0x3FF, which the matrix unit treats like infinity), and
the mantissa is truncated to 10 bits.
"""

from __future__ import annotations

from enum import IntEnum
from typing import Any

import numpy as np

from tessera_tensix.dest import shuffle_bf16, shuffle_fp16, shuffle_fp32

U32 = np.uint32


class Fmt(IntEnum):
    """The 4-bit data-format codes of the unpackers and packers."""

    FP32 = 0
    FP16 = 1
    BFP8A = 2
    BFP4A = 3
    TF32 = 4
    BF16 = 5
    BFP8 = 6
    BFP4 = 7
    INT32 = 8
    INT16 = 9
    FP8 = 10        # e5m2
    BFP2A = 11
    INT8 = 14       # INT8 (sign-magnitude) or UINT8, per ALU_FORMAT_SPEC_REG0_Src?Unsigned
    BFP2 = 15


#: display names as the vendor's pages write them
NAMES = {Fmt.FP32: "FP32", Fmt.FP16: "FP16", Fmt.BFP8A: "BFP8a", Fmt.BFP4A: "BFP4a",
         Fmt.TF32: "TF32", Fmt.BF16: "BF16", Fmt.BFP8: "BFP8", Fmt.BFP4: "BFP4",
         Fmt.INT32: "INT32", Fmt.INT16: "INT16", Fmt.FP8: "FP8", Fmt.BFP2A: "BFP2a",
         Fmt.INT8: "INT8", Fmt.BFP2: "BFP2"}

#: bits one datum occupies in L1 (exponents of BFP formats are stored separately)
DATUM_BITS = {Fmt.FP32: 32, Fmt.TF32: 32, Fmt.INT32: 32, Fmt.FP16: 16, Fmt.BF16: 16,
              Fmt.INT16: 16, Fmt.FP8: 8, Fmt.INT8: 8, Fmt.BFP8: 8, Fmt.BFP8A: 8,
              Fmt.BFP4: 4, Fmt.BFP4A: 4, Fmt.BFP2: 2, Fmt.BFP2A: 2}

#: block-float formats: BF16-based and FP16-based ("a"), with their datum widths
BFP = frozenset({Fmt.BFP8, Fmt.BFP4, Fmt.BFP2, Fmt.BFP8A, Fmt.BFP4A, Fmt.BFP2A})
BFP_A = frozenset({Fmt.BFP8A, Fmt.BFP4A, Fmt.BFP2A})
#: formats whose datums are 32 / 16 bits wide in SrcA/SrcB/Dest addressing
WIDE32 = frozenset({Fmt.FP32, Fmt.TF32, Fmt.INT32})
WIDE16 = frozenset({Fmt.FP16, Fmt.BF16, Fmt.INT16})


def name(code: int) -> str:
    """``"BFP8a"`` for a code, ``"format 12"`` for a code that names nothing."""
    try:
        return NAMES[Fmt(code)]
    except ValueError:
        return f"format {code}"


def lookup(text: str) -> Fmt:
    """The format called ``text`` (case-insensitive: ``bf16``, ``BFP8a``, ``fp8``)."""
    for code, label in NAMES.items():
        if label.lower() == text.lower():
            return code
    raise KeyError(text)


def datum_bits(code: int) -> int | None:
    """Bits per datum in L1, or None for a code that names no format."""
    try:
        return DATUM_BITS[Fmt(code)]
    except ValueError:
        return None


# ------------------------------------------------------------ widening to 16/32-bit formats
#: leading zeros of every 8-bit value (8 for zero)
_LZ8 = np.array([8 - v.bit_length() for v in range(256)], dtype=U32)


def _bfp8_parts(datum: Any, exp: Any) -> tuple[Any, Any, Any, Any]:
    """Sign, normalised magnitude, adjusted exponent (uint8 wrap) and zero mask of BFP8 datums."""
    datum = np.asarray(datum, dtype=U32) & U32(0xFF)
    exp = np.asarray(exp, dtype=U32) & U32(0xFF)
    sign = datum >> U32(7)
    mag = (datum << U32(1)) & U32(0xFF)
    lz = _LZ8[mag]
    norm = (mag << lz) & U32(0xFF)
    adj = ((exp.astype(np.int64) - lz) & 0xFF).astype(U32)       # uint8 arithmetic wraps
    return sign, norm, adj, mag == 0


def bfp8_to_bf16(datum: Any, exp: Any) -> np.ndarray:
    """BFP8 datum (sign + 7-bit magnitude) with its shared exponent -> BF16 bits
    (FloatBitPatterns.md, BFP8ToBF16; BFP4/BFP2 datums are shifted up to 8 bits first)."""
    sign, norm, adj, zero = _bfp8_parts(datum, exp)
    bits = (sign << U32(15)) | (adj << U32(7)) | (norm & U32(0x7E))
    return np.where(zero, np.where(sign != 0, U32(0xFF80), U32(0)), bits).astype(U32)


def bfp8a_to_fp16(datum: Any, exp: Any) -> tuple[np.ndarray, np.ndarray]:
    """BFP8a datum with its shared exponent -> (FP16 bits, bad) where ``bad`` marks
    datums whose adjusted exponent does not fit 5 bits (undefined; the bits are what the
    page's expression computes in 16 bits: the excess exponent bits spill upwards)."""
    sign, norm, adj, zero = _bfp8_parts(datum, exp)
    bits = ((sign << U32(15)) | (adj << U32(10)) | ((norm & U32(0x7E)) << U32(3))) & U32(0xFFFF)
    bad = ~zero & ((adj & U32(0xE0)) != 0)
    return np.where(zero, np.where(sign != 0, U32(0xFC00), U32(0)), bits).astype(U32), bad


#: shift that widens a BFP4 / BFP2 datum to BFP8 (sign to bit 7)
BFP_WIDEN = {Fmt.BFP8: 0, Fmt.BFP8A: 0, Fmt.BFP4: 4, Fmt.BFP4A: 4, Fmt.BFP2: 6, Fmt.BFP2A: 6}


def fp32_to_bf16_flush(bits: Any) -> np.ndarray:
    """FP32 -> BF16 as the unpackers do it: denormals flushed to signed zero, then truncated."""
    bits = np.asarray(bits, dtype=U32)
    bits = np.where((bits & U32(0x7F80_0000)) == 0, bits & U32(0x8000_0000), bits)
    return (bits >> U32(16)).astype(U32)


def fp32_to_fp16(bits: Any) -> np.ndarray:
    """FP32 -> FP16 (the module docstring's choice for the undefined ``FP32ToFP16``)."""
    bits = np.asarray(bits, dtype=U32)
    sign = (bits >> U32(16)) & U32(0x8000)
    exp = ((bits >> U32(23)) & U32(0xFF)).astype(np.int64)
    man = (bits >> U32(13)) & U32(0x3FF)
    e16 = exp - 112
    out = sign | (np.clip(e16, 0, 31).astype(U32) << U32(10)) | man
    out = np.where((e16 <= 0) | (exp == 0), sign, out)
    out = np.where((e16 >= 31) | (exp == 255), sign | U32(0x7FFF), out)
    return out.astype(U32)


def int8_overlay(bits: Any, unsigned: bool) -> np.ndarray:
    """INT8 (sign-magnitude) or UINT8 datum -> integer "8" overlaid on FP16 bits: magnitude
    in the mantissa, exponent 16 (0 when the magnitude is 0), sign at bit 15."""
    bits = np.asarray(bits, dtype=U32) & U32(0xFF)
    sign = U32(0) if unsigned else bits & U32(0x80)
    mag = bits - sign
    return (mag | np.where(mag != 0, U32(16 << 10), U32(0)) | (sign << U32(8))).astype(U32)


# ------------------------------------------------------------------ SrcA / SrcB cell layouts
def src_tf32(x19: Any) -> np.ndarray:
    """TF32 bits (sign[18], exponent[17:10], mantissa[9:0]) -> Src cell (WriteSrcTF32)."""
    x = np.asarray(x19, dtype=U32) & U32(0x7FFFF)
    return ((x & U32(0x40000)) | ((x & U32(0x3FF)) << U32(8)) | ((x & U32(0x3FC00)) >> U32(10))).astype(U32)


def src_bf16(x16: Any) -> np.ndarray:
    """BF16 bits -> Src cell (TF32 with three zero low mantissa bits)."""
    return src_tf32((np.asarray(x16, dtype=U32) & U32(0xFFFF)) << U32(3))


def src_fp16(x16: Any) -> np.ndarray:
    """FP16 bits -> Src cell (the 5-bit exponent in the low bits of the exponent field)."""
    x = np.asarray(x16, dtype=U32) & U32(0xFFFF)
    return src_tf32(((x & U32(0x8000)) << U32(3)) | (x & U32(0x7FFF)))


def src_int16(x16: Any) -> np.ndarray:
    """Integer "16" bits -> Src cell: high byte at [18:11], low byte at [7:0]."""
    x = np.asarray(x16, dtype=U32) & U32(0xFFFF)
    return (((x & U32(0xFF00)) << U32(3)) | (x & U32(0xFF))).astype(U32)


def src_to_tf32(cell: Any) -> np.ndarray:
    """Src cell -> TF32 bits in IEEE order (sign[18], exponent[17:10], mantissa[9:0])."""
    c = np.asarray(cell, dtype=U32) & U32(0x7FFFF)
    return ((c & U32(0x40000)) | ((c & U32(0xFF)) << U32(10)) | ((c >> U32(8)) & U32(0x3FF))).astype(U32)


def src_to_fp32(cell: Any) -> np.ndarray:
    """Src cell holding TF32/BF16 -> float32 (TF32 widened: 13 zero mantissa bits)."""
    return (src_to_tf32(cell) << U32(13)).astype(U32).view(np.float32)


def src_to_fp16(cell: Any) -> np.ndarray:
    """Src cell holding FP16 -> float16 (IEEE reading of the bits)."""
    t = src_to_tf32(cell)
    bits = ((t >> U32(3)) & U32(0x8000)) | (t & U32(0x7FFF))
    return bits.astype(np.uint16).view(np.float16)


def src_to_int(cell: Any) -> np.ndarray:
    """Src cell holding integer "8" -> signed value (sign and 10-bit magnitude)."""
    t = src_to_tf32(cell)
    mag = (t & U32(0x3FF)).astype(np.int64)
    return np.where(t & U32(0x40000), -mag, mag)


# ------------------------------------------------------------------------- Dest layouts
#: re-exported for the packers and unpackers: IEEE order -> Dest cell order
dst_bf16 = shuffle_bf16
dst_fp16 = shuffle_fp16
dst_fp32 = shuffle_fp32
