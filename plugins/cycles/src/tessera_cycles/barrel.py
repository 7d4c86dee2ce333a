"""A parameterised cycle model of rfPhoenix's fine-grained multithreaded (barrel) pipeline.

rfPhoenix issues one instruction per clock for the whole core, choosing among its threads
round robin; a thread's instruction waits on a per-thread scoreboard with no result
forwarding (spec 6).  The model is fed one retired instruction at a time
(:meth:`BarrelPipeline.retire`) and gives each an *issue cycle* from what it was (kind,
registers, data accesses, whether it redirected its thread) instead of simulating the
pipeline cycle by cycle.  The numbers are spec 6's suggested parameterised model
(issue-to-dependent-issue 5 cycles for the ALU, 12 for FP/MUL, ~8 for a load hit, ~28
for a miss; a ~5-cycle refetch bubble after a taken transfer), with the caches of spec 5.2.

Feed order and arbitration: the emulator runs rfPhoenix's threads one instruction each in
turn, so retirements arrive round robin, and each instruction is given the first free issue
cycle at or after its earliest one, in feed order.  This greedy allocation approximates the
hardware's round-robin arbitration among ready threads (spec 6); it is not a cycle-exact
arbiter.

Timing rules, for instruction *i* of thread *t* (``front = fetch + decode + regread``,
default 2 + 1 + 2 = 5, spec 6):

* ``next_t`` is the thread's own constraint.  Before its first instruction it is
  ``front + 1`` (cycle 1 is the thread's first fetch); after each instruction it is
  ``issue + 1`` (one execute buffer per thread, freed a cycle later by the pipelined units),
  plus ``branch_bubble`` when that instruction was a taken branch, jump, call or return
  (resolved in execute, the thread refetches; no prediction, spec 6).
* ``own_i = next_t + icache.access(pc, size)``: the I-cache stall of fetching *i* is paid on
  the thread's own time; only the missing thread stalls (spec 5.2).  An instruction
  straddling two lines touches both (a miss costs ``miss_penalty`` per line).
* ``earliest_i = max(own_i, ready(r) for every source and every destination r of i)``: the
  scoreboard holds an instruction until its sources *and its destination* have no pending
  write (spec 6).  Registers are per thread, keyed ``(file, index)``; a never-written
  register is ready at 0, and ``("r", 0)`` (hard-wired zero) is never pending.
* ``ready(r) = issue_j + latency_j`` for the last instruction *j* of the same thread that
  wrote r: ``alu_latency`` for kinds alu, vector, branch, csr, sys, nop, mmu and fpmove;
  ``fp_latency`` for fp, fpest and mul; ``rex_latency`` for rex; for a load (kind ``mem``
  writing a register) ``load_latency`` plus the D-cache stalls of its data accesses.  Any
  other kind is a ValueError (the glue maps rfPhoenix's ``cache`` and ``trap`` classes).
* Issue slot: one instruction a clock core-wide.  ``issue_i`` is the first cycle
  ``>= max(earliest_i, clamp_i)`` that no other instruction took.  ``clamp_i`` is 0, except
  for a thread *joining* (its first instruction, or its first after :meth:`halt`): then it
  is the *floor*, the largest ``min(next_t over the other live threads)`` seen so far.  No
  live thread can issue below the floor, so the taken cycles below it are forgotten and a
  joining thread treats them as taken.  A thread enabled late therefore starts no earlier
  than the other threads' current time.  In the first round this changes nothing unless an
  earlier thread's first instruction pushed its ``next_t`` past a free cycle (a taken
  transfer or an I-cache miss): the joiner then starts at that ``next_t`` — for a miss on
  the line it fetches too, what the hardware would do.  A halted thread (:meth:`halt`)
  leaves the floor computation, so it does not hold the floor down; a thread that stops
  retiring without being halted does.  Memory: a byte per cycle between the floor and the
  latest issue, which grows while threads drift apart (the emulator runs a thread doing
  slow work as often as one doing fast work, so their issue times diverge).
* Data accesses: each ``(address, size)`` is ``dcache.access(address, size)``.  A load's
  stalls delay its result (above); a store's (kind ``mem`` writing no register) delay
  nothing and only count in the cache's statistics.
* ``cycles() = max(issue_i + completion_i)`` over all instructions, 0 before the first;
  ``completion_i`` is the result latency above, or ``store_latency`` for a store.

Not modelled: writeback arbitration (spec 6: one result per clock, oldest first — results
here never collide); the memory pipeline's request queue, TLB translation and "TLB not
ready" bubbles (spec 5.3, 5.4); the once-per-lane recirculation of gather/scatter (each
access is timed only by its cache stall); dirty write-backs (see :mod:`tessera_cycles.cache`).

Consequence worth knowing: with a 5-cycle ALU issue-to-dependent-issue latency, four
threads each running a dependent chain issue 4 instructions every 5 cycles; five threads
hide the latency fully (spec 6 says ">= 4 ready threads" hide it).

Stall attribution, per instruction, of its wait ``issue_i - base`` where ``base`` is its
thread's previous issue + 1 (``front + 1`` for the first; raised to ``floor`` when the thread
joins, since time before it joined is no stall): the part up to ``start_i =
max(earliest_i, clamp_i)`` goes wholly to ``dependency`` when a register's ready time is
strictly the latest candidate, else to ``thread`` (bubble, I-cache); the rest, ``issue_i -
start_i``, to ``slot`` (other threads held the cycles).  Removing the smaller, overlapped
cause would not save a cycle, so it gets none.
"""

from __future__ import annotations

from typing import Any

import attrs

from tessera_cycles.cache import Cache
from tessera_cycles.params import CACHE_DOCS, boolean, check_geometry, non_negative, positive, power_of_two

#: parameter -> one line for a listing command (keys are exactly BarrelParams' fields)
PARAM_DOCS: dict[str, str] = {
    "fetch": "fetch stages (pipelined I-cache), cycles from fetch to decode",
    "decode": "decode stages",
    "regread": "register-read stages between issue selection and execute",
    "alu_latency": "issue to dependent issue for integer/vector ALU, branch, CSR and system results",
    "fp_latency": "issue to dependent issue for FP, FP estimate and multiply results",
    "load_latency": "issue to dependent issue for a load hitting the D-cache",
    "store_latency": "issue to completion of a store (it delays no other instruction)",
    "rex_latency": "issue to dependent issue for REX",
    "branch_bubble": "extra cycles before a thread's next issue after its taken branch/jump/call/return",
    **CACHE_DOCS,
}


@attrs.frozen
class BarrelParams:
    """The barrel pipeline's parameters (see :data:`PARAM_DOCS`); validated on creation.

    Defaults: the stage counts and latencies of spec 6's suggested model, the cache
    geometry of spec 5.2 (32 KB 4-way I, 64 KB 4-way D, 32-byte lines).
    """

    fetch: int = attrs.field(default=2, validator=non_negative)
    decode: int = attrs.field(default=1, validator=non_negative)
    regread: int = attrs.field(default=2, validator=non_negative)
    alu_latency: int = attrs.field(default=5, validator=positive)
    fp_latency: int = attrs.field(default=12, validator=positive)
    load_latency: int = attrs.field(default=8, validator=positive)
    store_latency: int = attrs.field(default=5, validator=positive)
    rex_latency: int = attrs.field(default=4, validator=positive)
    branch_bubble: int = attrs.field(default=5, validator=non_negative)
    icache_size: int = attrs.field(default=32768, validator=power_of_two)
    icache_ways: int = attrs.field(default=4, validator=power_of_two)
    icache_line: int = attrs.field(default=32, validator=power_of_two)
    dcache_size: int = attrs.field(default=65536, validator=power_of_two)
    dcache_ways: int = attrs.field(default=4, validator=power_of_two)
    dcache_line: int = attrs.field(default=32, validator=power_of_two)
    miss_penalty: int = attrs.field(default=20, validator=non_negative)
    caches: bool = attrs.field(default=True, validator=boolean)

    def __attrs_post_init__(self) -> None:
        check_geometry(self)

    @staticmethod
    def fields() -> list[tuple[str, object, str]]:
        """(name, default, one-line doc) of every parameter, in declaration order."""
        return [(field.name, field.default, PARAM_DOCS[field.name]) for field in attrs.fields(BarrelParams)]


#: latency classes of the instruction kinds (spec 6's three execute pipelines, plus REX)
_ALU, _FP, _MEM, _REX = range(4)
_KIND_CLASS: dict[str, int] = {
    "alu": _ALU, "vector": _ALU, "branch": _ALU, "csr": _ALU, "sys": _ALU, "nop": _ALU, "mmu": _ALU,
    "fpmove": _ALU, "fp": _FP, "fpest": _FP, "mul": _FP, "mem": _MEM, "rex": _REX,
}
_ZERO = ("r", 0)
#: the slot window is cut below the floor when it outgrows max(this, 2 * its length after the last cut)
_PRUNE_MIN = 4096


class _Thread:
    """One thread's timing state (plain slots: :meth:`BarrelPipeline.retire` reads them all)."""

    __slots__ = ("count", "dependency", "end", "last", "next", "ready", "slot", "thread")

    def __init__(self, front: int) -> None:
        self.next = front + 1                 # next_t: its own earliest issue (before the fetch stall)
        self.last = front                     # previous issue (attribution base - 1)
        self.ready: dict[tuple[str, int], int] = {}   # register -> cycle its pending write completes
        self.end = 0                          # max(issue + completion) of its instructions
        self.count = 0
        self.dependency = 0                   # issue stall cycles by cause (module docstring)
        self.thread = 0
        self.slot = 0


class BarrelPipeline:
    """Cycle estimate of rfPhoenix's barrel pipeline fed with retired instructions.

    See the module docstring for the exact timing and attribution rules.  :meth:`retire`
    is called once per instruction, so it keeps its state in plain attributes and slots,
    and counts an access inside a cache's most recently touched line as a hit itself
    instead of calling :meth:`Cache.access` (see ``Cache.mru_lo``).
    """

    def __init__(self, params: BarrelParams) -> None:
        self.params = params
        self._front = params.fetch + params.decode + params.regread
        self._icache: Cache | None = None
        self._dcache: Cache | None = None
        if params.caches:
            self._icache = Cache("icache", params.icache_size, params.icache_ways, params.icache_line,
                                 params.miss_penalty)
            self._dcache = Cache("dcache", params.dcache_size, params.dcache_ways, params.dcache_line,
                                 params.miss_penalty)
        by_class = {_ALU: params.alu_latency, _FP: params.fp_latency, _MEM: params.load_latency,
                    _REX: params.rex_latency}
        # kind -> (result latency, is a memory operation)
        self._kinds: dict[str, tuple[int, bool]] = {
            kind: (by_class[cls], cls == _MEM) for kind, cls in _KIND_CLASS.items()}
        self._store_latency = params.store_latency
        self._bubble = params.branch_bubble
        self._threads: dict[int, _Thread] = {}     # every thread seen
        self._live: dict[int, _Thread] = {}        # those not halted since their last retirement
        # the issue slots: _slots[c - _base] is 1 when cycle c is taken, from _base (<= the
        # floor) to the latest issue.  Threads drift apart (module docstring), and a byte a
        # cycle stays far smaller than a set of the taken cycles
        self._slots = bytearray()
        self._base = 0
        self._floor = 0                            # no live thread can issue below it (never decreases)
        self._prune_at = _PRUNE_MIN
        self._count = 0
        self._end = 0
        #: the issue cycle of the instruction retired last (for tests and tracing)
        self.last_issue = 0

    def retire(self, thread: int, pc: int, size: int, kind: str, reads: tuple[tuple[str, int], ...],
               writes: tuple[tuple[str, int], ...], accesses: tuple[tuple[int, int], ...],
               transfer: bool) -> None:
        """Account for one retired instruction of *thread* (rules: module docstring).

        *size* is the instruction's length in bytes (fetched from *pc*), *reads*/*writes*
        the ``(file, index)`` registers it reads and writes, *accesses* the ``(address,
        size)`` of each data access; *transfer* is true when it redirected its thread's
        fetch (a taken branch, jump, call or return).
        """
        try:
            latency, is_mem = self._kinds[kind]
        except KeyError:
            raise ValueError(f"unknown instruction kind {kind!r}; expected one of: "
                             f"{', '.join(_KIND_CLASS)}") from None
        state = self._live.get(thread)
        clamp = 0
        if state is None:
            state = self._join(thread)
            clamp = self._floor
        icache = self._icache
        own = state.next
        if icache is not None:
            if icache.mru_lo <= pc and pc + size <= icache.mru_end:
                icache.accesses += 1              # inside the line fetched last: a hit (see Cache)
                icache.hits += 1
            else:
                own += icache.access(pc, size)
        earliest = own
        ready = state.ready
        for register in reads:
            at = ready.get(register, 0)
            if at > earliest:
                earliest = at
        for register in writes:
            at = ready.get(register, 0)
            if at > earliest:
                earliest = at
        start = earliest if earliest > clamp else clamp
        slots = self._slots
        index = start - self._base                # >= 0: start >= the floor >= _base
        end = len(slots)
        while index < end and slots[index]:
            index += 1
        if index < end:
            slots[index] = 1
        else:
            if index > end:
                slots.extend(bytes(index - end))
            slots.append(1)
        issue = self._base + index
        waited = start - state.last - 1
        if waited > 0:
            if earliest > own:
                state.dependency += waited
            else:
                state.thread += waited
        state.slot += issue - start

        if is_mem or accesses:
            latency = self._memory(latency, is_mem, writes, accesses)
        done = issue + latency
        for register in writes:
            if register != _ZERO:
                ready[register] = done
        if done > state.end:
            state.end = done
            if done > self._end:
                self._end = done
        state.last = issue
        state.next = issue + 1 + self._bubble if transfer else issue + 1
        state.count += 1
        self._count += 1
        self.last_issue = issue
        if len(slots) > self._prune_at:
            self._prune()

    def _memory(self, latency: int, is_mem: bool, writes: tuple[tuple[str, int], ...],
                accesses: tuple[tuple[int, int], ...]) -> int:
        """The completion latency of a memory instruction (or of another kind with data
        accesses, whose D-cache stalls only count); touches the D-cache for each access."""
        dstall = 0
        dcache = self._dcache
        if dcache is not None:
            for address, nbytes in accesses:
                if dcache.mru_lo <= address and address + nbytes <= dcache.mru_end:
                    dcache.accesses += 1          # inside the line touched last: a hit (see Cache)
                    dcache.hits += 1
                else:
                    dstall += dcache.access(address, nbytes)
        if not is_mem:
            return latency
        if writes:
            return latency + dstall               # a load's miss delays its result
        return self._store_latency                # a store's delays nothing

    def _join(self, thread: int) -> _Thread:
        """Make *thread* live (first instruction, or first after :meth:`halt`); raise the floor.

        The caller clamps the joining instruction's issue to the floor; the attribution
        base rises to it too (time before the thread joined is not an issue stall).
        """
        live = self._live
        if live:
            low = min(other.next for other in live.values())
            if low > self._floor:
                self._floor = low
        state = self._threads.get(thread)
        if state is None:
            state = self._threads[thread] = _Thread(self._front)
        if state.last < self._floor - 1:
            state.last = self._floor - 1
        live[thread] = state
        return state

    def _prune(self) -> None:
        """Forget the slots below the floor (no live thread can issue there)."""
        floor = min(state.next for state in self._live.values())
        if floor > self._floor:
            self._floor = floor
        cut = self._floor - self._base
        if cut > 0:
            del self._slots[:cut]
            self._base = self._floor
        self._prune_at = max(_PRUNE_MIN, 2 * len(self._slots))

    def halt(self, thread: int) -> None:
        """*thread* stopped: drop it from the floor (a later retirement makes it join again)."""
        live = self._live
        state = live.get(thread)
        if state is None:
            return
        low = min(other.next for other in live.values())
        if low > self._floor:
            self._floor = low
        del live[thread]

    def cycles(self) -> int:
        """Cycles until every retired instruction completed; 0 before the first."""
        return self._end

    def report(self) -> dict[str, Any]:
        """Instructions, cycles, IPC, per-thread counts, issue stalls and CPI, cache statistics.

        A thread's ``cpi`` is the cycle its own last instruction completed divided by its
        instruction count; its ``issue_stalls`` are disjoint (module docstring).
        """
        cycles = self._end
        count = self._count
        threads = {
            tid: {"instructions": state.count,
                  "issue_stalls": {"dependency": state.dependency, "thread": state.thread, "slot": state.slot},
                  "cpi": state.end / state.count if state.count else 0.0}
            for tid, state in sorted(self._threads.items())}
        return {
            "instructions": count,
            "cycles": cycles,
            "ipc": count / cycles if cycles else 0.0,
            "threads": threads,
            "icache": self._icache.stats() if self._icache is not None else None,
            "dcache": self._dcache.stats() if self._dcache is not None else None,
        }
