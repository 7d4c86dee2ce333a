"""SFPSWAP (§13.2, E16), SFPSHFT2 every mode (§14.1), SFPTRANSP (§14.2)."""

from __future__ import annotations

import pytest
from tensix_ctl_support import (
    M32,
    SFPSHFT2,
    SFPSHFT2_IMM,
    SFPSWAP,
    SFPTRANSP,
    Thread,
    enable_predication,
    execute,
    lreg,
    set_lreg,
    sm_key,
)

from tessera.control import Trap

LANE = list(range(32))
MIN_ROWS = {1: {0, 1, 2, 3}, 2: {0, 1}, 3: {0, 2}, 4: {0, 3}, 5: {0}, 6: {1}, 7: {2}, 8: {3}, 9: set()}


def _vals():
    c = [((L * 2654435761) >> 3) & M32 for L in LANE]
    d = [((L * 40503 + 17) * 2246822519 >> 5) & M32 for L in LANE]
    c[3] = d[3]                                            # a tie
    c[27] = d[27]
    return c, d


# ---------------------------------------------------------------- SFPSWAP
def test_swap_unconditional():
    t = Thread()
    set_lreg(t, 1, LANE)
    set_lreg(t, 2, [100 + L for L in LANE])
    execute(t, SFPSWAP(1, 2, 0))
    assert lreg(t, 1) == [100 + L for L in LANE] and lreg(t, 2) == LANE


@pytest.mark.parametrize("mod1", range(1, 10))
def test_swap_min_max_modes(mod1):
    c, d = _vals()
    t = Thread()
    set_lreg(t, 1, c)                                      # VC
    set_lreg(t, 2, d)                                      # VD
    execute(t, SFPSWAP(1, 2, mod1))
    for L in LANE:
        lo, hi = sorted((c[L], d[L]), key=sm_key)
        if (L >> 3) in MIN_ROWS[mod1]:
            assert (lreg(t, 2)[L], lreg(t, 1)[L]) == (lo, hi)
        else:
            assert (lreg(t, 2)[L], lreg(t, 1)[L]) == (hi, lo)


def test_swap_float_total_order():
    c = [0x3F80_0000, 0xBF80_0000, 0x8000_0000, 0x7FC0_0000] * 8     # 1, -1, -0, NaN
    d = [0x4000_0000, 0x0000_0000, 0x0000_0000, 0x7F80_0000] * 8     # 2, +0, +0, Inf
    t = Thread()
    set_lreg(t, 1, c)
    set_lreg(t, 2, d)
    execute(t, SFPSWAP(1, 2, 1))                           # VD = min
    assert lreg(t, 2)[:4] == [0x3F80_0000, 0xBF80_0000, 0x8000_0000, 0x7F80_0000]
    assert lreg(t, 1)[:4] == [0x4000_0000, 0x0000_0000, 0x0000_0000, 0x7FC0_0000]


def test_swap_ties_swap_when_vd_gets_max_e16():
    t = Thread()
    set_lreg(t, 4, [7] * 32)                               # index registers tell who moved
    set_lreg(t, 5, [9] * 32)
    set_lreg(t, 0, [5] * 32)
    set_lreg(t, 1, [5] * 32)                               # equal values
    t.sfpu.lane_config[:] = 1 << 2                         # ENABLE_DEST_INDEX
    execute(t, SFPSWAP(1, 0, 9))                           # VD gets max: swap on ties
    assert lreg(t, 4) == [9] * 32 and lreg(t, 5) == [7] * 32
    execute(t, SFPSWAP(1, 0, 1))                           # VD gets min: no swap on ties
    assert lreg(t, 4) == [9] * 32


def test_swap_argmax_moves_indices():
    vals0 = [L for L in LANE]
    vals1 = [31 - L for L in LANE]
    t = Thread()
    set_lreg(t, 0, vals0)
    set_lreg(t, 1, vals1)
    set_lreg(t, 4, [1000 + L for L in LANE])
    set_lreg(t, 5, [2000 + L for L in LANE])
    t.sfpu.lane_config[:] = 1 << 2
    execute(t, SFPSWAP(1, 0, 9))                           # VD (L0) gets max, L4/L5 follow
    for L in LANE:
        moved = vals1[L] >= vals0[L]
        assert lreg(t, 0)[L] == max(vals0[L], vals1[L])
        assert lreg(t, 1)[L] == min(vals0[L], vals1[L])
        assert lreg(t, 4)[L] == (2000 + L if moved else 1000 + L)
        assert lreg(t, 5)[L] == (1000 + L if moved else 2000 + L)


def test_swap_dest_index_only_writes_values_below_4():
    t = Thread()
    set_lreg(t, 6, [3] * 32)                               # VC = 6 (not a value register)
    set_lreg(t, 1, [1] * 32)
    t.sfpu.lane_config[:] = 1 << 2
    set_lreg(t, 5, [55] * 32)                              # 4 + (1 & 3)
    set_lreg(t, 6, [3] * 32)
    execute(t, SFPSWAP(6, 1, 9))                           # VD=1 gets max: 3 >= 1 → swap
    assert lreg(t, 1) == [3] * 32                          # VD < 4 written
    # VC = 6 is not < 4: its value write is dropped, but it is also index register 4+(6&3)=6,
    # which swaps with 4+(1&3)=5
    assert lreg(t, 6) == [55] * 32 and lreg(t, 5) == [3] * 32


def test_swap_exchange_srcb_srcc_inverts():
    t = Thread()
    set_lreg(t, 1, [5] * 32)
    set_lreg(t, 2, [9] * 32)
    t.sfpu.lane_config[:] = [(1 << 8) if L < 8 else 0 for L in LANE]
    execute(t, SFPSWAP(1, 2, 1))                           # VD gets min; row 0 inverted
    assert lreg(t, 2) == [9 if L < 8 else 5 for L in LANE]


def test_swap_respects_lane_enable_and_constant_source():
    t = Thread()
    set_lreg(t, 1, [L - 16 for L in LANE])
    enable_predication(t)
    t.sfpu.lane_flags[:] = [L % 2 == 0 for L in LANE]
    execute(t, SFPSWAP(9, 1, 9))                           # VD = max(VD, 0), LReg[9] stays 0
    assert lreg(t, 1) == [0 if (L % 2 == 0 and L - 16 < 0) else (L - 16) & M32 for L in LANE]
    assert lreg(t, 9) == [0] * 32


def test_swap_reserved_modes():
    t = Thread()
    with pytest.raises(Trap, match="sfpswap: Mod1=12 is reserved"):
        execute(t, SFPSWAP(1, 2, 12))
    t = Thread(lenient=True)
    set_lreg(t, 1, [9] * 32)
    set_lreg(t, 2, [5] * 32)
    execute(t, SFPSWAP(1, 2, 12))                          # acts as 9: VD gets the max
    assert lreg(t, 2) == [9] * 32 and lreg(t, 1) == [5] * 32


def test_swap_backdoor():
    t = Thread()
    word = SFPSWAP(1, 14, 1)
    execute(t, word)
    assert [int(x) for x in t.sfpu.template[2]] == [word] * 32


# ---------------------------------------------------------------- SFPSHFT2
def _four(t):
    for r in range(4):
        set_lreg(t, r, [100 * (r + 1) + L for L in LANE])


def test_shft2_copy4():
    t = Thread()
    _four(t)
    execute(t, SFPSHFT2(0, 0, 5, 0))                       # VD is irrelevant (only backdoor)
    assert [lreg(t, r) for r in range(4)] == [[100 * (r + 2) + L for L in LANE] for r in range(3)] + [[0] * 32]
    assert lreg(t, 5) == [0] * 32


def test_shft2_chained_copy4_moves_l0_up_a_row():
    t = Thread()
    _four(t)
    execute(t, SFPSHFT2(0, 0, 0, 1))
    assert lreg(t, 0) == [200 + L for L in LANE]
    assert lreg(t, 3) == [100 + L + 8 if L < 24 else 0 for L in LANE]


def test_shft2_ror_and_copy4():
    t = Thread()
    _four(t)
    set_lreg(t, 6, [1000 + L for L in LANE])
    execute(t, SFPSHFT2(0, 6, 0, 2))
    assert lreg(t, 2) == [400 + L for L in LANE]
    assert lreg(t, 3) == [1000 + (L - 1 if L & 7 else L + 7) for L in LANE]


def test_shft2_ror1_and_shr1():
    t = Thread()
    set_lreg(t, 6, [1000 + L for L in LANE])
    execute(t, SFPSHFT2(0, 6, 4, 3))
    assert lreg(t, 4) == [1000 + (L - 1 if L & 7 else L + 7) for L in LANE]
    execute(t, SFPSHFT2(0, 6, 5, 4))
    assert lreg(t, 5) == [1000 + L - 1 if L & 7 else 0 for L in LANE]
    execute(t, SFPSHFT2(0, 6, 6, 3))                       # in place: sources sampled first
    assert lreg(t, 6) == [1000 + (L - 1 if L & 7 else L + 7) for L in LANE]


def test_shft2_shr1_wormhole_bug():
    t = Thread(chip="wh")
    set_lreg(t, 6, [1000 + L for L in LANE])
    set_lreg(t, 1, [50 + L for L in LANE])
    execute(t, SFPSHFT2(0, 1, 7, 3))                       # vc0 = LReg[1] sampled by a ROR1
    execute(t, SFPSHFT2(0, 6, 5, 4))
    assert lreg(t, 5) == [1000 + L - 1 if L & 7 else 50 + L + 7 for L in LANE]


def test_shft2_shift_modes():
    t = Thread()
    set_lreg(t, 1, [0, 1, 31, 32, -1, -31, -32, 4] * 4)
    set_lreg(t, 2, [0x8000_0001] * 32)
    execute(t, SFPSHFT2(2, 1, 3, 5))                       # VD = VB shifted by VC
    x = 0x8000_0001
    want = [x, (x << 1) & M32, (x << 31) & M32, x, x >> 1, x >> 31, x, (x << 4) & M32] * 4
    assert lreg(t, 3) == want
    execute(t, SFPSHFT2_IMM(-3 & 0xFFF, 4))                # Imm12 = -3: VB = -3 & 15 = 13
    assert lreg(t, 4) == [0xBF2C_C4C7 >> 3] * 32
    execute(t, SFPSHFT2_IMM(0x22, 5))                      # VB = 2, shift left by 2
    assert lreg(t, 5) == [(x << 2) & M32] * 32


def test_shft2_predicated_rows():
    t = Thread()
    _four(t)
    t.sfpu.lane_config[:] = 0b0101 << 12                   # ROW_MASK rows 0 and 2 off
    execute(t, SFPSHFT2(0, 0, 0, 0))
    assert lreg(t, 0) == [(200 if (L >> 3) in (1, 3) else 100) + L for L in LANE]
    assert lreg(t, 3) == [0 if (L >> 3) in (1, 3) else 400 + L for L in LANE]


def test_shft2_reserved_mode():
    t = Thread()
    with pytest.raises(Trap, match="sfpshft2: Mod1=7 is reserved"):
        execute(t, SFPSHFT2(0, 0, 0, 7))
    t = Thread(lenient=True)
    _four(t)
    execute(t, SFPSHFT2(0, 0, 0, 9))
    assert lreg(t, 0) == [100 + L for L in LANE]


def test_shft2_write_to_constant_stops():
    t = Thread()
    with pytest.raises(Trap, match=r"read-only LReg\[10\]"):
        execute(t, SFPSHFT2(0, 1, 10, 3))


# ---------------------------------------------------------------- SFPTRANSP
def test_transp_both_groups():
    t = Thread()
    for reg in range(8):
        set_lreg(t, reg, [1000 * reg + L for L in LANE])
    execute(t, SFPTRANSP())
    for base in (0, 4):
        for i in range(4):
            for r in range(4):
                for c in range(8):
                    assert lreg(t, base + i)[8 * r + c] == 1000 * (base + r) + 8 * i + c


def test_transp_twice_is_identity_and_respects_enable():
    t = Thread()
    for reg in range(8):
        set_lreg(t, reg, [1000 * reg + L for L in LANE])
    execute(t, SFPTRANSP())
    execute(t, SFPTRANSP())
    assert [lreg(t, r) for r in range(8)] == [[1000 * r + L for L in LANE] for r in range(8)]
    enable_predication(t)
    t.sfpu.lane_flags[:] = [L != 9 for L in LANE]          # lane 9 = row 1, column 1 disabled
    execute(t, SFPTRANSP())
    assert lreg(t, 0)[9] == 9                               # kept (would be 1000*1 + 1)
    assert lreg(t, 1)[1] == 1000 * 0 + 9                    # lane 1 (row 0) written
