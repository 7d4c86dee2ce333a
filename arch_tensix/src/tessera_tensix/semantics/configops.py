"""Vector-unit configuration: SFPCONFIG (§17.1, errata E3/E4).

SFPCONFIG reads its value from Imm16 (Mod1 bit0, IMM16_IS_VALUE) or from LReg[0] of
row 0 (lane L uses LReg[0][L & 7]: the first 8 lanes are broadcast to all four rows).
Its [7:4] field is a configuration destination, never subject to the backdoor rule:

====== ==========================================================================
VD     destination
====== ==========================================================================
0..3   LoadMacroConfig.InstructionTemplate[VD] = LReg[0][L & 7] (Imm16 and the op ignored)
4..7   LoadMacroConfig.Sequence[VD-4] = value (op ignored)
8      LoadMacroConfig.Misc = Misc op value, 12 bits
9, 10  nothing (non-contractual: a rule stop unless lenient)
11..14 LReg[VD] = LReg[0][L & 7], or with IMM16_IS_VALUE the fixed constants
       -1.0, 1/65536 (E4), -0.67487759, -0.34484843
15     LaneConfig = LaneConfig op value, 18 bits; with IMM16_IS_VALUE bits [17:16] kept
====== ==========================================================================

op = Mod1[2:1]: 0 write, 1 OR, 2 AND, 3 XOR (E3).  Lane gating (§3.3): lane L is
skipped if Mod1 bit3 (IMM16_IS_LANE_MASK) and Imm16 bit 2·(L & 7) is clear, or if
UseLaneFlagsForLaneEnable[L & 7] and not LaneFlags[L & 7]; ROW_MASK is not consulted.
A change of LaneConfig.DISABLE_BACKDOOR_LOAD is seen by the very next instruction
(the hardware may show either value without an SFPNOP in between); when that next
instruction's VD is 12..15, which the bit decides about, it breaks a rule
(:func:`tessera_tensix.hazards.backdoor_changed`).

LoadMacroConfig (templates, sequences, Misc) is what SFPLOADMACRO runs
(:mod:`tessera_tensix.semantics.loadmacro`).  An SFPCONFIG scheduled by an SFPLOADMACRO
gets the macro's VD as its destination: LReg index 0..7 (a template or a sequence), or
16, which names no configuration destination: it then does nothing.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from tessera_tensix import hazards, lanes, rules
from tessera_tensix.semantics import op

U32 = np.uint32
#: SFPCONFIG IMM16_IS_VALUE constants for LReg[11..14] (spec §17.1, E4)
SFPCONFIG_DEFAULTS = {11: 0xBF80_0000, 12: 0x3780_0000, 13: 0xBF2C_C4C7, 14: 0xBEB0_8FF9}
_LANE_CONFIG_BITS = U32(0x3_FFFF)
_BACKDOOR = U32(1 << lanes.DISABLE_BACKDOOR_LOAD)
_MISC_BITS = U32(0xFFF)
#: Imm16 bit 2·(L & 7) of every lane, as a shift amount
_LANE_MASK_SHIFT = (2 * (np.arange(lanes.LANES) & 7)).astype(U32)
_ROW0 = lanes.ROW0


def _gate(sfpu: Any, imm16: int, mod1: int) -> np.ndarray | None:
    """Lanes SFPCONFIG writes (§3.3), or None when it is every lane."""
    use = sfpu.use_lane_flags[_ROW0]
    gate = None
    if use.any():
        gate = ~use | sfpu.lane_flags[_ROW0]
    if mod1 & 8:                                   # IMM16_IS_LANE_MASK
        picked = ((U32(imm16) >> _LANE_MASK_SHIFT) & U32(1)).astype(bool)
        gate = picked if gate is None else gate & picked
    return gate


def _combine(old: np.ndarray, value: np.ndarray, mod1: int) -> np.ndarray:
    kind = (mod1 >> 1) & 3
    if kind == 0:
        return value
    if kind == 1:
        return old | value
    if kind == 2:
        return old & value
    return old ^ value


def _store(dest: np.ndarray, value: np.ndarray, gate: np.ndarray | None) -> None:
    if gate is None:
        dest[:] = value
    else:
        np.copyto(dest, value, where=gate)


@op("SFPCONFIG")
def sfpconfig(thread: Any, ins: Any) -> None:
    dest, mod1, imm16 = ins.config_dest, ins.instr_mod1, ins.imm16_math
    if dest > 15:                                  # 16: only from SFPLOADMACRO, no such case
        return
    if dest in (9, 10):
        rules.broken(thread, ins, f"destination {dest} is not defined "
                                  "(0..8 LoadMacroConfig, 11..14 LReg, 15 LaneConfig)")
        return                                     # lenient: no effect, as the model says
    sfpu = thread.core.sfpu
    gate = _gate(sfpu, imm16, mod1)
    if gate is not None and not gate.any():
        return
    row0 = sfpu.lreg[0][_ROW0]                     # LReg[0][L & 7] for every lane
    if mod1 & 1:                                   # IMM16_IS_VALUE
        value = np.full(lanes.LANES, imm16, dtype=U32)
    else:
        value = row0
    if dest <= 3:
        _store(sfpu.template[dest], row0, gate)
    elif dest <= 7:
        _store(sfpu.sequence[dest - 4], value, gate)
    elif dest == 8:
        _store(sfpu.misc, _combine(sfpu.misc, value & _MISC_BITS, mod1) & _MISC_BITS, gate)
    elif dest <= 14:
        if mod1 & 1:
            value = np.full(lanes.LANES, SFPCONFIG_DEFAULTS[dest], dtype=U32)
        else:
            value = row0
        _store(sfpu.lreg[dest], value, gate)
    else:                                          # 15: LaneConfig
        old = sfpu.lane_config
        new = _combine(old, value, mod1) & _LANE_CONFIG_BITS
        if mod1 & 1:                               # Imm16 cannot reach bits 17:16: keep them
            new = new | (old & U32(0x3_0000))
        before = old & _BACKDOOR
        _store(sfpu.lane_config, new, gate)
        if ((sfpu.lane_config & _BACKDOOR) != before).any():  # SFPCONFIG.md: the next may not see it
            hazards.backdoor_changed(thread, ins)

