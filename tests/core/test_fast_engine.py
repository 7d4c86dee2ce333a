"""The fast engine (translated blocks) against the step engine: same results, exactly.

Every test runs a program on both engines and compares everything observable:
the state hash (registers, memory, agents' PCs, counters), the run result and, for
stops and errors, where they happened.  Other tests make sure the fast engine really
translated something (a block with inlined instructions, a looping block), so the
comparisons are not vacuous.
"""

from __future__ import annotations

import functools
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import tessera
from tessera.engine import blocks as blockmod
from tessera.engine import inline
from tessera.errors import ConfigError, TesseraError
from tessera.machine import Machine

from .conftest import TOY, Plugin, make_host, new_machine, prog, sum_loop

ENGINES = ("step", "fast")


def sum_program(n: int = 50) -> bytes:
    return prog(*sum_loop(n))


def outcome(machine: Machine, **run: Any) -> tuple[Any, ...]:
    """Everything a run shows: result or error, and the whole machine state."""
    try:
        r = machine.run(raise_on_budget=False, **run)
        res: tuple[Any, ...] = ("ok", r.reason, r.steps, r.cycles, r.exit_code, r.pc, r.agent)
    except TesseraError as err:
        res = ("error", type(err).__name__, err.pc, err.agent, str(err))
    agents = tuple((a.name, getattr(a, "pc", None), a.instret, a.traps, a.cycles, a.status)
                   for a in machine.agents)
    return res, agents, machine.state_hash()


def both(code: bytes, *runs: dict[str, Any], plugins: tuple[Any, ...] = (), cores: int = 1,
         **config: Any) -> list[tuple[Any, ...]]:
    """Run ``code`` on each engine through the sequence of ``runs``; assert equal outcomes."""
    seen = {}
    for engine in ENGINES:
        m = new_machine(code, cores=cores, plugins=plugins, **config)
        m.set_engine(engine)
        seen[engine] = [outcome(m, **r) for r in (runs or ({"max_steps": 100_000},))]
    assert seen["fast"] == seen["step"]
    return seen["fast"]


def fast_machine(code: bytes, **kw: Any) -> Machine:
    m = new_machine(code, cores=1, **kw)
    m.set_engine("fast")
    return m


def blocks_of(machine: Machine) -> list[Any]:
    cpu = machine.agents[0]
    return [b for b in cpu._filler.cache.blocks.values() if b.n != blockmod.NEVER]


# --------------------------------------------------------------------------- translation happens


def test_a_hot_loop_becomes_one_looping_block_with_inlined_instructions():
    m = fast_machine(sum_program(50))
    r = m.run(max_steps=1000)
    assert r.exit_code == sum(range(51))
    loops = [b for b in blocks_of(m) if b.loop]
    assert loops, blocks_of(m)
    (loop,) = loops
    assert loop.n == 3 and loop.inlined == 3
    assert [i.mnemonic for i in loop.ins] == ["add", "addi", "bne"]


def test_block_source_is_kept_on_request(monkeypatch):
    monkeypatch.setenv("TESSERA_BLOCK_SOURCE", "1")
    m = fast_machine(sum_program(20))
    m.run(max_steps=1000)
    (loop,) = [b for b in blocks_of(m) if b.loop]
    assert "while True" in loop.source and "def block_" in loop.source


def test_identical_results_for_the_sum_loop():
    (res, agents, _h), = both(sum_program(300))
    assert res[1] == "halted" and res[2] == 2 + 300 * 3 + 1


@pytest.mark.parametrize("max_steps", [1, 2, 3, 4, 5, 7, 50, 301, 302, 303, 304])
def test_step_budgets_stop_at_the_same_instruction(max_steps):
    both(sum_program(100), {"max_steps": max_steps}, {"max_steps": 10_000})


@pytest.mark.parametrize("max_cycles", [1, 2, 5, 9, 10, 11, 100, 299, 300, 301])
def test_cycle_budgets_stop_at_the_same_instruction(max_cycles):
    both(sum_program(100), {"max_cycles": max_cycles}, {"max_steps": 10_000})


def test_single_stepping_through_a_hot_loop():
    code = sum_program(10)
    states = {}
    for engine in ENGINES:
        m = new_machine(code, cores=1)
        m.set_engine(engine)
        m.run(max_steps=20, raise_on_budget=False)  # the loop is hot now
        trail = []
        for _ in range(9):
            m.step()
            trail.append((m.agents[0].pc, m.agents[0].instret, m.state_hash()))
        states[engine] = trail
    assert states["fast"] == states["step"]


def test_a_breakpoint_inside_a_hot_block_stops_exactly_there():
    code = sum_program(40)
    addi = 0xC  # li, li, add (0x8), addi (0xc), bne (0x10)
    out = both(code, {"max_steps": 40}, {"max_steps": 1000, "until_pc": [addi]},
               {"max_steps": 1000, "until_pc": [addi]}, {"max_steps": 1000})
    stop = out[1][0]
    assert stop[1] == "breakpoint" and stop[5] == addi
    assert out[3][0][1] == "halted"


def test_two_cores_with_quantum_interleave_identically():
    both(sum_program(200), {"max_steps": 100_000}, cores=2)


# --------------------------------------------------------------------------- precise exceptions


def faulting_loop(tvec: bool) -> bytes:
    """A hot loop whose 30th iteration loads from an unmapped address (mid-block)."""
    return prog(
        ("li", dict(rd=1, limm="handler" if tvec else 0)),
        ("csrw", dict(csr=0, rs1=1)),
        ("li", dict(rd=2, limm=30)),
        ("li", dict(rd=4, limm=0xF000)),
        ("li", dict(rd=6, limm=0x40)),
        "loop:",
        ("addi", dict(rd=3, rs1=3, imm=1)),
        ("add", dict(rd=4, rs1=4, rs2=6)),            # r4 += 0x40: reaches 0x10000 on pass 64
        ("addi", dict(rd=2, rs1=2, imm=-1)),
        ("bne", dict(rd=2, rs1=0, boff="loop")),
        ("li", dict(rd=2, limm=40)),
        "loop2:",
        ("addi", dict(rd=3, rs1=3, imm=1)),
        ("add", dict(rd=4, rs1=4, rs2=6)),
        ("ld", dict(rd=5, rs1=4, imm=0)),              # faults once r4 = 0x10000 (end of RAM)
        ("addi", dict(rd=2, rs1=2, imm=-1)),
        ("bne", dict(rd=2, rs1=0, boff="loop2")),
        ("halt", dict(rd=3)),
        "handler:",
        ("csrr", dict(rd=7, csr=2)),
        ("halt", dict(rd=7)),
    )


def test_a_trap_inside_a_block_is_precise_and_taken():
    (res, agents, _h), = both(faulting_loop(tvec=True))
    assert res[1] == "halted" and res[4] == 5  # the load-fault cause
    m = fast_machine(faulting_loop(tvec=True))
    m.run(max_steps=10_000)
    assert m.agents[0].c[1] == 0x30  # epc: the ld of loop2 (li*5, 4 loop words, li, addi, add, ld)


def test_an_unhandled_fault_inside_a_block_names_the_instruction():
    (res, agents, _h), = both(faulting_loop(tvec=False))
    assert res[0] == "error" and res[2] == 0x30


def test_halt_inside_a_block_retires_and_counts():
    code = prog(("li", dict(rd=2, limm=3)), "loop:", ("addi", dict(rd=2, rs1=2, imm=-1)),
                ("bne", dict(rd=2, rs1=0, boff="loop")), ("li", dict(rd=5, limm=9)),
                ("halt", dict(rd=5)), ("li", dict(rd=5, limm=1)))
    ((res, agents, _h),) = both(code, {"max_steps": 100})
    assert res[1] == "halted" and res[4] == 9 and agents[0][2] == 1 + 6 + 2


# --------------------------------------------------------------------------- code writes


def smc_in_block(rewrite_at: int) -> bytes:
    """A hot loop that stores, every pass, a word from a table over an instruction later in
    its own block: ``addi r5, r5, 1`` until the counter reaches ``rewrite_at``, then
    ``addi r5, r5, 100``."""
    from .conftest import encode

    old, new = encode("addi", rd=5, rs1=5, imm=1), encode("addi", rd=5, rs1=5, imm=100)
    return prog(
        ("li", dict(rd=2, limm=20)),
        ("li", dict(rd=6, limm="target")),
        ("li", dict(rd=9, limm="table")),
        "loop:",
        ("add", dict(rd=11, rs1=2, rs2=2)),
        ("add", dict(rd=11, rs1=11, rs2=11)),
        ("add", dict(rd=11, rs1=11, rs2=9)),
        ("ld", dict(rd=7, rs1=11, imm=0)),
        ("st", dict(rd=7, rs1=6, imm=0)),
        "target:",
        ("addi", dict(rd=5, rs1=5, imm=1)),
        ("addi", dict(rd=2, rs1=2, imm=-1)),
        ("bne", dict(rd=2, rs1=0, boff="loop")),
        ("halt", dict(rd=5)),
        "table:",
        *[new if 1 <= v <= rewrite_at else old for v in range(21)],
    )


@pytest.mark.parametrize("rewrite_at", [19, 10, 3, 1, 0])
def test_a_block_that_overwrites_its_own_code_continues_with_the_new_code(rewrite_at):
    (res, _agents, _h), = both(smc_in_block(rewrite_at), {"max_steps": 10_000})
    expected = 100 * rewrite_at + (20 - rewrite_at)
    assert res[1] == "halted" and res[4] == expected


def test_block_exit_is_taken_when_code_is_rewritten_mid_block(monkeypatch):
    exits = []
    original = blockmod.BlockExit.__init__

    def counting(self, count, pc):
        exits.append((count, pc))
        original(self, count, pc)

    monkeypatch.setattr(blockmod.BlockExit, "__init__", counting)
    m = fast_machine(smc_in_block(5))
    m.run(max_steps=10_000)
    assert exits and all(pc == 0x20 for _count, pc in exits)  # right after the st
    assert not [b for b in m.agents[0]._filler.cache.blocks.values() if b.stale]


# --------------------------------------------------------------------------- hooks and blocks


class Observer(Plugin):
    def __init__(self) -> None:
        self.seen: list[tuple[str, int, int]] = []

    @tessera.hookimpl
    def tessera_execute_observe(self, ins):
        def observe(agent, ins):
            self.seen.append((agent.name, ins.address, agent.r[2]))
        return observe


def test_observers_see_every_retirement_in_order_on_both_engines():
    logs = {}
    for engine in ENGINES:
        obs = Observer()
        m = new_machine(sum_program(30), cores=2, plugins=(obs,))
        m.set_engine(engine)
        m.run(max_steps=10_000)
        logs[engine] = obs.seen
    assert logs["fast"] == logs["step"]
    assert len(logs["fast"]) == 2 * (2 + 30 * 3 + 1)
    assert logs["fast"][-1][1] == 0x14  # the halt retired and was observed


def test_observed_loops_still_run_as_blocks():
    obs = Observer()
    m = new_machine(sum_program(30), cores=1, plugins=(obs,))
    m.set_engine("fast")
    m.run(max_steps=10_000)
    assert any(b.loop for b in blocks_of(m))


class SkipAddi(Plugin):
    """Instruments ``addi``: skips it on odd counters (a fault injector)."""

    @tessera.hookimpl
    def tessera_execute_instrument(self, ins):
        if ins.mnemonic != "addi":
            return None

        def before(agent, ins):
            return ins.next if agent.r[3] & 1 and agent.r[2] > 5 else None
        return before, None


def test_instrumented_instructions_are_stepped_and_may_redirect():
    (res, _a, _h), = both(sum_program(40), {"max_steps": 100_000}, plugins=(SkipAddi(),))
    m = new_machine(sum_program(40), cores=1, plugins=(SkipAddi(),))
    m.run(max_steps=100_000)
    assert not any(i.mnemonic == "addi" for b in blocks_of(m) for i in b.ins)


class Raising(Plugin):
    @tessera.hookimpl
    def tessera_execute_observe(self, ins):
        if ins.mnemonic != "addi":
            return None

        def observe(agent, ins):
            if agent.r[2] == 7:
                raise ValueError("boom")
        return observe


def test_a_raising_observer_in_a_block_names_its_plugin_on_both_engines():
    (res, _a, _h), = both(sum_program(40), plugins=(("obs-plugin", Raising()),))
    assert res[0] == "error" and res[1] == "PluginError" and "obs-plugin" in res[4]
    assert res[2] == 0xC


# --------------------------------------------------------------------------- random programs

BODY_OPS = st.sampled_from(["add", "sub", "mul", "addi", "ld", "st", "li"])


@st.composite
def random_loop_program(draw: Any) -> bytes:
    """A loop with a random body over r3..r7 (r9 points at data or, sometimes, at code)."""
    body = []
    for _ in range(draw(st.integers(1, 8))):
        op = draw(BODY_OPS)
        rd, rs1, rs2 = (draw(st.integers(3, 7)) for _ in range(3))
        if op in ("add", "sub", "mul"):
            body.append((op, dict(rd=rd, rs1=rs1, rs2=rs2)))
        elif op == "addi":
            body.append((op, dict(rd=rd, rs1=rs1, imm=draw(st.integers(-100, 100)))))
        elif op == "li":
            body.append((op, dict(rd=rd, limm=draw(st.integers(-1000, 1000)))))
        else:
            body.append((op, dict(rd=rd, rs1=9, imm=4 * draw(st.integers(0, 12)))))
    target = draw(st.sampled_from(["data", "data", "code"]))
    tail = draw(st.sampled_from(["halt", "illegal", "fault"]))
    end = {"halt": [], "illegal": [0xFFFF_FFFF], "fault": [("ld", dict(rd=3, rs1=10, imm=0))]}[tail]
    return prog(
        ("li", dict(rd=1, limm=draw(st.integers(1, 40)))),
        ("li", dict(rd=9, limm=target)),
        ("li", dict(rd=10, limm=0x4_0000)),
        "code:",
        "loop:",
        *body,
        ("addi", dict(rd=1, rs1=1, imm=-1)),
        ("bne", dict(rd=1, rs1=0, boff="loop")),
        *end,
        ("halt", dict(rd=3)),
        "data:",
        *([0] * 16),
    )


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(code=random_loop_program(), split=st.integers(1, 200))
def test_random_loops_agree_at_every_split(code, split):
    both(code, {"max_steps": split}, {"max_steps": 5_000})


# --------------------------------------------------------------------------- choosing an engine


def test_engine_choice_is_validated(monkeypatch):
    with pytest.raises(ConfigError, match="unknown engine"):
        Machine(TOY, engine="turbo")
    monkeypatch.setenv("TESSERA_ENGINE", "warp")
    with pytest.raises(ConfigError, match="TESSERA_ENGINE"):
        Machine(TOY)
    monkeypatch.setenv("TESSERA_ENGINE", "step")
    assert Machine(TOY).engine == "step"
    assert Machine(TOY, engine="fast").engine == "fast"


def test_a_restored_machine_uses_this_process_engine(monkeypatch):
    m = new_machine(sum_program(5), cores=1)
    m.set_engine("step")
    data = m.snapshot()
    monkeypatch.setenv("TESSERA_ENGINE", "fast")
    assert Machine.restore(data, host=make_host()).engine == "fast"


# --------------------------------------------------------------------------- the inliner


def _sem_early_return(cpu, ins):
    if ins.rd == 0:
        return
    cpu.r[ins.rd] = ins.imm


def test_constant_tests_fold_away_and_early_returns_become_structure():
    class Ins:
        rd, imm, next, address = 0, 5, 4, 0

    used: set[str] = set()
    ctx = inline.Context(inline.Binder(), {"r": "r"}, used, None)
    zero = inline.specialise(_sem_early_return, Ins(), 0, ctx, last=False)
    assert zero is not None and zero == []  # rd = 0: nothing left at all
    Ins.rd = 3
    three = inline.specialise(_sem_early_return, Ins(), 1, ctx, last=False)
    import ast
    assert [ast.unparse(s) for s in three] == ["R_r[3] = 5"] and used == {"r"}


def test_functions_without_source_are_called_not_inlined():
    assert inline.template(len) is None
    part = functools.partial(_sem_early_return)
    assert inline.template(part) is None and inline.terminal(part) is True
    lam = lambda cpu, ins: None  # noqa: E731
    assert inline.template(lam) is None and "plain function" in inline.rejection(lam)


def _sem_stores_ins(cpu, ins):
    ins.count = getattr(ins, "count", 0) + 1
    cpu.r[ins.rd] = ins.count


def test_a_function_that_stores_into_ins_keeps_ins_an_object():
    t = inline.template(_sem_stores_ins)
    assert t is not None and t.attr_stores["ins"] == {"count"}


def _helper(cpu, rd, value):
    if rd:
        cpu.r[rd] = value & 0xFF


def _sem_calls_helper(cpu, ins):
    _helper(cpu, ins.rd, cpu.r[ins.rs1] + 1)


def test_calls_to_helpers_are_inlined_and_fold():
    import ast

    class Ins:
        rd, rs1, next, address = 4, 2, 4, 0

    ctx = inline.Context(inline.Binder(), {"r": "r"}, set(), None)
    out = inline.specialise(_sem_calls_helper, Ins(), 0, ctx, last=False)
    assert [ast.unparse(s) for s in out] == ["R_r[4] = R_r[2] + 1 & 255"]
    Ins.rd = 0
    out = inline.specialise(_sem_calls_helper, Ins(), 1, ctx, last=False)
    assert all("R_r[4]" not in ast.unparse(s) for s in out)  # writes to r0 vanish


# --------------------------------------------------------------------------- interrupts


def test_an_exception_not_raised_by_the_block_is_not_located_in_it():
    m = fast_machine(sum_program(50))
    m.run(max_steps=1000)
    (loop,) = [b for b in blocks_of(m) if b.loop]
    try:
        raise KeyboardInterrupt
    except KeyboardInterrupt as exc:
        assert loop.locate(exc) is None  # the engine re-raises it untouched


def test_a_pending_interrupt_request_stops_the_scheduler():
    from tessera.machine import machine as machine_module

    m = fast_machine(prog(("jmp", dict(joff=0))))  # an endless loop
    machine_module.INTERRUPT_REQUESTED[0] = True
    try:
        with pytest.raises(KeyboardInterrupt):
            m.run(max_steps=None)
    finally:
        machine_module.INTERRUPT_REQUESTED[0] = False
    assert not machine_module.INTERRUPT_REQUESTED[0]
