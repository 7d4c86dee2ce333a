"""CSR instructions: the access rule and every register of spec 1.4 (views, copies, aliases)."""

from __future__ import annotations

import pytest
from sys_support import CODE, OPS, csr, ins, load, machine, status_with, thread

from tessera.control import Trap, WaitFor, Yield
from tessera_phoenix import causes, csrs

RD, RW, RC, RS = 0, 1, 2, 3


def do(t, op, number, value=0, rt=1, ra=2):
    """Execute one CSR instruction (Ra = r2 holds ``value``); returns what Rt got."""
    t.wr(ra, value)
    i = ins(csr(op, rt, ra, number), csr=number)
    if csrs.reads_clock(number):
        t.clock_read_pc = CODE  # as if this were the first instruction of a slice
    if op != RD:
        with pytest.raises(Yield) as y:
            OPS["csrrd"](t, i)
        assert y.value.next_pc == CODE + 6
    else:
        OPS["csrrd"](t, i)
    return t.rd(rt, CODE)


def set_mode(t, mode):
    t.status_stack[0] = status_with(mode)


# ---------------------------------------------------------------------------- access rule


@pytest.mark.parametrize("mode,number,allowed", [
    (0, 0x0004, True), (0, 0x1004, False), (0, 0x3000, False),
    (1, 0x1003, True), (1, 0x2004, False), (2, 0x2004, True), (2, 0x3001, False),
    (3, 0x3001, True), (3, 0x0006, True),
])
def test_access_rule_is_mode_nibble(mode, number, allowed):
    t = thread()
    set_mode(t, mode)
    t.wr(1, 0x5555)
    if allowed:
        do(t, RD, number)
    else:
        with pytest.raises(Trap) as e:
            do(t, RD, number)
        assert e.value.cause == causes.CSR and e.value.tval == number
        assert t.rd(1, CODE) == 0x5555  # precise: Rt untouched


def test_csr_machine_only_traps_every_csr_outside_machine_mode():
    t = thread(csr_machine_only=True)
    set_mode(t, 1)
    with pytest.raises(Trap) as e:
        do(t, RD, 0x0004)
    assert e.value.cause == causes.CSR
    set_mode(t, 3)
    assert do(t, RD, 0x0004) == 0  # user view of a machine status with no enables


def test_write_to_r0_rt_discards_old_value_and_still_writes():
    t = thread()
    do(t, RW, 0x3030, 0x1234, rt=0)
    assert t.rd(0, CODE) == 0 and t.shared.tvec[0] == 0x1234


def test_rt_and_ra_same_register_reads_before_writing():
    t = thread()
    t.shared.tvec[1] = 0xAAAA
    t.wr(5, 0xBBBB)
    with pytest.raises(Yield):
        OPS["csrrd"](t, ins(csr(RW, 5, 5, 0x3031), csr=0x3031))
    assert t.rd(5, CODE) == 0xAAAA and t.shared.tvec[1] == 0xBBBB


def test_vector_destination_receives_value_in_every_lane():
    t = thread(lanes=4)
    OPS["csrrd"](t, ins(csr(RD, 0x40 | 3, 0, 0x3001), csr=0x3001, rt=0x43))
    assert list(t.vr[3]) == [0, 0, 0, 0]  # thread 0, hartid 0
    t.shared.tvec[2] = 0x77
    OPS["csrrd"](t, ins(csr(RD, 0x43, 0, 0x3032), csr=0x3032, rt=0x43))
    assert list(t.vr[3]) == [0x77] * 4


# ---------------------------------------------------------------------------- CR0


def test_cr0_write_enables_threads_and_ends_slice():
    m = machine()
    t0, t1 = m.agents[0], m.agents[1]
    assert t1.daemon
    assert do(t0, RW, 0x3000, 0x3) == 1
    assert m.phoenix.cr0 == 3 and not t1.daemon


def test_cr0_keeps_16_bits():
    t = thread()
    do(t, RW, 0x3000, 0xFFFF_FFFF)
    assert t.shared.cr0 == 0xFFFF


def test_cr0_set_clear_use_a_mask_by_default():
    t = thread()
    do(t, RS, 0x3000, 0b1100)
    assert t.shared.cr0 == 0b1101
    do(t, RC, 0x3000, 0b0101)
    assert t.shared.cr0 == 0b1000


def test_cr0_bit_ops_quirk_uses_bit_number():
    t = thread(cr0_bit_ops=True)
    do(t, RS, 0x3000, 3)
    assert t.shared.cr0 == 0b1001
    do(t, RC, 0x3000, 0)
    assert t.shared.cr0 == 0b1000
    do(t, RS, 0x3000, 20)  # bit 20 does not exist in CR0
    assert t.shared.cr0 == 0b1000
    do(t, RW, 0x3000, 0b0110)  # CSRRW is a plain write even with the quirk
    assert t.shared.cr0 == 0b0110


# ---------------------------------------------------------------------------- identity and clock


def test_hartid_is_core_id_and_thread_number_and_read_only():
    m = machine(hartid=0x5)
    t2 = m.agents[2]
    assert do(t2, RD, 0x3001) == 0x52
    assert do(t2, RW, 0x3001, 0) == 0x52
    assert do(t2, RD, 0x3001) == 0x52


def test_tick_read_first_commits_the_slice_then_reads_the_clock():
    t = thread()
    i = ins(csr(RD, 1, 0, 0x3002), csr=0x3002)
    with pytest.raises(WaitFor):
        OPS["csrrd"](t, i)
    t.cycles = 1234
    OPS["csrrd"](t, i)
    assert t.rd(1, CODE) == 1234
    with pytest.raises(WaitFor):  # the next read at the same place syncs again
        OPS["csrrd"](t, i)


def _tick_program(m, n):
    t = m.agents[0]
    from sys_support import addi, bra
    load(m, CODE, [csr(RD, 1, 0, 0x3002)] + [addi(3, 3, 1)] * n + [csr(RD, 2, 0, 0x3002), bra(0)])
    t.pc = CODE
    return t


@pytest.mark.parametrize("n", [0, 1, 10, 2000])
def test_tick_difference_is_exact_cycles_even_in_a_long_solo_slice(n):
    m = machine()
    t = _tick_program(m, n)
    m.run(max_steps=10_000)
    # the first read costs 1 (csr class), then n ALU instructions
    assert (t.r[2] - t.r[1]) & 0xFFFF_FFFF == n + 1
    assert t.r[3] == n


def test_tick_is_the_machine_clock():
    m = machine()
    t = _tick_program(m, 5)
    m.run(max_steps=100)
    assert t.r[2] == 6 and t.instret == 8


# ---------------------------------------------------------------------------- STATUS


def test_status_machine_view_is_whole_word_and_om_is_read_only():
    t = thread()
    assert do(t, RD, 0x3004) == 0xFF000CE0
    do(t, RW, 0x3004, 0x12000008)  # PL 0x12, OM 0 (ignored), MIE
    assert t.status_stack[0] == 0x12000C08
    assert t.mode == 3
    do(t, RS, 0x3044, 1 << 17 | 1 << 9)  # HDL alias number
    assert t.status_stack[0] == 0x12020E08
    do(t, RC, 0x3004, 0x8)
    assert t.status_stack[0] == 0x12020E00


@pytest.mark.parametrize("level,expect", [(0, 0x1), (1, 0x400 | 0x3), (2, 0x800 | 0x7)])
def test_status_lower_views_expose_mode_and_own_enables(level, expect):
    t = thread()
    t.status_stack[0] = 0xFF000C00 | 0x1F | 3 << 5
    assert do(t, RD, level << 12 | 0x004) == expect
    assert do(t, RD, level << 12 | 0x044) == expect


def test_status_lower_view_writes_only_its_enable_bits():
    t = thread()
    t.status_stack[0] = 0xFF000C00
    set_mode(t, 1)
    before = t.status_stack[0]
    do(t, RW, 0x1004, 0xFFFF_FFFF)
    assert t.status_stack[0] == before | 0x3
    do(t, RC, 0x0004, 0x3)
    assert t.status_stack[0] == before | 0x2


# ---------------------------------------------------------------------------- per-thread registers


def test_cause_and_badaddr_have_one_copy_per_mode():
    t = thread()
    t.cause = [1, 2, 3, 4]
    t.badaddr = [10, 20, 30, 40]
    for level in range(4):
        assert do(t, RD, level << 12 | 6) == level + 1
        assert do(t, RD, level << 12 | 7) == (level + 1) * 10
    do(t, RW, 0x1006, 0xFFFF_F8EE)
    assert t.cause[1] == 0x8EE  # 12 bits: code, level, external
    do(t, RW, 0x0007, 0xDEAD_BEEF)
    assert t.badaddr == [0xDEADBEEF, 20, 30, 40]


def test_ptbr_and_asid_flush_the_threads_decoded_code():
    t = thread()
    flushed = []
    t.space.flush = lambda: flushed.append(1)
    do(t, RW, 0x1003, 0x0004_2010)
    assert t.ptbr == 0x0004_2010 and len(flushed) == 1
    do(t, RW, 0x101F, 0xFFFF)
    assert t.asid == 0x3FF and len(flushed) == 2
    do(t, RW, 0x101F, 0x3FF)  # no change: nothing to flush
    assert len(flushed) == 2
    assert do(t, RD, 0x1003) == 0x0004_2010


def test_eip_reads_top_of_ip_stack_and_is_writable_in_machine_mode():
    t = thread()
    assert do(t, RD, 0x3038) == 0xFFFD0000
    do(t, RW, 0x3048, 0x2000)  # HDL alias
    assert t.ip_stack[0] == 0x2000 and t.ip_stack[1] == 0xFFFD0000
    assert do(t, RD, 0x3038) == 0x2000


def test_eip_read_only_when_configured():
    t = thread(eip_writable=False)
    do(t, RW, 0x3038, 0x2000)
    assert t.ip_stack[0] == 0xFFFD0000


def test_plstack_views_the_pl_bytes_of_four_status_entries():
    t = thread()
    t.status_stack[1] = 0x11000C00
    t.status_stack[2] = 0x22000000
    assert do(t, RD, 0x303F) == 0xFF2211FF
    do(t, RW, 0x303F, 0x01020304)
    assert [s >> 24 for s in t.status_stack[:5]] == [4, 3, 2, 1, 0xFF]
    assert t.status_stack[1] & 0xFFFFFF == 0x000C00


def test_pmstack_packs_mode_and_mie_per_entry_and_is_read_only():
    t = thread()
    t.status_stack = [0xFF000C08, 0x00000000, 0x00000408] + [0xFF000CE0] * 5
    value = do(t, RD, 0x3040)
    assert value & 0xF == 0b111          # OM 3, MIE
    assert (value >> 4) & 0xF == 0       # user, MIE clear
    assert (value >> 8) & 0xF == 0b101   # supervisor, MIE
    assert (value >> 28) & 0xF == 0b011  # reset entry
    do(t, RW, 0x3040, 0)
    assert do(t, RD, 0x3040) == value


# ---------------------------------------------------------------------------- shared registers


@pytest.mark.parametrize("number,attr,index", [
    (0x1005, "hmask", None), (0x3018, "dbad", 0), (0x301B, "dbad", 3), (0x301C, "dbam", 0),
    (0x301F, "dbam", 3), (0x3020, "dbcr", None), (0x3021, "dbsr", None),
    (0x3030, "tvec", 0), (0x3033, "tvec", 3),
])
def test_shared_registers_read_write_set_clear(number, attr, index):
    m = machine()
    t0, t1 = m.agents[0], m.agents[1]

    def value():
        v = getattr(m.phoenix, attr)
        return v[index] if index is not None else v

    do(t0, RW, number, 0xF0F0_0000)
    assert value() == 0xF0F0_0000
    assert do(t1, RD, number) == 0xF0F0_0000  # one copy for every thread
    do(t0, RS, number, 0x0F)
    do(t0, RC, number, 0xF000_0000)
    assert value() == 0x00F0_000F


def test_tvec_reset_value():
    t = thread()
    assert [do(t, RD, 0x3030 + i) for i in range(4)] == [0xFFFD0000] * 4


# ---------------------------------------------------------------------------- TIME / TIMESEC


def _read_clock_csr(t, number):
    i = ins(csr(RD, 1, 0, number), csr=number)
    t.clock_read_pc = CODE  # as if the slice had just been synchronised
    OPS["csrrd"](t, i)
    return t.rd(1, CODE)


def test_time_advances_with_the_clock_and_wraps_into_timesec():
    t = thread(time_hz=100)
    assert _read_clock_csr(t, 0x0FE0) == 0
    t.cycles = 250
    assert _read_clock_csr(t, 0x3FE0) == 50
    assert _read_clock_csr(t, 0x1FE1) == 2


def test_time_writes_from_machine_copy_only():
    t = thread(time_hz=1000)
    t.cycles = 10
    do(t, RW, 0x3FE1, 7)
    do(t, RW, 0x3FE0, 500)
    t.cycles = 30
    assert _read_clock_csr(t, 0x0FE0) == 520
    assert _read_clock_csr(t, 0x0FE1) == 7
    do(t, RW, 0x0FE0, 0)  # the user copy is read-only
    assert _read_clock_csr(t, 0x3FE0) == 520
    t.cycles = 530
    assert _read_clock_csr(t, 0x3FE1) == 8 and _read_clock_csr(t, 0x3FE0) == 20


def test_clock_csrs_are_recognised():
    assert csrs.reads_clock(0x3002) and csrs.reads_clock(0x0FE0) and csrs.reads_clock(0x3FE1)
    assert not csrs.reads_clock(0x3001) and not csrs.reads_clock(0x3FE2)


# ---------------------------------------------------------------------------- reserved/unknown


@pytest.mark.parametrize("number", [0x300C, 0x0014, 0x1020, 0x3041, 0x3060, 0x3105, 0x3500, 0x2ABC])
def test_reserved_and_unknown_numbers_read_zero_and_ignore_writes(number):
    t = thread()
    do(t, RW, number, 0x1234)
    assert do(t, RD, number) == 0
