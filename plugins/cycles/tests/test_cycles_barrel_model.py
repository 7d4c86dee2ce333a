"""The rfPhoenix barrel pipeline model: hand-counted issue times, attribution, a reference.

Every expected number is worked out by hand in the comment beside it, from the rules in
tessera_cycles.barrel's docstring (defaults: front = 2 + 1 + 2 = 5, so a thread's first
instruction issues at 6; ALU 5, FP/MUL 12, load 8, store 5; branch bubble 5; a miss 20):
next_t = previous issue + 1 (+ bubble after a taken transfer); earliest = max(next_t + I-cache
stall, ready of every source and destination); issue = the first free cycle >= earliest
(>= the floor for a joining thread); cycles = max(issue + latency).
"""

from __future__ import annotations

import random

import attrs
import pytest

from tessera_cycles import barrel
from tessera_cycles.barrel import PARAM_DOCS, BarrelParams, BarrelPipeline
from tessera_cycles.cache import Cache

PERFECT = BarrelParams(caches=False)


def r(n):
    return ("r", n)


def feed(pipeline, thread, kind="alu", reads=(), writes=(), accesses=(), transfer=False, pc=0x1000, size=4):
    """Retire one instruction; return the issue cycle the model gave it."""
    pipeline.retire(thread, pc, size, kind, tuple(reads), tuple(writes), tuple(accesses), transfer)
    return pipeline.last_issue


def stalls(pipeline, thread):
    waits = pipeline.report()["threads"][thread]["issue_stalls"]
    return waits["dependency"], waits["thread"], waits["slot"]


# -- one thread ------------------------------------------------------------------------

def test_nothing_retired_is_zero_cycles():
    pipeline = BarrelPipeline(PERFECT)
    assert pipeline.cycles() == 0
    report = pipeline.report()
    assert (report["instructions"], report["cycles"], report["ipc"], report["threads"]) == (0, 0, 0.0, {})
    assert report["icache"] is None and report["dcache"] is None


@pytest.mark.parametrize("n", [1, 2, 10])
def test_independent_alu_ops_issue_one_a_cycle(n):
    pipeline = BarrelPipeline(PERFECT)
    issues = [feed(pipeline, 0, writes=(r(1 + i % 8),), pc=0x1000 + 4 * i) for i in range(n)]
    assert issues == list(range(6, 6 + n))             # first at front + 1 = 6, then one a cycle
    assert pipeline.cycles() == 6 + (n - 1) + 5         # last issue + ALU latency
    report = pipeline.report()
    assert report["instructions"] == n and report["ipc"] == n / (6 + (n - 1) + 5)
    assert stalls(pipeline, 0) == (0, 0, 0)
    assert report["threads"][0]["cpi"] == (6 + (n - 1) + 5) / n


def test_a_dependent_alu_chain_waits_the_full_latency():
    n = 6
    pipeline = BarrelPipeline(PERFECT)
    issues = [feed(pipeline, 0, reads=(r(1),), writes=(r(1),)) for _ in range(n)]
    assert issues == [6, 11, 16, 21, 26, 31]            # no forwarding: + 5 each
    assert pipeline.cycles() == 6 + 5 * (n - 1) + 5     # 36
    assert stalls(pipeline, 0) == (4 * (n - 1), 0, 0)   # each waits 5 - 1 = 4 beyond its turn


@pytest.mark.parametrize("kind", ["fp", "fpest", "mul"])
def test_fp_and_multiply_chains_wait_12(kind):
    pipeline = BarrelPipeline(PERFECT)
    issues = [feed(pipeline, 0, kind, reads=(r(2),), writes=(r(2),)) for _ in range(3)]
    assert issues == [6, 18, 30]                        # + 12 each
    assert pipeline.cycles() == 30 + 12                 # 42


@pytest.mark.parametrize("kind", ["alu", "vector", "branch", "csr", "sys", "nop", "mmu", "fpmove"])
def test_single_cycle_kinds_have_the_alu_latency(kind):
    pipeline = BarrelPipeline(PERFECT)
    feed(pipeline, 0, kind, writes=(r(3),))
    assert feed(pipeline, 0, reads=(r(3),)) == 6 + 5    # 11
    assert pipeline.cycles() == 11 + 5


def test_rex_has_its_own_latency():
    pipeline = BarrelPipeline(PERFECT)
    feed(pipeline, 0, "rex", writes=(r(3),))
    assert feed(pipeline, 0, reads=(r(3),)) == 6 + 4    # 10
    assert pipeline.cycles() == 10 + 5


def test_a_load_hit_feeds_its_dependent_after_8():
    pipeline = BarrelPipeline(PERFECT)
    assert feed(pipeline, 0, "mem", reads=(r(2),), writes=(r(1),), accesses=((0x8000, 4),)) == 6
    assert feed(pipeline, 0, reads=(r(1),), writes=(r(3),)) == 14   # 6 + 8
    assert pipeline.cycles() == 14 + 5                               # 19
    assert stalls(pipeline, 0) == (14 - 7, 0, 0)


def test_a_load_miss_feeds_its_dependent_after_28_and_a_hit_after_8():
    pipeline = BarrelPipeline(BarrelParams())         # caches on, miss_penalty 20
    # cold I-cache: the first fetch misses, 6 + 20 = 26; the D-cache misses: ready 26 + 8 + 20 = 54
    assert feed(pipeline, 0, "mem", reads=(r(2),), writes=(r(1),), accesses=((0x8000, 4),), pc=0x1000) == 26
    assert feed(pipeline, 0, reads=(r(1),), writes=(r(3),), pc=0x1004) == 54      # 26 + 28
    # the same D-cache line again: a hit, ready 55 + 8 = 63
    assert feed(pipeline, 0, "mem", reads=(r(2),), writes=(r(4),), accesses=((0x8004, 4),), pc=0x1008) == 55
    assert feed(pipeline, 0, reads=(r(4),), pc=0x100C) == 63
    assert pipeline.cycles() == 63 + 5                  # 68
    # thread: the I-cache miss 26 - 6 = 20; dependency: 54 - 27 = 27 and 63 - 56 = 7
    assert stalls(pipeline, 0) == (27 + 7, 20, 0)
    report = pipeline.report()
    assert (report["dcache"]["misses"], report["dcache"]["hits"]) == (1, 1)
    assert (report["icache"]["misses"], report["icache"]["hits"]) == (1, 3)


def test_a_store_miss_delays_nothing_but_counts():
    pipeline = BarrelPipeline(BarrelParams())
    assert feed(pipeline, 0, "mem", reads=(r(1), r(2)), accesses=((0x8000, 4),), pc=0x1000) == 26  # I-miss
    assert feed(pipeline, 0, reads=(r(1),), writes=(r(1),), pc=0x1004) == 27
    assert pipeline.cycles() == max(26 + 5, 27 + 5)     # store_latency 5, no D-cache stall: 32
    assert pipeline.report()["dcache"]["misses"] == 1


def test_a_store_writing_nothing_completes_after_store_latency():
    pipeline = BarrelPipeline(attrs.evolve(PERFECT, store_latency=9))
    feed(pipeline, 0, "mem", reads=(r(1),), accesses=((0x8000, 4),))
    assert pipeline.cycles() == 6 + 9                   # 15


def test_the_destination_must_have_no_pending_write():
    pipeline = BarrelPipeline(PERFECT)
    feed(pipeline, 0, "fp", writes=(r(5),))             # issue 6, r5 pending until 18
    assert feed(pipeline, 0, reads=(r(1),), writes=(r(5),)) == 18   # WAW: waits for r5
    assert pipeline.cycles() == 18 + 5                  # 23
    assert stalls(pipeline, 0) == (18 - 7, 0, 0)


def test_r0_the_other_file_and_other_threads_never_block():
    pipeline = BarrelPipeline(PERFECT)
    feed(pipeline, 0, "fp", writes=(r(0), r(5)))        # issue 6; r0 is hard-wired: never pending
    assert feed(pipeline, 0, reads=(r(0),), writes=(r(0),)) == 7
    assert feed(pipeline, 0, writes=(("v", 5),)) == 8   # v5 is not r5
    assert feed(pipeline, 1, reads=(r(5),), writes=(r(5),)) == 9    # registers are per thread
    assert feed(pipeline, 0, reads=(r(5),)) == 18       # but thread 0's own r5 is: 6 + 12


# -- taken transfers and the I-cache ------------------------------------------------------

def test_a_taken_transfer_costs_its_thread_the_bubble():
    pipeline = BarrelPipeline(PERFECT)
    assert feed(pipeline, 0, "branch", transfer=True) == 6
    assert feed(pipeline, 0, pc=0x2000) == 6 + 1 + 5    # 12
    assert feed(pipeline, 0, "branch", pc=0x2004) == 13  # not taken: no bubble
    assert feed(pipeline, 0, pc=0x2008) == 14
    assert stalls(pipeline, 0) == (0, 5, 0)
    assert pipeline.cycles() == 14 + 5


def test_another_thread_fills_the_bubble():
    pipeline = BarrelPipeline(PERFECT)
    issues = [feed(pipeline, 0),                        # A0 6
              feed(pipeline, 1),                        # B0 7 (joins at the floor, t0's next 7)
              feed(pipeline, 0, "branch", transfer=True),  # A1: 7 taken -> 8; next 8 + 1 + 5 = 14
              feed(pipeline, 1)]                        # B1: 8 taken -> 9
    for _ in range(3):
        issues += [feed(pipeline, 0, pc=0x2000), feed(pipeline, 1)]
    # A2..A4 at 14, 15, 16; B2..B4 fill the bubble at 10, 11, 12
    assert issues == [6, 7, 8, 9, 14, 10, 15, 11, 16, 12]
    assert pipeline.cycles() == 16 + 5                  # 21
    assert stalls(pipeline, 0) == (0, 5, 1)             # bubble 14 - 9; A1 lost cycle 7 to B0
    assert stalls(pipeline, 1) == (0, 0, 1)             # B1 lost cycle 8 to A1
    assert pipeline.report()["ipc"] == 10 / 21


def test_an_instruction_straddling_a_line_fetches_both():
    pipeline = BarrelPipeline(BarrelParams())           # 32-byte I-cache lines
    # 6-byte instructions at 0x1000 + 6k: k = 5 covers 0x101e..0x1023, lines 0x1000 and 0x1020
    issues = [feed(pipeline, 0, pc=0x1000 + 6 * k, size=6) for k in range(7)]
    # k0 misses: 6 + 20 = 26; k1..k4 hit; k5 misses its second line: 31 + 20 = 51; k6 hits
    assert issues == [26, 27, 28, 29, 30, 51, 52]
    icache = pipeline.report()["icache"]
    assert (icache["accesses"], icache["misses"], icache["hits"]) == (7, 2, 6)   # k5: 1 hit + 1 miss
    assert stalls(pipeline, 0) == (0, 40, 0)            # 20 + 20
    assert pipeline.cycles() == 52 + 5


def test_an_i_cache_miss_stalls_only_its_thread():
    pipeline = BarrelPipeline(BarrelParams())
    assert feed(pipeline, 0, pc=0x1000) == 26           # cold: 6 + 20
    assert feed(pipeline, 1, pc=0x1004) == 27           # joins at the floor 27; same line: a hit
    assert feed(pipeline, 0, pc=0x1008) == 28
    assert feed(pipeline, 1, pc=0x4000) == 28 + 20      # its own miss: next 28 + 20 = 48
    assert feed(pipeline, 0, pc=0x100C) == 29           # thread 0 goes on
    assert stalls(pipeline, 1) == (0, 20, 0)


# -- several threads --------------------------------------------------------------------

def test_four_threads_of_independent_work_issue_one_a_cycle():
    n = 5
    pipeline = BarrelPipeline(PERFECT)
    # each thread's k-th writes r(1 + k): no register is written twice, nothing is pending
    issues = [feed(pipeline, t, writes=(r(1 + k),)) for k in range(n) for t in range(4)]
    assert issues == list(range(6, 6 + 4 * n))          # the k-th fed issues at 6 + k
    assert pipeline.cycles() == 6 + (4 * n - 1) + 5     # 30
    # thread t's later instructions each wait 3 slots (the other three threads); round 1:
    # t1 joins at the floor 7 (t0's next) and takes it, t2 and t3 join at 7 too and find
    # 7 (and 8) taken: 1 and 2 slot cycles
    assert [stalls(pipeline, t) for t in range(4)] == [(0, 0, 3 * (n - 1)), (0, 0, 3 * (n - 1)),
                                                        (0, 0, 1 + 3 * (n - 1)), (0, 0, 2 + 3 * (n - 1))]


def test_four_dependent_chains_lose_one_cycle_in_five():
    n = 6
    pipeline = BarrelPipeline(PERFECT)
    issues = {t: [] for t in range(4)}
    for _ in range(n):
        for t in range(4):
            issues[t].append(feed(pipeline, t, reads=(r(1),), writes=(r(1),)))
    # round 1: 6, 7, 8, 9; each thread's next is ready 5 later, its turn comes after 4:
    # thread t's k-th issues at 6 + t + 5k, and cycle 10, 15, ... stays empty
    for t in range(4):
        assert issues[t] == [6 + t + 5 * k for k in range(n)]
    assert pipeline.cycles() == 6 + 3 + 5 * (n - 1) + 5  # 39
    # dependency: 5 - 1 = 4 per later instruction.  Slot, round 1: t1 joins at floor 7 (t0's
    # next) and issues there; t2 and t3 join at floor 7 too and find 7 (and 8) taken
    assert [stalls(pipeline, t) for t in range(4)] == [(4 * (n - 1), 0, s) for s in (0, 0, 1, 2)]
    assert pipeline.report()["ipc"] == 4 * n / 39


def test_five_dependent_chains_hide_the_alu_latency():
    n = 6
    pipeline = BarrelPipeline(PERFECT)
    issues = [feed(pipeline, t, reads=(r(1),), writes=(r(1),)) for _ in range(n) for t in range(5)]
    assert issues == list(range(6, 6 + 5 * n))          # thread t's k-th: 6 + t + 5k, one a cycle
    assert pipeline.cycles() == 6 + 5 * n - 1 + 5       # 40


def test_coinciding_threads_take_turns_and_the_slot_is_charged():
    pipeline = BarrelPipeline(attrs.evolve(PERFECT, branch_bubble=3))
    assert feed(pipeline, 0, writes=(r(1),)) == 6       # r1 ready 11
    assert feed(pipeline, 1, "branch", transfer=True) == 7   # t1's next: 7 + 1 + 3 = 11
    assert feed(pipeline, 0, reads=(r(1),)) == 11       # dependency: 11 - 7 = 4
    assert feed(pipeline, 1) == 12                      # also 11, but cycle 11 is taken
    assert stalls(pipeline, 0) == (4, 0, 0)
    assert stalls(pipeline, 1) == (0, 3, 1)             # bubble 11 - 8, then the slot
    assert pipeline.cycles() == 12 + 5                  # 17


def test_a_thread_joining_late_starts_at_the_floor():
    pipeline = BarrelPipeline(PERFECT)
    for i in range(20):
        feed(pipeline, 0, pc=0x1000 + 4 * i)            # 6 .. 25; thread 0's next is 26
    assert feed(pipeline, 1) == 26                      # not 6: cycles below the floor are forgotten
    assert stalls(pipeline, 1) == (0, 0, 0)             # time before joining is no stall
    assert feed(pipeline, 0) == 27


def test_a_first_round_transfer_raises_the_floor_for_threads_joining_after_it():
    pipeline = BarrelPipeline(PERFECT)
    assert feed(pipeline, 0, "branch", transfer=True) == 6   # thread 0's next: 12
    assert feed(pipeline, 1) == 12                      # joins at the floor 12 (documented approximation)


def test_a_halted_thread_does_not_hold_the_floor_and_can_rejoin():
    pipeline = BarrelPipeline(PERFECT)
    feed(pipeline, 0)                                   # 6
    feed(pipeline, 1)                                   # 7
    pipeline.halt(1)
    pipeline.halt(1)                                    # twice: no effect
    pipeline.halt(7)                                    # never seen: no effect
    for i in range(3 * barrel._PRUNE_MIN):
        feed(pipeline, 0, pc=0x1000 + 4 * (i % 64))
    last = pipeline.last_issue
    assert last == 7 + 3 * barrel._PRUNE_MIN            # 8, 9, ...: one a cycle
    assert len(pipeline._slots) <= 2 * barrel._PRUNE_MIN + 1   # cut below thread 0's next
    assert feed(pipeline, 1) == last + 1                # rejoins at the floor, thread 0's next
    assert stalls(pipeline, 1) == (0, 0, 0)


def test_when_every_thread_halted_a_joining_thread_starts_after_the_last_of_them():
    pipeline = BarrelPipeline(PERFECT)
    assert [feed(pipeline, 0) for _ in range(3)] == [6, 7, 8]
    pipeline.halt(0)                                    # the floor keeps thread 0's next, 9
    assert feed(pipeline, 1) == 9
    assert stalls(pipeline, 1) == (0, 0, 0)             # base 9: joining is no stall
    assert feed(pipeline, 0) == 10                      # thread 0 rejoins at the floor 10


def test_a_silent_thread_that_is_not_halted_holds_the_floor_down():
    pipeline = BarrelPipeline(PERFECT)
    feed(pipeline, 0)                                   # 6
    feed(pipeline, 1)                                   # 7; thread 1's next stays 8
    for i in range(3 * barrel._PRUNE_MIN):
        feed(pipeline, 0, pc=0x1000 + 4 * (i % 64))     # 8, 9, ...
    last = pipeline.last_issue
    assert last == 7 + 3 * barrel._PRUNE_MIN
    assert len(pipeline._slots) >= 3 * barrel._PRUNE_MIN    # only 0..7 lie below the floor 8
    assert feed(pipeline, 1) == last + 1                # from 8, every cycle up to last is taken


def test_unknown_kind_is_refused():
    pipeline = BarrelPipeline(PERFECT)
    with pytest.raises(ValueError, match="unknown instruction kind 'load'"):
        feed(pipeline, 0, "load")


# -- parameters -------------------------------------------------------------------------

def test_fields_list_every_parameter_with_its_default_and_doc():
    fields = BarrelParams.fields()
    assert [name for name, _d, _t in fields] == [f.name for f in attrs.fields(BarrelParams)] == list(PARAM_DOCS)
    assert dict((name, default) for name, default, _t in fields) == {
        "fetch": 2, "decode": 1, "regread": 2, "alu_latency": 5, "fp_latency": 12, "load_latency": 8,
        "store_latency": 5, "rex_latency": 4, "branch_bubble": 5, "icache_size": 32768, "icache_ways": 4,
        "icache_line": 32, "dcache_size": 65536, "dcache_ways": 4, "dcache_line": 32, "miss_penalty": 20,
        "caches": True}
    assert all(text and "\n" not in text for _n, _d, text in fields)


@pytest.mark.parametrize(("name", "value"), [
    ("fetch", -1), ("decode", 1.5), ("regread", None), ("alu_latency", 0), ("fp_latency", True),
    ("load_latency", -3), ("store_latency", 0), ("rex_latency", "4"), ("branch_bubble", -1),
    ("icache_size", 1000), ("icache_ways", 3), ("icache_line", 0), ("dcache_size", -64), ("dcache_ways", 6),
    ("dcache_line", 48), ("miss_penalty", -1), ("caches", 1), ("icache_size", 64), ("dcache_size", 32),
])
def test_bad_parameters_are_one_line_errors_naming_the_parameter(name, value):
    with pytest.raises(ValueError) as info:
        BarrelParams(**{name: value})
    message = str(info.value)
    assert message.startswith(name) and "\n" not in message


def test_other_front_ends_move_the_first_issue():
    pipeline = BarrelPipeline(attrs.evolve(PERFECT, fetch=3, decode=2, regread=0))
    assert feed(pipeline, 0) == 3 + 2 + 0 + 1           # 6
    pipeline = BarrelPipeline(attrs.evolve(PERFECT, fetch=0, decode=0, regread=0))
    assert feed(pipeline, 0) == 1


# -- a slow reference written straight from the rules ----------------------------------

class Reference:
    """The module docstring's rules, literally: every taken cycle kept, the floor updated
    after every event, Cache.access called for every fetch and data access."""

    ALU = ("alu", "vector", "branch", "csr", "sys", "nop", "mmu", "fpmove")

    def __init__(self, p):
        self.p = p
        self.front = p.fetch + p.decode + p.regread
        self.icache = Cache("icache", p.icache_size, p.icache_ways, p.icache_line, p.miss_penalty) if p.caches else None
        self.dcache = Cache("dcache", p.dcache_size, p.dcache_ways, p.dcache_line, p.miss_penalty) if p.caches else None
        self.next, self.last, self.ready, self.live = {}, {}, {}, set()
        self.floor = 0
        self.taken = set()
        self.issues = []
        self.completions = []
        self.waits = {}

    def update_floor(self):
        if self.live:
            self.floor = max(self.floor, min(self.next[t] for t in self.live))

    def latency(self, kind, writes, dstall):
        p = self.p
        if kind in self.ALU:
            return p.alu_latency
        if kind in ("fp", "fpest", "mul"):
            return p.fp_latency
        if kind == "rex":
            return p.rex_latency
        assert kind == "mem"
        return p.load_latency + dstall if writes else p.store_latency

    def retire(self, thread, pc, size, kind, reads, writes, accesses, transfer):
        joining = thread not in self.live
        if joining:
            self.next.setdefault(thread, self.front + 1)
            self.last.setdefault(thread, self.front)
            self.ready.setdefault(thread, {})
            self.waits.setdefault(thread, [0, 0, 0])
            self.last[thread] = max(self.last[thread], self.floor - 1)
        own = self.next[thread] + (self.icache.access(pc, size) if self.icache else 0)
        registers = [self.ready[thread].get(reg, 0) for reg in reads + writes]
        earliest = max([own, *registers])
        start = max(earliest, self.floor) if joining else earliest
        issue = start
        while issue in self.taken:
            issue += 1
        self.taken.add(issue)
        base = self.last[thread] + 1
        if start > base:
            self.waits[thread][0 if earliest > own else 1] += start - base
        self.waits[thread][2] += issue - start
        dstall = sum(self.dcache.access(a, n) for a, n in accesses) if self.dcache else 0
        done = issue + self.latency(kind, writes, dstall)
        for reg in writes:
            if reg != ("r", 0):
                self.ready[thread][reg] = done
        self.last[thread] = issue
        self.next[thread] = issue + 1 + (self.p.branch_bubble if transfer else 0)
        self.live.add(thread)
        self.issues.append(issue)
        self.completions.append(done)
        self.update_floor()

    def halt(self, thread):
        if thread in self.live:
            self.update_floor()
            self.live.remove(thread)

    def cycles(self):
        return max(self.completions, default=0)


KINDS = ("alu", "vector", "branch", "csr", "sys", "nop", "mmu", "fpmove", "fp", "fpest", "mul", "mem", "mem",
         "rex")
REGISTERS = [("r", n) for n in range(8)] + [("v", n) for n in range(3)]


def random_run(seed, params, steps=1000):
    """Feed the same random 4-thread mix to the model and the reference; return both and the front."""
    rng = random.Random(seed)
    model, ref = BarrelPipeline(params), Reference(params)
    pcs = {t: 0x1000 + 0x300 * t for t in range(4)}
    halted = set()
    stopped = False
    fed = 0
    step = 0
    while fed < steps:
        thread = step % 4
        step += 1
        if thread == 2 and fed < 100:                   # thread 2 is enabled late
            continue
        if thread == 3 and 400 <= fed < 700:            # thread 3 is halted a while, then rejoins
            if thread not in halted:
                model.halt(thread)
                ref.halt(thread)
                halted.add(thread)
            continue
        halted.discard(thread)
        if fed == 850 and not stopped:                  # every thread stops once, then they rejoin
            stopped = True
            for t in range(4):
                model.halt(t)
                ref.halt(t)
        if rng.random() < 0.1:                          # now and then a thread misses its turn
            continue
        kind = rng.choice(KINDS)
        reads = tuple(rng.sample(REGISTERS, rng.randint(0, 3)))
        writes = tuple(rng.sample(REGISTERS, rng.randint(0, 2 if kind != "mem" else 1)))
        accesses = ()
        if kind == "mem":
            accesses = tuple((rng.choice((0x8000, 0x9000, 0xA000)) + rng.randrange(0, 0x400),
                              rng.choice((1, 2, 4, 16))) for _ in range(rng.choice((1, 1, 1, 2))))
        elif rng.random() < 0.02:
            accesses = ((0x8000 + rng.randrange(0x100), 4),)    # a non-memory kind's access: counted only
        transfer = kind == "branch" and rng.random() < 0.6 or rng.random() < 0.03
        size = rng.choice((4, 4, 4, 5, 6, 8))
        pc = pcs[thread]
        model.retire(thread, pc, size, kind, reads, writes, accesses, transfer)
        ref.retire(thread, pc, size, kind, reads, writes, accesses, transfer)
        assert model.last_issue == ref.issues[-1], f"instruction {fed} (seed {seed})"
        pcs[thread] = 0x1000 + rng.randrange(0, 0x1000) if transfer else pc + size
        fed += 1
    return model, ref


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("prune_min", [8, barrel._PRUNE_MIN])
@pytest.mark.parametrize("params", [
    PERFECT,
    BarrelParams(icache_size=256, icache_ways=2, icache_line=16, dcache_size=512, dcache_ways=2, dcache_line=32),
    BarrelParams(branch_bubble=0, alu_latency=1, fp_latency=3, load_latency=2, miss_penalty=7,
                 icache_size=128, icache_ways=1, icache_line=32, dcache_size=256, dcache_ways=4, dcache_line=16),
], ids=["perfect", "small-caches", "short-latencies"])
def test_random_mixes_agree_with_the_reference(seed, prune_min, params, monkeypatch):
    monkeypatch.setattr(barrel, "_PRUNE_MIN", prune_min)
    model, ref = random_run(seed, params)
    front = params.fetch + params.decode + params.regread
    assert len(set(ref.issues)) == len(ref.issues) == 1000     # one issue a cycle core-wide
    assert model.cycles() == ref.cycles() >= 1000 + front
    report = model.report()
    assert report["instructions"] == 1000 and report["cycles"] == ref.cycles()
    for t, waits in ref.waits.items():
        got = report["threads"][t]["issue_stalls"]
        assert (got["dependency"], got["thread"], got["slot"]) == tuple(waits), f"thread {t}"
    assert sum(th["instructions"] for th in report["threads"].values()) == 1000
    if params.caches:
        assert report["icache"] == ref.icache.stats() and report["dcache"] == ref.dcache.stats()
    if prune_min == 8:
        assert len(model._slots) < ref.cycles() // 2    # the window forgot old cycles
