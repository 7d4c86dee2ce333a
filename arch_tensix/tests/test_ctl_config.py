"""SFPCONFIG (§17.1, E3, E4); what SFPLOADMACRO does with it is in test_loadmacro.py."""

from __future__ import annotations

import pytest
from tensix_ctl_support import (
    SFPCONFIG,
    SFPENCC,
    SFPIADD,
    SFPLOADMACRO,
    SFPSETCC,
    Thread,
    enable_predication,
    execute,
    lreg,
    set_lreg,
)

from tessera.control import Trap

LANE = list(range(32))


def lane_config(t):
    return [int(x) for x in t.sfpu.lane_config]


def test_lreg_constants_from_lreg0_row0_broadcast():
    t = Thread()
    set_lreg(t, 0, [0x4000_0000 + L for L in LANE])
    for vd in (11, 12, 13, 14):
        execute(t, SFPCONFIG(0, vd, 0))
        assert lreg(t, vd) == [0x4000_0000 + (L & 7) for L in LANE]


def test_lreg_constants_immediate_defaults_e4():
    t = Thread()
    set_lreg(t, 0, [7] * 32)
    for vd in (11, 12, 13, 14):
        execute(t, SFPCONFIG(0, vd, 0))
    for vd, want in ((11, 0xBF80_0000), (12, 0x3780_0000), (13, 0xBF2C_C4C7), (14, 0xBEB0_8FF9)):
        execute(t, SFPCONFIG(0x1234, vd, 1))              # Imm16 is not used as the value
        assert lreg(t, vd) == [want] * 32


def test_ttsim_reset_only_changes_power_on_value():
    t = Thread(ttsim_reset=True)
    assert lreg(t, 12) == [0x3B00_0000] * 32
    execute(t, SFPCONFIG(0, 12, 1))
    assert lreg(t, 12) == [0x3780_0000] * 32


@pytest.mark.parametrize("mod1, op", [(0, lambda o, v: v), (2, lambda o, v: o | v),
                                      (4, lambda o, v: o & v), (6, lambda o, v: o ^ v)])
def test_lane_config_ops_from_lreg0(mod1, op):
    t = Thread()
    old = [0x3_0F0F ^ (L & 7) for L in LANE]
    t.sfpu.lane_config[:] = old
    set_lreg(t, 0, [0xFFF0_00F0 | L for L in LANE])        # high bits beyond 18 are dropped
    execute(t, SFPCONFIG(0, 15, mod1))
    assert lane_config(t) == [op(old[L], 0xFFF0_00F0 | (L & 7)) & 0x3_FFFF for L in LANE]


@pytest.mark.parametrize("mod1, op", [(1, lambda o, v: v), (3, lambda o, v: o | v),
                                      (5, lambda o, v: o & v), (7, lambda o, v: o ^ v)])
def test_lane_config_immediate_keeps_bits_17_16(mod1, op):
    t = Thread()
    t.sfpu.lane_config[:] = 0x2_00F0
    execute(t, SFPCONFIG(0x0F0F, 15, mod1))
    assert lane_config(t) == [(op(0x2_00F0, 0x0F0F) & 0xFFFF) | 0x2_0000] * 32


def test_misc_is_12_bits_with_ops():
    t = Thread()
    execute(t, SFPCONFIG(0xFABC, 8, 1))                    # write
    assert [int(x) for x in t.sfpu.misc] == [0xABC] * 32
    execute(t, SFPCONFIG(0x0F00, 8, 1 | 4))                # AND
    assert [int(x) for x in t.sfpu.misc] == [0xA00] * 32
    execute(t, SFPCONFIG(0x0055, 8, 1 | 2))                # OR
    assert [int(x) for x in t.sfpu.misc] == [0xA55] * 32
    execute(t, SFPCONFIG(0xFFFF, 8, 1 | 6))                # XOR
    assert [int(x) for x in t.sfpu.misc] == [0x5AA] * 32


def test_sequence_and_template():
    t = Thread()
    set_lreg(t, 0, [0x8400_0000 + L for L in LANE])
    execute(t, SFPCONFIG(0x1234, 2, 1))                    # template ignores IMM16_IS_VALUE
    assert [int(x) for x in t.sfpu.template[2]] == [0x8400_0000 + (L & 7) for L in LANE]
    execute(t, SFPCONFIG(0x1234, 5, 1 | 6))                # sequence: op ignored
    assert [int(x) for x in t.sfpu.sequence[1]] == [0x1234] * 32
    execute(t, SFPCONFIG(0, 7, 0))
    assert [int(x) for x in t.sfpu.sequence[3]] == [0x8400_0000 + (L & 7) for L in LANE]


def test_lane_mask_gating():
    t = Thread()
    cols = {0, 3, 5, 7}
    mask = sum(1 << (2 * c) for c in cols) | 0xAAAA        # odd bits are not lane selectors
    execute(t, SFPCONFIG(mask, 15, 8))                     # value from LReg[0] = 0
    t.sfpu.lane_config[:] = 0xFF
    execute(t, SFPCONFIG(mask, 15, 8))
    assert lane_config(t) == [0 if (L & 7) in cols else 0xFF for L in LANE]


def test_gating_uses_row0_flags_not_row_mask():
    t = Thread()
    set_lreg(t, 0, [L for L in LANE])
    enable_predication(t)
    t.sfpu.lane_flags[:] = [(L & 7) != 2 for L in LANE]     # column 2 of row 0 off (and others)
    t.sfpu.lane_flags[10] = True                            # row 1 col 2 on: irrelevant (row 0 decides)
    t.sfpu.lane_config[:] = 0xF000                          # ROW_MASK: every row off, ignored
    execute(t, SFPCONFIG(0, 11, 0))
    assert lreg(t, 11) == [0xBF80_0000 if (L & 7) == 2 else (L & 7) for L in LANE]


def test_config_is_not_subject_to_backdoor():
    t = Thread()
    execute(t, SFPCONFIG(0, 13, 1))
    assert [int(x) for x in t.sfpu.template[1]] == [0] * 32
    assert lreg(t, 13) == [0xBF2C_C4C7] * 32


def test_disable_backdoor_then_vd12_executes():
    t = Thread()
    set_lreg(t, 1, [1] * 32)
    execute(t, SFPCONFIG(0x0002, 15, 1))                   # DISABLE_BACKDOOR_LOAD
    with pytest.raises(Trap, match=r"read-only LReg\[12\]"):
        execute(t, SFPIADD(0, 1, 12, 1))
    execute(t, SFPSETCC(0, 1, 12, 1))                      # no LReg write: executes fine
    assert [int(x) for x in t.sfpu.template[0]] == [0] * 32


def test_row_mask_via_sfpconfig_disables_rows():
    t = Thread()
    set_lreg(t, 1, [5] * 32)
    execute(t, SFPCONFIG(0b1010 << 12, 15, 1))              # ROW_MASK rows 1 and 3
    execute(t, SFPIADD(0, 1, 2, 5))
    assert lreg(t, 2) == [0 if (L >> 3) in (1, 3) else 5 for L in LANE]
    execute(t, SFPENCC(3, 0, 10))                           # predication on, all flags true
    execute(t, SFPSETCC(0, 9, 0, 1))                        # flags = 0 in enabled rows only
    assert [bool(x) for x in t.sfpu.lane_flags] == [(L >> 3) in (1, 3) for L in LANE]


def test_undefined_destinations():
    t = Thread()
    with pytest.raises(Trap, match="sfpconfig: destination 9 is not defined"):
        execute(t, SFPCONFIG(0, 9, 0))
    t = Thread(lenient=True)
    before = t.sfpu.lreg.copy()
    execute(t, SFPCONFIG(0xFFFF, 10, 1))
    assert (t.sfpu.lreg == before).all() and lane_config(t) == [0] * 32


def test_loadmacro_with_an_empty_sequence_is_an_sfpload():
    from tensix_dest_support import Thread as DestThread
    from tensix_dest_support import execute as dest_execute
    from tensix_dest_support import sfpload

    t, plain = DestThread(), DestThread()
    for th in (t, plain):
        th.sfpu.lreg[15] = [0x4000_0000 + L for L in LANE]
        th.dest.flat[:] = range(th.dest.flat.size)         # distinct Dst16b cells
    # macro 1, VD = 1·4 + 2 = 6, Mod0 BF16, Imm10 = 5·2 + 1 = 11 (bit 0 ignored: row 8)
    dest_execute(t, SFPLOADMACRO(1, 2, 2, 0, 5, 1))
    dest_execute(plain, sfpload(6, 2, 0, 11))
    assert lreg(t, 6) == lreg(plain, 6) and any(lreg(t, 6))
    assert t.core.units["loadmacro"].pending == []
