"""Cross-lane data movement and min/max: SFPSWAP, SFPTRANSP, SFPSHFT2 (every mode).

Spec tensix-sfpu.md §13.2 (SFPSWAP, erratum E16), §14.1 (SFPSHFT2), §14.2 (SFPTRANSP).
Lane L sits in row L >> 3, column L & 7.  All sources are sampled before any write,
and each destination lane is written only where EN(L) holds.

Decisions for points the references leave open (see docs/tensix.md):

* SFPSWAP writes VC only if VC < 8 and VD only if VD < 8 (the ISA model's own
  tests; with ENABLE_DEST_INDEX: < 4).  A dropped write there is the documented
  design (e.g. VC = LReg[9] as a constant operand), not a rule violation, so the VD
  field goes through the backdoor test only.
* SFPSWAP Mod1 10..15 are reserved (they behave like 9, "non-contractual"): a rule
  stop; leniently they act as 9 (VD gets the maximum in every lane).
* SFPSHFT2 Mod1 ≥ 7 is reserved: a rule stop; leniently nothing happens.
* Wormhole SFPSHFT2 SUBVEC_SHFLSHR1 reproduces the documented hardware bug: lanes
  with column 0 receive ``vc0[L + 7]``, where vc0 is the VC vector sampled by the most
  recent SHFLROR1 / SHFLROR1_AND_COPY4 (zero before any).
* Under SFPLOADMACRO (:mod:`tessera_tensix.semantics.loadmacro`) SFPSWAP reads the value
  its model calls LReg[VD] from the macro's VB (``lanes.MACRO_VB``), as the other Simple
  sub-unit instructions that read VD do, and writes VD before VC, so when the macro makes
  VC and VD the same register the VC write (VD's old value, e.g. the max) is the one
  left; SFPSHFT2 SHFT_LREG / SHFT_IMM read the macro's VB when it sets one.  Issued
  normally this changes nothing (VC = VD holds equal values).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from tessera_tensix import hazards, lanes, rules
from tessera_tensix.semantics import op
from tessera_tensix.semantics.predication import sign_mag_key

U32 = np.uint32
_ZERO_I32 = np.zeros(lanes.LANES, dtype=np.int32)
_ZERO_I32.setflags(write=False)

#: SFPSWAP Mod1 → lanes where VD receives the minimum (§13.2); other lanes get the maximum
_VD_GETS_MIN = {1: 0xFFFF_FFFF, 2: 0x0000_FFFF, 3: 0x00FF_00FF, 4: 0xFF00_00FF, 5: 0x0000_00FF,
                6: 0x0000_FF00, 7: 0x00FF_0000, 8: 0xFF00_0000, 9: 0x0000_0000}
#: Mod1 → lanes where VD receives the maximum (the complement of _VD_GETS_MIN)
_GETS_MAX = {mod: ((np.uint64(bits) >> np.arange(32, dtype=np.uint64)) & np.uint64(1)) == 0
             for mod, bits in _VD_GETS_MIN.items()}
for _m in _GETS_MAX.values():
    _m.setflags(write=False)

#: ROR8: lane L takes lane L-1 of its row, column 0 takes column 7 of the same row
_ROR8 = np.array([(L - 1) if L & 7 else (L + 7) for L in range(32)], dtype=np.intp)
_COL0 = (np.arange(32) & 7) == 0
#: SUBVEC_CHAINED_COPY4: lane L takes lane L+8 (rows move up one), the last row gets 0
_UP8 = np.minimum(np.arange(32) + 8, 31)
_LAST_ROW = np.arange(32) >= 24
_ALL = lanes.all_lanes()


def _is_wormhole(thread: Any) -> bool:
    arch = getattr(thread, "arch", None)
    return getattr(arch, "name", "") == "tensix-wh"


# ---------------------------------------------------------------- SFPSWAP (§13.2, E16)
@op("SFPSWAP")
def sfpswap(thread: Any, ins: Any) -> None:
    vd, vc, mod1 = ins.lreg_dest, ins.lreg_src_c, ins.instr_mod1
    if vd >= 12 and lanes.guard_vd(thread, ins, vd, source=True) is None:
        return
    if mod1 > 9:
        rules.broken(thread, ins, f"Mod1={mod1} is reserved (defined: 0..9)")
        mod1 = 9                                   # lenient: the model's default case
    sfpu = thread.core.sfpu
    lreg = sfpu.lreg
    # a copy: cv = pair[0], dv = pair[1] (dv read through the macro's VB when scheduled)
    pair = lreg.take((vc, ins.__dict__.get(lanes.MACRO_VB, vd)), axis=0)
    configured = lanes.configured(sfpu)
    swap = None                                    # None: every lane swaps
    if mod1:
        key = sign_mag_key(pair)
        # VD-gets-min lanes swap when cv < dv, the others when not (ties swap there, E16)
        swap = np.not_equal(np.less(key[0], key[1]), _GETS_MAX[mod1])
        if configured:
            swap ^= lanes.lane_config_bit(sfpu, lanes.EXCHANGE_SRCB_SRCC)
    en = lanes.enabled_or_none(sfpu)
    if en is not None:
        swap = en if swap is None else swap & en
    indexed = None
    if configured:
        index_mode = lanes.lane_config_bit(sfpu, lanes.ENABLE_DEST_INDEX)
        if index_mode.any():
            everywhere = np.ones(lanes.LANES, dtype=bool) if swap is None else swap
            indexed = everywhere & index_mode
            swap = everywhere & ~index_mode
    if swap is None:
        if vd < 8:
            lreg[vd] = pair[0]
        if vc < 8:
            lreg[vc] = pair[1]
    else:
        if vd < 8:
            np.copyto(lreg[vd], pair[0], where=swap)
        if vc < 8:
            np.copyto(lreg[vc], pair[1], where=swap)
    if indexed is not None:                        # argmin/argmax: values in 0..3, indices in 4..7
        if vd < 4:
            np.copyto(lreg[vd], pair[0], where=indexed)
        if vc < 4:
            np.copyto(lreg[vc], pair[1], where=indexed)
        ic, id_ = 4 + (vc & 3), 4 + (vd & 3)
        if ic != id_:
            index_pair = lreg.take((ic, id_), axis=0)
            np.copyto(lreg[ic], index_pair[1], where=indexed)
            np.copyto(lreg[id_], index_pair[0], where=indexed)


# ---------------------------------------------------------------- SFPTRANSP (§14.2)
@op("SFPTRANSP")
def sfptransp(thread: Any, ins: Any) -> None:
    if lanes.guard_vd(thread, ins, ins.lreg_dest, source=True) is None:
        return
    sfpu = thread.core.sfpu
    block = sfpu.lreg[0:8].reshape(2, 4, 4, 8)             # [group][register][row][column]
    transposed = block.swapaxes(1, 2).copy()               # new[g][i][r][c] = old[g][r][i][c]
    en = lanes.enabled_or_none(sfpu)
    if en is None:
        block[...] = transposed
    else:                                                  # by destination lane (row r, column c)
        np.copyto(block, transposed, where=en.reshape(1, 1, 4, 8))


# ---------------------------------------------------------------- SFPSHFT2 (§14.1)
@op("SFPSHFT2")
def sfpshft2(thread: Any, ins: Any) -> None:
    vd, vc, mod1 = ins.lreg_dest, ins.lreg_src_c, ins.instr_mod1
    if mod1 >= 7:
        if lanes.guard_vd(thread, ins, vd, source=True) is None:
            return
        rules.broken(thread, ins, f"Mod1={mod1} is reserved (defined: 0..6)")
        return                                     # lenient: no effect
    w = lanes.guard_vd(thread, ins, vd, source=mod1 <= 2)
    if w is None:
        return
    if 2 <= mod1 <= 4 and _is_wormhole(thread):  # SFPSHFT2.md's rules on the next cycle
        hazards.shuffle_issued(thread, ins, mod1, vd)
    sfpu = thread.core.sfpu
    lreg = sfpu.lreg
    en = lanes.enabled_or_none(sfpu)
    if en is None:
        en = _ALL
    if mod1 <= 2:                                  # COPY4 family: writes LReg[0..3], VD ignored
        if mod1 == 1:                              # SUBVEC_CHAINED_COPY4: old L0 moves up a row
            new3 = np.where(_LAST_ROW, U32(0), lreg[0][_UP8])
        elif mod1 == 2:                            # SUBVEC_SHFLROR1_AND_COPY4
            src = lreg[vc].copy()
            _remember_ror_source(sfpu, src)
            new3 = src[_ROR8]
        else:                                      # COPY4
            new3 = np.zeros(lanes.LANES, dtype=U32)
        if en is _ALL:
            lreg[0:3] = lreg[1:4].copy()
            lreg[3] = new3
        else:
            np.copyto(lreg[0:3], lreg[1:4].copy(), where=en)
            np.copyto(lreg[3], new3, where=en)
        return
    if mod1 == 3:                                  # SUBVEC_SHFLROR1: rotate right in each row
        src = lreg[vc].copy()
        _remember_ror_source(sfpu, src)
        result = src[_ROR8]
    elif mod1 == 4:                                # SUBVEC_SHFLSHR1: shift right, column 0 gets 0
        result = lreg[vc][_ROR8]
        if _is_wormhole(thread):                   # WH bug: column 0 gets vc0[L + 7]
            result = np.where(_COL0, _last_ror_source(sfpu)[_ROR8], result)
        else:
            result[_COL0] = 0
    elif mod1 == 5:                                # SHFT_LREG: VB shifted by VC (logical)
        vb = ins.__dict__.get(lanes.MACRO_VB, ins.imm12_math & 15)   # VB field: Imm12's low 4 bits
        from tessera_tensix.semantics.intops import shift_by_lanes

        result = shift_by_lanes(lreg[vb], lreg[vc])
    else:                                          # 6 SHFT_IMM: VB = Imm12 & 15, amount = Imm12
        imm = ins.imm12_math
        imm = imm - 0x1000 if imm & 0x800 else imm
        x = lreg[ins.__dict__.get(lanes.MACRO_VB, imm & 15)]
        result = x << U32(imm & 31) if imm >= 0 else x >> U32((-imm) & 31)
    if w:
        if en is _ALL:
            lreg[vd] = result
        else:
            lanes.write(sfpu, vd, result, en)


def _remember_ror_source(sfpu: Any, src: np.ndarray) -> None:
    sfpu.shflror_vc = src                          # only read by the Wormhole SHFLSHR1 bug


def _last_ror_source(sfpu: Any) -> np.ndarray:
    src = getattr(sfpu, "shflror_vc", None)
    return np.zeros(lanes.LANES, dtype=U32) if src is None else src
