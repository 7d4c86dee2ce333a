"""Branches and jumps: conditions, links, targets, and misaligned targets (mcause 0)."""

from __future__ import annotations

import pytest
from rvcore_support import XLENS, hart, machine, mask, reg_index, run

from tessera.errors import MemoryFault, UnhandledTrap

HANDLER = """
        .globl _start
_start: la    t0, handler
        csrw  mtvec, t0
        j     main
        .align 2
handler:
        csrr  s10, mcause
        csrr  s11, mtval
        csrr  s9, mepc
        mv    a0, s10
        li    a7, 93
        ecall
main:
"""


@pytest.mark.parametrize("xlen", XLENS)
@pytest.mark.parametrize(("op", "a", "b", "taken"), [
    ("beq", 3, 3, True), ("beq", 3, 4, False),
    ("bne", 3, 4, True), ("bne", 3, 3, False),
    ("blt", -1, 0, True), ("blt", 0, -1, False), ("blt", 2, 2, False),
    ("bge", 0, -1, True), ("bge", 2, 2, True), ("bge", -1, 0, False),
    ("bltu", 0, -1, True), ("bltu", -1, 0, False),
    ("bgeu", -1, 0, True), ("bgeu", 0, -1, False), ("bgeu", 5, 5, True),
])
def test_branch_conditions(xlen, op, a, b, taken):
    m, result = run(f"""
        li    a1, {a}
        li    a2, {b}
        {op}  a1, a2, yes
        li    a0, 1
        j     out
yes:    li    a0, 2
out:    li    a7, 93
        ecall
""", xlen)
    assert result.exit_code == (2 if taken else 1)


@pytest.mark.parametrize("xlen", XLENS)
def test_backward_branch_loop(xlen):
    m, result = run("""
        li    t0, 10
        li    a0, 0
loop:   addi  a0, a0, 3
        addi  t0, t0, -1
        bnez  t0, loop
        li    a7, 93
        ecall
""", xlen)
    assert result.exit_code == 30
    assert result.steps == 2 + 3 * 10 + 2


@pytest.mark.parametrize("xlen", XLENS)
def test_jal_and_jalr_link(xlen):
    m, result = run("""
start:  jal   ra, f
back:   li    a0, 0
        li    a7, 93
        ecall
f:      mv    s0, ra
        la    t0, g
        jalr  t1, 4(t0)         # skips g's first instruction
g:      li    s2, 99
        mv    s1, t1
        jr    ra
""", xlen)
    h = hart(m)
    assert result.exit_code == 0
    assert h.x[reg_index("s0")] == m.symbols["back"]       # jal: link = its address + 4
    assert h.x[reg_index("s1")] == m.symbols["g"]          # jalr: link = its address + 4
    assert h.x[reg_index("s2")] == 0                       # skipped


@pytest.mark.parametrize("xlen", XLENS)
def test_jalr_clears_bit_0_and_reads_rs1_before_linking(xlen):
    m, result = run("""
        la    a0, target
        addi  a0, a0, 1         # an odd address: bit 0 is ignored
        jalr  a0, 0(a0)         # rd == rs1: the target uses the old value
        li    a0, 1
target: la    t0, target
        sub   a0, a0, t0        # a0 = link = address of "li a0, 1"... minus target
        addi  a0, a0, 10
        li    a7, 93
        ecall
""", xlen)
    assert result.exit_code == (-4 + 10) & 0xFF


@pytest.mark.parametrize("xlen", XLENS)
def test_misaligned_jal_target_traps_on_the_jump(xlen):
    # jal with an offset of 2 (only encodable by hand): without C that is misaligned
    m, result = run(HANDLER + """
jump:   .word 0x0020006f        # jal zero, .+2
""", xlen)
    h = hart(m)
    assert result.exit_code == 0
    assert h.x[reg_index("s9")] == m.symbols["jump"]          # mepc: the jump itself
    assert h.x[reg_index("s11")] == m.symbols["jump"] + 2     # mtval: the target


@pytest.mark.parametrize("xlen", XLENS)
def test_misaligned_jalr_target_traps_without_writing_rd(xlen):
    m, result = run(HANDLER + """
        li    ra, 77
        la    t0, main
        addi  t0, t0, 2
jump:   jalr  ra, 0(t0)
""", xlen)
    h = hart(m)
    assert result.exit_code == 0
    assert h.x[reg_index("s9")] == m.symbols["jump"]
    assert h.x[reg_index("s11")] == m.symbols["main"] + 2
    assert h.x[reg_index("ra")] == 77


@pytest.mark.parametrize("xlen", XLENS)
def test_misaligned_branch_traps_only_when_taken(xlen):
    # beq a0, a1, .+6 (offset 6): encodable, misaligned
    m, result = run(HANDLER + """
        li    a0, 1
        .word 0x00b50363        # beq a0, a1, .+6: not taken (a1 = 0)
        li    a1, 1
jump:   .word 0x00b50363        # taken now
""", xlen)
    h = hart(m)
    assert result.exit_code == 0
    assert h.x[reg_index("s9")] == m.symbols["jump"]
    assert h.x[reg_index("s11")] == m.symbols["jump"] + 6


def test_misaligned_jump_without_a_handler_stops_the_run():
    m = machine(32, ".word 0x0020006f")
    with pytest.raises(UnhandledTrap, match="instruction address misaligned") as info:
        m.run(max_steps=10)
    assert info.value.pc == 0x10000


@pytest.mark.parametrize("xlen", XLENS)
def test_misaligned_entry_point(xlen):
    m = machine(xlen, "nop\nnop")
    m.set_entry(0x10002)
    with pytest.raises(UnhandledTrap, match="instruction address misaligned"):
        m.run(max_steps=10)


@pytest.mark.parametrize("xlen", XLENS)
def test_jump_to_unmapped_memory_is_a_fetch_fault(xlen):
    m = machine(xlen, """
        li    t0, -4
        jalr  ra, 0(t0)
""")
    with pytest.raises(MemoryFault, match="instruction fetch from unmapped address") as info:
        m.run(max_steps=10)
    assert info.value.pc == info.value.address == mask(xlen) - 3      # addresses wrap at XLEN
    assert hart(m).x[reg_index("ra")] == 0x10000 + 4 * len(words_of_li(xlen)) + 4


def words_of_li(xlen):
    from tessera_riscv.asm import li_sequence

    return li_sequence("t0", -4, xlen)
