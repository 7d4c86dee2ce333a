"""Zicsr and machine mode: CSR rules, exact counters, traps, mret, interrupts (direct and vectored)."""

from __future__ import annotations

import pytest
from rvcore_support import XLENS, execute, hart, machine, mask, reg_index, run

from tessera.errors import ConfigError, UnhandledTrap
from tessera_riscv import csrs

# A handler that records mcause/mtval/mepc in s9/s10/s11, counts traps in s8 and returns
# past the trapping instruction.
SKIP_HANDLER = """
        .globl _start
_start: la    t0, handler
        csrw  mtvec, t0
        j     main
        .align 2
handler:
        csrr  s9, mcause
        csrr  s10, mtval
        csrr  s11, mepc
        addi  s8, s8, 1
        addi  s11, s11, 4
        csrw  mepc, s11
        mret
main:
"""
EXIT = """
        li    a7, 93
        ecall
"""


def r(h, name):
    return h.x[reg_index(name)]


# ------------------------------------------------------------------ CSR rules


@pytest.mark.parametrize("xlen", XLENS)
def test_identification_csrs(xlen):
    h = execute(xlen, """
        csrr a0, misa
        csrr a2, mvendorid
        csrr a3, marchid
        csrr a4, mimpid
        csrr a5, mhartid
        csrr a6, mconfigptr
""", config={"hartid": 3})
    mxl = 1 if xlen == 32 else 2
    assert r(h, "a0") == mxl << (xlen - 2) | 1 << 8 | 1 << 12          # I and M
    assert (r(h, "a2"), r(h, "a3"), r(h, "a4"), r(h, "a6")) == (0, 0, 0, 0)
    assert r(h, "a5") == 3


@pytest.mark.parametrize("xlen", XLENS)
def test_csrrw_swaps(xlen):
    h = execute(xlen, """
        li     t0, 5
        csrw   mscratch, t0
        li     t1, 9
        csrrw  a0, mscratch, t1
        csrr   a1, mscratch
        csrrwi a2, mscratch, 31
        csrr   a3, mscratch
""")
    assert (r(h, "a0"), r(h, "a1"), r(h, "a2"), r(h, "a3")) == (5, 9, 9, 31)


@pytest.mark.parametrize("xlen", XLENS)
def test_set_and_clear_bits(xlen):
    h = execute(xlen, """
        li     t0, 0xF0
        csrw   mscratch, t0
        li     t1, 0x0F
        csrrs  a0, mscratch, t1
        csrrc  a1, mscratch, t0
        csrrsi a2, mscratch, 0x10
        csrrci a3, mscratch, 0x01
        csrr   a4, mscratch
""")
    assert (r(h, "a0"), r(h, "a1"), r(h, "a2"), r(h, "a3"), r(h, "a4")) == (0xF0, 0xFF, 0x0F, 0x1F, 0x1E)


@pytest.mark.parametrize("xlen", XLENS)
def test_warl_fields(xlen):
    h = execute(xlen, """
        li    t0, -1
        csrw  mstatus, t0
        csrr  a0, mstatus
        csrw  mepc, t0
        csrr  a1, mepc
        csrw  mtvec, t0
        csrr  a2, mtvec
        csrw  misa, zero
        csrr  a3, misa
        csrw  mie, t0
        csrr  a4, mie
        csrw  mip, t0
        csrr  a5, mip
""")
    m = mask(xlen)
    assert r(h, "a0") == csrs.MSTATUS_MIE | csrs.MSTATUS_MPIE | csrs.MSTATUS_MPP   # MPP reads M
    assert r(h, "a1") == m & ~3                                                   # IALIGN = 32
    assert r(h, "a2") == m & ~2                                                   # mode 3 -> vectored
    assert r(h, "a3") != 0                                                        # misa ignores writes
    assert r(h, "a4") == (0x888 | (m & ~0xFFFF))                                  # MSIE MTIE MEIE, 16+
    assert r(h, "a5") == 0                                                        # mip: no pending


@pytest.mark.parametrize("xlen", XLENS)
@pytest.mark.parametrize("line", [
    "csrw cycle, t0",            # read-only (bits 11:10 = 11)
    "csrrs a0, mhartid, t0",     # read-only, and t0 != x0 means a write
    "csrrwi zero, mvendorid, 0",  # csrrwi always writes
    "csrr a0, 0x7c0",            # not implemented
    "csrr a0, sstatus",          # no S-mode
])
def test_illegal_csr_accesses(xlen, line):
    line = line.replace("sstatus", "0x100")
    m, result = run(SKIP_HANDLER + "li t0, 1\n" + line + "\nmv a0, s9" + EXIT, xlen)
    h = hart(m)
    assert result.exit_code == 2
    word = m.space.read(r(h, "s11") - 4, 4)
    assert r(h, "s10") == word                                       # mtval = the instruction


@pytest.mark.parametrize("xlen", XLENS)
def test_reading_read_only_csrs_without_writing_is_fine(xlen):
    m, result = run(SKIP_HANDLER + """
        csrrs  a0, mhartid, zero
        csrrsi a0, cycle, 0
        csrrci a0, instret, 0
        mv     a0, s8
""" + EXIT, xlen)
    assert result.exit_code == 0


def test_rv32_high_halves_do_not_exist_on_rv64():
    m, result = run(SKIP_HANDLER + "csrr a0, 0xb80\nmv a0, s9" + EXIT, 64)
    assert result.exit_code == 2
    m, result = run(SKIP_HANDLER + "csrr a0, mcycleh\nmv a0, s8" + EXIT, 32)
    assert result.exit_code == 0


@pytest.mark.parametrize("xlen", XLENS)
def test_performance_counters_read_zero(xlen):
    h = execute(xlen, """
        li    t0, 77
        csrw  mhpmcounter3, t0
        csrr  a0, mhpmcounter3
        csrw  mhpmevent31, t0
        csrr  a1, mhpmevent31
        csrr  a2, hpmcounter4
        csrw  mcountinhibit, t0
        csrr  a3, mcountinhibit
""")
    assert (r(h, "a0"), r(h, "a1"), r(h, "a2"), r(h, "a3")) == (0, 0, 0, 0)


# ------------------------------------------------------------------ counters


@pytest.mark.parametrize("xlen", XLENS)
def test_minstret_and_mcycle_are_exact_at_the_reading_instruction(xlen):
    h = execute(xlen, """
        nop
        nop
        csrr a0, minstret         # 2 instructions retired before this one
        nop
        csrr a1, instret          # 4
        csrr a2, mcycle           # one cycle per instruction here: 5
        csrr a3, cycle
        csrr a4, time
""")
    assert (r(h, "a0"), r(h, "a1"), r(h, "a2"), r(h, "a3"), r(h, "a4")) == (2, 4, 5, 6, 7)
    assert h.instret == 8


@pytest.mark.parametrize("xlen", XLENS)
def test_counter_reads_in_a_loop(xlen):
    h = execute(xlen, """
        li    t0, 50
        li    s0, 0
loop:   csrr  t1, minstret
        add   s0, s0, t1
        addi  t0, t0, -1
        bnez  t0, loop
""")
    # reads at instret 2, 6, 10, ...: sum of 2 + 4k for k < 50
    assert r(h, "s0") == sum(2 + 4 * k for k in range(50))


@pytest.mark.parametrize("xlen", XLENS)
def test_written_counter_value_is_what_the_next_instruction_reads(xlen):
    h = execute(xlen, """
        li    t0, 1000
        csrw  minstret, t0
        csrr  a0, minstret
        csrr  a1, minstret
        csrw  mcycle, t0
        csrr  a2, mcycle
        nop
        csrr  a3, mcycle
""")
    assert (r(h, "a0"), r(h, "a1"), r(h, "a2"), r(h, "a3")) == (1000, 1001, 1000, 1002)


def test_rv32_counter_halves():
    h = execute(32, """
        li    t0, -1
        csrw  minstret, t0
        csrw  minstreth, zero     # minstret = 0x00000000_ffffffff + 1 (csrw retired)... then high = 0
        csrr  a0, minstret
        csrr  a1, minstreth
        csrr  a2, instreth
        li    t1, 7
        csrw  mcycleh, t1
        csrr  a3, mcycleh
        csrr  a4, cycleh
""")
    # writing minstret to 0xffffffff: the next instruction (csrw minstreth) sees 0xffffffff and,
    # writing the high half, keeps the low half it sees; it retires: 0x1_0000_0000 -> low word 0
    assert r(h, "a1") == 0 and r(h, "a2") == 0
    assert r(h, "a0") == 0
    assert (r(h, "a3"), r(h, "a4")) == (7, 7)


def test_counters_from_python_between_runs():
    m = machine(32, "nop\nnop\nnop\nnop")
    m.run(max_steps=3, raise_on_budget=False)
    h = hart(m)
    assert h.csr_read(csrs.MINSTRET) == 3
    h.csr_write(csrs.MINSTRET, 100)
    assert h.csr_read(csrs.MINSTRET) == 100
    with pytest.raises(ConfigError, match="no CSR"):
        h.csr_read(0x7C0)
    with pytest.raises(ConfigError, match="read-only"):
        h.csr_write(csrs.CYCLE, 1)


# ------------------------------------------------------------------ traps and mret


@pytest.mark.parametrize("xlen", XLENS)
def test_ecall_without_syscalls_is_a_trap(xlen):
    m = machine(xlen, SKIP_HANDLER + """
        li    a7, 93
here:   ecall
done:   nop
""", config={"syscalls": False})
    result = m.run(max_steps=1000, until_symbol=["done"])
    h = hart(m)
    assert result.reason == "breakpoint"
    assert h.traps == 1
    assert r(h, "s9") == 11 and r(h, "s10") == 0
    assert r(h, "s11") - 4 == m.symbols["here"]                    # mepc: the ecall


@pytest.mark.parametrize("xlen", XLENS)
def test_ebreak_and_illegal_instruction(xlen):
    m, result = run(SKIP_HANDLER + """
        ebreak
        mv    s2, s9
        mv    s3, s10
        .word 0xffffffff
        mv    a0, s9
        mv    s4, s10
""" + EXIT, xlen)
    h = hart(m)
    assert result.exit_code == 2
    assert r(h, "s2") == 3
    assert r(h, "s3") == m.symbols["main"]                  # mtval of ebreak: its address
    assert r(h, "s4") == 0xFFFF_FFFF                        # mtval of an illegal word: the word


@pytest.mark.parametrize("xlen", XLENS)
def test_illegal_instruction_without_handler_is_one_line(xlen):
    m = machine(xlen, "nop\n.word 0x0000000b")
    with pytest.raises(UnhandledTrap) as info:
        m.run(max_steps=10)
    assert str(info.value) == ("unhandled trap: illegal instruction (cause 2, value 0xb) and no "
                               "handler (agent hart0, pc 0x00010004, word 0xb)")
    assert hart(m).pc == 0x10004


@pytest.mark.parametrize("xlen", XLENS)
@pytest.mark.parametrize("word", [
    0x0000_0000, 0xFFFF_FFFF,      # all zeros, all ones
    0x0000_0001,                   # a 16-bit (compressed) instruction: no C extension
    0x0000_4073,                   # SYSTEM funct3 = 4
    0x1020_0073,                   # sret: no S-mode
    0x1000_000B,                   # custom-0: nobody claimed it
    0x1000_202F, 0x1800_202F,      # lr.w, sc.w: Zalrsc is not included
    0x0000_2007,                   # flw: no F
    0x0200_0033 | 0x7 << 25,       # OP with an unknown funct7
])
def test_undefined_words_are_illegal(xlen, word):
    m, result = run(SKIP_HANDLER + f".word {word:#x}\nmv a0, s9" + EXIT, xlen)
    assert result.exit_code == 2


@pytest.mark.parametrize("xlen", XLENS)
def test_trap_entry_and_mret_update_mstatus(xlen):
    h = execute(xlen, """
        la    t0, handler
        csrw  mtvec, t0
        csrsi mstatus, 8          # MIE = 1
        ecall
        csrr  s2, mstatus         # after mret: MIE = MPIE (1), MPIE = 1
        j     done
        .align 2
handler:
        csrr  s1, mstatus         # in the handler: MIE = 0, MPIE = 1, MPP = 3
        csrr  t1, mepc
        addi  t1, t1, 4
        csrw  mepc, t1
        mret
done:
""", config={"syscalls": False})
    assert r(h, "s1") == csrs.MSTATUS_MPIE | csrs.MSTATUS_MPP
    assert r(h, "s2") == csrs.MSTATUS_MIE | csrs.MSTATUS_MPIE | csrs.MSTATUS_MPP
    assert h.traps == 1


@pytest.mark.parametrize("xlen", XLENS)
def test_traps_are_counted_and_trapping_instructions_do_not_retire(xlen):
    m, result = run(SKIP_HANDLER + """
        .word 0xffffffff
        .word 0xffffffff
        csrr  a0, minstret
""" + EXIT, xlen)
    h = hart(m)
    assert h.traps == 2
    # retired: la (2) + csrw + j, the two handler runs (7 each), csrr, li a7, ecall
    assert result.exit_code == 2 + 1 + 1 + 2 * 7


def test_stop_on_trap_then_take_it():
    m = machine(32, SKIP_HANDLER + ".word 0xffffffff\nmv a0, s9" + EXIT)
    stop = m.run(stop_on_trap=True)
    assert stop.reason == "trap" and stop.pc == m.symbols["main"]
    assert m.run().exit_code == 2


# ------------------------------------------------------------------ interrupts


VECTORED = """
        .globl _start
_start: la    t0, vectors
        ori   t0, t0, 1           # vectored mode
        csrw  mtvec, t0
        li    t0, 0x888
        csrw  mie, t0
        csrsi mstatus, 8
main:   addi  s0, s0, 1
        li    t1, 1000
        blt   s0, t1, main
        li    a0, 0
        li    a7, 93
        ecall
        .align 6
vectors:
        j     exception           # 0: exceptions (and cause-0 interrupts)
        .word 0, 0
        j     msi                 # 3
        .word 0, 0, 0
        j     mti                 # 7
        .word 0, 0, 0
        j     mei                 # 11
exception:
        li    a0, 100
        li    a7, 93
        ecall
msi:    li    a0, 3
        j     report
mti:    li    a0, 7
        j     report
mei:    li    a0, 11
report: csrr  s1, mcause
        csrr  s2, mepc
        li    a7, 93
        ecall
"""


@pytest.mark.parametrize("xlen", XLENS)
@pytest.mark.parametrize("bit", [3, 7, 11])
def test_vectored_interrupts(xlen, bit):
    m = machine(xlen, VECTORED)
    m.run(until_symbol=["main"])                    # handler and enables installed
    h = hart(m)
    h.set_pending(bit)
    result = m.run(max_steps=10_000)
    assert result.exit_code == bit
    assert r(h, "s1") == (1 << (xlen - 1)) | bit    # mcause: the interrupt bit and the code
    assert r(h, "s2") == m.symbols["main"]          # mepc: the instruction not yet executed
    assert h.traps == 1


@pytest.mark.parametrize("xlen", XLENS)
def test_direct_mode_sends_interrupts_to_base(xlen):
    m = machine(xlen, VECTORED.replace("ori   t0, t0, 1", "nop"))
    m.run(until_symbol=["main"])
    hart(m).set_pending(11)
    assert m.run(max_steps=10_000).exit_code == 100


def test_exceptions_go_to_base_in_vectored_mode():
    m = machine(32, VECTORED.replace("main:   addi  s0, s0, 1", "main:   .word 0xffffffff"))
    assert m.run(max_steps=10_000).exit_code == 100


def test_interrupt_priority_external_first():
    m = machine(32, VECTORED)
    m.run(until_symbol=["main"])
    h = hart(m)
    for bit in (3, 7, 11):
        h.set_pending(bit)
    assert m.run(max_steps=10_000).exit_code == 11


def test_masked_interrupts_wait_until_enabled():
    m = machine(32, VECTORED.replace("csrsi mstatus, 8", "nop"))
    m.run(until_symbol=["main"])
    h = hart(m)
    h.set_pending(7)
    assert m.run(max_steps=10_000).exit_code == 0           # MIE off: never taken
    assert h.traps == 0


def test_enabling_interrupts_takes_a_pending_one_right_after_the_csr_write():
    m = machine(32, """
        la    t0, handler
        csrw  mtvec, t0
        li    t0, 0x80
        csrw  mie, t0
        nop
enable: csrsi mstatus, 8
after:  li    a0, 0
        li    a7, 93
        ecall
        .align 2
handler:
        csrr  a0, mepc
        la    t0, after
        sub   a0, a0, t0          # 0 when mepc = after
        addi  a0, a0, 42
        li    a7, 93
        ecall
""")
    m.run(until_symbol=["enable"])
    hart(m).set_pending(7)
    assert m.run(max_steps=100).exit_code == 42


def test_set_pending_checks_the_bit():
    h = hart(machine(32))
    with pytest.raises(ConfigError):
        h.set_pending(40)
    h.set_pending(16)
    h.set_pending(16, False)
    assert h.mip == 0


# ------------------------------------------------------------------ state


def test_state_dump_has_the_csrs():
    m, result = run("csrwi mscratch, 9\nli a0, 0" + EXIT, 64)
    state = m.state()["agents"]["hart0"]
    assert state["kind"] == "hart" and state["xlen"] == 64
    assert state["csrs"]["mscratch"] == 9
    assert state["csrs"]["minstret"] == 4


def test_wfi_is_a_nop():
    assert execute(32, "wfi\nli a0, 1").x[reg_index("a0")] == 1
