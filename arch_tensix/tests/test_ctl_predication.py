"""Predication: SFPSETCC, SFPENCC, SFPPUSHC/POPC/COMPC, SFPGT/SFPLE (spec §11.2, §13.1, §15)."""

from __future__ import annotations

import pytest
from tensix_ctl_support import (
    M32,
    SFPCOMPC,
    SFPENCC,
    SFPGT,
    SFPIADD,
    SFPLE,
    SFPNOT,
    SFPPOPC,
    SFPPUSHC,
    SFPSETCC,
    SFPXOR,
    RefSfpu,
    Thread,
    enable_predication,
    execute,
    flags,
    lreg,
    run,
    set_lreg,
)

from tessera.control import Trap

LANE = list(range(32))


def state(t):
    return flags(t), [bool(x) for x in t.sfpu.use_lane_flags], len(t.sfpu.flag_stack)


# ---------------------------------------------------------------- SFPSETCC
@pytest.mark.parametrize("mod1, want", [
    (0, lambda c: c >= 0x8000_0000),                       # LT0: sign bit (incl. -0.0, -NaN)
    (2, lambda c: c != 0),                                 # NE0 (-0.0 is non-zero)
    (4, lambda c: c < 0x8000_0000),                        # GTE0
    (6, lambda c: c == 0),                                 # EQ0
])
def test_setcc_comparisons(mod1, want):
    vals = [0, 1, 0x8000_0000, 0xFFFF_FFFF, 0x7FFF_FFFF, 0xFFC0_0000, 0x3F80_0000, 0x8000_0001] * 4
    t = Thread()
    set_lreg(t, 1, vals)
    enable_predication(t)
    execute(t, SFPSETCC(0, 1, 0, mod1))
    assert flags(t) == [want(v) for v in vals]


def test_setcc_immediate_and_clear():
    t = Thread()
    enable_predication(t)
    execute(t, SFPSETCC(0, 0, 0, 1))                       # IMM_BIT0 with Imm1 = 0
    assert flags(t) == [False] * 32
    # every lane is now disabled, so nothing can set the flags again ...
    execute(t, SFPSETCC(1, 0, 0, 1))
    assert flags(t) == [False] * 32
    execute(t, SFPENCC(3, 0, 10))                          # ... until SFPENCC (ignores EN)
    assert flags(t) == [True] * 32
    execute(t, SFPSETCC(1, 0, 0, 1 | 8))                   # CLEAR wins over IMM_BIT0
    assert flags(t) == [False] * 32


def test_setcc_with_predication_off_clears_flags():
    t = Thread(lane_flags_reset=True)
    assert flags(t) == [True] * 32
    set_lreg(t, 1, [0xFFFF_FFFF] * 32)
    execute(t, SFPSETCC(0, 1, 0, 0))                       # would be true, but UseLF is false
    assert flags(t) == [False] * 32


def test_setcc_only_changes_enabled_lanes_e6():
    t = Thread()
    set_lreg(t, 1, [L for L in LANE])
    enable_predication(t)
    execute(t, SFPSETCC(0, 1, 0, 2))                       # lane 0 (value 0) disabled now
    assert flags(t) == [L != 0 for L in LANE]
    execute(t, SFPSETCC(0, 1, 0, 6))                       # EQ0: true nowhere in enabled lanes
    assert flags(t) == [False] * 32


def test_setcc_row_mask_disables_rows():
    t = Thread()
    enable_predication(t)
    t.sfpu.lane_config[:] = 1 << (12 + 2)                  # ROW_MASK bit 2: row 2 off
    execute(t, SFPSETCC(0, 0, 0, 1))                       # Imm1 = 0
    assert flags(t) == [16 <= L < 24 for L in LANE]


# ---------------------------------------------------------------- SFPENCC
@pytest.mark.parametrize("mod1, imm2, use0, want_use, want_flags", [
    (0, 3, False, False, True),      # EU_R1
    (1, 3, False, True, True),       # EC_R1: toggle
    (1, 0, True, False, True),
    (2, 1, False, True, True),       # EI_R1
    (2, 2, True, False, True),
    (8, 0, True, True, False),       # EU_RI
    (8, 2, False, False, True),
    (9, 0, False, True, False),      # EC_RI
    (10, 3, False, True, True),      # EI_RI
    (10, 1, False, True, False),
])
def test_encc_table(mod1, imm2, use0, want_use, want_flags):
    t = Thread()
    t.sfpu.use_lane_flags[:] = use0
    t.sfpu.lane_flags[:] = [L % 2 == 0 for L in LANE]
    execute(t, SFPENCC(imm2, 0, mod1))
    assert state(t)[1] == [want_use] * 32
    assert flags(t) == [want_flags] * 32


def test_encc_acts_on_disabled_lanes_e7():
    t = Thread()
    enable_predication(t)
    t.sfpu.lane_flags[:] = False                           # all lanes disabled
    execute(t, SFPENCC(2, 0, 8))                           # LaneFlags = Imm2 bit1 = true
    assert flags(t) == [True] * 32


# ---------------------------------------------------------------- stack
def test_push_pop_restores_state():
    t = Thread()
    enable_predication(t)
    t.sfpu.lane_flags[:] = [L % 3 == 0 for L in LANE]
    before = state(t)
    execute(t, SFPPUSHC())
    execute(t, SFPENCC(0, 0, 10))                          # UseLF = 0, flags = 0
    assert state(t)[1] == [False] * 32
    execute(t, SFPPOPC())
    assert state(t) == before


def test_push_copies_entries():
    t = Thread()
    enable_predication(t)
    execute(t, SFPPUSHC())
    t.sfpu.lane_flags[:] = False
    assert [bool(x) for x in t.sfpu.flag_stack[-1][0]] == [True] * 32


@pytest.mark.parametrize("k", range(1, 13))
def test_pushc_and_popc_boolean_ops_use_opposite_operands(k):
    a = [bool(L & 1) for L in LANE]                        # stack top flags
    b = [bool(L & 2) for L in LANE]                        # current flags
    table = {1: lambda A, B: B, 2: lambda A, B: not B, 3: lambda A, B: A and B,
             4: lambda A, B: A or B, 5: lambda A, B: A and not B, 6: lambda A, B: A or not B,
             7: lambda A, B: (not A) and B, 8: lambda A, B: (not A) or B,
             9: lambda A, B: not A and not B, 10: lambda A, B: not A or not B,
             11: lambda A, B: A != B, 12: lambda A, B: A == B}[k]
    # SFPPUSHC: top = op(A = top, B = current); top.UseLF = current UseLF
    t = Thread()
    t.sfpu.lane_flags[:] = a
    execute(t, SFPPUSHC())
    t.sfpu.lane_flags[:] = b
    t.sfpu.use_lane_flags[:] = True
    execute(t, SFPPUSHC(0, k))
    top_flags, top_use = t.sfpu.flag_stack[-1]
    assert [bool(x) for x in top_flags] == [table(a[L], b[L]) for L in LANE]
    assert [bool(x) for x in top_use] == [True] * 32
    assert flags(t) == b and len(t.sfpu.flag_stack) == 1
    # SFPPOPC: current = op(A = current, B = top) (E8), nothing popped
    t = Thread()
    t.sfpu.lane_flags[:] = a
    t.sfpu.use_lane_flags[:] = True
    execute(t, SFPPUSHC())
    t.sfpu.lane_flags[:] = b
    t.sfpu.use_lane_flags[:] = False
    execute(t, SFPPOPC(0, k))
    assert flags(t) == [table(b[L], a[L]) for L in LANE]
    assert state(t)[1:] == ([True] * 32, 1)


def test_pushc_special_modes():
    t = Thread()
    enable_predication(t)
    t.sfpu.lane_flags[:] = [L < 4 for L in LANE]
    execute(t, SFPPUSHC())
    execute(t, SFPPUSHC(0, 13))                            # invert flags, then top = current
    assert flags(t) == [L >= 4 for L in LANE]
    assert [bool(x) for x in t.sfpu.flag_stack[-1][0]] == [L >= 4 for L in LANE]
    execute(t, SFPPUSHC(0, 15))
    assert [bool(x) for x in t.sfpu.flag_stack[-1][0]] == [False] * 32
    assert [bool(x) for x in t.sfpu.flag_stack[-1][1]] == [True] * 32
    execute(t, SFPPUSHC(0, 14))
    assert [bool(x) for x in t.sfpu.flag_stack[-1][0]] == [True] * 32
    assert len(t.sfpu.flag_stack) == 1


def test_popc_special_modes_and_empty_peek():
    t = Thread()
    t.sfpu.lane_flags[:] = [L < 4 for L in LANE]
    execute(t, SFPPOPC(0, 13))
    assert flags(t) == [L >= 4 for L in LANE]
    execute(t, SFPPOPC(0, 14))
    assert state(t) == ([True] * 32, [True] * 32, 0)
    execute(t, SFPPOPC(0, 15))
    assert state(t) == ([False] * 32, [True] * 32, 0)
    t.sfpu.lane_flags[:] = True
    execute(t, SFPPOPC(0, 4))                              # empty peek {false,false}: A or B = A
    assert state(t) == ([True] * 32, [False] * 32, 0)


def test_compc_empty_stack_peeks_true():
    t = Thread()
    enable_predication(t)
    t.sfpu.lane_flags[:] = [L < 10 for L in LANE]
    execute(t, SFPCOMPC())
    assert flags(t) == [L >= 10 for L in LANE]
    t.sfpu.use_lane_flags[:] = False
    execute(t, SFPCOMPC())                                 # UseLF false: flags cleared
    assert flags(t) == [False] * 32


def test_push_overflow_stops():
    t = Thread()
    run(t, *[SFPPUSHC()] * 8)
    with pytest.raises(Trap, match=r"sfppushc: flag stack overflow") as info:
        execute(t, SFPPUSHC(), address=0x24)
    assert info.value.tval == SFPPUSHC()
    assert len(t.sfpu.flag_stack) == 8


def test_push_overflow_lenient_drops_oldest():
    t = Thread(lenient=True)
    for depth in range(9):
        t.sfpu.lane_flags[:] = [L == depth for L in LANE]
        execute(t, SFPPUSHC())
    assert len(t.sfpu.flag_stack) == 8
    bottom = [bool(x) for x in t.sfpu.flag_stack[0][0]]
    assert bottom == [L == 1 for L in LANE]                # entry 0 fell off
    for depth in reversed(range(1, 9)):
        execute(t, SFPPOPC())
        assert flags(t) == [L == depth for L in LANE]


def test_pop_underflow_stops_and_lenient_peeks_false():
    t = Thread()
    with pytest.raises(Trap, match=r"sfppopc: flag stack underflow"):
        execute(t, SFPPOPC())
    t = Thread(lenient=True)
    t.sfpu.lane_flags[:] = True
    t.sfpu.use_lane_flags[:] = True
    execute(t, SFPPOPC())
    assert state(t) == ([False] * 32, [False] * 32, 0)


def test_pushc_mutate_on_empty_stack_stops():
    t = Thread()
    with pytest.raises(Trap, match=r"sfppushc: Mod1=3 .*empty"):
        execute(t, SFPPUSHC(0, 3))
    t = Thread(lenient=True)
    t.sfpu.lane_flags[:] = [L < 3 for L in LANE]
    execute(t, SFPPUSHC(0, 13))                            # lenient: only the inversion
    assert flags(t) == [L >= 3 for L in LANE] and not t.sfpu.flag_stack


def test_wormhole_pushc_only_push():
    t = Thread(chip="wh")
    execute(t, SFPPUSHC())
    with pytest.raises(Trap, match="not defined on Wormhole"):
        execute(t, SFPPUSHC(0, 3))


def test_stack_instructions_backdoor():
    t = Thread()
    word = SFPPUSHC(12, 0)
    execute(t, word)                                       # VD 12: template 0, no push
    assert not t.sfpu.flag_stack
    assert [int(x) for x in t.sfpu.template[0]] == [word] * 32
    t.sfpu.lane_config[:] = 2                              # DISABLE_BACKDOOR_LOAD
    execute(t, word)
    assert len(t.sfpu.flag_stack) == 1


# ---------------------------------------------------------------- SFPGT / SFPLE
ORDER = [0xFFC0_0000, 0xFF80_0000, 0xBF80_0000, 0x8000_0001, 0x8000_0000, 0, 1, 0x3F80_0000,
         0x7F80_0000, 0x7FC0_0000]                         # -NaN < -Inf < -1 < ... < -0 < +0 < ... < +NaN


def _pairs():
    c, d = [], []
    for i in range(32):
        c.append(ORDER[i % len(ORDER)])
        d.append(ORDER[(i * 7 + 3) % len(ORDER)])
    return c, d


def test_gt_le_set_vd_and_cc_total_order():
    c, d = _pairs()
    for opcode, fn in ((SFPGT, lambda i: ORDER.index(d[i]) > ORDER.index(c[i])),
                       (SFPLE, lambda i: ORDER.index(d[i]) <= ORDER.index(c[i]))):
        t = Thread()
        set_lreg(t, 1, c)
        set_lreg(t, 2, d)
        enable_predication(t)
        execute(t, opcode(1, 2, 8 | 1))                    # SET_VD | SET_CC
        want = [fn(i) for i in LANE]
        assert lreg(t, 2) == [M32 if w else 0 for w in want]
        assert flags(t) == want


def test_gt_minus_zero_below_plus_zero():
    t = Thread()
    set_lreg(t, 1, [0x8000_0000] * 32)                     # VC = -0
    set_lreg(t, 2, [0] * 32)                               # VD = +0
    execute(t, SFPGT(1, 2, 8))
    assert lreg(t, 2) == [M32] * 32


def test_gt_mutate_stack_and_or_all_lanes():
    t = Thread()
    set_lreg(t, 1, [0] * 32)
    set_lreg(t, 2, [L - 16 for L in LANE])                 # VD > 0 for L > 16 (sign-magnitude!)
    enable_predication(t)
    execute(t, SFPPUSHC())                                 # top = all true
    t.sfpu.lane_flags[:] = False                           # every lane disabled: no effect on MUTATE
    execute(t, SFPGT(1, 2, 2))                             # top &= t
    gt = [0 < L - 16 < 0x8000_0000 for L in LANE]          # negative ints are huge sign-magnitude negatives
    assert [bool(x) for x in t.sfpu.flag_stack[-1][0]] == gt
    assert lreg(t, 2) == [(L - 16) & M32 for L in LANE]    # no SET_VD
    t.sfpu.flag_stack[-1][0][:] = [L == 0 for L in LANE]
    execute(t, SFPGT(1, 2, 2 | 4))                         # top |= t
    assert [bool(x) for x in t.sfpu.flag_stack[-1][0]] == [gt[L] or L == 0 for L in LANE]
    assert flags(t) == [False] * 32


def test_gt_mutate_empty_stack_is_harmless():
    t = Thread()
    execute(t, SFPGT(1, 2, 2))
    assert not t.sfpu.flag_stack


def test_le_set_vd_to_constant_register_stops_unless_lenient():
    t = Thread()
    with pytest.raises(Trap, match=r"read-only LReg\[10\]"):
        execute(t, SFPLE(1, 10, 8))
    set_lreg(t, 1, [0x4000_0000 if L < 5 else 0 for L in LANE])   # VC = 2.0 or 0
    execute(t, SFPLE(1, 10, 1))                            # no SET_VD: VD 10 (1.0) is only read
    assert flags(t) == [L < 5 for L in LANE]               # 1.0 <= VC


# ---------------------------------------------------------------- SIMT patterns
def _simt_if_else(t, cond_mod1, then_word, else_word):
    run(t, SFPENCC(3, 0, 10), SFPPUSHC(), SFPSETCC(0, 1, 0, cond_mod1), then_word,
        SFPCOMPC(), else_word, SFPPOPC())


def test_simt_if_else():
    t = Thread()
    x = [L - 16 for L in LANE]
    set_lreg(t, 1, x)
    set_lreg(t, 2, [0] * 32)
    # if (x < 0) r2 = x + 100 else r2 = x - 100
    _simt_if_else(t, 0, SFPIADD(100, 1, 2, 5), SFPIADD(-100 & 0xFFF, 1, 2, 5))
    assert lreg(t, 2) == [(v + 100 if v < 0 else v - 100) & M32 for v in x]
    assert flags(t) == [True] * 32 and not t.sfpu.flag_stack


def test_simt_nested_if_else():
    t = Thread()
    x = [L - 16 for L in LANE]
    set_lreg(t, 1, x)
    set_lreg(t, 3, [L & 1 for L in LANE])
    set_lreg(t, 2, [0] * 32)
    # if (x < 0) { if (odd) r2 = 1 else r2 = 2 } else { if (odd) r2 = 3 else r2 = 4 }
    inner = lambda a, b: [SFPPUSHC(), SFPSETCC(0, 3, 0, 2), SFPIADD(a, 9, 2, 5),  # noqa: E731
                          SFPCOMPC(), SFPIADD(b, 9, 2, 5), SFPPOPC()]
    run(t, SFPENCC(3, 0, 10), SFPPUSHC(), SFPSETCC(0, 1, 0, 0), *inner(1, 2),
        SFPCOMPC(), *inner(3, 4), SFPPOPC())
    want = [(1 if L & 1 else 2) if v < 0 else (3 if L & 1 else 4) for L, v in enumerate(x)]
    assert lreg(t, 2) == want
    assert flags(t) == [True] * 32 and not t.sfpu.flag_stack


def test_simt_and_condition_with_gt_mutate_stack():
    # if (a > 0 && b > 0) r = 1 : SETCC sets a>0, SFPGT mutates the pushed copy (AND)
    t = Thread()
    a = [L % 4 for L in LANE]
    b = [(L // 4) % 3 for L in LANE]
    set_lreg(t, 1, a)
    set_lreg(t, 2, b)
    set_lreg(t, 5, [0] * 32)
    run(t, SFPENCC(3, 0, 10), SFPPUSHC(), SFPSETCC(0, 1, 0, 2), SFPPUSHC(),
        SFPGT(9, 2, 2),                                     # top &= (b > 0)
        SFPPOPC(),                                          # flags = (a != 0) && (b > 0)
        SFPIADD(1, 9, 5, 5), SFPPOPC())
    assert lreg(t, 5) == [1 if a[L] and b[L] else 0 for L in LANE]


def test_simt_nested_matches_reference_model():
    t = Thread()
    set_lreg(t, 1, [(L * 37) % 11 - 5 for L in LANE])
    set_lreg(t, 2, [(L * 13) % 7 - 3 for L in LANE])
    prog = [SFPENCC(3, 0, 10), SFPPUSHC(), SFPSETCC(0, 1, 0, 0), SFPPUSHC(), SFPSETCC(0, 2, 0, 6),
            SFPNOT(1, 3), SFPCOMPC(), SFPXOR(2, 3), SFPPOPC(), SFPCOMPC(), SFPLE(2, 1, 8 | 1),
            SFPPOPC(0, 9), SFPIADD(7, 3, 4, 1), SFPPOPC()]
    ref = RefSfpu(t)
    for w in prog:
        ref.step(w)
        execute(t, w)
        assert ref.mismatches(t) == []
