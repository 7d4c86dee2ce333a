"""Exception entry and return: BRK, RTI, REX, double fault, UNIMP, lenient mode (spec 1.7)."""

from __future__ import annotations

import random

import pytest
from sys_support import (
    CODE,
    HANDLER,
    OPS,
    addi,
    bra,
    brk,
    csr,
    ins,
    ld,
    ldi,
    load,
    machine,
    nop,
    rex,
    rti,
    status_with,
    thread,
)

from tessera.control import Trap, Yield
from tessera.errors import UnhandledTrap
from tessera_phoenix import causes, exceptions
from tessera_phoenix.registers import RESET_IP, RESET_STATUS

M32 = 0xFFFF_FFFF


#: code that runs below machine mode lives in scratch RAM, which the reset TLB maps 1:1
SCRATCH_CODE = 0xFFFC_1000


def run_program(words, *, handler=(), mode=3, tvec=HANDLER, max_steps=200, code=CODE, **config):
    """Run ``words`` at ``code`` on t0 (TVEC3 = ``tvec``; the handler sits at its mode slot)."""
    m = machine(**config)
    t = m.agents[0]
    load(m, code, words)
    m.phoenix.tvec[3] = tvec
    if handler:
        load(m, tvec + (0x20 * mode if m.phoenix.config.vector_offset else 0), list(handler))
    t.status_stack[0] = status_with(mode)
    t.sp_sel = (47, 60, 61, 62)[mode]
    t.pc = code
    result = m.run(max_steps=max_steps, raise_on_budget=False)
    return m, t, result


# ---------------------------------------------------------------------------- BRK entry


def test_brk_entry_pushes_stacks_and_vectors_by_previous_mode():
    t = thread()
    t.status_stack[0] = status_with(1, ipl=5, mie=True, extra=1 << 9 | 1 << 17)
    t.sp_sel = 60
    t.shared.tvec[3] = 0x4000
    old_status = t.status_stack[0]
    with pytest.raises(Trap) as e:
        OPS["brk"](t, ins(brk()))
    t.pc = CODE
    assert exceptions.take_trap(t, e.value)
    assert t.status_stack[0] == 0xFF000000 | 3 << 10 | 5 << 5  # PL FF, machine, IPL kept, rest 0
    assert t.status_stack[1] == old_status and t.status_stack[2] == RESET_STATUS
    assert t.ip_stack[0] == CODE + 6 and t.ip_stack[1] == RESET_IP
    assert t.cause == [0, causes.BRK, 0, 0]
    assert t.badaddr == [0, 0, 0, 0]
    assert t.sp_sel == 62 and t.depth == 2
    assert t.pc == 0x4000 + 0x20


def test_vector_offset_off_jumps_to_tvec3():
    t = thread(vector_offset=False)
    t.status_stack[0] = status_with(2)
    t.shared.tvec[3] = 0x4000
    exceptions.enter(t, causes.BRK, eip=0)
    assert t.pc == 0x4000


def test_brk_writes_sign_extended_constant_to_rt_then_traps():
    t = thread()
    with pytest.raises(Trap) as e:
        OPS["brk"](t, ins(brk(7, -3), value=-3))
    assert t.r[7] == M32 - 2
    assert e.value.cause == causes.BRK and e.value.info["eip"] == CODE + 6


def test_brk_with_r0_target_writes_nothing():
    t = thread()
    with pytest.raises(Trap):
        OPS["brk"](t, ins(brk(0, 5), value=5))
    assert t.r[0] == 0


def test_all_zero_word_is_brk_and_returns_after_it():
    # handler: r9 = r9 + 1; RTI.  The program runs into a zero word, then a self-loop.
    m, t, result = run_program([ldi(9, 0), 0, bra(0)], handler=[addi(9, 9, 1), rti()])
    assert result.reason == "halted"
    assert t.r[9] == 1 and t.depth == 1 and t.pc == CODE + 12
    assert t.cause[3] == causes.BRK


# ---------------------------------------------------------------------------- RTI


def test_rti_pops_and_refills_with_reset_values():
    t = thread()
    t.status_stack = [status_with(3), status_with(0, mie=True)] + [0x1234] * 6
    t.ip_stack = [0x2000, 0x3000] + [0x5678] * 6
    t.depth = 2
    t.sp_sel = 62
    with pytest.raises(Yield) as y:
        OPS["rti"](t, ins(rti()))
    assert y.value.next_pc == 0x2000
    assert t.status_stack[0] == status_with(0, mie=True)
    assert t.status_stack[7] == RESET_STATUS and t.status_stack[6] == 0x1234
    assert t.ip_stack[0] == 0x3000 and t.ip_stack[7] == RESET_IP
    assert t.depth == 1 and t.sp_sel == 47  # user mode: r47 itself


@pytest.mark.parametrize("mode,alias", [(0, 47), (1, 60), (2, 61), (3, 62)])
def test_rti_sp_alias_follows_restored_mode(mode, alias):
    t = thread()
    t.status_stack[1] = status_with(mode)
    t.sp_sel = 63
    with pytest.raises(Yield):
        OPS["rti"](t, ins(rti()))
    assert t.sp_sel == alias


def test_rti_at_depth_zero_raises_rti_and_changes_nothing():
    t = thread()
    t.depth = 0
    stacks = (list(t.status_stack), list(t.ip_stack))
    with pytest.raises(Trap) as e:
        OPS["rti"](t, ins(rti()))
    assert e.value.cause == causes.RTI
    assert (t.status_stack, t.ip_stack, t.depth) == (*stacks, 0)


def test_reset_code_returns_with_rti_to_a_written_eip():
    # reset: depth 1, status entry 1 = reset status; EIP written, then RTI
    m, t, result = run_program([ldi(2, CODE + 18), csr(1, 0, 2, 0x3038), rti(), bra(0)])
    assert result.reason == "halted" and t.depth == 0 and t.pc == CODE + 18
    assert t.status_stack[0] == RESET_STATUS


def test_rti_in_user_mode_is_allowed_by_default_and_priv_when_configured():
    t = thread()
    t.status_stack[0] = status_with(0)
    t.depth = 2
    with pytest.raises(Yield):
        OPS["rti"](t, ins(rti()))
    t = thread(rti_machine_only=True)
    t.status_stack[0] = status_with(0)
    with pytest.raises(Trap) as e:
        OPS["rti"](t, ins(rti()))
    assert e.value.cause == causes.PRIV and t.depth == 1


def test_brk_handler_round_trip_from_user_mode_uses_r62_then_r47():
    # user program writes sp (r47 = its own), BRKs; handler writes sp (r62); RTI back
    prog = [ldi(47, 0x111), brk(), addi(5, 47, 0), bra(0)]
    handler = [ldi(47, 0x222), addi(6, 47, 0), rti()]
    m, t, result = run_program(prog, handler=handler, mode=0, code=SCRATCH_CODE)
    assert result.reason == "halted"
    assert t.r[47] == 0x111 and t.r[62] == 0x222
    assert t.r[5] == 0x111 and t.r[6] == 0x222
    assert t.mode == 0 and t.cause[0] == causes.BRK


# ---------------------------------------------------------------------------- REX


def rex_thread(**config):
    t = thread(**config)
    t.status_stack = [status_with(3, ipl=2) | 0b0111, status_with(0)] + [RESET_STATUS] * 6
    t.depth = 2
    t.cause = [causes.DPF, 0, 0, causes.BRK]
    t.badaddr = [0x1234, 0, 0, 0]
    t.shared.tvec[:] = [0x100, 0x200, 0x300, 0x400]
    return t


def test_rex_redirects_to_lower_mode_handler():
    t = rex_thread()
    t.wr(4, 0x1F5)
    with pytest.raises(Yield) as y:
        OPS["rex"](t, ins(rex(1, 4)))
    assert y.value.next_pc == 0x200
    assert t.mode == 1 and t.status_stack[0] >> 24 == 0xF5
    assert (t.status_stack[0] >> 5) & 7 == 2  # Irq4 = 0xxx leaves IPL
    assert t.cause[1] == causes.DPF and t.badaddr[1] == 0x1234  # from the interrupted mode
    assert t.sp_sel == 60 and t.depth == 2


def test_rex_mode_offset_and_irq_level():
    t = rex_thread(rex_mode_offset=True)
    with pytest.raises(Yield) as y:
        OPS["rex"](t, ins(rex(2, 0, irq4=0b1110)))
    assert y.value.next_pc == 0x300 + 64 * 3
    assert (t.status_stack[0] >> 5) & 7 == 6 and t.sp_sel == 61


def test_rex_without_v_continues_with_next_instruction():
    t = rex_thread()
    with pytest.raises(Yield) as y:
        OPS["rex"](t, ins(rex(0, 0, v=0)))
    assert y.value.next_pc == CODE + 6 and t.mode == 0 and t.sp_sel == 47


@pytest.mark.parametrize("mode,tm", [(3, 3), (1, 1), (1, 2), (0, 0), (2, 3)])
def test_rex_to_same_or_higher_mode_is_priv(mode, tm):
    t = rex_thread()
    t.status_stack[0] = status_with(mode) | 0xF
    before = list(t.status_stack)
    with pytest.raises(Trap) as e:
        OPS["rex"](t, ins(rex(tm)))
    assert e.value.cause == causes.PRIV and t.status_stack == before


def test_rex_fails_when_target_level_interrupts_disabled():
    t = rex_thread()
    t.status_stack[0] &= ~0b010  # SIE clear
    before = list(t.status_stack)
    assert OPS["rex"](t, ins(rex(1))) is None
    assert t.status_stack == before and t.mode == 3


def test_rex_then_rti_returns_from_lower_mode_handler():
    prog = [brk(), addi(8, 8, 1), bra(0)]
    # machine handler: enable SIE, REX to supervisor; supervisor handler: r7 = 5, RTI
    handler = [csr(3, 0, 1, 0x3004), rex(1, 0)]
    m = machine()
    t = m.agents[0]
    load(m, CODE, prog)
    load(m, HANDLER + 0x60, [ldi(1, 2)] + handler)
    load(m, SCRATCH_CODE + 0x8000, [ldi(7, 5), rti()])  # supervisor code: translated
    m.phoenix.tvec[3] = HANDLER
    m.phoenix.tvec[1] = SCRATCH_CODE + 0x8000
    t.pc = CODE
    result = m.run(max_steps=100)
    assert result.reason == "halted"
    assert t.r[7] == 5 and t.r[8] == 1 and t.mode == 3 and t.depth == 1


# ---------------------------------------------------------------------------- nesting limits


def test_double_fault_at_depth_seven_is_an_unhandled_trap():
    t = thread()
    t.depth = 7
    t.pc = 0x1234
    before = (list(t.status_stack), list(t.ip_stack))
    with pytest.raises(UnhandledTrap) as info:
        exceptions.enter(t, causes.BRK, eip=0)
    err = info.value
    assert (err.cause, err.agent, err.pc, err.exit_code) == (causes.BRK, "t0", 0x1234, 68)
    assert str(err) == ("unhandled trap: double fault: BRK (cause 63) at exception nesting depth 7 "
                        "(agent t0, pc 0x00001234)")
    assert (t.status_stack, t.ip_stack, t.depth) == (*before, 7)   # nothing stacked


def test_double_fault_in_a_run_stops_it_with_one_error():
    # the handler BRKs again and again: depth 1 + 6 exceptions, the 7th cannot be taken
    with pytest.raises(UnhandledTrap) as info:
        run_program([brk()], handler=[brk()])
    assert info.value.cause == causes.BRK and info.value.pc == HANDLER + 0x60
    assert "double fault" in str(info.value)


def test_depth_seven_without_double_fault_stacks_nothing():
    t = thread(double_fault_halts=False)
    t.depth = 7
    t.pc = 0x1234
    before = (list(t.status_stack), list(t.ip_stack))
    exceptions.enter(t, causes.BRK, eip=0)
    assert (t.status_stack, t.ip_stack, t.depth, t.pc) == (*before, 7, 0x1234)


def test_nested_exceptions_unwind_in_order():
    t = thread()
    exceptions.enter(t, causes.BRK, eip=0x10)
    exceptions.enter(t, causes.DBE, eip=0x20, badaddr=0xBAD)
    assert t.depth == 3 and t.badaddr[3] == 0xBAD
    assert exceptions.leave(t) == 0x20 and exceptions.leave(t) == 0x10 and t.depth == 1


# ---------------------------------------------------------------------------- UNIMP and lenient


def test_undefined_words_raise_unimp_at_their_own_address():
    rng = random.Random(1)
    undefined = [rng.getrandbits(42) << 6 | op for op in (1, 3, 12, 13, 27, 32, 47, 63)]
    for word in undefined:
        m, t, result = run_program([word, bra(0)], handler=[bra(0)])
        assert t.cause[3] == causes.UNIMP, hex(word)
        assert t.ip_stack[0] == CODE and t.depth == 2
        assert t.pc == HANDLER + 0x60


def test_lenient_mode_skips_undefined_words():
    m, t, result = run_program([3, addi(4, 4, 1), 0xFFFF_FFFF_FFFF, addi(4, 4, 1), bra(0)],
                               lenient=True)
    assert result.reason == "halted" and t.r[4] == 2 and t.depth == 1
    assert t.cause == [0, 0, 0, 0]


def test_lenient_mode_still_takes_real_exceptions():
    m, t, result = run_program([brk(), bra(0)], handler=[bra(0)], lenient=True)
    assert t.cause[3] == causes.BRK and t.depth == 2


def test_memory_fault_records_badaddr_for_the_previous_mode():
    # DRAM is 64 KiB here: 0x0002_0000 is unmapped, a bus error with PMA checks off
    m, t, result = run_program([ldi(2, 0x2_0000), ld(3, 2, 0x10), bra(0)], handler=[bra(0)],
                               pma=False, dram=0x1_0000)
    assert t.cause[3] == causes.DBE
    assert t.badaddr[3] == 0x2_0010 and t.ip_stack[0] == CODE + 6


def test_require_machine():
    t = thread()
    exceptions.require_machine(t, "x")
    t.status_stack[0] = status_with(2)
    with pytest.raises(Trap) as e:
        exceptions.require_machine(t, "TLBRW")
    assert e.value.cause == causes.PRIV


def test_nop_is_unaffected():
    m, t, result = run_program([nop(), bra(0)])
    assert result.reason == "halted" and t.instret == 2
