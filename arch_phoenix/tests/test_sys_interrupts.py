"""External interrupts: recognition rules, entry, the Python API and scheduled interrupts."""

from __future__ import annotations

import pytest
from sys_support import (
    CODE,
    HANDLER,
    addi,
    bra,
    csr,
    ldi,
    load,
    machine,
    rti,
    status_with,
)

from tessera.errors import ConfigError
from tessera_phoenix import causes
from tessera_phoenix.interrupts import deliver, parse_schedule, raise_interrupt

IRQ_SLOT = HANDLER + 0x60  # vector of an interrupt taken in machine mode


def ready(m, *, ipl=0, mie=True, gie=True, n=40, prefix=()):
    """t0 at CODE running ``prefix``, then ``n`` x (r1 += 1), then a self-loop; interrupts
    enabled (unless told otherwise); handler: r2 = EIP; self-loop."""
    t = m.agents[0]
    load(m, CODE, [*prefix] + [addi(1, 1, 1)] * n + [bra(0)])
    load(m, IRQ_SLOT, [csr(0, 2, 0, 0x3038), bra(0)])
    m.phoenix.tvec[3] = HANDLER
    t.status_stack[0] = status_with(3, mie=mie, ipl=ipl)
    t.gie = gie
    t.pc = CODE
    return t


# ---------------------------------------------------------------------------- recognition


def test_interrupt_entry_state():
    m = machine()
    t = ready(m, ipl=2)
    raise_interrupt(m, t, 5)
    assert deliver(t)
    assert t.pending_irq == []
    assert t.status_stack[0] == 0xFF000000 | 3 << 10 | 5 << 5  # IPL = level, enables off
    assert t.status_stack[1] == status_with(3, mie=True, ipl=2)
    assert t.ip_stack[0] == CODE  # the interrupted instruction has not executed
    assert t.cause[3] == 0x800 | 5 << 8 | causes.IRQ and t.cause[3] & 0xFF == 238
    assert t.sp_sel == 63 and t.depth == 2 and t.pc == IRQ_SLOT


@pytest.mark.parametrize("kw", [dict(mie=False), dict(gie=False), dict(ipl=5), dict(ipl=7)])
def test_interrupt_stays_pending_when_not_recognisable(kw):
    m = machine()
    t = ready(m, **kw)
    raise_interrupt(m, "t0", 5)
    result = m.run(max_steps=100)
    assert result.reason == "halted"
    assert t.r[1] == 40 and t.depth == 1 and t.pending_irq == [(5, causes.IRQ)]


def test_highest_level_first_then_the_rest_after_rti():
    m = machine()
    t = ready(m)
    raise_interrupt(m, t, 2)
    raise_interrupt(m, t, 6, cause=131)
    assert deliver(t)
    assert t.cause[3] == 0x800 | 6 << 8 | 131 and t.pending_irq == [(2, causes.IRQ)]
    assert not deliver(t)  # MIE is off in the handler, and 2 <= IPL 6 anyway


def test_global_enable_latch_is_set_by_writing_r62():
    m = machine()
    t = ready(m, gie=False)
    assert not t.gie
    t.wr(62, 0x1000)
    assert t.gie


def test_interrupt_taken_at_next_boundary_in_a_run():
    m = machine()
    t = ready(m)
    raise_interrupt(m, t, 3)
    result = m.run(max_steps=100)
    assert result.reason == "halted"
    assert t.r[1] == 0 and t.r[2] == CODE  # taken before the first instruction


def test_rti_that_enables_interrupts_takes_the_pending_one_at_once():
    # ldi @+0, csrrw EIP @+6, rti @+12, then 20 x addi from @+18: RTI returns to a
    # status with MIE set and the pending interrupt is taken before the first addi
    m = machine()
    t = ready(m, mie=False, ipl=7, n=20, prefix=[ldi(5, CODE + 18), csr(1, 0, 5, 0x3038), rti()])
    t.status_stack[1] = status_with(3, mie=True)
    raise_interrupt(m, t, 4)
    m.run(max_steps=100)
    assert t.r[2] == CODE + 18 and t.r[1] == 0


def test_csr_write_enabling_mie_takes_the_pending_one_at_once():
    m = machine()
    t = ready(m, mie=False, ipl=1, n=20, prefix=[ldi(5, 8), csr(3, 0, 5, 0x3004)])
    raise_interrupt(m, t, 4)
    m.run(max_steps=100)
    assert t.r[2] == CODE + 12 and t.r[1] == 0


def test_raise_interrupt_validates():
    m = machine()
    with pytest.raises(ConfigError):
        raise_interrupt(m, m.agents[0], 0)
    with pytest.raises(ConfigError):
        raise_interrupt(m, m.agents[0], 8)
    with pytest.raises(ConfigError):
        raise_interrupt(m, m.agents[0], 3, cause=300)


# ---------------------------------------------------------------------------- schedule


def test_parse_schedule():
    assert parse_schedule("t1:3@2000, t0:5@1_000,,", 4) == [(1000, 0, 5), (2000, 1, 3)]
    assert parse_schedule("", 4) == []
    assert parse_schedule("2:7@0x10", 4) == [(16, 2, 7)]


@pytest.mark.parametrize("text", ["t0:5", "t0@5", "x:1@2", "t4:1@5", "t0:0@5", "t0:8@5",
                                  "t0:1@-3", "t0:a@1"])
def test_parse_schedule_rejects(text):
    with pytest.raises(ConfigError):
        parse_schedule(text, 4)


def test_bad_schedule_is_a_config_error_at_build():
    with pytest.raises(ConfigError):
        machine(irq="t9:1@1")


@pytest.mark.parametrize("step", [0, 1, 7, 25, 39])
def test_scheduled_interrupt_lands_on_its_exact_step(step):
    m = machine(irq=f"t0:5@{step}")
    t = ready(m)
    result = m.run(max_steps=1000)
    assert result.reason == "halted"
    assert t.r[1] == step and t.r[2] == CODE + 6 * step


def test_scheduled_interrupt_same_however_the_run_is_split():
    def final(chunks):
        m = machine(irq="t0:5@23")
        t = ready(m)
        while m.run(max_steps=chunks, raise_on_budget=False).reason != "halted":
            pass
        return t.r[1], t.r[2], m.total_steps, m.state_hash()

    assert final(1000) == final(1) == final(7)
    assert final(1000)[:2] == (23, CODE + 6 * 23)


def test_scheduled_interrupt_counts_steps_of_all_threads():
    # two threads run the same count-up loop; the interrupt for t1 is due at step 10
    m = machine(irq="t1:5@10", reset_cr0=3)
    t0, t1 = m.agents[0], m.agents[1]
    load(m, CODE, [addi(1, 1, 1)] * 40 + [bra(0)])
    load(m, IRQ_SLOT, [csr(0, 2, 0, 0x3038), bra(0)])
    m.phoenix.tvec[3] = HANDLER
    for t in (t0, t1):
        t.status_stack[0] = status_with(3, mie=True)
        t.gie = True
        t.pc = CODE
    m.run(max_steps=1000)
    assert t0.r[1] == 40 and t0.depth == 1
    # fine-grained round robin: 5 instructions each in the first 10 steps
    assert t1.r[1] == 5 and t1.r[2] == CODE + 30


def test_scheduled_interrupt_for_a_disabled_thread_waits_until_enabled():
    m = machine(irq="t1:5@3")
    t1 = m.agents[1]
    ready(m, n=10)
    m.run(max_steps=1000)
    assert t1.pending_irq == [(5, causes.IRQ)] and t1.depth == 1


def test_may_be_interrupted_for_self_loop_halting():
    from tessera_phoenix.interrupts import may_be_interrupted

    m = machine(irq="t1:4@500")
    t0, t1 = m.agents[0], m.agents[1]
    assert not may_be_interrupted(t0)
    assert may_be_interrupted(t1)  # a scheduled interrupt is still to come
    raise_interrupt(m, t0, 3)
    assert not may_be_interrupted(t0)  # pending, but MIE/latch are off: it can never be taken
    t0.gie = True
    t0.status_stack[0] = status_with(3, mie=True, ipl=2)
    assert may_be_interrupted(t0)


def test_stop_on_trap_sees_an_interrupt_and_leaves_it_pending():
    m = machine()
    t = ready(m)
    raise_interrupt(m, t, 6)
    result = m.run(max_steps=100, stop_on_trap=True)
    assert result.reason == "trap" and t.pending_irq == [(6, causes.IRQ)] and t.depth == 1
    m.run(max_steps=100)
    assert t.pending_irq == [] and t.r[2] == CODE and t.cause[3] == 0x800 | 6 << 8 | 238
