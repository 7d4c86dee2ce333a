"""Captures: record-keeping observers compiled into the fast engine's blocks.

The contract (tessera.engine.capture): an observer carrying a ``Capture`` must do
exactly what its inline form does, and the engine inlines it only where the
instruction provably changes no register but the captured one.  These tests check
the write analysis that decides that, that blocks really inline captures (no call),
that results equal the step engine's, and the edges: long loops, a raising sink,
an agent of another class, writes the capture does not cover.
"""

from __future__ import annotations

import ast
from typing import Any

import pytest

import tessera
from tessera.engine import blocks as blockmod
from tessera.engine import capture, inline
from tessera.engine.capture import Capture, static_writes
from tessera.errors import PluginError
from tessera.isa.instruction import unseal

from .conftest import Plugin, new_machine, prog, sum_loop

ENGINES = ("step", "fast")


# --------------------------------------------------------------------------- the write analysis


class Hart:
    """An agent as the analysis sees it: a register file, plain state and a property."""

    def __init__(self) -> None:
        self.x = [0] * 32
        self.regs = {"x": self.x}
        self.pc = 0
        self.csr = [0] * 16

    @property
    def gprs(self) -> list[int]:   # the register file under another name
        return self.x


def writes_of(source: str, regfiles: dict[str, str] | None = None, agent: Any = None) -> Any:
    stmts = ast.parse(source).body
    ctx = inline.Context(inline.Binder(), regfiles or {"x": "x"}, set(), Hart() if agent is None else agent)
    return inline.register_writes(stmts, ctx)


@pytest.mark.parametrize(("source", "expected"), [
    ("R_x[5] = R_x[6] + 1 & 4294967295", {("x", 5)}),
    ("x_L0 = R_x\nx_L0[7] = x_L0[7] + 1", {("x", 7)}),
    ("if R_x[1] != R_x[2]:\n    R_x[3] = 1\nelse:\n    R_x[4] = 2", {("x", 3), ("x", 4)}),
    ("t_L1 = abs(R_x[1])\nR_x[2] = min(t_L1, 5)", {("x", 2)}),           # builtins that touch nothing
    ("if R_x[1] & 3:\n    raise Trap_0(4, R_x[1])\nR_x[2] = 0", {("x", 2)}),  # a raise does not retire
    ("cpu.pc = 12\ncpu.csr[3] = R_x[1]", set()),                          # not register files
    ("return 65536", set()),
])
def test_known_writes(source, expected):
    assert writes_of(source) == frozenset(expected)


@pytest.mark.parametrize("source", [
    "R_x[5] = f_0(R_x[6])",                      # a call could do anything
    "R_x[i_L0] = 1",                             # an index that is not a constant
    "R_x[1:3] = [0, 0]",
    "cpu.x = [0] * 32",                          # rebinding a register file
    "cpu.regs['x'][3] = 1",                      # a register file reached another way
    "q_L0 = R_x\nq_L0 = other_1\nq_L0[2] = 1",   # a name that is a register file only sometimes
    "other_1[2] = 1",                            # a store into anything else
    "del R_x[2]",
    "I_0.rd = 5",
    "cpu.gprs[3] = 1",                           # a property: it could be a register file
    "cpu.gprs = [0] * 32",
])
def test_unknown_writes(source):
    assert writes_of(source) is None


def test_stores_into_agent_state_are_unknown_without_an_agent_to_look_at():
    stmts = ast.parse("cpu.csr[3] = 1").body
    ctx = inline.Context(inline.Binder(), {"x": "x"}, set(), None)
    assert inline.register_writes(stmts, ctx) is None


def toy_entries(machine: Any) -> dict[str, Any]:
    cache = machine.agents[0]._filler.cache
    return {ins.mnemonic: ins for ins in (cache.get(a) for a in range(0, 0x40, 4)) if ins is not None}


def test_static_writes_of_real_semantics_are_specialised_per_instruction():
    m = new_machine(prog(*sum_loop(3)), cores=1)
    m.run(max_steps=100)
    cpu = m.agents[0]
    got = toy_entries(m)
    assert static_writes(got["add"], cpu) == {("r", 3)}   # add r3, r3, r2 — through the _set helper
    assert static_writes(got["addi"], cpu) == {("r", 2)}
    assert static_writes(got["bne"], cpu) == set()
    assert static_writes(got["halt"], cpu) == set()       # raises Halt: nothing written


def test_static_writes_are_unknown_for_memory_access_and_instrumented_entries():
    m = new_machine(prog(("li", dict(rd=9, limm=0x100)), ("ld", dict(rd=3, rs1=9, imm=0)),
                         ("halt", dict(rd=0))), cores=1)
    m.run(max_steps=10)
    cpu = m.agents[0]
    ld = toy_entries(m)["ld"]
    assert static_writes(ld, cpu) is None                 # space.read is a call
    li = toy_entries(m)["li"]
    unseal(li).blockable = False                          # as for an instrumented entry
    assert static_writes(li, cpu) is None


# --------------------------------------------------------------------------- a capturing plugin


class RegisterLog(Plugin):
    """A minimal honest capture: per retirement ``(token, value?)``; tokens are PCs.

    The token is ``address`` when nothing changed and ``address + 1`` when the
    instruction's one written register changed (its new value follows in
    ``values``).  Instructions with unknown writes log ``address + 2``.
    """

    def __init__(self, *, wrong_class: bool = False, cover_nothing: bool = False,
                 raising_sink: bool = False) -> None:
        self.tokens: list[int] = []
        self.values: list[int] = []
        self.shadows: dict[Any, dict[str, list[int]]] = {}
        self.sink_calls = 0
        self.wrong_class = wrong_class
        self.cover_nothing = cover_nothing
        self.raising_sink = raising_sink

    def shadow(self, agent: Any) -> dict[str, list[int]]:
        got = self.shadows.get(agent)
        if got is None:
            got = self.shadows[agent] = {name: list(regs) for name, regs in agent.regs.items()}
        return got

    def sink(self, agent: Any) -> Any:
        self.sink_calls += 1
        if self.raising_sink and self.sink_calls > 3:
            raise RuntimeError("sink broke")
        return self.tokens.append, self.values.append, self.shadow(agent)

    @tessera.hookimpl
    def tessera_execute_observe(self, ins):
        address = ins.address
        plan: list[Any] = []

        def observe(agent, ins):
            if not plan:
                writes = static_writes(ins, agent)
                plan.append(writes)
                if writes is not None and len(writes) <= 1:
                    register = next(iter(writes)) if writes and not self.cover_nothing else None
                    cls = type("Other", (), {}) if self.wrong_class else type(agent)
                    observe.capture = Capture(self.sink, register, address + 1, address, cls)
            writes = plan[0]
            if writes is None or len(writes) > 1:
                self.tokens.append(address + 2)
                return
            cap = observe.capture
            if cap.register is None:
                self.tokens.append(address)
                return
            rf, index = cap.register
            value = getattr(agent, rf)[index]
            shadow = self.shadow(agent)[rf]
            if value != shadow[index]:
                shadow[index] = value
                self.tokens.append(address + 1)
                self.values.append(value)
            else:
                self.tokens.append(address)
        return observe


def logged(engine: str, n: int = 40, **kw: Any) -> tuple[RegisterLog, Any]:
    log = RegisterLog(**kw)
    m = new_machine(prog(*sum_loop(n)), cores=1, plugins=(("reglog", log),))
    m.set_engine(engine)
    m.run(max_steps=1_000_000)
    return log, m


def captured_blocks(machine: Any) -> list[Any]:
    cache = machine.agents[0]._filler.cache
    return [b for b in cache.blocks.values() if b.n != blockmod.NEVER and b.captured]


def test_blocks_inline_captures_and_log_exactly_what_the_observer_logs():
    fast, fm = logged("fast")
    step, _ = logged("step")
    assert (fast.tokens, fast.values) == (step.tokens, step.values)
    assert len(fast.tokens) == 2 + 40 * 3 + 1 and fast.values[-1] == 0   # r2 counted down to 0
    (loop,) = [b for b in captured_blocks(fm) if b.loop]
    assert loop.captured == 3 and loop.sinks == ("reglog",)
    assert fast.sink_calls >= 1


def test_a_captured_block_calls_no_observer(monkeypatch):
    monkeypatch.setenv("TESSERA_BLOCK_SOURCE", "1")
    monkeypatch.setattr(blockmod, "_CODE_CACHE", {})
    _, m = logged("fast")
    (loop,) = [b for b in captured_blocks(m) if b.loop]
    assert "SINK" in loop.source and "O_" not in loop.source      # no observer call left
    assert "B_" not in loop.source  # nor a stale-code check: nothing in it can write memory


def test_a_long_loop_consults_its_sink_every_loop_cap_iterations():
    n = 5 * capture.LOOP_CAP
    fast, _ = logged("fast", n)
    step, _ = logged("step", n)
    assert fast.tokens == step.tokens and fast.values == step.values
    assert fast.sink_calls >= n // capture.LOOP_CAP


def test_captures_for_another_agent_class_are_called_instead():
    fast, fm = logged("fast", wrong_class=True)
    step, _ = logged("step", wrong_class=True)
    assert fast.tokens == step.tokens
    assert not captured_blocks(fm) and fast.sink_calls == 0


def test_a_capture_that_does_not_cover_the_writes_is_called_instead():
    fast, fm = logged("fast", cover_nothing=True)
    step, _ = logged("step", cover_nothing=True)
    assert fast.tokens == step.tokens
    loop = [b for b in fm.agents[0]._filler.cache.blocks.values() if b.loop]
    assert loop and all(b.captured == 1 for b in loop)   # only the bne, which writes nothing


def test_a_raising_sink_is_a_plugin_error_with_exact_counts():
    log = RegisterLog(raising_sink=True)
    m = new_machine(prog(*sum_loop(5000)), cores=1, plugins=(("reglog", log),))
    m.set_engine("fast")
    with pytest.raises(PluginError) as info:
        m.run(max_steps=1_000_000)
    err = info.value
    assert err.plugin == "reglog" and "sink broke" in str(err)
    cpu = m.agents[0]
    assert err.pc == cpu.pc                        # a block's start: none of its instructions ran
    assert cpu.pc in {b.start for b in captured_blocks(m)}
    assert cpu.instret == len(log.tokens) > 0      # every retired instruction was logged, no more
