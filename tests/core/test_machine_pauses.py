"""``Machine.pause_at``: a run cut at a step count, a callback, and the same run going on.

A pause must cut the run exactly where a step budget would, on every engine (barrel
runs included), leave the rest of the run as it would have been, fire once, and never
end the run by itself.
"""

from __future__ import annotations

import pytest

import tessera
from tessera.errors import BudgetExceeded, ConfigError, PluginError
from tessera.isa import Encoder
from tessera.machine import Machine
from tessera.plugins import PluginHost
from tessera_toyarch import TOY

ENGINES = ("step", "fast", "check")
enc = Encoder(TOY)


def word(mnemonic, **operands):
    (form,) = TOY.encodings_named(mnemonic)
    return enc.encode(form, operands)


LOOP = (word("li", rd=2, limm=300), word("li", rd=3, limm=0),
        word("add", rd=3, rs1=3, rs2=2),              # 0x8: r3 += r2
        word("addi", rd=2, rs1=2, imm=-1),
        word("bne", rd=2, rs1=0, boff=-8),
        word("halt", rd=3))


def machine(engine, cores=1, host=None):
    m = Machine(TOY, host=host, config={"echo": False, "cores": cores}, engine=engine,
                quantum=1 if cores > 1 else None)
    m.space.write_bytes(0, b"".join(enc.to_bytes(w) for w in LOOP))
    return m


@pytest.mark.parametrize("cores", [1, 2])
def test_a_pause_sees_the_state_a_step_budget_stops_at_and_the_run_goes_on(cores):
    for engine in ENGINES:
        budget = machine(engine, cores)
        budget.run(max_steps=101, raise_on_budget=False)
        expected = (budget.agent("core0").r[2], budget.agent("core0").r[3], budget.agent("core0").pc)

        paused, seen = machine(engine, cores), []

        def note(m, seen=seen):
            seen.append((m.total_steps, m.agent("core0").r[2], m.agent("core0").r[3], m.agent("core0").pc))

        paused.pause_at(101, note)
        result = paused.run()
        assert seen == [(101, *expected)], engine
        plain = machine(engine, cores)
        plain.run()
        assert result.reason == "halted" and result.steps == plain.total_steps
        assert paused.state_hash() == plain.state_hash(), engine


def test_a_callback_changes_state_and_arms_the_next_pause_exactly():
    outcomes = set()
    for engine in ENGINES:
        for cores in (1, 2):
            m, seen = machine(engine, cores), []

            def pause(mm, seen=seen):
                seen.append(mm.total_steps)
                mm.agent("core0").r[3] += 1000
                if len(seen) < 3:
                    mm.pause_at(mm.total_steps + 7, pause)

            m.pause_at(50, pause)
            result = m.run()
            assert seen == [50, 57, 64]
            outcomes.add((cores, result.exit_code, m.state_hash()))
    assert len({o for o in outcomes if o[0] == 1}) == 1 and len({o for o in outcomes if o[0] == 2}) == 1
    assert {o[1] for o in outcomes} == {sum(range(301)) + 3000}


def test_pauses_fire_in_order_and_at_the_start_when_due():
    m, seen = machine("fast"), []
    m.pause_at(10, lambda mm: seen.append("b"))
    m.pause_at(10, lambda mm: seen.append("c"))
    m.pause_at(0, lambda mm: seen.append(("a", mm.total_steps)))
    m.run(max_steps=5, raise_on_budget=False)
    assert seen == [("a", 0)] and len(m.pauses) == 2      # not reached: still armed
    m.run()
    assert seen == [("a", 0), "b", "c"] and not m.pauses


def test_a_pause_at_the_budget_fires_before_the_budget_ends_the_run():
    m, seen = machine("fast"), []
    m.pause_at(20, lambda mm: seen.append(mm.total_steps))
    with pytest.raises(BudgetExceeded) as info:
        m.run(max_steps=20)
    assert seen == [20] and info.value.result.steps == 20
    assert info.value.result.detail == "step budget of 20 exhausted"


def test_a_run_finished_listener_sees_one_run():
    class Finished:
        TESSERA_API_VERSION = 1

        def __init__(self):
            self.results = []

        @tessera.hookimpl
        def tessera_run_finished(self, result):
            self.results.append(result.reason)

    listener = Finished()
    host = PluginHost(load_entry_points=False, use_environment=False)
    host.register(listener, "finished")
    m = machine("fast", host=host)
    m.pause_at(30, lambda mm: None)
    m.pause_at(60, lambda mm: None)
    m.run()
    assert listener.results == ["halted"]


def test_pauses_are_not_snapshotted_and_bad_ones_are_refused():
    m = machine("fast")
    m.pause_at(40, lambda mm: None)
    again = Machine.restore(m.snapshot())
    assert again.pauses == [] and len(m.pauses) == 1
    with pytest.raises(ConfigError):
        m.pause_at(-1, lambda mm: None)
    with pytest.raises(ConfigError):
        m.pause_at(3, "not callable")


def test_a_raising_callback_is_a_plugin_error_naming_the_plugin():
    m = machine("fast")
    m.pause_at(3, lambda mm: 1 / 0, plugin="fi")
    with pytest.raises(PluginError, match=r"pause callback raised ZeroDivisionError.*plugin fi"):
        m.run()
    assert m.total_steps == 3
