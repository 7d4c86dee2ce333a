"""Dest address formation and ADDR_MOD application (spec tensix-sfpu.md §10.2; WH RWCs.md).

Register-window counters live in ``thread.rwc`` (``dst``, ``dst_cr``, ``srca``,
``srca_cr``, ``srcb``, ``srcb_cr``, ``fidelity``, ``sp`` and ``bias`` — the
ExtraAddrModBit, created on first use).  Widths: Dst 10 bits, SrcA/SrcB 6, fidelity
phase 2, Sp 10, bias 1; counters wrap.

Configuration names are those of the vendor register map (ttsim ``tensix_regs.json``):
per-thread fields (``thread.tcfg``) — ``DEST_TARGET_REG_CFG_MATH_Offset``,
``SFPU_STACK_Incr``, ``ADDR_MOD_{AB,DST,BIAS}_SEC{n}_*`` (and ``ADDR_MOD_SET_Base``
on Wormhole); backend fields (``thread.core.cfg``) — ``DEST_REGW_BASE_Base``,
``DEST_SP_BASE_Base``.  One backend bank is modelled (``CFG_STATE_ID_StateID`` is
not consulted).

Blackhole's 3-bit AddrMod selects ADDR_MOD set 0..7 directly; Wormhole's 2-bit
AddrMod adds 4 when ``ADDR_MOD_SET_Base`` or the bias bit is set.  The BH-only
``ADDR_MOD_AB2_SEC{n}_*`` bits are not documented and are ignored.
"""

from __future__ import annotations

from typing import Any

DST_MASK, SRC_MASK, FID_MASK, SP_MASK = 0x3FF, 0x3F, 0x3, 0x3FF


def _names(n: int) -> tuple[str, ...]:
    ab, d, b = f"ADDR_MOD_AB_SEC{n}_", f"ADDR_MOD_DST_SEC{n}_", f"ADDR_MOD_BIAS_SEC{n}_"
    return (ab + "SrcAIncr", ab + "SrcACR", ab + "SrcAClear",
            ab + "SrcBIncr", ab + "SrcBCR", ab + "SrcBClear",
            d + "DestIncr", d + "DestCR", d + "DestClear", d + "DestCToCR",
            d + "FidelityIncr", d + "FidelityClear",
            b + "BiasIncr", b + "BiasClear")


#: the 14 thread-config field names of ADDR_MOD set n (in the order apply_addr_mod reads them)
ADDR_MOD_FIELDS = tuple(_names(n) for n in range(8))
_ZEROS = (0,) * 14


def addr_mod_index(thread: Any, addr_mod: int, wh: bool = False) -> int:
    """Which ADDR_MOD set an instruction's AddrMod field selects."""
    if not wh:
        return addr_mod & 7
    index = addr_mod & 3
    if thread.rwc.get("bias", 0) or thread.tcfg.fields.get("ADDR_MOD_SET_Base", 0):
        index += 4
    return index


def apply_addr_mod(thread: Any, addr_mod: int, *, fidelity: bool = True, wh: bool = False) -> None:
    """ApplyAddrMod: advance the thread's RWCs by ADDR_MOD set ``addr_mod``.

    ``fidelity=False`` is the partial form used by SFPLOAD/SFPSTORE/SFPLOADMACRO,
    which leaves the fidelity phase alone.
    """
    f = thread.tcfg.fields
    if not f:                      # no thread config programmed: every increment is 0
        return
    names = ADDR_MOD_FIELDS[addr_mod_index(thread, addr_mod, wh)]
    (a_inc, a_cr, a_clr, b_inc, b_cr, b_clr, d_inc, d_cr, d_clr, d_ctocr,
     f_inc, f_clr, bias_inc, bias_clr) = map(f.get, names, _ZEROS)
    rwc = thread.rwc
    if a_clr:
        rwc["srca"] = rwc["srca_cr"] = 0
    elif a_cr:
        rwc["srca_cr"] = (rwc["srca_cr"] + a_inc) & SRC_MASK
        rwc["srca"] = rwc["srca_cr"]
    elif a_inc:
        rwc["srca"] = (rwc["srca"] + a_inc) & SRC_MASK
    if b_clr:
        rwc["srcb"] = rwc["srcb_cr"] = 0
    elif b_cr:
        rwc["srcb_cr"] = (rwc["srcb_cr"] + b_inc) & SRC_MASK
        rwc["srcb"] = rwc["srcb_cr"]
    elif b_inc:
        rwc["srcb"] = (rwc["srcb"] + b_inc) & SRC_MASK
    if d_clr:
        rwc["dst"] = rwc["dst_cr"] = 0
    elif d_ctocr:
        rwc["dst"] = (rwc["dst"] + d_inc) & DST_MASK
        rwc["dst_cr"] = rwc["dst"]
    elif d_cr:
        rwc["dst_cr"] = (rwc["dst_cr"] + d_inc) & DST_MASK
        rwc["dst"] = rwc["dst_cr"]
    elif d_inc:
        rwc["dst"] = (rwc["dst"] + d_inc) & DST_MASK
    if fidelity:
        if f_clr:
            rwc["fidelity"] = 0
        elif f_inc:
            rwc["fidelity"] = (rwc["fidelity"] + f_inc) & FID_MASK
    if bias_clr:
        rwc["bias"] = 0
    elif bias_inc & 3:
        rwc["bias"] = (rwc.get("bias", 0) + 1) & 1


def sfpu_address(thread: Any, imm10: int, *, int32_all: bool = False, load: bool = True,
                 wh: bool = False) -> int:
    """The 10-bit Dest address of SFPLOAD/SFPSTORE (§10.2, E14).

    Blackhole: ``Imm10 + MATH_Offset + (Dst + REGW_BASE) + ((Sp + SP_BASE) & 3)``;
    with INT32_ALL the roles of Dst and Sp swap, SFPLOAD first pre-decrements a
    non-zero Sp by ``SFPU_STACK_Incr`` and SFPSTORE post-increments Sp.  Wormhole has
    no Sp: ``Imm10 + MATH_Offset + (Dst + REGW_BASE)`` (``& 3`` for INT32_ALL).
    """
    t = thread.tcfg.fields
    c = thread.core.cfg.fields
    rwc = thread.rwc
    addr = imm10 + t.get("DEST_TARGET_REG_CFG_MATH_Offset", 0)
    dst = rwc["dst"] + c.get("DEST_REGW_BASE_Base", 0)
    if wh:
        return (addr + ((dst & 3) if int32_all else dst)) & 0x3FF
    if int32_all:
        incr = t.get("SFPU_STACK_Incr", 0)
        if load and rwc["sp"]:
            rwc["sp"] = (rwc["sp"] - incr) & SP_MASK
        addr += rwc["sp"] + c.get("DEST_SP_BASE_Base", 0) + (dst & 3)
        if not load:
            rwc["sp"] = (rwc["sp"] + incr) & SP_MASK
        return addr & 0x3FF
    return (addr + dst + ((rwc["sp"] + c.get("DEST_SP_BASE_Base", 0)) & 3)) & 0x3FF


def math_row(thread: Any, imm10: int) -> int:
    """Row of one-row Matrix-Unit forms (ZEROACC mode 0): Imm10 + MATH_Offset + Dst + REGW_BASE."""
    t = thread.tcfg.fields
    c = thread.core.cfg.fields
    return (imm10 + t.get("DEST_TARGET_REG_CFG_MATH_Offset", 0) + thread.rwc["dst"]
            + c.get("DEST_REGW_BASE_Base", 0)) & 0x3FF
