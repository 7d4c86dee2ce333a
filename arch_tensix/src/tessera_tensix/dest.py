"""The Dest register file (spec tensix-sfpu.md §10.1, seed 003 §1, tensix.md 5.1 #8).

Storage is ``bits``: 1024 rows × 16 columns of 16-bit cells (``DstBits``), plus
per-row validity:

* ``row_valid[r]`` — false once ZEROACC marked physical row ``r`` undefined;
* ``written[r, c]`` — cell ``(r, c)`` of an undefined row has been written since
  (SFPSTORE writes half a row at a time); a row becomes valid again when all 16
  cells are written.  ``cell_defined(r, c) = row_valid[r] or written[r, c]``.

ZEROACC never changes ``bits`` (it marks rows, as the hardware's zero flags do), so
BH ZEROACC with ``clear_zero_flags`` can make the old contents visible again.

Two views index the same storage (the row remaps depend on backend config
``DEST_ACCESS_CFG_remap_addrs`` / ``DEST_ACCESS_CFG_swizzle_32b``):

* ``Dst16b[r][c] = DstBits[Adj16(r)][c]``
* ``Dst32b[r][c] = DstBits[Adj32(r)][c] << 16 | DstBits[Adj32(r) + 8][c]``

``ADJ16[remap]`` and ``ADJ32[remap, swizzle]`` are the remaps as lookup tables over
all 1024 row numbers.  Cell layouts (all "shuffled" relative to IEEE order):

==============  ==================================================================
BF16 cell       [15] sign, [14:8] mantissa, [7:0] exponent
FP16 cell       [15] sign, [14:5] mantissa, [4:0] exponent (no Inf/NaN encodings)
FP32 / Int"32"  Dst32b: high half = BF16 cell of the top 16 bits, low half = bits [15:0]
Int"8"          [15] sign, [14:5] magnitude, [4:0] = 16 (0 when written with magnitude 0)
Int"16"         opaque 16 bits ([15] sign, [14:0] magnitude when signed)
==============  ==================================================================

The conversion helpers below are numpy-vectorised (``uint32`` arrays in and out) and
also accept Python ints.  ``lane_cells`` gives the flat cell indices an SFPLOAD /
SFPSTORE touches (4 rows × 8 even or odd columns), cached per address pattern.
"""

from __future__ import annotations

from functools import cache, lru_cache
from typing import Any

import numpy as np

ROWS, COLS = 1024, 16
ROW_MASK10 = 0x3FF

# ----------------------------------------------------------------------------- remaps


def adj16(r: Any, remap: bool) -> Any:
    """Adj16: with remap_addrs, row bits 5..3 become (old 3, old 5, old 4)."""
    if remap:
        r = (r & 0x3C7) ^ ((r & 0x030) >> 1) ^ ((r & 0x008) << 2)
    return r


def adj32(r: Any, remap: bool, swizzle: bool) -> Any:
    """Adj32: Adj16, the optional 32-bit swizzle, then bits 8..3 move up one place."""
    r = adj16(r, remap)
    if swizzle:
        r = (r & 0x3F3) ^ ((r & 0x018) >> 1) ^ ((r & 0x004) << 1)
    return ((r & 0x1F8) << 1) | (r & 0x207)


_R = np.arange(ROWS, dtype=np.int64)
#: ADJ16[remap][row] and ADJ32[remap][swizzle][row] (physical DstBits row of the high half)
ADJ16 = np.stack([adj16(_R, False), adj16(_R, True)])
ADJ32 = np.stack([np.stack([adj32(_R, m, s) for s in (False, True)]) for m in (False, True)])
ADJ16.setflags(write=False)
ADJ32.setflags(write=False)

# ------------------------------------------------------------------------ bit layouts
# All helpers work on uint32 numpy arrays (or Python ints) and return the same kind.


def shuffle_bf16(b: Any) -> Any:
    """IEEE BF16 bits → Dst BF16 cell (sign, mantissa, exponent)."""
    return (b & 0x8000) | ((b & 0x7F) << 8) | ((b >> 7) & 0xFF)


def unshuffle_bf16(h: Any) -> Any:
    """Dst BF16 cell → IEEE BF16 bits."""
    return (h & 0x8000) | ((h & 0xFF) << 7) | ((h >> 8) & 0x7F)


def shuffle_fp32(x: Any) -> Any:
    """IEEE FP32 (or sign-magnitude int32) → Dst32b value (BF16 shuffle of the high half)."""
    return (shuffle_bf16(x >> 16) << 16) | (x & 0xFFFF)


def unshuffle_fp32(w: Any) -> Any:
    """Dst32b value → IEEE FP32 bits (or the sign-magnitude integer stored)."""
    return (unshuffle_bf16(w >> 16) << 16) | (w & 0xFFFF)


def shuffle_fp16(f: Any) -> Any:
    """IEEE FP16 bits (sign, exp5, man10) → Dst FP16 cell (sign, man10, exp5)."""
    return (f & 0x8000) | ((f & 0x3FF) << 5) | ((f >> 10) & 0x1F)


def unshuffle_fp16(h: Any) -> Any:
    """Dst FP16 cell → IEEE FP16 bit order."""
    return (h & 0x8000) | ((h & 0x1F) << 10) | ((h >> 5) & 0x3FF)


def int8_cell(sign: Any, mag: Any) -> Any:
    """Integer "8" cell from a sign bit and a 10-bit magnitude (exponent field 16)."""
    return (sign << 15) | ((mag & 0x3FF) << 5) | 16


# ------------------------------------------------------------- SFPLOAD conversions (§10.3)
_U32 = np.uint32


def fp16_cell_to_fp32(h: np.ndarray, inf: np.ndarray | bool = False) -> np.ndarray:
    """SFPLOAD FP16: rebias the 5-bit exponent (+112); ``inf`` lanes map exp 31/man 0x3FF to ±Inf."""
    s = (h >> 15) << 31
    m = (h >> 5) & 0x3FF
    e = h & 0x1F
    out = s | np.where(e != 0, (e + 112) << 23, 0).astype(_U32) | (m << 13)
    if np.any(inf):
        big = inf & (e == 31) & (m == 0x3FF)
        out = np.where(big, s | 0x7F800000, out).astype(_U32)
    return out


def load_convert(mod0: int, h: np.ndarray | None, w: np.ndarray | None, old: np.ndarray,
                 inf: np.ndarray | bool = False, wh: bool = False) -> np.ndarray:
    """LReg value of SFPLOAD ``mod0`` (1..15) from 16-bit cells ``h`` or Dst32b values ``w``.

    ``old`` is the previous LReg contents (LO16_ONLY / HI16_ONLY), ``inf`` the lanes'
    ENABLE_FP16A_INF bits.  ``wh`` selects the Wormhole conversions (INT8 ±127,
    INT32_SM / INT8_COMP → two's complement).
    """
    if mod0 == 11:
        return np.zeros_like(old)
    if mod0 in (3, 4, 10, 12):
        if w is None:
            raise ValueError(f"SFPLOAD Mod0 {mod0} converts Dst32b values: w is needed")
        v = unshuffle_fp32(w)
        if wh and mod0 == 12:
            v = _sm_to_twos(v)
        return v
    if h is None:
        raise ValueError(f"SFPLOAD Mod0 {mod0} converts 16-bit cells: h is needed")
    if mod0 == 2:
        return unshuffle_bf16(h) << 16
    if mod0 == 1:
        return fp16_cell_to_fp32(h, inf)
    if mod0 in (6, 9):
        return h.copy()
    if mod0 == 7:
        return h << 16
    if mod0 == 8:
        return ((h >> 15) << 31) | (h & 0x7FFF)
    if mod0 == 5:
        return ((h >> 15) << 31) | ((h >> 5) & (0x7F if wh else 0xFF))
    if mod0 == 13:
        v = ((h >> 15) << 31) | ((h >> 5) & 0x3FF)
        return _sm_to_twos(v) if wh else v
    if mod0 == 14:
        return (old & 0xFFFF0000) | h
    if mod0 == 15:
        return (h << 16) | (old & 0xFFFF)
    raise ValueError(f"SFPLOAD Mod0 {mod0} has no conversion (SRCB must be resolved first)")


def _sm_to_twos(v: np.ndarray) -> np.ndarray:
    mag = v & 0x7FFFFFFF
    return np.where(v >> 31, (-mag.astype(np.int64)) & 0xFFFFFFFF, mag).astype(_U32)


def _twos_to_sm(x: np.ndarray) -> np.ndarray:
    sign = x & 0x80000000
    mag = np.where(sign != 0, (-x.astype(np.int64)) & 0xFFFFFFFF, x).astype(_U32)
    return sign | (mag & 0x7FFFFFFF)


# ------------------------------------------------------------ SFPSTORE conversions (§10.4)
#: Mod0 values that write Dst32b (the others write one Dst16b cell)
STORE_32 = frozenset({3, 4, 7, 9, 10, 12})
LOAD_32 = frozenset({3, 4, 10, 12})


def fp32_to_fp16_cell(x: np.ndarray) -> np.ndarray:
    """SFPSTORE FP16: truncate, flush |x| < 2^-14 to signed zero, saturate (no Inf/NaN)."""
    s = x >> 31
    k = ((x >> 23) & 0xFF).astype(np.int64) - 112
    f = x & 0x7FFFFF
    low = k <= 0
    high = k > 31
    k = np.where(low, 0, np.where(high, 31, k)).astype(_U32)
    f = np.where(low, 0, np.where(high, 0x7FFFFF, f)).astype(_U32)
    return (s << 15) | ((f >> 13) << 5) | k


def store_convert(mod0: int, x: np.ndarray, wh: bool = False) -> np.ndarray:
    """Dst value of SFPSTORE ``mod0`` (1..15): a 16-bit cell, or a Dst32b value for STORE_32."""
    if mod0 == 2:
        x = np.where((x & 0x7F800000) == 0, x & 0x80000000, x).astype(_U32)
        return shuffle_bf16(x >> 16)
    if mod0 == 3:
        if not wh:
            x = np.where((x & 0x7F800000) == 0, x & 0x80000000, x).astype(_U32)
        return shuffle_fp32(x)
    if mod0 in (4, 10):
        return shuffle_fp32(x)
    if mod0 == 12:
        return shuffle_fp32(_twos_to_sm(x) if wh else x)
    if mod0 == 1:
        return fp32_to_fp16_cell(x)
    if mod0 in (5, 13):
        if wh and mod0 == 13:
            x = _twos_to_sm(x)
        return int8_cell(x >> 31, x)
    if mod0 in (6, 14):
        return x & 0xFFFF
    if mod0 == 15:
        return x >> 16
    if mod0 == 8:
        return ((x >> 31) << 15) | (x & 0x7FFF)
    if mod0 == 9:
        return ((x << 16) | (x >> 16)) & 0xFFFFFFFF
    if mod0 == 7:
        return x.copy()
    if mod0 == 11:
        return np.zeros_like(x)
    raise ValueError(f"SFPSTORE Mod0 {mod0} has no conversion (SRCB must be resolved first)")


# ------------------------------------------------------------ lookup tables (hot paths)
# 16-bit conversions as 65536-entry tables: one ``take`` per instruction instead of a
# chain of numpy operations.  Built on first use from the reference helpers above.
_H = np.arange(1 << 16, dtype=np.uint32)


@cache
def load_table(mod0: int, inf: bool = False, wh: bool = False) -> np.ndarray:
    """uint32[65536]: SFPLOAD ``mod0`` of a 16-bit cell (modes 1, 2, 5..9, 13; not 14/15)."""
    t = load_convert(mod0, _H, None, np.zeros_like(_H), inf, wh=wh).astype(np.uint32)
    t.setflags(write=False)
    return t


@cache
def unshuffle_hi_table() -> np.ndarray:
    """uint32[65536]: high Dst32b cell → IEEE bits [31:16] (unshuffle_bf16(h) << 16)."""
    t = (unshuffle_bf16(_H) << 16).astype(np.uint32)
    t.setflags(write=False)
    return t


@cache
def shuffle_hi_table(flush: bool) -> np.ndarray:
    """uint16[65536]: x >> 16 → high Dst32b / BF16 cell; ``flush`` zeroes exponent-0 values
    to their sign (SFPSTORE BF16 and BH FP32)."""
    x = _H
    if flush:
        x = np.where((x & 0x7F80) == 0, x & 0x8000, x).astype(np.uint32)
    t = shuffle_bf16(x).astype(np.uint16)
    t.setflags(write=False)
    return t


@cache
def flush_lo16_table() -> np.ndarray:
    """uint16[65536]: x >> 16 → mask for the low half (0 when the exponent is 0)."""
    t = np.where((_H & 0x7F80) == 0, 0, 0xFFFF).astype(np.uint16)
    t.setflags(write=False)
    return t


@cache
def store_fp16_table() -> np.ndarray:
    """uint16[2^19]: x >> 13 → Dst FP16 cell (SFPSTORE FP16 depends on bits 31..13 only)."""
    t = fp32_to_fp16_cell(np.arange(1 << 19, dtype=np.uint32) << 13).astype(np.uint16)
    t.setflags(write=False)
    return t


# --------------------------------------------------------------------- lane addressing
LANE = np.arange(32)


@lru_cache(maxsize=4096)
def lane_cells(addr: int, colx: int, remap: bool, swizzle: bool) -> tuple[np.ndarray, ...]:
    """Cells touched by lane L of an SFPLOAD/SFPSTORE at 10-bit ``addr`` (§10.2).

    ``colx`` is a bit mask over lanes 0..7 of their COL_EXCHANGE bit (read from
    LaneConfig[L & 7]).  Returns ``(row, col, flat16, flat32_hi, flat32_lo)``: the
    logical Row and Column of each lane (for index capture), and flat indices into
    ``bits.ravel()`` of the Dst16b cell and of the two halves of the Dst32b cell.
    """
    row = (addr & 0x3FC) + (LANE >> 3)
    odd = np.full(32, (addr >> 1) & 1, dtype=np.int64)
    if colx:
        odd |= (colx >> (LANE & 7)) & 1
    col = (LANE & 7) * 2 + odd
    p16 = ADJ16[int(remap)][row]
    p32 = ADJ32[int(remap)][int(swizzle)][row]
    out = (row, col, p16 * COLS + col, p32 * COLS + col, (p32 + 8) * COLS + col)
    for a in out:
        a.setflags(write=False)
    return out


# ----------------------------------------------------------------------------- storage
class Dest:
    """Dest: ``bits`` (1024×16 uint16), row validity, and the access helpers."""

    def __init__(self) -> None:
        self.bits = np.zeros((ROWS, COLS), dtype=np.uint16)
        self.flat = self.bits.reshape(-1)          # a view: flat cell index = row*16 + col
        self.row_valid = np.ones(ROWS, dtype=bool)
        self.written = np.zeros((ROWS, COLS), dtype=bool)
        self.all_valid = True                      # fast path: no row is undefined

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)
        self.flat = self.bits.reshape(-1)          # re-link the view after unpickling

    def __getstate__(self) -> dict[str, Any]:
        state = dict(self.__dict__)
        state.pop("flat", None)
        return state

    # ---------------------------------------------------------------- validity
    def invalidate(self, rows: Any) -> None:
        """Mark physical rows undefined (ZEROACC); their bits are kept."""
        self.row_valid[rows] = False
        self.written[rows] = False
        self.all_valid = bool(self.row_valid.all())

    def revalidate(self, rows: Any) -> None:
        """Mark physical rows defined again (ZEROACC clear_zero_flags, or a full-row write)."""
        self.row_valid[rows] = True
        self.all_valid = bool(self.row_valid.all())

    def mark_written(self, flat: np.ndarray) -> None:
        """Cells (flat indices) were written: rows whose 16 cells are all written become valid."""
        if self.all_valid:
            return
        wflat = self.written.reshape(-1)
        wflat[flat] = True
        rows = np.unique(flat // COLS)
        full = rows[self.written[rows].all(axis=1)]
        if full.size:
            self.row_valid[full] = True
            self.all_valid = bool(self.row_valid.all())

    def defined(self, flat: np.ndarray) -> np.ndarray:
        """Per flat cell index: is the cell's content defined?"""
        return self.row_valid[flat // COLS] | self.written.reshape(-1)[flat]

    # ---------------------------------------------------------------- views
    def dst16(self, remap: bool = False) -> np.ndarray:
        """The Dst16b view as a (1024, 16) uint16 copy."""
        return self.bits[ADJ16[int(remap)]]

    def dst32(self, remap: bool = False, swizzle: bool = False) -> np.ndarray:
        """The Dst32b view as a (512, 16) uint32 copy (rows 0..511)."""
        p = ADJ32[int(remap)][int(swizzle)][:512]
        return (self.bits[p].astype(np.uint32) << 16) | self.bits[p + 8]

    def get16(self, row: int, col: int, remap: bool = False) -> int:
        return int(self.bits[ADJ16[int(remap)][row & ROW_MASK10], col])

    def set16(self, row: int, col: int, value: int, remap: bool = False) -> None:
        self.bits[ADJ16[int(remap)][row & ROW_MASK10], col] = value & 0xFFFF

    def get32(self, row: int, col: int, remap: bool = False, swizzle: bool = False) -> int:
        p = int(ADJ32[int(remap)][int(swizzle)][row & ROW_MASK10])
        return (int(self.bits[p, col]) << 16) | int(self.bits[p + 8, col])

    def set32(self, row: int, col: int, value: int, remap: bool = False, swizzle: bool = False) -> None:
        p = int(ADJ32[int(remap)][int(swizzle)][row & ROW_MASK10])
        self.bits[p, col] = (value >> 16) & 0xFFFF
        self.bits[p + 8, col] = value & 0xFFFF

    # ------------------------------------------------- whole-register conversions (tests, tools)
    def write_fp32(self, values: np.ndarray, row0: int = 0, remap: bool = False,
                   swizzle: bool = False) -> None:
        """Store float32 values (shape (n, 16)) into Dst32b rows row0.. in Dst FP32 layout."""
        v = np.ascontiguousarray(values, dtype=np.float32).view(np.uint32).reshape(-1, COLS)
        p = ADJ32[int(remap)][int(swizzle)][(row0 + np.arange(v.shape[0])) & ROW_MASK10]
        w = shuffle_fp32(v)
        self.bits[p] = (w >> 16).astype(np.uint16)
        self.bits[p + 8] = (w & 0xFFFF).astype(np.uint16)

    def read_fp32(self, nrows: int, row0: int = 0, remap: bool = False,
                  swizzle: bool = False) -> np.ndarray:
        """Dst32b rows row0..row0+nrows as float32 (IEEE layout), shape (nrows, 16)."""
        p = ADJ32[int(remap)][int(swizzle)][(row0 + np.arange(nrows)) & ROW_MASK10]
        w = (self.bits[p].astype(np.uint32) << 16) | self.bits[p + 8]
        return unshuffle_fp32(w).astype(np.uint32).view(np.float32)

    def write_bf16(self, values: np.ndarray, row0: int = 0, remap: bool = False) -> None:
        """Store float32 values (shape (n, 16)) truncated to BF16 into Dst16b rows row0.."""
        v = np.ascontiguousarray(values, dtype=np.float32).view(np.uint32).reshape(-1, COLS)
        p = ADJ16[int(remap)][(row0 + np.arange(v.shape[0])) & ROW_MASK10]
        self.bits[p] = shuffle_bf16(v >> 16).astype(np.uint16)

    def read_bf16(self, nrows: int, row0: int = 0, remap: bool = False) -> np.ndarray:
        """Dst16b rows row0..row0+nrows read as BF16, widened to float32."""
        p = ADJ16[int(remap)][(row0 + np.arange(nrows)) & ROW_MASK10]
        return (unshuffle_bf16(self.bits[p].astype(np.uint32)) << 16).astype(np.uint32).view(np.float32)

    def state(self) -> dict[str, Any]:
        """JSON-able summary (``--dump-state``): undefined rows only; the data goes to --dest-out."""
        bad = np.nonzero(~self.row_valid)[0]
        return {"undefined_rows": _ranges(bad)}


def _ranges(rows: np.ndarray) -> list[str]:
    out: list[str] = []
    if rows.size == 0:
        return out
    start = prev = int(rows[0])
    for r in rows[1:]:
        r = int(r)
        if r != prev + 1:
            out.append(f"{start}" if start == prev else f"{start}-{prev}")
            start = r
        prev = r
    out.append(f"{start}" if start == prev else f"{start}-{prev}")
    return out
