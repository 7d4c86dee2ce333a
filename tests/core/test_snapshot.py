"""Snapshots: interrupt anywhere, save, restore (here or in another process), continue."""

from __future__ import annotations

import pickle
import subprocess
import sys
import textwrap

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import tessera
from tessera.engine import WAITING
from tessera.errors import SnapshotError
from tessera.machine import Machine
from tessera.machine.machine import SNAPSHOT_MAGIC
from tessera.memory import MMIO

from .conftest import CONSOLE, Plugin, labels, make_host, new_machine, producer_consumer, prog

QUANTUM = 5  # small, so split points fall mid-quantum and between cores


def program():
    """Producer/consumer over semaphores plus console output and a DMA copy at the end."""
    items = producer_consumer(8)
    body = list(items[:-4])  # without the data words
    # core1's final "halt r5" is replaced by: print 'k', copy total with DMA, halt
    assert body[-1] == ("halt", dict(rd=5))
    body[-1:] = [
        ("li", dict(rd=10, limm=CONSOLE)),
        ("li", dict(rd=11, limm=ord("k"))),
        ("st", dict(rd=11, rs1=10, imm=0)),
        ("li", dict(rd=12, limm="copy")),
        ("li", dict(rd=13, limm="total")),
        ("li", dict(rd=14, limm=4)),
        ("dma.start", dict(rd=12, rs1=13, rs2=14)),
        ("li", dict(rd=8, limm=1)),
        ("dma.wait", dict(rd=8)),
        ("ld", dict(rd=9, rs1=12, imm=0)),
        ("halt", dict(rd=9)),
    ]
    return (*body, "slot:", 0, "total:", 0, "copy:", 0)


CODE = prog(*program())


def fresh():
    return new_machine(CODE, quantum=QUANTUM)


@pytest.fixture(scope="module")
def reference():
    m = fresh()
    r = m.run()
    assert r.reason == "halted" and m.agent("core1").exit_code == sum(range(9))
    assert m.space.read(labels(*program())["copy"], 4) == sum(range(9))
    assert m.space.region_named("console").device.text == bytearray(b"k")
    return m.state_hash(), m.total_steps


def split_run(k: int, *, host=None) -> Machine:
    m = fresh()
    r = m.run(max_steps=k, raise_on_budget=False)
    assert r.steps <= k
    data = m.snapshot()
    m2 = Machine.restore(data, host=host if host is not None else make_host())
    m2.run()
    return m2


def test_snapshot_restore_continue_matches_uninterrupted(reference):
    ref_hash, total = reference
    for k in (0, 1, 3, QUANTUM, QUANTUM + 2, 17, total // 2, total - 1, total):
        assert split_run(k).state_hash() == ref_hash, k


def test_snapshot_while_a_core_waits_on_a_semaphore(reference):
    ref_hash, total = reference
    m = fresh()
    waiting_at = None
    for k in range(1, total):
        m.run(max_steps=1, raise_on_budget=False)
        core = next((c for c in m.cpus if c.status == WAITING and "sem" in c.wait_reason), None)
        if core is not None:
            waiting_at = k
            break
    assert waiting_at is not None
    m2 = Machine.restore(m.snapshot())
    core2 = m2.agent(core.name)
    assert core2.status == WAITING
    assert core2 in core2.waiting_on.waiters  # the object identity survived
    assert core2.waiting_on is m2.sync[core.waiting_on.name]
    m2.run()
    assert m2.state_hash() == ref_hash


def test_snapshot_at_a_breakpoint_continues_identically(reference):
    ref_hash, _ = reference
    m = fresh()
    cloop = labels(*program())["cloop"]
    assert m.run(until_pc=[cloop]).reason == "breakpoint"
    m2 = Machine.restore(m.snapshot())
    m2.run()
    assert m2.state_hash() == ref_hash
    m.run()
    assert m.state_hash() == ref_hash


def test_repeated_snapshots_chain(reference):
    ref_hash, _ = reference
    m = fresh()
    while m.run(max_steps=7, raise_on_budget=False).reason == "budget":
        m = Machine.restore(m.snapshot())
    assert m.state_hash() == ref_hash


def test_restore_in_another_process(tmp_path, reference):
    ref_hash, total = reference
    m = fresh()
    m.run(max_steps=total // 3, raise_on_budget=False)
    path = tmp_path / "mid.snap"
    m.save_snapshot(str(path))
    script = textwrap.dedent(f"""
        from tessera.machine import Machine
        m = Machine.load_snapshot({str(path)!r})
        r = m.run()
        print(r.reason, m.agent("core1").exit_code, m.state_hash())
    """)
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    reason, code, digest = out.stdout.split()
    assert (reason, int(code), digest) == ("halted", sum(range(9)), ref_hash)


def test_a_snapshot_of_the_older_layout_resumes_at_the_same_scheduler_position(reference, monkeypatch):
    # before tessera.machine.scheduler, the position was two machine attributes, _rr and _left
    ref_hash, _total = reference
    m = fresh()
    m.run(max_steps=QUANTUM + 2, raise_on_budget=False)
    position = (m.scheduler.turn, m.scheduler.left)
    assert position == (1, QUANTUM - 2)  # core1, mid-quantum: the position matters
    current = Machine.__getstate__

    def older_layout(machine):
        state = current(machine)
        scheduler = state.pop("scheduler")
        state["_rr"], state["_left"] = scheduler.turn, scheduler.left
        return state

    monkeypatch.setattr(Machine, "__getstate__", older_layout)
    data = m.snapshot()
    monkeypatch.undo()
    assert b"_left" in data and b"Scheduler" not in data
    restored = Machine.restore(data, host=make_host())
    assert (restored.scheduler.turn, restored.scheduler.left) == position
    assert "_rr" not in vars(restored) and "_left" not in vars(restored)
    restored.run()
    assert restored.state_hash() == ref_hash
    again = Machine.restore(data, host=make_host())
    core1 = again.agent("core1").instret
    again.step()  # the next step is core1's, as in the run that was saved (core0's from (0, 0))
    assert again.agent("core1").instret == core1 + 1


def test_state_hash_changes_with_state():
    m = fresh()
    h0 = m.state_hash()
    assert fresh().state_hash() == h0
    m.space.write(0x8000, 1, 1)
    h1 = m.state_hash()
    assert h1 != h0
    m.cpus[1].r[3] = 5
    assert m.state_hash() != h1


@pytest.mark.parametrize("data,match", [
    (b"", "bad magic"),
    (b"not a snapshot at all", "bad magic"),
    (SNAPSHOT_MAGIC + b"\x80\x05garbage", "unsupported snapshot format 1"),
    (SNAPSHOT_MAGIC + pickle.dumps({"format": 999, "machine": None}), "unsupported snapshot format 1"),
    (SNAPSHOT_MAGIC + b"garbage that is long enough to hold a digest and a length", "damaged"),
])
def test_bad_snapshot_bytes(data, match):
    with pytest.raises(SnapshotError, match=match) as info:
        Machine.restore(data)
    assert info.value.exit_code == 75


def test_truncated_snapshot_and_missing_file(tmp_path):
    data = fresh().snapshot()
    with pytest.raises(SnapshotError, match="damaged"):
        Machine.restore(data[: len(data) // 2])
    with pytest.raises(SnapshotError, match="cannot read snapshot"):
        Machine.load_snapshot(str(tmp_path / "nope.snap"))


def test_unpicklable_device_is_a_snapshot_error():
    class Device:
        def __init__(self):
            self.callback = lambda: None

        def read(self, offset, size):
            return 0

        def write(self, offset, size, value):
            pass

    class Dev(Plugin):
        @tessera.hookimpl
        def tessera_memory_regions(self):
            return [MMIO("lambda-dev", 0x5_0000, 0x10, Device())]

    m = new_machine(CODE, plugins=(Dev(),))
    with pytest.raises(SnapshotError, match="cannot be saved"):
        m.snapshot()


@settings(max_examples=25, deadline=None)
@given(k=st.integers(min_value=0, max_value=400))
def test_any_split_point_gives_the_same_final_state(k):
    ref = fresh()
    ref.run()
    assert split_run(k).state_hash() == ref.state_hash()


@settings(max_examples=10, deadline=None)
@given(splits=st.lists(st.integers(min_value=1, max_value=60), min_size=1, max_size=6))
def test_several_snapshots_give_the_same_final_state(splits):
    ref = fresh()
    ref.run()
    m = fresh()
    for k in splits:
        m.run(max_steps=k, raise_on_budget=False)
        m = Machine.restore(m.snapshot())
    m.run()
    assert m.state_hash() == ref.state_hash()


def test_a_run_ending_in_an_error_snapshots_like_an_uninterrupted_one():
    # li r1, 1 ; jmp 0x40000 (unmapped) -> a fetch fault ends the run mid-quantum
    from tessera.errors import UnhandledTrap

    code = prog(("li", dict(rd=1, limm=1)), ("jmp", dict(joff=0x4_0000 - 4)))

    def finish(machine):
        try:
            machine.run()
        except UnhandledTrap:
            pass
        return machine.state_hash()

    whole = finish(new_machine(code, cores=1))
    part = new_machine(code, cores=1)
    part.run(max_steps=1, raise_on_budget=False)
    assert finish(Machine.restore(part.snapshot(), host=make_host())) == whole
