"""TALU numerics: the unary / binary / ternary op tables of tile.md 5.7 applied to whole tiles.

The caller (the TALU engine) hands over whole tiles as bytes -- a row-broadcast ASP vector or a
broadcast scalar already expanded to a tile -- plus the destination's previous bytes ``old``, the
``tfmt`` format and the ``trm`` CSR value, and gets back a :class:`Result`: the new destination
bytes, the accrued RISC-V fflags and whether anything saturated (the sticky ``tsat``).  Merging
under ``tmask`` is the caller's; ``active_granules`` (bit g = destination granule g of
``granule`` bytes is written; default None = all) keeps masked-off elements out of the flags.
Unknown op codes, a non-tfmt format, shifts on a float format and a reserved FP rounding mode
(trm[2:0] = 5..7, only when the op rounds to a float) raise ValueError: the caller's illegal
instruction.

Choices where tile.md is silent (keyword parameters in brackets):

* neg/neg1/neg2 negate the inputs in the ``tfmt`` element type before any op, layout ops
  included: a sign-bit flip for floats, two's-complement negation for integers (wrapping, or
  clamping with trm[5], counted as saturation).  Ternary ops have no negate flags (T4).
* Layout ops: transposes 0x18-0x1A view the tile as ``rows x (row_bytes/es)`` raw elements of
  1, 2 or 4 bytes whatever ``tfmt`` is, and write the transposed matrix densely.  Conversions
  0x20-0x27 convert the first ``E = tile_bytes / max(src, dst bytes)`` elements into the first E
  destination elements; row reductions 0x28-0x2A write element 0 of each destination row of
  ``row_bytes``.  Both leave the rest of the destination as ``old``.
* Float formats: one rounding per result with trm[2:0]; trm[5] turns overflow into the largest
  finite value; NaN results canonical; details in :mod:`.talu_float`.  fma/fms/nfma,
  dequantize ``(a-c)*b``, lerp ``a+(b-a)*c`` and row-sum are fused: one rounding of the exact
  value.
* Integer formats: exact result, then one wrap (or clamp with trm[5]); details in
  :mod:`.talu_int`.
* SFU ops (0x08-0x15): input to fp32 (RNE), numpy float64 evaluation, RNE to fp32, then the trm
  rounding to ``tfmt`` (:mod:`.sfu`); integer formats convert the fp32 result back with the
  RISC-V fcvt rules.
* Comparisons give 1/0 (1.0/0.0 for floats).  ``select``: ``c != 0`` (a NaN counts as non-zero),
  bit copy.  ``clamp`` uses the max/min semantics of the format.
* quantize ``sat_int8(round(a*b) + c)``: a*b exact, rounded to an integer with the integer mode
  trm[4:3] (RNU/RNE/RDN/ROD); a non-integral zero point c is rounded the same way; the sum is
  clamped to [-128, 127] whatever trm[5] says (counted as saturation); NaN gives 127 with NV.
  [``quant_layout="element"``]: the int8 value is written as a ``tfmt`` element (rounded with
  trm[2:0] for fp8, whose significand cannot hold every int8); ``"packed"``: the int8 bytes go
  to the first E bytes of td (E = elements of ``tfmt``), the rest undisturbed, and dequantize
  reads its ``a`` operand as E packed int8 values.
* [``f2i_rounding="frm"``] on :func:`unary`: float-to-integer conversions and integer-format
  SFU results round with trm[2:0] like RISC-V fcvt; ``"irm"`` uses trm[4:3] instead.
"""

from __future__ import annotations

import attrs
import numpy as np
import numpy.typing as npt

from . import formats as F
from . import talu_float, talu_int
from .convert import F2I_ROUNDING, convert_codes, int_result
from .formats import Format
from .rounding import Trm

UNARY: dict[int, str] = {
    0x00: "copy", 0x01: "neg", 0x02: "abs", 0x03: "relu", 0x04: "not", 0x05: "zero", 0x06: "sign",
    0x07: "floor", 0x08: "exp", 0x09: "exp2", 0x0A: "log", 0x0B: "log2", 0x0C: "rcp", 0x0D: "sqrt",
    0x0E: "rsqrt", 0x0F: "tanh", 0x10: "sigmoid", 0x11: "gelu", 0x12: "silu", 0x13: "sin",
    0x14: "cos", 0x15: "erf",
    0x18: "transpose8", 0x19: "transpose16", 0x1A: "transpose32",
    **{0x20 + c: f"cvt.{F.TFMT[c].name}" for c in range(8)},
    0x28: "row-sum", 0x29: "row-max", 0x2A: "row-min",
}
BINARY: dict[int, str] = {
    0x00: "add", 0x01: "sub", 0x02: "mul", 0x03: "div", 0x04: "max", 0x05: "min", 0x06: "and",
    0x07: "or", 0x08: "xor", 0x09: "sll", 0x0A: "srl", 0x0B: "sra", 0x0C: "cmpeq", 0x0D: "cmplt",
    0x0E: "cmple",
}
TERNARY: dict[int, str] = {
    0x0: "add", 0x1: "sub", 0x2: "mul", 0x3: "max", 0x4: "min", 0x5: "and", 0x6: "or", 0x7: "xor",
    0x8: "fma", 0x9: "fms", 0xA: "nfma", 0xB: "select", 0xC: "clamp", 0xD: "quantize",
    0xE: "dequantize", 0xF: "lerp",
}
QUANT_LAYOUTS = ("element", "packed")
_TRANSPOSE_BYTES = {0x18: 1, 0x19: 2, 0x1A: 4}

U64 = npt.NDArray[np.uint64]
U8 = npt.NDArray[np.uint8]
B = npt.NDArray[np.bool_]


@attrs.frozen
class Result:
    """New destination tile, accrued fflags (NV DZ OF UF NX bits), saturation seen."""

    data: bytes
    fflags: int
    saturated: bool


def _check(tile: int, row_bytes: int, *others: bytes) -> None:
    if row_bytes <= 0 or tile % row_bytes:
        raise ValueError(f"tile of {tile} bytes is not a whole number of {row_bytes}-byte rows")
    for o in others:
        if len(o) != tile:
            raise ValueError(f"operand of {len(o)} bytes, expected a {tile}-byte tile")


def _result(data: bytes, flags: U8, sat: B, offsets: npt.NDArray[np.int64],
            active: int | None, granule: int) -> Result:
    """Accrue flags and saturation of the elements whose destination byte offset is active."""
    if active is not None:
        g = offsets // granule
        count = int(g.max()) + 1 if g.size else 0
        on = np.array([(active >> i) & 1 for i in range(count)], dtype=bool)   # any mask width
        keep = on[g]
        flags = flags[keep]
        sat = sat[keep]
    return Result(data, int(np.bitwise_or.reduce(flags, initial=0)), bool(sat.any()))


def _elementwise(bits: U64, fmt: Format, flags: U8, sat: B, old: bytes, active: int | None,
                 granule: int) -> Result:
    data = F.pack(bits, fmt)
    offsets = np.arange(bits.size, dtype=np.int64) * fmt.nbytes
    return _result(data, flags, sat, offsets, active, granule)


def _negated(bits: U64, fmt: Format, trm: Trm) -> tuple[U64, B]:
    if fmt.is_float:
        return talu_float.negate(bits, fmt), np.zeros(bits.shape, bool)
    return talu_int.negate(bits, fmt, trm)


def _setup(fmt: Format | int | str, trm: int, f2i_rounding: str) -> tuple[Format, Trm]:
    f = F.lookup(fmt)
    if f.code is None or F.TFMT.get(f.code) is not f:
        raise ValueError(f"{f.name} is not a tfmt format")
    if f2i_rounding not in F2I_ROUNDING:
        raise ValueError(f"f2i_rounding must be one of {F2I_ROUNDING}, not {f2i_rounding!r}")
    return f, Trm.parse(trm)


def unary(code: int, src: bytes, old: bytes, *, fmt: Format | int | str, trm: int, neg: bool = False,
          row_bytes: int = 64, active_granules: int | None = None, granule: int = 32,
          f2i_rounding: str = "frm") -> Result:
    """One unary TALU op (UNARY table) on a whole tile."""
    name = UNARY.get(code)
    if name is None:
        raise ValueError(f"unknown TALU unary op 0x{code:02x}")
    f, t = _setup(fmt, trm, f2i_rounding)
    src, old = bytes(src), bytes(old)
    tile = len(src)
    _check(tile, row_bytes, old)
    bits = F.codes(src, f)
    neg_sat = np.zeros(bits.shape, bool)
    if neg:
        bits, neg_sat = _negated(bits, f, t)
        src = F.pack(bits, f)
    if code in _TRANSPOSE_BYTES:
        es = _TRANSPOSE_BYTES[code]
        m = np.frombuffer(src, dtype=f"<u{es}").reshape(tile // row_bytes, row_bytes // es)
        return _result(m.T.tobytes(), np.zeros(bits.shape, np.uint8), neg_sat,
                       np.arange(bits.size, dtype=np.int64) * f.nbytes, active_granules, granule)
    if name.startswith("cvt."):
        dst = F.TFMT[code & 7]
        n = tile // max(f.nbytes, dst.nbytes)
        out, flags, sat = convert_codes(bits[:n], f, dst, t, f2i_rounding=f2i_rounding)
        data = F.pack(out, dst)
        offsets = np.arange(n, dtype=np.int64) * dst.nbytes
        return _result(data + old[len(data):], flags, sat | neg_sat[:n], offsets, active_granules, granule)
    if name.startswith("row-"):
        rows = tile // row_bytes
        mod = talu_float if f.is_float else talu_int
        out, flags, sat = mod.reduce_rows(name, bits.reshape(rows, -1), f, t)
        buf = bytearray(old)
        packed = F.pack(out, f)
        for r in range(rows):
            buf[r * row_bytes: r * row_bytes + f.nbytes] = packed[r * f.nbytes: (r + 1) * f.nbytes]
        offsets = np.arange(rows, dtype=np.int64) * row_bytes
        return _result(bytes(buf), flags, sat | neg_sat.reshape(rows, -1).any(axis=1), offsets,
                       active_granules, granule)
    if f.is_float:
        out, flags, sat = talu_float.unary(name, bits, f, t)
    else:
        out, flags, sat = talu_int.unary(name, bits, f, t, f2i_rounding=f2i_rounding)
    return _elementwise(out, f, flags, sat | neg_sat, old, active_granules, granule)


def binary(code: int, a: bytes, b: bytes, old: bytes, *, fmt: Format | int | str, trm: int,
           neg1: bool = False, neg2: bool = False, row_bytes: int = 64,
           active_granules: int | None = None, granule: int = 32) -> Result:
    """One binary TALU op (BINARY table); ``b`` is already a whole tile."""
    name = BINARY.get(code)
    if name is None:
        raise ValueError(f"unknown TALU binary op 0x{code:02x}")
    f, t = _setup(fmt, trm, "frm")
    a, b, old = bytes(a), bytes(b), bytes(old)
    _check(len(a), row_bytes, b, old)
    return _binary_named(name, a, b, old, f, t, neg1, neg2, active_granules, granule)


def _binary_named(name: str, a: bytes, b: bytes, old: bytes, f: Format, t: Trm, neg1: bool, neg2: bool,
                  active: int | None, granule: int) -> Result:
    ab, bb = F.codes(a, f), F.codes(b, f)
    neg_sat = np.zeros(ab.shape, bool)
    if neg1:
        ab, s1 = _negated(ab, f, t)
        neg_sat |= s1
    if neg2:
        bb, s2 = _negated(bb, f, t)
        neg_sat |= s2
    mod = talu_float if f.is_float else talu_int
    out, flags, sat = mod.binary(name, ab, bb, f, t)
    return _elementwise(out, f, flags, sat | neg_sat, old, active, granule)


def ternary(code: int, a: bytes, b: bytes, c: bytes, old: bytes, *, fmt: Format | int | str, trm: int,
            row_bytes: int = 64, active_granules: int | None = None, granule: int = 32,
            quant_layout: str = "element") -> Result:
    """One ternary TALU op (TERNARY table).  0x0-0x7 are the binary ops (``c`` ignored)."""
    name = TERNARY.get(code)
    if name is None:
        raise ValueError(f"unknown TALU ternary op 0x{code:x}")
    if quant_layout not in QUANT_LAYOUTS:
        raise ValueError(f"quant_layout must be one of {QUANT_LAYOUTS}, not {quant_layout!r}")
    f, t = _setup(fmt, trm, "frm")
    a, b, c, old = bytes(a), bytes(b), bytes(c), bytes(old)
    _check(len(a), row_bytes, b, c, old)
    if code < 0x8:
        return _binary_named(name, a, b, old, f, t, False, False, active_granules, granule)
    ab, bb, cb = F.codes(a, f), F.codes(b, f), F.codes(c, f)
    if name == "quantize":
        return _quantize(ab, bb, cb, f, t, old, quant_layout, active_granules, granule)
    if name == "dequantize" and quant_layout == "packed":
        return _dequantize_packed(a, bb, cb, f, t, old, active_granules, granule)
    mod = talu_float if f.is_float else talu_int
    out, flags, sat = mod.ternary(name, ab, bb, cb, f, t)
    return _elementwise(out, f, flags, sat, old, active_granules, granule)


def _quantize(ab: U64, bb: U64, cb: U64, f: Format, t: Trm, old: bytes, layout: str,
              active: int | None, granule: int) -> Result:
    if f.is_float:
        v, flags, sat = talu_float.quantize(ab, bb, cb, f, t)
    else:
        v, flags, sat = talu_int.quantize(ab, bb, cb, f)
    if layout == "packed":
        data = F.pack(int_result(v, F.INT8, False)[0], F.INT8)
        offsets = np.arange(v.size, dtype=np.int64)
        return _result(data + old[len(data):], flags, sat, offsets, active, granule)
    # element layout: the int8 value as an element of tfmt (rounded with trm for fp8, whose 4-bit
    # significand cannot hold every int8)
    out, f2, s2 = convert_codes(int_result(v, F.INT32, False)[0], F.INT32, f, t)
    return _elementwise(out, f, flags | f2, sat | s2, old, active, granule)


def _dequantize_packed(a: bytes, bb: U64, cb: U64, f: Format, t: Trm, old: bytes,
                       active: int | None, granule: int) -> Result:
    """Packed layout: ``a`` holds int8 codes in its first E bytes (E = elements of tfmt).

    The int8 values enter the arithmetic exactly (not first rounded to an fp8 format).
    """
    n = bb.size
    av = np.frombuffer(a[:n], dtype=np.int8).astype(np.int64)
    if f.is_float:
        b_op, c_op = talu_float.Operand(bb, f), talu_float.Operand(cb, f)
        nv = np.where(b_op.snan | c_op.snan, F.NV, 0).astype(np.uint8)
        out, flags, sat = talu_float.dequantize(av.astype(np.float64), b_op.x, c_op.x, f, t, nv)
    else:
        out, flags, sat = talu_int.ternary("dequantize", int_result(av, f, False)[0], bb, cb, f, t)
    return _elementwise(out, f, flags, sat, old, active, granule)
