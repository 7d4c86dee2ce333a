"""Vector-unit predication: SFPSETCC, SFPENCC, SFPPUSHC, SFPPOPC, SFPCOMPC, SFPGT, SFPLE.

Spec tensix-sfpu.md §2.4 (state), §3.2–§3.4 (lane enable, backdoor), §11.2 (SFPSETCC),
§13 (SFPGT/SFPLE), §15 (stack instructions) with errata E6, E7, E8.

State (``thread.core.sfpu``): ``lane_flags`` and ``use_lane_flags`` are (32,) bool
arrays updated in place; ``flag_stack`` is a list of ``(flags, use)`` array pairs,
bottom first.  The stack instructions act on every lane (no EN(L) test), so the
stack depth is the same in all lanes and one Python list models the 32 per-lane
stacks.  Entries are private copies: the top entry may be mutated in place.

Undefined cases (the hardware's ``UndefinedBehaviour()``) stop the run through
:func:`tessera_tensix.rules.broken`; with ``--set lenient=true`` they continue as:

* SFPPUSHC Mod1 = 0 with 8 entries: the bottom (oldest) entry is discarded and the
  new one pushed — the stack behaves as an 8-deep shift register, so the innermost
  8 levels of a too-deep nest still restore correctly;
* SFPPUSHC Mod1 ≠ 0 on an empty stack: there is no top to replace or mutate, so
  only the current-state part happens (Mod1 = 13 still inverts LaneFlags);
* SFPPOPC Mod1 = 0 on an empty stack: nothing is popped; LaneFlags and
  UseLaneFlagsForLaneEnable take the empty-stack peek value {false, false}.

Defined empty-stack cases are not errors: SFPPOPC Mod1 1..15 peeks {false, false},
SFPCOMPC peeks {true, true}, SFPGT/SFPLE MUTATE_STACK does nothing (E8, §13.1).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from tessera_tensix import lanes, rules
from tessera_tensix.semantics import op

STACK_DEPTH = 8
_MASK31 = np.uint32(0x7FFF_FFFF)
_SHIFT31 = np.int32(31)
_TRUE = np.ones(lanes.LANES, dtype=bool)
_TRUE.setflags(write=False)
_FALSE = np.zeros(lanes.LANES, dtype=bool)
_FALSE.setflags(write=False)
_ZERO_I32 = np.zeros(lanes.LANES, dtype=np.int32)
_ZERO_I32.setflags(write=False)
_NO_LANES = bytes(lanes.LANES)
_ALL_LANES = bytes([1]) * lanes.LANES


# ---------------------------------------------------------------- shared helpers
def boolean_op(k: int, a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """BooleanOp(k, A, B) of §15 for k = 1..12, lanewise on bool arrays (a new array)."""
    if k == 1:
        return b.copy()
    if k == 2:
        return ~b
    if k == 3:
        return a & b
    if k == 4:
        return a | b
    if k == 5:
        return a & ~b
    if k == 6:
        return a | ~b
    if k == 7:
        return ~a & b
    if k == 8:
        return ~a | b
    if k == 9:
        return ~(a | b)
    if k == 10:
        return ~(a & b)
    if k == 11:
        return a ^ b
    if k == 12:
        return ~(a ^ b)
    raise ValueError(f"BooleanOp {k} is not defined (1..12)")


def set_flags(sfpu: Any, value: np.ndarray, en: np.ndarray) -> None:
    """LaneFlags[L] = value[L] for the lanes where ``en`` (in place)."""
    np.copyto(sfpu.lane_flags, value, where=en)


def sign_mag_key(v: np.ndarray) -> np.ndarray:
    """Sort key of §13: sign-magnitude (or FP32 total order) → comparable int32."""
    s = v.view(np.int32)
    return s ^ ((s >> _SHIFT31) & np.int32(0x7FFF_FFFF))


# ---------------------------------------------------------------- SFPSETCC (§11.2)
@op("SFPSETCC")
def sfpsetcc(thread: Any, ins: Any) -> None:
    vd, vc, mod1 = ins.lreg_dest, ins.lreg_c, ins.instr_mod1
    if vd >= 12 and lanes.guard_vd(thread, ins, vd, source=True) is None:
        return
    sfpu = thread.core.sfpu
    use = sfpu.use_lane_flags
    configured = lanes.configured(sfpu)
    if not configured and use.tobytes() == _NO_LANES:
        sfpu.lane_flags[:] = False                 # predication off: SFPSETCC clears every flag
        return
    if mod1 & 8:                                   # CLEAR
        value = _FALSE
    elif mod1 & 1:                                 # IMM_BIT0
        value = _TRUE if ins.imm12_math_12_12 else _FALSE
    else:
        c = sfpu.lreg[vc].view(np.int32)
        kind = mod1 & 6
        if kind == 0:
            value = c < _ZERO_I32                  # LREG_LT0 (sign bit: -0.0 and -NaN count)
        elif kind == 2:
            value = c != _ZERO_I32                 # LREG_NE0
        elif kind == 4:
            value = c >= _ZERO_I32                 # LREG_GTE0
        else:
            value = c == _ZERO_I32                 # LREG_EQ0
    if not configured and use.tobytes() == _ALL_LANES:
        # the usual SIMT case: EN = LaneFlags, so the enabled lanes keep flag AND value
        np.logical_and(sfpu.lane_flags, value, out=sfpu.lane_flags)
        return
    # with predication off (UseLF false) SFPSETCC clears the lane's flag
    set_flags(sfpu, value & use, lanes.enabled(sfpu))


# ---------------------------------------------------------------- SFPENCC (§15, E7)
@op("SFPENCC")
def sfpencc(thread: Any, ins: Any) -> None:
    mod1 = ins.instr_mod1
    if lanes.guard_vd(thread, ins, ins.lreg_dest, source=True) is None:
        return
    sfpu = thread.core.sfpu
    imm2 = ins.imm12_math_13_12
    if mod1 & 2:                                   # EI: UseLF = Imm2 bit0
        sfpu.use_lane_flags[:] = bool(imm2 & 1)
    elif mod1 & 1:                                 # EC: UseLF = not UseLF
        np.logical_not(sfpu.use_lane_flags, out=sfpu.use_lane_flags)
    # RI: LaneFlags = Imm2 bit1, else true — every lane, EN(L) ignored
    sfpu.lane_flags[:] = bool(imm2 & 2) if mod1 & 8 else True


# ---------------------------------------------------------------- SFPPUSHC (§15)
@op("SFPPUSHC")
def sfppushc(thread: Any, ins: Any) -> None:
    mod1 = ins.instr_mod1
    if lanes.guard_vd(thread, ins, ins.lreg_dest, source=True) is None:
        return
    sfpu = thread.core.sfpu
    stack = sfpu.flag_stack
    if mod1 and _is_wormhole(thread):
        rules.broken(thread, ins, f"Mod1={mod1} is not defined on Wormhole (only 0, push)")
        return
    if mod1 == 0:
        if len(stack) >= STACK_DEPTH:
            rules.broken(thread, ins, f"flag stack overflow: push with {len(stack)} entries "
                                      f"already (capacity {STACK_DEPTH})")
            del stack[0]                           # lenient: the oldest entry falls off
        stack.append((sfpu.lane_flags.copy(), sfpu.use_lane_flags.copy()))
        return
    if not stack:
        rules.broken(thread, ins, f"Mod1={mod1} replaces or mutates the top of an empty flag "
                                  "stack")
        if mod1 == 13:                             # lenient: the current-state part only
            np.logical_not(sfpu.lane_flags, out=sfpu.lane_flags)
        return
    top_flags, top_use = stack[-1]
    if mod1 <= 12:
        top_use[:] = sfpu.use_lane_flags
        top_flags[:] = boolean_op(mod1, top_flags, sfpu.lane_flags)   # A = top, B = current
    elif mod1 == 13:
        np.logical_not(sfpu.lane_flags, out=sfpu.lane_flags)
        top_use[:] = sfpu.use_lane_flags
        top_flags[:] = sfpu.lane_flags
    elif mod1 == 14:
        top_use[:] = True
        top_flags[:] = True
    else:                                          # 15
        top_use[:] = True
        top_flags[:] = False


# ---------------------------------------------------------------- SFPPOPC (§15, E8)
@op("SFPPOPC")
def sfppopc(thread: Any, ins: Any) -> None:
    mod1 = ins.instr_mod1
    if lanes.guard_vd(thread, ins, ins.lreg_dest, source=True) is None:
        return
    sfpu = thread.core.sfpu
    stack = sfpu.flag_stack
    if stack:
        top_flags, top_use = stack[-1]
    else:
        top_flags, top_use = _FALSE, _FALSE        # peek of an empty stack: {false, false}
    if mod1 == 0:
        if not stack:
            rules.broken(thread, ins, "flag stack underflow: pop of an empty flag stack")
        else:
            stack.pop()
        sfpu.use_lane_flags[:] = top_use
        sfpu.lane_flags[:] = top_flags
    elif mod1 <= 12:
        sfpu.use_lane_flags[:] = top_use
        sfpu.lane_flags[:] = boolean_op(mod1, sfpu.lane_flags, top_flags)  # A = current, B = top
    elif mod1 == 13:
        np.logical_not(sfpu.lane_flags, out=sfpu.lane_flags)
    elif mod1 == 14:
        sfpu.use_lane_flags[:] = True
        sfpu.lane_flags[:] = True
    else:                                          # 15
        sfpu.use_lane_flags[:] = True
        sfpu.lane_flags[:] = False


# ---------------------------------------------------------------- SFPCOMPC (§15)
@op("SFPCOMPC")
def sfpcompc(thread: Any, ins: Any) -> None:
    if lanes.guard_vd(thread, ins, ins.lreg_dest, source=True) is None:
        return
    sfpu = thread.core.sfpu
    flags, use = sfpu.lane_flags, sfpu.use_lane_flags
    if sfpu.flag_stack:
        top_flags, top_use = sfpu.flag_stack[-1]
        if use.tobytes() == _ALL_LANES and top_use.tobytes() == _ALL_LANES:
            np.greater(top_flags, flags, out=flags)        # top AND NOT flags (the usual else)
        else:
            np.greater(top_use & use & top_flags, flags, out=flags)
    else:                                          # empty stack peeks {true, true}
        np.greater(use, flags, out=flags)


# ---------------------------------------------------------------- SFPGT / SFPLE (§13.1)
def _compare(thread: Any, ins: Any, greater: bool) -> None:
    vd, vc, mod1 = ins.lreg_dest, ins.lreg_c, ins.instr_mod1
    set_vd = bool(mod1 & 8)
    w = lanes.guard_vd(thread, ins, vd, source=not set_vd)
    if w is None:
        return
    sfpu = thread.core.sfpu
    # VB = VD in the model; SFPLOADMACRO's scheduled copy names another VB (lanes.MACRO_VB)
    key = sign_mag_key(sfpu.lreg.take((vc, ins.__dict__.get(lanes.MACRO_VB, vd)), axis=0))
    if greater:
        t = np.less(key[0], key[1])                         # VC < VD, i.e. VD > VC
    else:
        t = np.greater_equal(key[0], key[1])                # SFPLE: VD <= VC
    if mod1 & 9:
        en = lanes.enabled_or_none(sfpu)
        if set_vd and w:
            ones = np.negative(t, dtype=np.uint32)          # true → 0xFFFFFFFF, false → 0
            if en is None:
                sfpu.lreg[vd] = ones
            else:
                np.copyto(sfpu.lreg[vd], ones, where=en)
        if mod1 & 1:                                        # SET_CC (enabled lanes)
            if en is None:
                sfpu.lane_flags[:] = t
            else:
                set_flags(sfpu, t, en)
    if mod1 & 2 and sfpu.flag_stack:                        # MUTATE_STACK (all lanes)
        top_flags = sfpu.flag_stack[-1][0]
        if mod1 & 4:
            np.logical_or(top_flags, t, out=top_flags)
        else:
            np.logical_and(top_flags, t, out=top_flags)


@op("SFPGT")
def sfpgt(thread: Any, ins: Any) -> None:
    _compare(thread, ins, True)


@op("SFPLE")
def sfple(thread: Any, ins: Any) -> None:
    _compare(thread, ins, False)


def _is_wormhole(thread: Any) -> bool:
    arch = getattr(thread, "arch", None)
    return getattr(arch, "name", "") == "tensix-wh"
