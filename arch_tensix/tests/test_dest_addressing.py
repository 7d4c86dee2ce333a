"""SFPLOAD/SFPSTORE addressing (§10.2): RWCs, config offsets, column selection and exchange,
LaneConfig BLOCK_* bits, EN(L), INT32_ALL and its stack pointer, index capture, ADDR_MOD,
the Adj16/Adj32 remaps, SRCB resolution and the rule checks."""

from __future__ import annotations

import numpy as np
import pytest
from tensix_dest_support import Thread, adj16_ref, adj32_ref, execute, lane_row_col, sfpload, sfpstore

from tessera.control import Trap
from tessera_tensix import addressing
from tessera_tensix import dest as D


def _fill_ids(t: Thread) -> None:
    """Every Dest cell holds its own (row, col) as row*16 + col (fits 16 bits)."""
    t.dest.bits[:] = (np.arange(1024)[:, None] * 16 + np.arange(16)[None, :]).astype(np.uint16)


def _loaded_cells(t: Thread, vd: int = 0) -> list[tuple[int, int]]:
    return [(int(v) >> 4, int(v) & 15) for v in t.sfpu.lreg[vd]]


# ------------------------------------------------------------------ address → (row, col)
@pytest.mark.parametrize("addr", [0, 1, 2, 3, 4, 6, 0x24, 0x3FE, 0x3FF])
def test_lane_to_row_and_column(addr):
    t = Thread()
    _fill_ids(t)
    execute(t, sfpload(0, 6, 0, addr))                    # UINT16: the raw cell
    want = [lane_row_col(addr, lane) for lane in range(32)]
    assert _loaded_cells(t) == want


def test_eight_loads_with_stride_2_cover_one_face():
    t = Thread()
    _fill_ids(t)
    seen = set()
    for addr in range(0, 16, 2):
        execute(t, sfpload(0, 6, 0, addr))
        seen |= set(_loaded_cells(t))
    assert seen == {(r, c) for r in range(16) for c in range(16)}


def test_address_sums_imm_offset_rwc_bases_and_sp_low_bits():
    t = Thread()
    _fill_ids(t)
    t.tcfg.set("DEST_TARGET_REG_CFG_MATH_Offset", 0x200)
    t.core.cfg.set("DEST_REGW_BASE_Base", 0x10)
    t.core.cfg.set("DEST_SP_BASE_Base", 1)
    t.rwc["dst"] = 0x20
    t.rwc["sp"] = 1                                       # (1 + 1) & 3 = 2 → odd columns
    execute(t, sfpload(0, 6, 0, 0x4))
    addr = 0x4 + 0x200 + 0x30 + 2
    assert _loaded_cells(t) == [lane_row_col(addr, lane) for lane in range(32)]


def test_address_wraps_at_10_bits():
    t = Thread()
    _fill_ids(t)
    t.tcfg.set("DEST_TARGET_REG_CFG_MATH_Offset", 0x3FC)
    execute(t, sfpload(0, 6, 0, 0x8))
    assert _loaded_cells(t)[0] == (4, 0)


def test_store_goes_to_the_same_cells_as_load():
    t = Thread()
    t.sfpu.lreg[1] = np.arange(32, dtype=np.uint32) + 0x100
    execute(t, sfpstore(1, 6, 0, 0x16))
    for lane in range(32):
        r, c = lane_row_col(0x16, lane)
        assert t.dest.bits[r, c] == 0x100 + lane
    assert np.count_nonzero(t.dest.bits) == 32


# ------------------------------------------------------------------ LaneConfig bits
def test_col_exchange_uses_row0_copy_of_lane_config():
    t = Thread()
    _fill_ids(t)
    t.sfpu.lane_config[3] = 1 << 6                        # DEST_RD_COL_EXCHANGE for lanes 3, 11, 19, 27
    t.sfpu.lane_config[12] = 1 << 6                       # row 1's copy: ignored
    execute(t, sfpload(0, 6, 0, 0x20))
    cells = _loaded_cells(t)
    for lane in range(32):
        r, c = lane_row_col(0x20, lane, odd=(lane & 7) == 3)
        assert cells[lane] == (r, c)


def test_wr_col_exchange_for_store_only():
    t = Thread()
    t.sfpu.lane_config[0] = 1 << 7                        # DEST_WR_COL_EXCHANGE lane 0 (and 8, 16, 24)
    t.sfpu.lreg[0] = 7
    execute(t, sfpstore(0, 6, 0, 0))
    assert t.dest.bits[0, 1] == 7 and t.dest.bits[0, 0] == 0
    assert t.dest.bits[3, 1] == 7
    _fill_ids(t)
    execute(t, sfpload(1, 6, 0, 0))                        # the read side is not exchanged
    assert _loaded_cells(t, 1)[0] == (0, 0)


def test_block_bits_skip_lanes():
    t = Thread()
    _fill_ids(t)
    t.sfpu.lreg[0] = 0xDEAD
    t.sfpu.lane_config[5] = 1 << 5                        # BLOCK_SFPU_RD_FROM_DEST, lane 5 only
    execute(t, sfpload(0, 6, 0, 0))
    assert t.sfpu.lreg[0, 5] == 0xDEAD and t.sfpu.lreg[0, 13] == lane_row_col(0, 13)[0] * 16 + 10
    t.sfpu.lane_config[:] = 0
    t.sfpu.lane_config[9] = 1 << 4                        # BLOCK_DEST_WR_FROM_SFPU, lane 9
    t.sfpu.lreg[1] = 0xBEEF
    execute(t, sfpstore(1, 6, 0, 0x40))
    r, c = lane_row_col(0x40, 9)
    assert t.dest.bits[r, c] == r * 16 + c                # untouched
    r, c = lane_row_col(0x40, 1)
    assert t.dest.bits[r, c] == 0xBEEF


def test_row_mask_and_lane_flags_disable_lanes_but_not_int32_all():
    t = Thread()
    _fill_ids(t)
    t.sfpu.use_lane_flags[:] = True
    t.sfpu.lane_flags[:] = True
    t.sfpu.lane_flags[2] = False
    t.sfpu.lane_config[:8] = 1 << (12 + 3)                # ROW_MASK bit 3: lanes 24..31 off
    t.sfpu.lreg[0] = 0xFFFF
    execute(t, sfpload(0, 6, 0, 0))
    assert t.sfpu.lreg[0, 2] == 0xFFFF and t.sfpu.lreg[0, 24] == 0xFFFF
    assert t.sfpu.lreg[0, 3] == 3 * 2 and t.sfpu.lreg[0, 23] == 2 * 16 + 14
    t.sfpu.lreg[1] = 0xFFFF
    execute(t, sfpload(1, 10, 0, 0))                      # INT32_ALL: EN(L) ignored
    assert 0xFFFF not in t.sfpu.lreg[1].tolist()


def test_index_capture_writes_row_and_column():
    t = Thread()
    t.sfpu.lane_config[:] = (1 << 2) | (1 << 3)           # ENABLE_DEST_INDEX + CAPTURE_DEFAULT_DEST_INDEX
    execute(t, sfpload(2, 2, 0, 0x46))
    want = [lane_row_col(0x46, lane) for lane in range(32)]
    assert [(int(v) >> 4, int(v) & 15) for v in t.sfpu.lreg[6]] == want
    t.sfpu.lreg[7] = 0
    execute(t, sfpload(3, 2, 0, 0x46))
    assert t.sfpu.lreg[7].any()
    t.sfpu.lreg[0] = 0
    execute(t, sfpload(4, 2, 0, 0x46))                    # VD >= 4: nothing captured (LReg[8] is fixed)
    t.sfpu.lane_config[:] = 1 << 3                        # CAPTURE alone: no capture
    t.sfpu.lreg[5] = 0
    execute(t, sfpload(1, 2, 0, 0x46))
    assert not t.sfpu.lreg[5].any()


# ------------------------------------------------------------------ INT32_ALL and Sp (E14)
def test_int32_all_load_predecrements_nonzero_sp_and_uses_sp_as_base():
    t = Thread()
    _fill_ids(t)
    t.tcfg.set("SFPU_STACK_Incr", 8)
    t.rwc["sp"] = 0
    t.rwc["dst"] = 0x1E                                   # only (dst & 3) = 2 counts: odd columns
    execute(t, sfpload(0, 10, 0, 0x40))
    assert t.rwc["sp"] == 0                               # Sp = 0: no decrement
    # the INT32 load of _fill_ids cells: the Dst32b value at rows adj32(...) — check the address via sp
    t2 = Thread()
    t2.tcfg.set("SFPU_STACK_Incr", 8)
    t2.rwc["sp"] = 0x10
    t2.core.cfg.set("DEST_SP_BASE_Base", 4)
    t2.sfpu.lreg[3] = np.arange(32, dtype=np.uint32) * 0x10001
    execute(t2, sfpstore(3, 10, 0, 0x40))                 # store: current Sp, then Sp += 8
    assert t2.rwc["sp"] == 0x18
    addr = 0x40 + 0x10 + 4 + 0
    for lane in (0, 9, 31):
        r, c = lane_row_col(addr, lane)
        assert t2.dest.get32(r, c) == D.shuffle_fp32(lane * 0x10001)
    execute(t2, sfpload(4, 10, 0, 0x40))                  # load: Sp -= 8 first → same address
    assert t2.rwc["sp"] == 0x10
    assert np.array_equal(t2.sfpu.lreg[4], t2.sfpu.lreg[3])


def test_int32_all_sp_wraps_10_bits():
    t = Thread()
    t.tcfg.set("SFPU_STACK_Incr", 0x3F0)
    t.rwc["sp"] = 0x20
    execute(t, sfpstore(0, 10, 0, 0))
    assert t.rwc["sp"] == (0x20 + 0x3F0) & 0x3FF


def test_normal_mode_ignores_sp_except_low_bits():
    t = Thread()
    _fill_ids(t)
    t.rwc["sp"] = 0x104                                   # & 3 == 0
    execute(t, sfpload(0, 6, 0, 0x10))
    assert _loaded_cells(t)[0] == (0x10, 0)
    assert t.rwc["sp"] == 0x104


# ------------------------------------------------------------------ ADDR_MOD (partial)
def test_addr_mod_advances_dst_and_sources_not_fidelity():
    t = Thread()
    t.tcfg.set("ADDR_MOD_DST_SEC5_DestIncr", 2)
    t.tcfg.set("ADDR_MOD_DST_SEC5_FidelityIncr", 1)
    t.tcfg.set("ADDR_MOD_AB_SEC5_SrcAIncr", 3)
    t.tcfg.set("ADDR_MOD_AB_SEC5_SrcBIncr", 63)
    t.rwc["srcb"] = 2
    for _ in range(3):
        execute(t, sfpload(0, 6, 5, 0))
    assert t.rwc["dst"] == 6 and t.rwc["srca"] == 9 and t.rwc["srcb"] == (2 + 3 * 63) & 63
    assert t.rwc["fidelity"] == 0
    execute(t, sfpstore(0, 6, 5, 0))
    assert t.rwc["dst"] == 8


def test_eight_loads_walk_a_face_with_addr_mod():
    t = Thread()
    _fill_ids(t)
    t.tcfg.set("ADDR_MOD_DST_SEC1_DestIncr", 2)
    seen = set()
    for _ in range(8):
        execute(t, sfpload(0, 6, 1, 0))
        seen |= set(_loaded_cells(t))
    assert seen == {(r, c) for r in range(16) for c in range(16)}
    assert t.rwc["dst"] == 16


def test_addr_mod_clear_cr_and_ctocr():
    t = Thread()
    t.rwc.update(dst=5, dst_cr=100)
    t.tcfg.set("ADDR_MOD_DST_SEC2_DestCR", 1)
    t.tcfg.set("ADDR_MOD_DST_SEC2_DestIncr", 4)
    addressing.apply_addr_mod(t, 2, fidelity=False)
    assert (t.rwc["dst"], t.rwc["dst_cr"]) == (104, 104)
    t.tcfg.set("ADDR_MOD_DST_SEC3_DestCToCR", 1)
    t.tcfg.set("ADDR_MOD_DST_SEC3_DestCR", 1)             # CToCR wins over CR
    t.tcfg.set("ADDR_MOD_DST_SEC3_DestIncr", 1)
    t.rwc.update(dst=10, dst_cr=0)
    addressing.apply_addr_mod(t, 3)
    assert (t.rwc["dst"], t.rwc["dst_cr"]) == (11, 11)
    t.tcfg.set("ADDR_MOD_DST_SEC4_DestClear", 1)
    t.tcfg.set("ADDR_MOD_DST_SEC4_DestIncr", 9)
    t.tcfg.set("ADDR_MOD_AB_SEC4_SrcAClear", 1)
    t.rwc.update(srca=7, srca_cr=7)
    addressing.apply_addr_mod(t, 4)
    assert (t.rwc["dst"], t.rwc["dst_cr"], t.rwc["srca"], t.rwc["srca_cr"]) == (0, 0, 0, 0)
    t.tcfg.set("ADDR_MOD_AB_SEC6_SrcBCR", 1)
    t.tcfg.set("ADDR_MOD_AB_SEC6_SrcBIncr", 16)
    t.rwc.update(srcb=3, srcb_cr=56)
    addressing.apply_addr_mod(t, 6)
    assert (t.rwc["srcb"], t.rwc["srcb_cr"]) == (8, 8)   # (56 + 16) & 63


def test_full_addr_mod_updates_fidelity_and_bias():
    t = Thread()
    t.tcfg.set("ADDR_MOD_DST_SEC0_FidelityIncr", 3)
    t.tcfg.set("ADDR_MOD_BIAS_SEC0_BiasIncr", 1)
    addressing.apply_addr_mod(t, 0)
    addressing.apply_addr_mod(t, 0)
    assert t.rwc["fidelity"] == 2 and t.rwc["bias"] == 0
    t.tcfg.set("ADDR_MOD_DST_SEC1_FidelityClear", 1)
    addressing.apply_addr_mod(t, 1)
    assert t.rwc["fidelity"] == 0


def test_wormhole_addr_mod_bank_select():
    t = Thread(chip="wh")
    t.tcfg.set("ADDR_MOD_DST_SEC1_DestIncr", 1)
    t.tcfg.set("ADDR_MOD_DST_SEC5_DestIncr", 10)
    execute(t, sfpload(0, 6, 1, 0, chip="wh"))
    assert t.rwc["dst"] == 1
    t.tcfg.set("ADDR_MOD_SET_Base", 1)
    execute(t, sfpload(0, 6, 1, 0, chip="wh"))
    assert t.rwc["dst"] == 11
    assert addressing.addr_mod_index(t, 5, wh=False) == 5
    assert addressing.addr_mod_index(t, 1, wh=True) == 5


def test_wormhole_address_has_no_sp():
    t = Thread(chip="wh")
    _fill_ids(t)
    t.rwc["sp"] = 3
    t.rwc["dst"] = 0x21
    execute(t, sfpload(0, 6, 0, 0x40, chip="wh"))
    assert _loaded_cells(t)[0] == lane_row_col(0x61, 0)
    execute(t, sfpload(0, 10, 0, 0x40, chip="wh"))        # INT32_ALL: only (dst & 3)
    assert t.rwc["sp"] == 3


# ------------------------------------------------------------------ remaps (§10.1)
def test_remap_tables_match_the_prose_definition():
    for remap in (False, True):
        for r in range(1024):
            assert D.ADJ16[int(remap)][r] == adj16_ref(r, remap)
            for swz in (False, True):
                assert D.ADJ32[int(remap)][int(swz)][r] == adj32_ref(r, remap, swz)


@pytest.mark.parametrize("remap,swizzle", [(False, False), (True, False), (False, True), (True, True)])
def test_remaps_are_bijections(remap, swizzle):
    assert sorted(D.ADJ16[int(remap)].tolist()) == list(range(1024))
    hi = D.ADJ32[int(remap)][int(swizzle)][:512]
    assert sorted(hi.tolist() + (hi + 8).tolist()) == list(range(1024))


def test_dst32b_layout_without_remaps():
    # Dst32b row r < 8 → DstBits rows r (high) and r + 8 (low); row 8 → 16 and 24
    assert [int(D.ADJ32[0][0][r]) for r in (0, 7, 8, 15, 16)] == [0, 7, 16, 23, 32]


def test_sfpload_honours_remap_addrs_and_swizzle():
    t = Thread()
    _fill_ids(t)
    t.core.cfg.set("DEST_ACCESS_CFG_remap_addrs", 1)
    execute(t, sfpload(0, 6, 0, 0x08))                    # rows 8..11 → Adj16
    assert [c[0] for c in _loaded_cells(t)[::8]] == [adj16_ref(8 + i, True) for i in range(4)]
    t.core.cfg.set("DEST_ACCESS_CFG_swizzle_32b", 1)
    t.sfpu.lreg[1] = 0x3F800000
    execute(t, sfpstore(1, 3, 0, 0x0C))
    p = adj32_ref(0x0C, True, True)
    assert t.dest.bits[p, 0] == D.shuffle_bf16(0x3F80) and t.dest.bits[p + 8, 0] == 0
    assert t.dest.get32(0x0C, 0, True, True) == D.shuffle_fp32(0x3F800000)


# ------------------------------------------------------------------ SRCB resolution (E22)
@pytest.mark.parametrize("cfg,want", [
    ({"ALU_ACC_CTRL_SFPU_Fp32_enabled": 1}, 3),
    ({"ALU_FORMAT_SPEC_REG1_SrcB": 5}, 2),                 # BF16
    ({"ALU_FORMAT_SPEC_REG1_SrcB": 1}, 1),                 # FP16
    ({"ALU_FORMAT_SPEC_REG1_SrcB": 14}, 1),                # Int8 → FP16 family
    ({"ALU_FORMAT_SPEC_REG1_SrcB": 1, "ALU_FORMAT_SPEC_REG_SrcB_override": 1,
      "ALU_FORMAT_SPEC_REG_SrcB_val": 6}, 2),             # override: BFP8
])
def test_srcb_resolution(cfg, want):
    from tessera_tensix.semantics.dest_ops import resolve_srcb

    t = Thread()
    for k, v in cfg.items():
        t.core.cfg.set(k, v)
    assert resolve_srcb(t, store=False) == want


def test_srcb_thread_override_on_blackhole():
    from tessera_tensix.semantics.dest_ops import resolve_srcb

    t = Thread()
    t.core.cfg.set("ALU_FORMAT_SPEC_REG1_SrcB", 5)
    t.tcfg.set("SFPU_DEST_FMT_Enable", 1)
    t.tcfg.set("SFPU_DEST_FMT_Base", 1)
    assert resolve_srcb(t, store=True) == 1


def test_srcb_load_behaves_as_resolved_format():
    t = Thread()
    t.core.cfg.set("ALU_FORMAT_SPEC_REG1_SrcB", 5)
    t.dest.bits[0, 0] = D.shuffle_bf16(0x3FC0)
    execute(t, sfpload(0, 0, 0, 0))
    assert t.sfpu.lreg[0, 0] == 0x3FC00000


# ------------------------------------------------------------------ rules (§3.4)
@pytest.mark.parametrize("lenient", [False, True])
def test_load_to_read_only_lreg_only_advances_counters(lenient):
    # SFPLOAD.md loads only if VD < 8: no rule is broken (tt-llk's "dummy" loads)
    t = Thread(lenient=lenient)
    _fill_ids(t)
    before = t.sfpu.lreg.copy()
    t.tcfg.set("ADDR_MOD_DST_SEC0_DestIncr", 2)
    execute(t, sfpload(9, 6, 0, 0))
    assert np.array_equal(t.sfpu.lreg, before) and t.rwc["dst"] == 2


def test_vd_12_with_backdoor_enabled_is_a_template_load():
    t = Thread()
    w = sfpload(13, 6, 0, 0)
    execute(t, w)
    assert (t.sfpu.template[1] == w).all()
    w2 = sfpstore(12, 3, 0, 0)
    execute(t, w2)
    assert (t.sfpu.template[0] == w2).all() and not t.dest.bits.any()


def test_store_may_read_constant_lregs():
    t = Thread()
    execute(t, sfpstore(10, 3, 0, 0))                     # LReg[10] = 1.0
    assert t.dest.get32(0, 0) == D.shuffle_fp32(0x3F800000)
    t.sfpu.lane_config[:] = 2                             # DISABLE_BACKDOOR_LOAD
    execute(t, sfpstore(15, 6, 0, 0x20))                  # LReg[15] = 2·lane
    assert [t.dest.bits[0x20 + (lane >> 3), 2 * (lane & 7)] for lane in range(32)] == \
        [2 * lane for lane in range(32)]


def test_lenient_mixed_backdoor_store_writes_only_lanes_with_backdoor_disabled():
    t = Thread(lenient=True)
    t.sfpu.lane_config[:16] = 2                           # DISABLE_BACKDOOR_LOAD in lanes 0..15 only
    w = sfpstore(13, 3, 0, 0)                             # LReg[13] = -0.67487759
    execute(t, w)
    assert (t.sfpu.template[1, 16:] == w).all() and not t.sfpu.template[1, :16].any()
    assert t.dest.get32(0, 0) == D.shuffle_fp32(0xBF2CC4C7)          # lane 0 stored
    assert t.dest.get32(2, 0) == 0                                     # lane 16 did not
    strict = Thread()
    strict.sfpu.lane_config[:16] = 2
    with pytest.raises(Trap) as exc:
        execute(strict, w)
    assert "DISABLE_BACKDOOR_LOAD differs" in exc.value.name
