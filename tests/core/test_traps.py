"""Traps: illegal words, memory faults and ecall, handled or not; stop_on_trap."""

from __future__ import annotations

import attrs
import pytest

import tessera
from tessera.errors import DecodeError, UnhandledTrap
from tessera.machine import Machine

from .conftest import TOY, Plugin, encode, labels, new_machine, prog

ILLEGAL = 0xFFFF_FFFF

# The handler records cause and epc in r13/r14, counts traps in r12, overwrites the
# trapping instruction with a nop (word 0) and returns to it with eret.
# (tvec is set from Python: the toy's csrw cannot encode a source register other than
# r0, see test_toy_csrw_encodes_its_source_register.)
HANDLER = (
    "handler:",
    ("csrr", dict(rd=13, csr=2)),
    ("csrr", dict(rd=14, csr=1)),
    ("addi", dict(rd=12, rs1=12, imm=1)),
    ("st", dict(rd=0, rs1=14, imm=0)),
    ("eret", {}),
)


def trapping(*body):
    return (*body, ("halt", dict(rd=13)), *HANDLER)


def with_tvec(items, **kw):
    m = new_machine(prog(*items), **kw)
    for cpu in m.cpus:
        cpu.c[0] = labels(*items)["handler"]
    return m


def test_illegal_word_without_handler_names_pc_and_word():
    m = new_machine(prog(("nop", {}), ("nop", {}), ILLEGAL, ("halt", dict(rd=0))), cores=1)
    with pytest.raises(UnhandledTrap) as info:
        m.run()
    err = info.value
    assert err.pc == 8 and err.word == ILLEGAL and err.agent == "core0" and err.cause == 2
    text = str(err)
    assert "pc 0x00000008" in text and "word 0xffffffff" in text and "core0" in text
    assert "\n" not in text and err.exit_code == 68
    cpu = m.cpus[0]
    assert cpu.pc == 8 and cpu.instret == 2 and cpu.traps == 0


def test_illegal_word_with_handler():
    items = trapping(("li", dict(rd=2, limm=5)), "bad:", ILLEGAL, ("addi", dict(rd=2, rs1=2, imm=1)))
    m = with_tvec(items, cores=1)
    r = m.run()
    cpu = m.cpus[0]
    bad = labels(*items)["bad"]
    assert r.reason == "halted"
    assert cpu.r[13] == 2 and cpu.r[14] == bad  # cause and epc seen by the handler
    assert cpu.c[1] == bad and cpu.c[2] == 2
    assert m.space.read(bad, 4) == 0  # the handler replaced the word; eret re-ran it
    assert cpu.r[2] == 6  # execution went on after it
    assert cpu.traps == 1 and cpu.r[12] == 1
    assert r.steps == cpu.instret + cpu.traps  # a trap taken counts as one step


@pytest.mark.parametrize("body,cause", [
    ((("li", dict(rd=3, limm=0x5_0000)), "bad:", ("ld", dict(rd=4, rs1=3, imm=0))), 5),
    ((("li", dict(rd=3, limm=0x2_0000)), "bad:", ("st", dict(rd=4, rs1=3, imm=0))), 7),
    ((("li", dict(rd=3, limm=0xFFFC)), "bad:", ("ld", dict(rd=4, rs1=3, imm=2))), 5),
])
def test_memory_fault_becomes_the_architectures_trap(body, cause):
    items = trapping(*body)
    m = with_tvec(items, cores=1)
    r = m.run()
    cpu = m.cpus[0]
    assert r.reason == "halted" and r.exit_code == cause
    assert cpu.r[14] == labels(*items)["bad"] and cpu.traps == 1


def test_fetch_fault_with_handler_records_the_target():
    items = (("nop", {}), ("jmp", dict(joff=0x5_0000)), "handler:",
             ("csrr", dict(rd=13, csr=2)), ("csrr", dict(rd=14, csr=1)), ("halt", dict(rd=13)))
    m = with_tvec(items, cores=1)
    assert m.run().exit_code == 1
    assert m.cpus[0].r[14] == 4 + 0x5_0000


def test_memory_fault_without_handler_is_unhandled():
    m = new_machine(prog(("li", dict(rd=3, limm=0x5_0000)), ("ld", dict(rd=4, rs1=3, imm=0))), cores=1)
    with pytest.raises(UnhandledTrap) as info:
        m.run()
    assert info.value.cause == 5 and info.value.pc == 4 and "0x50000" in str(info.value)


def test_ecall():
    items = trapping(("li", dict(rd=2, limm=1)), "call:", ("ecall", {}), ("addi", dict(rd=2, rs1=2, imm=1)))
    m = with_tvec(items, cores=1)
    r = m.run()
    assert r.exit_code == 8 and m.cpus[0].r[14] == labels(*items)["call"] and m.cpus[0].r[2] == 2


def test_ecall_without_handler():
    m = new_machine(prog(("nop", {}), ("ecall", {})), cores=1)
    with pytest.raises(UnhandledTrap) as info:
        m.run()
    assert info.value.cause == 8 and info.value.pc == 4
    assert info.value.word == encode("ecall")


class TrapLog(Plugin):
    def __init__(self):
        self.seen = []

    @tessera.hookimpl
    def tessera_trap(self, machine, agent, trap):
        self.seen.append((agent.name, agent.pc, trap.cause, trap.tval))


class TakenLog(TrapLog):
    """Also logs ``tessera_trap_taken``: where the agent is then, and what trap entry saved."""

    def __init__(self):
        super().__init__()
        self.taken = []

    @tessera.hookimpl
    def tessera_trap_taken(self, machine, agent, trap):
        self.taken.append((agent.name, agent.pc, agent.c[1], agent.c[2], trap.cause))


def test_trap_taken_follows_the_trap_with_the_agent_at_its_handler():
    items = trapping(("li", dict(rd=2, limm=5)), "bad:", ILLEGAL, ("addi", dict(rd=2, rs1=2, imm=1)))
    bad = labels(*items)["bad"]
    log = TakenLog()
    m = with_tvec(items, cores=1, plugins=(log,))
    tvec = m.cpus[0].c[0]
    r = m.run()
    assert r.exit_code == 2
    assert log.seen == [("core0", bad, 2, ILLEGAL)]
    assert log.taken == [("core0", tvec, bad, 2, 2)]   # at the handler; epc and cause already set


def test_trap_taken_is_not_called_for_an_unhandled_or_a_stopped_trap():
    log = TakenLog()
    m = new_machine(prog(("nop", {}), ILLEGAL), cores=1, plugins=(log,))
    with pytest.raises(UnhandledTrap):
        m.run()
    assert len(log.seen) == 1 and log.taken == []
    items = trapping("bad:", ILLEGAL)
    log = TakenLog()
    m = with_tvec(items, cores=1, plugins=(log,))
    assert m.run(stop_on_trap=True).reason == "trap"
    assert len(log.seen) == 1 and log.taken == []


def test_stop_on_trap_returns_reason_trap_then_continues():
    items = trapping(("li", dict(rd=2, limm=5)), "bad:", ILLEGAL, ("addi", dict(rd=2, rs1=2, imm=1)))
    bad = labels(*items)["bad"]
    log = TrapLog()
    m = with_tvec(items, cores=1, plugins=(log,))
    r = m.run(stop_on_trap=True)
    cpu = m.cpus[0]
    assert r.reason == "trap" and r.agent == "core0" and r.pc == bad
    assert cpu.pc == bad and cpu.r[12] == 0  # stopped before the handler ran
    assert log.seen == [("core0", bad, 2, ILLEGAL)]
    r = m.run()
    assert r.reason == "halted" and r.exit_code == 2
    assert cpu.r[12] == 1 and cpu.traps == 1 and cpu.r[2] == 6
    assert m.stop_on_trap is False


def test_stop_on_trap_for_an_unhandled_trap_stops_cleanly():
    m = new_machine(prog(("nop", {}), ILLEGAL), cores=1)
    r = m.run(stop_on_trap=True)
    assert r.reason == "trap" and r.pc == 4
    with pytest.raises(UnhandledTrap):
        m.run()


def test_trap_hook_sees_every_trap_on_every_core():
    # each core traps on its own copy of the code (the handler patches what trapped)
    items = (("cid", dict(rd=1)), ("bne", dict(rd=1, rs1=0, boff="second")),
             ILLEGAL, ("ecall", {}), ("halt", dict(rd=0)),
             "second:", ILLEGAL, ("ecall", {}), ("halt", dict(rd=0)), *HANDLER)
    log = TrapLog()
    m = with_tvec(items, plugins=(log,), quantum=1000)
    m.run()
    assert [(a, c) for a, _, c, _ in log.seen] == [("core0", 2), ("core0", 8), ("core1", 2), ("core1", 8)]
    assert [pc for _, pc, _, _ in log.seen] == [8, 12, 20, 24]
    assert [c.traps for c in m.cpus] == [2, 2]


def test_trap_loop_is_bounded_by_the_step_budget():
    # tvec points at unmapped memory: every trap faults again; each counts as a step
    m = new_machine(prog(("li", dict(rd=1, limm=0x5_0000)), ("nop", {}), ILLEGAL), cores=1)
    m.cpus[0].c[0] = 0x5_0000
    r = m.run(max_steps=50, raise_on_budget=False)
    assert r.reason == "budget" and r.steps == 50
    assert m.cpus[0].traps == 48 and m.cpus[0].instret == 2


def test_architecture_without_illegal_trap_raises_decode_error():
    arch = attrs.evolve(TOY, name="toy-strict", illegal=None)
    m = Machine(arch, config={"echo": False, "cores": 1})
    m.space.write_bytes(0, prog(("nop", {}), ILLEGAL))
    with pytest.raises(DecodeError) as info:
        m.run()
    assert info.value.word == ILLEGAL and info.value.pc == 4 and info.value.agent == "core0"
    assert info.value.exit_code == 66


def test_architecture_that_cannot_take_traps():
    arch = attrs.evolve(TOY, name="toy-notrap", take_trap=None)
    m = Machine(arch, config={"echo": False, "cores": 1})
    m.space.write_bytes(0, prog(("nop", {}), ILLEGAL, *HANDLER))
    m.cpus[0].c[0] = 8
    with pytest.raises(UnhandledTrap) as info:
        m.run()
    assert info.value.pc == 4 and info.value.cause == 2


def test_toy_csrw_encodes_its_source_register():
    # Bug in the test architecture (tests/toyarch/src/tessera_toyarch/isa.py): the csrw
    # mask OPC | 0x3C_3FFC fixes bits 21:18, which are its rs1 operand, so only
    # "csrw csr, r0" can be encoded and a program can never set tvec or epc.
    # The mask should fix the unused rd bits instead: OPC | 0x3C0_3FFC.
    word = encode("csrw", csr=0, rs1=1)
    m = new_machine(prog(("li", dict(rd=1, limm=0x40)), word, ("csrr", dict(rd=2, csr=0)),
                         ("halt", dict(rd=2))), cores=1)
    assert m.run().exit_code == 0x40


def test_a_semaphore_the_board_lacks_is_an_illegal_instruction():
    m = new_machine(prog(("sem.wait", dict(sem=9)), ("halt", dict(rd=0))), cores=1)
    with pytest.raises(UnhandledTrap) as info:
        m.run()
    assert info.value.cause == 2 and "no such semaphore" in str(info.value)
