"""Setting or clearing breakpoints re-decodes only the instructions at those addresses.

A run to a symbol and then on to the end (what a debugger's "continue" and the
``mark`` benchmark do) used to drop every decoded instruction and translated block
when the breakpoint set changed; the fast engine then translated the program twice.
"""

from __future__ import annotations

import pytest

from .conftest import labels, new_machine, prog

ITEMS = (  # the same loops twice; "turn" is reached once, between the two rounds
    ("li", dict(rd=7, limm=2)), ("li", dict(rd=3, limm=0)), ("li", dict(rd=5, limm=0)),
    "phase:", ("li", dict(rd=2, limm=200)),
    "outer:", ("li", dict(rd=4, limm=8)),
    "inner:", ("add", dict(rd=3, rs1=3, rs2=4)), ("addi", dict(rd=4, rs1=4, imm=-1)),
    ("bne", dict(rd=4, rs1=0, boff="inner")),
    ("add", dict(rd=5, rs1=5, rs2=3)), ("addi", dict(rd=2, rs1=2, imm=-1)), ("bne", dict(rd=2, rs1=0, boff="outer")),
    ("addi", dict(rd=7, rs1=7, imm=-1)), ("beq", dict(rd=7, rs1=0, boff="done")),
    "turn:", ("addi", dict(rd=6, rs1=6, imm=1)), ("jmp", dict(joff="phase")),
    "done:", ("halt", dict(rd=5)),
)


@pytest.fixture(autouse=True)
def hot_soon(monkeypatch):
    monkeypatch.setenv("TESSERA_BLOCK_HOT", "4")


def finish(engine: str, stops: tuple[int, ...]) -> tuple[tuple, dict]:
    m = new_machine(prog(*ITEMS), cores=1)
    m.set_engine(engine)
    hits = []
    for stop in stops:
        r = m.run(max_steps=1_000_000, until_pc=[stop])
        hits.append((r.reason, r.pc, r.steps))
    r = m.run(max_steps=1_000_000)
    stats = m.engine_stats() if engine == "fast" else {}
    return (tuple(hits), r.reason, r.exit_code, m.state_hash()), stats


def test_a_stop_and_continue_translates_little_more_than_a_straight_run():
    turn = labels(*ITEMS)["turn"]
    straight, plain = finish("fast", ())
    stopped, with_stop = finish("fast", (turn,))
    stepped, _ = finish("step", (turn,))
    assert stopped == stepped                      # same stop, same end, same state
    assert stopped[0][0][:2] == ("breakpoint", turn) and stopped[0][0][2] > 3000
    assert stopped[1:3] == straight[1:3] == ("halted", stepped[2])
    # only the blocks holding the breakpoint's instruction are made again (not all of them)
    assert plain["blocks"] >= 3
    assert with_stop["blocks"] <= plain["blocks"] + 2, (plain, with_stop)
