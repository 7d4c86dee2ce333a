"""Wormhole B0's FMA (FMA_WH, ``tessera_tensix.fma``) and the MAD-unit instructions that
use it on ``tensix-wh``.

* Every record of ``sfpmad_wh.jsonl`` (17,924, from the vendor's ``fma_model_wh``) runs
  32 at a time through real Wormhole instruction words, as the Blackhole vector test
  does; the 2,078 records where Blackhole differs also run on ``tensix`` and give the
  Blackhole answer there (the chip selects the arithmetic).
* Both implementations (the literal numpy steps and the compiled per-lane loop) on
  every record, and against each other on random and edge-biased lanes.
* SFPADD / SFPMUL / SFPADDI / SFPMULI / SFPLUT / SFPLUTFP32 and the INDIRECT forms
  (which take the uncompiled path) on Wormhole agree with FMA_WH; Wormhole's SFPADDI /
  SFPMULI have no NEGATE_VC.
"""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st
from tensix_mad_support import (
    SFPADD,
    SFPADDI,
    SFPLUT,
    SFPLUTFP32,
    SFPMAD,
    SFPMUL,
    SFPMULI,
    Tally,
    Thread,
    chunks,
    execute,
    group_by,
    h,
    lanes_of,
    lreg,
    set_lreg,
    vectors,
)

from tessera_tensix.fma import WH_NAN, fma_bh_exact, fma_wh, fma_wh_exact
from tessera_tensix.semantics.lut import LUT8, lut_compute, lutfp32_compute, piece

M32 = 0xFFFF_FFFF
LANES = 32
ONE = 0x3F80_0000
SIGN = 0x8000_0000
WORDS = {"SFPMAD": SFPMAD, "SFPADD": SFPADD, "SFPMUL": SFPMUL}
# exponents where FMA_WH's cases change: zero/denormal, the product under/overflow
# boundaries (e_x + e_y around 127 and 382), the E' = 0 edge, Inf/NaN
EDGE_EXPONENTS = [0, 1, 2, 3, 24, 25, 26, 27, 28, 62, 63, 64, 100, 126, 127, 128, 129, 150,
                  190, 191, 192, 250, 251, 252, 253, 254, 255]


def _col(chunk, key):
    return lanes_of([h(r[key]) for r in chunk])


def _wh(triples) -> list[int]:
    a = np.array(triples, dtype=np.uint64).T.astype(np.uint32)
    return [int(v) for v in fma_wh_exact(a[0], a[1], a[2])]


# ---------------------------------------------------------------- the vendor's vectors
def _run_records(recs, chip: str, want_key) -> Tally:
    tally = Tally()
    for n, ((insn, mod1), group) in enumerate(sorted(group_by(recs, "insn", "mod1").items())):
        for i, chunk in enumerate(chunks(group)):
            t = Thread(chip=chip)
            va, vb, vc = (_col(chunk, k) for k in ("va", "vb", "vc"))
            # the vendor's register choices where the chunk allows: VA = LReg[10] (1.0), VC = LReg[9] (+0)
            ra = 10 if insn == "SFPADD" and (va == ONE).all() else 4
            rc = 9 if insn == "SFPMUL" and (vc == 0).all() else 6
            t.sfpu.lreg[4], t.sfpu.lreg[5], t.sfpu.lreg[6] = va, vb, vc
            vd = (i + n) % 8                          # destinations vary, incl. a source register
            execute(t, WORDS[insn](ra, 5, rc, vd, mod1))
            for lane, r in enumerate(chunk):
                tally.check(int(t.sfpu.lreg[vd][lane]), want_key(r), (insn, mod1, r))
    return tally


def test_every_wormhole_record_on_tensix_wh():
    recs = vectors("sfpmad_wh.jsonl")
    assert len(recs) == 17924
    tally = _run_records(recs, "wh", lambda r: h(r["vd"]))
    tally.assert_clean()
    assert tally.records == 17924


def test_records_where_the_chips_differ_give_blackhole_bits_on_tensix():
    recs = [r for r in vectors("sfpmad_wh.jsonl") if "bh" in r]
    assert len(recs) == 2078
    assert all(h(r["bh"]) != h(r["vd"]) for r in recs)
    tally = _run_records(recs, "bh", lambda r: h(r["bh"]))
    tally.assert_clean()
    assert tally.records == 2078


def test_both_implementations_on_every_record():
    recs = vectors("sfpmad_wh.jsonl")
    col = {k: np.array([h(r[k]) for r in recs], dtype=np.uint64).astype(np.uint32)
           for k in ("va", "vb", "vc", "vd")}
    exact = fma_wh_exact(col["va"], col["vb"], col["vc"])
    assert np.array_equal(exact, col["vd"]), np.nonzero(exact != col["vd"])[0][:5]
    fast = fma_wh(np.stack([col["va"], col["vb"], col["vc"]]))
    assert np.array_equal(fast, col["vd"]), np.nonzero(fast != col["vd"])[0][:5]
    # the Blackhole model really differs on the 2,078 (so this file tests something new)
    assert int((fma_bh_exact(col["va"], col["vb"], col["vc"]) != col["vd"]).sum()) == 2078


def test_documented_wormhole_differences_on_hand_picked_operands():
    """One operand triple per difference listed in the vendor's FMA README."""
    cases = [
        # 1·(−1) + 1: exact cancellation; −0 product + −0: signed zeros are +0 on Wormhole
        ((ONE, 0xBF80_0000, ONE), 0, 0),
        ((SIGN, ONE, SIGN), 0, SIGN),
        # Inf · 0: NaN with 0x7F800001 set, not the canonical 0x7FC00000
        ((0x7F80_0000, 0, ONE), None, 0x7FC0_0000),
        # a finite product that overflows plus the opposite infinity: NaN (Blackhole: −Inf)
        ((0x7F00_0000, 0x7F00_0000, 0xFF80_0000), None, 0xFF80_0000),
        # −2^-126·(1 + 2^-23) + 2^-126: a tiny negative difference flushes to +0 (Blackhole −0)
        ((0x0080_0001, 0xBF80_0000, 0x0080_0000), 0, SIGN),
        # 0.5 · −2^-126: exponent field 0 before rounding; +0 here, −0 on Blackhole
        ((0x3F00_0000, 0x8080_0000, 0), 0, SIGN),
    ]
    for (x, y, z), want, bh in cases:
        got = _wh([(x, y, z)])[0]
        if want is None:
            assert got & WH_NAN == WH_NAN and (got >> 23) & 255 == 255 and got & 0x7FFFFF
        else:
            assert got == want, (hex(x), hex(y), hex(z), hex(got))
        assert int(fma_bh_exact(np.uint32(x), np.uint32(y), np.uint32(z))) == bh


# ---------------------------------------------------------------- exact == fast
@st.composite
def fp32(draw) -> int:
    kind = draw(st.integers(0, 3))
    if kind == 0:
        return draw(st.integers(0, M32))
    sign = draw(st.integers(0, 1))
    exp = draw(st.sampled_from(EDGE_EXPONENTS)) if kind == 1 else draw(st.integers(100, 154))
    man = draw(st.sampled_from([0, 1, 2, 3, 0x400000, 0x7FFFFF, 0x7FFFFE, 0x7FFFFD, 0x000FFF])
               if draw(st.booleans()) else st.integers(0, 0x7FFFFF))
    return (sign << 31) | (exp << 23) | man


@settings(max_examples=150, deadline=None)
@given(st.lists(st.tuples(fp32(), fp32(), fp32()), min_size=LANES, max_size=LANES))
def test_fast_path_equals_exact_path(triples):
    xyz = np.array(triples, dtype=np.uint64).T.astype(np.uint32).copy()
    assert [int(v) for v in fma_wh(xyz)] == _wh(triples)


def test_fast_path_equals_exact_path_on_many_random_lanes():
    """2 × 65,536 lanes: random bits, and random bits with edge exponents."""
    rng = np.random.default_rng(2026)
    bits = rng.integers(0, 1 << 32, size=(3, 1 << 16), dtype=np.uint64).astype(np.uint32)
    edge = np.array(EDGE_EXPONENTS, dtype=np.uint32)
    biased = (bits & np.uint32(0x807FFFFF)) | (rng.choice(edge, size=bits.shape) << np.uint32(23))
    for xyz in (bits, biased):
        assert np.array_equal(fma_wh(xyz), fma_wh_exact(xyz[0], xyz[1], xyz[2]))


# ---------------------------------------------------------------- the instructions on Wormhole
lanes32 = st.lists(fp32(), min_size=LANES, max_size=LANES)


@settings(max_examples=40, deadline=None)
@given(lanes32, lanes32, lanes32)
def test_sfpmad_sfpadd_sfpmul_on_wormhole(a, b, c):
    t = Thread(chip="wh")
    for i, v in enumerate((a, b, c)):
        set_lreg(t, i, v)
    execute(t, SFPMAD(0, 1, 2, 3, 0))
    execute(t, SFPADD(10, 1, 2, 4, 0))                  # 1.0 · b + c
    execute(t, SFPMUL(0, 1, 9, 5, 0))                   # a · b + 0
    execute(t, SFPMAD(0, 1, 2, 6, 3))                   # Mod1 bits 1:0 mean nothing here
    assert lreg(t, 3) == _wh(list(zip(a, b, c)))
    assert lreg(t, 4) == _wh([(ONE, y, z) for y, z in zip(b, c)])
    assert lreg(t, 5) == _wh([(x, y, 0) for x, y in zip(a, b)])
    assert lreg(t, 6) == lreg(t, 3)


@settings(max_examples=40, deadline=None)
@given(lanes32, st.integers(0, 0xFFFF), st.sampled_from([0, 2]))
def test_sfpaddi_sfpmuli_on_wormhole_ignore_negate_vc(c, imm, mod1):
    """Wormhole's SFPADDI/SFPMULI pages define only INDIRECT_VD: bit 1 negates nothing."""
    t = Thread(chip="wh")
    set_lreg(t, 1, c)
    set_lreg(t, 2, c)
    execute(t, SFPADDI(imm, 1, mod1))
    execute(t, SFPMULI(imm, 2, mod1))
    assert lreg(t, 1) == _wh([(imm << 16, ONE, v) for v in c])
    assert lreg(t, 2) == _wh([(imm << 16, v, 0) for v in c])


def test_sfpaddi_sfpmuli_differ_between_the_chips_where_the_models_do():
    """Signed zeros, the denormal edge and NEGATE_VC: each chip gives its own bits."""
    got = {}
    for chip in ("wh", "bh"):
        t = Thread(chip=chip)
        set_lreg(t, 1, SIGN)                            # −0
        set_lreg(t, 2, 0x8080_0000)                     # −2^-126
        set_lreg(t, 3, ONE)
        execute(t, SFPADDI(0x8000, 1, 0))               # −0 · 1.0 + (−0)
        execute(t, SFPMULI(0x3F00, 2, 0))               # 0.5 · −2^-126 + 0
        execute(t, SFPADDI(0x3F80, 3, 2))               # 1.0 · 1.0 + (−1.0) on Blackhole only
        got[chip] = (lreg(t, 1)[0], lreg(t, 2)[0], lreg(t, 3)[0])
    assert got["wh"] == (0, 0, 0x4000_0000)
    assert got["bh"] == (SIGN, SIGN, 0)


@settings(max_examples=30, deadline=None)
@given(lanes32, lanes32, lanes32, st.lists(st.integers(0, 15), min_size=LANES, max_size=LANES))
def test_indirect_forms_on_wormhole_use_fma_wh(a, b, c, sel):
    """INDIRECT_VA (Mod1 4) and INDIRECT_VD (Mod1 8) take the uncompiled path."""
    t = Thread(chip="wh")
    for i, v in enumerate((a, b, c)):
        set_lreg(t, i, v)
    set_lreg(t, 7, sel)
    src = t.sfpu.lreg.copy()
    execute(t, SFPMAD(3, 1, 2, 4, 4))
    assert lreg(t, 4) == _wh([(int(src[s, L]), b[L], c[L]) for L, s in enumerate(sel)])
    set_lreg(t, 7, [L % 7 for L in range(LANES)])       # destinations 0..6
    before = t.sfpu.lreg.copy()
    execute(t, SFPMAD(0, 1, 2, 0, 8))
    want = _wh([(int(before[0, L]), int(before[1, L]), int(before[2, L])) for L in range(LANES)])
    assert [int(t.sfpu.lreg[L % 7, L]) for L in range(LANES)] == want


def test_wormhole_fast_path_respects_lane_enables():
    t = Thread(chip="wh")
    a = [SIGN] * LANES                                  # −0 · 1 + (−0): +0 where executed
    set_lreg(t, 0, a)
    set_lreg(t, 1, ONE)
    set_lreg(t, 2, SIGN)
    set_lreg(t, 3, 0x1234_5678)
    enabled = [L % 3 != 0 for L in range(LANES)]
    t.sfpu.use_lane_flags[:] = True
    t.sfpu.lane_flags[:] = enabled
    execute(t, SFPMAD(0, 1, 2, 3, 0))
    assert lreg(t, 3) == [0 if e else 0x1234_5678 for e in enabled]


@settings(max_examples=30, deadline=None)
@given(st.lists(lanes32, min_size=7, max_size=7), st.sampled_from([0, 4]))
def test_sfplutfp32_fp32_table_on_wormhole_is_fma_wh(regs, mod1):
    t = Thread(chip="wh")
    for i, v in enumerate(regs):
        set_lreg(t, i, v)
    b, i = piece(t.sfpu.lreg[3])
    lane = np.arange(LANES)
    d = fma_wh_exact(t.sfpu.lreg[i, lane], b, t.sfpu.lreg[4 + i, lane])
    if mod1 & 4:                                         # SGN_RETAIN
        d = (d & np.uint32(0x7FFF_FFFF)) | (t.sfpu.lreg[3] & np.uint32(SIGN))
    assert np.array_equal(lutfp32_compute(t.sfpu.lreg, mod1, wh=True), d)
    execute(t, SFPLUTFP32(7, mod1, mirror=0))
    assert lreg(t, 7) == [int(v) for v in d]


def test_sfplut_on_wormhole_is_fma_wh():
    """SFPLUT with 8-bit coefficients (−1, +1), (+1, −1), (+0, +0): some lanes cancel."""
    t = Thread(chip="wh")
    coeff = [0x8000, 0x0080, 0xFFFF]
    for k, v in enumerate(coeff):
        set_lreg(t, k, v)
    l3 = [0x3F80_0000 * (L % 2) + 0x3F00_0000 * (L % 3 == 0) for L in range(LANES)]
    set_lreg(t, 3, l3)
    b, i = piece(t.sfpu.lreg[3])
    c = t.sfpu.lreg[i, np.arange(LANES)]
    want = fma_wh_exact(LUT8[(c >> 8) & 0xFF], b, LUT8[c & 0xFF])
    assert np.array_equal(lut_compute(t.sfpu.lreg, 0, wh=True), want)
    execute(t, SFPLUT(5, 0))
    assert lreg(t, 5) == [int(v) for v in want]
    assert 0 in lreg(t, 5) and ONE in lreg(t, 5)


def test_sfplutfp32_signed_zero_differs_between_the_chips():
    """−0 · 0.5 + (−0) from the FP32 table: +0 on Wormhole, −0 on Blackhole."""
    for chip, want in (("wh", 0), ("bh", SIGN)):
        t = Thread(chip=chip)
        set_lreg(t, 0, SIGN)
        set_lreg(t, 4, SIGN)
        set_lreg(t, 3, 0x3F00_0000)                     # 0.5: piece 0
        execute(t, SFPLUTFP32(7, 0, mirror=0))
        assert lreg(t, 7) == [want] * LANES
