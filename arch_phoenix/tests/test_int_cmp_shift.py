"""CMP/CMPI with every N code, packed vector compares, and the shifts (spec 3.4, 4.2, 4.3)."""

from __future__ import annotations

import pytest
from int_support import M32, F, cmp_word, cmpi_word, r2, run, thread, v, vget, vset

# relation bits for (a, b) = (-1, 1): signed less, unsigned greater
NEG_VS_ONE = {0: 0, 1: 1, 2: 1, 5: 0, 6: 0, 8: 1, 9: 0, 10: 0, 13: 1, 14: 1}
EQUAL = {0: 1, 1: 0, 2: 1, 5: 0, 6: 1, 8: 0, 9: 1, 10: 0, 13: 1, 14: 0}
RESERVED = (3, 4, 7, 11, 12)


def full(bits: dict[int, int]) -> int:
    return sum(b << n for n, b in bits.items())


@pytest.fixture
def t():
    return thread()


# ---------------------------------------------------------------------------- scalar CMP / CMPI


@pytest.mark.parametrize("n", sorted(NEG_VS_ONE))
def test_int_cmp_each_relation_signed_vs_unsigned(t, n):
    t.wr(1, M32)
    t.wr(2, 1)
    run(t, "cmp", cmp_word(n, 3, 1, 2))
    assert t.gpr[3] == NEG_VS_ONE[n]


@pytest.mark.parametrize("n", sorted(EQUAL))
def test_int_cmp_each_relation_equal(t, n):
    t.wr(1, 0x8000_0000)
    t.wr(2, 0x8000_0000)
    run(t, "cmp", cmp_word(n, 3, 1, 2))
    assert t.gpr[3] == EQUAL[n]


@pytest.mark.parametrize("n", RESERVED)
def test_int_cmp_reserved_n_reads_zero(t, n):
    t.wr(1, 5)
    run(t, "cmp", cmp_word(n, 3, 1, 1))
    assert t.gpr[3] == 0


def test_int_cmp_n15_is_the_whole_relation_vector(t):
    t.wr(1, M32)
    t.wr(2, 1)
    run(t, "cmp", cmp_word(15, 3, 1, 2))
    assert t.gpr[3] == full(NEG_VS_ONE) == 0b110_0001_0000_0110
    run(t, "cmp", cmp_word(15, 3, 2, 2))
    assert t.gpr[3] == full(EQUAL)


def test_int_cmp_result_to_r0_is_discarded(t):
    run(t, "cmp", cmp_word(15, 0, 0, 0))
    assert t.gpr[0] == 0


@pytest.mark.parametrize("n, expected", [(1, 0), (5, 1), (10, 1), (14, 0), (15, 0x760)])
def test_int_cmpi_with_negative_immediate(t, n, expected):
    # 1 against -1: signed greater, unsigned less
    t.wr(1, 1)
    run(t, "cmpi", cmpi_word(n, 3, 1, -1), value=-1)
    assert t.gpr[3] == expected


def test_int_cmpi_uses_the_postfixed_immediate(t):
    t.wr(1, 0x1234_5678)
    run(t, "cmpi", cmpi_word(0, 3, 1, 0x678), value=0x1234_5678)
    assert t.gpr[3] == 1
    run(t, "cmpi", cmpi_word(0, 3, 1, 0x678), value=0x678)
    assert t.gpr[3] == 0


# ---------------------------------------------------------------------------- vector compares


def test_int_vector_cmp_vector_destination_gets_0_or_1_masked(t):
    vset(t, 1, list(range(16)))
    t.wr(2, 8)
    vset(t, 3, [0x77] * 16)
    t.wr(48, 0x0F0F)
    run(t, "cmp", cmp_word(1, v(3), v(1), 2, mask=48))  # LT 8
    assert vget(t, 3) == [1, 1, 1, 1, 0x77, 0x77, 0x77, 0x77, 0, 0, 0, 0] + [0x77] * 4


def test_int_vector_cmp_n15_gives_each_element_its_vector(t):
    vset(t, 1, [M32, 1] + [0] * 14)
    vset(t, 2, [1, 1] + [0] * 14)
    run(t, "cmp", cmp_word(15, v(3), v(1), v(2)))
    assert vget(t, 3)[:3] == [full(NEG_VS_ONE), full(EQUAL), full(EQUAL)]


def test_int_vector_cmp_scalar_destination_packs_a_mask(t):
    vset(t, 1, list(range(16)))
    t.wr(2, 5)
    t.wr(48, 0)  # a mask does not apply to the scalar result
    run(t, "cmp", cmp_word(13, 3, v(1), 2, mask=48))  # GEU 5
    assert t.gpr[3] == 0xFFE0


def test_int_vector_cmp_packed_n15_packs_eq(t):
    vset(t, 1, [4, 5, 4, 4] + [0] * 12)
    t.wr(2, 4)
    run(t, "cmp", cmp_word(15, 3, v(1), 2))
    assert t.gpr[3] == 0b1101


def test_int_vector_cmp_w16_signed_elements_and_packing(t):
    vset(t, 1, [0x0001_8000] * 16)  # element 2i = -32768, element 2i+1 = 1
    run(t, "cmp", cmp_word(1, 3, v(1), 0, sz=1))  # LT 0 (signed, 16-bit)
    assert t.gpr[3] == 0x5555_5555
    run(t, "cmp", cmp_word(5, 3, v(1), 0, sz=1))  # LTU 0: never
    assert t.gpr[3] == 0


def test_int_vector_cmp_w64_uses_64_bit_elements(t):
    vset(t, 1, [0, 1] * 8)  # 2^32 per element
    vset(t, 2, [M32, 0] * 8)
    run(t, "cmp", cmp_word(10, v(3), v(1), v(2), sz=3))  # GT
    assert vget(t, 3) == [1, 0] * 8


def test_int_vector_cmpi_immediate_broadcast(t):
    vset(t, 1, [0xFFFF, 0xFFFF_0000] + [0] * 14)
    run(t, "cmpi", cmpi_word(0, 3, v(1), -1, sz=1), value=-1)  # EQ -1 at 16 bits
    assert t.gpr[3] == 0b1001  # elements 0 and 3 (low half of lane 0, high half of lane 1)


def test_int_vector_cmp_all_zero_mask_keeps_destination(t):
    vset(t, 1, [1] * 16)
    vset(t, 3, [9] * 16)
    t.wr(48, 0)
    run(t, "cmp", cmp_word(0, v(3), v(1), v(1), mask=48))
    assert vget(t, 3) == [9] * 16


# ---------------------------------------------------------------------------- shifts


def shift_both_forms(t, op, n, f):
    """0x8000_0001 shifted by ``n`` with fill ``f``: (register form ``op``, immediate form ``op`` + i)."""
    t.wr(1, 0x8000_0001)
    t.wr(2, n)
    run(t, op, r2(F[op], 3, 1, 2, f=f))
    run(t, op + "i", r2(F[op + "i"], 4, 1, n, f=f))
    return t.gpr[3], t.gpr[4]


@pytest.mark.parametrize("n, f, expected", [
    (0, 0, 0x8000_0001), (1, 0, 0x0000_0002), (31, 0, 0x8000_0000), (32, 0, 0), (63, 0, 0),
    (0, 1, 0x8000_0001), (4, 1, 0x0000_001F), (31, 1, 0xFFFF_FFFF), (32, 1, M32), (63, 1, M32),
])
def test_int_sll(t, n, f, expected):
    assert shift_both_forms(t, "sll", n, f) == (expected, expected)


@pytest.mark.parametrize("n, f, expected", [
    (0, 0, 0x8000_0001), (1, 0, 0x4000_0000), (31, 0, 1), (32, 0, 0), (63, 0, 0),
    (4, 1, 0xF800_0000), (31, 1, M32), (32, 1, M32),
])
def test_int_srl(t, n, f, expected):
    assert shift_both_forms(t, "srl", n, f) == (expected, expected)


@pytest.mark.parametrize("value, n, expected", [
    (0x8000_0000, 0, 0x8000_0000), (0x8000_0000, 4, 0xF800_0000), (0x8000_0000, 31, M32),
    (0x8000_0000, 32, M32), (0x8000_0000, 63, M32), (0x7FFF_FFFF, 30, 1), (0x7FFF_FFFF, 32, 0),
])
def test_int_sra(t, value, n, expected):
    t.wr(1, value)
    t.wr(2, n)
    run(t, "sra", r2(F["sra"], 3, 1, 2, f=1))  # F is ignored by SRA
    assert t.gpr[3] == expected
    run(t, "srai", r2(F["srai"], 4, 1, n))
    assert t.gpr[4] == expected


def test_int_shift_count_is_rb_mod_64(t):
    t.wr(1, 1)
    t.wr(2, 64 + 3)
    run(t, "sll", r2(F["sll"], 3, 1, 2))
    assert t.gpr[3] == 8


def test_int_vector_shift_w16_count_16_fills(t):
    vset(t, 1, [0x8001_8001] * 16)
    t.wr(2, 16)
    run(t, "sll", r2(F["sll"], v(3), v(1), 2, sz=1, f=1))
    assert vget(t, 3) == [M32] * 16
    run(t, "srai", r2(F["srai"], v(3), v(1), 15, sz=1))
    assert vget(t, 3) == [M32] * 16
    run(t, "srli", r2(F["srli"], v(3), v(1), 15, sz=1))
    assert vget(t, 3) == [0x0001_0001] * 16


def test_int_vector_shift_w64_crosses_lanes(t):
    vset(t, 1, [0x8000_0000, 0] * 8)
    run(t, "slli", r2(F["slli"], v(3), v(1), 1, sz=3))
    assert vget(t, 3) == [0, 1] * 8
    t.wr(2, 63)
    run(t, "sra", r2(F["sra"], v(3), v(3), 2, sz=3))
    assert vget(t, 3) == [0, 0] * 8


def test_int_vector_shift_per_element_counts_and_mask(t):
    vset(t, 1, [1] * 16)
    vset(t, 2, list(range(16)))
    vset(t, 3, [5] * 16)
    t.wr(48, 0xFFFE)
    run(t, "sll", r2(F["sll"], v(3), v(1), v(2), mask=48))
    assert vget(t, 3) == [5] + [1 << i for i in range(1, 16)]
