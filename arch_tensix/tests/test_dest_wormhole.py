"""Wormhole B0 deltas of SFPLOAD/SFPSTORE (WH SFPLOAD.md / SFPSTORE.md): 2-bit AddrMod at
[15:14], INT8 ±127, INT32_SM / INT8_COMP two's-complement conversions, FP32 stores keep
denormals, no BLOCK_DEST_WR_FROM_SFPU."""

from __future__ import annotations

import numpy as np
from tensix_dest_support import Thread, execute, sfpload, sfpstore

from tessera_tensix import dest as D


def test_wh_int8_load_keeps_seven_bits():
    t = Thread(chip="wh")
    t.dest.bits[0, 0] = 0x8000 | (0xFF << 5) | 16          # -255 in Integer "8"
    execute(t, sfpload(0, 5, 0, 0, chip="wh"))
    assert t.sfpu.lreg[0, 0] == 0x80000000 | 0x7F
    tb = Thread()
    tb.dest.bits[0, 0] = 0x8000 | (0xFF << 5) | 16
    execute(tb, sfpload(0, 5, 0, 0))
    assert tb.sfpu.lreg[0, 0] == 0x80000000 | 0xFF        # Blackhole: ±255


def test_wh_int32_sm_and_int8_comp_convert_to_twos_complement():
    t = Thread(chip="wh")
    t.dest.set32(0, 0, D.shuffle_fp32(0x80000007))          # sign-magnitude -7
    t.dest.bits[0, 2] = 0x8000 | (9 << 5) | 16             # Integer "8" -9
    execute(t, sfpload(1, 12, 0, 0, chip="wh"))
    assert t.sfpu.lreg[1, 0] == (-7) & 0xFFFFFFFF
    execute(t, sfpload(2, 13, 0, 0, chip="wh"))
    assert t.sfpu.lreg[2, 1] == (-9) & 0xFFFFFFFF
    t.sfpu.lreg[3] = (-7) & 0xFFFFFFFF
    execute(t, sfpstore(3, 12, 0, 0x20, chip="wh"))
    assert D.unshuffle_fp32(t.dest.get32(0x20, 0)) == 0x80000007
    execute(t, sfpstore(3, 13, 0, 0x40, chip="wh"))
    assert t.dest.bits[0x40, 0] == 0x8000 | (7 << 5) | 16
    tb = Thread()                                            # Blackhole: no conversion
    tb.dest.set32(0, 0, D.shuffle_fp32(0x80000007))
    execute(tb, sfpload(1, 12, 0, 0))
    assert tb.sfpu.lreg[1, 0] == 0x80000007


def test_wh_fp32_store_keeps_denormals():
    t = Thread(chip="wh")
    t.sfpu.lreg[0] = 0x00000123
    execute(t, sfpstore(0, 3, 0, 0, chip="wh"))
    assert t.dest.get32(0, 0) == 0x00000123
    tb = Thread()
    tb.sfpu.lreg[0] = 0x80000123
    execute(tb, sfpstore(0, 3, 0, 0))
    assert tb.dest.get32(0, 0) == D.shuffle_fp32(0x80000000)


def test_wh_store_has_no_block_bit_but_load_does():
    t = Thread(chip="wh")
    t.sfpu.lane_config[:] = (1 << 4) | (1 << 5)
    t.sfpu.lreg[0] = 5
    execute(t, sfpstore(0, 6, 0, 0, chip="wh"))
    assert (t.dest.bits[0:4, 0::2] == 5).all()
    t.sfpu.lreg[1] = 9
    execute(t, sfpload(1, 6, 0, 0, chip="wh"))
    assert (t.sfpu.lreg[1] == 9).all()


def test_wh_addr_mod_field_position():
    t = Thread(chip="wh")
    t.tcfg.set("ADDR_MOD_DST_SEC2_DestIncr", 6)
    w = sfpload(0, 6, 2, 0, chip="wh")
    assert (w >> 14) & 3 == 2 and (w >> 13) & 1 == 0
    execute(t, w)
    assert t.rwc["dst"] == 6
    assert np.array_equal(t.sfpu.lreg[0], t.dest.bits[0:4, 0::2].reshape(-1).astype(np.uint32))
