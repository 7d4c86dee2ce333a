"""Helpers of the matrix-unit arithmetic tests (test_matrix.py, test_matrix_vectors.py).

* An independent encoder of MVMUL, DOTPV, GAPOOL, GMPOOL, ELWMUL, ELWADD, ELWSUB, written
  from spec tensix.md §5.2 and ttsim's field ranges (Blackhole AddrMod [16:14], GMPOOL /
  GAPOOL [17:15]; Wormhole [16:15]) — not from the package's tables.
* ``Thread`` — a stand-in Tensix thread the semantic functions accept, and
  ``execute(thread, word)`` (decode with the chip's table, run the bound function).
* A reference model written from the pages one cell at a time with Python numbers:
  ``ref_src`` (ReadBF16/ReadFP16/ReadTF32/ReadSrcInt8 and Src?FidelityBits applied to the
  FP32 bit masks the pages give), ``ref_read_dst`` / ``ref_write_dst`` (Dst layouts and
  FloatBitPatterns.md's rules, rounding through ``math.frexp`` rather than bit tricks),
  ``ref_mvmul``, ``ref_elementwise`` and ``ref_gmpool`` (GMPOOL.md's loop, literally).
"""

from __future__ import annotations

import math
from types import SimpleNamespace
from typing import Any

import numpy as np

from tessera.isa import Decoder
from tessera_tensix.arch import TENSIX_BH, TENSIX_WH
from tessera_tensix.config import ConfigSpace, TensixConfig
from tessera_tensix.core import TensixCore
from tessera_tensix.srcab import MATRIX

CHIPS = ("bh", "wh")
#: ALU format codes (Unpackers/FormatConversion.md)
FP32, FP16, TF32, BF16, INT8 = 0, 1, 4, 5, 14
MVMUL, DOTPV, GAPOOL, GMPOOL = 0x26, 0x29, 0x34, 0x33
ELWMUL, ELWADD, ELWSUB = 0x27, 0x28, 0x30


# ------------------------------------------------------------------ encoder
def _am(chip: str, addr_mod: int, pool: bool = False) -> int:
    if chip == "wh":
        return (addr_mod & 3) << 15
    return (addr_mod & 7) << (15 if pool else 14)


def mvmul(chip: str, dst: int = 0, *, flip_a: int = 0, flip_b: int = 0, bcast: int = 0,
          addr_mod: int = 0) -> int:
    return MVMUL << 24 | flip_b << 23 | flip_a << 22 | bcast << 19 | _am(chip, addr_mod) | (dst & 0x3FF)


def dotpv(chip: str, dst: int = 0, *, flip_a: int = 0, flip_b: int = 0, addr_mod: int = 0) -> int:
    return DOTPV << 24 | flip_b << 23 | flip_a << 22 | _am(chip, addr_mod) | (dst & 0x3FF)


def gapool(chip: str, dst: int = 0, *, flip_a: int = 0, flip_b: int = 0, addr_mod: int = 0) -> int:
    return GAPOOL << 24 | flip_b << 23 | flip_a << 22 | _am(chip, addr_mod, True) | (dst & 0x3FF)


def gmpool(chip: str, dst: int = 0, *, flip_a: int = 0, flip_b: int = 0, argmax: int = 0,
           addr_mod: int = 0) -> int:
    return (GMPOOL << 24 | flip_b << 23 | flip_a << 22 | 1 << 19 | _am(chip, addr_mod, True)
            | argmax << 14 | (dst & 0x3FF))


def elw(opcode: int, chip: str, dst: int = 0, *, add_dst: int = 0, bcast_row: int = 0,
        bcast_col0: int = 0, flip_a: int = 0, flip_b: int = 0, addr_mod: int = 0) -> int:
    return (opcode << 24 | flip_b << 23 | flip_a << 22 | add_dst << 21 | bcast_row << 20
            | bcast_col0 << 19 | _am(chip, addr_mod) | (dst & 0x3FF))


# ------------------------------------------------------------------ stand-in thread
class Thread:
    """The parts of a TensixThread the matrix-unit semantics use."""

    def __init__(self, chip: str = "bh", *, lenient: bool = False) -> None:
        self.core = TensixCore(TensixConfig(lenient=lenient), chip=chip)
        self.arch = SimpleNamespace(name="tensix" if chip == "bh" else "tensix-wh")
        self.chip = chip
        self.name = "t1"
        self.tid = 1
        self.gpr = [0] * 64
        self.rwc = {"dst": 0, "srca": 0, "srcb": 0, "sp": 0, "fidelity": 0, "bias": 0,
                    "dst_cr": 0, "srca_cr": 0, "srcb_cr": 0}
        self.tcfg = ConfigSpace()

    def give_banks(self) -> None:
        """Both banks of SrcA and SrcB to the matrix unit (as SETDVALID twice would)."""
        for reg in (self.core.srca, self.core.srcb):
            reg.allowed[:] = [MATRIX, MATRIX]


_DECODERS = {"bh": Decoder(TENSIX_BH), "wh": Decoder(TENSIX_WH)}


def execute(thread: Thread, word: int) -> None:
    ins = _DECODERS[thread.chip].decode(word, 0x40)
    ins.run(thread, ins)


# ------------------------------------------------------------------ Src cells
def src_cell(value: float, style: str) -> int:
    """A Src cell holding ``value`` exactly (tests choose representable values)."""
    if style == "INT8":
        v = int(value)
        return (v < 0) << 18 | (abs(v) & 0x3FF) << 8 | (16 if v else 0)
    if value == 0:
        return 0
    m, e = math.frexp(abs(value))                      # value = m * 2**e, 0.5 <= m < 1
    man = round(m * 2048) - 1024                       # 10 fraction bits after the leading one
    assert 0 <= man < 1024 and (m * 2048).is_integer(), value
    exp = e - 1 + (15 if style == "FP16" else 127)
    if style == "BF16":
        assert man & 7 == 0, value
    assert 0 < exp < (32 if style == "FP16" else 256), value
    return (value < 0) << 18 | man << 8 | exp


# FP32 bit masks of SrcAFidelityBits / SrcBFidelityBits (ELWMUL.md), on the mantissa field
_A_EVEN, _A_ODD_KEEP = 0xFFF80000 & 0x7FFFFF, 0xFFF83FFF & 0x7FFFFF
_B_EVEN, _B_ODD_KEEP = 0xFFFE0000 & 0x7FFFFF, 0xFFFE1FFF & 0x7FFFFF


def ref_src(cell: int, style: str, operand: str | None = None, phase: int = 0) -> float:
    """What the matrix unit reads from Src ``cell``: the whole value (``operand`` None), or
    the part of SrcA (``"A"``) / SrcB (``"B"``) that fidelity phase ``phase`` multiplies."""
    sign = -1 if (cell >> 18) & 1 else 1
    if style == "INT8":
        if operand == "A":
            cell &= 0x41FFF if phase & 1 else 0x4E0FF
        elif operand == "B":
            cell &= 0x40FFF if phase & 2 else 0x7F0FF
        return sign * ((cell >> 8) & 0x3FF)
    exp = cell & (0x1F if style == "FP16" else 0xFF)
    if exp == 0:
        return 0.0                                     # denormals (and zero) read as zero
    mant = ((cell >> 8) & 0x3FF) << 13                 # as the FP32 mantissa field
    if style == "BF16":
        mant &= 0x7F0000                               # BF16 keeps 7 mantissa bits
    scale = 2.0 ** (exp - (15 if style == "FP16" else 127) - 23)
    if operand == "A":
        if phase & 1 == 0:
            return sign * ((1 << 23) | (mant & _A_EVEN)) * scale
        return sign * (mant - (mant & _A_ODD_KEEP)) * scale    # x - bits.f
    if operand == "B":
        if phase & 2 == 0:
            return sign * ((1 << 23) | (mant & _B_EVEN)) * scale
        return sign * (mant - (mant & _B_ODD_KEEP)) * scale
    return sign * ((1 << 23) | mant) * scale


# ------------------------------------------------------------------ Dst cells
def _unshuffle16(h: int) -> int:
    """Dst BF16 cell / Dst32b high half → IEEE bits [15:0] (sign, exponent 8, mantissa 7)."""
    return (h & 0x8000) | (h & 0xFF) << 7 | (h >> 8) & 0x7F


def _shuffle16(b: int) -> int:
    return (b & 0x8000) | (b & 0x7F) << 8 | (b >> 7) & 0xFF


def ref_read_dst(hi: int, lo: int, fmt: str) -> float:
    """Dest cell (``hi`` the Dst16b cell / high half, ``lo`` the low half of Dst32b) as a number."""
    if fmt == "BF16":
        b = _unshuffle16(hi)
        exp, man, bits, bias = (b >> 7) & 0xFF, b & 0x7F, 7, 127
    elif fmt == "FP16":
        exp, man, bits, bias = hi & 0x1F, (hi >> 5) & 0x3FF, 10, 15
        b = hi
    else:
        w = _unshuffle16(hi) << 16 | lo
        if fmt == "INT32":
            return -(w & 0x7FFFFFFF) if w >> 31 else w & 0x7FFFFFFF
        exp, man, bits, bias = (w >> 23) & 0xFF, w & 0x7FFFFF, 23, 127
        b = w >> 16
    if exp == 0:
        return 0.0
    return (-1 if b >> 15 else 1) * (1 + man / 2 ** bits) * 2.0 ** (exp - bias)


def ref_f32(x: float) -> float:
    """``float`` store: round to FP32 (nearest even); too large → infinity."""
    with np.errstate(over="ignore"):
        return float(np.float32(x))


def _round(value: float, bits: int) -> tuple[int, int]:
    """|value| as (unbiased exponent, significand with ``bits`` fraction bits), nearest even."""
    m, e = math.frexp(abs(value))
    sig = round(m * 2 ** (bits + 1))                   # Python rounds halves to even
    if sig == 2 ** (bits + 1):
        sig, e = sig // 2, e + 1
    return e - 1, sig - 2 ** bits


def ref_write_dst(x: float, fmt: str) -> tuple[int, int]:
    """The Dest cell (hi, lo) the matrix unit writes for result ``x`` (lo unused for
    16-bit formats): FP32 first (nearest even, overflow saturates to exponent 255 /
    mantissa 0, zero exponents +0), then BF16 / FP16 from that; integers saturate."""
    if fmt == "INT32":
        v = max(-(2 ** 31 - 1), min(2 ** 31 - 1, int(x)))
        w = (1 << 31 | -v) if v < 0 else v
        return _shuffle16(w >> 16), w & 0xFFFF
    f = ref_f32(x)
    if f == 0 or (math.isfinite(f) and abs(f) < 2.0 ** -126):
        return 0, 0
    neg = f < 0
    if fmt == "FP32":
        if math.isinf(f):
            w = neg << 31 | 0xFF << 23
        else:
            e, man = _round(f, 23)
            w = neg << 31 | (e + 127) << 23 | man
        return _shuffle16(w >> 16), w & 0xFFFF
    if fmt == "BF16":
        e, man = (128, 0) if math.isinf(f) else _round(f, 7)
        if e + 127 >= 255:
            e, man = 128, 0
        return _shuffle16(neg << 15 | (e + 127) << 7 | man), 0
    e, man = (99, 0) if math.isinf(f) else _round(f, 10)
    if e + 15 > 31:
        e, man = 16, 0x3FF                              # saturate at exponent 31, mantissa 1023
    if e + 15 < 1:
        return 0, 0
    return neg << 15 | man << 5 | (e + 15), 0


# ------------------------------------------------------------------ instructions
def ref_mvmul(a: list[list[int]], b: list[list[int]], dst: list[tuple[int, int]] | None,
              style: str, fmt: str, phase: int) -> list[list[tuple[int, int]]]:
    """``Dst += SrcB @ SrcA`` for SrcA cells ``a`` (16x16), SrcB cells ``b`` (n x 16) and the
    old Dest cells ``dst`` (n rows of 16 (hi, lo)); the new cells.  The products are summed
    in k order as Python floats (float64), then stored as ``float`` (FP32)."""
    out = []
    for i, brow in enumerate(b):
        row = []
        for j in range(16):
            x = 0.0 if style != "INT8" else 0
            for k in range(16):
                x += ref_src(brow[k], style, "B", phase) * ref_src(a[k][j], style, "A", phase)
            if style != "INT8":
                x = ref_f32(x)
            row.append(ref_write_dst(x + ref_read_dst(*dst[i][j], fmt), fmt))
        out.append(row)
    return out


def ref_elementwise(op: str, a: list[list[int]], b: list[list[int]], dst, style: str, fmt: str,
                    phase: int, add: bool) -> list[list[tuple[int, int]]]:
    """ELWMUL / ELWADD / ELWSUB on 8x16 cells (``b`` already broadcast), ELWADD.md / ELWMUL.md."""
    out = []
    for i in range(8):
        row = []
        for j in range(16):
            if op == "MUL":
                x = ref_src(a[i][j], style, "A", phase) * ref_src(b[i][j], style, "B", phase)
            else:
                x = ref_src(a[i][j], style) + (1 if op == "ADD" else -1) * ref_src(b[i][j], style)
            if style != "INT8":
                x = ref_f32(x)
                if op != "MUL" and phase & 1:
                    x /= 32.0
                if op != "MUL" and phase & 2:
                    x /= 128.0
            if add or op == "MUL":
                x += ref_read_dst(*dst[i][j], fmt)
            row.append(ref_write_dst(x, fmt))
        out.append(row)
    return out


def ref_gmpool(a: list[list[int]], b_row: list[int], dst_val: list[int], style: str,
               dst_style: str, argmax: bool) -> list[int]:
    """GMPOOL.md's per-column loop, one column at a time: the new raw 32-bit Dst values."""
    def read_dst(v: int) -> list[int]:
        sign = v >> 31
        if dst_style == "INT32":
            return [sign, ((v >> 10) & 0x3F) + (((v >> 24) & 7) << 6), v & 0x3FF]
        if dst_style == "FP16":
            return [sign, ((v >> 16) & 0x1F) + 15, (v >> 21) & 0x3FF]
        man = ((v >> 24) & 0x7F) << 3
        if dst_style == "TF32":
            man += (v >> 13) & 7
        return [sign, ((v >> 16) & 0xFF) + 127, man]

    def read_scaled(av: int, bv: int) -> list[int]:
        ae, be = av & 0xFF, bv & 0xFF
        if be == 0:
            return [1, 0x1FF, 0x3FF]
        if ae == 0:
            return [0, 0, 0]
        mag = (av >> 8) & 0x3FF
        if style == "INT8":
            return [av >> 18, 0, mag]
        if style == "FP16":
            return [av >> 18, (ae & 0x1F) + (be & 0x1F), mag]
        return [av >> 18, ae + be, mag & 0x3F8 if style == "BF16" else mag]

    def write(d: list[int]) -> int:
        sign, exp, man = d
        if dst_style == "INT32":
            return sign << 31 | (exp & 7) << 10 | man
        if dst_style == "FP16":
            return 0 if (exp & 0x3F) == 0 else sign << 31 | man << 21 | ((exp - 15) & 0x1F) << 16
        if exp == 0:
            return 0
        x = sign << 31 | (man & 0x3F8) << 21 | ((exp - 127) & 0xFF) << 16
        return x + ((man & 7) << 13) if dst_style == "TF32" else x

    def comparable(d: list[int]) -> int:
        return (-1 if d[0] else 1) * ((d[1] << 10) + d[2])

    out = []
    transform = [0, 3, 6, 1, 4, 7, 2, 5]
    for j in range(16):
        v = dst_val[j]
        best = read_dst(v)
        index = v & 0xFF
        phase = (v + 0x100) & 0xF00
        for i_ in range(16):
            i = i_ ^ 4 if i_ < 8 else i_
            x = read_scaled(a[i][j], b_row[i])
            if comparable(x) >= comparable(best):
                best = x
                if i < 8:
                    index = ((phase >> 4) + transform[i]) & 0xFF
        if argmax:
            result = phase | index
            v = result if dst_style == "INT32" else write(best) | result
        else:
            v = write(best)
        out.append(v & 0xFFFFFFFF)
    return out


# ------------------------------------------------------------------ Dest access (reference)
def adj32(row: int) -> int:
    """Dst32b row → physical DstBits row of its high half (Dst.md, no remap/swizzle)."""
    return ((row & 0x1F8) << 1) | (row & 0x207)


def dst_cells(t: Thread, rows: list[int], wide: bool) -> list[list[tuple[int, int]]]:
    bits = t.core.dest.bits
    if wide:
        return [[(int(bits[adj32(r), j]), int(bits[adj32(r) + 8, j])) for j in range(16)] for r in rows]
    return [[(int(bits[r, j]), 0) for j in range(16)] for r in rows]


def put_dst_cells(t: Thread, rows: list[int], cells, wide: bool) -> None:
    bits = t.core.dest.bits
    for r, row in zip(rows, cells):
        for j, (hi, lo) in enumerate(row):
            if wide:
                bits[adj32(r), j], bits[adj32(r) + 8, j] = hi, lo
            else:
                bits[r, j] = hi


def configure(t: Any, style: str, fmt: str) -> None:
    """Backend/thread config selecting Src ``style`` and Dst ``fmt`` (as the pages decide)."""
    cfg, tcfg = t.core.cfg, t.tcfg
    if style == "INT8":
        cfg.set("ALU_ACC_CTRL_INT8_math_enabled", 1)
        return
    if fmt == "FP16" and style == "FP16":
        tcfg.set("FP16A_FORCE_Enable", 1)
        return
    cfg.set("ALU_FORMAT_SPEC_REG0_SrcA", {"BF16": BF16, "FP16": FP16, "TF32": TF32}[style])
    cfg.set("ALU_ACC_CTRL_Fp32_enabled", int(fmt == "FP32"))
