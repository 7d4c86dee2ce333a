"""Pruning by def/use: faults in registers the golden run never reads again are decided
without running on (tessera_faults.campaign.liveness), and that changes no outcome.

Each campaign runs twice — ``[run] prune`` on and off — and every fault must end the
same way (outcome, exit, steps, cycles, outputs that differ, the values written), while
the pruned run decided a good share of them at the trigger.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
from faults_support import host

from tessera_faults.campaign import Campaign, prepare, run_campaign
from tessera_faults.campaign.liveness import _segments, classify_dead

#: a trap the program handles first (an ``ebreak`` whose handler skips it), then a loop with
#: a function call and a system call that writes: registers live, dead, overwritten, and
#: read by the trap handler only
PROGRAM = """
    la   t0, handler
    csrw mtvec, t0
    ebreak
    li   s1, 12
    li   a0, 0
    la   s0, data
loop:
    lw   t1, 0(s0)
    mv   a1, t1
    call mix
    addi s0, s0, 4
    addi s1, s1, -1
    bnez s1, loop
    mv   s2, a0
    li   a0, 1
    la   a1, msg
    li   a2, 3
    li   a7, 64
    ecall
    andi a0, s2, 0x7f
    li   a7, 93
    ecall
mix:
    add  a0, a0, a1
    slli t2, a0, 3
    xor  a0, a0, t2
    ret
handler:
    csrr t3, mepc
    addi t3, t3, 4
    add  s3, s3, s4
    csrw mepc, t3
    mret
    .align 4
data:
    .word 3, 1, 4, 1, 5, 9, 2, 6, 5, 3, 5, 8
msg:
    .ascii "ok\\n"
"""

SAME = ("outcome", "exit", "steps", "cycles", "differs", "old", "new", "entry", "error", "step")


def campaign(tmp_path: Path, prune: bool, **faults: Any) -> Campaign:
    program = tmp_path / "mix.s"
    program.write_text(PROGRAM)
    outputs = faults.pop("outputs", {"memory": ["data:+48"]})
    data = {"name": "mix", "seed": 11,
            "program": {"program": str(program), "arch": "rv32im", "set": {"ram": "1M"}},
            "outputs": outputs, "faults": faults, "run": {"snapshots": 8, "prune": prune}}
    return Campaign.from_dict(data, base_dir=str(tmp_path), source="test.toml")


def results(path: Path) -> dict[str, dict[str, Any]]:
    return {r["id"]: r for r in map(json.loads, path.read_text().splitlines())}


def both(tmp_path: Path, **faults: Any) -> tuple[dict[str, dict[str, Any]], dict[str, dict[str, Any]]]:
    run_campaign(campaign(tmp_path, True, **dict(faults)), tmp_path / "on.jsonl", workers=1, host=host(),
                 progress=False)
    run_campaign(campaign(tmp_path, False, **dict(faults)), tmp_path / "off.jsonl", workers=1, host=host(),
                 progress=False)
    return results(tmp_path / "on.jsonl"), results(tmp_path / "off.jsonl")


def test_segments_keep_the_first_access_after_any_point():
    # reads at 2, 3 (one run), a write at 5, a read-and-write at 7, writes at 9 and 10
    ends, kinds = _segments(np.array([2, 3, 7]), np.array([5, 7, 9, 10]))
    assert ends.tolist() == [3, 5, 7, 9, 10] and kinds.tolist() == [1, 0, 1, 0, 0]
    entry = {"ends": [ends.tobytes()], "kinds": [kinds.tobytes()]}
    assert [classify_dead(entry, 0, at) for at in (0, 3, 4, 5, 6, 7, 8, 10, 11)] == [
        ("read", 3), ("read", 3), ("overwritten", 5), ("overwritten", 5), ("read", 7), ("read", 7),
        ("overwritten", 9), ("overwritten", 10), ("unread", None)]


def test_pruning_changes_no_outcome(tmp_path):
    on, off = both(tmp_path, targets=["hart0.x"], models=["flip", "zero"], sampling="random", count=60)
    assert on.keys() == off.keys() and len(on) == 120
    assert {k: [r[f] for f in SAME] for k, r in on.items()} == {k: [r[f] for f in SAME] for k, r in off.items()}
    pruned = [r for r in on.values() if r["pruned"]]
    assert {r["pruned"] for r in pruned} == {"unread", "overwritten"}
    assert len(pruned) >= 40                      # most registers are dead most of the time
    assert all(r["pruned"] is None for r in off.values())
    assert {r["outcome"] for r in on.values() if not r["pruned"]} >= {"sdc", "masked"}
    for r in pruned:                              # decided at the trigger, as the run would have ended
        assert r["outcome"] == ("latent" if r["pruned"] == "unread" else "masked")
        assert r["steps"] == off[r["id"]]["steps"]
        if r["pruned"] == "overwritten":
            assert r["step"] < r["converged_at"] <= r["steps"]


def test_a_register_the_trap_handler_reads_is_not_dead(tmp_path):
    """s4 is read only by the ebreak handler (a trap: the hook counts it as reading every
    register), s3 written there: a flip before the trap must run, one after it is dead, and
    both end as the full run."""
    faults = [f"target=hart0.x[{reg}],bit=4,at=step:{step}" for reg in (19, 20) for step in (1, 2, 30, 60)]
    on, off = both(tmp_path, faults=faults, targets=[], models=[])
    assert {k: [r[f] for f in SAME] for k, r in on.items()} == {k: [r[f] for f in SAME] for k, r in off.items()}
    s4_early = on["target=hart0.x[20],bit=4,at=step:2"]   # before the ebreak (the third instruction)
    assert s4_early["pruned"] is None and s4_early["outcome"] == "latent"
    assert on["target=hart0.x[20],bit=4,at=step:30"]["pruned"] == "unread"


def test_outputs_that_see_registers_leave_unread_faults_to_the_run(tmp_path):
    """With a register file among the outputs a dead register still decides the outcome (sdc),
    so only overwritten faults are pruned."""
    on, off = both(tmp_path, targets=["hart0.x"], sampling="random", count=40,
                   outputs={"structures": ["hart0.x"]})
    assert {k: [r[f] for f in SAME] for k, r in on.items()} == {k: [r[f] for f in SAME] for k, r in off.items()}
    assert {r["pruned"] for r in on.values()} <= {None, "overwritten"}
    assert any(r["outcome"] == "sdc" and r["differs"] == ["structure:hart0.x"] for r in on.values())


def test_the_metadata_says_what_the_record_covers(tmp_path):
    plan = prepare(campaign(tmp_path, True, targets=["hart0.x"], sampling="random", count=3), host=host())
    assert plan.liveness is not None and plan.liveness["structures"] == ["hart0.x"]
    assert plan.liveness["segments"] > 0
    assert prepare(campaign(tmp_path, False, targets=["hart0.x"], sampling="random", count=3),
                   host=host()).liveness is None
    # only stuck-at faults: nothing pruning could decide, so no third golden run
    stuck = prepare(campaign(tmp_path, True, targets=["hart0.x"], models=["stuck1"], sampling="random",
                             count=3), host=host())
    assert stuck.liveness is None


def test_an_architecture_without_register_uses_is_run_in_full(tmp_path):
    """rfPhoenix declares no register uses: no record, every fault runs (and the campaign works)."""
    from importlib import resources

    source = resources.files("tessera_phoenix").joinpath("examples", "vcopy.s")
    data = {"name": "vcopy", "seed": 1, "program": {"program": str(source), "arch": "phoenix", "set": {"dram": "1M"}},
            "outputs": {"memory": ["0xFFFC0100:+64"]},
            "faults": {"targets": ["t0.r"], "sampling": "random", "count": 6}, "run": {"snapshots": 2}}
    c = Campaign.from_dict(data, base_dir=str(tmp_path), source="test.toml")
    plan = prepare(c, host=host())
    assert plan.liveness is None and plan.shared["liveness"] is None
    summary = run_campaign(c, tmp_path / "p.jsonl", workers=1, host=host(), progress=False)
    assert summary.total == 6
    assert all(r["pruned"] is None for r in results(tmp_path / "p.jsonl").values())
