"""The tensix model's core (:mod:`tessera_cycles.tensix_model`) on hand-made sequences.

Each expected time is worked out from the rules in the module's docstring: a core issues
one instruction a cycle in order, a push waits while ``fifo_depth`` of its thread's
instructions have not passed the gate, a thread passes one instruction a cycle, a unit is
busy ``occupancy`` cycles per instruction and is shared by the threads.
"""

from __future__ import annotations

import random

import pytest

from tessera_cycles.tensix_model import TensixParams, TileTimes, UnitCalendar


def test_a_calendar_gives_the_first_free_slot_whatever_order_requests_come_in():
    rng = random.Random(7)
    requests = [(rng.randrange(0, 200), rng.randrange(1, 7)) for _ in range(60)]
    cal = UnitCalendar("u")
    busy: set[int] = set()
    for at, length in requests:
        start = cal.reserve(at, length)
        # slow reference: the first t >= at with [t, t+length) free
        t = at
        while any(c in busy for c in range(t, t + length)):
            t += 1
        assert start == t
        busy.update(range(start, start + length))
    assert cal.busy == sum(length for _at, length in requests)
    # the intervals stay sorted and disjoint
    assert all(e <= s for e, s in zip(cal.ends, cal.starts[1:]))


def feed(tile: TileTimes, tid: int, mnemonics: list[tuple[str, str]]) -> None:
    """Core trisc<tid> pushes each instruction; thread tid then passes it (as a run observes
    them when the FIFO never fills: push, then retire)."""
    core = tile.core(f"trisc{tid}")
    for popped, (mnemonic, unit) in enumerate(mnemonics, 1):
        tile.push(core, (), tid)
        tile.tensix(tid, mnemonic, unit, False, popped)


def test_one_thread_passes_an_instruction_a_cycle_and_a_long_unit_holds_it():
    tile = TileTimes(TensixParams())
    feed(tile, 1, [("ttdmanop", "TDMA")] * 10)
    # pushes at 0..9, each reaches the gate gate_latency (1) later and passes at once
    assert tile.threads[1].done == 11
    tile2 = TileTimes(TensixParams())
    feed(tile2, 1, [("ttadddmareg", "THCON")] * 10)
    # the scalar unit is busy 3 cycles each: passes at 1, 4, ..., 28; busy until 31
    assert tile2.threads[1].done == 1 + 3 * 10
    assert tile2.units["THCON"].busy == 30


def test_threads_share_a_unit_and_each_gets_its_share():
    tile = TileTimes(TensixParams())
    n = 40
    cores = [tile.core(f"trisc{t}") for t in range(3)]
    for i in range(1, n + 1):           # interleaved, as the lockstep run observes them
        for tid in range(3):
            tile.push(cores[tid], (), tid)
        for tid in range(3):
            tile.tensix(tid, "ttadddmareg", "THCON", False, i)
    # three threads, 3 cycles each: the unit is busy the whole time, 9 cycles a round
    assert max(th.done for th in tile.threads) == 1 + 3 * 3 * n
    assert tile.units["THCON"].busy == 3 * 3 * n


def test_a_full_fifo_stalls_the_pushing_core_until_the_oldest_passes():
    params = TensixParams(fifo_depth=4, matrix_pushed_cycles=6)
    tile = TileTimes(params)
    core = tile.core("trisc1")
    th = tile.threads[1]
    # 4 pushes fill the FIFO (the thread has observed none yet), then the thread passes them
    for _ in range(4):
        tile.push(core, (), 1)
    for popped in range(1, 5):
        tile.tensix(1, "ttmvmul", "MATH", False, popped)
    # MVMULs pass at 1, 7, 13, 19 (6 each); push 5 waits for entry 1 (gate 1): no stall;
    # push 6 for entry 2 (7), push 7 for entry 3 (13)
    assert list(th.passed) == [1, 7, 13, 19]
    tile.push(core, (), 1)
    assert core.t == 5 and core.stalls["fifo"] == 0
    tile.push(core, (), 1)
    assert core.t == 8 and core.stalls["fifo"] == 2
    tile.push(core, (), 1)
    assert core.t == 14


def test_expanded_instructions_come_one_a_cycle_behind_their_mop():
    tile = TileTimes(TensixParams())
    core = tile.core("trisc1")
    tile.push(core, (), 1)                       # the MOP, pushed at 0
    for _ in range(16):                          # its expansion: 16 MVMULs, observed first
        tile.tensix(1, "ttmvmul", "MATH", True, 1)
    tile.tensix(1, "ttmop", "", False, 1)        # then the MOP itself retires
    th = tile.threads[1]
    assert th.expanded == 16
    assert th.done == 1 + 16                     # from the gate at 1, one a cycle
    assert list(th.passed) == [1]                # the MOP left the FIFO with its first expansion


def test_a_poll_that_sees_its_word_change_goes_on_from_when_it_could_have():
    tile = TileTimes(TensixParams())
    writer, poller = tile.core("trisc0"), tile.core("trisc1")
    # the poller spins 100 rounds (load + branch) on word 0x100 reading 0, starting at 0
    for _ in range(100):
        tile.load(poller, (), (5,), 8, 0x100, 0, True, None)
        tile.simple(poller, (5,), ())
    assert poller.t > 800
    # meanwhile (in time) the writer stores 1 at 50
    writer.t = 50
    tile.store_l1(writer, (), 0x100)
    tile.load(poller, (), (5,), 8, 0x100, 1, True, tile.l1_written.get(0x100 >> 2))
    # it reads the change when it was written, not after the spinning the run let it do
    assert poller.t == 51
    assert poller.polled > 0


def test_a_load_cannot_see_a_value_before_it_was_written():
    tile = TileTimes(TensixParams())
    reader = tile.core("trisc2")
    tile.load(reader, (), (5,), 8, 0x200, 7, True, 300)
    assert reader.t == 301 and reader.stalls["sync"] == 300


def test_coprocessor_done_check_waits_for_the_thread():
    tile = TileTimes(TensixParams())
    feed(tile, 1, [("ttadddmareg", "THCON")] * 5)
    core = tile.core("trisc1")
    tile.wait_thread(core, (), (6,), 1)
    assert core.t == tile.threads[1].done + 1


@pytest.mark.parametrize("bad", [{"fifo_depth": 31}, {"fifo_depth": 0}, {"div_cycles": 0}, {"gate_latency": -1}])
def test_bad_parameters_are_refused(bad):
    with pytest.raises(ValueError):
        TensixParams(**bad)
