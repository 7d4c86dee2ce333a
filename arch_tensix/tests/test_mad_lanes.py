"""Lane enables, write guards, indirect registers, modes and special cases of the
arithmetic, LUT, conversion and move instructions (spec tensix-sfpu.md §3–§6, §8,
§9, §11, §12, §16)."""

from __future__ import annotations

import numpy as np
import pytest
from tensix_mad_support import (
    SFP_STOCH_RND,
    SFPADDI,
    SFPARECIP,
    SFPCAST,
    SFPCONFIG,
    SFPENCC,
    SFPLOADI,
    SFPLUT,
    SFPLUTFP32,
    SFPMAD,
    SFPMOV,
    SFPMUL24,
    SFPMULI,
    SFPNOP,
    Thread,
    execute,
    f2u,
    fma_ref,
    lanes_of,
    lreg,
    set_lreg,
)

from tessera.control import Trap
from tessera_tensix.fma import fma_wh_exact
from tessera_tensix.semantics.convert import prng_next, seed_prng
from tessera_tensix.semantics.lut import lutfp32_compute, lutfp32_mode

ONE = 0x3F80_0000
SIGN = 0x8000_0000
LANE = list(range(32))


def _vals(seed: int) -> list[int]:
    rng = np.random.default_rng(seed)
    return [f2u(v) for v in rng.uniform(-4, 4, 32)]


def _predicate(t: Thread, enabled: list[bool]) -> None:
    t.sfpu.use_lane_flags[:] = True
    t.sfpu.lane_flags[:] = enabled


# ---------------------------------------------------------------- lane enables (§3.2, §3.3)
def test_sfpmad_writes_only_enabled_lanes():
    t = Thread()
    a, b, c = _vals(1), _vals(2), _vals(3)
    for i, v in enumerate((a, b, c)):
        set_lreg(t, i, v)
    set_lreg(t, 4, 0x1234_5678)
    en = [lane % 3 != 0 for lane in LANE]
    _predicate(t, en)
    execute(t, SFPMAD(0, 1, 2, 4, 0))
    got = lreg(t, 4)
    for lane in LANE:
        want = fma_ref(a[lane], b[lane], c[lane]) if en[lane] else 0x1234_5678
        assert got[lane] == want


def test_row_mask_disables_rows_even_without_predication():
    t = Thread()
    set_lreg(t, 0, ONE)
    t.sfpu.lane_config[:] = 0b0101 << 12                # ROW_MASK: rows 0 and 2 off
    execute(t, SFPADDI(0x4000, 0, 0))                   # += 2.0
    got = lreg(t, 0)
    for lane in LANE:
        assert got[lane] == (ONE if (lane >> 3) in (0, 2) else f2u(3.0))


def test_predication_via_sfpencc_then_flags():
    t = Thread()
    execute(t, SFPENCC(3, 0, 10))                       # enable predication, all lanes active
    t.sfpu.lane_flags[16:] = False
    execute(t, SFPLOADI(2, 0, 0x4040))                  # 3.0 into the active half
    assert lreg(t, 2) == [f2u(3.0)] * 16 + [0] * 16


# ---------------------------------------------------------------- guards (§3.4)
def test_vd_8_to_11_is_a_read_only_write():
    t = Thread()
    with pytest.raises(Trap) as info:
        execute(t, SFPMAD(10, 10, 10, 9, 0), address=0x24)
    assert "read-only" in str(info.value) and "LReg[9]" in str(info.value)
    lenient = Thread(lenient=True)
    before = lenient.sfpu.lreg.copy()
    execute(lenient, SFPMAD(10, 10, 10, 9, 0))
    assert (lenient.sfpu.lreg == before).all()


@pytest.mark.parametrize("word", [SFPMAD(0, 1, 2, 13, 0), SFPADDI(0x3F80, 14, 0),
                                  SFPMUL24(0, 1, 9, 12, 0), SFPLUTFP32(15, 2),
                                  SFP_STOCH_RND(0, 0, 1, 1, 12, 1), SFPCAST(1, 13, 0),
                                  SFPARECIP(0, 1, 14, 0), SFPMOV(1, 15, 0), SFPLUT(12, 4),
                                  SFPLOADI(13, 0, 0x3F80)])
def test_backdoor_template_load(word):
    """VD field 12..15 with DISABLE_BACKDOOR_LOAD = 0: the word becomes a template, no effect."""
    t = Thread()
    set_lreg(t, 1, _vals(5))
    before = t.sfpu.lreg.copy()
    prng = t.sfpu.prng.copy()
    vd = (word >> 20) & 15 if word >> 24 in (0x71, 0x73) else (word >> 4) & 15
    execute(t, word)
    assert (t.sfpu.template[vd - 12] == word).all()
    assert (t.sfpu.lreg == before).all() and (t.sfpu.prng == prng).all()


def test_backdoor_disabled_executes_with_the_write_dropped():
    t = Thread(lenient=True)
    execute(t, SFPCONFIG(1 << 1, 15, 1))                # LaneConfig.DISABLE_BACKDOOR_LOAD = 1
    before = t.sfpu.lreg.copy()
    execute(t, SFP_STOCH_RND(1, 0, 2, 2, 12, 1))        # VD 12: executes, the PRNG still advances
    assert (t.sfpu.template == 0).all()
    assert (t.sfpu.lreg == before).all()
    assert (t.sfpu.prng == prng_next(np.zeros(32, np.uint32))).all()


# ---------------------------------------------------------------- negate and indirect bits (§3.5, E2)
@pytest.mark.parametrize("mod1", [0, 1, 2, 3])
def test_negate_bits(mod1):
    t = Thread()
    a, b, c = _vals(7), _vals(8), _vals(9)
    for i, v in enumerate((a, b, c)):
        set_lreg(t, i, v)
    execute(t, SFPMAD(0, 1, 2, 3, mod1))
    na = SIGN if mod1 & 1 else 0
    nc = SIGN if mod1 & 2 else 0
    assert lreg(t, 3) == [fma_ref(a[i] ^ na, b[i], c[i] ^ nc) for i in LANE]
    # the negation can equally be read as NEGATE_VB (E2): same bits
    assert lreg(t, 3) == [fma_ref(a[i], b[i] ^ na, c[i] ^ nc) for i in LANE]


def test_wormhole_has_no_negate_bits():
    t = Thread(chip="wh")
    a, b, c = _vals(10), _vals(11), _vals(12)
    for i, v in enumerate((a, b, c)):
        set_lreg(t, i, v)
    execute(t, SFPMAD(0, 1, 2, 3, 3))
    assert lreg(t, 3) == [int(v) for v in fma_wh_exact(lanes_of(a), lanes_of(b), lanes_of(c))]


def test_indirect_va_reads_any_lreg_per_lane():
    t = Thread()
    for i in range(7):
        set_lreg(t, i, _vals(20 + i))
    sel = [lane % 16 for lane in LANE]                   # includes constants 8..15
    set_lreg(t, 7, [s | 0x50 for s in sel])             # only bits [3:0] count
    b, c = lreg(t, 1), lreg(t, 2)
    src = t.sfpu.lreg.copy()
    execute(t, SFPMAD(3, 1, 2, 4, 4))
    want = [fma_ref(int(src[sel[L], L]), b[L], c[L]) for L in LANE]
    assert lreg(t, 4) == want


def test_indirect_vd_writes_per_lane_destinations():
    t = Thread()
    set_lreg(t, 0, ONE)
    dest = [L % 7 for L in LANE]                         # 0..6 (never 7 itself)
    set_lreg(t, 7, dest)
    before = t.sfpu.lreg.copy()
    execute(t, SFPADDI(0x4000, 0, 8))                     # source VD field 0; result 3.0
    for L in LANE:
        for r in range(8):
            want = f2u(3.0) if r == dest[L] else int(before[r, L])
            assert int(t.sfpu.lreg[r, L]) == want


def test_indirect_vd_to_a_read_only_lreg_stops_unless_lenient():
    t = Thread()
    set_lreg(t, 7, [9 if L == 5 else 1 for L in LANE])
    with pytest.raises(Trap, match="INDIRECT_VD selects read-only LReg\\[9\\]"):
        execute(t, SFPMAD(10, 10, 10, 0, 8))
    t = Thread(lenient=True)
    set_lreg(t, 7, [9 if L == 5 else 1 for L in LANE])
    execute(t, SFPMAD(10, 10, 10, 0, 8))                 # 1·1 + 1 = 2 where allowed
    assert lreg(t, 1) == [0 if L == 5 else f2u(2.0) for L in LANE]


def test_indirect_vd_to_read_only_in_a_disabled_lane_is_fine():
    t = Thread()
    set_lreg(t, 7, [12 if L == 0 else 2 for L in LANE])
    _predicate(t, [L != 0 for L in LANE])
    execute(t, SFPMAD(10, 10, 9, 0, 8))
    assert lreg(t, 2) == [0] + [ONE] * 31


def test_sfpmul24_indirect_va():
    t = Thread()
    set_lreg(t, 7, [10 if L % 2 else 8 for L in LANE])
    set_lreg(t, 1, 3)
    execute(t, SFPMUL24(0, 1, 9, 2, 4))
    assert lreg(t, 2) == [((0x3F800000 if L % 2 else 0x3F56594B) * 3) & 0x7FFFFF for L in LANE]


# ---------------------------------------------------------------- SFPADD / SFPMUL facts (§4.3)
def test_sfpmul_with_plus_zero_turns_minus_zero_into_plus_zero():
    t = Thread()
    set_lreg(t, 0, f2u(-2.0))
    set_lreg(t, 1, 0)
    execute(t, SFPMAD(0, 1, 9, 2, 0))                    # (-2)·(+0) + (+0) = +0
    execute(t, SFPMAD(0, 1, 9, 3, 2))                    # NEGATE_VC: addend -0 keeps -0
    assert lreg(t, 2) == [0] * 32 and lreg(t, 3) == [SIGN] * 32


def test_specials_nan_is_canonical_and_denormals_are_zero():
    t = Thread()
    set_lreg(t, 0, [0xFFC12345, 0x7F800000, 0x00000001, 0x7F800000] * 8)
    set_lreg(t, 1, [ONE, 0x00400000, 0x7F800000, ONE] * 8)
    set_lreg(t, 2, [0, 0, 0, 0xFF800000] * 8)
    execute(t, SFPMAD(0, 1, 2, 3, 0))
    assert lreg(t, 3) == [0x7FC00000] * 32               # NaN in; Inf·denormal; denormal·Inf; Inf−Inf


def test_denormal_roundup_quirk_example():
    t = Thread()
    set_lreg(t, 0, 0x3188322E)
    set_lreg(t, 1, 0x8E946737)
    set_lreg(t, 2, 0x00DDE7D8)
    execute(t, SFPMAD(0, 1, 2, 3, 0))
    assert lreg(t, 3) == [0x00800000] * 32


# ---------------------------------------------------------------- SFPADDI / SFPMULI (§5)
def test_sfpmuli_reads_and_writes_vd():
    t = Thread()
    set_lreg(t, 6, [f2u(float(L)) for L in LANE])
    execute(t, SFPMULI(0x4000, 6, 0))                    # ×2.0
    assert lreg(t, 6) == [f2u(2.0 * L) for L in LANE]
    execute(t, SFPMULI(0x3F80, 6, 2))                    # ×(1.0) of −VD
    assert lreg(t, 6) == [f2u(-2.0 * L) if L else 0 for L in LANE]   # −0·1 + (+0) = +0


def test_bf16_denormal_immediate_is_zero():
    t = Thread()
    set_lreg(t, 1, f2u(5.0))
    execute(t, SFPADDI(0x0001, 1, 0))
    assert lreg(t, 1) == [f2u(5.0)] * 32


# ---------------------------------------------------------------- SFPLUT / SFPLUTFP32 (§6)
def test_sfplut_pieces_sign_retain_and_indirect():
    t = Thread()
    # piece i uses LReg[i]: a = code[15:8], c = code[7:0]; 0x00 = 1.0, 0x10 = 0.5, 0xFF = +0
    set_lreg(t, 0, 0x00FF)                               # a = 1.0, c = 0   → |x|
    set_lreg(t, 1, 0x1000)                               # a = 0.5, c = 1.0 → |x|/2 + 1
    set_lreg(t, 2, 0x8080)                               # a = -1,  c = -1  → -|x| - 1
    xs = [0.5, -1.5, 3.0, -0.25] * 8
    set_lreg(t, 3, [f2u(x) for x in xs])
    execute(t, SFPLUT(4, 0))
    execute(t, SFPLUT(5, 4))                             # SGN_RETAIN
    plain = [abs(x) if abs(x) < 1 else (abs(x) / 2 + 1 if abs(x) < 2 else -abs(x) - 1) for x in xs]
    assert lreg(t, 4) == [f2u(v) for v in plain]
    assert lreg(t, 5) == [f2u(abs(v) if x >= 0 else -abs(v)) for v, x in zip(plain, xs)]
    set_lreg(t, 7, 6)
    execute(t, SFPLUT(0, 8))                             # INDIRECT_VD → LReg[6]
    assert lreg(t, 6) == lreg(t, 4) and lreg(t, 0) == [0x00FF] * 32


@pytest.mark.parametrize("mod1, mode", [(0, "fp32"), (1, "fp32"), (4, "fp32"), (8, "fp32"),
                                        (12, "fp32"), (2, "fp16x6"), (3, "fp16x6"), (6, "fp16x6"),
                                        (7, "fp16x6"), (10, "fp16x3"), (11, "fp16x3"),
                                        (14, "fp16x3"), (15, "fp16x3")])
def test_lutfp32_mode_selection(mod1, mode):
    assert lutfp32_mode(mod1) == mode


def test_lutfp32_six_entry_tables_pick_halves():
    t = Thread()
    # FP16 1.0 = 0x3C00 → Lut16ToFp32 gives 1.0 (exponent 15 + 112 = 127); exponent 31
    # (0x7C00) reads as zero, so with a = 0 the result is c
    set_lreg(t, 0, 0x7C007C00)
    set_lreg(t, 1, 0x7C007C00)
    set_lreg(t, 2, 0x7C007C00)
    set_lreg(t, 4, (0x4000 << 16) | 0x3C00)              # piece 0: low 1.0, high 2.0
    set_lreg(t, 5, (0x4400 << 16) | 0x4200)              # piece 1: low 3.0, high 4.0
    set_lreg(t, 6, (0x4600 << 16) | 0x4500)              # piece 2: low 5.0, high 6.0
    xs = [0.25, 0.75, 1.25, 1.75, 2.5, 3.5, 4.5, 0.0]
    set_lreg(t, 3, [f2u(x) for x in xs] * 4)
    d2 = lutfp32_compute(t.sfpu.lreg, 2)                 # TABLE1: cut 3.0
    d3 = lutfp32_compute(t.sfpu.lreg, 3)                 # TABLE2: cut 4.0
    assert [int(v) for v in d2[:8]] == [f2u(v) for v in (1, 2, 3, 4, 5, 6, 6, 1)]
    assert [int(v) for v in d3[:8]] == [f2u(v) for v in (1, 2, 3, 4, 5, 5, 6, 1)]
    set_lreg(t, 0, 0x3C000000)                           # piece 0's a: high half 1.0, low half 2^-15
    d2 = lutfp32_compute(t.sfpu.lreg, 2)
    assert int(d2[0]) == f2u(1.0 + 0.25 * 2.0**-15) and int(d2[1]) == f2u(2.0 + 0.75)


def test_lutfp32_mirror_field_is_ignored():
    t = Thread()
    for i in range(7):
        set_lreg(t, i, _vals(40 + i))
    execute(t, SFPLUTFP32(0, 2, mirror=0))
    first = lreg(t, 0)
    for i in range(7):
        set_lreg(t, i, _vals(40 + i))
    execute(t, SFPLUTFP32(0, 2, mirror=2))
    assert lreg(t, 0) == first


# ---------------------------------------------------------------- SFPARECIP (§8)
def test_sfparecip_examples_and_mod1_aliases():
    t = Thread()
    set_lreg(t, 0, [f2u(1.0), f2u(2.0), f2u(-1.0), 0, 0x7F800000, 0x00000001, 0x7E800000, f2u(-2.0)] * 4)
    execute(t, SFPARECIP(0, 0, 1, 0))
    assert lreg(t, 1)[:8] == [0x3F7F0000, 0x3EFF0000, 0xBF7F0000, 0x7F800000, 0, 0x7F800000, 0, 0xBEFF0000]
    execute(t, SFPARECIP(0, 0, 2, 2))
    assert lreg(t, 2)[0] == 0x402D0000 and lreg(t, 2)[3] == ONE
    for mod1 in (3, 9, 15):
        execute(t, SFPARECIP(0, 0, 3, mod1))
        assert lreg(t, 3) == lreg(t, 2)


def test_sfparecip_cond_recip():
    t = Thread()
    set_lreg(t, 0, [f2u(-2.0), f2u(4.0)] * 16)
    set_lreg(t, 1, [SIGN if L % 4 < 2 else 0 for L in LANE])      # −0.0 counts as negative
    execute(t, SFPARECIP(1, 0, 2, 1))
    want = [0x3EFF0000, 0x3E7F0000, f2u(-2.0), f2u(4.0)] * 8        # unsigned reciprocal / copy
    assert lreg(t, 2) == want


# ---------------------------------------------------------------- SFP_STOCH_RND (§9) and the PRNG
def test_stochrnd_advances_the_prng_in_every_mode_for_enabled_lanes_only():
    t = Thread()
    seed_prng(t.sfpu, 0x1234)
    start = t.sfpu.prng.copy()
    _predicate(t, [L < 20 for L in LANE])
    execute(t, SFP_STOCH_RND(0, 0, 1, 1, 2, 1))         # NEAREST still advances
    nxt = prng_next(start)
    assert [int(v) for v in t.sfpu.prng] == [int(nxt[L]) if L < 20 else int(start[L]) for L in LANE]


def test_stochrnd_mode_3_behaves_as_stochastic():
    t = Thread()
    set_lreg(t, 1, [f2u(1.0 + L / 64) for L in LANE])
    seed_prng(t.sfpu, 99)
    state = t.sfpu.prng.copy()
    execute(t, SFP_STOCH_RND(1, 0, 1, 1, 2, 1))
    t.sfpu.prng[:] = state
    execute(t, SFP_STOCH_RND(3, 0, 1, 1, 3, 1))
    assert lreg(t, 2) == lreg(t, 3)


def test_wormhole_stochrnd_rounding_mode_is_one_bit():
    t = Thread(chip="wh", lenient=True)                 # bit 22 is reserved on Wormhole
    set_lreg(t, 1, [f2u(2.75)] * 32)
    execute(t, SFP_STOCH_RND(2, 0, 1, 1, 2, 3))         # [22:21] = 2: NEAREST on Wormhole
    assert lreg(t, 2) == [3] * 32
    b = Thread()
    set_lreg(b, 1, [f2u(2.75)] * 32)
    execute(b, SFP_STOCH_RND(2, 0, 1, 1, 2, 3))         # ZERO on Blackhole (truncates here)
    assert lreg(b, 2) == [2] * 32


def test_stochrnd_nearest_is_half_away_and_zero_mode_bug():
    t = Thread()
    set_lreg(t, 1, [f2u(2.5), f2u(-2.5), 0x3F7FFFFF, 0x3FFFFFFF] * 8)
    execute(t, SFP_STOCH_RND(0, 0, 1, 1, 2, 3))         # INT8, nearest: ties away
    execute(t, SFP_STOCH_RND(2, 0, 1, 1, 3, 3))         # ZERO rounds up all-ones fractions
    assert lreg(t, 2)[:4] == [3, SIGN | 3, 1, 2]
    assert lreg(t, 3)[:4] == [2, SIGN | 2, 1, 2]


def test_stochrnd_int32_shift_from_vb_or_imm5():
    t = Thread()
    set_lreg(t, 1, [SIGN | 1000, 1000, 0x7FFFFFFF, 0] * 8)
    set_lreg(t, 4, 3)
    execute(t, SFP_STOCH_RND(0, 0, 4, 1, 2, 5))         # INT32_TO_INT8, shift LReg[4] & 31 = 3
    execute(t, SFP_STOCH_RND(0, 3, 1, 1, 3, 5 | 8))     # same with Imm5 = 3
    execute(t, SFP_STOCH_RND(0, 2, 1, 1, 5, 4 | 8))     # INT32_TO_UINT8, shift 2
    assert lreg(t, 2)[:4] == [SIGN | 125, 125, 127, 0]
    assert lreg(t, 3) == lreg(t, 2)
    assert lreg(t, 5)[:4] == [250, 250, 255, 0]


def test_prng_seed_model_and_lock_up_free_zero_state():
    t = Thread()
    execute(t, SFPMOV(9, 0, 8))
    assert lreg(t, 0) == [0] * 32 and list(t.sfpu.prng) == [0x80000000] * 32
    seed_prng(t.sfpu, 7)
    assert len(set(int(v) for v in t.sfpu.prng)) == 32


# ---------------------------------------------------------------- SFPCAST (§12)
def test_sfpcast_modes_and_high_mod1_bits():
    t = Thread()
    x = [SIGN | 3, 3, 0x80000000, 0xFFFFFFFF, (1 << 24) + 1, SIGN | ((1 << 24) + 3), 0, 5]
    set_lreg(t, 1, x * 4)
    for mod1, vd in ((0, 2), (2, 3), (3, 4), (4, 5), (7, 6)):
        execute(t, SFPCAST(1, vd, mod1))
    assert lreg(t, 2)[:8] == [f2u(-3.0), f2u(3.0), SIGN, f2u(-(2**31 - 1)), f2u(2.0**24),
                              f2u(-(2.0**24 + 4)), 0, f2u(5.0)]
    assert lreg(t, 3)[:4] == [0x7FFFFFFD, 3, 0x80000000, 1]
    assert lreg(t, 4)[:4] == [0xFFFFFFFD, 3, 0x80000000, 0x80000001]
    assert lreg(t, 5) == lreg(t, 2) and lreg(t, 6) == lreg(t, 4)


def test_sfpcast_prng_only_in_rns_mode():
    t = Thread()
    set_lreg(t, 1, 12345)
    execute(t, SFPCAST(1, 2, 0))
    assert (t.sfpu.prng == 0).all()
    execute(t, SFPCAST(1, 2, 1))
    assert (t.sfpu.prng == 0x80000000).all()
    assert lreg(t, 2) == [f2u(12345.0)] * 32             # exact: no rounding either way


# ---------------------------------------------------------------- SFPLOADI (§11.1)
@pytest.mark.parametrize("mod0, imm, old, want", [
    (0, 0x3FC0, 0, 0x3FC00000), (1, 0x3C00, 0, 0x3F800000), (1, 0x0000, 0, 0x38000000),
    (1, 0xFC00, 0, 0xC7800000), (2, 0x8001, 0, 0x00008001), (4, 0x8001, 0, 0xFFFF8001),
    (4, 0x7FFF, 0, 0x00007FFF), (8, 0xABCD, 0x12345678, 0xABCD5678),
    (10, 0xABCD, 0x12345678, 0x1234ABCD)])
def test_sfploadi_modes(mod0, imm, old, want):
    t = Thread()
    set_lreg(t, 3, old)
    _predicate(t, [L != 31 for L in LANE])
    execute(t, SFPLOADI(3, mod0, imm))
    assert lreg(t, 3) == [want] * 31 + [old]


def test_sfploadi_undefined_mod0_stops_or_does_nothing():
    with pytest.raises(Trap, match="undefined Mod0 3"):
        execute(Thread(), SFPLOADI(0, 3, 0x1234))
    t = Thread(lenient=True)
    execute(t, SFPLOADI(0, 3, 0x1234))
    assert lreg(t, 0) == [0] * 32


# ---------------------------------------------------------------- SFPMOV (§16.1), SFPNOP
def test_sfpmov_plain_negate_and_all_lanes():
    t = Thread()
    set_lreg(t, 1, [f2u(float(L)) for L in LANE])
    _predicate(t, [L < 8 for L in LANE])
    execute(t, SFPMOV(1, 2, 0))
    execute(t, SFPMOV(1, 3, 1))
    execute(t, SFPMOV(1, 4, 2))                          # ALL_LANES_ENABLED ignores predication
    assert lreg(t, 2) == [f2u(float(L)) if L < 8 else 0 for L in LANE]
    assert lreg(t, 3) == [f2u(float(L)) ^ SIGN if L < 8 else 0 for L in LANE]
    assert lreg(t, 4) == lreg(t, 1)


def test_sfpmov_special_sources():
    t = Thread()
    s = t.sfpu
    s.template[:] = np.arange(4, dtype=np.uint32)[:, None] + 0x100
    s.sequence[:] = np.arange(4, dtype=np.uint32)[:, None] + 0x200
    s.misc[:] = 0xABC
    s.lane_config[:] = 0x20100                           # 18 bits; no ROW_MASK, backdoor on
    s.prng[:] = 0x80000000
    got = {}
    for vc in range(16):
        execute(t, SFPMOV(vc, 0, 9))                     # FROM_SPECIAL; bit0 (negate) ignored
        got[vc] = lreg(t, 0)[0]
    assert [got[v] for v in range(8)] == [0x100, 0x101, 0x102, 0x103, 0x200, 0x201, 0x202, 0x203]
    assert got[8] == 0xABC and got[9] == 0x80000000 and got[15] == 0x20100
    assert all(got[v] == 0 for v in range(10, 15))
    assert (s.prng == 0x40000000).all()                 # VC 9 advanced it once


def test_sfpmov_prng_advances_enabled_lanes_only():
    t = Thread()
    t.sfpu.prng[:] = lanes_of([0x12345678] * 32)
    _predicate(t, [L % 2 == 0 for L in LANE])
    execute(t, SFPMOV(9, 1, 8))
    nxt = int(prng_next(np.array([0x12345678], np.uint32))[0])
    assert [int(v) for v in t.sfpu.prng] == [nxt if L % 2 == 0 else 0x12345678 for L in LANE]
    assert lreg(t, 1) == [0x12345678 if L % 2 == 0 else 0 for L in LANE]


def test_sfpnop_changes_nothing():
    t = Thread()
    set_lreg(t, 0, _vals(3))
    before = (t.sfpu.lreg.copy(), t.sfpu.prng.copy(), t.sfpu.lane_flags.copy())
    execute(t, SFPNOP())
    assert (t.sfpu.lreg == before[0]).all() and (t.sfpu.prng == before[1]).all()
    assert (t.sfpu.lane_flags == before[2]).all()


# ---------------------------------------------------------------- through the real decoder
def test_decoded_words_run_the_semantics():
    from tessera.isa import Decoder
    from tessera_tensix.arch import TENSIX_BH

    dec = Decoder(TENSIX_BH)
    t = Thread()
    set_lreg(t, 0, f2u(1.5))
    set_lreg(t, 1, f2u(2.0))
    for addr, word in enumerate([SFPMAD(0, 1, 10, 2, 0), SFP_STOCH_RND(0, 0, 2, 2, 3, 1),
                                 SFPLOADI(4, 0, 0x4040), SFPMOV(4, 5, 1), SFPNOP(),
                                 SFPARECIP(0, 1, 6, 0), SFPCAST(1, 7, 3)]):
        ins = dec.decode(word, 4 * addr)
        ins.run(t, ins)
    assert lreg(t, 2)[0] == f2u(4.0) and lreg(t, 3)[0] == f2u(4.0)
    assert lreg(t, 4)[0] == f2u(3.0) and lreg(t, 5)[0] == f2u(-3.0)
    assert lreg(t, 6)[0] == 0x3EFF0000 and lreg(t, 7)[0] == f2u(2.0)
