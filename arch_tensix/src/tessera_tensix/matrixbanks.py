"""The matrix unit's side of SrcA/SrcB: bank ownership, Src cell layouts, Dest as it sees it.

Shared by the matrix-unit instructions (:mod:`tessera_tensix.semantics.srcmoves`,
:mod:`tessera_tensix.semantics.rwc_ops`, the arithmetic in ``semantics/matrix_ops.py``)
and by the unpackers' hand-over (SETDVALID, UNPACR_NOP).  Sources: WormholeB0
``SrcASrcB.md``, ``SETDVALID.md``, ``CLEARDVALID.md``, ``SETRWC.md``, ``MVMUL.md``
(flip bits), ``MOVA2D.md`` / ``MOVD2A.md`` (layouts and format styles), ``ZEROACC.md``
(undefined Dest rows), ``SFPCONFIG.md`` (``LaneConfig.BLOCK_DEST_MOV``).  Blackhole has
no page of its own for these; it shares them (spec tensix.md §1.1, §5).

Ownership (``core.srca`` / ``core.srcb`` are :class:`~tessera_tensix.srcab.SrcRegister`):

* :func:`wait_for_matrix` — the implicit wait at the wait gate of MOVA2D, MOVB2D,
  MOVB2A, TRNSPSRCB, SHIFTXA/SHIFTXB, MVMUL, ELW*, …: park until the matrix unit's bank
  belongs to the matrix unit (call before any side effect);
* :func:`check_matrix_owns` — for instructions that do *not* wait (MOVD2A, MOVD2B, the
  SrcA side of MOVB2A): using a bank the unpackers own breaks the rule "a bank used by
  the wrong client" (lenient: the access happens anyway, as on hardware);
* :func:`flip_matrix_banks` — the flip bits of MVMUL/ELW*/…/SETRWC: unless
  ``CLR_DVALID_Src?_Disable``, give the matrix unit's bank back to the unpackers; the
  matrix unit moves to the other bank in any case;
* :func:`clear_dvalid` — CLEARDVALID (flip with ``KeepReadingSameSrc``, or ``Reset``);
* :func:`give_to_matrix` — SETDVALID: the unpacker's bank goes to the matrix unit, the
  unpacker moves to the other bank and its row cursor for the issuing thread restarts at
  ``SRC?_SET_Base << 4`` (the unpackers' :func:`tessera_tensix.unpack.hand_over`).

Src cell layouts (19 bits; ``uint32`` numpy arrays or ints in and out):

==============  ==========================================================
TF32 / BF16     [18] sign, [17:8] mantissa (BF16: low 3 bits 0), [7:0] exponent
FP16            [18] sign, [17:8] mantissa, [7:5] zero, [4:0] exponent
Integer "8"     [18] sign, [17:8] magnitude, [4:0] = 16 (0 when the magnitude is 0)
Integer "16"    opaque 16 bits moved like FP16 / BF16 cells
==============  ==========================================================

Choices where the pages are silent (also in docs/tensix.md, "SrcA and SrcB"):

* a matrix-unit write to an undefined Dest row first gives the whole row the identity
  value (zero), then writes, and the row is defined from then on — so columns a
  ``BLOCK_DEST_MOV`` bit skips read as zero afterwards, not as the stale bits;
* reads of undefined Dest rows by the matrix unit's moves give zero (ZEROACC.md: "the
  identity element … zero for all other instructions");
* ALU format codes 12 and 13 (unassigned) take the TF32 branch of the pages' format
  selection, which is written as "else /* TF32 */".
"""

from __future__ import annotations

from functools import cache
from typing import Any

import numpy as np

from tessera_tensix import rules
from tessera_tensix.dest import ADJ16, ADJ32, COLS, ROW_MASK10
from tessera_tensix.srcab import MASK19, MATRIX, UNPACKERS

__all__ = [
    "BF16_STYLE", "FP16_STYLE", "FORMATS", "check_matrix_owns", "clear_dvalid", "column_mask",
    "dst32_active", "dst_rows16", "dst_rows32", "flip_matrix_banks", "give_to_matrix",
    "move_style", "note_row", "read_dst16", "read_dst32", "remove_high_exponent",
    "remove_low_mantissa", "shuffle_bf16", "shuffle_fp16", "shuffle_tf32", "span_rows16",
    "span_rows32", "srca_format", "to_dest_table", "to_src_table", "wait_for_matrix",
    "write_dst16", "write_dst32",
]

# ------------------------------------------------------------------ data formats
#: ALU / unpacker data-format codes (Unpackers/FormatConversion.md's 4-bit encoding)
FORMATS = {"FP32": 0, "FP16": 1, "BFP8a": 2, "BFP4a": 3, "TF32": 4, "BF16": 5, "BFP8": 6,
           "BFP4": 7, "INT32": 8, "INT16": 9, "FP8": 10, "BFP2a": 11, "INT8": 14, "BFP2": 15}
FORMAT_NAMES = {code: name for name, code in FORMATS.items()}
#: formats whose Src cells hold an 8-bit exponent (TF32 separately: it keeps 10 mantissa bits)
BF16_STYLE = frozenset(FORMATS[n] for n in ("FP32", "BF16", "BFP8", "BFP4", "BFP2", "INT32", "INT16"))
#: formats whose Src cells hold a 5-bit exponent (FP16 and Integer "8", overlaid on it)
FP16_STYLE = frozenset(FORMATS[n] for n in ("FP16", "FP8", "BFP8a", "BFP4a", "BFP2a", "INT8"))
TF32 = FORMATS["TF32"]


def srca_format(thread: Any) -> int:
    """``SrcAFmt``: ``ALU_FORMAT_SPEC_REG_SrcA_val`` when overridden, else ``…REG0_SrcA``.

    Blackhole *implies* it instead: the format the unpacker last wrote the matrix unit's
    SrcA bank in, unless the thread's ``DISABLE_IMPLIED_SRCA_FMT_Base`` is set (no
    Blackhole page says so; tt-llk's llk_math_common.h: "ALU format is inferred" on
    Blackhole, so its kernels leave these fields at 0; the vendor's simulator ttsim, as
    wolfpine 2.2 reads it, latches the unpacker's output format per bank).  A bank no
    unpacker has written falls back to the configured format."""
    core = thread.core
    if core.chip == "bh" and not thread.tcfg.fields.get("DISABLE_IMPLIED_SRCA_FMT_Base", 0):
        implied = core.srca.formats[core.srca.matrix_bank]
        if implied is not None:
            return implied
    return srca_format_of(core.cfg.fields)


def srca_format_of(c: dict[str, int]) -> int:
    """:func:`srca_format` from the backend configuration's fields ``c``."""
    if c.get("ALU_FORMAT_SPEC_REG_SrcA_override", 0):
        return c.get("ALU_FORMAT_SPEC_REG_SrcA_val", 0) & 15
    return c.get("ALU_FORMAT_SPEC_REG0_SrcA", 0) & 15


def move_style(thread: Any) -> str:
    """The Src-side style of MOVD2A/MOVD2B: ``"BF16"``, ``"FP16"`` or ``"TF32"``
    (``FP16A_FORCE_Enable`` forces FP16; SrcA's format decides for SrcB too)."""
    if thread.tcfg.fields.get("FP16A_FORCE_Enable", 0):
        return "FP16"
    fmt = srca_format(thread)
    if fmt in BF16_STYLE:
        return "BF16"
    if fmt in FP16_STYLE:
        return "FP16"
    return "TF32"


def dst32_active(thread: Any) -> bool:
    """Is Dst32b the matrix unit's view (``ALU_ACC_CTRL_Fp32_enabled`` or ``…INT8_math_enabled``)?"""
    c = thread.core.cfg.fields
    return bool(c.get("ALU_ACC_CTRL_Fp32_enabled", 0) or c.get("ALU_ACC_CTRL_INT8_math_enabled", 0))


# ------------------------------------------------------------------ cell shuffles
def shuffle_bf16(x: Any) -> Any:
    """Dst BF16 cell (sign, man7, exp8) → Src BF16 (sign, man10 with 3 zero bits, exp8)."""
    return ((x & 0xFF00) << 3) | (x & 0xFF)


def shuffle_fp16(x: Any) -> Any:
    """Dst FP16 / Integer "8" cell (sign, man10, exp5) → Src (sign, man10, 000, exp5)."""
    return ((x & 0xFFE0) << 3) | (x & 0x1F)


def shuffle_tf32(x: Any) -> Any:
    """``Dst32b >> 13`` (sign, hi man7, exp8, lo man3) → Src TF32 (sign, man10, exp8).

    Sign and high mantissa stay at [18:11].  The pages' ``ShuffleTF32`` masks them with
    ``0x3fc000`` (bits 21..14, beyond the 19-bit input), which contradicts the layouts its
    own comments state; the layouts win (an erratum listed in docs/tensix.md)."""
    return (x & 0x7F800) | ((x & 0x7) << 8) | ((x & 0x7F8) >> 3)


def remove_low_mantissa(x: Any) -> Any:
    """Src TF32/BF16 → Dst BF16 cell: the low three mantissa bits are dropped."""
    return ((x & (1 << 18)) >> 3) | ((x & (0x7F << 11)) >> 3) | (x & 0xFF)


def remove_high_exponent(x: Any) -> Any:
    """Src FP16 / Integer "8" → Dst FP16 cell: the exponent's high three bits are dropped."""
    return ((x & (1 << 18)) >> 3) | ((x & (0x3FF << 8)) >> 3) | (x & 0x1F)


def tf32_low_mantissa(x: Any) -> Any:
    """The low 16 bits of Dst32b for a Src TF32 cell: its low three mantissa bits at [15:13]."""
    return ((x >> 8) & 7) << 13


# The moves' conversions as lookup tables (one ``take`` per instruction): built on first use
# from the functions above.
_SRC = np.arange(1 << 19, dtype=np.uint32)
_CELL = np.arange(1 << 16, dtype=np.uint32)


@cache
def to_dest_table(use8: bool, flush: bool) -> np.ndarray:
    """uint32[2^19]: Src cell → Dst 16-bit cell, by RemoveLowMantissa (``use8``) or
    RemoveHighExponent; ``flush``: cells whose low 8 bits are 0 give 0 (FlushDenormals)."""
    t = (remove_low_mantissa(_SRC) if use8 else remove_high_exponent(_SRC)).astype(np.uint32)
    if flush:
        t[(_SRC & 0xFF) == 0] = 0
    t.setflags(write=False)
    return t


@cache
def to_src_table(style: str) -> np.ndarray:
    """uint32[2^16]: Dst 16-bit cell (or high half of Dst32b) → Src cell, ShuffleBF16 for
    ``"BF16"`` and ShuffleFP16 for ``"FP16"``."""
    t = (shuffle_fp16(_CELL) if style == "FP16" else shuffle_bf16(_CELL)).astype(np.uint32)
    t.setflags(write=False)
    return t


# IEEE bit patterns <-> Src cells (for unpackers, tests and the arithmetic)
def src_from_bf16(b: Any) -> Any:
    """IEEE BF16 bits → Src BF16 cell."""
    return ((b & 0x8000) << 3) | ((b & 0x7F) << 11) | ((b >> 7) & 0xFF)


def src_from_fp32(f: Any) -> Any:
    """IEEE FP32 bits → Src TF32 cell (the low 13 mantissa bits are truncated)."""
    return ((f >> 13) & (1 << 18)) | (((f >> 13) & 0x3FF) << 8) | ((f >> 23) & 0xFF)


def src_from_fp16(h: Any) -> Any:
    """IEEE FP16 bits → Src FP16 cell."""
    return ((h & 0x8000) << 3) | ((h & 0x3FF) << 8) | ((h >> 10) & 0x1F)


def src_to_fp32(x: Any) -> Any:
    """Src TF32/BF16 cell → IEEE FP32 bits (the 13 bits TF32 lacks are zero)."""
    return ((x >> 18) << 31) | ((x & 0xFF) << 23) | (((x >> 8) & 0x3FF) << 13)


def src_to_fp16(x: Any) -> Any:
    """Src FP16 cell → IEEE FP16 bit order (sign, exp5, man10)."""
    return ((x >> 18) << 15) | ((x & 0x1F) << 10) | ((x >> 8) & 0x3FF)


def src_from_int8(v: Any) -> Any:
    """Signed integers (|v| ≤ 1023) → Src Integer "8" cells (exponent 16, or 0 for zero)."""
    v = np.asarray(v, dtype=np.int64)
    mag = np.abs(v) & 0x3FF
    out = ((v < 0).astype(np.int64) << 18) | (mag << 8) | np.where(mag != 0, 16, 0)
    return out.astype(np.uint32)


def src_to_int8(x: Any) -> Any:
    """Src Integer "8" cells → signed integers (sign-magnitude; the exponent is ignored)."""
    x = np.asarray(x, dtype=np.uint32)
    mag = ((x >> 8) & 0x3FF).astype(np.int64)
    return np.where((x >> 18) & 1, -mag, mag)


# ------------------------------------------------------------------ bank ownership
def _registers(core: Any, srca: bool, srcb: bool) -> list[Any]:
    return [r for r, use in ((core.srca, srca), (core.srcb, srcb)) if use]


def wait_for_matrix(thread: Any, who: str, *, srca: bool = False, srcb: bool = False) -> None:
    """The implicit wait of ``who`` (e.g. ``"MOVA2D"``): park ``thread`` unless the matrix
    unit's SrcA (``srca``) and/or SrcB (``srcb``) bank belongs to the matrix unit.  Raises
    (parks) before any side effect; the instruction re-executes when a hand-over wakes it."""
    for reg in _registers(thread.core, srca, srcb):
        reg.require(thread, reg.matrix_bank, MATRIX, who)


def check_matrix_owns(thread: Any, ins: Any, reg: Any, access: str = "writes") -> bool:
    """For an instruction without an implicit wait: the matrix unit's bank of ``reg`` must
    belong to the matrix unit, or the rule "a bank used by the wrong client" is broken
    (stop; lenient: returns True and the access goes ahead, as the hardware's would)."""
    if reg.allowed[reg.matrix_bank] == MATRIX:
        return True
    return rules.broken(thread, ins, (
        f"{access} {reg.name} bank {reg.matrix_bank}, which is owned by the "
        f"{reg.allowed[reg.matrix_bank]} (a bank used by the wrong client; wait with STALLWAIT "
        f"for the bank to be given to the matrix unit)"))


def flip_matrix_banks(thread: Any, flip_a: bool, flip_b: bool) -> None:
    """The flip bits of MVMUL / ELWADD / ELWSUB / ELWMUL / DOTPV / GAPOOL / GMPOOL / SETRWC
    (SETRWC's CLR_A / CLR_B): unless ``ThreadConfig.CLR_DVALID_SrcA_Disable`` (resp. SrcB)
    is set, the matrix unit's bank goes back to the unpackers; the matrix unit then uses
    the other bank.  Call after the instruction's own work."""
    t = thread.tcfg.fields
    core = thread.core
    for reg, flip, disable in ((core.srca, flip_a, "CLR_DVALID_SrcA_Disable"),
                               (core.srcb, flip_b, "CLR_DVALID_SrcB_Disable")):
        if flip:
            if not t.get(disable, 0):
                reg.give(reg.matrix_bank, UNPACKERS)
            reg.matrix_bank ^= 1
            _changed(core)


def clear_dvalid(thread: Any, flip_a: bool, flip_b: bool, keep_reading: bool = False,
                 reset: bool = False) -> None:
    """CLEARDVALID: ``reset`` gives all four banks to the unpackers and sets every bank index
    to 0; otherwise each flipped register's matrix-unit bank goes to the unpackers and the
    matrix unit moves to the other bank unless ``keep_reading`` (KeepReadingSameSrc)."""
    core = thread.core
    if reset:
        for reg in (core.srca, core.srcb):
            reg.matrix_bank = reg.unpacker_bank = 0
            reg.give(0, UNPACKERS)
            reg.give(1, UNPACKERS)
        _changed(core)
        return
    for reg, flip in ((core.srca, flip_a), (core.srcb, flip_b)):
        if flip:
            reg.give(reg.matrix_bank, UNPACKERS)
            if not keep_reading:
                reg.matrix_bank ^= 1
                _changed(core)


def give_to_matrix(thread: Any, flip_a: bool, flip_b: bool) -> None:
    """SETDVALID: the unpacker's SrcA (``flip_a``) / SrcB (``flip_b``) bank goes to the
    matrix unit, the unpacker moves to the other bank, and its row cursor for the issuing
    thread restarts at ``ThreadConfig.SRCA_SET_Base << 4`` (resp. ``SRCB_SET_Base``).
    The row cursors are the unpackers' state: this is :func:`tessera_tensix.unpack.hand_over`
    (shared with UNPACR_NOP's SETDVALID form and UNPACR's flip)."""
    from tessera_tensix.unpack import hand_over

    for which, flip in ((0, flip_a), (1, flip_b)):
        if flip:
            hand_over(thread, which)
            _changed(thread.core)


def note_row(core: Any, row: int) -> None:
    """Record the starting SrcA row address a matrix-unit instruction computed (MVMUL,
    ELW*, MOV*, …): SHIFTXA's hardware bug reads it (SHIFTXA.md ``HardwareBug()``)."""
    core.srca.last_row = row & 0x3F


def _changed(core: Any) -> None:
    """A bank index changed (``give`` already signals ownership changes): wake waiters,
    whose conditions (STALLWAIT C5..C8 / C8..C11) depend on the indices too."""
    signal = core.signal
    if signal is not None:
        signal.changed()


# ------------------------------------------------------------------ columns and Dest
def column_mask(core: Any) -> np.ndarray | None:
    """Columns the matrix unit's moves write (``LaneConfig[c // 2].BLOCK_DEST_MOV`` bit
    ``c & 1``, LaneConfig bits 9..10, clear); ``None`` when no column is blocked."""
    lc = core.sfpu.lane_config[:8]
    if not (lc & 0x600).any():
        return None
    col = np.arange(COLS)
    return ((lc[col // 2] >> (9 + (col & 1))) & 1) == 0


def _views(core: Any) -> tuple[int, int]:
    c = core.cfg.fields
    return int(bool(c.get("DEST_ACCESS_CFG_remap_addrs", 0))), int(bool(c.get("DEST_ACCESS_CFG_swizzle_32b", 0)))


def dst_rows16(core: Any, rows: Any) -> np.ndarray:
    """Physical DstBits rows of Dst16b rows ``rows`` (Adj16)."""
    remap, _ = _views(core)
    return ADJ16[remap][np.asarray(rows) & ROW_MASK10]


def dst_rows32(core: Any, rows: Any) -> np.ndarray:
    """Physical DstBits rows holding the high halves of Dst32b rows ``rows`` (Adj32;
    the low halves are 8 rows further)."""
    remap, swizzle = _views(core)
    return ADJ32[remap][swizzle][np.asarray(rows) & ROW_MASK10]


def span_rows16(core: Any, row: int, nrows: int) -> np.ndarray:
    """Physical rows of Dst16b rows ``row .. row + nrows - 1`` (an aligned span that does
    not pass row 1023): a view of the remap table, no arithmetic."""
    return ADJ16[_views(core)[0]][row:row + nrows]


def span_rows32(core: Any, row: int, nrows: int) -> np.ndarray:
    """Physical high-half rows of Dst32b rows ``row .. row + nrows - 1`` (aligned span)."""
    remap, swizzle = _views(core)
    return ADJ32[remap][swizzle][row:row + nrows]


def read_dst16(core: Any, phys: np.ndarray) -> np.ndarray:
    """Dst16b cells of physical rows ``phys`` as the matrix unit reads them: ``uint32``
    (n, 16); cells of undefined rows read as zero (the identity element)."""
    dest = core.dest
    out = dest.bits[phys].astype(np.uint32)
    if not dest.all_valid:
        out[~_defined(dest, phys)] = 0
    return out


def read_dst32(core: Any, phys_hi: np.ndarray) -> np.ndarray:
    """Dst32b values whose high halves are in physical rows ``phys_hi``: ``uint32`` (n, 16);
    halves in undefined rows read as zero."""
    return (read_dst16(core, phys_hi) << 16) | read_dst16(core, phys_hi + 8)


def write_dst16(core: Any, phys: np.ndarray, values: np.ndarray, cols: np.ndarray | None = None) -> None:
    """Write 16-bit cells ``values`` (n, 16) to physical rows ``phys``, only the columns
    ``cols`` selects (None: all); the rows become defined (see the module docstring)."""
    dest = core.dest
    _define(dest, phys)
    if cols is None:
        dest.bits[phys] = values
    else:
        dest.bits[np.ix_(phys, np.nonzero(cols)[0])] = values[:, cols]


def write_dst32(core: Any, phys_hi: np.ndarray, values: np.ndarray, cols: np.ndarray | None = None) -> None:
    """Write Dst32b values (n, 16) whose high halves live in physical rows ``phys_hi``."""
    values = np.asarray(values, dtype=np.uint32)
    write_dst16(core, phys_hi, values >> 16, cols)
    write_dst16(core, phys_hi + 8, values & 0xFFFF, cols)


def _defined(dest: Any, phys: np.ndarray) -> np.ndarray:
    """(n, 16) bool: which cells of physical rows ``phys`` are defined."""
    return dest.row_valid[phys][:, None] | dest.written[phys]


def _define(dest: Any, phys: np.ndarray) -> None:
    """A matrix-unit write to rows ``phys``: the undefined cells of undefined rows first take
    the identity (zero); cells SFPSTORE already wrote keep their values."""
    if dest.all_valid:
        return
    bad = np.unique(phys[~dest.row_valid[phys]])
    if bad.size:
        dest.bits[bad] = np.where(dest.written[bad], dest.bits[bad], 0)
        dest.revalidate(bad)


def mask19(x: Any) -> Any:
    """Keep the 19 bits a Src cell holds."""
    return x & MASK19
