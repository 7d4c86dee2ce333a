"""Integer arithmetic/logic, counts and mask ops: scalar rules and vector forms (spec 4.0–4.4)."""

from __future__ import annotations

import pytest
from int_support import F1, M32, OP, PC, F, r1, r2, ri, run, thread, v, vget, vset


@pytest.fixture
def t():
    return thread()


# ---------------------------------------------------------------------------- register rules


def test_int_add_wraps_at_32_bits(t):
    t.wr(1, 0xFFFF_FFFF)
    t.wr(2, 2)
    run(t, "add", r2(F["add"], 3, 1, 2))
    assert t.gpr[3] == 1


def test_int_write_to_r0_is_discarded(t):
    t.wr(1, 5)
    run(t, "add", r2(F["add"], 0, 1, 1))
    assert t.rd(0, PC) == 0 and t.gpr[0] == 0


def test_int_r59_reads_the_instruction_address(t):
    run(t, "addi", ri(OP["addi"], 3, 59, 6), value=6, address=0x2468)
    assert t.gpr[3] == 0x246E


def test_int_r59_ignores_writes(t):
    t.wr(1, 7)
    run(t, "add", r2(F["add"], 59, 1, 1))
    assert t.gpr[59] == 0


def test_int_r47_is_the_mode_stack_pointer(t):
    # reset is machine mode, so r47 means r62 (msp)
    t.wr(1, 0x100)
    run(t, "addi", ri(OP["addi"], 47, 1, -16), value=-16)
    assert t.gpr[62] == 0xF0 and t.gpr[47] == 0
    run(t, "add", r2(F["add"], 3, 47, 0))
    assert t.gpr[3] == 0xF0


def test_int_sub_wraps_below_zero(t):
    t.wr(2, 1)
    run(t, "sub", r2(F["sub"], 3, 0, 2))  # NEG
    assert t.gpr[3] == M32


def test_int_mul_keeps_low_32_bits(t):
    t.wr(1, 0x10001)
    t.wr(2, 0x10001)
    run(t, "mul", r2(F["mul"], 3, 1, 2))
    assert t.gpr[3] == 0x20001
    t.wr(1, -3 & M32)
    t.wr(2, 5)
    run(t, "mul", r2(F["mul"], 3, 1, 2))
    assert t.gpr[3] == -15 & M32


@pytest.mark.parametrize("name, expected", [
    ("and", 0x0000_F000), ("or", 0xF0F0_FF0F), ("xor", 0xF0F0_0F0F),
    ("andc", 0x0000_0F00), ("nand", 0xFFFF_0FFF), ("nor", 0x0F0F_00F0),
    ("xnor", 0x0F0F_F0F0), ("orc", 0x0F0F_FFF0),
])
def test_int_logic(t, name, expected):
    t.wr(1, 0x0000_FF00)
    t.wr(2, 0xF0F0_F00F)
    run(t, name, r2(F[name], 3, 1, 2))
    assert t.gpr[3] == expected


def test_int_addi_negative_and_postfixed_immediates(t):
    t.wr(1, 10)
    run(t, "addi", ri(OP["addi"], 3, 1, -11), value=-11)
    assert t.gpr[3] == M32
    # a postfix gives a 64-bit immediate: only its low 32 bits reach a scalar register
    run(t, "addi", ri(OP["addi"], 3, 1, 0), value=0x1_2345_6780)
    assert t.gpr[3] == 0x2345_678A


def test_int_subfi_subtracts_from_the_immediate(t):
    t.wr(1, 3)
    run(t, "subfi", ri(OP["subfi"], 3, 1, 1), value=1)
    assert t.gpr[3] == M32 - 1


def test_int_muli(t):
    t.wr(1, 7)
    run(t, "muli", ri(OP["muli"], 3, 1, -2), value=-2)
    assert t.gpr[3] == -14 & M32


def test_int_logic_immediates_are_sign_extended(t):
    t.wr(1, 0x1234_5678)
    run(t, "andi", ri(OP["andi"], 3, 1, -256), value=-256)
    assert t.gpr[3] == 0x1234_5600
    run(t, "ori", ri(OP["ori"], 3, 0, -1), value=-1)  # LDI -1
    assert t.gpr[3] == M32
    run(t, "xori", ri(OP["xori"], 3, 1, -1), value=-1)  # NOT
    assert t.gpr[3] == 0xEDCB_A987


def test_int_nop_changes_nothing(t):
    before = list(t.gpr)
    assert run(t, "nop", 0x0B0B_0B0B_0B0B) is None
    assert t.gpr == before


# ---------------------------------------------------------------------------- vectors


def test_int_vector_add_w32_unmasked(t):
    vset(t, 1, list(range(16)))
    vset(t, 2, [0xFFFF_FFFF] * 16)
    run(t, "add", r2(F["add"], v(3), v(1), v(2)))
    assert vget(t, 3) == [(i - 1) & M32 for i in range(16)]


def test_int_vector_partial_mask_merges(t):
    vset(t, 1, [1] * 16)
    vset(t, 3, [0xAA] * 16)
    t.wr(48, 0b1010_0000_0000_0101)
    run(t, "add", r2(F["add"], v(3), v(1), v(1), mask=48))
    expected = [2 if (0b1010_0000_0000_0101 >> i) & 1 else 0xAA for i in range(16)]
    assert vget(t, 3) == expected


def test_int_vector_all_zero_mask_writes_nothing(t):
    vset(t, 1, [1] * 16)
    vset(t, 3, [0x55] * 16)
    t.wr(48, 0)
    run(t, "add", r2(F["add"], v(3), v(1), v(1), mask=48))
    assert vget(t, 3) == [0x55] * 16


def test_int_vector_all_one_mask_writes_everything(t):
    vset(t, 1, [1] * 16)
    t.wr(48, M32)
    run(t, "add", r2(F["add"], v(3), v(1), v(1), mask=48))
    assert vget(t, 3) == [2] * 16


def test_int_vector_w16_elements_do_not_carry_into_each_other(t):
    vset(t, 1, [0x0001_FFFF] * 16)
    vset(t, 2, [0x0001_0001] * 16)
    run(t, "add", r2(F["add"], v(3), v(1), v(2), sz=1))
    assert vget(t, 3) == [0x0002_0000] * 16


def test_int_vector_w64_carries_across_lanes(t):
    vset(t, 1, [0xFFFF_FFFF, 0] * 8)
    vset(t, 2, [1, 0] * 8)
    run(t, "add", r2(F["add"], v(3), v(1), v(2), sz=3))
    assert vget(t, 3) == [0, 1] * 8


def test_int_vector_w64_mask_writes_half_an_element(t):
    vset(t, 1, [0xFFFF_FFFF, 0] * 8)
    vset(t, 2, [1, 0] * 8)
    vset(t, 3, [7] * 16)
    t.wr(49, 0b10)  # only lane 1 = the high half of element 0
    run(t, "add", r2(F["add"], v(3), v(1), v(2), sz=3, mask=49))
    assert vget(t, 3) == [7, 1] + [7] * 14


def test_int_vector_scalar_source_broadcast_sign_extends_at_w64(t):
    vset(t, 1, [5, 0] * 8)
    t.wr(2, -1 & M32)
    run(t, "add", r2(F["add"], v(3), v(1), 2, sz=3))
    assert vget(t, 3) == [4, 0] * 8  # 5 + (-1) at 64 bits; zero-extension would give [4, 1]


def test_int_vector_scalar_source_broadcast_truncates_at_w16(t):
    vset(t, 1, [0x0003_0002] * 16)
    t.wr(2, 0x1_0001)
    run(t, "add", r2(F["add"], v(3), v(1), 2, sz=1))
    assert vget(t, 3) == [0x0004_0003] * 16


def test_int_vector_scalar_destination_gets_element_0(t):
    vset(t, 1, [10, 20, 30] + [0] * 13)
    run(t, "add", r2(F["add"], 3, v(1), v(1)))
    assert t.gpr[3] == 20


def test_int_vector_destination_from_scalar_sources(t):
    t.wr(1, 3)
    t.wr(2, 4)
    run(t, "mul", r2(F["mul"], v(5), 1, 2))
    assert vget(t, 5) == [12] * 16


def test_int_vector_addi_immediate_broadcast_per_width(t):
    vset(t, 1, [0] * 16)
    run(t, "addi", ri(OP["addi"], v(2), v(1), -1, sz=1), value=-1)
    assert vget(t, 2) == [M32] * 16
    run(t, "addi", ri(OP["addi"], v(2), v(1), 0, sz=3), value=0x1_0000_0002)  # postfixed
    assert vget(t, 2) == [2, 1] * 8


def test_int_vector_subfi_masked(t):
    vset(t, 1, list(range(16)))
    vset(t, 2, [99] * 16)
    t.wr(50, 0xFF)
    run(t, "subfi", ri(OP["subfi"], v(2), v(1), 100, mask=50), value=100)
    assert vget(t, 2) == [100 - i for i in range(8)] + [99] * 8


def test_int_vector_v0_is_an_ordinary_register(t):
    vset(t, 1, [1] * 16)
    run(t, "add", r2(F["add"], v(0), v(1), v(1)))
    assert vget(t, 0) == [2] * 16


def test_int_four_lane_machine():
    t4 = thread(lanes=4)
    vset(t4, 1, [1, 2, 3, 4])
    run(t4, "add", r2(F["add"], v(2), v(1), v(1)))
    assert vget(t4, 2) == [2, 4, 6, 8]


# ---------------------------------------------------------------------------- counts and extension


@pytest.mark.parametrize("value, lz, pop", [(0, 32, 0), (1, 31, 1), (0x8000_0000, 0, 1),
                                           (M32, 0, 32), (0x0001_0F00, 15, 5)])
def test_int_cntlz_cntpop(t, value, lz, pop):
    t.wr(1, value)
    run(t, "cntlz", r1(F1["cntlz"], 2, 1))
    run(t, "cntpop", r1(F1["cntpop"], 3, 1))
    assert (t.gpr[2], t.gpr[3]) == (lz, pop)


def test_int_vector_cntlz_counts_at_element_width(t):
    vset(t, 1, [0x0001_0000] * 16)
    run(t, "cntlz", r1(F1["cntlz"], v(2), v(1), sz=1))
    assert vget(t, 2) == [(15 << 16) | 16] * 16


@pytest.mark.parametrize("value, b, w", [(0x80, 0xFFFF_FF80, 0x80), (0x7F, 0x7F, 0x7F),
                                        (0x1FF, M32, 0x1FF), (0x8000, 0, 0xFFFF_8000),
                                        (0x1_7FFF, M32, 0x7FFF)])
def test_int_sext(t, value, b, w):
    t.wr(1, value)
    run(t, "sextb", r1(F1["sextb"], 2, 1))
    run(t, "sextw", r1(F1["sextw"], 3, 1))
    assert (t.gpr[2], t.gpr[3]) == (b, w)


def test_int_vector_sextb_w16(t):
    vset(t, 1, [0x0080_007F] * 16)
    run(t, "sextb", r1(F1["sextb"], v(2), v(1), sz=1))
    assert vget(t, 2) == [0xFF80_007F] * 16


@pytest.mark.parametrize("value, expected", [(0x130, 0x7), (0, 0), (M32, M32), (0x8000_0000, 1)])
def test_int_mcmprss(t, value, expected):
    t.wr(1, value)
    run(t, "mcmprss", r1(F1["mcmprss"], 2, 1))
    assert t.gpr[2] == expected


def remask_word(e: int, amt: int, rt: int = 2, ra: int = 1) -> int:
    return r2(F["remask"], rt, ra, (e << 5) | amt)


@pytest.mark.parametrize("e, amt, value, expected", [
    (1, 2, 0b101, 0b11_00_11), (1, 4, 0b11, 0xFF), (1, 1, 0x1234, 0x1234),
    (1, 2, M32, M32),                       # limited to 32 bits
    (0, 2, 0b11_00_11, 0b101), (0, 4, 0xF0F, 0b101), (0, 2, 0b10_10, 0),
    (1, 3, 0xABC, 0xABC), (0, 0, 0xABC, 0xABC),  # other amounts copy Ra
])
def test_int_remask(t, e, amt, value, expected):
    t.wr(1, value)
    run(t, "remask", remask_word(e, amt))
    assert t.gpr[2] == expected
