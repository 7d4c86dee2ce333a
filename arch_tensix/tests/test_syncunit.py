"""The sync unit (SyncUnit.md, SEMINIT/SEMPOST/SEMGET/ATGETM/ATRELM.md): semaphore
arithmetic and its saturation, the RISC-V access, mutexes across threads, and a
producer/consumer pair of threads ordered by SEMPOST/SEMWAIT."""

from __future__ import annotations

import pickle

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from tensix_sync_support import (
    SFPNOP,
    atgetm,
    atrelm,
    semget,
    seminit,
    sempost,
    semwait,
    setdmareg,
    sync_state,
    threads,
)
from tensix_table_support import ARCHS, words

from tessera.errors import Deadlock, UnhandledTrap
from tessera_tensix.config import TensixConfig
from tessera_tensix.core import TensixCore
from tessera_tensix.syncunit import SyncUnit

CHIPS = ["bh", "wh"]


def _unit(chip: str = "bh") -> tuple[SyncUnit, list[int]]:
    core = TensixCore(TensixConfig(), chip)
    wakes: list[int] = []
    core.signal.wake_waiters = lambda: wakes.append(1)       # count the change signals
    return core.unit("sync", SyncUnit), wakes


# ------------------------------------------------------------------ semaphore arithmetic
@settings(deadline=None, max_examples=200)
@given(ops=st.lists(st.tuples(st.sampled_from(["init", "post", "get", "rd_inc", "rd_dec"]),
                              st.integers(0, 0xFF), st.integers(0, 15), st.integers(0, 15)),
                    max_size=40))
def test_semaphore_arithmetic_matches_a_plain_model(ops):
    """SEMINIT sets the masked semaphores; SEMPOST saturates at 15, SEMGET at 0; a RISC-V
    write with bit 0 set is a decrement, clear an increment; a read returns Value."""
    sync, _ = _unit()
    value, top = [0] * 8, [0] * 8
    for kind, mask, a, b in ops:
        if kind == "init":
            sync.init(mask, a, b)
            for i in range(8):
                if mask >> i & 1:
                    value[i], top[i] = a, b
        elif kind == "post":
            sync.post(mask)
            value = [min(v + (mask >> i & 1), 15) for i, v in enumerate(value)]
        elif kind == "get":
            sync.get(mask)
            value = [max(v - (mask >> i & 1), 0) for i, v in enumerate(value)]
        else:
            i = mask & 7
            sync.riscv_write(i, a * 2 + (kind == "rd_dec"))
            value[i] = max(value[i] - 1, 0) if kind == "rd_dec" else min(value[i] + 1, 15)
        assert sync.value == value and sync.max == top
        assert [sync.riscv_read(i) for i in range(8)] == value


def test_saturation_edges_do_not_signal_a_change():
    sync, wakes = _unit()
    sync.init(0b11, 15, 3)
    assert len(wakes) == 1
    sync.post(0b01)                                          # 15 stays 15: nothing changed
    assert sync.value[:2] == [15, 15] and len(wakes) == 1
    sync.init(0b01, 0, 3)
    sync.get(0b01)                                           # 0 stays 0
    assert sync.value[0] == 0 and len(wakes) == 2
    sync.post(0b11)                                          # one of the two changed
    assert sync.value[:2] == [1, 15] and len(wakes) == 3
    sync.riscv_write(1, 0xFFFF_FFFF)                         # odd: decrement
    assert sync.riscv_read(1) == 14 and len(wakes) == 4
    with pytest.raises(IndexError, match="semaphore index 8"):
        sync.riscv_read(8)


def test_the_unit_pickles_and_reports_its_state():
    sync = TensixCore(TensixConfig(), "wh").unit("sync", SyncUnit)
    sync.init(0x80, 2, 5)
    assert sync.acquire(1, 7) is None
    back = pickle.loads(pickle.dumps(sync))
    assert back.value[7] == 2 and back.max[7] == 5 and back.holder[7] == 1
    state = back.state()
    assert state["semaphores"][7] == {"value": 2, "max": 5}
    assert state["mutexes"] == {"0": None, "2": None, "3": None, "4": None, "5": None, "6": None,
                                "7": "T1"}


@pytest.mark.parametrize("chip", CHIPS)
def test_sem_instructions_in_a_machine(chip):
    m = threads(chip, [[seminit(9, 14, 0b1010_0001), sempost(0b1000_0011), sempost(0b1),
                        semget(0b1000_0100), semget(0b1000_0000), "ttsemget 32"]])
    assert m.run(max_steps=100).exit_code == 0
    sems = sync_state(m)["semaphores"]
    assert [s["value"] for s in sems] == [15, 1, 0, 0, 0, 13, 0, 13]
    assert [s["max"] for s in sems] == [9, 0, 0, 0, 0, 9, 0, 9]


def test_assembler_spelling_matches_the_independent_encoder():
    assert words("ttseminit 9,14,161") == [seminit(9, 14, 0b1010_0001)]
    assert words("ttsemwait 64,2,1\nttsempost 2\nttsemget 2\nttatgetm 3\nttatrelm 3") == [
        semwait(64, 2, 1), sempost(2), semget(2), atgetm(3), atrelm(3)]


# -------------------------------------------------------------------------------- mutexes
@pytest.mark.parametrize("chip", CHIPS)
def test_mutex_makes_the_other_thread_wait_until_released(chip):
    """T0 holds mutex 2 for a while; T1's ATGETM waits, and T1's next instruction runs
    only after T0's ATRELM (its GPR write sees T0's semaphore post)."""
    t0 = [atgetm(2)] + [setdmareg(i, 2) for i in range(6)] + [sempost(1), atrelm(2)]
    t1 = [setdmareg(1, 0), atgetm(2), semget(1), atrelm(2)]
    m = threads(chip, [t0, t1])
    assert m.run(max_steps=200).exit_code == 0
    # T1 took the mutex after T0's SEMPOST: its SEMGET found 1 and left 0
    assert sync_state(m)["semaphores"][0]["value"] == 0
    assert sync_state(m)["mutexes"]["2"] is None
    # without the mutex T1's SEMGET runs before T0's SEMPOST and the post survives
    m = threads(chip, [t0, [setdmareg(1, 0), semget(1)]])
    assert m.run(max_steps=200).exit_code == 0
    assert sync_state(m)["semaphores"][0]["value"] == 1


def test_release_hands_the_mutex_round_robin():
    """ATRELM by T0 while T1 and T2 both wait: T1 gets it; released by T1, T2 gets it."""
    sync, _ = _unit()
    assert sync.acquire(0, 0) is None
    assert sync.acquire(2, 0) == 0 and sync.acquire(1, 0) == 0
    assert sync.release(0, 0) and sync.holder[0] == 1
    assert sync.acquire(2, 0) == 1                          # still waiting
    assert sync.acquire(1, 0) is None                       # T1 re-runs its ATGETM: holds it
    assert sync.release(1, 0) and sync.holder[0] == 2
    assert sync.acquire(2, 0) is None and sync.holder[0] == 2
    assert not sync.release(0, 0) and sync.holder[0] == 2   # not T0's: nothing changes
    assert sync.release(2, 0) and sync.holder[0] is None


@pytest.mark.parametrize("chip", CHIPS)
def test_three_threads_take_a_mutex_in_turn(chip):
    """Three threads run the same critical section under mutex 0 (REG_RMW): each completes
    it once (three SEMPOSTs and two SEMGETs each leave semaphore 0 at 3) and the mutex
    ends free."""
    body = [atgetm(0), sempost(1), sempost(1), sempost(1), semget(1), semget(1), atrelm(0)]
    m = threads(chip, [body, body, body])
    assert m.run(max_steps=500).exit_code == 0
    assert sync_state(m)["semaphores"][0]["value"] == 3
    assert sync_state(m)["mutexes"]["0"] is None


@pytest.mark.parametrize(("chip", "index"), [("bh", 1), ("bh", 5), ("wh", 1), ("wh", 8)])
def test_a_mutex_that_does_not_exist_stops_or_waits_forever(chip, index):
    m = threads(chip, [[atgetm(index)]])
    with pytest.raises(UnhandledTrap, match=f"mutex {index} does not exist.*waits forever"):
        m.run(max_steps=10)
    m = threads(chip, [[atrelm(index)]], lenient=True)
    with pytest.raises(Deadlock, match=f"T0 ATRELM waits forever: mutex {index} does not exist"):
        m.run(max_steps=10)


def test_blackhole_has_four_mutexes_wormhole_seven():
    m = threads("wh", [[atgetm(7), atrelm(7)]])
    assert m.run(max_steps=10).exit_code == 0
    m = threads("bh", [[atgetm(7)]])
    with pytest.raises(UnhandledTrap, match=r"mutex 7 does not exist \(mutexes 0, 2, 3, 4\)"):
        m.run(max_steps=10)


@pytest.mark.parametrize("chip", CHIPS)
def test_mutex_deadlock_names_the_holder(chip):
    m = threads(chip, [[atgetm(2), semwait(1 << 8, 1, 1), SFPNOP], [SFPNOP, atgetm(2)]])
    with pytest.raises(Deadlock) as info:
        m.run(max_steps=100)
    assert info.value.waits["t1"].startswith("T1 ATGETM waits: mutex 2 is held by T0")
    assert info.value.waits["t0"].startswith("T0 SEMWAIT sem 0 value 0 (B8 blocks SFPNOP)")


# ------------------------------------------------------------------ producer / consumer
def _pipeline(chip: str, synced: bool) -> np.ndarray:
    """T0 produces values 5, 6, 7 one after another into Dest rows 0-3; T1 copies each to
    rows 8k..; the semaphore MATH_PACK (1) with Max 1 is the one-slot handshake."""
    sem = 1 << 1
    producer: list[int | str] = [seminit(1, 0, sem)]
    consumer: list[int | str] = []
    for k in range(3):
        if synced:
            producer.append(semwait(1 << 8, sem, 2))            # wait while the slot is full
        producer += [setdmareg(k, 0)] * 3                        # some work first
        producer += [f"sfploadi L1,{5 + k},2", "sfpstore 0,L1,4,0"]
        if synced:
            producer.append(sempost(sem))
            consumer.append(semwait(1 << 8, sem, 1))            # wait while the slot is empty
        consumer += ["sfpload L2,0,4,0", f"sfpstore {8 * (k + 1)},L2,4,0"]
        if synced:
            consumer.append(semget(sem))
    m = threads(chip, [producer, consumer])
    assert m.run(max_steps=1000).exit_code == 0
    return m.agent("t0").core.dest.bits.copy()


@pytest.mark.parametrize("chip", CHIPS)
def test_producer_consumer_across_threads(chip):
    got = _pipeline(chip, synced=True)
    # the reference: each round's produce then consume, on one thread
    seq: list[int | str] = []
    for k in range(3):
        seq += [f"sfploadi L1,{5 + k},2", "sfpstore 0,L1,4,0", "sfpload L2,0,4,0",
                f"sfpstore {8 * (k + 1)},L2,4,0"]
    ref = threads(chip, [seq])
    assert ref.run(max_steps=100).exit_code == 0
    want = ref.agent("t0").core.dest.bits
    assert np.array_equal(got, want)
    assert {5, 6, 7} <= {int(v) for v in np.unique(got)}          # every round was copied
    assert not np.array_equal(_pipeline(chip, synced=False), want)   # the order needs the semaphore


def test_words_of_both_chips_agree_for_the_sync_unit():
    for chip in CHIPS:
        assert words("ttsempost 2", ARCHS[chip]) == [sempost(2)]
