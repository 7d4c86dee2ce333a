"""The CPU loop and the scheduler: step counts, budgets, stop conditions, single-stepping,
deterministic interleaving."""

from __future__ import annotations

import attrs
import pytest

import tessera
from tessera.control import Yield
from tessera.engine import HALTED, RUNNABLE
from tessera.errors import BudgetExceeded, ConfigError
from tessera.machine import Machine

from .conftest import TOY, Plugin, labels, new_machine, producer_consumer, prog, racy, spin, sum_loop

N = 10
STEPS_PER_CORE = 2 + 3 * N + 1  # li, li, N x (add, addi, bne), halt
HALT_PC = labels(*sum_loop(N))["loop"] + 12


def test_exact_step_counts_instret_and_cycles(toy_machine):
    m = toy_machine(*sum_loop(N), cores=1)
    r = m.run()
    cpu = m.cpus[0]
    assert r.reason == "halted"
    assert r.steps == STEPS_PER_CORE == cpu.instret == m.total_steps
    assert cpu.traps == 0
    assert cpu.exit_code == r.exit_code == sum(range(N + 1))
    assert cpu.status == HALTED and cpu.pc == HALT_PC
    assert cpu.cycles == STEPS_PER_CORE  # every toy instruction here costs one cycle
    assert r.cycles == m.clock == STEPS_PER_CORE


def test_two_cores_and_the_timing_classes(toy_machine):
    m = toy_machine(
        ("li", dict(rd=1, limm=3)),
        ("mul", dict(rd=2, rs1=1, rs2=1)),       # 3 cycles
        ("st", dict(rd=2, rs1=0, imm=0x400)),    # 2 cycles
        ("halt", dict(rd=2)),
    )
    r = m.run()
    assert r.steps == 8 == m.total_steps
    for cpu in m.cpus:
        assert cpu.instret == 4 and cpu.exit_code == 9
        assert cpu.cycles == 1 + 3 + 2 + 1
    assert m.clock == 7
    assert m.agent("dma").instret == 0


def test_run_on_a_finished_machine_does_nothing():
    m = new_machine(prog(*sum_loop(N)), cores=1)
    m.run()
    r = m.run()
    assert r.reason == "halted" and r.steps == 0
    assert m.total_steps == STEPS_PER_CORE


def test_step_budget_raises_with_result_and_resumes():
    m = new_machine(prog(*sum_loop(N)))
    with pytest.raises(BudgetExceeded) as info:
        m.run(max_steps=10)
    err = info.value
    assert err.exit_code == 69
    assert err.result.reason == "budget" and err.result.steps == 10
    assert "step budget of 10" in err.result.detail
    assert err.agent == err.result.agent == "core0" and err.pc == err.result.pc == m.cpus[0].pc
    assert sum(c.instret for c in m.cpus) == 10 == m.total_steps
    r = m.run()
    assert r.reason == "halted" and r.steps == 2 * STEPS_PER_CORE - 10
    assert m.total_steps == 2 * STEPS_PER_CORE


def test_step_budget_without_raising():
    m = new_machine(prog(*sum_loop(N)), cores=1)
    r = m.run(max_steps=7, raise_on_budget=False)
    assert (r.reason, r.steps, m.cpus[0].instret) == ("budget", 7, 7)
    r = m.run(max_steps=0, raise_on_budget=False)
    assert (r.reason, r.steps) == ("budget", 0)
    with pytest.raises(ConfigError):
        m.run(max_steps=-1)
    assert m.cpus[0].instret == 7


def test_step_budget_counts_across_cores_and_quanta():
    for quantum in (1, 3, 64):
        m = new_machine(prog(*racy(30)), quantum=quantum)
        for _ in range(5):
            r = m.run(max_steps=17, raise_on_budget=False)
            assert r.steps == 17
        assert m.total_steps == 85 == sum(c.instret for c in m.cpus)


def test_cycle_budget(machine_factory):
    m = machine_factory(prog(*spin()))
    r = m.run(max_cycles=100, raise_on_budget=False)
    assert r.reason == "budget" and "cycle budget" in r.detail
    assert [c.cycles for c in m.cpus] == [100, 100]
    assert m.clock == 100 == r.cycles
    r = m.run(max_cycles=50, raise_on_budget=False)
    assert [c.cycles for c in m.cpus] == [150, 150]
    with pytest.raises(BudgetExceeded):
        m.run(max_cycles=1)


def test_cycle_budget_with_uneven_cores():
    # core1's instructions are slower (mul: 3 cycles) than core0's (addi: 1 cycle)
    m = new_machine(prog(
        ("cid", dict(rd=1)),
        ("bne", dict(rd=1, rs1=0, boff="slow")),
        "fast:",
        ("addi", dict(rd=2, rs1=2, imm=1)),
        ("jmp", dict(joff="fast")),
        "slow:",
        ("mul", dict(rd=3, rs1=3, rs2=3)),
        ("jmp", dict(joff="slow")),
    ))
    m.run(max_cycles=60, raise_on_budget=False)
    assert m.cpus[0].cycles == 60
    assert 60 <= m.cpus[1].cycles < 60 + 3
    assert m.clock == max(c.cycles for c in m.cpus)


def test_wall_time_budget_stops_an_endless_loop():
    m = new_machine(prog(*spin()))
    r = m.run(max_seconds=0.2, raise_on_budget=False)
    assert r.reason == "budget" and "wall-time" in r.detail
    assert 0.2 <= r.seconds < 10
    assert r.steps > 0 and all(c.status == RUNNABLE for c in m.cpus)


def test_until_pc_stops_before_the_instruction_and_continues():
    m = new_machine(prog(*sum_loop(N)), cores=1)
    r = m.run(until_pc=[HALT_PC])
    cpu = m.cpus[0]
    assert r.reason == "breakpoint" and r.pc == HALT_PC and r.agent == "core0"
    assert cpu.pc == HALT_PC and cpu.status == RUNNABLE
    assert cpu.instret == STEPS_PER_CORE - 1 == r.steps  # the halt has not run
    assert cpu.r[3] == sum(range(N + 1))
    r = m.run(until_pc=[HALT_PC])  # resuming from the stop pc runs it
    assert r.reason == "halted" and cpu.instret == STEPS_PER_CORE


def test_until_pc_inside_a_loop_stops_every_iteration():
    loop = labels(*sum_loop(N))["loop"]
    m = new_machine(prog(*sum_loop(N)), cores=1)
    seen = []
    while True:
        r = m.run(until_pc=[loop])
        if r.reason == "halted":
            break
        assert r.pc == loop
        seen.append(m.cpus[0].r[2])
    assert seen == list(range(N, 0, -1))


def test_until_symbol():
    m = new_machine(prog(*sum_loop(N)), cores=1)
    m.symbols["done"] = HALT_PC
    r = m.run(until_symbol=["done"])
    assert r.reason == "breakpoint" and r.pc == HALT_PC
    assert m.run().reason == "halted"
    with pytest.raises(ConfigError, match="unknown symbol 'nowhere'"):
        m.run(until_symbol=["nowhere"])


def test_single_step_follows_the_scheduler():
    m = new_machine(prog(*sum_loop(N)))  # quantum 64: core0 first
    for i in range(1, 6):
        r = m.step()
        assert r.reason == "budget" and r.steps == 1
        assert m.cpus[0].instret == i and m.cpus[1].instret == 0
    m1 = new_machine(prog(*sum_loop(N)), quantum=1)
    for _ in range(6):
        m1.step()
    assert [c.instret for c in m1.cpus] == [3, 3]


def test_single_step_a_named_agent():
    m = new_machine(prog(*sum_loop(N)))
    r = m.step("core1")
    assert r.steps == 1 and r.agent == "core1" and r.pc == 4
    assert (m.scheduler.turn, m.scheduler.left) == (0, 0)  # a debugger's step: not core1's turn
    assert m.agent("core1").instret == 1 and m.agent("core0").instret == 0
    assert m.total_steps == 1
    for _ in range(STEPS_PER_CORE + 3):
        m.step("core1")
    assert m.agent("core1").status == HALTED and m.agent("core1").instret == STEPS_PER_CORE
    assert m.step("core1").steps == 0
    with pytest.raises(ConfigError, match="no agent named 'core9'"):
        m.step("core9")
    r = m.run()
    assert r.reason == "halted" and m.agent("core0").instret == STEPS_PER_CORE


def test_same_program_same_state_hash():
    for quantum in (1, 5, 64, 10_000):
        hashes = set()
        for _ in range(2):
            m = new_machine(prog(*racy(30)), quantum=quantum)
            m.run()
            hashes.add(m.state_hash())
        assert len(hashes) == 1, quantum


def test_quantum_controls_the_interleaving():
    ctr = labels(*racy(30))["ctr"]
    lockstep = new_machine(prog(*racy(30)), quantum=1)
    lockstep.run()
    assert lockstep.space.read(ctr, 4) == 30  # every increment of one core is lost
    serial = new_machine(prog(*racy(30)), quantum=10_000)
    serial.run()
    assert serial.space.read(ctr, 4) == 60  # core0 finishes before core1 starts
    assert lockstep.state_hash() != serial.state_hash()


def test_producer_consumer_result_does_not_depend_on_the_quantum():
    for quantum in (1, 2, 7, 64):
        m = new_machine(prog(*producer_consumer(15)), quantum=quantum)
        r = m.run()
        assert m.agent("core1").exit_code == sum(range(16)), quantum
        assert r.reason == "halted"


@pytest.mark.parametrize("quantum", [2, 5, 7, 64])
def test_breakpoint_stop_does_not_change_the_interleaving(quantum):
    # A stop in the middle of a quantum must leave the scheduler where an
    # uninterrupted run would be; otherwise setting a breakpoint changes the program.
    ref = new_machine(prog(*racy(20)), quantum=quantum)
    ref.run()
    for bp in (8, 12, 16, 20, 24):
        m = new_machine(prog(*racy(20)), quantum=quantum)
        assert m.run(until_pc=[bp]).reason == "breakpoint"
        m.run()
        assert m.state_hash() == ref.state_hash(), bp


def test_interrupted_runs_match_an_uninterrupted_run():
    ref = new_machine(prog(*producer_consumer(10)), quantum=5)
    ref.run()
    m = new_machine(prog(*producer_consumer(10)), quantum=5)
    while m.run(max_steps=3, raise_on_budget=False).reason == "budget":
        pass
    assert m.state_hash() == ref.state_hash()
    assert m.total_steps == ref.total_steps


def test_machine_without_a_board_has_one_core():
    arch = attrs.evolve(TOY, name="toy-bare", build=None)  # no board: the default single core
    m = Machine(arch)
    m.space.write_bytes(0, prog(*sum_loop(4)))
    assert [a.name for a in m.agents] == ["core0"]
    assert m.run().exit_code == 10


def test_progress_is_reported_every_64k_steps():
    reports = []
    m = new_machine(prog(*spin()), cores=1)
    r = m.run(max_steps=3 * 65536 + 10, raise_on_budget=False, progress=reports.append)
    assert r.steps == 3 * 65536 + 10
    assert len(reports) == 3
    assert all(65536 * (i + 1) <= n < 65536 * (i + 1) + m.quantum for i, n in enumerate(reports))



# -- Yield and the solo quantum ------------------------------------------------------------

class YieldAfterLi(Plugin):
    """Raises Yield after every ``li`` and records which agent ran each instruction."""

    def __init__(self):
        self.order: list[str] = []

    @tessera.hookimpl
    def tessera_execute_instrument(self, ins):
        def before(agent, ins):
            self.order.append(agent.name)

        def after(agent, ins):
            if ins.mnemonic == "li":
                raise Yield(agent.next_pc)

        return before, after


def test_yield_retires_the_instruction_and_ends_the_slice():
    plugin = YieldAfterLi()
    m = new_machine(prog(*sum_loop(N)), cores=2, quantum=1000, plugins=(plugin,))
    r = m.run()
    assert r.exit_code == sum(range(N + 1))
    assert m.cpus[0].instret == STEPS_PER_CORE  # the li that yielded still retired
    # core0 yields after each of its two leading li's, so core1 runs in between
    assert plugin.order[:4] == ["core0", "core1", "core0", "core1"]


def test_solo_quantum_keeps_results_and_determinism():
    arch = attrs.evolve(TOY, quantum=1, solo_quantum=512)
    hashes, sums = set(), set()
    for _ in range(2):
        m = Machine(arch, host=None, config={"echo": False})
        m.space.write_bytes(0, prog(*producer_consumer(20)), force=True)
        m.run()
        hashes.add(m.state_hash())
        sums.add(m.agent("core1").exit_code)
    assert sums == {sum(range(1, 21))} and len(hashes) == 1


def test_solo_quantum_applies_only_while_one_agent_is_runnable():
    arch = attrs.evolve(TOY, quantum=1, solo_quantum=512)
    m = Machine(arch, host=None, config={"echo": False, "cores": 1})
    m.space.write_bytes(0, prog(*sum_loop(N)), force=True)
    m.run(max_steps=2, raise_on_budget=False)
    # step 1: core0 and the dma engine are runnable (one step); the engine then parks;
    # step 2: core0 is alone and gets the long quantum
    assert m.scheduler.left == 511
    m2 = Machine(arch, host=None, config={"echo": False, "cores": 2})
    m2.space.write_bytes(0, prog(*sum_loop(N)), force=True)
    m2.run(max_steps=1, raise_on_budget=False)
    assert m2.scheduler.left == 0  # two runnable cores: one step each, fine-grained
