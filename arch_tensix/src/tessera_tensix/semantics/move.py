"""Moves into LRegs: SFPLOADI (§11.1), SFPMOV with its special sources (§16.1), SFPNOP.

SFPLOADI (0x71, ``VD[23:20] Mod0[19:16] Imm16[15:0]``) writes VD < 8 in the enabled
lanes; Mod0 0 FLOATB (Imm16 << 16), 1 FLOATA (FP16 → FP32 with the exponent always
rebiased by +112: 0x0000 loads 2^-15, E15), 2 USHORT, 4 SHORT, 8 UPPER (keeps the low
half), 10 LOWER (keeps the high half).  The other Mod0 values are undefined: a rule
violation; leniently nothing is written.  The value is computed once per decoded
instruction.

SFPMOV (0x7C, ``VC[11:8] VD[7:4] Mod1[3:0]``): lanes with EN(L), or every lane when
Mod1 is exactly 2.  Mod1 bit 3 FROM_SPECIAL reads, by VC: 0–3 InstructionTemplate[VC],
4–7 Sequence[VC−4], 8 LoadMacroConfig.Misc, 9 AdvancePRNG() (advances the enabled
lanes only, E19), 15 LaneConfig, 10–14 zero; otherwise LReg[VC] with Mod1 bit 0
flipping the sign bit (never applied to special sources).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from tessera_tensix import lanes, rules
from tessera_tensix.semantics import op
from tessera_tensix.semantics.convert import advance_prng

U32 = np.uint32
_SIGN = U32(0x8000_0000)
_HI16 = U32(0xFFFF_0000)
_LO16 = U32(0x0000_FFFF)
_CACHE = "_tx_loadi"
LOADI_MODES = {0: "FLOATB", 1: "FLOATA", 2: "USHORT", 4: "SHORT", 8: "UPPER", 10: "LOWER"}


def loadi_value(mod0: int, imm: int) -> int | None:
    """The 32-bit value SFPLOADI loads (UPPER/LOWER: the half it sets); None if undefined."""
    if mod0 == 0 or mod0 == 8:
        return imm << 16
    if mod0 == 1:
        return ((imm >> 15) << 31) | ((((imm >> 10) & 31) + 112) << 23) | ((imm & 0x3FF) << 13)
    if mod0 == 2 or mod0 == 10:
        return imm
    if mod0 == 4:
        return imm | 0xFFFF_0000 if imm & 0x8000 else imm
    return None


def _loadi_fields(ins: Any) -> tuple[int, int, Any]:
    vd, mod0, imm = ins.lreg_ind, ins.instr_mod0, ins.imm16
    value = loadi_value(mod0, imm)
    fields = (vd, mod0, None if value is None else U32(value))
    ins.__dict__[_CACHE] = fields
    return fields


@op("SFPLOADI")
def sfploadi(thread: Any, ins: Any) -> None:
    vd, mod0, value = ins.__dict__.get(_CACHE) or _loadi_fields(ins)
    w = lanes.guard_vd(thread, ins, vd)
    if w is None:
        return
    if value is None:
        rules.broken(thread, ins, f"undefined Mod0 {mod0} (defined: "
                                  f"{', '.join(f'{k} {v}' for k, v in LOADI_MODES.items())})")
        return
    if not w:
        return
    sfpu = thread.core.sfpu
    row = sfpu.lreg[vd]
    if mod0 == 8:
        value = (row & _LO16) | value
    elif mod0 == 10:
        value = (row & _HI16) | value
    np.copyto(row, value, where=lanes.enabled(sfpu))


# ---------------------------------------------------------------- SFPMOV (§16.1)
def special_source(sfpu: Any, vc: int, en: np.ndarray) -> np.ndarray:
    """The value SFPMOV FROM_SPECIAL reads for VC (advances the PRNG for VC 9)."""
    if vc < 4:
        return sfpu.template[vc].copy()
    if vc < 8:
        return sfpu.sequence[vc - 4].copy()
    if vc == 8:
        return sfpu.misc & U32(0xFFF)
    if vc == 9:
        return advance_prng(sfpu, en)
    if vc == 15:
        return sfpu.lane_config & U32(0x3FFFF)
    return np.zeros(lanes.LANES, dtype=U32)


@op("SFPMOV")
def sfpmov(thread: Any, ins: Any) -> None:
    vc, vd, mod1 = ins.lreg_c, ins.lreg_dest, ins.instr_mod1
    w = lanes.guard_vd(thread, ins, vd)
    if w is None:
        return
    sfpu = thread.core.sfpu
    en = lanes.all_lanes() if mod1 == 2 else lanes.enabled(sfpu)
    if mod1 & 8:
        value = special_source(sfpu, vc, en)
    elif mod1 & 1:
        value = sfpu.lreg[vc] ^ _SIGN
    else:
        value = sfpu.lreg[vc]
    if w:
        lanes.write(sfpu, vd, value, en)


@op("SFPNOP")
def sfpnop(thread: Any, ins: Any) -> None:
    """No operation (the MAD sub-unit's idle slot)."""
