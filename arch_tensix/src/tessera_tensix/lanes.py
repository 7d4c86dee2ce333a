"""Shared lane helpers of the vector unit (spec tensix-sfpu.md §2.2, §3.2–§3.5).

Everything here works on the whole 32-lane vector with numpy (no per-lane Python
loops).  Lane L sits in row ``L >> 3``, column ``L & 7``.

API used by every SFPU semantic module::

    from tessera_tensix import lanes

    en = lanes.enabled(sfpu)                 # EN(L): (32,) bool, §3.2
    w = lanes.guard_vd(thread, ins, vd)      # §3.4, call BEFORE any side effect:
    if w is None:                            #   backdoor template load done: no effect
        return
    ...compute result (32,) uint32, flags…
    if w:                                    #   True: the LReg write is allowed (VD < 8 or 16)
        lanes.write(sfpu, vd, result, en)    #   copy result into LReg[vd] where en
    # False: the instruction executes (flags, PRNG, stack, Dst side effects) but the
    # LReg result is dropped (VD 8..15 with the backdoor disabled, or lenient mode).

    lanes.write_indirect(sfpu, idx, result, en)   # §3.5 INDIRECT_VD: per-lane destination idx
    lanes.indirect_index(sfpu)                     # LReg[7] & 15 per lane (int64 array)
    lanes.row_mask_disabled(sfpu)                  # lanes switched off by ROW_MASK alone
    lanes.configured(sfpu)                         # is any LaneConfig bit set? (fast test)
    lanes.enabled_or_none(sfpu)                    # EN(L), or None when all 32 lanes are enabled
    lanes.lane_config_row0(sfpu, bit)              # per-lane bit read from LaneConfig[L & 7]
    lanes.lane_config_bit(sfpu, bit)               # per-lane bit read from LaneConfig[L]

LaneConfig bit numbers are exported as constants (``ENABLE_FP16A_INF`` …).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from tessera_tensix import rules

LANES = 32
#: lane → row / column / row-0 twin (lane & 7)
LANE = np.arange(LANES)
ROW = LANE >> 3
COL = LANE & 7
ROW0 = LANE & 7

# LaneConfig bits (§2.2)
ENABLE_FP16A_INF = 0
DISABLE_BACKDOOR_LOAD = 1
ENABLE_DEST_INDEX = 2
CAPTURE_DEFAULT_DEST_INDEX = 3
BLOCK_DEST_WR_FROM_SFPU = 4
BLOCK_SFPU_RD_FROM_DEST = 5
DEST_RD_COL_EXCHANGE = 6
DEST_WR_COL_EXCHANGE = 7
EXCHANGE_SRCB_SRCC = 8
ROW_MASK_SHIFT = 12

#: Operand overrides an instruction scheduled by SFPLOADMACRO carries in its ``__dict__``
#: (:mod:`tessera_tensix.semantics.loadmacro`): ``MACRO_VB`` is the register an instruction
#: whose functional model says ``unsigned VB = VD;`` (SFPIADD, SFPSHFT, SFPXOR, SFPSETEXP …)
#: reads instead of LReg[VD]; ``MACRO_VC`` the one SFPADDI/SFPMULI read instead (their
#: ``unsigned VC = VD;``).  Instructions issued normally never carry them, so the semantic
#: functions read ``ins.__dict__.get(MACRO_VB, vd)``.
MACRO_VB = "_tx_macro_vb"
MACRO_VC = "_tx_macro_vc"

_ALL = np.ones(LANES, dtype=bool)
_ALL.setflags(write=False)
_ROW_BIT = (np.uint32(1) << (ROW + ROW_MASK_SHIFT).astype(np.uint32)).astype(np.uint32)


def lane_config_bit(sfpu: Any, bit: int) -> np.ndarray:
    """(32,) bool: LaneConfig[L] bit ``bit`` of every lane."""
    return ((sfpu.lane_config >> np.uint32(bit)) & np.uint32(1)).astype(bool)


def lane_config_row0(sfpu: Any, bit: int) -> np.ndarray:
    """(32,) bool: bit ``bit`` read from LaneConfig[L & 7] (ROW_MASK, COL_EXCHANGE bits)."""
    return ((sfpu.lane_config[ROW0] >> np.uint32(bit)) & np.uint32(1)).astype(bool)


def row_mask_disabled(sfpu: Any) -> np.ndarray:
    """(32,) bool: lane L is disabled by bit (L >> 3) of LaneConfig[L & 7].ROW_MASK."""
    return (sfpu.lane_config[ROW0] & _ROW_BIT) != 0


def enabled(sfpu: Any) -> np.ndarray:
    """EN(L) of §3.2 as a fresh (32,) bool array (callers may modify it)."""
    # EN = LaneFlags if UseLF else true, i.e. LaneFlags >= UseLF on booleans (one ufunc)
    en = np.greater_equal(sfpu.lane_flags, sfpu.use_lane_flags)
    if configured(sfpu):
        en &= ~row_mask_disabled(sfpu)
    return en


_ZERO_CONFIG = bytes(4 * LANES)
_NO_LANES = bytes(LANES)


def enabled_or_none(sfpu: Any) -> np.ndarray | None:
    """EN(L), or None when every lane is enabled (no UseLaneFlags, no LaneConfig bit set).

    The None case is detected without numpy arithmetic: callers use it to skip masking.
    """
    if sfpu.use_lane_flags.tobytes() == _NO_LANES and not configured(sfpu):
        return None
    return enabled(sfpu)


def configured(sfpu: Any) -> bool:
    """Is any LaneConfig bit set in any lane?  (A fast test: most kernels never set one.)"""
    return sfpu.lane_config.tobytes() != _ZERO_CONFIG


def all_lanes() -> np.ndarray:
    """A read-only (32,) all-true mask (instructions that ignore EN(L))."""
    return _ALL


def guard_vd(thread: Any, ins: Any, vd: int, *, source: bool = False) -> bool | None:
    """The destination-index guards of §3.4 for an instruction whose reg field is ``vd``.

    Call before any side effect.  Returns

    * ``None`` — backdoor template load: VD ≥ 12 with LaneConfig.DISABLE_BACKDOOR_LOAD = 0;
      ``LoadMacroConfig.InstructionTemplate[VD-12] = ins.word`` has been done, the
      instruction has no other effect.
    * ``True`` — execute, and the LReg result may be written (VD < 8 or VD = 16).
    * ``False`` — execute, the LReg result is dropped (VD 8..15 once the backdoor is
      disabled).  Unless ``source`` is set (VD only names a register the instruction
      reads, e.g. SFPSTORE), this is a write to a read-only LReg: a rule violation
      that stops the run unless lenient.

    Lanes whose DISABLE_BACKDOOR_LOAD bits differ are a rule violation too (the
    per-lane mix is not modelled); leniently the template is stored in the lanes
    with the backdoor enabled and the instruction executes with its write dropped.
    """
    if vd < 8 or vd == 16:
        return True
    sfpu = thread.core.sfpu
    if vd >= 12:
        backdoor = (sfpu.lane_config & np.uint32(1 << DISABLE_BACKDOOR_LOAD)) == 0
        if backdoor.all():
            sfpu.template[vd - 12, :] = ins.word & 0xFFFF_FFFF
            return None
        if backdoor.any():
            rules.broken(thread, ins, f"LaneConfig.DISABLE_BACKDOOR_LOAD differs between lanes "
                                      f"(backdoor template load of VD={vd} in some lanes only)")
            sfpu.template[vd - 12, backdoor] = ins.word & 0xFFFF_FFFF
            return False
    if not source:
        rules.broken(thread, ins, f"write to read-only LReg[{vd}] (only LReg[0..7] are writable)")
    return False


def write(sfpu: Any, vd: int, values: np.ndarray, mask: np.ndarray) -> None:
    """LReg[vd][L] = values[L] for lanes where ``mask`` (in place, uint32)."""
    np.copyto(sfpu.lreg[vd], values, where=mask, casting="unsafe")


def indirect_index(sfpu: Any) -> np.ndarray:
    """Per-lane register index LReg[7][L] & 15 (INDIRECT_VA / INDIRECT_VD, §3.5)."""
    return (sfpu.lreg[7] & np.uint32(15)).astype(np.intp)


def write_indirect(sfpu: Any, index: np.ndarray, values: np.ndarray, mask: np.ndarray) -> None:
    """Per-lane destination ``index`` (0..15): writes where ``mask`` and index < 8 (§3.5)."""
    sel = np.nonzero(mask & (index < 8))[0]
    if sel.size:
        sfpu.lreg[index[sel], sel] = np.asarray(values, dtype=np.uint32)[sel]


def read_indirect(sfpu: Any, index: np.ndarray) -> np.ndarray:
    """Per-lane source LReg[index[L]][L] (INDIRECT_VA)."""
    return sfpu.lreg[index, LANE]
