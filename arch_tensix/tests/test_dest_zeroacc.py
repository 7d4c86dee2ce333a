"""ZEROACC (Blackhole encoding, tensix.md 5.1 #8; Wormhole variant) and reads of undefined rows."""

from __future__ import annotations

import numpy as np
import pytest
from tensix_dest_support import Thread, adj16_ref, adj32_ref, execute, sfpload, sfpstore, zeroacc, zeroacc_wh

from tessera.control import Trap
from tessera_tensix.dest import shuffle_bf16

ONE_ROW, ROWS_16, HALF, ALL = 0, 1, 2, 3


def _invalid(t: Thread) -> set[int]:
    return {int(r) for r in np.nonzero(~t.dest.row_valid)[0]}


def test_encoding_fields_of_blackhole():
    assert zeroacc(3) == 0x10180000
    assert zeroacc(1, 1, 1, 5, 0x3FF) == 0x100F43FF | (5 << 14)


def test_clear_all_and_halves():
    t = Thread()
    execute(t, zeroacc(ALL))
    assert _invalid(t) == set(range(1024)) and not t.dest.all_valid
    t = Thread()
    execute(t, zeroacc(HALF, where=1))
    assert _invalid(t) == set(range(512, 1024))
    t = Thread()
    execute(t, zeroacc(HALF, where=2))                     # where & 1 == 0: low half
    assert _invalid(t) == set(range(512))


def test_zeroacc_keeps_the_bits():
    t = Thread()
    t.dest.bits[:] = 0x1234
    execute(t, zeroacc(ALL))
    assert (t.dest.bits == 0x1234).all()


def test_one_row_16bit_and_32bit():
    t = Thread()
    t.tcfg.set("DEST_TARGET_REG_CFG_MATH_Offset", 0x100)
    t.rwc["dst"] = 3
    t.core.cfg.set("DEST_REGW_BASE_Base", 0x10)
    execute(t, zeroacc(ONE_ROW, where=5))
    assert _invalid(t) == {0x100 + 3 + 0x10 + 5}
    t = Thread()
    t.core.cfg.set("ALU_ACC_CTRL_Fp32_enabled", 1)
    execute(t, zeroacc(ONE_ROW, where=9))
    p = adj32_ref(9, False, False)
    assert _invalid(t) == {p, p + 8} == {17, 25}


def test_one_row_honours_remap():
    t = Thread()
    t.core.cfg.set("DEST_ACCESS_CFG_remap_addrs", 1)
    execute(t, zeroacc(ONE_ROW, where=8))
    assert _invalid(t) == {adj16_ref(8, True)} == {32}


def test_sixteen_rows_16bit_and_32bit():
    t = Thread()
    execute(t, zeroacc(ROWS_16, where=3))
    assert _invalid(t) == set(range(48, 64))
    t = Thread()
    execute(t, zeroacc(ROWS_16, use_32_bit_mode=1, where=1))
    rows = {adj32_ref(16 + i, False, False) for i in range(16)}
    assert _invalid(t) == rows | {r + 8 for r in rows} == set(range(32, 64))


def test_sixteen_rows_out_of_range_is_a_nop_but_applies_addr_mod():
    t = Thread()
    t.tcfg.set("ADDR_MOD_DST_SEC2_DestIncr", 4)
    execute(t, zeroacc(ROWS_16, where=0xFF, addr_mode=2))
    assert not _invalid(t) and t.rwc["dst"] == 4
    execute(t, zeroacc(ROWS_16, use_32_bit_mode=1, where=40, addr_mode=2))
    assert not _invalid(t) and t.rwc["dst"] == 8


def test_sixteen_rows_follow_the_math_half_unless_absolute():
    t = Thread()
    t.tcfg.set("DEST_TARGET_REG_CFG_MATH_Offset", 512)
    execute(t, zeroacc(ROWS_16, where=1))
    assert _invalid(t) == set(range(528, 544))
    t = Thread()
    t.tcfg.set("DEST_TARGET_REG_CFG_MATH_Offset", 512)
    t.core.cfg.set("DEST_ACCESS_CFG_zeroacc_absolute_tile_mode", 1)
    execute(t, zeroacc(ROWS_16, where=1))
    assert _invalid(t) == set(range(16, 32))
    t = Thread()
    t.tcfg.set("DEST_TARGET_REG_CFG_MATH_Offset", 512)
    execute(t, zeroacc(ROWS_16, use_32_bit_mode=1, where=0))   # +16 Dst32b blocks = the high half
    assert _invalid(t) == set(range(512, 544))


def test_addr_mod_only_for_row_modes():
    t = Thread()
    t.tcfg.set("ADDR_MOD_DST_SEC1_DestIncr", 1)
    t.tcfg.set("ADDR_MOD_DST_SEC1_FidelityIncr", 1)
    execute(t, zeroacc(ONE_ROW, addr_mode=1))
    assert t.rwc["dst"] == 1 and t.rwc["fidelity"] == 1    # full ApplyAddrMod: fidelity too
    execute(t, zeroacc(HALF, addr_mode=1))
    execute(t, zeroacc(ALL, addr_mode=1))
    assert t.rwc["dst"] == 1


def test_clear_zero_flags_makes_rows_defined_again():
    t = Thread()
    t.dest.bits[40:44] = shuffle_bf16(0x3F80)
    execute(t, zeroacc(ALL))
    execute(t, zeroacc(ROWS_16, clear_zero_flags=1, where=2))
    assert _invalid(t) == set(range(1024)) - set(range(32, 48))
    execute(t, sfpload(0, 2, 0, 40))                       # readable: the old contents come back
    assert (t.sfpu.lreg[0] == 0x3F800000).all()


def test_reserved_high_bits_are_a_rule_violation():
    t = Thread()
    with pytest.raises(Trap) as exc:
        execute(t, zeroacc(ALL) | (1 << 22))
    assert exc.value.name.startswith("ttzeroacc: reserved bits 0x400000 are set (bits 23:21,13:10")
    assert _invalid(t) == set()                            # stopped before clearing anything
    t = Thread(lenient=True)
    execute(t, zeroacc(ALL) | (3 << 22))                   # leniently the bits are ignored
    assert _invalid(t) == set(range(1024))


# --------------------------------------------------------------------- undefined rows
def test_sfpload_of_undefined_row_stops():
    t = Thread()
    execute(t, zeroacc(ROWS_16, where=0))
    with pytest.raises(Trap) as exc:
        execute(t, sfpload(0, 2, 0, 4), address=0x18)
    assert "sfpload:" in exc.value.name and "row 4" in exc.value.name and "undefined" in exc.value.name


def test_sfpload_of_undefined_row_reads_zero_when_lenient():
    t = Thread(lenient=True)
    t.dest.bits[:] = shuffle_bf16(0x3F80)
    execute(t, zeroacc(ROWS_16, where=0))
    t.sfpu.lreg[0] = 0xFFFFFFFF
    execute(t, sfpload(0, 2, 0, 0x10))                     # rows 16..19 are still defined
    assert (t.sfpu.lreg[0] == 0x3F800000).all()
    execute(t, sfpload(0, 2, 0, 0x4))
    assert not t.sfpu.lreg[0].any()
    execute(t, sfpload(1, 3, 0, 0x4))                      # Dst32b: rows 8..11 high, 16..19 low
    assert not t.sfpu.lreg[1].any()


def test_disabled_lanes_do_not_read_undefined_rows():
    t = Thread()
    execute(t, zeroacc(ONE_ROW, where=3))                  # row 3 = lanes 24..31 at address 0
    t.sfpu.use_lane_flags[:] = True
    t.sfpu.lane_flags[:24] = True
    execute(t, sfpload(0, 2, 0, 0))                        # no violation
    t.sfpu.lane_flags[24] = True
    with pytest.raises(Trap):
        execute(t, sfpload(0, 2, 0, 0))


def test_zero_format_load_reads_nothing():
    t = Thread()
    execute(t, zeroacc(ALL))
    execute(t, sfpload(0, 11, 0, 0))
    assert not t.sfpu.lreg[0].any()


def test_store_defines_the_written_cells_only():
    t = Thread()
    execute(t, zeroacc(ROWS_16, where=0))
    t.sfpu.lreg[2] = 0x40000000
    execute(t, sfpstore(2, 2, 0, 0))                       # even columns of rows 0..3
    execute(t, sfpload(3, 2, 0, 0))
    assert (t.sfpu.lreg[3] == 0x40000000).all()
    assert _invalid(t) == set(range(16))
    with pytest.raises(Trap):
        execute(t, sfpload(3, 2, 0, 2))                    # odd columns still undefined
    execute(t, sfpstore(2, 2, 0, 2))
    assert _invalid(t) == set(range(4, 16))                # rows 0..3 complete: valid again
    execute(t, sfpload(3, 2, 0, 2))
    assert (t.sfpu.lreg[3] == 0x40000000).all()


def test_32bit_store_defines_both_halves():
    t = Thread()
    execute(t, zeroacc(ALL))
    t.sfpu.lreg[1] = 0x3F812345
    execute(t, sfpstore(1, 4, 0, 0))
    execute(t, sfpstore(1, 4, 0, 2))
    execute(t, sfpload(2, 4, 0, 0))
    assert (t.sfpu.lreg[2] == 0x3F812345).all()
    assert not ({0, 1, 2, 3, 8, 9, 10, 11} & _invalid(t))


# --------------------------------------------------------------------- Wormhole encoding
def test_wormhole_zeroacc_modes():
    t = Thread(chip="wh")
    execute(t, zeroacc_wh(HALF, where=1))
    assert _invalid(t) == set(range(512, 1024))
    t = Thread(chip="wh")
    execute(t, zeroacc_wh(4 | ROWS_16, where=1))           # clear_mode bit 2: 32-bit rows
    assert _invalid(t) == set(range(32, 64))
    t = Thread(chip="wh")
    t.tcfg.set("ADDR_MOD_DST_SEC3_DestIncr", 7)
    execute(t, zeroacc_wh(ONE_ROW, addr_mode=3, where=2))
    assert _invalid(t) == {2} and t.rwc["dst"] == 7


def test_wormhole_revert_is_undefined():
    t = Thread(chip="wh")
    with pytest.raises(Trap):
        execute(t, zeroacc_wh(ALL, revert=1))
    t = Thread(chip="wh", lenient=True)
    execute(t, zeroacc_wh(ALL))
    execute(t, zeroacc_wh(HALF, where=0, revert=1))
    assert _invalid(t) == set(range(512, 1024))
