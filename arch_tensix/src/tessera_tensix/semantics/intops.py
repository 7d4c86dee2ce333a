"""Lanewise integer, bitwise and FP32-field instructions of the vector unit.

SFPIADD, SFPSHFT, SFPAND, SFPOR, SFPXOR, SFPNOT, SFPABS, SFPLZ, SFPEXEXP, SFPEXMAN,
SFPSETEXP, SFPSETMAN, SFPSETSGN, SFPDIVP2 — spec tensix-sfpu.md §11.2 and §11.3 with
errata E6 (flags only change in enabled lanes) and E21 (the "complement" bit is
applied after, and independently of, the "set" bit).  SFPSHFT2 lives in
``crosslane.py``.

Every function works on whole (32,) uint32 rows of ``sfpu.lreg``: the result is
computed for all lanes and copied into the destination where EN(L) holds
(:mod:`tessera_tensix.lanes`).  When every lane is enabled (no predication, no
LaneConfig bit) the last ufunc writes straight into the destination row (``out=``),
so a typical instruction costs one or two numpy calls.  Flag side effects (SFPIADD,
SFPLZ, SFPEXEXP) happen only when the VD field is < 8 (not 8..15, not 16).

Wormhole deltas modelled here: SFPAND/SFPOR have no VB/Mod1 (always VD & VC),
SFPSHFT has only ARG_IMM (no ARITHMETIC, no ARG_IMM_USE_VC).

The functions whose functional model reads "VD" through ``unsigned VB = VD;`` (SFPIADD,
SFPSHFT, SFPXOR, SFPSETEXP, SFPSETMAN, SFPSETSGN, Wormhole's SFPAND/SFPOR) read
``ins.__dict__.get(MACRO_VB, vd)``: SFPLOADMACRO's scheduled copies set another VB
(:mod:`tessera_tensix.semantics.loadmacro`); a normally issued instruction reads VD.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from tessera_tensix import lanes
from tessera_tensix.lanes import MACRO_VB
from tessera_tensix.semantics import op

U32 = np.uint32
I32 = np.int32
_SIGN = U32(0x8000_0000)
_NOSIGN = U32(0x7FFF_FFFF)
_EXP = U32(0x7F80_0000)
_NOEXP = U32(0x807F_FFFF)
_MAN = U32(0x007F_FFFF)
_NOMAN = U32(0xFF80_0000)
_HIDDEN = U32(0x0080_0000)
_0 = U32(0)
_31 = U32(31)
_23 = U32(23)
_FF = U32(0xFF)
_127 = U32(127)
_I0 = I32(0)
_enabled = lanes.enabled_or_none
_same = np.positive                                       # identity ufunc (takes out=)
_guard = lanes.guard_vd


def sext12(v: int) -> int:
    v &= 0xFFF
    return v - 0x1000 if v & 0x800 else v


def _is_wormhole(thread: Any) -> bool:
    arch = getattr(thread, "arch", None)
    return getattr(arch, "name", "") == "tensix-wh"


def apply(sfpu: Any, vd: int, w: bool | None, en: np.ndarray | None,
          fn: Callable[..., np.ndarray], *args: Any) -> np.ndarray:
    """Result row ``fn(*args)`` (every lane), written to LReg[vd] in the EN lanes when ``w``.

    With every lane enabled the ufunc writes into the destination directly.  The
    returned row holds the computed value in all lanes either way.
    """
    if en is None and w:
        return fn(*args, out=sfpu.lreg[vd])
    r = fn(*args)
    if w:
        np.copyto(sfpu.lreg[vd], r, where=en)
    return r


def put_flags(sfpu: Any, value: np.ndarray, en: np.ndarray | None) -> None:
    """LaneFlags = value in the EN lanes (every lane when ``en`` is None)."""
    if en is None:
        sfpu.lane_flags[:] = value
    else:
        np.copyto(sfpu.lane_flags, value, where=en)


def _flag_update(sfpu: Any, en: np.ndarray | None, set_value: np.ndarray | None,
                 complement: bool) -> None:
    """E21: the set part (if any) then, independently, the complement part."""
    if set_value is None:
        if not complement:
            return
        value = ~sfpu.lane_flags
    else:
        value = ~set_value if complement else set_value
    put_flags(sfpu, value, en)


# ---------------------------------------------------------------- SFPIADD (§11.2)
@op("SFPIADD")
def sfpiadd(thread: Any, ins: Any) -> None:
    vd, vc, mod1 = ins.lreg_dest, ins.lreg_c, ins.instr_mod1
    w = True if vd < 8 else _guard(thread, ins, vd)
    if w is None:
        return
    sfpu = thread.core.sfpu
    lreg = sfpu.lreg
    en = _enabled(sfpu)
    if mod1 & 1:                                          # ARG_IMM: VC + sext(Imm12)
        r = apply(sfpu, vd, w, en, np.add, lreg[vc], U32(sext12(ins.imm12_math) & 0xFFFF_FFFF))
    elif mod1 & 2:                                        # ARG_2SCOMP_LREG_DST: VC - VB (VB = VD)
        r = apply(sfpu, vd, w, en, np.subtract, lreg[vc], lreg[ins.__dict__.get(MACRO_VB, vd)])
    else:                                                 # VC + VB
        r = apply(sfpu, vd, w, en, np.add, lreg[vc], lreg[ins.__dict__.get(MACRO_VB, vd)])
    if vd < 8:
        # CC_NONE (bit 2) keeps the flag, otherwise flag = result < 0; CC_GTE0 (bit 3)
        # then inverts whatever the flag is (E21)
        _flag_update(sfpu, en, None if mod1 & 4 else np.less(r.view(I32), _I0), bool(mod1 & 8))


# ---------------------------------------------------------------- SFPSHFT (§11.3)
@op("SFPSHFT")
def sfpshft(thread: Any, ins: Any) -> None:
    vd, vc, mod1 = ins.lreg_dest, ins.lreg_c, ins.instr_mod1
    w = True if vd < 8 else _guard(thread, ins, vd)
    if w is None:
        return
    sfpu = thread.core.sfpu
    lreg = sfpu.lreg
    en = _enabled(sfpu)
    if _is_wormhole(thread):
        mod1 &= 1
    x = lreg[ins.__dict__.get(MACRO_VB, vd)]             # VB = VD
    if mod1 & 1:                                          # ARG_IMM
        if mod1 & 4:                                      # ARG_IMM_USE_VC: shift VC instead
            x = lreg[vc]
        amount = sext12(ins.imm12_math)
        if amount >= 0:
            apply(sfpu, vd, w, en, np.left_shift, x, U32(amount & 31))
        elif mod1 & 2:                                    # ARITHMETIC
            r = np.right_shift(x.view(I32), I32((-amount) & 31)).view(U32)
            apply(sfpu, vd, w, en, _same, r)
        else:
            apply(sfpu, vd, w, en, np.right_shift, x, U32((-amount) & 31))
    else:
        r = shift_by_lanes(x, lreg[vc], arithmetic=bool(mod1 & 2))
        apply(sfpu, vd, w, en, _same, r)


def shift_by_lanes(x: np.ndarray, amount: np.ndarray, *, arithmetic: bool = False) -> np.ndarray:
    """x << (s & 31) where s = amount as int32 ≥ 0, else x >> ((-s) & 31) (lanewise)."""
    neg = np.less(amount.view(I32), _I0)
    left = np.left_shift(x, amount & _31)
    right_by = np.subtract(_0, amount) & _31              # (-s) & 31 in uint32 arithmetic
    if arithmetic:
        right = np.right_shift(x.view(I32), right_by.view(I32)).view(U32)
    else:
        right = np.right_shift(x, right_by)
    return np.where(neg, right, left)


# ---------------------------------------------------------------- bitwise (§11.3)
@op("SFPAND")
def sfpand(thread: Any, ins: Any) -> None:
    _bitwise(thread, ins, np.bitwise_and)


@op("SFPOR")
def sfpor(thread: Any, ins: Any) -> None:
    _bitwise(thread, ins, np.bitwise_or)


def _bitwise(thread: Any, ins: Any, fn: Any) -> None:
    vd, vc, mod1 = ins.lreg_dest, ins.lreg_c, ins.instr_mod1
    w = True if vd < 8 else _guard(thread, ins, vd)
    if w is None:
        return
    sfpu = thread.core.sfpu
    if _is_wormhole(thread):                              # VB = VD (no USE_VB on Wormhole)
        vb = ins.__dict__.get(MACRO_VB, vd)
    else:                                                 # USE_VB ? VB : VD
        vb = ins.lreg_src_b if mod1 & 1 else vd
    apply(sfpu, vd, w, _enabled(sfpu), fn, sfpu.lreg[vb], sfpu.lreg[vc])


@op("SFPXOR")
def sfpxor(thread: Any, ins: Any) -> None:
    vd, vc = ins.lreg_dest, ins.lreg_c
    w = True if vd < 8 else _guard(thread, ins, vd)
    if w is None:
        return
    sfpu = thread.core.sfpu
    apply(sfpu, vd, w, _enabled(sfpu), np.bitwise_xor, sfpu.lreg[ins.__dict__.get(MACRO_VB, vd)],
          sfpu.lreg[vc])


@op("SFPNOT")
def sfpnot(thread: Any, ins: Any) -> None:
    vd, vc = ins.lreg_dest, ins.lreg_c
    w = True if vd < 8 else _guard(thread, ins, vd)
    if w is None:
        return
    sfpu = thread.core.sfpu
    apply(sfpu, vd, w, _enabled(sfpu), np.invert, sfpu.lreg[vc])


# ---------------------------------------------------------------- SFPABS (§11.3)
@op("SFPABS")
def sfpabs(thread: Any, ins: Any) -> None:
    vd, vc, mod1 = ins.lreg_dest, ins.lreg_c, ins.instr_mod1
    w = True if vd < 8 else _guard(thread, ins, vd)
    if w is None:
        return
    sfpu = thread.core.sfpu
    x = sfpu.lreg[vc]
    if mod1 & 1:                                          # FLOAT: clear the sign, -NaN kept
        r = np.where(x > _NOMAN, x, x & _NOSIGN)          # x > 0xFF800000: a negative NaN
    else:                                                 # INT: two's complement |x|
        r = np.where(x.view(I32) < _I0, _0 - x, x)        # 0x80000000 stays
    apply(sfpu, vd, w, _enabled(sfpu), _same, r)


# ---------------------------------------------------------------- SFPLZ (§11.2)
@op("SFPLZ")
def sfplz(thread: Any, ins: Any) -> None:
    vd, vc, mod1 = ins.lreg_dest, ins.lreg_c, ins.instr_mod1
    w = True if vd < 8 else _guard(thread, ins, vd)
    if w is None:
        return
    sfpu = thread.core.sfpu
    c = sfpu.lreg[vc]
    if mod1 & 4:                                          # NOSGN_MASK
        c = c & _NOSIGN
    en = _enabled(sfpu)
    nonzero = np.not_equal(c, _0) if vd < 8 and mod1 & 2 else None   # before VD (maybe = VC) changes
    apply(sfpu, vd, w, en, _same, clz32(c))
    if vd < 8:
        _flag_update(sfpu, en, nonzero, bool(mod1 & 8))   # CC_NE0, then CC_COMP (E21)


def clz32(c: np.ndarray) -> np.ndarray:
    """Count of leading zero bits of uint32 lanes (32 for 0), as uint32."""
    _mant, exp = np.frexp(c.astype(np.float64))           # exact: c < 2**53; exp = bit length
    return (32 - exp).astype(U32)


# ---------------------------------------------------------------- SFPEXEXP / SFPEXMAN (§11.2/3)
@op("SFPEXEXP")
def sfpexexp(thread: Any, ins: Any) -> None:
    vd, vc, mod1 = ins.lreg_dest, ins.lreg_c, ins.instr_mod1
    w = True if vd < 8 else _guard(thread, ins, vd)
    if w is None:
        return
    sfpu = thread.core.sfpu
    en = _enabled(sfpu)
    e = (sfpu.lreg[vc] >> _23) & _FF
    if mod1 & 1:                                          # NODEBIAS
        r = apply(sfpu, vd, w, en, _same, e)
    else:                                                 # two's complement e - 127
        r = apply(sfpu, vd, w, en, np.subtract, e, _127)
    if vd < 8:                                            # SET_CC_SGN_EXP, then SET_CC_COMP_EXP
        _flag_update(sfpu, en, np.less(r.view(I32), _I0) if mod1 & 2 else None, bool(mod1 & 8))


@op("SFPEXMAN")
def sfpexman(thread: Any, ins: Any) -> None:
    vd, vc, mod1 = ins.lreg_dest, ins.lreg_c, ins.instr_mod1
    w = True if vd < 8 else _guard(thread, ins, vd)
    if w is None:
        return
    sfpu = thread.core.sfpu
    en = _enabled(sfpu)
    if mod1 & 1:                                          # PAD9: the bare 23-bit field
        apply(sfpu, vd, w, en, np.bitwise_and, sfpu.lreg[vc], _MAN)
    else:                                                 # PAD8: with the hidden bit
        apply(sfpu, vd, w, en, np.bitwise_or, sfpu.lreg[vc] & _MAN, _HIDDEN)


# ---------------------------------------------------------------- SFPSETEXP/MAN/SGN (§11.3)
@op("SFPSETEXP")
def sfpsetexp(thread: Any, ins: Any) -> None:
    vd, vc, mod1 = ins.lreg_dest, ins.lreg_c, ins.instr_mod1
    w = True if vd < 8 else _guard(thread, ins, vd)
    if w is None:
        return
    sfpu = thread.core.sfpu
    lreg = sfpu.lreg
    en = _enabled(sfpu)
    if mod1 & 1:                                          # ARG_IMM: Imm8 = insn[19:12]
        exp = U32(ins.imm12_math_19_12 << 23)
    elif mod1 & 2:                                        # ARG_EXPONENT: VB's exponent field (VB = VD)
        exp = lreg[ins.__dict__.get(MACRO_VB, vd)] & _EXP
    else:                                                 # VB[7:0]
        exp = (lreg[ins.__dict__.get(MACRO_VB, vd)] & _FF) << _23
    apply(sfpu, vd, w, en, np.bitwise_or, lreg[vc] & _NOEXP, exp)


@op("SFPSETMAN")
def sfpsetman(thread: Any, ins: Any) -> None:
    vd, vc, mod1 = ins.lreg_dest, ins.lreg_c, ins.instr_mod1
    w = True if vd < 8 else _guard(thread, ins, vd)
    if w is None:
        return
    sfpu = thread.core.sfpu
    lreg = sfpu.lreg
    en = _enabled(sfpu)
    if mod1 & 1:                                          # ARG_IMM: Imm12 << 11
        man = U32(ins.imm12_math << 11)
    else:                                                 # VB's mantissa (VB = VD)
        man = lreg[ins.__dict__.get(MACRO_VB, vd)] & _MAN
    apply(sfpu, vd, w, en, np.bitwise_or, lreg[vc] & _NOMAN, man)


@op("SFPSETSGN")
def sfpsetsgn(thread: Any, ins: Any) -> None:
    vd, vc, mod1 = ins.lreg_dest, ins.lreg_c, ins.instr_mod1
    w = True if vd < 8 else _guard(thread, ins, vd)
    if w is None:
        return
    sfpu = thread.core.sfpu
    lreg = sfpu.lreg
    en = _enabled(sfpu)
    if mod1 & 1:                                          # ARG_IMM: Imm1 = insn[12]
        if ins.imm12_math_12_12:
            apply(sfpu, vd, w, en, np.bitwise_or, lreg[vc], _SIGN)
        else:
            apply(sfpu, vd, w, en, np.bitwise_and, lreg[vc], _NOSIGN)
    else:
        apply(sfpu, vd, w, en, np.bitwise_or, lreg[vc] & _NOSIGN,
              lreg[ins.__dict__.get(MACRO_VB, vd)] & _SIGN)


# ---------------------------------------------------------------- SFPDIVP2 (§11.3)
@op("SFPDIVP2")
def sfpdivp2(thread: Any, ins: Any) -> None:
    vd, vc, mod1 = ins.lreg_dest, ins.lreg_c, ins.instr_mod1
    w = True if vd < 8 else _guard(thread, ins, vd)
    if w is None:
        return
    sfpu = thread.core.sfpu
    x = sfpu.lreg[vc]
    imm8 = ins.imm12_math & 0xFF                          # Imm12[7:0]; [11:8] ignored
    en = _enabled(sfpu)
    if mod1 & 1:                                          # ADD: wrapping, Inf/NaN unchanged
        shifted = U32(imm8 << 23)                         # adding imm8 << 23 wraps the exponent
        r = np.where((x & _EXP) == _EXP, x, ((x + shifted) & _EXP) | (x & _NOEXP))
        apply(sfpu, vd, w, en, _same, r)
    else:                                                 # replace the exponent
        apply(sfpu, vd, w, en, np.bitwise_or, x & _NOEXP, U32(imm8 << 23))
