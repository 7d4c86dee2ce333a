"""FCMP / FCMPI (spec 4.2, N codes of 3.4) and FBcc (spec 4.7)."""

from __future__ import annotations

import math

import pytest
from fpvec_support import (
    M32,
    f16,
    f32,
    fbcc_word,
    fcmp_word,
    fcmpi_word,
    run,
    thread,
    v,
    vget,
    vset,
)
from phoenix_support import skipped_when_lenient

from tessera.control import Trap
from tessera_phoenix import causes

NAN = float("nan")
INF = float("inf")


def relation(n: int, a: float, b: float) -> int:
    """The spec's meaning of compare code N (3.4), written from the table."""
    unordered = math.isnan(a) or math.isnan(b)
    table = {
        0: not unordered and a == b,
        1: not unordered and a < b,
        2: not unordered and a <= b,
        4: unordered,
        5: unordered or a != b,
        9: not unordered and a >= b,
        10: not unordered and a > b,
        12: not unordered,
    }
    return int(table.get(n, False))


PAIRS = [(1.0, 2.0), (2.0, 1.0), (3.0, 3.0), (0.0, -0.0), (-1.0, 1.0), (-INF, INF), (INF, INF),
         (NAN, 1.0), (1.0, NAN), (NAN, NAN), (-5.0, -7.0), (1e-45, 0.0)]


@pytest.fixture
def t():
    return thread()


@pytest.mark.parametrize("n", [0, 1, 2, 4, 5, 9, 10, 12])
@pytest.mark.parametrize("a, b", PAIRS)
def test_fpvec_fcmp_each_n_scalar(t, n, a, b):
    t.wr(1, f32(a))
    t.wr(2, f32(b))
    t.wr(3, 0x5555)
    run(t, "fcmp", fcmp_word(n, 3, 1, 2))
    assert t.rd(3, 0) == relation(n, a, b)


@pytest.mark.parametrize("n", [6, 7, 8, 13, 14])
def test_fpvec_fcmp_undefined_codes_read_zero(t, n):
    for a, b in PAIRS:
        t.wr(1, f32(a))
        t.wr(2, f32(b))
        run(t, "fcmp", fcmp_word(n, 3, 1, 2))
        assert t.rd(3, 0) == 0


@pytest.mark.parametrize("a, b", PAIRS)
def test_fpvec_fcmp_magnitude_codes(t, a, b):
    t.wr(1, f32(a))
    t.wr(2, f32(b))
    run(t, "fcmp", fcmp_word(3, 3, 1, 2))
    lt = t.rd(3, 0)
    run(t, "fcmp", fcmp_word(11, 3, 1, 2))
    ge = t.rd(3, 0)
    assert lt + ge == 1                              # exactly one (NaN compares as the largest magnitude)
    if not (math.isnan(a) or math.isnan(b)):
        assert lt == int(abs(a) < abs(b))


@pytest.mark.parametrize("a, b", PAIRS)
def test_fpvec_fcmp_full_vector(t, a, b):
    t.wr(1, f32(a))
    t.wr(2, f32(b))
    run(t, "fcmp", fcmp_word(15, 3, 1, 2))
    rel = t.rd(3, 0)
    for n in (0, 1, 2, 4, 5, 9, 10, 12):
        assert (rel >> n) & 1 == relation(n, a, b)
    assert rel & ~0x1E3F == 0                        # only bits 0-5, 9-12 can be set
    assert rel >> 3 & 1 != rel >> 11 & 1


def test_fpvec_fcmp_vector_destination_masked(t):
    vset(t, 1, [f32(float(i)) for i in range(16)])
    vset(t, 2, [f32(7.5)] * 16)
    vset(t, 3, [0xAAAA] * 16)
    t.wr(50, 0xF0F0)
    run(t, "fcmp", fcmp_word(1, v(3), v(1), v(2), mask=50))          # LT
    out = vget(t, 3)
    for i in range(16):
        assert out[i] == (int(i < 7.5) if (0xF0F0 >> i) & 1 else 0xAAAA)


def test_fpvec_fcmp_scalar_destination_packs_elements(t):
    vset(t, 1, [f32(float(i)) for i in range(15)] + [f32(NAN)])
    t.wr(2, f32(4.0))
    t.wr(50, 0x000F)                                 # the mask does not apply to scalars
    run(t, "fcmp", fcmp_word(2, 3, v(1), 2, mask=50))                # LE, vector vs broadcast
    assert t.rd(3, 0) == 0b11111                     # elements 0..4
    run(t, "fcmp", fcmp_word(5, 3, v(1), 2))                         # NE-or-unordered
    assert t.rd(3, 0) == 0xFFFF & ~(1 << 4)
    run(t, "fcmp", fcmp_word(15, 3, v(1), 2))                        # N = 15 packs EQ
    assert t.rd(3, 0) == 1 << 4


def test_fpvec_fcmp_binary16_elements(t):
    vset(t, 1, [f16(float(i)) for i in range(32)], w=16)
    t.wr(2, f16(20.0))
    run(t, "fcmp", fcmp_word(10, 3, v(1), 2, sz=1))                  # GT
    assert t.rd(3, 0) == (M32 << 21) & M32           # elements 21..31


def test_fpvec_fcmp_scalar_binary16(t):
    t.wr(1, 0xFFFF_0000 | f16(-1.0))
    t.wr(2, f16(0.5))
    run(t, "fcmp", fcmp_word(1, 3, 1, 2, sz=1))
    assert t.rd(3, 0) == 1


def test_fpvec_fcmp_to_r0_discarded(t):
    t.wr(1, f32(1.0))
    run(t, "fcmp", fcmp_word(0, 0, 1, 1))
    assert t.rd(0, 0) == 0


# ---------------------------------------------------------------------------- FCMPI

def test_fpvec_fcmpi_immediate_is_bit_pattern(t):
    t.wr(1, f32(2.5))
    run(t, "fcmpi", fcmpi_word(10, 3, 1), value=f32(2.0))            # GT vs 2.0 (postfixed)
    assert t.rd(3, 0) == 1
    run(t, "fcmpi", fcmpi_word(0, 3, 1), value=f32(2.5) | (0xABCD << 32))  # high bits ignored
    assert t.rd(3, 0) == 1
    run(t, "fcmpi", fcmpi_word(4, 3, 1), value=0x7FC0_0000)         # unordered with NaN
    assert t.rd(3, 0) == 1
    run(t, "fcmpi", fcmpi_word(15, 3, 1), value=f32(2.5))
    assert t.rd(3, 0) == (1 << 0 | 1 << 2 | 1 << 9 | 1 << 11 | 1 << 12)


def test_fpvec_fcmpi_zero_immediate_equals_minus_zero(t):
    t.wr(1, 0x8000_0000)
    run(t, "fcmpi", fcmpi_word(0, 3, 1, 0), value=0)
    assert t.rd(3, 0) == 1


def test_fpvec_fcmpi_vector(t):
    vset(t, 1, [f32(float(i) - 8) for i in range(16)])
    run(t, "fcmpi", fcmpi_word(1, 3, v(1)), value=f32(-0.0))        # LT -0.0
    assert t.rd(3, 0) == 0x00FF
    vset(t, 4, [0] * 16)
    t.wr(50, 0x0003)
    run(t, "fcmpi", fcmpi_word(9, v(4), v(1), mask=50), value=f32(-8.0))
    assert vget(t, 4) == [1, 1] + [0] * 14


# ---------------------------------------------------------------------------- FBcc

COND = {0: lambda a, b: a < b, 1: lambda a, b: a >= b, 2: lambda a, b: a <= b,
        3: lambda a, b: a > b, 6: lambda a, b: a == b, 7: lambda a, b: not a == b}


@pytest.mark.parametrize("cnd", sorted(COND))
@pytest.mark.parametrize("a, b", PAIRS)
def test_fpvec_fbcc_conditions(t, cnd, a, b):
    t.wr(1, f32(a))
    t.wr(2, f32(b))
    target = run(t, "fbcc", fbcc_word(cnd, 1, 2, 0x40), value=0x40, address=0x3000)
    taken = COND[cnd](a, b)                          # Python: NaN compares false except !=
    assert target == (0x3040 if taken else None)


def test_fpvec_fbcc_nan_only_fbne(t):
    t.wr(1, f32(NAN))
    results = {c: run(t, "fbcc", fbcc_word(c, 1, 1, 12), value=12) for c in COND}
    assert [c for c, r in results.items() if r is not None] == [7]


def test_fpvec_fbcc_backward_and_wrapping(t):
    t.wr(1, f32(1.0))
    assert run(t, "fbcc", fbcc_word(6, 1, 1, -0x100), value=-0x100, address=0x1000) == 0xF00
    assert run(t, "fbcc", fbcc_word(6, 1, 1, -0x20), value=-0x20, address=0x10) == 0xFFFF_FFF0


def test_fpvec_fbcc_binary16(t):
    t.wr(1, f16(1.0))
    t.wr(2, 0x8000_0000 | f16(2.0))                  # as binary32: a tiny negative number
    assert run(t, "fbcc", fbcc_word(0, 1, 2, 6, sz=1), value=6) == 0x2006
    assert run(t, "fbcc", fbcc_word(0, 1, 2, 6, sz=2), value=6) is None  # binary32: upper bits count


def test_fpvec_fbcc_zero_signs_equal(t):
    t.wr(1, 0x8000_0000)
    assert run(t, "fbcc", fbcc_word(6, 1, 0, 6), value=6) is not None    # -0 == +0 (r0)


@pytest.mark.parametrize("cnd", [4, 5])
def test_fpvec_fbcc_reserved_conditions_trap(t, cnd):
    with pytest.raises(Trap) as info:
        run(t, "fbcc", fbcc_word(cnd, 1, 2, 6), value=6)
    assert info.value.cause == causes.UNIMP


def test_fpvec_fbcc_vector_operand_bits_trap(t):
    word = fbcc_word(6, 1, 2, 6) | (1 << 19)
    with pytest.raises(Trap) as info:
        run(t, "fbcc", word, value=6)
    assert info.value.cause == causes.UNIMP


def test_fpvec_fbcc_reserved_lenient_falls_through():
    t = thread(lenient=True)
    skipped_when_lenient(t, lambda: run(t, "fbcc", fbcc_word(4, 1, 2, 6), value=6))
