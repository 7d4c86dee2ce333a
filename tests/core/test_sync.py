"""Sync objects on their own (with plain agents) and through toy programs; deadlocks."""

from __future__ import annotations

import pytest

import tessera
from tessera.control import WaitFor
from tessera.engine import RUNNABLE, WAITING, Agent
from tessera.errors import ConfigError, Deadlock, MemoryFault
from tessera.sync import Barrier, Counter, Event, Fifo, Semaphore

from .conftest import Plugin, labels, new_machine, producer_consumer, prog


def agents(*names):
    return [Agent(n) for n in names]


def must_wait(fn, *args):
    with pytest.raises(WaitFor) as info:
        fn(*args)
    return info.value


# --------------------------------------------------------------------------- objects


def test_semaphore_counts_and_wakes_in_order():
    a, b, c = agents("a", "b", "c")
    s = Semaphore("s", 1)
    s.wait(a)
    assert s.value == 0
    w = must_wait(s.wait, b)
    assert w.obj is s and "semaphore s to be posted" in w.reason
    b.park(w.obj, w.reason)
    c.park(s, must_wait(s.wait, c).reason)
    assert s.waiters == [b, c] and b.status == WAITING
    s.post(a)
    assert s.value == 1 and b.status == RUNNABLE and c.status == RUNNABLE
    assert s.waiters == []
    assert not Semaphore("t").try_wait(a)


def test_semaphore_maximum_blocks_post():
    a, = agents("a")
    s = Semaphore("s", 0, maximum=1)
    s.post(a)
    w = must_wait(s.post, a)
    assert "below its maximum 1" in w.reason
    assert s.value == 1
    assert s.try_wait(a) and s.value == 0
    with pytest.raises(ConfigError):
        Semaphore("bad", 2, maximum=1)
    with pytest.raises(ConfigError):
        Semaphore("bad", -1)


def test_fifo_full_and_empty():
    prod, cons = agents("prod", "cons")
    f = Fifo("f", 2)
    w = must_wait(f.pop, cons)
    assert "empty" in w.reason
    cons.park(f, w.reason)
    f.push(prod, "x")
    assert cons.status == RUNNABLE  # woken by the push
    f.push(prod, "y")
    w = must_wait(f.push, prod, "z")
    assert "full, 2 entries" in w.reason and len(f) == 2
    prod.park(f, w.reason)
    assert f.pop(cons) == "x"
    assert prod.status == RUNNABLE
    f.push(prod, "z")
    assert [f.pop(cons), f.pop(cons)] == ["y", "z"]
    assert f.state()["items"] == []
    with pytest.raises(ConfigError):
        Fifo("bad", 0)


def test_counter_wait_at_least():
    a, = agents("a")
    c = Counter("c")
    c.wait_at_least(a, 0)
    w = must_wait(c.wait_at_least, a, 2)
    assert "counter c to reach 2 (now 0)" in w.reason
    a.park(c, w.reason)
    c.add(1)
    assert a.status == RUNNABLE  # woken to re-check
    a.park(c, must_wait(c.wait_at_least, a, 2).reason)
    c.add(1)
    c.wait_at_least(a, 2)
    assert c.state() == {"kind": "counter", "value": 2}


def test_event_set_and_clear():
    a, = agents("a")
    e = Event("e")
    a.park(e, must_wait(e.wait, a).reason)
    e.set()
    assert a.status == RUNNABLE
    e.wait(a)
    e.clear()
    must_wait(e.wait, a)


def test_barrier_releases_everyone_then_resets():
    a, b, c = agents("a", "b", "c")
    bar = Barrier("bar", 3)
    for x in (a, b):
        w = must_wait(bar.arrive, x)
        x.park(bar, w.reason)
    assert "2 of 3 arrived" in w.reason
    bar.arrive(c)  # the last one passes and releases the others
    assert a.status == b.status == RUNNABLE and bar.generation == 1
    bar.arrive(a)  # woken agents retry the instruction and pass
    bar.arrive(b)
    assert bar.state()["arrived"] == []
    must_wait(bar.arrive, a)  # a new round
    assert bar.state()["arrived"] == ["a"]
    with pytest.raises(ConfigError):
        Barrier("bad", 0)


def test_halted_agent_leaves_the_wait_list():
    a, = agents("a")
    s = Semaphore("s")
    a.park(s, "x")
    a.halt(3)
    assert s.waiters == [] and a.exit_code == 3


# --------------------------------------------------------------------------- programs


def test_semaphore_producer_consumer_across_cores():
    items = producer_consumer(25)
    m = new_machine(prog(*items))
    r = m.run()
    assert r.reason == "halted"
    assert m.agent("core1").exit_code == sum(range(26))
    assert m.space.read(labels(*items)["total"], 4) == sum(range(26))
    assert m.sync["sem0"].value == 0 and m.sync["sem1"].value == 0


def barrier_program(rounds: int = 1):
    # core0 dawdles, then publishes a value and arrives; core1 arrives first and
    # must not read the value before core0 has written it.
    body = []
    for i in range(rounds):
        body += [
            ("cid", dict(rd=1)),
            ("bne", dict(rd=1, rs1=0, boff=f"late{i}")),
            ("li", dict(rd=2, limm=100)),
            f"dawdle{i}:",
            ("addi", dict(rd=2, rs1=2, imm=-1)),
            ("bne", dict(rd=2, rs1=0, boff=f"dawdle{i}")),
            ("li", dict(rd=3, limm=i + 41)),
            ("st", dict(rd=3, rs1=0, imm=0x800)),
            f"late{i}:",
            ("bar", {}),
            ("ld", dict(rd=4, rs1=0, imm=0x800)),
            ("add", dict(rd=5, rs1=5, rs2=4)),
        ]
    return (*body, ("halt", dict(rd=5)))


@pytest.mark.parametrize("quantum", [1, 64])
def test_barrier_with_both_cores(quantum):
    m = new_machine(prog(*barrier_program(2)), quantum=quantum)
    m.run()
    assert m.agent("core1").exit_code == 41 + 42
    assert m.agent("core0").exit_code == 41 + 42
    assert m.sync["bar"].generation == 2


def test_dma_engine_copies_bytes():
    src = bytes(range(1, 41))
    items = (
        ("li", dict(rd=5, limm=0x900)),   # dst
        ("li", dict(rd=6, limm=0x800)),   # src
        ("li", dict(rd=7, limm=len(src))),
        ("dma.start", dict(rd=5, rs1=6, rs2=7)),
        ("li", dict(rd=8, limm=1)),
        ("dma.wait", dict(rd=8)),
        ("ld", dict(rd=9, rs1=5, imm=36)),
        ("halt", dict(rd=9)),
    )
    m = new_machine(prog(*items), cores=1)
    m.space.write_bytes(0x800, src)
    r = m.run()
    assert m.space.read_bytes(0x900, len(src)) == src
    assert r.exit_code == int.from_bytes(src[36:40], "little")
    dma = m.agent("dma")
    assert dma.instret == 1 and dma.cycles == len(src) // 4
    assert m.sync["dma.done"].value == 1 and len(m.sync["dma.q"]) == 0


class SyncLog(Plugin):
    def __init__(self):
        self.events = []

    @tessera.hookimpl
    def tessera_sync_event(self, event):
        self.events.append(event)


def test_dma_fifo_full_makes_the_issuer_wait():
    n = 6  # the queue holds 4 commands
    items = [("li", dict(rd=6, limm=0x800)), ("li", dict(rd=7, limm=4))]
    for i in range(n):
        items += [("li", dict(rd=5, limm=0x900 + 4 * i)), ("dma.start", dict(rd=5, rs1=6, rs2=7))]
    items += [("li", dict(rd=8, limm=n)), ("dma.wait", dict(rd=8)), ("halt", dict(rd=0))]
    log = SyncLog()
    m = new_machine(prog(*items), cores=1, plugins=(log,))
    m.space.write(0x800, 4, 0xFEEDBEEF)
    assert m.run().reason == "halted"
    assert [m.space.read(0x900 + 4 * i, 4) for i in range(n)] == [0xFEEDBEEF] * n
    assert m.sync["dma.done"].value == n and m.agent("dma").instret == n
    waits = [(e.obj, e.agent) for e in log.events if e.kind == "wait"]
    assert ("dma.q", "core0") in waits  # the fifo was full
    assert ("dma.q", "dma") in waits  # and empty
    assert ("dma.done", "core0") in waits
    pushes = [e for e in log.events if e.kind == "push"]
    assert len(pushes) == n and max(e.value for e in pushes) == 4


def test_deadlock_names_every_waiting_core():
    m = new_machine(prog(("cid", dict(rd=1)),
                         ("bne", dict(rd=1, rs1=0, boff="other")),
                         ("sem.wait", dict(sem=2)),
                         ("halt", dict(rd=0)),
                         "other:",
                         ("sem.wait", dict(sem=3)),
                         ("halt", dict(rd=0))))
    with pytest.raises(Deadlock) as info:
        m.run()
    err = info.value
    text = str(err)
    assert "core0" in text and "core1" in text and "sem2" in text and "sem3" in text
    assert "\n" not in text
    assert err.exit_code == 71
    assert set(err.waits) >= {"core0", "core1"}
    assert "semaphore sem2" in err.waits["core0"] and "semaphore sem3" in err.waits["core1"]
    assert m.agent("core0").status == WAITING and m.agent("core0").pc == 8
    # nothing changes on another attempt
    with pytest.raises(Deadlock):
        m.run()


def test_deadlock_with_one_core_halted():
    m = new_machine(prog(("cid", dict(rd=1)),
                         ("beq", dict(rd=1, rs1=0, boff="wait")),
                         ("halt", dict(rd=0)),
                         "wait:",
                         ("li", dict(rd=8, limm=1)),
                         ("dma.wait", dict(rd=8)),
                         ("halt", dict(rd=0))))
    with pytest.raises(Deadlock) as info:
        m.run()
    assert "core0" in info.value.waits and "core1" not in info.value.waits
    assert "counter dma.done to reach 1" in str(info.value)


def test_idle_engine_alone_is_not_a_deadlock():
    m = new_machine(prog(("li", dict(rd=7, limm=4)),
                         ("li", dict(rd=5, limm=0x900)),
                         ("dma.start", dict(rd=5, rs1=0, rs2=7)),
                         ("li", dict(rd=8, limm=1)),
                         ("dma.wait", dict(rd=8)),
                         ("li", dict(rd=1, limm=50)),
                         "busy:",
                         ("addi", dict(rd=1, rs1=1, imm=-1)),
                         ("bne", dict(rd=1, rs1=0, boff="busy")),
                         ("halt", dict(rd=0))), quantum=4)
    r = m.run()
    assert r.reason == "halted"
    dma = m.agent("dma")
    assert dma.daemon and dma.status == WAITING  # parked on its empty inbox
    assert "fifo dma.q" in dma.wait_reason
    assert m.sync["dma.done"].value == 2


def test_deadlock_can_be_resolved_from_outside():
    m = new_machine(prog(("sem.wait", dict(sem=0)), ("halt", dict(rd=0))), cores=1)
    with pytest.raises(Deadlock):
        m.run()
    m.sync["sem0"].post()
    r = m.run()
    assert r.reason == "halted" and m.cpus[0].instret == 2


def test_add_sync_refuses_duplicates():
    m = new_machine()
    with pytest.raises(ConfigError, match="already used"):
        m.add_sync(Semaphore("sem0"))


def test_dma_fault_names_the_engine():
    m = new_machine(prog(("li", dict(rd=5, limm=0x900)),
                         ("li", dict(rd=6, limm=0x5_0000)),   # unmapped source
                         ("li", dict(rd=7, limm=8)),
                         ("dma.start", dict(rd=5, rs1=6, rs2=7)),
                         ("li", dict(rd=8, limm=1)),
                         ("dma.wait", dict(rd=8)),
                         ("halt", dict(rd=0))), cores=1)
    with pytest.raises(MemoryFault) as info:
        m.run()
    assert info.value.agent == "dma" and info.value.address == 0x5_0000
    assert "agent dma" in str(info.value)
