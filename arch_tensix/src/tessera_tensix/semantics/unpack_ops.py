"""UNPACR and UNPACR_NOP: the instructions of the unpackers (:mod:`tessera_tensix.unpack`).

UNPACR (WormholeB0 .../UNPACR.md) has three modes, picked by its flags:
``cfg_context_cnt_inc`` [13] increments the context counter
(UNPACR_IncrementContextCounter.md); otherwise ``search_cache_flush`` [1] flushes the
decompression row-start cache (UNPACR_FlushCache.md: the cache is not modelled, so
nothing happens); otherwise it moves datums (UNPACR_Regular.md).  Fields of the last
mode, named as in the page's syntax: WhichUnpacker [23], the ADC increments [22:15]
(Ch1YInc, Ch1ZInc, Ch0YInc, Ch0ZInc, two bits each), ContextNumber [12:10], ContextADC
[9:8], MultiContextMode [7] (``ovrd_thread_id``), FlipSrc [6] (``set_dat_valid``),
AllDatumsAreZero [4] (``zero_write2``), UseContextCounter [3], RowSearch [2]; ``Last``
[0] has no effect in the functional model.  Bit 5 (Wormhole ``rareb_en``, Blackhole
``srcb_bcast``) is not defined by any page: setting it stops the run.

UNPACR_NOP (UNPACR_NOP.md), Wormhole B0: the low bits of ``no_op`` [4:0] pick the mode —
``..01`` ZEROSRC (bit 2 NegativeInfSrcA, bit 3 BothBanks, bit 4 WaitLikeUnpacr), ``010``
NOP, ``111`` SETDVALID, ``100`` SETREG (bit 3 Accumulate, Value11 [14:4], AddrMid
[21:16], AddrSel [22]), ``000`` / ``011`` OverlayClear (ClearCount [14:4], WhichStream
[21:16]); ``110`` is undefined (a rule stop; leniently a NOP).  The Wormhole table covers
only [4:0] and [23], so the SETREG and OverlayClear operands are read from the word (a
word setting them decodes through the table's reserved-bits row).

Blackhole has no UNPACR_NOP page; its encoding table (tt-llk's assembly.yaml) names the
fields, and this follows them: ``unpack_pop`` [1:0] is 0 OverlayClear (stream from the
thread config), 1 clear Src, 2 NOP, 3 OverlayClear of stream ``stream_id`` [21:16] when
``msg_clr_cnt`` [14:12] is not 0 (as Wormhole's ClearCount) — or, with bit 2 set, the SETREG write (AddrSel [22] and [15],
AddrMid [21:16], Value11 [14:4], Accumulate [3]).  Clearing Src: ``src_clr_val_ctrl``
[3:2] picks 0, negative infinity (all ones), one (in the format ``clr_to1_fmt_ctrl``
[7:6] names: 0 FP16, 1 BF16/TF32, 2 integer "8") or ``UNP<n>_NOP_REG_CLR_VAL``;
``bank_clr_ctrl`` [4] both banks, ``stall_clr_cntrl`` [5] waits like UNPACR (on the
unpacker's bank) rather than on the matrix unit's bank; ``set_dvalid`` [8] then gives the
bank to the matrix unit; ``clr_to1_fmt_ctrl`` 3 makes it SETDVALID alone.  The value
applies to SrcA and SrcB alike (on Wormhole negative infinity is SrcA's only).
"""

from __future__ import annotations

from typing import Any

from tessera_tensix import cfgregs, formats, rules, unpack
from tessera_tensix.semantics import op


def _value11(ins: Any) -> int:
    """Wormhole's Value11 / ClearCount [14:4]: ``value11_hi`` [14:5] and ``no_op``'s bit 4."""
    return ins.value11_hi << 1 | ins.no_op >> 4


def _not_modelled(ins: Any, what: str) -> None:
    unpack._stop(ins, f"{what} is not modelled (no page defines it)")


@op("UNPACR")
def unpacr(thread: Any, ins: Any) -> None:
    which = ins.unpack_block_selection
    if ins.cfg_context_cnt_inc:
        state = unpack.unpackers(thread.core)
        unpack.bump_context_counter(thread, which, state.context_counter[which][thread.tid])
        return
    if ins.search_cache_flush:
        return                      # the row-start cache is not modelled (UNPACR_FlushCache.md)
    if thread.core.chip == "bh":
        if ins.srcb_bcast:
            _not_modelled(ins, "srcb_bcast (bit 5)")
    elif ins.rareb_en:
        _not_modelled(ins, "rareb_en (bit 5)")
    p = unpack.plan(thread, ins, unpack.Fields(
        which, ins.addr_mode_22_15, ins.cfg_context_id, ins.addr_cnt_context_id, bool(ins.ovrd_thread_id),
        bool(ins.set_dat_valid), bool(ins.zero_write2), bool(ins.auto_inc_context_id), bool(ins.row_search)))
    unpack.wait_bank(thread, p)
    unpack.apply(thread, p)


#: Blackhole "clear to one" cells by ``clr_to1_fmt_ctrl``: FP16, BF16 (= TF32), integer "8"
_ONES = {0: int(formats.src_fp16(0x3C00)), 1: int(formats.src_bf16(0x3F80)),
         2: int(formats.src_fp16(formats.int8_overlay(1, False)))}


@op("UNPACR_NOP")
def unpacr_nop(thread: Any, ins: Any) -> None:
    if thread.core.chip == "bh":
        _nop_bh(thread, ins)
    else:
        _nop_wh(thread, ins)


def _nop_wh(thread: Any, ins: Any) -> None:
    which = ins.unpack_block_selection
    code = ins.no_op
    if code & 3 == 1:
        value = unpack.MASK19 if which == 0 and code & 4 else 0
        unpack.clear_src(thread, which, value, both_banks=bool(code & 8), wait_like_unpacr=bool(code & 16))
    elif code & 7 == 2:
        return
    elif code & 7 == 7:
        unpack.hand_over(thread, which)
    elif code & 7 == 4:
        unpack.set_reg(thread, which, ins.addr_sel, ins.addr_mid, _value11(ins), bool(code & 8))
    elif code & 7 in (0, 3):
        count = _value11(ins)
        unpack.overlay_clear(thread, which, ins.addr_mid if count else None)
    else:
        rules.broken(thread, ins, f"mode {code & 7:#05b} is undefined (reserved)")


def _nop_bh(thread: Any, ins: Any) -> None:
    which = ins.unpacker_select
    mode = ins.unpack_pop
    if mode == 1:
        if ins.clr_to1_fmt_ctrl == 3:
            unpack.hand_over(thread, which)
            return
        ctrl = ins.src_clr_val_ctrl
        if ctrl == 0:
            value = 0
        elif ctrl == 1:
            value = unpack.MASK19
        elif ctrl == 2:
            value = _ONES[ins.clr_to1_fmt_ctrl]
        else:
            value = cfgregs.config_for(thread).get(f"UNP{which}_NOP_REG_CLR_VAL_nop_reg_clr_val")
        unpack.clear_src(thread, which, value, both_banks=bool(ins.bank_clr_ctrl),
                         wait_like_unpacr=bool(ins.stall_clr_cntrl))
        if ins.set_dvalid:
            unpack.hand_over(thread, which)
    elif mode == 2:
        return
    elif mode == 0:
        unpack.overlay_clear(thread, which, None)
    elif ins.src_clr_val_ctrl & 1:
        # tt-llk's form: AddrSel [22]:[15], AddrMid = stream_id [21:16], Value11 [14:4] from
        # the fields over those bits (msg_clr_cnt [14:12], [11:9] reserved, set_dvalid [8],
        # clr_to1_fmt_ctrl [7:6], stall_clr_cntrl [5], bank_clr_ctrl [4]), Accumulate [3]
        value11 = ins.msg_clr_cnt << 8 | ins.set_dvalid << 4 | ins.clr_to1_fmt_ctrl << 2 | \
            ins.stall_clr_cntrl << 1 | ins.bank_clr_ctrl
        unpack.set_reg(thread, which, ins.setreg_addr_sel_hi << 1 | ins.setreg_addr_sel_lo,
                       ins.stream_id, value11, bool(ins.src_clr_val_ctrl & 2))
    else:
        unpack.overlay_clear(thread, which, ins.stream_id if ins.msg_clr_cnt else None)
