"""Every trigger fires at the right point, the same on both engines, and costs nothing before.

Each test runs a reference machine without the fault to the point where the trigger
should fire — by single steps, which the scheduler interleaves exactly as one run —
and checks that the fault saw that machine's state there (its record's ``old``
value and step), on the step and the fast engine alike.
"""

from __future__ import annotations

import pytest
from faults_support import ENGINES, LONG, inject, outcome, rv_machine, toy_machine, toy_word

from tessera.errors import ConfigError

#: both toy cores count r2 down from 60, adding it to r3, with a load and a store each round
TOY_LOOP = [
    toy_word("li", rd=2, limm=60),
    toy_word("cid", rd=1),
    toy_word("add", rd=3, rs1=3, rs2=2),          # 0x8: loop
    toy_word("mul", rd=4, rs1=3, rs2=1),
    toy_word("st", rd=4, rs1=0, imm=0x400),
    toy_word("ld", rd=5, rs1=0, imm=0x400),
    toy_word("addi", rd=2, rs1=2, imm=-1),
    toy_word("bne", rd=2, rs1=0, boff=-20),
    toy_word("halt", rd=3),
]


def next_agent(machine):
    """The agent the scheduler runs next: the first runnable one from whose turn it is."""
    agents = machine.agents
    for i in range(len(agents)):
        agent = agents[(machine.scheduler.turn + i) % len(agents)]
        if agent.status == "runnable":
            return agent
    raise AssertionError("nobody can run")


def step_until(machine, done):
    """Single-step ``machine`` until ``done(machine)``; returns it."""
    while not done(machine):
        machine.step()
    return machine


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize("n", [0, 1, 2, 57, 400, 1203])
def test_retired_n_fires_after_the_n_th_instruction(engine, n):
    machine = rv_machine(LONG, engine)
    record = inject(machine, f"target=a0,bit=30,at=retired:{n}")
    outcome(machine)
    reference = step_until(rv_machine(LONG, "step"), lambda m: m.agent("hart0").instret == n)
    assert record["status"] == "injected" and record["step"] == n
    assert record["old"] == reference.agent("hart0").regs["x"][10]


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize(("quantum", "n"), [(None, 37), (None, 200), (1, 37), (1, 251), (5, 99)])
def test_retired_n_of_one_agent_fires_after_that_agent_s_n_th(engine, quantum, n):
    machine = toy_machine(TOY_LOOP, engine, cores=2, quantum=quantum)
    record = inject(machine, f"target=core1.r[3],bit=20,at=retired:{n}@core1")
    outcome(machine)
    reference = step_until(toy_machine(TOY_LOOP, "step", cores=2, quantum=quantum),
                           lambda m: m.agent("core1").instret == n)
    assert (record["step"], record["old"]) == (reference.total_steps, reference.agent("core1").r[3])


@pytest.mark.parametrize("engine", ENGINES)
def test_retired_n_of_the_machine_counts_every_processor(engine):
    machine = toy_machine(TOY_LOOP, engine, cores=2, quantum=3)
    record = inject(machine, "target=core0.r[4],bit=1,at=retired:101")
    outcome(machine)
    reference = step_until(toy_machine(TOY_LOOP, "step", cores=2, quantum=3),
                           lambda m: m.agent("core0").instret + m.agent("core1").instret == 101)
    assert (record["step"], record["old"]) == (reference.total_steps, reference.agent("core0").r[4])


@pytest.mark.parametrize("engine", ENGINES)
def test_step_n_fires_after_n_machine_steps(engine):
    machine = toy_machine(TOY_LOOP, engine, cores=2)
    record = inject(machine, "target=core1.r[2],bit=0,at=step:500")
    outcome(machine)
    reference = toy_machine(TOY_LOOP, "step", cores=2)
    reference.run(max_steps=500, raise_on_budget=False)
    assert (record["step"], record["old"]) == (500, reference.agent("core1").r[2])


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize("cycle", [1, 50, 333, 334, 335])
def test_cycle_c_fires_at_the_first_boundary_where_the_clock_reaches_c(engine, cycle):
    machine = toy_machine(TOY_LOOP, engine)                       # mul costs 3, ld/st 2, the rest 1
    record = inject(machine, f"target=r[3],bit=25,at=cycle:{cycle}")
    outcome(machine)
    reference = step_until(toy_machine(TOY_LOOP, "step"), lambda m: m.clock >= cycle)
    assert (record["step"], record["old"]) == (reference.total_steps, reference.agent("core0").r[3])


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize(("k", "agent"), [(1, None), (9, None), (9, "core1"), (60, "core0")])
def test_pc_k_fires_before_the_k_th_execution(engine, k, agent):
    machine = toy_machine(TOY_LOOP, engine, cores=2, quantum=7)
    at = f"pc:0x10#{k}" + (f"@{agent}" if agent else "")
    record = inject(machine, f"target=r[4],model=zero,at={at}")
    outcome(machine)
    reference = toy_machine(TOY_LOOP, "step", cores=2, quantum=7)
    seen = 0
    while True:
        nxt = next_agent(reference)
        if getattr(nxt, "pc", None) == 0x10 and (agent is None or nxt.name == agent):
            seen += 1
            if seen == k:
                break
        reference.step()
    who = record["agent"]
    assert (agent is None or who == agent) and record["pc"] == 0x10 and record["count"] == k
    assert record["target"] == f"{who}.r[4]" and record["old"] == reference.agent(who).r[4]


def test_pc_triggers_take_symbols():
    machine = rv_machine(LONG)
    record = inject(machine, "model=skip,at=pc:loop#400")
    assert outcome(machine)[:2] == ("halted", (sum(range(2, 401))) & 0xFF)   # the last add of 1 skipped
    assert record["pc"] == machine.symbols["loop"]
    with pytest.raises(ConfigError, match="no such symbol"):
        inject(rv_machine(LONG), "model=skip,at=pc:nowhere")


@pytest.mark.parametrize("engine", ENGINES)
def test_class_n_hits_the_destination_of_the_n_th_instruction_of_the_class(engine):
    machine = rv_machine(LONG, engine)
    record = inject(machine, "model=flip,bit=31,at=class:alu#7")   # li li add xori addi | add xori
    outcome(machine)
    reference = rv_machine(LONG, "step")
    reference.run(max_steps=8, raise_on_budget=False)
    assert (record["mnemonic"], record["target"], record["pc"]) == ("xori", "hart0.x[11]", 0x1000C)
    assert record["old"] == reference.agent("hart0").regs["x"][11] and record["new"] == record["old"] ^ 1 << 31


def test_class_names_are_timing_classes_flags_units_or_mnemonics():
    machine = rv_machine(LONG)
    record = inject(machine, "model=zero,at=class:bne#2")      # a mnemonic
    record2 = inject(machine, "model=zero,at=class:branch#3")  # a timing class; a branch writes nothing
    outcome(machine)
    assert record["status"] == record2["status"] == "no destination"
    with pytest.raises(ConfigError, match="no instruction of rv32im is of class 'fp'"):
        inject(rv_machine(LONG), "model=zero,at=class:fp")


@pytest.mark.parametrize("spec", [
    "target=a0,bit=3,at=retired:300", "target=mem[0x100],model=random,at=step:77", "target=a1,at=cycle:500",
    "model=skip,at=pc:loop#100", "target=insn,bit=12,at=retired:600", "model=stuck1,bit=2,at=class:alu#50,window=30",
    "target=t0,model=stuck0,bit=1,at=pc:loop#3",
])
def test_every_engine_gives_the_same_run(spec):
    runs = set()
    for engine in ("step", "fast", "check"):
        machine = rv_machine(LONG, engine)
        record = inject(machine, spec)
        runs.add((outcome(machine), machine.state_hash(), repr(sorted(record.items()))))
    assert len(runs) == 1


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize("at", ["retired:1000000", "step:999999", "cycle:999999", "pc:0x20000", "class:div"])
def test_an_armed_fault_that_never_fires_leaves_the_run_as_it_was(engine, at):
    plain = rv_machine(LONG, engine)
    armed = rv_machine(LONG, engine)
    record = inject(armed, f"model=zero,at={at}" if at.startswith("class") else f"target=a0,model=zero,at={at}")
    assert outcome(armed) == outcome(plain)
    assert armed.state_hash() == plain.state_hash() and record["status"] == "not reached"


def entries(machine):
    return list(machine.space.decode_cache(machine.arch.name).values())


def test_before_a_counted_trigger_the_fast_engine_runs_blocks_untouched():
    machine = rv_machine(LONG, "fast")
    record = inject(machine, "target=a0,bit=3,at=retired:1500")
    machine.run(max_steps=1400, raise_on_budget=False)
    cache = machine.space.decode_cache("rv32im")
    assert record["status"] == "armed" and cache.blocks                    # translated blocks ran
    assert all(ins.blockable and ins.installed is ins.semantic for ins in entries(machine))   # nothing woven
    machine.run()
    assert record["status"] == "injected"
    assert all(ins.blockable for ins in entries(machine))                 # and nothing woven after


def test_a_pc_trigger_instruments_its_instruction_only():
    machine = rv_machine(LONG, "fast")
    inject(machine, "target=a0,bit=3,at=pc:loop#300")
    machine.run(max_steps=900, raise_on_budget=False)
    woven = [ins.address for ins in entries(machine) if not ins.blockable]
    assert woven == [machine.symbols["loop"]]
    assert machine.space.decode_cache("rv32im").blocks
