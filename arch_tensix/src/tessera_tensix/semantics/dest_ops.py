"""Dest-facing instructions: SFPLOAD, SFPSTORE (spec tensix-sfpu.md §10) and ZEROACC.

SFPLOAD / SFPSTORE move 32 lanes between an LReg and 4 consecutive Dest rows × 8
even or odd columns, converting with the Mod0 format (:func:`dest.load_convert`,
:func:`dest.store_convert`).  Per lane (§10.3/§10.4):

* LaneConfig BLOCK_SFPU_RD_FROM_DEST / BLOCK_DEST_WR_FROM_SFPU skip the lane;
* lanes without EN(L) are skipped, except with Mod0 = INT32_ALL (10);
* DEST_RD/WR_COL_EXCHANGE (read from LaneConfig[L & 7]) force the odd column;
* SFPLOAD to VD < 4 with ENABLE_DEST_INDEX + CAPTURE_DEFAULT_DEST_INDEX also writes
  LReg[VD + 4] = (Row << 4) | Column.

Mod0 = SRCB (0) resolves from backend config (E22).  Address formation, the INT32_ALL
stack pointer and the partial ADDR_MOD are in :mod:`tessera_tensix.addressing`.

Reading a Dest cell that ZEROACC left undefined is undefined behaviour for the vector
unit: the run stops with a rule violation; with ``--lenient`` the cell reads 0 (what
the vendor simulator returns).  SFPSTORE makes the cells it writes defined again.

:func:`sfpu_load` / :func:`sfpu_store` take decoded fields, for SFPLOADMACRO.
"""

from __future__ import annotations

import sys
from typing import Any

import numpy as np
from numba import njit

from tessera_tensix import addressing, hazards, lanes, rules
from tessera_tensix.dest import (
    ADJ16,
    ADJ32,
    COLS,
    LOAD_32,
    STORE_32,
    flush_lo16_table,
    lane_cells,
    load_convert,
    load_table,
    shuffle_hi_table,
    store_convert,
    store_fp16_table,
    unshuffle_hi_table,
)
from tessera_tensix.fma import compiled_entry
from tessera_tensix.semantics import op

U32 = np.uint32
INT32_ALL = 10
#: SrcB formats (low 4 bits of the format code) whose SFPLOAD/SFPSTORE SRCB mode means BF16:
#: FP32 0, TF32 4, BF16 5, BFP8 6, BFP4 7, INT32 8, INT16 9, BFP2 15; everything else → FP16
BF16_FAMILY = frozenset({0, 4, 5, 6, 7, 8, 9, 15})
_RD_BLOCK = U32(1 << lanes.BLOCK_SFPU_RD_FROM_DEST)
_WR_BLOCK = U32(1 << lanes.BLOCK_DEST_WR_FROM_SFPU)
_CAPTURE = U32((1 << lanes.ENABLE_DEST_INDEX) | (1 << lanes.CAPTURE_DEFAULT_DEST_INDEX))
_FP16_INF = U32(1 << lanes.ENABLE_FP16A_INF)
_NO_BACKDOOR = U32(1 << lanes.DISABLE_BACKDOOR_LOAD)
_ALL = lanes.all_lanes()
_16 = U32(16)
_13 = U32(13)
_HI_MASK = U32(0xFFFF_0000)
_LO_MASK = U32(0x0000_FFFF)
_ZERO32 = np.zeros(lanes.LANES, dtype=U32)
_ZERO32.setflags(write=False)


def _decode(thread: Any, ins: Any) -> tuple[int, int, int, int, bool]:
    """(VD, Mod0, AddrMod, Imm10, wormhole) of an SFPLOAD/SFPSTORE, cached on ``ins``
    (AddrMod is [15:13] on Blackhole, [15:14] on Wormhole: the chip's table says)."""
    d = ins.__dict__.get("_tx_dest")
    if d is None:
        wh = getattr(getattr(thread, "arch", None), "name", "") == "tensix-wh"
        d = (ins.lreg_ind, ins.instr_mod0, ins.sfpu_addr_mode, ins.dest_reg_addr, wh)
        ins.__dict__["_tx_dest"] = d
    return d


def resolve_srcb(thread: Any, *, store: bool, wh: bool = False) -> int:
    """Mod0 SRCB → FP32 (3), BF16 (2) or FP16 (1) from the backend config (E22)."""
    c = thread.core.cfg.fields
    if c.get("ALU_ACC_CTRL_SFPU_Fp32_enabled", 0):
        return 3
    if c.get("ALU_FORMAT_SPEC_REG_SrcB_override", 0):
        fmt = c.get("ALU_FORMAT_SPEC_REG_SrcB_val", 0)
    else:
        fmt = c.get("ALU_FORMAT_SPEC_REG1_SrcB", 0)
    if not wh and thread.tcfg.fields.get("SFPU_DEST_FMT_Enable", 0):
        fmt = thread.tcfg.fields.get("SFPU_DEST_FMT_Base", 0)
    return 2 if (fmt & 15) in BF16_FAMILY else 1


def _views(thread: Any) -> tuple[bool, bool]:
    c = thread.core.cfg.fields
    return bool(c.get("DEST_ACCESS_CFG_remap_addrs", 0)), bool(c.get("DEST_ACCESS_CFG_swizzle_32b", 0))


if sys.byteorder == "little":
    def _halves(x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(low 16 bits, high 16 bits) of each uint32 lane, as uint16 views (no arithmetic)."""
        h = x.view(np.uint16)
        return h[0::2], h[1::2]
else:  # pragma: no cover - big-endian hosts
    def _halves(x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        return (x & 0xFFFF).astype(np.uint16), (x >> 16).astype(np.uint16)


def _colx(sfpu: Any, bit: int) -> int:
    """Bit mask over lanes 0..7 of LaneConfig bit ``bit`` (COL_EXCHANGE, read from row 0's copy)."""
    lc = sfpu.lane_config[:8]
    return int(np.packbits(((lc >> U32(bit)) & U32(1)).astype(np.uint8), bitorder="little")[0])


# ------------------------------------------------------------------- compiled fast paths
# The common SFPLOAD / SFPSTORE: no LaneConfig bit set in any lane (so no column
# exchange, no BLOCK_* bits, no index capture, no FP16A_INF), every Dest row defined,
# not INT32_ALL.  EN(L) is then LaneFlags[L] if UseLaneFlags[L] else true.  Lane L
# touches Row (addr & 0x3FC) + (L >> 3), Column (L & 7) * 2 + ((addr >> 1) & 1), as
# :func:`tessera_tensix.dest.lane_cells` with colx = 0.
_ADJ16_ROWS = tuple(np.ascontiguousarray(ADJ16[m]) for m in (0, 1))
_ADJ32_ROWS = tuple(np.ascontiguousarray(ADJ32[m][s]) for m in (0, 1) for s in (0, 1))


@njit(cache=True)
def _load32_fast(flat: np.ndarray, adj: np.ndarray, hi_table: np.ndarray, lreg: np.ndarray,
                 lane_flags: np.ndarray, use_lane_flags: np.ndarray, addr: int, vd: int) -> None:
    base = addr & 0x3FC
    odd = (addr >> 1) & 1
    for i in range(lreg.shape[1]):
        if use_lane_flags[i] and not lane_flags[i]:
            continue
        p = np.int64(adj[base + (i >> 3)]) * 16 + (i & 7) * 2 + odd
        lreg[vd, i] = np.uint32(hi_table[flat[p]]) | np.uint32(flat[p + 128])


@njit(cache=True)
def _load16_fast(flat: np.ndarray, adj: np.ndarray, table: np.ndarray, lreg: np.ndarray,
                 lane_flags: np.ndarray, use_lane_flags: np.ndarray, addr: int, vd: int) -> None:
    base = addr & 0x3FC
    odd = (addr >> 1) & 1
    for i in range(lreg.shape[1]):
        if use_lane_flags[i] and not lane_flags[i]:
            continue
        p = np.int64(adj[base + (i >> 3)]) * 16 + (i & 7) * 2 + odd
        lreg[vd, i] = table[flat[p]]


@njit(cache=True)
def _store32_fast(flat: np.ndarray, adj: np.ndarray, hi_table: np.ndarray, lo_table: np.ndarray,
                  flush: bool, lreg: np.ndarray, lane_flags: np.ndarray,
                  use_lane_flags: np.ndarray, addr: int, vd: int) -> None:
    base = addr & 0x3FC
    odd = (addr >> 1) & 1
    for i in range(lreg.shape[1]):
        if use_lane_flags[i] and not lane_flags[i]:
            continue
        p = np.int64(adj[base + (i >> 3)]) * 16 + (i & 7) * 2 + odd
        x = lreg[vd, i]
        top = x >> 16
        low = np.uint16(x & 0xFFFF)
        flat[p] = hi_table[top]
        flat[p + 128] = (low & lo_table[top]) if flush else low


@njit(cache=True)
def _store16_fast(flat: np.ndarray, adj: np.ndarray, table: np.ndarray, shift: int,
                  lreg: np.ndarray, lane_flags: np.ndarray, use_lane_flags: np.ndarray,
                  addr: int, vd: int) -> None:
    base = addr & 0x3FC
    odd = (addr >> 1) & 1
    for i in range(lreg.shape[1]):
        if use_lane_flags[i] and not lane_flags[i]:
            continue
        p = np.int64(adj[base + (i >> 3)]) * 16 + (i & 7) * 2 + odd
        flat[p] = table[lreg[vd, i] >> shift]


_FLAT = np.zeros(1024 * COLS, dtype=np.uint16)         # example argument types (Dest.flat,
_LREG = np.zeros((17, lanes.LANES), dtype=U32)         # SFPU LRegs, LaneFlags)
_FLAGS = np.zeros(lanes.LANES, dtype=bool)

_LOAD_FAST: dict[tuple[int, bool], tuple[Any, ...] | None] = {}
_STORE_FAST: dict[tuple[int, bool], tuple[Any, ...] | None] = {}


def _load_fast(mod0: int, wh: bool) -> tuple[Any, ...] | None:
    """(kernel entry, table, 32-bit?) of the compiled SFPLOAD path for ``mod0``, or None (general code)."""
    key = (mod0, wh)
    if key not in _LOAD_FAST:
        entry: tuple[Any, ...] | None = None
        if mod0 in (3, 4) or (mod0 == 12 and not wh):
            t = unshuffle_hi_table()
            entry = (compiled_entry(_load32_fast, _FLAT, _ADJ32_ROWS[0], t, _LREG, _FLAGS, _FLAGS,
                                    0, 0), t, True)
        elif mod0 in (1, 2, 5, 6, 7, 8, 9, 13):
            t = load_table(mod0, False, wh and mod0 in (5, 13))
            entry = (compiled_entry(_load16_fast, _FLAT, _ADJ16_ROWS[0], t, _LREG, _FLAGS, _FLAGS,
                                    0, 0), t, False)
        _LOAD_FAST[key] = entry
    return _LOAD_FAST[key]


def _store_fast(mod0: int, wh: bool) -> tuple[Any, ...] | None:
    """(kernel entry, table, table or shift, flush, 32-bit?) of the compiled SFPSTORE path for ``mod0``, or None."""
    key = (mod0, wh)
    if key not in _STORE_FAST:
        entry: tuple[Any, ...] | None = None
        if mod0 in (3, 4) or (mod0 == 12 and not wh):
            flush = mod0 == 3 and not wh                  # BH FP32: flush denormals
            t, lo = shuffle_hi_table(flush), flush_lo16_table()
            entry = (compiled_entry(_store32_fast, _FLAT, _ADJ32_ROWS[0], t, lo, flush, _LREG,
                                    _FLAGS, _FLAGS, 0, 0), t, lo, flush, True)
        elif mod0 in (1, 2):
            t, shift = (store_fp16_table(), 13) if mod0 == 1 else (shuffle_hi_table(True), 16)
            entry = (compiled_entry(_store16_fast, _FLAT, _ADJ16_ROWS[0], t, shift, _LREG,
                                    _FLAGS, _FLAGS, 0, 0), t, shift, False)
        _STORE_FAST[key] = entry
    return _STORE_FAST[key]


# ------------------------------------------------------------------------------ SFPLOAD
@op("SFPLOAD")
def sfpload(thread: Any, ins: Any) -> None:
    vd, mod0, am, imm10, wh = _decode(thread, ins)
    # SFPLOAD.md loads only ``if (VD < 8)``: into LReg 8..11 it writes nothing, breaks no rule
    # and still moves the Dest address on (tt-llk's "dummy" loads rely on that)
    write = lanes.guard_vd(thread, ins, vd, source=True)
    if write is None:                      # backdoor template load (VD >= 12, unverified for SFPLOAD)
        return
    sfpu_load(thread, ins, vd, mod0, am, imm10, write=write, wh=wh)


def _lane_mask(sfpu: Any, mod0: int, block_bit: U32, configured: bool, wh_store: bool = False
               ) -> np.ndarray | None:
    """Lanes that move: EN(L) (all for INT32_ALL) minus the lane's BLOCK_* bit; None = all 32."""
    mask = None if mod0 == INT32_ALL else lanes.enabled_or_none(sfpu)
    if configured and not wh_store:
        free = (sfpu.lane_config & block_bit) == 0
        mask = free if mask is None else mask & free
    return mask


def sfpu_load(thread: Any, ins: Any, vd: int, mod0: int, addr_mod: int, imm10: int, *,
              write: bool = True, wh: bool = False, apply_addr_mod: bool = True) -> int:
    """The SFPLOAD data move; ``write`` False drops the LReg write (VD 8..15).  Returns
    the Dest address it read (SFPLOADMACRO's scheduled SFPSTORE writes there).

    Vendor ISA page BlackholeA0/TensixTile/TensixCoprocessor/SFPLOAD.md, "Functional
    model" (spec §10.3).  This runs once per instruction, so the common case (one of
    the compiled kernels above) is dispatched here without further Python calls; lane
    configuration, undefined Dest rows and the formats without a kernel go through
    :func:`_load_lanes`.
    """
    core = thread.core
    sfpu = core.sfpu
    if mod0 == 0:
        mod0 = resolve_srcb(thread, store=False, wh=wh)
    addr = addressing.sfpu_address(thread, imm10, int32_all=mod0 == INT32_ALL, load=True, wh=wh)
    if core.dest_hazards:  # a matrix-unit Dest write may be too close (SFPLOAD.md)
        hazards.dest_read(thread, ins, addr, mod0)
    if write and vd < 8:
        fast = None
        if core.dest.all_valid and not lanes.configured(sfpu):
            fast = _LOAD_FAST.get((mod0, wh))
            if fast is None:
                fast = _load_fast(mod0, wh)
        if fast is None:
            _load_lanes(thread, ins, vd, mod0, addr, wh)
        else:
            c = core.cfg.fields
            remap = 1 if c.get("DEST_ACCESS_CFG_remap_addrs", 0) else 0
            if fast[2]:
                adj = _ADJ32_ROWS[2 * remap + (1 if c.get("DEST_ACCESS_CFG_swizzle_32b", 0) else 0)]
            else:
                adj = _ADJ16_ROWS[remap]
            fast[0](core.dest.flat, adj, fast[1], sfpu.lreg, sfpu.lane_flags, sfpu.use_lane_flags,
                    addr, vd)
    if apply_addr_mod:
        addressing.apply_addr_mod(thread, addr_mod, fidelity=False, wh=wh)
    return addr


def _load_lanes(thread: Any, ins: Any, vd: int, mod0: int, addr: int, wh: bool) -> None:
    """SFPLOAD into LReg[vd] (vd < 8) with the whole per-lane model of SFPLOAD.md's
    "Functional model": BLOCK_SFPU_RD_FROM_DEST, EN(L) (ignored by INT32_ALL),
    DEST_RD_COL_EXCHANGE, checked reads of undefined Dest rows, and the index capture."""
    core = thread.core
    sfpu = core.sfpu
    configured = lanes.configured(sfpu)
    mask = _lane_mask(sfpu, mod0, _RD_BLOCK, configured)
    colx = _colx(sfpu, lanes.DEST_RD_COL_EXCHANGE) if configured else 0
    c = core.cfg.fields
    row, col, f16, f32h, f32l = lane_cells(addr, colx, bool(c.get("DEST_ACCESS_CFG_remap_addrs", 0)),
                                           bool(c.get("DEST_ACCESS_CFG_swizzle_32b", 0)))
    dest = core.dest
    old = sfpu.lreg[vd]
    if mod0 in LOAD_32:
        hi = dest.flat[f32h]
        lo = dest.flat[f32l]
        if not dest.all_valid:
            hi, lo = _undefined_dst32(thread, ins, f32h, f32l, hi, lo, mask)
        value = _from_dst32(mod0, hi, lo, old, wh)
    elif mod0 == 11:                                     # ZERO reads no cell
        value = _ZERO32
    else:
        h = dest.flat[f16]
        if not dest.all_valid:
            h = _undefined_dst16(thread, ins, f16, h, mask)
        value = _FROM_DST16.get(mod0, _from_dst16_table)(
            mod0, h, old, sfpu.lane_config if configured else None, wh)
    if mask is None:
        old[:] = value
    else:
        np.copyto(old, value, where=mask)
    if vd < 4 and configured:
        _capture_index(sfpu, vd, mask, row, col)


def _undefined_dst32(thread: Any, ins: Any, f32h: np.ndarray, f32l: np.ndarray, hi: np.ndarray,
                     lo: np.ndarray, mask: np.ndarray | None) -> tuple[np.ndarray, np.ndarray]:
    """The (high, low) Dst32b cells read, once some Dest row is undefined: a moving lane
    whose cell ZEROACC left undefined is a rule violation, and reads 0 when lenient."""
    dest = thread.core.dest
    bad = ~(dest.defined(f32h) & dest.defined(f32l))
    if mask is not None:
        bad &= mask
    if bad.any():
        _undefined_read(thread, ins, f32h[bad])
        hi = np.where(bad, 0, hi).astype(np.uint16)
        lo = np.where(bad, 0, lo).astype(np.uint16)
    return hi, lo


def _undefined_dst16(thread: Any, ins: Any, f16: np.ndarray, h: np.ndarray, mask: np.ndarray | None
                     ) -> np.ndarray:
    """The Dst16b cells read, once some Dest row is undefined (as :func:`_undefined_dst32`)."""
    dest = thread.core.dest
    bad = ~dest.defined(f16)
    if mask is not None:
        bad &= mask
    if bad.any():
        _undefined_read(thread, ins, f16[bad])
        h = np.where(bad, 0, h).astype(np.uint16)
    return h


def _from_dst32(mod0: int, hi: np.ndarray, lo: np.ndarray, old: np.ndarray, wh: bool) -> np.ndarray:
    """FP32 / INT32 / INT32_ALL / INT32_SM: UnshuffleFP32 of the Dst32b value (SFPLOAD.md);
    Wormhole's INT32_SM also converts sign-magnitude to two's complement (dest.load_convert)."""
    if wh and mod0 == 12:
        return load_convert(12, None, (hi.astype(U32) << _16) | lo, old, wh=True)
    value = unshuffle_hi_table().take(hi)
    value |= lo
    return value


def _from_dst16_table(mod0: int, h: np.ndarray, old: np.ndarray, lane_config: np.ndarray | None,
                      wh: bool) -> np.ndarray:
    """The 16-bit formats that replace the whole LReg value (BF16, INT8, UINT16, HI16,
    INT16, LO16, INT8_COMP; FP16 without ENABLE_FP16A_INF): one table lookup per cell."""
    return load_table(mod0, False, wh and mod0 in (5, 13)).take(h)


def _from_dst16_fp16(mod0: int, h: np.ndarray, old: np.ndarray, lane_config: np.ndarray | None,
                     wh: bool) -> np.ndarray:
    """FP16 (ReadFP16 in SFPLOAD.md): lanes with ENABLE_FP16A_INF read the largest FP16
    value as infinity, so they take the other table."""
    if lane_config is not None and np.count_nonzero(lane_config & _FP16_INF):
        return np.where((lane_config & _FP16_INF) != 0,
                        load_table(1, True).take(h), load_table(1).take(h))
    return load_table(1, False, False).take(h)


def _from_dst16_lo16_only(mod0: int, h: np.ndarray, old: np.ndarray, lane_config: np.ndarray | None,
                          wh: bool) -> np.ndarray:
    """LO16_ONLY: the cell replaces the low half, the high half of the LReg stays."""
    value = old & _HI_MASK
    value |= h
    return value


def _from_dst16_hi16_only(mod0: int, h: np.ndarray, old: np.ndarray, lane_config: np.ndarray | None,
                          wh: bool) -> np.ndarray:
    """HI16_ONLY: the cell replaces the high half, the low half of the LReg stays."""
    value = old & _LO_MASK
    value |= load_table(7).take(h)
    return value


#: SFPLOAD Mod0 → conversion of Dst16b cells that needs more than one table (others: the table)
_FROM_DST16 = {1: _from_dst16_fp16, 14: _from_dst16_lo16_only, 15: _from_dst16_hi16_only}


def _capture_index(sfpu: Any, vd: int, mask: np.ndarray | None, row: np.ndarray, col: np.ndarray) -> None:
    """LReg[vd + 4] = (Row << 4) | Column in the moving lanes with ENABLE_DEST_INDEX and
    CAPTURE_DEFAULT_DEST_INDEX (SFPLOAD.md, for VD < 4)."""
    cap = (sfpu.lane_config & _CAPTURE) == _CAPTURE
    if mask is not None:
        cap &= mask
    if cap.any():
        np.copyto(sfpu.lreg[vd + 4], ((row << 4) | col).astype(U32), where=cap)


def _undefined_read(thread: Any, ins: Any, cells: np.ndarray) -> None:
    rows = sorted({int(c) // COLS for c in cells})
    shown = ", ".join(str(r) for r in rows[:4]) + (" …" if len(rows) > 4 else "")
    rules.broken(thread, ins, f"reads Dest row {shown} which ZEROACC left undefined "
                              "(undefined behaviour for the vector unit; --lenient reads 0)")


# ----------------------------------------------------------------------------- SFPSTORE
@op("SFPSTORE")
def sfpstore(thread: Any, ins: Any) -> None:
    vd, mod0, am, imm10, wh = _decode(thread, ins)
    if lanes.guard_vd(thread, ins, vd, source=True) is None:
        return
    sfpu_store(thread, ins, vd, mod0, am, imm10, wh=wh)


def sfpu_store(thread: Any, ins: Any, vd: int, mod0: int, addr_mod: int, imm10: int, *,
               wh: bool = False, apply_addr_mod: bool = True, addr: int | None = None,
               backdoor: bool = True) -> None:
    """The SFPSTORE data move from LReg[vd] (0..16) to Dest.

    Vendor ISA page BlackholeA0/TensixTile/TensixCoprocessor/SFPSTORE.md, "Functional
    model" (spec §10.4).  As in :func:`sfpu_load`, the compiled kernel of the common
    case is dispatched here; everything else goes through :func:`_store_lanes`.
    An SFPSTORE scheduled by SFPLOADMACRO passes the ``addr`` its SFPLOADMACRO computed
    (no address formation, no Sp update) and ``backdoor=False`` (DISABLE_BACKDOOR_LOAD
    reads as true, so LReg[12..15] are stored from every lane).
    """
    core = thread.core
    sfpu = core.sfpu
    if mod0 == 0:
        mod0 = resolve_srcb(thread, store=True, wh=wh)
    if addr is None:
        addr = addressing.sfpu_address(thread, imm10, int32_all=mod0 == INT32_ALL, load=False, wh=wh)
    fast = None
    if (vd < 12 or vd == 16 or not backdoor) and core.dest.all_valid and not lanes.configured(sfpu):
        fast = _STORE_FAST.get((mod0, wh))
        if fast is None:
            fast = _store_fast(mod0, wh)
    if fast is None:
        _store_lanes(thread, vd, mod0, addr, wh, backdoor)
    else:
        c = core.cfg.fields
        remap = 1 if c.get("DEST_ACCESS_CFG_remap_addrs", 0) else 0
        if fast[-1]:
            adj = _ADJ32_ROWS[2 * remap + (1 if c.get("DEST_ACCESS_CFG_swizzle_32b", 0) else 0)]
            fast[0](core.dest.flat, adj, fast[1], fast[2], fast[3], sfpu.lreg,
                    sfpu.lane_flags, sfpu.use_lane_flags, addr, vd)
        else:
            fast[0](core.dest.flat, _ADJ16_ROWS[remap], fast[1], fast[2], sfpu.lreg,
                    sfpu.lane_flags, sfpu.use_lane_flags, addr, vd)
    if apply_addr_mod:
        addressing.apply_addr_mod(thread, addr_mod, fidelity=False, wh=wh)


def _store_lanes(thread: Any, vd: int, mod0: int, addr: int, wh: bool, backdoor: bool = True) -> None:
    """SFPSTORE with the whole per-lane model of SFPSTORE.md's "Functional model":
    BLOCK_DEST_WR_FROM_SFPU (Blackhole), EN(L) (ignored by INT32_ALL), the backdoor
    bit of LReg 12..15 (unless ``backdoor`` is False: SFPLOADMACRO's store),
    DEST_WR_COL_EXCHANGE; the cells written become defined."""
    core = thread.core
    sfpu = core.sfpu
    configured = lanes.configured(sfpu)
    mask = _lane_mask(sfpu, mod0, _WR_BLOCK, configured, wh_store=wh)
    if backdoor and 12 <= vd < 16:                       # only lanes whose backdoor is disabled store
        open_ = (sfpu.lane_config & _NO_BACKDOOR) != 0
        mask = open_ if mask is None else mask & open_
    colx = _colx(sfpu, lanes.DEST_WR_COL_EXCHANGE) if configured else 0
    c = core.cfg.fields
    _, _, f16, f32h, f32l = lane_cells(addr, colx, bool(c.get("DEST_ACCESS_CFG_remap_addrs", 0)),
                                       bool(c.get("DEST_ACCESS_CFG_swizzle_32b", 0)))
    dest = core.dest
    flat = dest.flat
    x = sfpu.lreg[vd]
    if mod0 in STORE_32:
        hi, lo = _TO_DST32[mod0](mod0, x, wh)
        if mask is not None:
            f32h, f32l, hi, lo = f32h[mask], f32l[mask], hi[mask], lo[mask]
        flat[f32h] = hi
        flat[f32l] = lo
        if not dest.all_valid:
            dest.mark_written(np.concatenate((f32h, f32l)))
    else:
        cell = _TO_DST16.get(mod0, _to_dst16_convert)(mod0, x, wh)
        if mask is not None:
            f16, cell = f16[mask], cell[mask]
        flat[f16] = cell
        if not dest.all_valid:
            dest.mark_written(f16)


def _to_dst32_shuffled(mod0: int, x: np.ndarray, wh: bool) -> tuple[np.ndarray, np.ndarray]:
    """FP32 / INT32 / INT32_ALL, and INT32_SM on Blackhole: (high, low) Dst32b cells of
    ShuffleFP32(x) (SFPSTORE.md); Blackhole's FP32 flushes denormals to signed zero."""
    low, top = _halves(x)
    if mod0 == 3 and not wh:
        return shuffle_hi_table(True).take(top), low & flush_lo16_table().take(top)
    return shuffle_hi_table(False).take(top), low


def _to_dst32_int32_sm(mod0: int, x: np.ndarray, wh: bool) -> tuple[np.ndarray, np.ndarray]:
    """INT32_SM: Wormhole converts two's complement to sign-magnitude (dest.store_convert);
    Blackhole stores the bits as INT32 does."""
    if not wh:
        return _to_dst32_shuffled(mod0, x, wh)
    v = store_convert(mod0, x, wh=wh)
    return (v >> _16).astype(np.uint16), v.astype(np.uint16)


def _to_dst32_hi16(mod0: int, x: np.ndarray, wh: bool) -> tuple[np.ndarray, np.ndarray]:
    """HI16: the LReg bits as they are, no shuffle."""
    low, top = _halves(x)
    return top, low


def _to_dst32_lo16(mod0: int, x: np.ndarray, wh: bool) -> tuple[np.ndarray, np.ndarray]:
    """LO16: the LReg bits rotated by 16, no shuffle."""
    low, top = _halves(x)
    return low, top


#: SFPSTORE Mod0 (the formats that write a Dst32b cell, dest.STORE_32) → (high, low) cells
_TO_DST32 = {3: _to_dst32_shuffled, 4: _to_dst32_shuffled, 10: _to_dst32_shuffled,
             12: _to_dst32_int32_sm, 7: _to_dst32_hi16, 9: _to_dst32_lo16}


def _to_dst16_fp16(mod0: int, x: np.ndarray, wh: bool) -> np.ndarray:
    """FP16: truncating, saturating (E12); the cell depends on bits 31..13 only."""
    return store_fp16_table().take(x >> _13)


def _to_dst16_bf16(mod0: int, x: np.ndarray, wh: bool) -> np.ndarray:
    """BF16: denormals flushed to signed zero, then the shuffled top half."""
    return shuffle_hi_table(True).take(_halves(x)[1])


def _to_dst16_low(mod0: int, x: np.ndarray, wh: bool) -> np.ndarray:
    """UINT16 / LO16_ONLY: the low half of the LReg."""
    return _halves(x)[0]


def _to_dst16_high(mod0: int, x: np.ndarray, wh: bool) -> np.ndarray:
    """HI16_ONLY: the high half of the LReg."""
    return _halves(x)[1]


def _to_dst16_convert(mod0: int, x: np.ndarray, wh: bool) -> np.ndarray:
    """INT8, INT16, ZERO, INT8_COMP: the reference conversion (dest.store_convert)."""
    return store_convert(mod0, x, wh=wh).astype(np.uint16)


#: SFPSTORE Mod0 → Dst16b cells, for the formats with a table or a plain half (others: store_convert)
_TO_DST16 = {1: _to_dst16_fp16, 2: _to_dst16_bf16, 6: _to_dst16_low, 14: _to_dst16_low,
             15: _to_dst16_high}


# ------------------------------------------------------------------------------ ZEROACC
ONE_ROW, ROWS_16, HALF, ALL = 0, 1, 2, 3


@op("ZEROACC")
def zeroacc(thread: Any, ins: Any) -> None:
    """Mark Dest rows undefined (BH: clear_mode [20:19], use_32_bit_mode [18],
    clear_zero_flags [17], AddrMod [16:14], where [9:0]; WH: clear_mode [21:19] whose
    bit 2 is the 32-bit flag (UseDst32b), revert [18], AddrMod [16:15], dst [9:0]).
    Blackhole's bits [23:21] are reserved: such a word runs through the reserved-bits
    row (:mod:`tessera_tensix.semantics.reserved`), leniently as if they were zero."""
    wh = getattr(getattr(thread, "arch", None), "name", "") == "tensix-wh"
    am = ins.addr_mode
    if wh:
        where = ins.dst
        mode = ins.clear_mode & 3
        use32 = bool(ins.clear_mode >> 2)
        revert = bool(ins.revert) and mode != ONE_ROW
        if revert:
            rules.broken(thread, ins, "ZEROACC with Revert set is undefined behaviour")
    else:
        where = ins.where
        mode = ins.clear_mode
        use32 = bool(ins.use_32_bit_mode)
        revert = bool(ins.clear_zero_flags)    # rows become defined again
    core = thread.core
    c = core.cfg.fields
    remap, swizzle = _views(thread)
    rows: Any
    if mode == ONE_ROW:
        r = addressing.math_row(thread, where)
        if c.get("ALU_ACC_CTRL_Fp32_enabled", 0) or c.get("ALU_ACC_CTRL_INT8_math_enabled", 0):
            p = int(ADJ32[int(remap)][int(swizzle)][r])
            rows = [p, p + 8]
        else:
            rows = [int(ADJ16[int(remap)][r])]
    elif mode == ROWS_16:
        block = where & 0xFF
        if (not wh and thread.tcfg.fields.get("DEST_TARGET_REG_CFG_MATH_Offset", 0) & 0x200
                and not c.get("DEST_ACCESS_CFG_zeroacc_absolute_tile_mode", 0)):
            block += 16 if use32 else 32     # follow the math half of Dest (BH bank auto-detect)
        if use32:
            if block < 32:
                p = ADJ32[int(remap)][int(swizzle)][block * 16 + np.arange(16)]
                rows = np.concatenate([p, p + 8])
            else:
                rows = None                     # out of range: no rows (current silicon)
        else:
            rows = ADJ16[int(remap)][block * 16 + np.arange(16)] if block < 64 else None
    elif mode == HALF:
        rows = slice(512, 1024) if where & 1 else slice(0, 512)
    else:
        rows = slice(0, 1024)
    if rows is not None:
        if revert:
            core.dest.revalidate(rows)
        else:
            core.dest.invalidate(rows)
    if mode in (ONE_ROW, ROWS_16):
        addressing.apply_addr_mod(thread, am, fidelity=True, wh=wh)
