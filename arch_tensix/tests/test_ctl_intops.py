"""Integer, bitwise and FP32-field SFPU instructions (spec tensix-sfpu.md §11.2, §11.3, E21)."""

from __future__ import annotations

import pytest
from tensix_ctl_support import (
    M32,
    SFPABS,
    SFPAND,
    SFPDIVP2,
    SFPENCC,
    SFPEXEXP,
    SFPEXMAN,
    SFPIADD,
    SFPLZ,
    SFPNOT,
    SFPOR,
    SFPSETCC,
    SFPSETEXP,
    SFPSETMAN,
    SFPSETSGN,
    SFPSHFT,
    SFPXOR,
    Thread,
    enable_predication,
    execute,
    flags,
    lreg,
    run,
    s32,
    set_lreg,
)

from tessera.control import Trap

LANE = list(range(32))


def fresh(*rows: tuple[int, object], **kw) -> Thread:
    t = Thread(**kw)
    for index, values in rows:
        set_lreg(t, index, values)
    return t


# ---------------------------------------------------------------- SFPIADD
def test_iadd_immediate_wraps_and_sign_extends():
    t = fresh((1, [0, 1, 0x7FFF_FFFF, 0xFFFF_FFFF] * 8))
    execute(t, SFPIADD(-1 & 0xFFF, 1, 2, 1 | 4))           # VC + (-1), no flags
    assert lreg(t, 2)[:4] == [0xFFFF_FFFF, 0, 0x7FFF_FFFE, 0xFFFF_FFFE]
    execute(t, SFPIADD(0x7FF, 1, 3, 1 | 4))                # +2047
    assert lreg(t, 3)[:4] == [0x7FF, 0x800, 0x8000_07FE, 0x7FE]
    assert flags(t) == [False] * 32                        # CC_NONE left the flags alone


def test_iadd_register_forms():
    t = fresh((1, [10 * L for L in LANE]), (2, LANE))
    execute(t, SFPIADD(0, 1, 2, 4))                        # VD = VC + VD
    assert lreg(t, 2) == [11 * L for L in LANE]
    set_lreg(t, 2, LANE)
    execute(t, SFPIADD(0, 1, 2, 2 | 4))                    # VD = VC - VD
    assert lreg(t, 2) == [9 * L for L in LANE]
    set_lreg(t, 3, [5] * 32)
    execute(t, SFPIADD(0, 2, 3, 2 | 4))                    # 9L - 5 wraps below zero
    assert [s32(x) for x in lreg(t, 3)] == [9 * L - 5 for L in LANE]


@pytest.mark.parametrize("mod1, expect", [
    (1, lambda r, old: r < 0),                             # CC_LT0 (default)
    (1 | 8, lambda r, old: r >= 0),                        # CC_GTE0
    (1 | 4, lambda r, old: old),                           # CC_NONE
    (1 | 4 | 8, lambda r, old: not old),                   # CC_NONE|CC_GTE0 inverts the old flag (E21)
])
def test_iadd_flag_modes(mod1, expect):
    t = fresh((1, [L - 16 for L in LANE]))
    old = [L % 3 == 0 for L in LANE]
    t.sfpu.lane_flags[:] = old
    execute(t, SFPIADD(0, 1, 2, mod1))
    assert flags(t) == [bool(expect(L - 16, old[L])) for L in LANE]


def test_iadd_flags_only_for_enabled_lanes_e6():
    t = fresh((1, [L - 16 for L in LANE]))
    enable_predication(t)
    t.sfpu.lane_flags[:] = [L % 2 == 0 for L in LANE]      # odd lanes disabled
    execute(t, SFPIADD(0, 1, 2, 1))                        # flag = (VC + 0) < 0
    assert flags(t) == [(L % 2 == 0) and L < 16 for L in LANE]
    assert lreg(t, 2) == [(L - 16) & M32 if L % 2 == 0 else 0 for L in LANE]


def test_iadd_flags_only_when_vd_below_8():
    t = fresh((1, [0xFFFF_FFFF] * 32), lenient=True)
    t.sfpu.lane_config[:] = 2                              # backdoor off: VD 12 executes
    execute(t, SFPIADD(0, 1, 12, 1))                       # would set every flag (negative)
    assert flags(t) == [False] * 32
    assert lreg(t, 12) == [0x3780_0000] * 32               # constant untouched


def test_iadd_write_to_constant_register_stops():
    t = fresh((1, [1] * 32))
    with pytest.raises(Trap, match=r"sfpiadd: write to read-only LReg\[9\]"):
        execute(t, SFPIADD(0, 1, 9, 1))


def test_iadd_backdoor_template_load():
    t = fresh((1, [1] * 32))
    word = SFPIADD(3, 1, 13, 1)
    execute(t, word)
    assert [int(x) for x in t.sfpu.template[1]] == [word] * 32
    assert lreg(t, 13) == [0xBF2C_C4C7] * 32 and flags(t) == [False] * 32


# ---------------------------------------------------------------- SFPSHFT
def test_shft_register_amounts_both_directions():
    amounts = [0, 1, 31, 32, -1, -31, -32, 33] * 4
    t = fresh((1, amounts), (2, [0x8000_0001] * 32))
    execute(t, SFPSHFT(0, 1, 2, 0))
    want = [(0x8000_0001 << (a & 31)) & M32 if a >= 0 else 0x8000_0001 >> ((-a) & 31) for a in amounts]
    assert lreg(t, 2) == want


def test_shft_arithmetic_right():
    t = fresh((1, [-4] * 32), (2, [0x8000_0000] * 32))
    execute(t, SFPSHFT(0, 1, 2, 2))                        # ARITHMETIC, VC = -4
    assert lreg(t, 2) == [0xF800_0000] * 32
    set_lreg(t, 3, [0x8000_0000] * 32)
    execute(t, SFPSHFT(-4 & 0xFFF, 0, 3, 1 | 2))           # ARG_IMM | ARITHMETIC
    assert lreg(t, 3) == [0xF800_0000] * 32
    set_lreg(t, 3, [0x8000_0000] * 32)
    execute(t, SFPSHFT(-4 & 0xFFF, 0, 3, 1))               # logical
    assert lreg(t, 3) == [0x0800_0000] * 32


def test_shft_immediate_use_vc():
    t = fresh((1, LANE), (2, [7] * 32))
    execute(t, SFPSHFT(3, 1, 2, 1 | 4))                    # VD = VC << 3
    assert lreg(t, 2) == [L << 3 for L in LANE]
    execute(t, SFPSHFT(3, 1, 2, 4))                        # bit2 without ARG_IMM: VD << VC
    assert lreg(t, 2) == [((L << 3) << L) & M32 for L in LANE]


def test_shft_wormhole_has_no_arithmetic_mode():
    t = fresh((2, [0x8000_0000] * 32), chip="wh")
    execute(t, SFPSHFT(-4 & 0xFFF, 0, 2, 1 | 2))
    assert lreg(t, 2) == [0x0800_0000] * 32


# ---------------------------------------------------------------- bitwise
def test_and_or_with_and_without_vb():
    t = fresh((1, [0xF0F0_F0F0] * 32), (2, [0xFF00_FF00] * 32), (3, [0x0FF0_0FF0] * 32))
    execute(t, SFPAND(3, 1, 2, 0))                         # VD = VD & VC (VB ignored)
    assert lreg(t, 2) == [0xF000_F000] * 32
    execute(t, SFPAND(3, 1, 2, 1))                         # VD = VB & VC
    assert lreg(t, 2) == [0x00F0_00F0] * 32
    execute(t, SFPOR(3, 1, 2, 1))                          # VD = VB | VC
    assert lreg(t, 2) == [0xFFF0_FFF0] * 32
    set_lreg(t, 2, [0x1] * 32)
    execute(t, SFPOR(3, 1, 2, 0))                          # VD = VD | VC
    assert lreg(t, 2) == [0xF0F0_F0F1] * 32


def test_and_wormhole_ignores_vb():
    t = fresh((1, [0xF0F0_F0F0] * 32), (2, [0xFF00_FF00] * 32), (3, [0] * 32), chip="wh")
    execute(t, SFPAND(3, 1, 2, 1))
    assert lreg(t, 2) == [0xF000_F000] * 32


def test_xor_not():
    t = fresh((1, [0x1234_5678] * 32), (2, [0xFFFF_0000] * 32))
    execute(t, SFPXOR(1, 2))
    assert lreg(t, 2) == [0xEDCB_5678] * 32
    execute(t, SFPNOT(1, 3))
    assert lreg(t, 3) == [0xEDCB_A987] * 32


def test_xor_respects_disabled_lanes():
    t = fresh((1, [1] * 32), (2, [0] * 32))
    enable_predication(t)
    t.sfpu.lane_flags[:] = [L < 8 for L in LANE]
    execute(t, SFPXOR(1, 2))
    assert lreg(t, 2) == [1 if L < 8 else 0 for L in LANE]


# ---------------------------------------------------------------- SFPABS
def test_abs_int_and_float():
    vals = [0, 5, 0xFFFF_FFFB, 0x8000_0000, 0xBF80_0000, 0xFF80_0000, 0xFFC0_0000, 0x7FC0_0000] * 4
    t = fresh((1, vals))
    execute(t, SFPABS(1, 2, 0))
    assert lreg(t, 2)[:8] == [0, 5, 5, 0x8000_0000, 0x4080_0000, 0x0080_0000, 0x0040_0000, 0x7FC0_0000]
    execute(t, SFPABS(1, 3, 1))
    assert lreg(t, 3)[:8] == [0, 5, 0xFFFF_FFFB, 0, 0x3F80_0000, 0x7F80_0000, 0xFFC0_0000, 0x7FC0_0000]


# ---------------------------------------------------------------- SFPLZ
def test_lz_counts_and_nosgn_mask():
    vals = [0, 1, 0x8000_0000, 0x0001_0000, 0xFFFF_FFFF, 0x7FFF_FFFF, 2, 3] * 4
    t = fresh((1, vals))
    execute(t, SFPLZ(1, 2, 0))
    assert lreg(t, 2)[:8] == [32, 31, 0, 15, 0, 1, 30, 30]
    execute(t, SFPLZ(1, 2, 4))                             # sign masked first
    assert lreg(t, 2)[:8] == [32, 31, 32, 15, 1, 1, 30, 30]


@pytest.mark.parametrize("mod1, want", [
    (2, lambda c, old: c != 0),                            # CC_NE0
    (2 | 8, lambda c, old: c == 0),                        # CC_NE0 | CC_COMP: equal to zero
    (8, lambda c, old: not old),                           # CC_COMP alone inverts (E21)
    (0, lambda c, old: old),
    (2 | 4, lambda c, old: (c & 0x7FFF_FFFF) != 0),        # masked value decides
])
def test_lz_flags(mod1, want):
    vals = [0, 1, 0x8000_0000, 0] * 8
    t = fresh((1, vals))
    old = [L % 5 == 0 for L in LANE]
    t.sfpu.lane_flags[:] = old
    execute(t, SFPLZ(1, 2, mod1))
    assert flags(t) == [bool(want(vals[L], old[L])) for L in LANE]


# ---------------------------------------------------------------- SFPEXEXP / SFPEXMAN
def test_exexp_debias_and_flags():
    vals = [0x3F80_0000, 0x3F00_0000, 0, 0x7F80_0000, 0x0000_0001, 0xC000_0000, 0x4000_0000, 0x8000_0000] * 4
    t = fresh((1, vals))
    execute(t, SFPEXEXP(1, 2, 2))                          # debias, flag = result < 0
    assert [s32(x) for x in lreg(t, 2)[:8]] == [0, -1, -127, 128, -127, 1, 1, -127]
    assert flags(t)[:8] == [False, True, True, False, True, False, False, True]
    execute(t, SFPEXEXP(1, 3, 1 | 2 | 8))                  # raw exponent; flag = not (raw < 0)
    assert lreg(t, 3)[:8] == [127, 126, 0, 255, 0, 128, 128, 0]
    assert flags(t) == [True] * 32
    execute(t, SFPEXEXP(1, 3, 8))                          # SET_CC_COMP alone inverts (E21)
    assert flags(t) == [False] * 32


def test_exman_pad8_pad9():
    t = fresh((1, [0xBFC0_1234] * 32))
    execute(t, SFPEXMAN(1, 2, 0))
    assert lreg(t, 2) == [0x00C0_1234] * 32
    execute(t, SFPEXMAN(1, 2, 1))
    assert lreg(t, 2) == [0x0040_1234] * 32


# ---------------------------------------------------------------- SFPSETEXP / SETMAN / SETSGN
def test_setexp_three_sources():
    t = fresh((1, [0xBFC0_0001] * 32), (2, [0x4100_0085] * 32))
    execute(t, SFPSETEXP(0x7F, 1, 3, 1))                   # immediate 127
    assert lreg(t, 3) == [0xBFC0_0001] * 32
    execute(t, SFPSETEXP(0, 1, 2, 2))                      # exponent field of VD (0x82)
    assert lreg(t, 2) == [0xC140_0001] * 32
    set_lreg(t, 2, [0x0000_0085] * 32)
    execute(t, SFPSETEXP(0, 1, 2, 0))                      # VD[7:0] = 0x85
    assert lreg(t, 2) == [0xC2C0_0001] * 32


def test_setexp_immediate_is_8_bits():
    t = fresh((1, [0x3F80_0000] * 32))
    with pytest.raises(Trap, match=r"reserved bits 0xf00000 are set \(bits 23:20"):
        execute(t, SFPSETEXP(0xF80, 1, 2, 1))              # bits [23:20] are reserved
    t = fresh((1, [0x3F80_0000] * 32), lenient=True)
    execute(t, SFPSETEXP(0xF80, 1, 2, 1))                  # leniently ignored
    assert lreg(t, 2) == [0x4000_0000] * 32


def test_setman_and_setsgn():
    t = fresh((1, [0xC0FF_FFFF] * 32), (2, [0x1234_5678] * 32))
    execute(t, SFPSETMAN(0xABC, 1, 3, 1))                  # Imm12 << 11
    assert lreg(t, 3) == [0xC080_0000 | (0xABC << 11)] * 32
    execute(t, SFPSETMAN(0, 1, 2, 0))                      # mantissa of VD
    assert lreg(t, 2) == [0xC0B4_5678] * 32
    execute(t, SFPSETSGN(0, 1, 4, 1))                      # sign = Imm1 = 0
    assert lreg(t, 4) == [0x40FF_FFFF] * 32
    execute(t, SFPSETSGN(1, 4, 5, 1))                      # sign = 1
    assert lreg(t, 5) == [0xC0FF_FFFF] * 32
    set_lreg(t, 6, [0x8000_0000 * (L & 1) for L in LANE])
    execute(t, SFPSETSGN(0, 4, 6, 0))                      # sign of VD
    assert lreg(t, 6) == [0xC0FF_FFFF if L & 1 else 0x40FF_FFFF for L in LANE]


# ---------------------------------------------------------------- SFPDIVP2
def test_divp2_add_wraps_and_keeps_inf_nan():
    vals = [0x3F80_0000, 0x7F80_0000, 0xFFC0_0001, 0x0000_0005, 0xBF80_0000, 0x7F00_0000, 0, 0x0080_0000] * 4
    t = fresh((1, vals))
    execute(t, SFPDIVP2(0xFF, 1, 2, 1))                    # exponent += 255 (i.e. -1 mod 256)
    assert lreg(t, 2)[:8] == [0x3F00_0000, 0x7F80_0000, 0xFFC0_0001, 0x7F80_0005, 0xBF00_0000,
                              0x7E80_0000, 0x7F80_0000, 0]
    execute(t, SFPDIVP2(3, 1, 2, 1))
    assert lreg(t, 2)[:4] == [0x4100_0000, 0x7F80_0000, 0xFFC0_0001, 0x0180_0005]
    execute(t, SFPDIVP2(0x80, 1, 3, 0))                    # replace: exponent = 128
    assert lreg(t, 3)[:4] == [0x4000_0000, 0x4000_0000, 0xC040_0001, 0x4000_0005]


def test_setcc_then_integer_ops_respect_lane_enable():
    t = fresh((1, [L - 16 for L in LANE]), (2, [0] * 32))
    run(t, SFPENCC(3, 0, 10), SFPSETCC(0, 1, 0, 4))         # enable lanes with VC >= 0
    execute(t, SFPNOT(1, 2))
    assert lreg(t, 2) == [(~(L - 16)) & M32 if L >= 16 else 0 for L in LANE]


def test_lz_in_place_flags_use_the_source_value():
    # found by the reference-model property: VD = VC must not let the result feed the flag
    t = fresh((6, [0, 5, 0x8000_0000, 0] * 8))
    execute(t, SFPLZ(6, 6, 2 | 8))                         # flag = (c == 0), then LReg[6] = clz(c)
    assert flags(t) == [True, False, False, True] * 8
    assert lreg(t, 6) == [32, 29, 0, 32] * 8
