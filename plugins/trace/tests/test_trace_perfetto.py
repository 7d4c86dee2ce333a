"""The Perfetto format: valid trace-event JSON, a track per agent, instructions, sync events."""

from __future__ import annotations

import json
from collections import defaultdict

from trace_support import RV_LOOP, TOY_SEM, retired, rv_machine, toy_machine, trace


def events(machine, **kw):
    doc = json.loads(trace(machine, "perfetto", **kw))
    assert set(doc) >= {"traceEvents", "displayTimeUnit"}
    return doc["traceEvents"]


def tracks(evs):
    return {e["tid"]: e["args"]["name"] for e in evs if e["ph"] == "M" and e["name"] == "thread_name"}


def test_every_agent_has_a_named_track_and_instructions_are_complete_events():
    machine = toy_machine(*TOY_SEM, cores=2, quantum=1)
    evs = events(machine)
    names = tracks(evs)
    assert sorted(names.values()) == ["core0 (cpu)", "core1 (cpu)", "dma (engine)", "machine"]
    tid = {name.split()[0]: t for t, name in names.items()}
    instr = [e for e in evs if e.get("cat") == "instr"]
    assert all(e["ph"] == "X" and e["dur"] >= 1 and set(e["args"]) == {"pc", "asm"} for e in instr)
    assert len(instr) == retired(machine)
    per_track = defaultdict(list)
    for e in instr:
        per_track[e["tid"]].append(e)
    assert {t for t in per_track} == {tid["core0"], tid["core1"]}
    assert [e["name"] for e in per_track[tid["core0"]]] == ["cid", "beq", "nop", "nop", "sem.post", "halt"]
    assert [e["name"] for e in per_track[tid["core1"]]] == ["cid", "beq", "sem.wait", "halt"]


def test_a_wait_is_a_span_to_the_wake_up_and_a_post_an_instant():
    machine = toy_machine(*TOY_SEM, cores=2, quantum=1)
    evs = events(machine)
    tid = {name.split()[0]: t for t, name in tracks(evs).items()}
    (wait,) = [e for e in evs if e["name"].startswith("wait sem0")]
    # the span names what exactly the agent waited for, as a deadlock report would
    assert wait["name"] == "wait sem0: semaphore sem0 to be posted (value 0)"
    assert wait["args"]["reason"] == "semaphore sem0 to be posted (value 0)"
    (post,) = [e for e in evs if e["name"] == "post sem0"]
    assert wait["ph"] == "X" and wait["tid"] == tid["core1"] and wait["cat"] == "sync"
    assert post["ph"] == "i" and post["tid"] == tid["core0"] and post["args"] == {"obj": "sem0", "value": 1}
    # core1 parks after cid and beq (2 cycles) and is woken by the post at core0's clock 4
    assert (wait["ts"], wait["ts"] + wait["dur"]) == (2, post["ts"]) == (2, 4)
    (retry,) = [e for e in evs if e["name"] == "sem.wait"]
    assert retry["ts"] >= wait["ts"] + wait["dur"]
    # the DMA engine waited for work the whole run: an unfinished wait on its track
    (idle,) = [e for e in evs if e["name"].startswith("wait dma.q")]
    assert idle["tid"] == tid["dma"] and idle["args"]["unfinished"] is True


def test_timestamps_follow_each_agent_s_cycle_clock():
    machine = rv_machine(RV_LOOP)
    instr = [e for e in events(machine) if e.get("cat") == "instr"]
    ends = [e["ts"] + e["dur"] for e in instr]
    assert [e["ts"] for e in instr[1:]] == ends[:-1]       # back to back, no overlap
    assert ends[-1] == machine.agent("hart0").cycles
