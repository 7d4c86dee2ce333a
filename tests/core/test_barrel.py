"""Barrel runs (tessera.machine.barrel): quantum-1 round robin with agents running ahead.

Every test runs the same machine on both engines and compares everything
observable — run results, every agent's counters, the whole state hash — after
each of several runs, so a run ahead that is not undone exactly where the literal
round robin would be shows up as a difference.  Each test also checks that agents
really ran ahead on the fast engine (``engine_stats``), so the comparison is not
vacuous, and the interaction tests check that undoing happened.
"""

from __future__ import annotations

import random
from typing import Any

import pytest

from tessera.machine import Machine

from .conftest import labels, new_machine, producer_consumer, prog, sum_loop

ENGINES = ("step", "fast")


def observe(m: Machine, r: Any) -> tuple[Any, ...]:
    agents = tuple((a.name, getattr(a, "pc", None), a.instret, a.traps, a.cycles, a.status)
                   for a in m.agents)
    return (r.reason, r.steps, r.exit_code, r.agent, r.pc), agents, m.state_hash()


def runs(code: bytes, chunks: list[int | None], cores: int = 4, **kw: Any) -> dict[str, Any]:
    """Run ``code`` in budget chunks (``None``: to the end) on both engines; assert equal."""
    seen: dict[str, Any] = {}
    machines = {}
    for engine in ENGINES:
        m = new_machine(code, cores=cores, quantum=1, **kw)
        m.set_engine(engine)
        got = []
        for budget in chunks:
            r = m.run(max_steps=budget, raise_on_budget=False)
            got.append(observe(m, r))
            if r.reason != "budget":
                break
        seen[engine] = got
        machines[engine] = m
    assert seen["fast"] == seen["step"]
    return machines


def test_private_loops_run_ahead_and_match_stepping() -> None:
    m = runs(prog(*sum_loop(3000)), [None])["fast"]
    stats = m.engine_stats()
    assert stats["ahead_calls"] > 0
    assert stats["ahead_instructions"] > 4 * 3000  # most of the loops ran ahead
    assert [a.exit_code for a in m.cpus] == [sum(range(3001))] * 4


@pytest.mark.parametrize("seed", range(6))
def test_budgets_end_exactly_where_the_round_robin_is(seed: int) -> None:
    rng = random.Random(seed)
    chunks = [rng.choice([1, 2, 3, 7, 50, 333, 1000]) for _ in range(60)] + [None]
    m = runs(prog(*sum_loop(400)), chunks, cores=rng.choice([2, 3, 4]))["fast"]
    assert m.engine_stats()["ahead_calls"] > 0


def test_synchronising_agents_keep_their_order() -> None:
    m = runs(prog(*producer_consumer(60)), [None], cores=2)["fast"]
    assert m.agents[1].exit_code == sum(range(1, 61))


def smc_program(n: int) -> tuple[Any, ...]:
    """core0 sums in a private loop; core1 counts down, then overwrites core0's ``add``
    with a ``sub`` (the word at ``patch``) while core0 is still looping."""
    return (
        ("cid", dict(rd=1)),
        ("bne", dict(rd=1, rs1=0, boff="writer")),
        ("li", dict(rd=2, limm=n)),
        ("li", dict(rd=3, limm=0)),
        "loop:",
        ("add", dict(rd=3, rs1=3, rs2=2)),
        ("addi", dict(rd=2, rs1=2, imm=-1)),
        ("bne", dict(rd=2, rs1=0, boff="loop")),
        ("halt", dict(rd=3)),
        "writer:",
        ("li", dict(rd=2, limm=n // 3)),
        "wait:",
        ("addi", dict(rd=2, rs1=2, imm=-1)),
        ("bne", dict(rd=2, rs1=0, boff="wait")),
        ("li", dict(rd=4, limm="loop")),
        ("li", dict(rd=5, limm="patch")),
        ("ld", dict(rd=6, rs1=5, imm=0)),
        ("st", dict(rd=6, rs1=4, imm=0)),
        ("halt", dict(rd=0)),
        "patch:",
        ("sub", dict(rd=3, rs1=3, rs2=2)),
    )


def test_code_written_by_another_agent_undoes_the_run_ahead() -> None:
    items = smc_program(900)
    code = prog(*items)
    assert labels(*items)["loop"] > 0
    machines = runs(code, [None], cores=2)
    fast, step = machines["fast"], machines["step"]
    total = fast.agents[0].exit_code
    assert total == step.agents[0].exit_code
    assert total not in (sum(range(901)), (-sum(range(901))) & 0xFFFF_FFFF)  # really switched mid-way
    assert fast.engine_stats()["ahead_undone"] >= 1


def test_reading_the_clock_settles_agents_ahead() -> None:
    m = new_machine(prog(*sum_loop(500)), cores=3, quantum=1)
    m.set_engine("fast")
    seen = []

    def progress(steps: int) -> None:
        seen.append((steps, m.clock, [a.instret for a in m.agents]))

    import tessera.machine.scheduler as sched
    every = sched.PROGRESS_EVERY
    sched.PROGRESS_EVERY = 97
    try:
        m.run(progress=progress)
    finally:
        sched.PROGRESS_EVERY = every
    ref = new_machine(prog(*sum_loop(500)), cores=3, quantum=1)
    ref.set_engine("step")
    for steps, clock, instret in seen[:5]:
        ref.run(max_steps=steps - ref.total_steps, raise_on_budget=False)
        assert (ref.clock, [a.instret for a in ref.agents]) == (clock, instret)


def test_only_register_only_blocks_are_private() -> None:
    items = (
        ("li", dict(rd=2, limm=50)),
        ("li", dict(rd=4, limm=0x800)),
        "loop:",
        ("add", dict(rd=3, rs1=3, rs2=2)),
        ("addi", dict(rd=2, rs1=2, imm=-1)),
        ("bne", dict(rd=2, rs1=0, boff="loop")),
        "store:",
        ("st", dict(rd=3, rs1=4, imm=0)),
        ("addi", dict(rd=5, rs1=5, imm=1)),
        ("bne", dict(rd=5, rs1=4, boff="store")),
        ("halt", dict(rd=3)),
    )
    m = new_machine(prog(*items), cores=1)
    m.set_engine("fast")
    m.run(max_steps=100_000)
    where = labels(*items)
    blocks = next(iter(m._fillers.values())).blocks.blocks
    assert blocks[where["loop"]].private
    assert not blocks[where["store"]].private  # a store is seen by every agent
