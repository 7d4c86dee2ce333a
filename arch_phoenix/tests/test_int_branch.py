"""Control transfer: Bcc/BBS, JMP/CALL, BRA/BSR, RET, JMPR and the self-loop halt (spec 4.7)."""

from __future__ import annotations

import pytest
from int_support import M32, OP, PC, bcc_word, j_word, ri, run, thread
from phoenix_support import skipped_when_lenient

from tessera.control import Halt, Trap

BLT, BGE, BLTU, BGEU, BBS, BEQ, BNE = 0, 1, 2, 3, 5, 6, 7


@pytest.fixture
def t():
    return thread()


def branch(t, cnd, a, b, *, sz=2, disp=0x40, address=PC):
    t.wr(1, a)
    t.wr(2, b)
    return run(t, "bcc", bcc_word(cnd, 1, 2, disp, sz=sz), value=disp, address=address)


# ---------------------------------------------------------------------------- Bcc


@pytest.mark.parametrize("cnd, a, b, taken", [
    (BLT, M32, 1, True), (BLT, 1, M32, False), (BLT, 3, 3, False),
    (BGE, M32, 1, False), (BGE, 3, 3, True), (BGE, 1, M32, True),
    (BLTU, M32, 1, False), (BLTU, 1, M32, True), (BLTU, 3, 3, False),
    (BGEU, M32, 1, True), (BGEU, 3, 3, True), (BGEU, 1, M32, False),
    (BEQ, 7, 7, True), (BEQ, 7, 8, False), (BNE, 7, 8, True), (BNE, 7, 7, False),
])
def test_int_bcc_conditions(t, cnd, a, b, taken):
    assert branch(t, cnd, a, b) == (PC + 0x40 if taken else None)


def test_int_bcc_operand_order_is_ra_then_rb(t):
    # Ra in bits 18:13, Rb in bits 11:6: BLT r2, r1 is "r2 < r1"
    t.wr(1, 5)
    t.wr(2, 1)
    assert run(t, "bcc", bcc_word(BLT, 2, 1, 12), value=12) == PC + 12
    assert run(t, "bcc", bcc_word(BLT, 1, 2, 12), value=12) is None


def test_int_bcc_backward_target_and_wraparound(t):
    assert branch(t, BEQ, 0, 0, disp=-12) == PC - 12
    assert branch(t, BEQ, 0, 0, disp=0x20, address=0xFFFF_FFF0) == 0x10
    assert branch(t, BEQ, 0, 0, disp=-0x20, address=0x10) == 0xFFFF_FFF0


def test_int_bcc_sz1_compares_16_bits(t):
    assert branch(t, BEQ, 0x1_0005, 0x2_0005, sz=1) == PC + 0x40
    assert branch(t, BEQ, 0x1_0005, 0x2_0005, sz=2) is None
    assert branch(t, BLT, 0x8000, 0, sz=1) == PC + 0x40       # -32768 < 0 at 16 bits
    assert branch(t, BLT, 0x8000, 0, sz=2) is None
    assert branch(t, BLTU, 0x1_0001, 0x2, sz=1) == PC + 0x40  # 1 < 2 at 16 bits


@pytest.mark.parametrize("bit", [0, 5, 31])
def test_int_bbs_tests_the_numbered_bit(t, bit):
    t.wr(1, 1 << bit)
    assert run(t, "bcc", bcc_word(BBS, 1, bit, 8), value=8) == PC + 8
    t.wr(1, M32 ^ (1 << bit))
    assert run(t, "bcc", bcc_word(BBS, 1, bit, 8), value=8) is None


def test_int_bbs_bit_number_is_mod_32(t):
    t.wr(1, 0b10)
    assert run(t, "bcc", bcc_word(BBS, 1, 33, 8), value=8) == PC + 8


def test_int_bcc_reserved_condition_is_unimp(t):
    with pytest.raises(Trap) as exc:
        branch(t, 4, 0, 0)
    assert exc.value.cause == 37


def test_int_bcc_reserved_condition_is_skipped_when_lenient():
    t = thread(lenient=True)
    skipped_when_lenient(t, lambda: branch(t, 4, 0, 0))


def test_int_bcc_vector_operand_is_unimp(t):
    word = bcc_word(BEQ, 1, 1, 8) | 1 << 19
    with pytest.raises(Trap) as exc:
        run(t, "bcc", word, value=8)
    assert exc.value.cause == 37


def test_int_bcc_r59_compares_the_branch_address(t):
    t.wr(1, PC)
    assert run(t, "bcc", bcc_word(BEQ, 59, 1, 6), value=6) == PC + 6


# ---------------------------------------------------------------------------- JMP / CALL / BRA / BSR


def test_int_jmp_is_absolute(t):
    assert run(t, "jmp", j_word(OP["jmp"], 0x1_2345_6789), value=0x1_2345_6789) == 0x2345_6789
    assert t.gpr[57] == t.gpr[58] == 0


@pytest.mark.parametrize("lk, reg", [(1, 57), (2, 58)])
def test_int_call_links(t, lk, reg):
    assert run(t, "jmp", j_word(OP["jmp"], 0x4000, lk), value=0x4000) == 0x4000
    assert t.gpr[reg] == PC + 6
    assert t.gpr[57 + 58 - reg] == 0


def test_int_call_lk3_is_unimp_and_links_nothing(t):
    with pytest.raises(Trap) as exc:
        run(t, "jmp", j_word(OP["jmp"], 0x4000, 3), value=0x4000)
    assert exc.value.cause == 37
    assert t.gpr[57] == t.gpr[58] == 0


def test_int_bra_is_relative_and_wraps(t):
    assert run(t, "bra", j_word(OP["bra"], -6), value=-6) == PC - 6
    assert run(t, "bra", j_word(OP["bra"], 0x20), value=0x20, address=0xFFFF_FFF0) == 0x10


@pytest.mark.parametrize("lk, reg", [(1, 57), (2, 58)])
def test_int_bsr_links(t, lk, reg):
    assert run(t, "bra", j_word(OP["bra"], 0x100, lk), value=0x100) == PC + 0x100
    assert t.gpr[reg] == PC + 6


def test_int_bra_to_itself_halts(t):
    with pytest.raises(Halt) as exc:
        run(t, "bra", j_word(OP["bra"], 0), value=0)
    assert exc.value.exit_code == 0


def test_int_bra_plus_2_pow_32_is_a_self_loop(t):
    # the shipped binaries' "bra *" (spec appendix A: Target40 = 0x0100000000)
    with pytest.raises(Halt):
        run(t, "bra", 0x0100_0000_0019, value=1 << 32)


def test_int_jmp_to_itself_halts(t):
    with pytest.raises(Halt):
        run(t, "jmp", j_word(OP["jmp"], PC), value=PC)


def test_int_self_loop_runs_when_halting_is_off():
    t = thread(halt_on_self_loop=False)
    assert run(t, "bra", j_word(OP["bra"], 0), value=0) == PC
    assert run(t, "jmp", j_word(OP["jmp"], PC), value=PC) == PC


def test_int_bsr_to_itself_does_not_halt(t):
    assert run(t, "bra", j_word(OP["bra"], 0, 1), value=0) == PC
    assert t.gpr[57] == PC + 6


def test_int_conditional_self_loop_does_not_halt(t):
    assert branch(t, BEQ, 0, 0, disp=0) == PC


# ---------------------------------------------------------------------------- RET / JMPR


def ret_word(rt, ra, imm, jmpr=False):
    return ri(OP["ret"], rt, ra, imm, sz=1 if jmpr else 2)  # Sz bit 0 = bit 39


def test_int_ret_jumps_to_ra_and_pops_the_stack(t):
    t.wr(57, 0x5000)
    t.wr(47, 0x800)  # machine mode: the r62 alias
    assert run(t, "ret", ret_word(47, 57, 16), value=16) == 0x5000
    assert t.gpr[62] == 0x810


def test_int_ret_reads_ra_before_updating_rt(t):
    t.wr(5, 0x3000)
    assert run(t, "ret", ret_word(5, 5, 8), value=8) == 0x3000
    assert t.gpr[5] == 0x3008


def test_int_ret_into_r0_changes_nothing(t):
    t.wr(57, 0x5000)
    assert run(t, "ret", ret_word(0, 57, 16), value=16) == 0x5000
    assert t.gpr[0] == 0


def test_int_jmpr_links_and_adds(t):
    t.wr(3, 0xFFFF_FFF0)
    assert run(t, "jmpr", ret_word(58, 3, 0x20, jmpr=True), value=0x20) == 0x10
    assert t.gpr[58] == PC + 6


def test_int_jmpr_without_link(t):
    t.wr(3, 0x100)
    before = list(t.gpr)
    assert run(t, "jmpr", ret_word(0, 3, -4, jmpr=True), value=-4) == 0xFC
    assert t.gpr == before


def test_int_jmpr_same_register_uses_the_old_value(t):
    t.wr(3, 0x100)
    assert run(t, "jmpr", ret_word(3, 3, 0, jmpr=True), value=0) == 0x100
    assert t.gpr[3] == PC + 6


def test_int_jmpr_r59_is_pc_relative(t):
    assert run(t, "jmpr", ret_word(0, 59, 0x30, jmpr=True), value=0x30) == PC + 0x30
