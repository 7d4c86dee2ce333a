"""Vector data movement (spec 4.5): VEX, VEINS, VSHUF, VSLLV(I), VSRLV(I), VCMPRSS."""

from __future__ import annotations

import pytest
from fpvec_support import F1, M32, F, r1, r2, run, thread, v, vget, vset

from tessera.control import Trap
from tessera_phoenix import causes

SEQ = [0x100 + i for i in range(16)]


@pytest.fixture
def t():
    th = thread()
    vset(th, 1, SEQ)
    return th


# ---------------------------------------------------------------------------- VEX

def test_fpvec_vex_to_scalar(t):
    t.wr(2, 5)
    run(t, "vex", r2(F["vex"], 3, v(1), 2))
    assert t.rd(3, 0) == 0x105
    t.wr(2, 16 + 3)                                  # index taken modulo E
    run(t, "vex", r2(F["vex"], 3, v(1), 2))
    assert t.rd(3, 0) == 0x103
    t.wr(2, M32)                                     # unsigned: 2^32-1 mod 16 = 15
    run(t, "vex", r2(F["vex"], 3, v(1), 2))
    assert t.rd(3, 0) == 0x10F


def test_fpvec_vex_broadcast_masked(t):
    t.wr(2, 9)
    vset(t, 4, [7] * 16)
    t.wr(50, 0x8001)
    run(t, "vex", r2(F["vex"], v(4), v(1), 2, mask=50))
    assert vget(t, 4) == [0x109] + [7] * 14 + [0x109]


def test_fpvec_vex_w64_low_half_to_scalar(t):
    vset(t, 1, [(0xAAAA_0000 + i) << 32 | (0x5555_0000 + i) for i in range(8)], w=64)
    t.wr(2, 3)
    run(t, "vex", r2(F["vex"], 3, v(1), 2, sz=3))
    assert t.rd(3, 0) == 0x5555_0003
    t.wr(2, 11)                                      # E = 8 at W = 64
    run(t, "vex", r2(F["vex"], 3, v(1), 2, sz=3))
    assert t.rd(3, 0) == 0x5555_0003


def test_fpvec_vex_to_r0_discarded(t):
    t.wr(2, 1)
    run(t, "vex", r2(F["vex"], 0, v(1), 2))
    assert t.rd(0, 0) == 0


# ---------------------------------------------------------------------------- VEINS

def test_fpvec_veins_inserts_one_element(t):
    t.wr(2, 6)
    t.wr(3, 0xCAFE)
    run(t, "veins", r2(F["veins"], v(1), 3, 2))
    expect = list(SEQ)
    expect[6] = 0xCAFE
    assert vget(t, 1) == expect


def test_fpvec_veins_respects_mask(t):
    t.wr(2, 6)
    t.wr(3, 0xCAFE)
    t.wr(50, ~(1 << 6) & M32)                        # element 6's lane disabled
    run(t, "veins", r2(F["veins"], v(1), 3, 2, mask=50))
    assert vget(t, 1) == SEQ


def test_fpvec_veins_w16(t):
    vset(t, 1, [0] * 32, w=16)
    t.wr(2, 33)                                      # 33 mod 32 = element 1 (upper half of lane 0)
    t.wr(3, 0x1234_BEEF)
    run(t, "veins", r2(F["veins"], v(1), 3, 2, sz=1))
    assert vget(t, 1) == [0xBEEF << 16] + [0] * 15


def test_fpvec_veins_scalar_destination_is_unimp(t):
    with pytest.raises(Trap) as info:
        run(t, "veins", r2(F["veins"], 4, 3, 2))
    assert info.value.cause == causes.UNIMP


# ---------------------------------------------------------------------------- VSHUF

def test_fpvec_vshuf_permutes(t):
    idx = [(5 * i + 3) % 16 for i in range(16)]
    idx[0] = 16 + 2                                  # modulo E
    vset(t, 2, idx)
    run(t, "vshuf", r2(F["vshuf"], v(3), v(1), v(2)))
    assert vget(t, 3) == [SEQ[i % 16] for i in idx]


def test_fpvec_vshuf_masked_and_scalar_index(t):
    vset(t, 3, [0] * 16)
    t.wr(2, 4)                                       # scalar index: broadcast element 4
    t.wr(50, 0x0F00)
    run(t, "vshuf", r2(F["vshuf"], v(3), v(1), 2, mask=50))
    assert vget(t, 3) == [0] * 8 + [0x104] * 4 + [0] * 4


def test_fpvec_vshuf_reverse_w16(t):
    vset(t, 1, list(range(32)), w=16)
    vset(t, 2, list(range(31, -1, -1)), w=16)
    run(t, "vshuf", r2(F["vshuf"], v(3), v(1), v(2), sz=1))
    assert vget(t, 3, w=16) == list(range(31, -1, -1))


# ---------------------------------------------------------------------------- element shifts

@pytest.mark.parametrize("n", [0, 1, 2, 15, 16, 63])
def test_fpvec_vsllvi(t, n):
    run(t, "vsllvi", r2(F["vsllvi"], v(3), v(1), n))
    assert vget(t, 3) == [SEQ[i - n] if i >= n else 0 for i in range(16)]


@pytest.mark.parametrize("n", [0, 1, 2, 15, 16, 63])
def test_fpvec_vsrlvi(t, n):
    run(t, "vsrlvi", r2(F["vsrlvi"], v(3), v(1), n))
    assert vget(t, 3) == [SEQ[i + n] if i + n < 16 else 0 for i in range(16)]


@pytest.mark.parametrize("n", [0, 3, 16, 17, 0xFFFF_FFFF])
def test_fpvec_vsllv_vsrlv_register_count(t, n):
    t.wr(2, n)
    run(t, "vsllv", r2(F["vsllv"], v(3), v(1), 2))
    assert vget(t, 3) == [SEQ[i - n] if i >= n else 0 for i in range(16)]
    run(t, "vsrlv", r2(F["vsrlv"], v(4), v(1), 2))
    assert vget(t, 4) == [SEQ[i + n] if i + n < 16 else 0 for i in range(16)]


def test_fpvec_vsllv_count_from_vector_element0(t):
    vset(t, 2, [2, 9, 9, 9])
    run(t, "vsllv", r2(F["vsllv"], v(3), v(1), v(2)))
    assert vget(t, 3) == [0, 0] + SEQ[:14]


def test_fpvec_element_shift_units_follow_w(t):
    run(t, "vsllvi", r2(F["vsllvi"], v(3), v(1), 1, sz=3))   # one 64-bit element = two lanes
    assert vget(t, 3) == [0, 0] + SEQ[:14]
    vset(t, 5, list(range(32)), w=16)
    run(t, "vsrlvi", r2(F["vsrlvi"], v(6), v(5), 3, sz=1))
    assert vget(t, 6, w=16) == list(range(3, 32)) + [0, 0, 0]


def test_fpvec_element_shift_masks(t):
    vset(t, 3, [0xEE] * 16)
    t.wr(50, 0)
    run(t, "vsllvi", r2(F["vsllvi"], v(3), v(1), 1, mask=50))   # all-zero mask: nothing
    assert vget(t, 3) == [0xEE] * 16
    t.wr(50, M32)
    run(t, "vsllvi", r2(F["vsllvi"], v(3), v(1), 1, mask=50))   # all-one mask: everything
    assert vget(t, 3) == [0] + SEQ[:15]


def test_fpvec_element_shift_in_place(t):
    run(t, "vsrlvi", r2(F["vsrlvi"], v(1), v(1), 4))            # Vt = Va: reads before writes
    assert vget(t, 1) == SEQ[4:] + [0] * 4


# ---------------------------------------------------------------------------- VCMPRSS

def test_fpvec_vcmprss_packs_selected(t):
    vset(t, 3, [0x77] * 16)
    t.wr(50, 0b1000_0000_0010_0110)
    run(t, "vcmprss", r1(F1["vcmprss"], v(3), v(1), mask=50))
    assert vget(t, 3) == [0x101, 0x102, 0x105, 0x10F] + [0] * 12   # every lane of Vt written


def test_fpvec_vcmprss_all_zero_mask_clears(t):
    vset(t, 3, [0x77] * 16)
    t.wr(50, 0)
    run(t, "vcmprss", r1(F1["vcmprss"], v(3), v(1), mask=50))
    assert vget(t, 3) == [0] * 16


def test_fpvec_vcmprss_unmasked_copies(t):
    run(t, "vcmprss", r1(F1["vcmprss"], v(3), v(1)))
    assert vget(t, 3) == SEQ
    t.wr(50, M32)
    run(t, "vcmprss", r1(F1["vcmprss"], v(4), v(1), mask=50))
    assert vget(t, 4) == SEQ


def test_fpvec_vcmprss_w64_uses_lowest_lane_bit(t):
    vset(t, 1, [0x1000 + i for i in range(8)], w=64)
    t.wr(50, 0b0000_0000_0100_1001)                  # lanes 0, 3, 6 -> elements 0, 3 (lane 6)
    run(t, "vcmprss", r1(F1["vcmprss"], v(3), v(1), sz=3, mask=50))
    assert vget(t, 3, w=64) == [0x1000, 0x1003] + [0] * 6


def test_fpvec_vcmprss_scalar_destination(t):
    t.wr(50, 0b100)
    run(t, "vcmprss", r1(F1["vcmprss"], 5, v(1), mask=50))
    assert t.rd(5, 0) == 0x102


def test_fpvec_vector_ops_with_four_lanes():
    t4 = thread(lanes=4)
    vset(t4, 1, [10, 11, 12, 13])
    t4.wr(2, 6)                                      # 6 mod 4 = 2
    run(t4, "vex", r2(F["vex"], 3, v(1), 2))
    assert t4.rd(3, 0) == 12
    run(t4, "vsrlvi", r2(F["vsrlvi"], v(3), v(1), 1))
    assert vget(t4, 3) == [11, 12, 13, 0]
    t4.wr(50, 0b1010)
    run(t4, "vcmprss", r1(F1["vcmprss"], v(4), v(1), mask=50))
    assert vget(t4, 4) == [11, 13, 0, 0]
