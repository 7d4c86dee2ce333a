"""The matrix unit's data movement and the SrcA/SrcB hand-over instructions.

SETDVALID, CLEARDVALID, ZEROSRC, MOVA2D, MOVDBGA2D, MOVB2D, MOVD2A, MOVD2B, MOVB2A,
TRNSPSRCB, SHIFTXA, SHIFTXB, GATESRCRST, CLREXPHIST — the functional models of the
Wormhole B0 pages of the same names (Blackhole shares them: spec tensix.md §1.1; its
field positions differ and come from the chip's table).  Bank ownership, cell layouts and
Dest access are :mod:`tessera_tensix.matrixbanks`'s; RWCs and ADDR_MOD are
:mod:`tessera_tensix.addressing`'s.  Rows are moved as numpy blocks.

Waiting and rules:

* MOVA2D, MOVB2D, MOVB2A, TRNSPSRCB, SHIFTXA, SHIFTXB wait at the wait gate until the
  matrix unit's bank of the register they read belongs to the matrix unit (the thread
  parks; another thread's SETDVALID / UNPACR_NOP wakes it).  MOVDBGA2D is MOVA2D without
  the wait.
* MOVD2A, MOVD2B, and MOVB2A's SrcA side do not wait: writing a bank the unpackers own
  breaks "a bank used by the wrong client" (lenient: the write happens).
* MOVD2A / MOVD2B with ``UseDst32bLo`` while Dst16b is the view, or in the TF32 style
  while Dst16b is the view, are undefined behaviour (rule; lenient: ``UseDst32bLo`` is
  ignored, and TF32 is moved as BF16).
* SHIFTXA with a reserved direction (0, 1) or a non-zero shift amount (the field holds
  log2 of the amount; only 1 lane exists) breaks a rule; lenient: a reserved direction
  does nothing, any amount shifts by one lane.

Not rules (the hardware enforces them by stalling, which has no functional effect in an
instruction-at-a-time model): the cycle after MOVD2A/MOVB2A accepting only MOVD2A/MOVB2A,
the three cycles after MOVD2B accepting only MOVD2B, the cycle after SHIFTXB, and the
Dest reads MOVA2D/MOVB2D stall.

Choices where the pages are silent (also in docs/tensix.md):

* field widths the tables give wider than the page's operands: SHIFTXB's AddrMod is the
  low 2 (WH) / 3 (BH) bits of its field, ShiftInZero bit 10, SrcRow the low 6 bits of
  [9:0]; MOVDBGA2D's DstRow is the low 10 bits of its 12-bit field;
* SHIFTXA's ``HardwareBug()`` row is the starting Src row the most recent MOV* (its own
  Src row; for MOVB2A the SrcA row) or matrix-arithmetic instruction computed
  (``core.srca.last_row``), masked with 0x30; reset value 0;
* GATESRCRST does nothing: the SrcB operand cache it invalidates is not modelled;
* CLREXPHIST resets the packers' exponent histograms through the packer unit's
  ``clear_exponent_histograms()`` when that unit exists (``core.units["packers"]``);
  before any packer ran they are already at their reset value.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from tessera_tensix import addressing, hazards, rules
from tessera_tensix import matrixbanks as mb
from tessera_tensix.semantics import op

U32 = np.uint32


def _wh(thread: Any) -> bool:
    return getattr(getattr(thread, "arch", None), "name", "") == "tensix-wh"


def _dst_base(thread: Any, dst: int) -> int:
    """``DstRow + MATH_Offset + RWC.Dst + DEST_REGW_BASE`` (before alignment)."""
    return (dst + thread.tcfg.fields.get("DEST_TARGET_REG_CFG_MATH_Offset", 0) + thread.rwc["dst"]
            + thread.core.cfg.fields.get("DEST_REGW_BASE_Base", 0))


def _span(dst: int, src: int, nrows: int, src_mask: int | None = None) -> tuple[int, int]:
    """Align Dst and Src row addresses for a move of ``nrows`` (1, 4 or 8) rows."""
    if nrows == 1:
        return dst & 0x3FF, src & 0x3F
    return dst & (0x3FF & -nrows), src & (0x3F & -nrows if src_mask is None else src_mask)


# ------------------------------------------------------------------ bank hand-over
@op("SETDVALID")
def setdvalid(thread: Any, ins: Any) -> None:
    """Give the unpackers' SrcA (bit 0) / SrcB (bit 1) banks to the matrix unit."""
    flips = ins.setvalid
    mb.give_to_matrix(thread, bool(flips & 1), bool(flips & 2))


@op("CLEARDVALID")
def cleardvalid(thread: Any, ins: Any) -> None:
    """Give the matrix unit's banks back to the unpackers (FlipSrcA [22], FlipSrcB [23];
    Reset [0], KeepReadingSameSrc [1])."""
    flips, mode = ins.cleardvalid, ins.reset
    mb.clear_dvalid(thread, bool(flips & 1), bool(flips & 2), keep_reading=bool(mode & 2),
                    reset=bool(mode & 1))


@op("ZEROSRC")
def zerosrc(thread: Any, ins: Any) -> None:
    """Set banks of SrcA (to 0 or, with NegativeInfSrcA, all ones) and/or SrcB to zero."""
    core = thread.core
    both, single = ins.bank_mask, ins.write_mode
    for reg, clear, fill in ((core.srca, ins.src_mask & 1, mb.MASK19 if ins.zero_val else 0),
                             (core.srcb, ins.src_mask & 2, 0)):
        if not clear:
            continue
        if both:
            reg.rows[:] = fill
        else:
            reg.rows[reg.matrix_bank if single else reg.unpacker_bank] = fill


# ------------------------------------------------------------------ Src -> Dest
def _src_to_dest(thread: Any, ins: Any, reg: Any, src: int, dst: int, nrows: int, *,
                 one_row: bool = False, col0: bool = False, src_mask: int | None = None) -> None:
    """MOVA2D / MOVB2D once dispatched: ``nrows`` rows of ``reg``'s matrix-unit bank (or
    row ``src`` repeated, ``one_row``) to Dest, converted by SrcA's format."""
    core = thread.core
    fmt = mb.srca_format(thread)
    use8 = not thread.tcfg.fields.get("FP16A_FORCE_Enable", 0) and (fmt in mb.BF16_STYLE or fmt == mb.TF32)
    flush = not core.cfg.fields.get("ALU_ACC_CTRL_Zero_Flag_disabled_src", 0)
    rwc_src = thread.rwc["srca" if reg is core.srca else "srcb"]
    dst, src = _span(_dst_base(thread, dst & 0x3FF), src + rwc_src, nrows, src_mask)
    bank = reg.rows[reg.matrix_bank]
    vals = bank[src:src + 1].repeat(nrows, axis=0) if one_row else bank[src:src + nrows]
    if col0:
        vals = np.repeat(vals[:, :1], 16, axis=1)
    v16 = mb.to_dest_table(use8, flush).take(vals)
    cols = mb.column_mask(core)
    use_lo = ins.dest_32b_lo
    if fmt == mb.TF32:
        if flush:
            vals = np.where((vals & 0xFF) == 0, U32(0), vals)
        low = mb.tf32_low_mantissa(vals)
        if use_lo:
            low = low | v16
        phys, wide = mb.span_rows32(core, dst, nrows), True
        mb.write_dst32(core, phys, (v16 << 16) | low, cols)
    elif use_lo:
        phys, wide = mb.span_rows32(core, dst, nrows), True
        mb.write_dst32(core, phys, (mb.read_dst16(core, phys) << 16) | v16, cols)
    else:
        phys, wide = mb.span_rows16(core, dst, nrows), False
        mb.write_dst16(core, phys, v16, cols)
    hazards.dest_written(thread, ins, phys, wide)
    mb.note_row(core, src)
    addressing.apply_addr_mod(thread, ins.addr_mode, wh=_wh(thread))


def _a2d(thread: Any, ins: Any, mod: int, dst: int) -> None:
    _src_to_dest(thread, ins, thread.core.srca, ins.src, dst, 8 if mod & 2 else 1)


@op("MOVA2D")
def mova2d(thread: Any, ins: Any) -> None:
    """SrcA → Dest, one row or an aligned block of 8 (waits for SrcA)."""
    mb.wait_for_matrix(thread, "MOVA2D", srca=True)
    _a2d(thread, ins, ins.instr_mod, ins.dst)


@op("MOVDBGA2D")
def movdbga2d(thread: Any, ins: Any) -> None:
    """MOVA2D without the wait for SrcA."""
    mod = ins.instr_mod_14_12 if _wh(thread) else ins.instr_mod
    _a2d(thread, ins, mod, ins.dst_11_0)


@op("MOVB2D")
def movb2d(thread: Any, ins: Any) -> None:
    """SrcB → Dest: one row, 4 rows, or one row broadcast to 8; optionally column 0
    broadcast along each row (mode bits Move4Rows, Broadcast1RowTo8, BroadcastCol0)."""
    mb.wait_for_matrix(thread, "MOVB2D", srcb=True)
    mod = ins.instr_mod_14_12 if _wh(thread) else ins.movb2d_instr_mod
    col0 = bool(mod & 1)
    if mod & 2:
        _src_to_dest(thread, ins, thread.core.srcb, ins.src, ins.dst, 8, one_row=True, col0=col0,
                     src_mask=0x3F)
    else:
        _src_to_dest(thread, ins, thread.core.srcb, ins.src, ins.dst, 4 if mod & 4 else 1, col0=col0)


# ------------------------------------------------------------------ Dest -> Src
def _dest_to_src(thread: Any, ins: Any, reg: Any) -> None:
    """MOVD2A / MOVD2B: one row or 4 aligned rows of Dest into ``reg``'s matrix-unit bank."""
    mb.check_matrix_owns(thread, ins, reg)
    core = thread.core
    style = mb.move_style(thread)
    use32 = mb.dst32_active(thread) and not thread.tcfg.fields.get("FP16A_FORCE_Enable", 0)
    use_lo = bool(ins.dest_32b_lo)
    if not use32:
        if use_lo:
            rules.broken(thread, ins, "UseDst32bLo with Dst16b as the matrix unit's view is undefined "
                                      "behaviour (a 16-bit cell has no low half)")
        if style == "TF32":
            rules.broken(thread, ins, "the TF32 style with Dst16b as the matrix unit's view is undefined "
                                      "behaviour (a 16-bit cell cannot hold TF32)")
    nrows = 4 if ins.instr_mod & 2 else 1
    rwc_src = thread.rwc["srca" if reg is core.srca else "srcb"]
    dst, src = _span(_dst_base(thread, ins.dst), ins.src + rwc_src, nrows)
    if use32:
        d = mb.read_dst32(core, mb.span_rows32(core, dst, nrows))
        if use_lo:
            d = (d << 16) | (d & 0xFFFF)
        if style != "TF32":
            vals = mb.to_src_table(style).take(d >> 16)
        elif not use_lo:
            vals = mb.shuffle_tf32(d >> 13)
        else:
            vals = d & 0x1FFF
    else:
        d = mb.read_dst16(core, mb.span_rows16(core, dst, nrows))
        vals = mb.to_src_table("FP16" if style == "FP16" else "BF16").take(d)
    bank = reg.rows[reg.matrix_bank]
    cols = mb.column_mask(core)
    if cols is None:
        bank[src:src + nrows] = vals & mb.MASK19
    else:
        bank[src:src + nrows, cols] = (vals & mb.MASK19)[:, cols]
    mb.note_row(core, src)
    addressing.apply_addr_mod(thread, ins.addr_mode, wh=_wh(thread))


@op("MOVD2A")
def movd2a(thread: Any, ins: Any) -> None:
    """Dest → SrcA (no wait: SrcA must already belong to the matrix unit)."""
    _dest_to_src(thread, ins, thread.core.srca)


@op("MOVD2B")
def movd2b(thread: Any, ins: Any) -> None:
    """Dest → SrcB (no wait; SrcA's format decides the style, as the page says)."""
    _dest_to_src(thread, ins, thread.core.srcb)


@op("MOVB2A")
def movb2a(thread: Any, ins: Any) -> None:
    """SrcB → SrcA, one row or 4 aligned rows (waits for SrcB; SrcA must be the matrix unit's)."""
    mb.wait_for_matrix(thread, "MOVB2A", srcb=True)
    core = thread.core
    mb.check_matrix_owns(thread, ins, core.srca)
    nrows = 4 if ins.instr_mod & 2 else 1
    mask = 0x3C if nrows == 4 else 0x3F
    arow = (ins.srca + thread.rwc["srca"]) & mask
    brow = (ins.srcb + thread.rwc["srcb"]) & mask
    vals = core.srcb.rows[core.srcb.matrix_bank, brow:brow + nrows]
    if not core.cfg.fields.get("ALU_ACC_CTRL_Zero_Flag_disabled_src", 0):
        vals = np.where((vals & 0xFF) == 0, U32(0), vals)
    cols = mb.column_mask(core)
    bank = core.srca.rows[core.srca.matrix_bank]
    if cols is None:
        bank[arow:arow + nrows] = vals
    else:
        bank[arow:arow + nrows, cols] = vals[:, cols]
    mb.note_row(core, arow)
    addressing.apply_addr_mod(thread, ins.addr_mode, wh=_wh(thread))


# ------------------------------------------------------------------ in-place shuffles
@op("TRNSPSRCB")
def trnspsrcb(thread: Any, ins: Any) -> None:
    """Transpose the 16x16 matrix in rows 16..31 of the matrix unit's SrcB bank."""
    mb.wait_for_matrix(thread, "TRNSPSRCB", srcb=True)
    reg = thread.core.srcb
    block = reg.rows[reg.matrix_bank, 16:32]
    block[:] = block.T.copy()


DIRECTION_RIGHT, DIRECTION_LEFT = 2, 3


@op("SHIFTXA")
def shiftxa(thread: Any, ins: Any) -> None:
    """Rows 0..15 of SrcA := an aligned block of 16 rows shifted one lane right or left
    (zero shifted in); the block is whichever the last matrix instruction addressed."""
    mb.wait_for_matrix(thread, "SHIFTXA", srca=True)
    direction = ins.shift_mode
    if ins.log2_amount2:
        rules.broken(thread, ins, f"SHIFTXA shifts by one lane only: log2 of the amount must be 0, "
                                  f"not {ins.log2_amount2}")
    if direction not in (DIRECTION_RIGHT, DIRECTION_LEFT):
        rules.broken(thread, ins, f"SHIFTXA direction {direction} is reserved (2 = right, 3 = left)")
        return
    reg = thread.core.srca
    bank = reg.rows[reg.matrix_bank]
    start = reg.last_row & 0x30
    src = bank[start:start + 16].copy()
    if direction == DIRECTION_RIGHT:
        bank[0:16, 1:] = src[:, :15]
        bank[0:16, 0] = 0
    else:
        bank[0:16, :15] = src[:, 1:]
        bank[0:16, 15] = 0


@op("SHIFTXB")
def shiftxb(thread: Any, ins: Any) -> None:
    """Rotate one SrcB row left by one lane, or shift it left with zero shifted in."""
    mb.wait_for_matrix(thread, "SHIFTXB", srcb=True)
    wh = _wh(thread)
    addr_mod = ins.addr_mode_23_15 & 3 if wh else ins.addr_mode_23_14 & 7
    reg = thread.core.srcb
    row = ((ins.shift_row & 0x3F) + thread.rwc["srcb"]) & 0x3F
    cells = reg.rows[reg.matrix_bank, row]
    first = cells[0]
    cells[:15] = cells[1:].copy()
    cells[15] = 0 if ins.rot_shift & 1 else first
    addressing.apply_addr_mod(thread, addr_mod, wh=wh)


# ------------------------------------------------------------------ oddballs
@op("GATESRCRST")
def gatesrcrst(thread: Any, ins: Any) -> None:
    """Invalidate the SrcB operand cache: not modelled, so nothing changes."""


@op("CLREXPHIST")
def clrexphist(thread: Any, ins: Any) -> None:
    """Reset the exponent histograms of the four packers (Packers/ExponentHistogram.md)."""
    reset = getattr(thread.core.units.get("packers"), "clear_exponent_histograms", None)
    if reset is not None:
        reset()
