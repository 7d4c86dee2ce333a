"""Blocks are translated only at *block entries*, never at PCs reached by falling through.

A slice that ends mid-block (a budget, a quantum) leaves the agent inside a
straight-line run; the fast engine then steps the rest of it.  Counting those
mid-block PCs as visits used to make them hot and translate a needless block at
each (issue 15: 849 blocks on CoreMark where 293 would do).  Visits are counted only
where control arrives by a transfer, a block's end, a trap or a wait, so however the
budget slices the run, the same blocks exist — and results stay those of stepping.
"""

from __future__ import annotations

from typing import Any

from tessera.machine import Machine

from .conftest import new_machine, prog

BODY = 10  # adds in the loop body: a block much longer than the slices below


def long_loop(n: int) -> tuple[Any, ...]:
    """r3 += r2 ten times per iteration, n iterations, then halt with r3."""
    return (
        ("li", dict(rd=2, limm=n)),
        ("li", dict(rd=3, limm=0)),
        "loop:",
        *[("add", dict(rd=3, rs1=3, rs2=2)) for _ in range(BODY)],
        ("addi", dict(rd=2, rs1=2, imm=-1)),
        ("bne", dict(rd=2, rs1=0, boff="loop")),
        ("halt", dict(rd=3)),
    )


LOOP = 8  # the loop head's address: after two 4-byte `li`


def block_starts(m: Machine) -> set[int]:
    filler = next(iter(m._fillers.values()))
    return {pc for pc, b in filler.blocks.blocks.items() if b.n != 1 << 62}


def sliced(engine: str, slice_steps: int, n: int = 300) -> tuple[Machine, list[Any]]:
    m = new_machine(prog(*long_loop(n)), cores=1)
    m.set_engine(engine)
    results = []
    while True:
        r = m.run(max_steps=slice_steps, raise_on_budget=False)
        results.append((r.reason, r.steps))
        if r.reason != "budget":
            return m, results


def test_budget_slices_translate_only_the_loop_head() -> None:
    m, _ = sliced("fast", 7)
    starts = block_starts(m)
    assert LOOP in starts, starts                      # the hot loop is translated ...
    mid = {pc for pc in starts if LOOP < pc < LOOP + 4 * (BODY + 2)}
    assert not mid, f"blocks translated mid-loop at {sorted(map(hex, mid))}"  # ... and nothing inside it


def test_sliced_runs_match_stepping() -> None:
    fast, fr = sliced("fast", 7)
    step, sr = sliced("step", 7)
    assert fr == sr
    assert fast.state_hash() == step.state_hash()
    assert fast.agents[0].exit_code == sum(range(1, 301)) * BODY & 0xFFFF_FFFF


def test_quantum_slices_on_two_cores_translate_only_entries() -> None:
    code = prog(*long_loop(200))
    seen = {}
    for engine in ("fast", "step"):
        m = new_machine(code, cores=2, quantum=5)
        m.set_engine(engine)
        r = m.run(max_steps=1_000_000)
        seen[engine] = (r.reason, r.steps, m.state_hash())
        if engine == "fast":
            starts = block_starts(m)
            assert LOOP in starts
            assert not {pc for pc in starts if LOOP < pc < LOOP + 4 * (BODY + 2)}
    assert seen["fast"] == seen["step"]


def test_engine_stats_count_translations() -> None:
    fast, _ = sliced("fast", 1000)
    stats = fast.engine_stats()
    assert stats["blocks"] >= 1 and stats["cached_blocks"] >= 1
    assert stats["translate_seconds"] > 0
    step, _ = sliced("step", 1000)
    assert step.engine_stats() == {"blocks": 0, "translate_seconds": 0.0, "cached_blocks": 0,
                                   "ahead_calls": 0, "ahead_instructions": 0, "ahead_undone": 0}
