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


@pytest.mark.parametrize(("phase", "seen_at"), [(True, 54), (False, 50)])
def test_a_poll_that_sees_its_word_change_goes_on_from_when_it_could_have(phase, seen_at):
    tile = TileTimes(TensixParams(poll_phase=phase))
    writer, poller = tile.core("trisc0"), tile.core("trisc1")
    # the poller spins 100 turns (load + dependent branch: 8 + 1 cycles) on word 0x100
    # reading 0, starting at 0: its reads issue at 0, 9, 18, ..., 45, 54, ...
    for _ in range(100):
        tile.load(poller, (), (5,), 8, 0x100, 0, True, None)
        tile.simple(poller, (5,), ())
    assert poller.t > 800
    # meanwhile (in time) the writer stores 1 at 50
    writer.t = 50
    tile.store_l1(writer, (), 0x100)
    tile.load(poller, (), (5,), 8, 0x100, 1, True, tile.l1_written.get(0x100 >> 2))
    # it reads the change on its first read after the write (poll_phase), or when it was
    # written, not after the spinning the run let it do
    assert poller.t == seen_at + 1
    assert poller.polled > 0


def test_a_poll_whose_word_is_written_later_waits_for_its_next_turn():
    tile = TileTimes(TensixParams())
    poller = tile.core("trisc1")
    for _ in range(3):                       # reads at 0, 9, 18
        tile.load(poller, (), (5,), 8, 0x100, 0, True, None)
        tile.simple(poller, (5,), ())
    # the functional run saw the change on the read at 27, but it was written at 40:
    # the read that sees it is the turn after, at 45
    tile.load(poller, (), (5,), 8, 0x100, 1, True, 40)
    assert poller.t == 46 and poller.stalls["sync"] == 45 - 27
    off = TileTimes(TensixParams(poll_phase=False))
    poller = off.core("trisc1")
    for _ in range(3):
        off.load(poller, (), (5,), 8, 0x100, 0, True, None)
        off.simple(poller, (5,), ())
    off.load(poller, (), (5,), 8, 0x100, 1, True, 40)
    assert poller.t == 41


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


@pytest.mark.parametrize("bad", [{"fifo_depth": 33}, {"fifo_depth": 0}, {"div_cycles": 0}, {"gate_latency": -1},
                                 {"l1_ports": "trisc1 trisc9"}, {"l1_ports": "trisc0, trisc0"}, {"l1_banks": 24},
                                 {"l1_bank_bytes": 0}, {"l1_contention": 1}])
def test_bad_parameters_are_refused(bad):
    with pytest.raises(ValueError):
        TensixParams(**bad)


# --------------------------------------------------------------------- L1 ports and banks
# Default ports: B, NC and T0 share one (port #2), T1 and T2 another (port #3); 32 banks of
# 16-byte rows, so 0x1000 and 0x1200 are one bank and 0x1010 the next.  A load takes its
# port and bank one cycle, a store that does not merge blocks both l1_store_period (5).

def l1_load(tile: TileTimes, core: str, address: int, at: int, reg: int = 5) -> int:
    """A load by ``core`` issued at ``at``: when its result is ready."""
    c = tile.core(core)
    c.t = at
    tile.load(c, (), (reg,), 8, address, 0, False, None, True)
    return c.ready[reg]


def test_one_core_alone_is_timed_as_without_the_ports():
    def run(contention: bool) -> tuple[int, list[int], dict[str, int]]:
        tile = TileTimes(TensixParams(l1_contention=contention))
        core = tile.core("trisc1")
        for i in range(24):         # independent loads over four rows, stores over four rows
            tile.load(core, (), (10 + i % 4,), 8, 0x1000 + 16 * (i % 4), 0, False, None, True)
        for i in range(8):
            tile.store_l1(core, (), 0x1000 + 16 * (i % 4))
        return core.t, list(core.ready), dict(core.stalls)

    assert run(True) == run(False)
    # four loads in flight, a slot free 7 cycles after its load: the 24th issues at 5 * 7 + 3;
    # the stores start at 39, 5 apart, the 8th at 39 + 7 * 5
    assert run(True)[0] == 5 * 7 + 3 + 1 + 7 * 5 + 1


def test_two_cores_behind_one_port_take_turns():
    tile = TileTimes(TensixParams())
    assert l1_load(tile, "trisc1", 0x1000, 0) == 8
    # trisc2 asks in the same cycle, another bank: the port is taken, it goes a cycle later
    assert l1_load(tile, "trisc2", 0x1410, 0) == 9
    # cores on different ports, different banks, the same cycle: neither waits
    tile2 = TileTimes(TensixParams())
    assert l1_load(tile2, "trisc0", 0x1000, 0) == 8
    assert l1_load(tile2, "trisc1", 0x1410, 0) == 8


def test_cores_on_different_ports_wait_for_one_bank():
    tile = TileTimes(TensixParams())
    assert l1_load(tile, "trisc0", 0x1000, 0) == 8
    assert l1_load(tile, "trisc1", 0x1200, 0) == 9      # same bank (0x200 = 32 rows on)
    assert l1_load(tile, "trisc1", 0x1210, 3) == 11     # the next bank: free


def test_a_store_blocks_its_bank_and_port_five_cycles():
    tile = TileTimes(TensixParams())
    writer = tile.core("trisc0")
    tile.store_l1(writer, (), 0x1000)                   # read-modify-write of bank 0, cycles 0..4
    assert writer.t == 1
    # a load of that bank from another port, asked at 1, gets the bank at 5: data at 13
    assert l1_load(tile, "trisc1", 0x1200, 1) == 13
    # that load held trisc1's port from 1 (head of its line, waiting for the bank) to 6: a
    # store of trisc2, behind the same port, asked at 2 to another bank, starts at 6
    other = tile.core("trisc2")
    other.t = 2
    tile.store_l1(other, (), 0x1410)
    assert other.t == 7 and other.stalls["store"] == 4
    # a core's own load right after its store waits for the port too (the store queue lets
    # loads pass stores still queued, not one the port is writing)
    tile3 = TileTimes(TensixParams())
    assert tile3.store_l1(tile3.core("trisc0"), (), 0x1000) is None
    assert l1_load(tile3, "trisc0", 0x1010, 1) == 5 + 8
    assert l1_load(TileTimes(TensixParams(l1_contention=False)), "trisc0", 0x1010, 1) == 1 + 8
    # two cores storing through one port alternate: one store per 2 x 5 cycles each
    tile2 = TileTimes(TensixParams())
    a, b = tile2.core("trisc1"), tile2.core("trisc2")
    for i in range(10):
        tile2.store_l1(a, (), 0x1000 + 16 * (i % 4))
        tile2.store_l1(b, (), 0x1400 + 16 * (i % 4) + 0x80)
    assert (a.t, b.t) == (9 * 10 + 1, 9 * 10 + 5 + 1)


def test_a_loaded_port_holds_the_load_buffer_longer():
    # four loads each from trisc1 and trisc2 in the same cycles: the port passes one a cycle,
    # so the 8th is granted at 7 and the cores' fifth loads wait for slots freed later
    tile = TileTimes(TensixParams())
    c1, c2 = tile.core("trisc1"), tile.core("trisc2")
    for i in range(5):
        tile.load(c1, (), (10 + i,), 8, 0x1000 + 16 * i, 0, False, None, True)
        tile.load(c2, (), (10 + i,), 8, 0x1400 + 16 * i + 0x80, 0, False, None, True)
    # trisc1 granted at 0, 2, 4, 6; trisc2 at 1, 3, 5, 7: trisc1's first slot frees at 7,
    # its fifth load issues at 7 and is granted at 8
    assert c1.ready[10:14] == [8, 10, 12, 14] and c2.ready[10:14] == [9, 11, 13, 15]
    assert c1.ready[14] == 8 + 8 and c1.stalls["load"] == 7 - 4
    without = TileTimes(TensixParams(l1_contention=False))
    d1 = without.core("trisc1")
    for i in range(5):
        without.load(d1, (), (10 + i,), 8, 0x1000 + 16 * i, 0, False, None, True)
    assert d1.ready[10:15] == [8, 9, 10, 11, 15]


def test_port_groups_are_a_parameter():
    # everything on one port: trisc0 and trisc1 now take turns too
    tile = TileTimes(TensixParams(l1_ports="brisc ncrisc trisc0 trisc1 trisc2"))
    assert l1_load(tile, "trisc0", 0x1000, 0) == 8
    assert l1_load(tile, "trisc1", 0x1410, 0) == 9
    # every core on its own port
    tile2 = TileTimes(TensixParams(l1_ports=""))
    assert l1_load(tile2, "trisc1", 0x1000, 0) == 8
    assert l1_load(tile2, "trisc2", 0x1410, 0) == 8


def test_calendar_first_free_and_book_agree_with_reserve():
    rng = random.Random(11)
    a, b = UnitCalendar("a"), UnitCalendar("b")
    for _ in range(80):
        at, length = rng.randrange(0, 300), rng.randrange(1, 6)
        t = b.first_free(at, length)
        b.book(t, length)
        assert a.reserve(at, length) == t
    assert (a.starts, a.ends) == (b.starts, b.ends)


# ---------------------------------------------------------------------- Dst.md's RAW window

def expand(tile: TileTimes, blocks: list[tuple[int, ...]], reads: bool = True) -> list[int]:
    """One MOP whose expansion is one MVMUL per entry of ``blocks`` (the Dest blocks each
    writes); the matrix unit's start of each."""
    core = tile.core("trisc1")
    tile.push(core, (), 1)
    for b in blocks:
        tile.tensix(1, "ttmvmul", "MATH", True, 1, (frozenset(b), reads))
    tile.tensix(1, "ttmop", "", False, 1)
    return [s for unit, s, _c, _t, _m in tile.timeline.spans if unit == "MATH"]


def timed(params: TensixParams) -> TileTimes:
    from tessera_cycles.tensix_model import Timeline

    tile = TileTimes(params)
    tile.timeline = Timeline()
    return tile


def test_an_accumulation_onto_a_block_written_within_four_cycles_waits():
    # Dst.md: for the four cycles after a write the block cannot be read; MVMUL accumulates
    tile = timed(TensixParams())
    starts = expand(tile, [(0,), (0,), (0,)])
    assert starts == [1, 6, 11]                       # each waits for the one before + 5
    assert tile.threads[1].waits["dest"] == 2 * 4


def test_five_distinct_blocks_in_turn_never_wait():
    # "software needs to be looping over at least five distinct 8x16 blocks of Dst"
    tile = timed(TensixParams())
    starts = expand(tile, [(b % 5,) for b in range(15)])
    assert starts == list(range(1, 16)) and tile.threads[1].waits["dest"] == 0
    four = timed(TensixParams())
    starts = expand(four, [(b % 4,) for b in range(8)])
    assert starts == [1, 2, 3, 4, 6, 7, 8, 9]         # four blocks: the fifth read waits a cycle


def test_a_write_that_reads_nothing_does_not_wait_and_the_window_is_a_parameter():
    tile = timed(TensixParams())
    assert expand(tile, [(3,), (3,)], reads=False) == [1, 2]     # ELWADD without AddDst: a write only
    off = timed(TensixParams(dest_window=0))
    assert expand(off, [(3,), (3,)]) == [1, 2]
    wide = timed(TensixParams(dest_window=9))
    assert expand(wide, [(3, 4), (4,)]) == [1, 11]                # any block in common counts


# ------------------------------------------------------------------ SEMWAIT's latch

def semwait_then_post(post_late: bool, held: bool) -> TileTimes:
    """Thread 2 latches a SEMWAIT at its gate at 1 and then presents a PACR (held by the
    latch in the functional run when ``held``); thread 1 posts the semaphore after ten
    THCON instructions (3 cycles each) — observed before the PACR, as the functional run
    releases it only after the post."""
    tile = TileTimes(TensixParams())
    cores = {tid: tile.core(f"trisc{tid}") for tid in (1, 2)}
    tile.push(cores[2], (), 2)
    tile.push(cores[2], (), 2)
    tile.tensix(2, "ttsemwait", "SYNC", False, 1)
    for popped in range(1, 12 if post_late else 1):
        tile.push(cores[1], (), 1)
        tile.tensix(1, "ttadddmareg" if popped < 11 else "ttsempost", "THCON" if popped < 11 else "SYNC",
                    False, popped)
    tile.tensix(2, "ttpacr", "PACK", False, 2, releases=1 if held else 0)
    return tile


def test_semwait_holds_the_instruction_it_caught_until_a_cycle_after_the_post():
    # the THCONs pass thread 1's gate at 1, 4, ..., 28 (3 cycles each), the SEMPOST at 29,
    # and the semaphore changes when it ends, at 30: the PACR goes on one cycle later
    # (SEMWAIT.md's lag), not at 2 where its thread's gate was free
    tile = semwait_then_post(post_late=True, held=True)
    assert tile.sem_changed == 30
    assert tile.units["PACK"].last_end - tile.params.pack_cycles == 31
    th = tile.threads[2]
    assert th.waits["sync"] == 31 - 2 and th.sem_releases == 1
    # the SEMWAIT itself went on at once (it only latches)
    assert th.latch_at == 2


def test_semwait_holds_nothing_the_functional_run_did_not_hold():
    tile = semwait_then_post(post_late=True, held=False)
    assert tile.units["PACK"].last_end - tile.params.pack_cycles == 2
    assert tile.threads[2].waits["sync"] == 0


def test_a_semaphore_met_before_the_latch_still_blocks_one_cycle():
    # nothing posted (the semaphore was already as the wait wants it): the instruction
    # after SEMWAIT is subject to the block mask for one cycle (SEMWAIT.md)
    tile = semwait_then_post(post_late=False, held=True)
    assert tile.units["PACK"].last_end - tile.params.pack_cycles == 3
    assert tile.threads[2].waits["sync"] == 1


def test_the_release_is_charged_on_the_first_backend_instruction_after_a_mop():
    # the functional run counts the release while re-checking the MOP the thread parked
    # on; the MOP's expansion (observed before the MOP) is what was held
    tile = TileTimes(TensixParams())
    core = tile.core("trisc2")
    tile.push(core, (), 2)
    tile.tensix(2, "ttsemwait", "SYNC", False, 1)
    tile.sem_changed = 20
    tile.push(core, (), 2)
    tile.tensix(2, "ttpacr", "PACK", True, 2, releases=1)
    tile.tensix(2, "ttmop", "", False, 2, releases=1)
    assert tile.units["PACK"].last_end - tile.params.pack_cycles == 21
    assert tile.threads[2].sem_held is False


# ------------------------------------------------------------------ STALLWAIT's latch

B0, B5, B6 = 1 << 0, 1 << 5, 1 << 6


def stallwait_after_pack(latch, then: tuple[str, str, int], other_thread_packs: bool = False) -> TileTimes:
    """Thread 1 packs (PACR, 16 cycles from its gate at 1), latches a STALLWAIT and then
    presents ``then`` (mnemonic, unit, block bits); with ``other_thread_packs`` the PACR is
    thread 2's instead."""
    tile = TileTimes(TensixParams())
    core1, core2 = tile.core("trisc1"), tile.core("trisc2")
    packer = 2 if other_thread_packs else 1
    tile.push(core2 if other_thread_packs else core1, (), packer)
    tile.tensix(packer, "ttpacr", "PACK", False, 1, block=B0 | 1 << 2)
    first = 1 if not other_thread_packs else 0
    tile.push(core1, (), 1)
    tile.tensix(1, "ttstallwait", "SYNC", False, first + 1, block=0x1FF, latch=latch)
    tile.push(core1, (), 1)
    mnemonic, unit, block = then
    tile.tensix(1, mnemonic, unit, False, first + 2, block=block)
    return tile


def test_stallwait_holds_a_caught_instruction_until_its_threads_unit_finished():
    # the PACR runs 1..17 on the packer; STALLWAIT (B6, "this thread's packer") passes at
    # 2 and is met at 17; the mask goes one cycle later: the MVMUL goes at 18, not 3
    tile = stallwait_after_pack((B6, ("PACK",)), ("ttmvmul", "MATH", B6))
    assert tile.units["MATH"].last_end - tile.params.matrix_pushed_cycles == 18
    assert tile.threads[1].waits["sync"] == 18 - 3 and tile.threads[1].stall_latch is None


def test_stallwait_does_not_hold_what_its_mask_does_not_catch():
    tile = stallwait_after_pack((B6, ("PACK",)), ("ttadddmareg", "THCON", B0 | B5))
    assert tile.units["THCON"].last_end - tile.params.thcon_cycles == 3
    assert tile.threads[1].waits["sync"] == 0


def test_stallwait_waits_for_its_own_threads_instructions_only():
    # "the current thread has an instruction in the packer": thread 2's PACR does not count
    tile = stallwait_after_pack((B6, ("PACK",)), ("ttmvmul", "MATH", B6), other_thread_packs=True)
    th = tile.threads[1]
    assert th.waits["sync"] == 1                          # the one-cycle lag only
    # a condition on any thread's instructions in a unit (as the mover's and the
    # configuration unit's are, "XMOV*", "CFG*") does count them
    tile = stallwait_after_pack((B6, ("PACK*",)), ("ttmvmul", "MATH", B6), other_thread_packs=True)
    assert tile.threads[1].waits["sync"] > 10


def test_a_stallwait_whose_mask_is_unknown_waits_for_every_unit():
    tile = stallwait_after_pack(None, ("ttadddmareg", "THCON", B0 | B5))
    # the STALLWAIT itself waits for the PACR to finish at 17
    assert tile.threads[1].waits["sync"] == 17 - 2
    assert tile.units["THCON"].last_end - tile.params.thcon_cycles == 18


def test_stallwaits_conditions_name_the_units_of_each_chip():
    from tessera_cycles.tensix_model import stall_waits

    # Blackhole C4 the matrix unit, C11 the vector unit (tt-llk's math thread before SEMPOST)
    assert stall_waits("bh", 1 << 4 | 1 << 11) == ("MATH", "SFPU")
    # Wormhole B0 numbers them C7 and C14; its four packers are the model's one
    assert stall_waits("wh", 1 << 7 | 1 << 14) == ("MATH", "SFPU")
    assert stall_waits("wh", 0b111_1000) == ("PACK",)
    # the SrcA/SrcB conditions, the mover and the configuration unit; the RISC-V core's
    # requests (BH C10, WH C13) are not modelled
    assert stall_waits("bh", 1 << 7 | 1 << 9 | 1 << 10 | 1 << 12) == ("src", "XMOV*", "CFG*")
    assert stall_waits("wh", 1 << 13) == ()
