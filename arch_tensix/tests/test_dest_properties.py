"""Hypothesis properties: the vectorised SFPLOAD/SFPSTORE agree with a per-lane reference model
(tensix_dest_support.RefState, written from the spec text) for random Dest contents, LRegs,
LaneConfig bits, lane flags, RWCs, config offsets and remaps."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st
from tensix_dest_support import RefState, Thread, execute, sfpload, sfpstore

# LaneConfig bits the data move looks at: FP16A_INF 0, ENABLE_DEST_INDEX 2, CAPTURE 3,
# BLOCK_WR 4, BLOCK_RD 5, RD/WR_COL_EXCHANGE 6/7, ROW_MASK 12..15; DISABLE_BACKDOOR_LOAD (1) set
# so that VD 12..15 (never drawn here) would not matter.
LC_BITS = (1 << 0) | (1 << 2) | (1 << 3) | (1 << 4) | (1 << 5) | (1 << 6) | (1 << 7) | (0xF << 12)


@st.composite
def machine(draw):
    seed = draw(st.integers(0, 2**32 - 1))
    rng = np.random.default_rng(seed)
    t = Thread()
    t.dest.bits[:] = rng.integers(0, 1 << 16, (1024, 16), dtype=np.uint16)
    t.sfpu.lreg[:8] = rng.integers(0, 1 << 32, (8, 32), dtype=np.uint64).astype(np.uint32)
    if draw(st.booleans()):
        lc = rng.integers(0, 1 << 16, 8, dtype=np.uint32) & LC_BITS
        lc &= rng.integers(0, 1 << 16, 8, dtype=np.uint32)        # sparse
        t.sfpu.lane_config[:] = np.tile(lc, 4) | 2
    if draw(st.booleans()):
        t.sfpu.use_lane_flags[:] = rng.integers(0, 2, 32).astype(bool)
        t.sfpu.lane_flags[:] = rng.integers(0, 2, 32).astype(bool)
    t.rwc["dst"] = draw(st.integers(0, 1023))
    t.rwc["sp"] = draw(st.integers(0, 1023))
    if draw(st.booleans()):
        t.tcfg.set("DEST_TARGET_REG_CFG_MATH_Offset", draw(st.integers(0, 4095)))
        t.tcfg.set("SFPU_STACK_Incr", draw(st.integers(0, 1023)))
        t.core.cfg.set("DEST_REGW_BASE_Base", draw(st.integers(0, 1023)))
        t.core.cfg.set("DEST_SP_BASE_Base", draw(st.integers(0, 1023)))
    t.core.cfg.set("DEST_ACCESS_CFG_remap_addrs", int(draw(st.booleans())))
    t.core.cfg.set("DEST_ACCESS_CFG_swizzle_32b", int(draw(st.booleans())))
    return t


def _compare(t: Thread, ref: RefState) -> None:
    assert t.dest.bits.tolist() == ref.bits
    assert t.sfpu.lreg.tolist() == ref.lreg
    assert t.rwc["sp"] == ref.rwc["sp"]


@settings(max_examples=150, deadline=None)
@given(machine(), st.integers(0, 7), st.integers(1, 15), st.integers(0, 1023))
def test_sfpload_matches_reference(t, vd, mod0, imm10):
    ref = RefState(t)
    ref.load(vd, mod0, imm10)
    execute(t, sfpload(vd, mod0, 7, imm10))
    _compare(t, ref)


@settings(max_examples=150, deadline=None)
@given(machine(), st.integers(0, 11), st.integers(1, 15), st.integers(0, 1023))
def test_sfpstore_matches_reference(t, vd, mod0, imm10):
    ref = RefState(t)
    ref.store(vd, mod0, imm10)
    execute(t, sfpstore(vd, mod0, 7, imm10))
    _compare(t, ref)
