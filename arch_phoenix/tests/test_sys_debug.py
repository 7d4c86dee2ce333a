"""Single step, debug address matches and the IP trace (STATUS.SSM/T, DBAD/DBAM/DBCR/DBSR)."""

from __future__ import annotations

import pytest
from sys_support import CODE, HANDLER, addi, bra, csr, load, machine, rti, status_with

from tessera.control import Trap
from tessera_phoenix import causes, debug

SLOT = HANDLER + 0x60
SSM, TRACE = 1 << 8, 1 << 9


#: default handler: r9 += 1, r8 = EIP, return
COUNT = (addi(9, 9, 1), csr(0, 8, 0, 0x3038), rti())


def setup(n=5, handler=COUNT, status_extra=0, **config):
    m = machine(**config)
    t = m.agents[0]
    load(m, CODE, [addi(1, 1, 1)] * n + [bra(0)])
    load(m, SLOT, list(handler))
    m.phoenix.tvec[3] = HANDLER
    t.status_stack[0] = status_with(3, extra=status_extra)
    t.pc = CODE
    return m, t


# ---------------------------------------------------------------------------- single step


def test_single_step_traps_after_every_instruction_not_in_the_handler():
    m, t = setup(status_extra=SSM)
    result = m.run(max_steps=1000)
    assert result.reason == "halted"
    assert t.r[1] == 5 and t.r[9] == 5  # one SSM exception per stepped addi
    assert t.cause[3] == causes.SSM and t.depth == 1
    assert t.r[8] == CODE + 30  # EIP of the last one: the instruction after it


def test_single_step_eip_is_the_next_instruction():
    m, t = setup(status_extra=SSM, handler=(csr(0, 8, 0, 0x3038), bra(0)))
    m.run(max_steps=100)
    assert t.r[1] == 1 and t.r[8] == CODE + 6


def test_single_step_off_costs_nothing():
    m, t = setup(n=3000)
    m.run(max_steps=10_000)
    assert t.r[1] == 3000 and t.r[9] == 0


def test_single_step_can_be_switched_on_by_a_csr_write():
    m = machine()
    t = m.agents[0]
    load(m, CODE, [addi(2, 0, SSM), csr(3, 0, 2, 0x3004)] + [addi(1, 1, 1)] * 4 + [bra(0)])
    load(m, SLOT, [addi(9, 9, 1), rti()])
    m.phoenix.tvec[3] = HANDLER
    t.pc = CODE
    m.run(max_steps=1000)
    # stepping starts with the instruction after the CSR write
    assert t.r[1] == 4 and t.r[9] == 4


# ---------------------------------------------------------------------------- address matches


def enable_fetch_match(m, n, address, *, tid=0, mask=0):
    m.phoenix.dbad[n] = address
    m.phoenix.dbam[n] = mask
    m.phoenix.dbcr |= 1 << n | tid << 28  # type 00: instruction fetch


def test_fetch_breakpoint_traps_before_the_instruction():
    # handler: clear DBCR (so the breakpoint does not fire again) and return
    m, t = setup(handler=(csr(1, 0, 0, 0x3020), *COUNT))
    enable_fetch_match(m, 2, CODE + 12)
    result = m.run(max_steps=100)
    assert result.reason == "halted"
    assert t.r[9] == 1 and t.r[1] == 5
    assert t.cause[3] == causes.DBG and t.badaddr[3] == CODE + 12
    assert t.r[8] == CODE + 12  # the instruction had not executed
    assert m.phoenix.dbsr == 0b100


def test_fetch_breakpoint_mask_and_thread_filter():
    m, t = setup(handler=(csr(1, 0, 0, 0x3020), *COUNT))
    enable_fetch_match(m, 0, CODE + 0xF0, mask=0xFF)  # matches CODE .. CODE + 0xFF
    m.run(max_steps=100)
    assert t.r[8] == CODE and t.cause[3] == causes.DBG and t.r[9] == 1

    m, t = setup()
    enable_fetch_match(m, 0, CODE, tid=1)  # debugging thread 1 only
    m.run(max_steps=100)
    assert t.cause[3] == 0 and t.r[1] == 5


def test_data_match_types():
    m = machine()
    t = m.agents[0]
    sh = m.phoenix
    sh.dbad[:2] = [0x2000, 0x3000]
    sh.dbcr = 0b11 | 0b01 << 8 | 0b11 << 12  # DBAD0 stores only, DBAD1 loads and stores
    debug.check_data(t, 0x2000, write=False)  # a load does not match a store-only entry
    with pytest.raises(Trap) as e:
        debug.check_data(t, 0x2000, write=True)
    assert e.value.cause == causes.DBG and e.value.tval == 0x2000 and sh.dbsr == 0b01
    with pytest.raises(Trap):
        debug.check_data(t, 0x3000, write=False)
    assert sh.dbsr == 0b11
    debug.check_data(t, 0x3004, write=True)  # exact compare without DBAM
    sh.dbam[1] = 0xF
    with pytest.raises(Trap):
        debug.check_data(t, 0x3004, write=True)
    sh.dbcr &= ~0b10  # disabled entries never match
    debug.check_data(t, 0x3000, write=True)


def test_fetch_type_does_not_match_data_and_reserved_type_never_matches():
    m = machine()
    t = m.agents[0]
    m.phoenix.dbad[0] = 0x2000
    for kind in (0b00, 0b10):
        m.phoenix.dbcr = 1 | kind << 8
        debug.check_data(t, 0x2000, write=True)
        debug.check_data(t, 0x2000, write=False)


# ---------------------------------------------------------------------------- trace queue


def test_trace_records_executed_addresses_in_queue_15():
    m, t = setup(n=3, status_extra=TRACE)
    m.run(max_steps=100)
    assert list(m.phoenix.queues[15]) == [CODE, CODE + 6, CODE + 12, CODE + 18]


def test_trace_stops_in_exception_handlers():
    m, t = setup(n=2, status_extra=TRACE | SSM)
    m.run(max_steps=100)
    # the handler (TRACE cleared on entry) leaves no entries; RTI restores tracing
    assert list(m.phoenix.queues[15]) == [CODE, CODE + 6, CODE + 12]
    assert t.r[9] == 2
