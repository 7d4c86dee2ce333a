"""The record operation (tessera.engine.record): one request, the same records on both engines.

A plugin describes what it records with a ``Record`` and never looks at semantics:
these tests check that the records are the same on the step and the fast engine,
that the fast engine compiles the common cases into blocks (no call), and each
case of the contract: one known register, none, several (``otherwise`` with
``complete=False``), unknown writes (``complete=True``, every register compared),
the retirements before the writes are analysed, the default without ``otherwise``,
tokens that cannot be compiled, an agent of another class, and bad requests.
"""

from __future__ import annotations

from typing import Any

import pytest

import tessera
from tessera.engine import blocks as blockmod
from tessera.engine.record import LOOP_CAP, Record
from tessera.isa import Encoding, Instruction

from .conftest import Plugin, new_machine, prog, sum_loop

ENGINES = ("step", "fast")
TWO = 0xFFFF_FFF0       # a word the Pair plugin decodes: r4 = r2, r5 = r2 + 1 (two known writes)


def pair(cpu, ins):
    cpu.r[4] = cpu.r[2]
    cpu.r[5] = (cpu.r[2] + 1) & 0xFFFF_FFFF


class Log(Plugin):
    """Records ``pc`` (nothing changed) or ``-pc`` and the value (one register changed);
    ``otherwise`` notes ``(pc, changes, complete)``.  ``default``: no ``otherwise``."""

    def __init__(self, *, default: bool = False, token: Any = None) -> None:
        self.tokens: list[Any] = []
        self.values: list[int] = []
        self.others: list[tuple[int, list[Any], bool]] = []
        self.shadows: dict[Any, dict[str, list[int]]] = {}
        self.sink_calls = 0
        self.default = default
        self.token = token

    @tessera.hookimpl
    def tessera_machine_ready(self, machine):
        self.shadows = {a: {f: list(r) for f, r in a.regs.items()} for a in machine.cpus}

    @tessera.hookimpl
    def tessera_decode(self, word, address):
        if word != TWO:
            return None
        return Instruction(Encoding("pair", TWO, 0xFFFF_FFFF, "", pair), word, address, 4, {})

    def sink(self, agent):
        self.sink_calls += 1
        return self.tokens.append, self.values.append, self.shadows[agent]

    @tessera.hookimpl
    def tessera_execute_observe(self, ins):
        pc = ins.address

        def changed(file, index):
            return self.token if self.token is not None else -pc

        def otherwise(agent, changes, complete):
            self.others.append((pc, list(changes), complete))
            self.tokens.append(pc)

        return Record(self.sink, pc, changed, None if self.default else otherwise).observer()


def run(engine: str, *items: Any, n: int = 40, **kw: Any) -> tuple[Log, Any]:
    log = Log(**kw)
    m = new_machine(prog(*(items or sum_loop(n))), cores=1, plugins=(("log", log),))
    m.set_engine(engine)
    m.run(max_steps=1_000_000)
    return log, m


def records(log: Log) -> tuple[list[Any], list[int], list[Any]]:
    return log.tokens, log.values, log.others


def looping_blocks(m: Any) -> list[Any]:
    return [b for b in m.space.decode_cache("toy").blocks.values() if b.n != blockmod.NEVER and b.loop]


def test_records_are_the_same_on_both_engines_and_compiled_into_blocks(monkeypatch):
    monkeypatch.setenv("TESSERA_BLOCK_SOURCE", "1")
    monkeypatch.setattr(blockmod, "_CODE_CACHE", {})
    step, _ = run("step", n=300)
    fast, m = run("fast", n=300)
    assert records(fast) == records(step)
    assert fast.values[-1] == 0 and len(fast.tokens) == 2 + 300 * 3 + 1   # r2 counted down to 0
    (loop,) = looping_blocks(m)
    assert loop.captured == 3 and loop.sinks == ("log",)
    assert "O_" not in loop.source        # add, addi and bne record without a call


def test_until_an_instruction_is_hot_every_register_is_compared(monkeypatch):
    monkeypatch.setenv("TESSERA_BLOCK_HOT", "16")       # the tests' default is 2
    hot = blockmod.hot_threshold() // 2
    for engine in ENGINES:
        log, _ = run(engine, n=40)
        addi = [o for o in log.others if o[0] == 0xC]      # addi r2, r2, -1 in the loop
        assert len(addi) == hot - 1 and all(complete for _pc, _c, complete in addi)
        assert addi[0][1] == [("r", 2, 39)]                # found by comparing everything
        assert log.tokens.count(-0xC) == 40 - (hot - 1)    # then recorded as its one register


def test_several_known_writes_go_to_otherwise_incomplete(monkeypatch):
    monkeypatch.setenv("TESSERA_BLOCK_HOT", "6")
    items = (("li", dict(rd=2, limm=30)), "loop:", TWO, ("addi", dict(rd=2, rs1=2, imm=-1)),
             ("bne", dict(rd=2, rs1=0, boff="loop")), ("halt", dict(rd=0)))
    got = {e: run(e, *items) for e in ENGINES}
    assert records(got["fast"][0]) == records(got["step"][0])
    pairs = [o for o in got["fast"][0].others if o[0] == 4]
    assert len(pairs) == 30
    assert pairs[-1] == (4, [("r", 4, 1), ("r", 5, 2)], False)   # only its two registers
    assert pairs[0][2] is True                                    # before the analysis


def test_without_otherwise_each_changed_register_is_a_record():
    items = (("li", dict(rd=2, limm=30)), "loop:", TWO, ("addi", dict(rd=2, rs1=2, imm=-1)),
             ("bne", dict(rd=2, rs1=0, boff="loop")), ("halt", dict(rd=0)))
    got = {e: run(e, *items, default=True)[0] for e in ENGINES}
    assert records(got["fast"]) == records(got["step"])
    log = got["fast"]
    assert not log.others
    last = len(log.tokens) - 1 - log.tokens[::-1].index(-4)      # the last pair: two records
    assert log.tokens[last - 1:last + 1] == [-4, -4]
    assert log.values[-3:] == [1, 2, 0]           # r4, r5, then the addi's r2


def test_unknown_writes_compare_every_register_and_say_so():
    items = (("li", dict(rd=9, limm=0x100)), ("li", dict(rd=6, limm=77)), ("st", dict(rd=6, rs1=9, imm=0)),
             ("ld", dict(rd=3, rs1=9, imm=0)), ("halt", dict(rd=3)))
    for engine in ENGINES:
        log, _ = run(engine, *items)
        assert (0xC, [("r", 3, 77)], True) in log.others      # ld: a call (space.read)
        assert (0x8, [], True) in log.others                  # st: changed no register


def test_a_token_that_is_no_literal_is_recorded_through_the_observer():
    step, _ = run("step", n=300, token=("changed",))
    fast, m = run("fast", n=300, token=("changed",))
    assert records(fast) == records(step) and ("changed",) in fast.tokens
    (loop,) = looping_blocks(m)
    assert loop.captured == 1             # only bne, which changes nothing, is compiled


def test_a_long_loop_asks_its_sink_every_loop_cap_iterations():
    n = 4 * LOOP_CAP
    step, _ = run("step", n=n)
    fast, _ = run("fast", n=n)
    assert records(fast) == records(step)
    assert n // LOOP_CAP <= fast.sink_calls < step.sink_calls   # per block call, not per retirement


def test_an_agent_of_another_class_gets_its_own_plan():
    log, m = run("step", n=40)
    cpu = m.agents[0]
    ins = m.space.decode_cache("toy").get(0x8)                  # add r3, r3, r2
    (observe, _plugin), = ins.observer_calls

    class Other:
        """Another kind of agent with the same register files (no methods to analyse)."""

        def __init__(self) -> None:
            self.regs = {name: list(values) for name, values in cpu.regs.items()}
            self.r = self.regs["r"]

    other = Other()
    log.shadows[other] = {f: list(r) for f, r in other.regs.items()}
    other.r[3], other.r[7] = 5, 9
    observe(other, ins)
    assert log.others[-1] == (0x8, [("r", 3, 5), ("r", 7, 9)], True)   # its writes are not known
    assert observe.capture.agent_class is type(cpu)             # the compiled plan stays the CPU's
    cpu.r[3] += 1
    observe(cpu, ins)
    assert log.tokens[-1] == -0x8 and log.values[-1] == cpu.r[3]


@pytest.mark.parametrize("kw", [dict(sink=1), dict(changed="x"), dict(otherwise=3)])
def test_a_request_with_something_that_is_not_callable_is_refused(kw):
    args = dict(sink=lambda agent: None, unchanged=0, changed=lambda f, i: 1, otherwise=None) | kw
    with pytest.raises(TypeError, match=f"Record.{next(iter(kw))} must be callable"):
        Record(**args)
