"""Superblocks: blocks that go on through forward conditional branches (side exits).

A block used to end at every branch; code shaped like real programs (an ``if`` in
every few instructions) then returned to the run loop every five instructions or
so.  A block now goes on along the fall-through path of up to ``SIDE_EXITS`` forward
conditional branches and leaves early, with the exact count of what it retired, when
one is taken.  Every test compares the fast engine with stepping — whole runs and
runs cut by budgets at every possible step — and checks that superblocks were really
made, so the comparisons are not vacuous.
"""

from __future__ import annotations

import random
from typing import Any

import pytest

from tessera.engine import blocks as blockmod
from tessera.machine import Machine

from .conftest import labels, new_machine, prog

ENGINES = ("step", "fast")


def branchy(n: int) -> tuple[Any, ...]:
    """Count down from n; odd counts add to r3, multiples of 4 add to r5 (two forward
    branches per iteration), then halt with r3 + r5."""
    return (
        ("li", dict(rd=2, limm=n)),
        ("li", dict(rd=3, limm=0)),
        ("li", dict(rd=5, limm=0)),
        ("li", dict(rd=8, limm=1)),
        ("li", dict(rd=9, limm=3)),
        "loop:",
        ("li", dict(rd=6, limm=0)),
        ("addi", dict(rd=4, rs1=2, imm=0)),
        ("beq", dict(rd=6, rs1=6, boff="check")),   # always taken: a forward jump
        "check:",
        ("li", dict(rd=7, limm=0)),
        ("add", dict(rd=7, rs1=7, rs2=2)),
        ("bne", dict(rd=2, rs1=9, boff="odd")),     # taken unless r2 == 3
        ("addi", dict(rd=5, rs1=5, imm=100)),
        "odd:",
        ("add", dict(rd=3, rs1=3, rs2=7)),
        ("beq", dict(rd=2, rs1=8, boff="done")),    # the last iteration leaves early
        ("addi", dict(rd=2, rs1=2, imm=-1)),
        ("bne", dict(rd=2, rs1=0, boff="loop")),
        "done:",
        ("add", dict(rd=3, rs1=3, rs2=5)),
        ("halt", dict(rd=3)),
    )


def outcome(m: Machine, **run: Any) -> tuple[Any, ...]:
    r = m.run(raise_on_budget=False, **run)
    cpu = m.agents[0]
    return (r.reason, r.steps, r.exit_code, cpu.pc, cpu.instret, cpu.cycles, m.state_hash())


def superblocks(m: Machine) -> list[Any]:
    """The translated blocks with a branch before their last instruction."""
    found = []
    for b in next(iter(m._fillers.values())).blocks.blocks.values():
        if b.n != blockmod.NEVER and any(i.encoding.flags & {"branch"} for i in b.ins[:-1]):
            found.append(b)
    return found


def test_branchy_code_runs_as_superblocks_and_matches_stepping() -> None:
    code = prog(*branchy(200))
    seen = {}
    for engine in (*ENGINES, "check"):  # check: every block call repeated by stepping, compared
        m = new_machine(code, cores=1)
        m.set_engine(engine)
        seen[engine] = outcome(m, max_steps=100_000)
        if engine == "fast":
            assert superblocks(m), "no block went on through a branch"
    assert seen["fast"] == seen["step"] == seen["check"]
    assert seen["fast"][2] == sum(range(1, 201)) + 100


@pytest.mark.parametrize("seed", range(4))
def test_budgets_cut_superblocks_exactly(seed: int) -> None:
    rng = random.Random(seed)
    code = prog(*branchy(60))
    chunks = [rng.randint(1, 40) for _ in range(200)]
    seen = {}
    for engine in ENGINES:
        m = new_machine(code, cores=1)
        m.set_engine(engine)
        got = []
        for budget in chunks:
            got.append(outcome(m, max_steps=budget))
            if got[-1][0] != "budget":
                break
        seen[engine] = got
    assert seen["fast"] == seen["step"]


def test_a_backward_branch_still_ends_a_looping_block() -> None:
    m = new_machine(prog(*branchy(50)), cores=1)
    m.set_engine("fast")
    m.run(max_steps=100_000)
    where = labels(*branchy(50))
    loop_blocks = [b for b in next(iter(m._fillers.values())).blocks.blocks.values()
                   if b.n != blockmod.NEVER and b.ins[-1].address == where["done"] - 4]
    assert loop_blocks and all(b.ins[-1].encoding.flags & {"branch"} for b in loop_blocks)


def test_side_exit_encoding_round_trips() -> None:
    for target in (0, 4, 0x1234_5678, (1 << 64) - 4):
        for retired in (1, 17, blockmod.MAX_LENGTH):
            v = blockmod.side_exit(target, retired)
            assert v < 0
            assert (-v >> blockmod.EXIT_BITS, -v & blockmod.EXIT_MASK) == (target, retired)


def test_without_superblocks_blocks_end_at_every_branch(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TESSERA_SUPERBLOCKS", "0")
    blockmod._CODE_CACHE.clear()
    m = new_machine(prog(*branchy(100)), cores=1)
    m.set_engine("fast")
    r = m.run(max_steps=100_000)
    assert not superblocks(m)
    assert r.exit_code == sum(range(1, 101)) + 100
