"""The packers: datums from Dest (or L1) through format conversion into L1.

Functional models: WormholeB0/TensixTile/TensixCoprocessor/PACR.md, PACR_SETREG.md and
Packers/{README,InputAddressGenerator,OutputAddressGenerator,FormatConversion,
EdgeMasking,ReLU,ExponentHistogram,ExponentThresholding,Downsampling,Compression}.md,
FloatBitPatterns.md (BFP), ADCs.md, Dst.md, TDMA-RISC.md (``SetPackRegAddr``,
``SetScaler``).  Blackhole has no packer pages; its deltas (one packer with four Dest
read interfaces, configuration contexts, strided Dest reads, row padding) come from the
PACR argument descriptions of tt-llk's ``assembly.yaml`` and are listed below.

One PACR is executed at once, as numpy block work: the input address generator picks a
contiguous run of datums (Dest cells, L1 bytes or ``/dev/null`` zeros), the early
format conversion maps them to an intermediate format, edge masking, ReLU, the exponent
histogram, downsampling and exponent thresholding follow, and the late format
conversion produces the L1 bytes, buffered per output stream and written to L1 in
aligned 16-byte pieces.  The packer state (``core.unit("packers")``) keeps what
outlives an instruction: each packer's stream addresses and partly filled 16-byte
buffers, its tile position generator, the exponent histogram and the TDMA-RISC
registers of PACR_SETREG.

Intermediate datums are ``uint32`` arrays of one *kind*: ``e8`` (IEEE FP32 bit order;
TF32/BF16/E8M6 have their low mantissa bits zero), ``e5`` (IEEE FP16 bit order in the
low 16 bits; E5M7/E5M6/FP8 likewise), ``i32`` (sign-magnitude), ``i16`` (16 opaque
bits), ``i8`` (sign-magnitude INT8 or UINT8).  The late conversion reads them as the
kind of ``In_data_format``.

Choices where the pages are silent (also in docs/tensix.md, "Packers"):

* Configuration is read from the bank of the issuing thread's ``CFG_STATE_ID_StateID``
  (:func:`tessera_tensix.cfgregs.config_for`).  Packer ``i`` reads ``Packers[i].Config`` from ``THCON_SEC0_REG1_*``,
  ``THCON_SEC0_REG8_*``, ``THCON_SEC1_REG1_*``, ``THCON_SEC1_REG8_*`` (i = 0..3, as
  SETDMAREG_Special.md states), ``Pack_limit_address``/``Pack_fifo_size`` from
  ``THCON_SEC0_REG9_Pack_0_2_*``, ``…SEC0_REG9_Pack_1_3_*``, ``…SEC1_REG9_Pack_0_2_*``,
  ``…SEC1_REG9_Pack_1_3_*``; the per-packer 2-bit selects of
  ``PCK_EDGE_TILE_{ROW,FACE}_SET_SELECT_select`` are bits ``2i+1:2i``.
* Deterministic rounding is round to nearest, ties away from zero; stochastic rounding
  (``ALU_ROUNDING_MODE_Packer_srnd_en``), L1 accumulation (``Pack_L1_Acc``) and
  ``INT_DESCALE_Mode`` 1 (per-row shift amounts with an unnamed index) are not
  modelled: a PACR that would use them stops.
* BFP: a group of 16 datums shares the largest exponent ``E``; a datum with exponent
  ``e`` and 8-bit significand ``s`` gets magnitude ``round(s / 2**(E - e + 1))``,
  saturated to 127 (the page does not say what a round-up past 127 does); a datum whose
  magnitude is 0 is written with sign 0 (sign 1 with magnitude 0 means -2**128).
  BFP4/BFP2 keep the top 3/1 magnitude bits; two (four) datums share a byte, the first
  in the low bits.  A partial group at a flush is padded with zero datums.
* Conversion corner cases: denormal and |x| <= 2**-14 inputs narrowed to a 5-bit
  exponent become signed zero (the pages call 2**-15 < |x| < 2**-14 mishandled);
  FP16 denormals widened to an 8-bit exponent become signed zero ("mishandled");
  rounding a 5-bit-exponent value past exponent 31 saturates; edge masking's -inf is
  0xFF800000 (e8), 0xFC00 (e5) and the most negative sign-magnitude integer otherwise;
  UINT8 shift-round-saturate sends negative values to 0.
* The tile position generator restarts at X=Y=Z=0 when a PACR with Last or Flush
  ends; the exponent histogram counts every datum fetched from Dest (also those
  downsampling discards; INT8 intermediates count as exponent 0).
* Downsampling's mask restarts with each PACR (as the model's local variable does);
  ``Downsample_rate`` is not described and not used.
* Compression (on unless ``Disable_zero_compress``): a datum is "zero" when all its
  intermediate bits are 0; each row keeps its first and last datum and every datum
  that is not zero, and a zero run longer than 15 keeps every 16th zero; RSI[0] = 0 is
  written when the row-start stream gets a new address; a row ends at a PACR without
  Concat, or at Last/Flush.
* Invalid Dest rows (ZEROACC) read as zero bits.
* ``Read_32b_data`` reads ``Dst32b[Row]`` with the datum address's full 10-bit ``Row``:
  EdgeMasking.md's "Row will be reduced from 10 bits to 9" is the reduction Dst.md's
  ``Adj32`` (WormholeB0 ``AdjRow``) performs, which keeps bit 9 and yields 512 distinct
  physical rows.  Masking the row to 9 bits first would fold Dst32b rows 512..1023 (the
  second half-section at tt-llk's ``DEST_REGISTER_HALF_SIZE`` offset) onto rows 0..511,
  away from where unpack-to-Dest, the FPU and the SFPU write them.

Blackhole (no vendor page; tt-llk assembly.yaml argument descriptions):

* one packer; ``CfgContext`` (0..3) selects the configuration slot that is packer
  ``CfgContext``'s on Wormhole (with its ``DEST_TARGET_REG_CFG_PACK_SEC``,
  ``PACK_COUNTERS_SEC`` and edge selects); ``OvrdThreadId`` takes the ADC from the
  instruction's ``AddrCntContext`` (3 means 0, as on Wormhole);
* ``ReadIntfSel`` selects up to four Dest read interfaces (0 means all four); interface
  ``k`` reads datums X_start..X_end of row ``+k`` (``DstAccessMode`` 0) or row ``+16k``
  (1: strided, as tt-llk's untilize comment shows for two interfaces), interfaces in
  ascending order; ``ZeroWrite`` with ``ReadIntfSel`` 0 writes X_end+1 zeros;
* ``RowPadZero`` pads each interface's row (bit 20 clear) or the stream since its last
  new address (bit 20 set) with zero datums to a multiple of 16, always (mode 1), when
  Concat is clear (2) or when Last is set (3); ``CtxtCtrl`` other than 0 is not modelled.
* PACR_SETREG: ``ModeSel`` 1 loads bits 18:3 into the low (bit 2 clear) or high half of
  the packer's 32-bit write-data flops; ``ModeSel`` 0 writes those flops to
  ``0xFFB00000 + SetRegBase[AddrSel] + (StreamId << 12)``, ``SetRegBase`` having four
  entries.

Not modelled (the pages do not describe them): packer tile-size and all-zero-flag
metadata (``LastTileSize``, ``AccTileSize``, ``AllZeroFlags``), the metadata FIFOs, the
``Dis_shared_exp_assembler`` / ``Force_shared_exp`` / ``Haloize_mode`` / throttle
fields, Blackhole ``pack_start_intf_pos`` and ``Auto_set_last_pacr_intf_sel``.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from typing import Any

import numpy as np

from tessera.control import Trap
from tessera_tensix import rules
from tessera_tensix.adc import PACKERS, adcs
from tessera_tensix.cfgregs import config_for
from tessera_tensix.dest import ADJ16, ADJ32, unshuffle_bf16, unshuffle_fp16, unshuffle_fp32
from tessera_tensix.formats import Fmt
from tessera_tensix.formats import name as fmt_name

# ------------------------------------------------------------------ data formats
# the 4-bit codes of the shared definitions (formats.py), as plain ints for dict keys
FP32, FP16, BFP8A, BFP4A, TF32, BF16, BFP8, BFP4 = (int(Fmt.FP32), int(Fmt.FP16), int(Fmt.BFP8A),
                                                    int(Fmt.BFP4A), int(Fmt.TF32), int(Fmt.BF16),
                                                    int(Fmt.BFP8), int(Fmt.BFP4))
INT32, INT16, FP8, BFP2A, INT8, BFP2 = (int(Fmt.INT32), int(Fmt.INT16), int(Fmt.FP8), int(Fmt.BFP2A),
                                        int(Fmt.INT8), int(Fmt.BFP2))
FORMAT_CODES = frozenset(int(f) for f in Fmt)
E8, E5, I32, I16, I8 = "e8", "e5", "i32", "i16", "i8"
#: the kind of intermediate datum each format names when it is In_data_format
KIND = {FP32: E8, TF32: E8, BF16: E8, BFP8: E8, BFP4: E8, BFP2: E8,
        FP16: E5, BFP8A: E5, BFP4A: E5, BFP2A: E5, FP8: E5, INT32: I32, INT16: I16, INT8: I8}
BFP_8BIT_EXP = {BFP8: 7, BFP4: 3, BFP2: 1}          # format -> magnitude bits kept
BFP_5BIT_EXP = {BFP8A: 7, BFP4A: 3, BFP2A: 1}
#: bits per output datum of the non-BFP formats
OUT_BITS = {FP32: 32, TF32: 32, INT32: 32, BF16: 16, FP16: 16, INT16: 16, FP8: 8, INT8: 8}
#: -inf of each intermediate kind (edge masking's fill)
NEG_INF = {E8: 0xFF800000, E5: 0xFC00, I32: 0xFFFFFFFF, I16: 0xFFFF, I8: 0xFF}

_U32 = np.uint32
_I64 = np.int64

#: the configuration prefix of packer i (Wormhole) / context i (Blackhole)
SLOT = ("THCON_SEC0_REG1_", "THCON_SEC0_REG8_", "THCON_SEC1_REG1_", "THCON_SEC1_REG8_")
LIMIT = ("THCON_SEC0_REG9_Pack_0_2_", "THCON_SEC0_REG9_Pack_1_3_",
         "THCON_SEC1_REG9_Pack_0_2_", "THCON_SEC1_REG9_Pack_1_3_")
#: edge-masking field names, built once: masks, row-set and face-set mappings
EDGE_MASKS = tuple(f"PCK_EDGE_OFFSET_SEC{c}_mask" for c in range(4))
ROW_SETS = tuple(tuple(f"TILE_ROW_SET_MAPPING_{b}_row_set_mapping_{j}" for j in range(16)) for b in range(4))
FACE_SETS = tuple(tuple(f"TILE_FACE_SET_MAPPING_{a}_face_set_mapping_{j}" for j in range(16)) for a in range(4))
#: Wormhole PackerMask values with a defined meaning (PACR.md)
DEFINED_MASKS = frozenset({0b0000, 0b0001, 0b0010, 0b0100, 0b1000, 0b0011, 0b1100, 0b1111})


class PackerStop(Exception):
    """A conversion the pages mark undefined: the message is the rule broken, and the
    ``lenient`` attribute is what a ``--lenient`` run continues with."""


# ---------------------------------------------------------------------- rounding
def round_e8(x: np.ndarray, mant: int) -> np.ndarray:
    """FP32 bits rounded to ``mant`` mantissa bits, ties away from zero: denormals and -0
    become +0, NaN becomes infinity (FormatConversion.md, "Rounding")."""
    sign = x & 0x80000000
    exp = (x >> 23) & 0xFF
    drop = 23 - mant
    mag = x & 0x7FFFFFFF
    if drop:
        mag = ((mag + (1 << (drop - 1))) >> drop) << drop
    out = np.where(exp == 255, sign | 0x7F800000, sign | mag)
    return np.where(exp == 0, 0, out).astype(_U32)


def trunc_e8(x: np.ndarray, mant: int) -> np.ndarray:
    """FP32 bits truncated to ``mant`` mantissa bits."""
    return (x & (0xFFFFFFFF ^ ((1 << (23 - mant)) - 1))).astype(_U32)


def round_e5(f: np.ndarray, mant: int) -> np.ndarray:
    """FP16 bits rounded to ``mant`` mantissa bits, ties away from zero; denormals and -0
    become +0; a carry past exponent 31 saturates to the largest value."""
    sign = f & 0x8000
    exp = (f >> 10) & 0x1F
    drop = 10 - mant
    mag = f & 0x7FFF
    if drop:
        mag = ((mag + (1 << (drop - 1))) >> drop) << drop
    mag = np.minimum(mag, 0x7FFF & ~((1 << drop) - 1))
    return np.where(exp == 0, 0, sign | mag).astype(_U32)


def e5_to_e8(f: np.ndarray) -> np.ndarray:
    """FP16 bits (Tensix: no Inf/NaN) -> FP32 bits; exponent 0 becomes signed zero."""
    sign = (f & 0x8000).astype(_U32) << 16
    exp = (f >> 10) & 0x1F
    body = ((exp + 112) << 23) | ((f & 0x3FF) << 13)
    return (sign | np.where(exp == 0, 0, body)).astype(_U32)


def e8_to_fp16(x: np.ndarray) -> np.ndarray:
    """FP32 bits -> FP16 bits: saturate the exponent (Inf/NaN and too large -> largest
    value, Tensix FP16 has neither), flush what falls below exponent 1, truncate."""
    sign = (x >> 16) & 0x8000
    exp = ((x >> 23) & 0xFF).astype(_I64)
    k = exp - 112
    body = (k << 10) | ((x >> 13) & 0x3FF)
    body = np.where((exp == 255) | (k > 31), 0x7FFF, np.where(k <= 0, 0, body))
    return (sign | body).astype(_U32)


def shift_round_saturate(x: np.ndarray, shift: int, unsigned: bool) -> np.ndarray:
    """Sign-magnitude INT32 -> INT8 (±127) or UINT8 (0..255): shift the magnitude right,
    round with the shifted-out bits (half away from zero), saturate."""
    sign = x >> 31
    mag = (x & 0x7FFFFFFF).astype(_I64)
    if shift:
        mag = (mag + (1 << (shift - 1))) >> shift
    if unsigned:
        return np.where(sign != 0, 0, np.minimum(mag, 255)).astype(_U32)
    return ((sign << 7) | np.minimum(mag, 127)).astype(_U32)


# ------------------------------------------------------------ early conversion
@dataclass(frozen=True)
class DestRead:
    """The early conversion's configuration (FormatConversion.md, "Configuring")."""

    read32: bool
    inter: int          # IntermediateFormat
    raw: bool           # PCK_DEST_RD_CTRL_Read_int8
    unsigned: bool
    round10: bool
    shift: int          # INT_DESCALE shift amount; -1 for Mode 1 (not modelled)


def early_convert(raw: np.ndarray, c: DestRead) -> tuple[np.ndarray, str]:
    """Dest cells (Dst32b values or Dst16b cells, stored layout) -> intermediate datums.

    Raises :class:`PackerStop` for the combinations the page marks "No"; its ``lenient``
    attribute is the fallback to use."""
    f = c.inter
    if c.read32:
        x = unshuffle_fp32(raw.astype(_U32)).astype(_U32)
        if f == INT32:
            return x, I32
        if f == FP32:
            return (round_e8(x, 10) if c.round10 and not c.raw else x), E8
        if f == TF32:
            return (x if c.raw else round_e8(x, 10)), E8
        if f == BF16:
            if c.raw:
                return trunc_e8(x, 7), E8
            return round_e8(x, 10 if c.round10 else 7), E8
        if f == BFP8:
            return (trunc_e8(x, 7) if c.raw else round_e8(x, 6)), E8
        if f == INT8:
            if c.raw:
                return ((x & 0xFF) if c.unsigned else ((x >> 31) << 7) | (x & 0x7F)).astype(_U32), I8
            return shift_round_saturate(x, c.shift, c.unsigned), I8
        raise _no(f"the early conversion from 32-bit Dest to {fmt_name(f)} is not defined",
                  (x, E8))
    h = raw.astype(_U32)
    if f in (FP32, TF32, BF16, BFP8):
        x = (unshuffle_bf16(h) << 16).astype(_U32)
        if f == FP32 and not c.round10:
            raise _no("the early conversion from 16-bit Dest (BF16) to FP32 is not defined "
                      "(keep BF16 and widen in the late conversion)", (x, E8))
        if f == BFP8:
            return (x if c.raw else round_e8(x, 6)), E8
        if f == BF16 and not c.round10:
            return (x if c.raw else round_e8(x, 7)), E8
        return (x if c.raw else round_e8(x, 10)), E8
    if f in (FP16, BFP8A, FP8):
        g = unshuffle_fp16(h).astype(_U32)
        if f == FP16:
            return (g if c.raw else round_e5(g, 10)), E5
        if f == BFP8A:
            return ((g & 0xFFF8) if c.raw else round_e5(g, 6)), E5
        return (g & 0xFF00).astype(_U32), E5
    if f == INT16:
        return h, I16
    if f == INT8:
        out = ((h >> 15) << 7).astype(_U32)
        if c.unsigned:
            raise _no("the early conversion from 16-bit Dest to UINT8 is not defined", (out, I8))
        return out, I8
    raise _no(f"the early conversion from 16-bit Dest to {fmt_name(f)} is not defined", (h, I16))


@functools.lru_cache(maxsize=64)
def early16_table(c: DestRead) -> tuple[np.ndarray, str]:
    """The early conversion of every 16-bit Dest cell under ``c`` (a lookup table, so a
    PACR converts its datums with one ``take``); raises like :func:`early_convert`."""
    table, kind = early_convert(np.arange(1 << 16, dtype=_U32), c)
    table = table.astype(_U32)
    table.setflags(write=False)
    return table, kind


def _no(rule: str, fallback: Any) -> PackerStop:
    stop = PackerStop(rule)
    stop.lenient = fallback        # type: ignore[attr-defined]
    return stop


def early_convert_lenient(raw: np.ndarray, c: DestRead) -> tuple[np.ndarray, str]:
    """The fallback a ``--lenient`` run takes where :func:`early_convert` stops."""
    try:
        return early_convert(raw, c)
    except PackerStop as stop:
        return stop.lenient                 # type: ignore[attr-defined]


def l1_convert(raw: np.ndarray, width: int, inter: int) -> tuple[np.ndarray, str]:
    """Datums read from L1 (packer 0, Source_interface_selection): no early conversion,
    only the re-positioning of FormatConversion.md's L1 table."""
    v = raw.astype(_U32)
    table: dict[tuple[int, int], tuple[Any, str]] = {
        (32, FP32): (v, E8), (32, INT32): (v, I32), (32, INT16): (v >> 16, I16),
        (16, BF16): (v << 16, E8), (16, FP16): (v, E5), (16, INT32): (v << 16, I32),
        (16, INT16): (v, I16), (16, INT8): (v >> 8, I8),
        (8, BF16): ((((v & 0x80) << 8) | (v & 0x7F)) << 16, E8),
        (8, BFP8): ((((v & 0x80) << 8) | (v & 0x7F)) << 16, E8),
        (8, BFP8A): (((v & 0x80) << 8) | ((v & 0x7F) << 3), E5),
        (8, FP8): (v << 8, E5), (8, INT32): (v << 24, I32), (8, INT16): (v << 8, I16),
        (8, INT8): (v, I8)}
    got = table.get((width, inter))
    if got is None:
        raise _no(f"a packer cannot turn {width}-bit datums from L1 into {fmt_name(inter)}",
                  (v, KIND.get(inter, I32)))
    return got[0].astype(_U32), got[1]


# -------------------------------------------------------------------- ReLU
def fp16_value(bits: np.ndarray) -> np.ndarray:
    """Tensix FP16 bits -> float64 (exponent 31 is a normal exponent; 0 is zero)."""
    b = np.asarray(bits, dtype=_I64)
    e = (b >> 10) & 0x1F
    mag = np.where(e == 0, 0.0, (1.0 + (b & 0x3FF) / 1024.0) * np.exp2(e - 15.0))
    return np.where(b & 0x8000, -mag, mag)


def values_of(vals: np.ndarray, kind: str) -> np.ndarray:
    """Intermediate datums as float64 numbers (ReLU compares numbers)."""
    if kind == E8:
        return vals.astype(_U32).view(np.float32).astype(np.float64)
    if kind == E5:
        return fp16_value(vals)
    bits = {I32: 31, I16: 15, I8: 7}[kind]
    mag = (vals & ((1 << bits) - 1)).astype(np.float64)
    return np.where((vals >> bits) & 1, -mag, mag)


def relu(vals: np.ndarray, kind: str, mode: int, threshold_bits: int, threshold_fp16: bool) -> np.ndarray:
    """ReLUStage of ReLU.md on intermediate datums (``mode`` is ApplyRelu & 3); the
    threshold is BF16 or FP16 bits (``threshold_fp16``)."""
    if mode == 0:
        return vals
    x = values_of(vals, kind)
    out = np.where(x <= 0, 0, vals)
    if mode == 1:
        return out.astype(_U32)
    t16 = np.array([threshold_bits], dtype=_U32)
    t = float(fp16_value(t16)[0]) if threshold_fp16 else float((t16 << 16).view(np.float32)[0])
    if mode == 2:
        return np.where(x <= t, 0, vals).astype(_U32)
    if kind == E5:        # the threshold as a datum of the intermediate kind
        tbits = threshold_bits if threshold_fp16 else int(e8_to_fp16(t16 << 16)[0])
    else:
        tbits = int(e5_to_e8(t16)[0]) if threshold_fp16 else threshold_bits << 16
    return np.where(x > t, tbits, out).astype(_U32)


#: intermediate kinds that share a bit width (IntermediateFormat INT32 feeding FP32, …)
SAME_WIDTH = {E8: E8, I32: E8, E5: E5, I16: E5, I8: I8}


# -------------------------------------------------------------------- exponents
def exponents(vals: np.ndarray, kind: str) -> np.ndarray:
    """``d.Exponent`` of ExponentHistogram.md / ExponentThresholding.md."""
    if kind in (E8, I32):
        return ((vals >> 23) & 0xFF).astype(_I64)
    if kind == E5:
        return ((vals >> 10) & 0x1F).astype(_I64)
    if kind == I16:
        return (vals & 0xFF).astype(_I64)
    return np.zeros(vals.shape, dtype=_I64)


# ------------------------------------------------------------ late conversion
def late_plan(in_fmt: int, out_fmt: int) -> str | None:
    """Why the late conversion from ``in_fmt`` to ``out_fmt`` is not defined, or None."""
    kind = KIND.get(in_fmt)
    if kind is None or in_fmt in (BFP4, BFP2, BFP4A, BFP2A):
        return f"In_data_format {fmt_name(in_fmt)} is not an intermediate format"
    if out_fmt not in FORMAT_CODES:
        return f"Out_data_format {out_fmt} is not a data format"
    if out_fmt in (INT32, INT16, INT8):
        ok = {INT32: INT32, INT16: INT16, INT8: INT8}[out_fmt] == in_fmt
        return None if ok else f"the late conversion from {fmt_name(in_fmt)} to {fmt_name(out_fmt)} is not defined"
    if kind not in (E8, E5):
        return f"the late conversion from {fmt_name(in_fmt)} to {fmt_name(out_fmt)} is not defined"
    if out_fmt == TF32 and in_fmt == FP32:
        return "the late conversion from FP32 to TF32 is not defined (round to TF32 in the early conversion)"
    return None


def natural_kind(out_fmt: int) -> str:
    """The intermediate kind an output format is normally fed with (lenient fallbacks)."""
    if out_fmt in (INT32, INT16, INT8):
        return {INT32: I32, INT16: I16, INT8: I8}[out_fmt]
    return E5 if out_fmt in (FP16, FP8, BFP8A, BFP4A, BFP2A) else E8


def encode_plain(vals: np.ndarray, kind: str, out_fmt: int) -> bytes:
    """Late conversion to a non-BFP format: the L1 bytes of ``vals``."""
    if out_fmt in (FP32, TF32):
        x = vals if kind == E8 else e5_to_e8(vals)
        if out_fmt == TF32:
            x = x & 0xFFFFE000
        return x.astype("<u4").tobytes()
    if out_fmt == BF16:
        x = vals if kind == E8 else e5_to_e8(vals)
        return (x >> 16).astype("<u2").tobytes()
    if out_fmt in (FP16, FP8):
        f = vals & 0xFFFF if kind == E5 else e8_to_fp16(vals)
        return (f.astype("<u2").tobytes() if out_fmt == FP16 else (f >> 8).astype(np.uint8).tobytes())
    width = OUT_BITS[out_fmt]
    return (vals & ((1 << width) - 1)).astype({32: "<u4", 16: "<u2", 8: "u1"}[width]).tobytes()


def encode_bfp(vals: np.ndarray, kind: str, out_fmt: int) -> tuple[bytes, bytes]:
    """Late conversion to a BFP format (``len(vals)`` a multiple of 16): (datum bytes,
    exponent bytes, one per 16 datums)."""
    if out_fmt in BFP_8BIT_EXP:
        b = (vals if kind == E8 else e5_to_e8(vals)) >> 16          # BF16, truncated
        e = ((b >> 7) & 0xFF).astype(_I64)
        m = (b & 0x7F).astype(_I64)
        sign = (b >> 15) & 1
        keep = BFP_8BIT_EXP[out_fmt]
    else:
        f = (vals & 0xFFFF) if kind == E5 else e8_to_fp16(vals)       # E5M7, truncated
        e = ((f >> 10) & 0x1F).astype(_I64)
        m = ((f >> 3) & 0x7F).astype(_I64)
        sign = (f >> 15) & 1
        keep = BFP_5BIT_EXP[out_fmt]
    e = e.reshape(-1, 16)
    big = e.max(axis=1)
    sig = np.where(e == 0, 0, 128 | m.reshape(-1, 16))
    shift = np.minimum(big[:, None] - e + 1, 40)
    mag = np.minimum((sig + (1 << (shift - 1))) >> shift, 127) >> (7 - keep)
    sign = np.where(mag == 0, 0, sign.reshape(-1, 16))
    datum = ((sign << keep) | mag).reshape(-1).astype(np.uint8)
    if keep == 3:
        datum = datum[0::2] | (datum[1::2] << 4)
    elif keep == 1:
        datum = datum[0::4] | (datum[1::4] << 2) | (datum[2::4] << 4) | (datum[3::4] << 6)
    return datum.astype(np.uint8).tobytes(), big.astype(np.uint8).tobytes()


# --------------------------------------------------------------------- streams
class Stream:
    """One output stream of a packer: the 16-byte-aligned L1 byte address it writes next,
    whether the next PACR sets a new one, and the bytes waiting for a full 16."""

    def __init__(self) -> None:
        self.address = 0
        self.needs_new = True
        self.pending = b""
        self.datums = 0            # datums since the last new address (BH RowPadZero)

    def start(self, address: int) -> None:
        if self.needs_new:
            self.address = address
            self.needs_new = False
            self.datums = 0

    def put(self, l1: Any, data: bytes, who: str) -> None:
        buf = self.pending + data
        full = len(buf) & ~15
        if full:
            l1.write(self.address, buf[:full], who)
            self.address += full
        self.pending = buf[full:]

    def flush(self, l1: Any, who: str) -> None:
        if self.pending:
            self.put(l1, b"\0" * (16 - len(self.pending)), who)
        self.needs_new = True

    def state(self) -> dict[str, Any]:
        return {"address": self.address, "needs_new": self.needs_new, "pending": len(self.pending)}


class Packer:
    """What one packer keeps between instructions."""

    def __init__(self) -> None:
        self.data, self.exp, self.rsi = Stream(), Stream(), Stream()
        self.tpg = [0, 0, 0]                               # X, Y, Z
        self.histogram = np.zeros(32, dtype=np.uint8)
        self.max_exponent = 0
        self.l1_dest_addr_offset = 0                      # set by TDMA-RISC
        self.bfp_wait = np.zeros(0, dtype=_U32)            # datums waiting for a 16-group
        self.row = np.zeros(0, dtype=_U32)                 # compression: the open row
        self.group = np.zeros(0, dtype=_U32)               # compression: augmented datums
        self.counters = np.zeros(0, dtype=np.uint8)
        self.rsi_count = 0

    def reset_histogram(self) -> None:
        self.histogram[:] = 0
        self.max_exponent = 0

    def state(self) -> dict[str, Any]:
        out: dict[str, Any] = {"data": self.data.state(), "exp": self.exp.state(), "rsi": self.rsi.state(),
                               "tpg": list(self.tpg), "max_exponent": self.max_exponent}
        if self.histogram.any():
            out["histogram"] = [int(v) for v in self.histogram]
        return out


class Packers:
    """The four packers of a core (Blackhole uses packer 0 only) and the TDMA-RISC
    registers PACR_SETREG reads."""

    def __init__(self, core: Any = None) -> None:
        self.packers = [Packer() for _ in range(4)]
        self.set_reg_base = [0, 0, 0, 0]
        self.set_reg_hi_scaler = [0, 0, 0, 0]
        self.pack_reg_addr_raw = 0
        self.setreg_wrdata = 0                 # Blackhole PACR_SETREG ModeSel flops

    def clear_exponent_histograms(self) -> None:
        """CLREXPHIST: ``Reset`` every packer's exponent histogram."""
        for p in self.packers:
            p.reset_histogram()

    def set_pack_reg_addr(self, value: int) -> None:
        """TDMA-RISC ``SetPackRegAddr`` (a write of RISCV_TDMA_REG_FIFO_PACKED_TILE_STATUS)."""
        self.pack_reg_addr_raw = value & 0xFFFFFFFF
        for i in range(2):
            mid = (value >> (10 * i)) & 0x3FF
            hi = (value >> (20 + 2 * i)) & 3
            self.set_reg_base[i] = (hi << 18) + (mid << 2)

    def set_scaler(self, start: int, values: int) -> None:
        """TDMA-RISC ``SetScaler``."""
        if start == 3:
            values >>= 16
        for i in range(3):
            if start + i < 4:
                self.set_reg_hi_scaler[start + i] = values & 0x1FF
                values >>= 9

    def state(self) -> dict[str, Any]:
        return {"packers": [p.state() for p in self.packers], "set_reg_base": list(self.set_reg_base),
                "set_reg_hi_scaler": list(self.set_reg_hi_scaler)}


def packers(core: Any) -> Packers:
    """The core's packers (created on first use)."""
    return core.unit("packers", Packers)


def tpg_walk(y0: int, z0: int, rows: Any, reads: int, transposed: int) -> tuple[Any, Any]:
    """(Y, Z) of a tile position generator at (y0, z0) after ``rows`` (an int or an array)
    X wrap-arounds (EdgeMasking.md ``Advance``): the inner counter (Y, or Z when
    transposed) wraps at ``pack_reads_per_xy_plane`` and carries into the outer one; a
    counter already at or past a non-zero limit, or a zero limit, never wraps."""
    inner, outer = (z0, y0) if transposed else (y0, z0)
    lin = inner + rows
    if reads and inner < reads:
        inner, outer = lin % reads, outer + lin // reads
    else:
        inner, outer = lin, outer + 0 * rows
    return (outer, inner) if transposed else (inner, outer)


# ------------------------------------------------------------------------ PACR
@dataclass(frozen=True)
class Pacr:
    """A PACR's fields, chip-neutral (semantics/pack_ops.py fills it from the encoding)."""

    mask: int                 # WH PackerMask / BH ReadIntfSel
    addr_mod: int
    zero_write: bool
    ovrd_thread_id: bool
    concat: bool
    flush: bool
    last: bool
    bh: bool = False
    cfg_context: int = 0
    addr_cnt_context: int = 0
    dst_access_mode: int = 0
    row_pad_zero: int = 0


@dataclass
class Work:
    """One packer's share of a PACR, from the input address generator."""

    index: int                # packer (WH) / 0 (BH)
    slot: int                 # configuration slot (WH packer / BH context)
    source: str               # "dst", "l1" or "null"
    address: int
    count: int
    interfaces: tuple[int, ...] = (0,)
    row_step: int = 16        # datums between interfaces (BH)


class Run:
    """Executes one PACR: the context every stage reads (thread, instruction, config)."""

    def __init__(self, thread: Any, ins: Any, req: Pacr) -> None:
        self.thread = thread
        self.ins = ins
        self.req = req
        self.core = thread.core
        self.cfg = config_for(thread)           # the bank of the thread's CFG_STATE_ID_StateID
        self.unit = packers(thread.core)
        self.adcs = adcs(thread.core)
        self.l1 = thread.core.l1
        #: (physical rows, Dst32b?) of each Dest read, as hazards.dest_written notes a write
        self.dest_rows: list[tuple[np.ndarray, bool]] = []

    # ------------------------------------------------------------ helpers
    def broken(self, rule: str) -> None:
        rules.broken(self.thread, self.ins, rule)

    def stop(self, what: str) -> None:
        raise Trap(rules.RULE, self.ins.word, name=f"{self.ins.mnemonic}: {what} is not modelled",
                   word=self.ins.word)

    def get(self, slot: int, name: str) -> int:
        return self.cfg.get(SLOT[slot] + name)

    def which_adc(self, slot: int) -> int:
        if not self.req.ovrd_thread_id:
            return self.thread.tid
        adc = self.req.addr_cnt_context if self.req.bh else self.get(slot, "Addr_cnt_context")
        return 0 if adc == 3 else adc

    def adc(self, adc: int, channel: int, field: str) -> int:
        return self.adcs.get(adc, PACKERS, channel, field)

    # ------------------------------------------------------------ selection
    def work_list(self) -> list[tuple[int, int]]:
        """(packer, config slot) pairs the instruction instructs."""
        req = self.req
        if req.bh:
            return [(0, req.cfg_context)]
        mask = req.mask
        if mask not in DEFINED_MASKS:
            self.broken(f"PackerMask {mask:#06b} is undefined (0, 1, 2, 4, 8, 3, 12 or 15)")
        mask = mask or 1
        return [(i, i) for i in range(4) if mask >> i & 1]

    # ------------------------------------------------------------ input address generator
    def input_address(self, index: int, slot: int) -> Work:
        cfg = self.cfg
        adc = self.which_adc(slot)
        x0 = self.adc(adc, 0, "X")
        addr = (cfg.get("PCK0_ADDR_BASE_REG_0_Base")
                + x0 * (cfg.get("PCK0_ADDR_CTRL_XY_REG_0_Xstride") & 0xF)
                + self.adc(adc, 0, "Y") * cfg.get("PCK0_ADDR_CTRL_XY_REG_0_Ystride")
                + self.adc(adc, 0, "Z") * cfg.get("PCK0_ADDR_CTRL_ZW_REG_0_Zstride")
                + self.adc(adc, 0, "W") * cfg.get("PCK0_ADDR_CTRL_ZW_REG_0_Wstride"))
        in_fmt = self.get(slot, "In_data_format")
        bpd, xmask = {0: (4, 0x3), 1: (2, 0x7)}.get(in_fmt & 3, (1, 0xF))
        x1 = self.adc(adc, 1, "X")
        count = x1 - x0 + 1
        req = self.req
        if count < 0 and not req.flush:
            self.broken(f"the packer ADC's X end ({x1}) is below its X start ({x0})")
            count = 0
        if req.flush:
            return Work(index, slot, "null", 0, 0)
        interfaces: tuple[int, ...] = (0,)
        if req.bh:
            sel = req.mask
            if req.zero_write and sel == 0:
                if x0 != 0:
                    self.broken(f"ZeroWrite with ReadIntfSel 0 needs X start 0, not {x0}")
                return Work(index, slot, "null", 0, x1 + 1)
            interfaces = tuple(k for k in range(4) if (sel or 0xF) >> k & 1)
            if count > 16:
                self.broken(f"X_end - X_start + 1 = {count} is more than one Dest row (16)")
        if req.zero_write:
            return Work(index, slot, "null", 0, count * len(interfaces))
        if index == 0 and self.get(slot, "Source_interface_selection") == 1:
            a = (self.get(slot, "L1_source_addr") << 18) + (addr & 0x3FFFF)
            a = (a & ~0xF) + bpd * (x0 & xmask)
            return Work(index, slot, "l1", a & 0x1FFFFF, count)
        a = ((addr // bpd) & ~xmask) + (x0 & xmask)
        a += cfg.get(f"DEST_TARGET_REG_CFG_PACK_SEC{slot}_Offset") << 4
        step = 256 if req.bh and req.dst_access_mode else 16
        return Work(index, slot, "dst", a & 0x3FFF, count, interfaces, step)

    # ------------------------------------------------------------ output address generator
    def output_addresses(self, chosen: list[tuple[int, int]]) -> None:
        cfg = self.cfg
        req = self.req
        selected = dict(chosen)
        slots = [selected.get(i, i) for i in range(4)] if not req.bh else [req.cfg_context]
        first = 0
        for i, slot in enumerate(slots):
            addr = self.get(slot, "L1_Dest_addr") + (0 if self.get(slot, "Sub_l1_tile_header_size") else 1)
            if i == 0:
                first = addr
            elif first >> 31 & 1:
                addr += first
            if i not in selected:
                continue
            adc = self.which_adc(slot)
            yzw = (cfg.get("PCK0_ADDR_BASE_REG_1_Base")
                   + self.adc(adc, 1, "Y") * cfg.get("PCK0_ADDR_CTRL_XY_REG_1_Ystride")
                   + self.adc(adc, 1, "Z") * cfg.get("PCK0_ADDR_CTRL_ZW_REG_1_Zstride")
                   + self.adc(adc, 1, "W") * cfg.get("PCK0_ADDR_CTRL_ZW_REG_1_Wstride"))
            addr += yzw & ~0xF
            p = self.unit.packers[i]
            if self.get(slot, "Add_l1_dest_addr_offset"):
                addr += p.l1_dest_addr_offset
            if addr > cfg.get(LIMIT[slot] + "limit_address") * 2 + 1:
                addr -= cfg.get(LIMIT[slot] + "fifo_size") * 2
            if self.compressing(i, slot):
                if p.rsi.needs_new:
                    p.rsi.start((addr & 0x1FFFF) << 4)
                    p.rsi.put(self.l1, b"\0\0", self.who(i))          # RSI[0] = 0
                    p.rsi_count = 0
                addr += self.get(slot, "Row_start_section_size")
            if self.get(slot, "Out_data_format") & 2:
                p.exp.start((addr & 0x1FFFF) << 4)
                addr += self.get(slot, "Exp_section_size")
            p.data.start((addr & 0x1FFFF) << 4)

    def compressing(self, index: int, slot: int) -> bool:
        cfg = self.cfg
        if cfg.get("THCON_SEC0_REG1_All_pack_disable_zero_compress_ovrd"):
            return not (cfg.get("THCON_SEC0_REG1_All_pack_disable_zero_compress") >> index & 1)
        return not self.get(slot, "Disable_zero_compress")

    # ------------------------------------------------------------ ADC advance
    def advance(self, used: set[int]) -> None:
        tcfg = self.thread.tcfg
        n = f"ADDR_MOD_PACK_SEC{self.req.addr_mod}_"
        for adc in sorted(used):
            for ch, src in ((0, "src"), (1, "dst")):
                if tcfg.get(f"{n}Y{src}Clear"):
                    self.adcs.set(adc, PACKERS, ch, "Y", 0)
                    self.adcs.set(adc, PACKERS, ch, "Y_Cr", 0)
                elif tcfg.get(f"{n}Y{src}CR"):
                    self.adcs.add(adc, PACKERS, ch, "Y_Cr", tcfg.get(f"{n}Y{src}Incr"))
                    self.adcs.set(adc, PACKERS, ch, "Y", self.adc(adc, ch, "Y_Cr"))
                else:
                    self.adcs.add(adc, PACKERS, ch, "Y", tcfg.get(f"{n}Y{src}Incr"))
                if tcfg.get(f"{n}Z{src}Clear"):
                    self.adcs.set(adc, PACKERS, ch, "Z", 0)
                    self.adcs.set(adc, PACKERS, ch, "Z_Cr", 0)
                else:
                    self.adcs.add(adc, PACKERS, ch, "Z", tcfg.get(f"{n}Z{src}Incr"))

    # ------------------------------------------------------------ the datum pipeline
    def dest_read(self) -> DestRead:
        cfg = self.cfg
        inter = cfg.get("ALU_FORMAT_SPEC_REG_Dstacc_val") if cfg.get("ALU_FORMAT_SPEC_REG_Dstacc_override") \
            else cfg.get("ALU_FORMAT_SPEC_REG2_Dstacc")
        shift = 0
        if cfg.get("INT_DESCALE_Enable"):
            shift = -1 if cfg.get("INT_DESCALE_Mode") else cfg.get("INT_DESCALE_VALUES_SEC0_Value") & 0x1F
        return DestRead(bool(cfg.get("PCK_DEST_RD_CTRL_Read_32b_data")), inter,
                        bool(cfg.get("PCK_DEST_RD_CTRL_Read_int8")),
                        bool(cfg.get("PCK_DEST_RD_CTRL_Read_unsigned")),
                        bool(cfg.get("PCK_DEST_RD_CTRL_Round_10b_mant")), shift)

    def fetch_dest(self, w: Work, rd: DestRead) -> tuple[np.ndarray, str, np.ndarray]:
        """Raw Dest datums of ``w`` (zeros from undefined rows), early-converted; also the
        flat Dest datum indices (for edge masking's columns)."""
        n = w.count
        offsets = np.arange(n) if len(w.interfaces) == 1 else \
            np.concatenate([np.arange(n) + k * w.row_step for k in w.interfaces])
        idx = (w.address + offsets) & 0x3FFF
        rows, cols = idx >> 4, idx & 0xF
        dest = self.core.dest
        bh = self.core.chip == "bh"       # Wormhole has neither remap field (Dst.md)
        remap = bh and bool(self.cfg.get("DEST_ACCESS_CFG_remap_addrs"))
        if rd.read32:
            swizzle = bh and bool(self.cfg.get("DEST_ACCESS_CFG_swizzle_32b"))
            p = ADJ32[int(remap)][int(swizzle)][rows]      # 10-bit Row: Adj32 folds it (Dst.md)
            self.dest_rows.append((p, True))               # high halves; hazards.dest_blocks adds + 8
            raw = (dest.bits[p, cols].astype(_U32) << 16) | dest.bits[p + 8, cols]
            ok = None if dest.all_valid else dest.defined(p * 16 + cols) & dest.defined((p + 8) * 16 + cols)
        else:
            p = ADJ16[int(remap)][rows]
            self.dest_rows.append((p, False))
            raw = dest.bits[p, cols].astype(_U32)
            ok = None if dest.all_valid else dest.defined(p * 16 + cols)
        if ok is not None:
            raw = np.where(ok, raw, 0).astype(_U32)
        if rd.shift < 0 and rd.read32 and rd.inter == INT8 and not rd.raw:
            self.stop("INT_DESCALE_Mode 1 (per-row shift amounts)")
        try:
            if rd.read32:
                vals, kind = early_convert(raw, rd)
            else:
                table, kind = early16_table(rd)
                vals = table[raw]
        except PackerStop as stop:
            self.broken(str(stop))
            vals, kind = early_convert_lenient(raw, rd)
        return vals, kind, idx

    def edge_mask(self, p: Packer, slot: int, vals: np.ndarray, kind: str, idx: np.ndarray) -> np.ndarray:
        """EdgeMasking.md: replace datums by 0 or -inf by their tile position (and advance
        the tile position generator by one per datum)."""
        get = self.cfg.get
        n = idx.size
        x0, y0, z0 = p.tpg
        reads = get(f"PACK_COUNTERS_SEC{slot}_pack_reads_per_xy_plane")
        transposed = get(f"PACK_COUNTERS_SEC{slot}_pack_yz_transposed")
        y1, z1 = tpg_walk(y0, z0, (x0 + n) // 16, reads, transposed)
        p.tpg = [(x0 + n) % 16, int(y1), int(z1)]
        masks = [get(name) for name in EDGE_MASKS]
        if masks.count(0xFFFF) == 4:
            return vals
        if get("PCK_EDGE_TILE_FACE_SET_SELECT_enable"):
            _, z = tpg_walk(y0, z0, (x0 + np.arange(n)) // 16, reads, transposed)
            a = (get("PCK_EDGE_TILE_FACE_SET_SELECT_select") >> (2 * slot)) & 3
            zz = (get(f"DEST_TARGET_REG_CFG_PACK_SEC{slot}_ZOffset") + z) & 0xF
            b = np.array([get(name) for name in FACE_SETS[a]])[zz]
            sets = [int(v) for v in np.unique(b)]
        else:
            b = (get("PCK_EDGE_TILE_ROW_SET_SELECT_select") >> (2 * slot)) & 3
            sets = [b]
        rowset = [[get(name) for name in ROW_SETS[s]] if s in sets else [0] * 16 for s in range(4)]
        used = {masks[c] for s in sets for c in rowset[s]}
        if used == {0xFFFF}:
            return vals
        if len(used) == 1:                      # one mask for every row: no positions needed
            keep = (used.pop() >> (idx & 0xF)) & 1
        else:
            y, _ = tpg_walk(y0, z0, (x0 + np.arange(n)) // 16, reads, transposed)
            c = np.array(rowset)[b, y & 0xF]
            keep = (np.array(masks)[c] >> (idx & 0xF)) & 1
        fill = NEG_INF[kind] if get("PCK_EDGE_MODE_mode") else 0
        return np.where(keep != 0, vals, fill).astype(_U32)

    def apply_relu(self, vals: np.ndarray, kind: str, inter: int) -> np.ndarray:
        cfg = self.cfg
        mode = cfg.get("STACC_RELU_ApplyRelu") & 3
        if mode == 0:
            return vals
        tbits = cfg.get("STACC_RELU_ReluThreshold") & 0xFFFF
        if mode >= 2 and kind in (I32, I16, I8):
            self.broken(f"ReLU mode {mode} on integer datums is undefined (use 0 or 1)")
            mode = 1
        if mode >= 2 and tbits & 0x8000:
            self.broken(f"ReLU threshold {tbits:#06x} is negative (undefined for mode {mode})")
        fp16 = inter in (FP16, FP8, BFP8A, BFP4A, BFP2A)
        return relu(vals, kind, mode, tbits, fp16)

    def histogram(self, p: Packer, vals: np.ndarray, kind: str) -> None:
        if not vals.size:
            return
        e = exponents(vals, kind)
        p.max_exponent = max(p.max_exponent, int(e.max()))
        if any(t.tcfg.get("ENABLE_ACC_STATS_Enable") for t in self.core.threads) or \
                (not self.core.threads and self.thread.tcfg.get("ENABLE_ACC_STATS_Enable")):
            counts = np.bincount(e & 31, minlength=32) + p.histogram
            p.histogram[:] = np.minimum(counts, 255)

    def threshold(self, slot: int, vals: np.ndarray, in_fmt: int) -> np.ndarray:
        if not self.get(slot, "Exp_threshold_en"):
            return vals
        if in_fmt == BFP2A:
            self.broken("exponent thresholding with In_data_format BFP2a is undefined (hardware bug)")
            return vals
        kind = KIND.get(in_fmt)
        if kind not in (E8, E5):
            return vals
        e = exponents(vals, kind)
        return np.where(e < self.get(slot, "Exp_threshold"), 0, vals).astype(_U32)

    def row_pad(self, p: Packer, vals: np.ndarray, per_row: list[int]) -> np.ndarray:
        """Blackhole RowPadZero: zero datums up to 16-datum boundaries."""
        mode, whole = self.req.row_pad_zero & 3, self.req.row_pad_zero >> 2 & 1
        if mode == 0 or (mode == 2 and self.req.concat) or (mode == 3 and not self.req.last):
            return vals
        if whole:
            pad = -(p.data.datums + vals.size) % 16
            return np.concatenate([vals, np.zeros(pad, dtype=_U32)])
        pieces, at = [], 0
        for n in per_row:
            pieces += [vals[at:at + n], np.zeros(-n % 16, dtype=_U32)]
            at += n
        return np.concatenate(pieces) if pieces else vals

    # ------------------------------------------------------------ one packer's share
    def pack(self, w: Work, rd: DestRead) -> None:
        p = self.unit.packers[w.index]
        slot = w.slot
        in_fmt = self.get(slot, "In_data_format")
        out_fmt = self.get(slot, "Out_data_format")
        if w.source == "dst":
            vals, kind, idx = self.fetch_dest(w, rd)
            vals = self.edge_mask(p, slot, vals, kind, idx)
            vals = self.apply_relu(vals, kind, rd.inter)
            self.histogram(p, vals, kind)
        elif w.source == "l1":
            width = {0: 32, 1: 16}.get(in_fmt & 3, 8)
            raw = self.l1.read_as(w.address, {32: "<u4", 16: "<u2", 8: "u1"}[width], w.count, self.who(w.index))
            try:
                vals, kind = l1_convert(raw, width, rd.inter)
            except PackerStop as stop:
                self.broken(str(stop))
                vals, kind = stop.lenient          # type: ignore[attr-defined]
        else:
            vals, kind = np.zeros(w.count, dtype=_U32), KIND.get(in_fmt, E8)
        want = KIND.get(in_fmt)
        if want is not None and SAME_WIDTH[want] != SAME_WIDTH[kind] and vals.size:
            self.broken(f"In_data_format {fmt_name(in_fmt)} does not match the early conversion's "
                        f"{kind} datums (IntermediateFormat {fmt_name(rd.inter)})")
        kind = want or kind
        dmask = self.get(slot, "Downsample_mask") or 0xFFFF
        per_row = [w.count] * len(w.interfaces) if w.source == "dst" else [vals.size]
        if dmask != 0xFFFF and vals.size:
            keep = (dmask >> (np.arange(vals.size) % 16)) & 1
            edges = np.cumsum([0] + per_row)
            per_row = [int(keep[a:b].sum()) for a, b in zip(edges[:-1], edges[1:])]
            vals = vals[keep != 0]
        vals = self.threshold(slot, vals, in_fmt)
        if self.req.bh:
            vals = self.row_pad(p, vals, per_row)
        why = late_plan(in_fmt, out_fmt)
        if why is not None and (vals.size or p.row.size or p.bfp_wait.size):
            self.broken(why)
            kind = natural_kind(out_fmt)
        elif why is not None:
            kind = natural_kind(out_fmt)
        p.data.datums += vals.size
        self.emit(p, w.index, slot, vals, kind, out_fmt)

    # ------------------------------------------------------------ output
    def who(self, index: int) -> str:
        return f"{self.ins.mnemonic} packer {index}"

    def emit(self, p: Packer, index: int, slot: int, vals: np.ndarray, kind: str, out_fmt: int) -> None:
        if self.compressing(index, slot):
            p.row = np.concatenate([p.row, vals])
            if not self.req.concat:
                self.end_row(p, index, kind, out_fmt)
            return
        self.put_datums(p, index, vals, kind, out_fmt)

    def put_datums(self, p: Packer, index: int, vals: np.ndarray, kind: str, out_fmt: int, pad: bool = False) -> None:
        """Late-convert ``vals`` and append them to the data (and exponent) stream; BFP
        datums wait for a whole group of 16 (``pad`` fills the last group with zeros)."""
        who = self.who(index)
        if out_fmt in BFP_8BIT_EXP or out_fmt in BFP_5BIT_EXP:
            vals = np.concatenate([p.bfp_wait, vals])
            if pad and vals.size % 16:
                vals = np.concatenate([vals, np.zeros(-vals.size % 16, dtype=_U32)])
            whole = vals.size & ~15
            p.bfp_wait = vals[whole:]
            if whole:
                data, exps = encode_bfp(vals[:whole], kind, out_fmt)
                p.exp.put(self.l1, exps, who)
                p.data.put(self.l1, data, who)
            return
        if vals.size:
            p.data.put(self.l1, encode_plain(vals, kind, out_fmt), who)

    def end_row(self, p: Packer, index: int, kind: str, out_fmt: int) -> None:
        """Compression.md: turn the open row into augmented datums and 4-bit zero counts."""
        row = p.row
        p.row = np.zeros(0, dtype=_U32)
        n = row.size
        if n == 0:
            return
        pos = np.arange(n)
        kept = row != 0
        kept[0] = kept[-1] = True
        last = np.maximum.accumulate(np.where(kept, pos, 0))
        kept |= (pos - last) % 16 == 0
        at = np.nonzero(kept)[0]
        counts = np.diff(np.append(at, n)) - 1
        p.group = np.concatenate([p.group, row[at]])
        p.counters = np.concatenate([p.counters, counts.astype(np.uint8)])
        p.rsi_count += at.size
        p.rsi.put(self.l1, np.array([p.rsi_count & 0xFFFF], dtype="<u2").tobytes(), self.who(index))
        self.put_groups(p, index, kind, out_fmt, final=False)

    def put_groups(self, p: Packer, index: int, kind: str, out_fmt: int, final: bool) -> None:
        """Write whole groups of 32 augmented datums, each followed by their 32 counters
        (the last, partial group too when ``final``, padded as Compression.md shows)."""
        while p.group.size >= 32 or (final and p.group.size):
            take = min(32, p.group.size)
            vals = np.concatenate([p.group[:take], np.zeros(32 - take, dtype=_U32)])
            nib = np.concatenate([p.counters[:take], np.zeros(32 - take, dtype=np.uint8)])
            p.group, p.counters = p.group[take:], p.counters[take:]
            self.put_datums(p, index, vals, kind, out_fmt)
            packed = (nib[0::2] | (nib[1::2] << 4)).astype(np.uint8).tobytes()
            p.data.put(self.l1, packed, self.who(index))

    def finish(self, w: Work) -> None:
        """Last/Flush: flush the buffers before L1 and start afresh with the next PACR."""
        p = self.unit.packers[w.index]
        kind = KIND.get(self.get(w.slot, "In_data_format"), E8)
        out_fmt = self.get(w.slot, "Out_data_format")
        if late_plan(self.get(w.slot, "In_data_format"), out_fmt) is not None:
            kind = natural_kind(out_fmt)
        if p.row.size:
            self.end_row(p, w.index, kind, out_fmt)
        self.put_groups(p, w.index, kind, out_fmt, final=True)
        self.put_datums(p, w.index, np.zeros(0, dtype=_U32), kind, out_fmt, pad=True)
        who = self.who(w.index)
        for stream in (p.rsi, p.exp, p.data):
            stream.flush(self.l1, who)
        p.tpg = [0, 0, 0]

    # ------------------------------------------------------------ the instruction
    def execute(self) -> None:
        req = self.req
        cfg = self.cfg
        chosen = self.work_list()
        for _, slot in chosen:
            if self.get(slot, "Pack_L1_Acc"):
                self.stop("L1 accumulation (Pack_L1_Acc)")
        if cfg.get("ALU_ROUNDING_MODE_Packer_srnd_en"):
            self.stop("stochastic rounding (ALU_ROUNDING_MODE_Packer_srnd_en)")
        rd = self.dest_read()
        works = [self.input_address(i, slot) for i, slot in chosen]
        used = {self.which_adc(slot) for _, slot in chosen}
        self.output_addresses(chosen)
        self.advance(used)
        # where each stream stands: what it writes from here on is this PACR's (the L1 note)
        marks = [(w.index, s, s.address) for w in works
                 for s in (self.unit.packers[w.index].data, self.unit.packers[w.index].exp,
                           self.unit.packers[w.index].rsi)]
        for w in works:
            self.pack(w, rd)
        if req.last or req.flush:
            for w in works:
                self.finish(w)
        # for a timing model, which takes it: Dst.md's window holds a PACR reading a block of
        # Dest written in the cycles before (tessera-cycles' ``tensix`` model; hazards.dest_blocks)
        self.thread.pack_note = self.dest_rows or None
        # and L1's access ports (the L1 note, tessera_tensix.l1): each packer's writes, packer
        # 0's reads of an L1-to-L1 pack
        wrote = tuple((f"packer{i}", "write", (a, s.address)) for i, s, a in marks if s.address > a)
        read = tuple(("packer0 read", "read", (w.address, w.address + w.count * {0: 4, 1: 2}.get(
            self.get(w.slot, "In_data_format") & 3, 1))) for w in works if w.source == "l1" and w.count > 0)
        self.thread.l1_note = wrote + read


def execute(thread: Any, ins: Any, req: Pacr) -> None:
    """Run one PACR on ``thread``'s core."""
    Run(thread, ins, req).execute()


# ---------------------------------------------------------------- PACR_SETREG
def setreg_address(unit: Packers, addr_sel: int, addr_mid: int) -> int:
    """``0xFFB00000 + SetRegBase[AddrSel] + (AddrMid << 12)`` (PACR_SETREG.md)."""
    return 0xFFB00000 + unit.set_reg_base[addr_sel] + (addr_mid << 12)


def setreg_value(unit: Packers, value10: int, out_fmt: int) -> int:
    """``Value10 + ((Value10 * SetRegHiScaler[fmt & 3]) & 0x1ffff) << 12``."""
    hi = value10 * unit.set_reg_hi_scaler[out_fmt & 3]
    return (value10 + ((hi & 0x1FFFF) << 12)) & 0xFFFFFFFF
