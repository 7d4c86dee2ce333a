"""The Tensix tile's timing: baby RISC-V cores, instruction FIFOs, the threads' front ends
and the backend units they share — one time base for all of them.

The functional run decides *what* happens (which value a poll reads, which instruction
the wait gate lets through); this model decides *when*, from what each agent retires
(``tessera_execute_observe``), in whatever order the scheduler ran them.  Every time is a
timestamp in one clock of the tile, so the model does not depend on how the run was
sliced:

* **A core** (RISCV B, T0..T2) issues one instruction a cycle in order, an instruction
  waiting for the registers it reads (a scoreboard): a multiply's result is ready 2
  cycles after it issues, a load's from L1 after 8 and from the core's local RAM after
  2, a divide holds the core 33 cycles; stores to L1 go out one per ``l1_store_period``
  cycles, except a store to the word just stored (it merges); a branch costs nothing
  more than its slot.  (Blackhole silicon: riscvbench, docs/cycles.md "Calibration".)
* **L1's access ports and banks** are shared by the cores (:class:`L1Ports`): a core's
  L1 load takes its access port and the row's bank for one cycle, a store that does not
  merge (a narrow write: read-modify-write) blocks both for ``l1_store_period`` cycles;
  RISCV T1 and T2 sit behind one port's mux, B, NC and T0 behind another's
  (WormholeB0/TensixTile/L1.md "Port assignments", whose diagram is drawn by
  tt-isa-documentation Diagrams/Src/L1.lua; "Baby RISCV cores" for the narrow read and
  write).  A load that waits for its port or bank returns that much later and holds its
  load-buffer slot that much longer; a store waits to start.  The coprocessor's L1
  clients — unpackers, packers, mover, ThCon — book the rows each instruction reads or
  writes on their own ports of the same diagram (:data:`CLIENT_PORTS`), at their
  documented rates; rows that wait hold the instruction's unit that much longer.
* **A push** (``.ttinsn``, or a store to ``INSTRN_BUF_BASE``) enters the thread's FIFO
  at the core's time, unless the thread has ``fifo_depth`` instructions that have not
  yet passed its wait gate: then the core stalls until the oldest of them does
  (BabyRISCV/PushTensixInstruction.md: a push into a full FIFO stalls the core).
* **A Tensix thread** takes its next instruction through the MOP expander, the replay
  expander and the wait gate at most one a cycle (WormholeB0 .../MOPExpander.md,
  ReplayExpander.md, WaitGate.md); an expanded instruction comes one a cycle after the
  MOP or REPLAY that made it.  At the gate it waits for its execution unit: a **unit**
  (matrix unit, vector unit, scalar unit, TDMA, configuration, unpackers, packers) is
  shared by the three threads and busy for each instruction's *occupancy* cycles; a
  unit's timeline is a calendar of busy intervals, so an instruction takes the first
  free slot at or after the time it reaches the gate, whichever thread's instruction
  the functional run happened to run first.
* **Waits the gate implements** become times: ``STALLWAIT`` latches, and the thread's
  later instructions its block mask catches wait until its conditions are met in the
  model's time (:data:`STALL_CONDITIONS`); ``SEMWAIT`` latches, and the instruction it
  held in the functional run waits until a cycle after the semaphores' last change; a matrix-unit
  instruction until the source banks were last made valid (an unpack, ``SETDVALID``).
* **Stalls the hardware inserts**: Dest's read-after-write window holds a matrix-unit
  instruction that accumulates onto, and a PACR that packs from, an 8x16 block of Dest
  written in the last ``dest_window`` cycles (Dst.md); an instruction may make its unit
  refuse others on the cycles after it — SFPSWAP, SFPSHFT2's shuffles, Blackhole's MAD
  family, the matrix unit's moves (:mod:`tessera_cycles.auto_stalls`, ``auto_stalls``).
* **A core waiting on the coprocessor**: a load of ``PC_BUF_BASE + 4``
  (CoprocessorDoneCheck, ``tensix_sync``) completes when the core's thread has finished
  everything it was given; a core *polling* memory (loads and register arithmetic only,
  reading a word again) that sees the word change continues from when it started
  polling or when the word was written, whichever is later — not from however long the
  functional run let it spin.

Occupancies are parameters (:class:`TensixParams`); the defaults are the Blackhole
silicon measurements where one exists (docs/cycles.md says which) and documented choices
otherwise.
"""

from __future__ import annotations

import bisect
from collections import deque
from typing import Any

import attrs
import numpy as np

from tessera_cycles.auto_stalls import Bar, View
from tessera_cycles.cache import Cache
from tessera_cycles.params import boolean, non_negative, positive, power_of_two

__all__ = ["CoreTimes", "L1Ports", "PARAM_DOCS", "TensixParams", "ThreadTimes", "TileTimes", "Timeline",
           "UnitCalendar"]


def _depth(instance: object, attribute: attrs.Attribute[Any], value: object) -> None:
    positive(instance, attribute, value)
    if int(value) > MAX_FIFO_DEPTH:  # type: ignore[call-overload]
        raise ValueError(f"{attribute.name} must be at most {MAX_FIFO_DEPTH} (the FIFO's 29 and the three stages "
                         f"after it), got {value!r}")


#: the baby cores a port group may name (tessera_tensix.tile.memmap.CORES)
CORE_NAMES = ("brisc", "trisc0", "trisc1", "trisc2", "ncrisc")


def port_groups(text: str) -> tuple[tuple[str, ...], ...]:
    """``l1_ports`` read: comma-separated groups of core names, each group one access port
    (its cores behind that port's mux); a core in no group has a port of its own."""
    groups = tuple(tuple(g.split()) for g in text.split(",") if g.strip())
    seen: set[str] = set()
    for group in groups:
        for name in group:
            if name not in CORE_NAMES:
                raise ValueError(f"l1_ports names {name!r}, not a core ({', '.join(CORE_NAMES)})")
            if name in seen:
                raise ValueError(f"l1_ports names {name!r} twice")
            seen.add(name)
    return groups


def _unpack_rows(instance: object, attribute: attrs.Attribute[Any], value: object) -> None:
    positive(instance, attribute, value)
    if int(value) > 4:  # type: ignore[call-overload]
        raise ValueError(f"{attribute.name} must be at most 4 (an unpacker has four read ports), got {value!r}")


def _ports(instance: object, attribute: attrs.Attribute[Any], value: object) -> None:
    if not isinstance(value, str):
        raise ValueError(f"{attribute.name} must be a string, got {value!r}")
    port_groups(value)


#: the deepest FIFO the model can time: the functional FIFO accepts a push while it holds at
#: most 28, so when a push is accepted the instruction 30 before it has passed the gate
#: the instructions a thread can hold between a push and its wait gate: its FIFO's 32
#: entries take a push while they hold at most 28 (PushTensixInstruction.md; the other four
#: are for fused pushes, which the silicon shows do not happen), so 29, and one each in the
#: MOP expander, the replay expander and at the wait gate (WaitGate.md) — 32, the run-ahead
#: riscvbench measured (31.0-32.3 at one thread)
MAX_FIFO_DEPTH = 32
#: a baby core's instruction cache in bytes where the chip's is not known (Blackhole:
#: unpublished; the silicon fetch ramp is flat to 4 KiB loop bodies)
DEFAULT_ICACHE = 4096
#: Wormhole B0's instruction caches per core (BabyRISCV/InstructionCache.md)
WORMHOLE_ICACHE = {"brisc": 2048, "trisc0": 2048, "trisc1": 512, "trisc2": 2048, "ncrisc": 512}


@attrs.frozen
class TensixParams:
    """The ``tensix`` model's parameters (``--set cycles.NAME=V``)."""

    fifo_depth: int = attrs.field(default=32, validator=_depth)
    mul_latency: int = attrs.field(default=2, validator=positive)
    div_cycles: int = attrs.field(default=33, validator=positive)
    l1_load_latency: int = attrs.field(default=8, validator=positive)
    local_load_latency: int = attrs.field(default=2, validator=positive)
    l1_store_period: int = attrs.field(default=5, validator=positive)
    l1_loads_in_flight: int = attrs.field(default=4, validator=positive)
    l1_contention: bool = attrs.field(default=True, validator=boolean)
    l1_ports: str = attrs.field(default="brisc ncrisc trisc0, trisc1 trisc2", validator=_ports)
    l1_banks: int = attrs.field(default=32, validator=power_of_two)
    l1_bank_bytes: int = attrs.field(default=16, validator=power_of_two)
    icache: bool = attrs.field(default=True, validator=boolean)
    icache_size: int = attrs.field(default=0, validator=non_negative)
    icache_ways: int = attrs.field(default=2, validator=power_of_two)
    icache_line: int = attrs.field(default=16, validator=power_of_two)
    icache_miss_cycles: int = attrs.field(default=1, validator=non_negative)
    thcon_cycles: int = attrs.field(default=3, validator=positive)
    matrix_pushed_cycles: int = attrs.field(default=6, validator=positive)
    matrix_expanded_cycles: int = attrs.field(default=1, validator=positive)
    unpack_cycles: int = attrs.field(default=16, validator=positive)
    pack_cycles: int = attrs.field(default=16, validator=positive)
    sfpu_cycles: int = attrs.field(default=1, validator=positive)
    gate_latency: int = attrs.field(default=1, validator=non_negative)
    dest_window: int = attrs.field(default=4, validator=non_negative)
    auto_stalls: bool = attrs.field(default=True, validator=boolean)
    l1_coprocessor: bool = attrs.field(default=True, validator=boolean)
    l1_unpack_rows: int = attrs.field(default=4, validator=_unpack_rows)
    poll_phase: bool = attrs.field(default=True, validator=boolean)


PARAM_DOCS: dict[str, str] = {
    "fifo_depth": "instructions a Tensix thread holds between a push and its wait gate before a push stalls the "
                  "core (1..32: the FIFO's 29, the MOP and replay expanders' and the wait gate's one each; "
                  "silicon run-ahead 31-32; below 29 the stall is a lower bound)",
    "mul_latency": "cycles from a baby core's multiply to its result (silicon: dependent mul 2)",
    "div_cycles": "cycles a baby core's divide holds the core (silicon: divu 33)",
    "l1_load_latency": "load-to-use cycles of a baby core's load from L1 (silicon: pointer chase 8.1)",
    "local_load_latency": "load-to-use cycles of a load from the core's local RAM (silicon: 2)",
    "l1_store_period": "cycles between two stores of a core to different 16-byte L1 rows, and the cycles such a "
                       "store (a narrow write: read-modify-write) blocks its L1 access port and bank (docs: 5; "
                       "silicon: 5.3; a store to the row just stored merges: 1)",
    "l1_loads_in_flight": "L1 loads a core may have outstanding, each until its data returns, one cycle before "
                          "it can be used (silicon: 4 independent loads 1.76 cycles each)",
    "l1_contention": "the cores' L1 loads and stores share access ports and banks (l1_ports, l1_banks): a load "
                     "takes its port and bank 1 cycle, a store l1_store_period; false: every core has L1 to itself",
    "l1_ports": "the cores behind one L1 access port's mux, comma-separated groups (docs, Wormhole B0 port "
                "diagram: B, NC and T0 share port #2, T1 and T2 port #3; a core in no group has its own port)",
    "l1_banks": "L1 banks, each one access a cycle (Blackhole: 32, one request per bank per cycle; Wormhole: 16)",
    "l1_bank_bytes": "bytes of consecutive L1 addresses in one bank before the next (not documented; 16 = one "
                     "128-bit bank access, rows interleaved across the banks)",
    "icache": "each baby core fetches through its own instruction cache (InstructionCache.md): a fetch from a "
              "16-byte line it does not hold stalls the core icache_miss_cycles; false: every fetch hits",
    "icache_size": "a core's instruction cache (0: the chip's — Wormhole per core as InstructionCache.md gives it, "
                    "B/T0/T2 2 KiB, T1/NC 512 bytes; Blackhole unpublished, 4096 for every core, read off the "
                    "silicon fetch ramp: flat to a 4 KiB loop body, 1.25 cycles per instruction from 6 KiB)",
    "icache_ways": "ways of a set of the instruction cache, least recently used replaced (not documented; 2 "
                   "reproduces the graded ramp between 4 and 6 KiB bodies to 1 %)",
    "icache_line": "bytes of one instruction-cache line, one 128-bit L1 read (four instructions)",
    "icache_miss_cycles": "cycles a fetch from a line the cache does not hold stalls the core (not documented; "
                          "1: a body that misses every line runs 5 cycles per 4 instructions, the silicon plateau)",
    "thcon_cycles": "cycles the scalar unit is busy with ADD/SUB/MUL/SHIFT/CMP/BITWOP DMAREG and its memory "
                    "ops (silicon: 3, shared by the threads)",
    "matrix_pushed_cycles": "cycles the matrix unit is busy with a math instruction a core pushed itself "
                            "(silicon: MVMUL/ELWADD/ELWMUL 6, shared)",
    "matrix_expanded_cycles": "cycles the matrix unit is busy with a math instruction the MOP or replay "
                              "expander issued (silicon: MVMUL in a matmul 1.07)",
    "unpack_cycles": "cycles an unpacker is busy with one UNPACR (not measured; a face of 16 rows, one a cycle)",
    "pack_cycles": "cycles a packer is busy with one PACR (not measured; 16 rows, one a cycle)",
    "sfpu_cycles": "cycles the vector unit is busy with one instruction (silicon: 1, SFPMAD included)",
    "gate_latency": "cycles from a push to the earliest the instruction can pass its thread's wait gate",
    "dest_window": "cycles after a matrix-unit instruction writes an aligned 8x16 block of Dest during which a "
                   "matrix-unit instruction that reads the block (it accumulates: MVMUL, ELWMUL …) or a PACR "
                   "that packs from it is stalled (Dst.md: four; 0: no stall)",
    "auto_stalls": "the backend's automatic stalls on the cycles after an instruction (auto_stalls.py: SFPSWAP, "
                   "Blackhole's SFPSHFT2 shuffles and MAD family, the matrix unit's moves and SHIFTXB; their "
                   "pages); false: none",
    "l1_coprocessor": "the coprocessor's L1 clients (unpackers, packers, mover, ThCon) share L1's access ports and "
                      "banks with the cores (l1_contention on): each on its ports of the Wormhole B0 port diagram "
                      "(L1.md), one 16-byte row a port a cycle, a packer one a cycle, the mover 8 reads and 8 "
                      "writes per 11 cycles (Mover.md, measured), ThCon one access, a narrow write or atomic "
                      "l1_store_period; an instruction whose rows wait holds its unit that much longer",
    "poll_phase": "a core polling a word sees it change on its first read of the word after the write, one "
                  "turn of its polling loop (as the model timed it) after another; false: as soon as the word "
                  "is written (no loop phase)",
    "l1_unpack_rows": "16-byte rows an unpacker reads a cycle (1..4; L1.md: four in theory, on its four ports, "
                      "fewer when a format's bottleneck is downstream of L1 — not measured)",
}

#: scalar-unit (THCON) instructions that take ``thcon_cycles``; SETDMAREG and the rest take 1
THCON_LONG = frozenset({
    "ttadddmareg", "ttsubdmareg", "ttmuldmareg", "ttshiftdmareg", "ttcmpdmareg", "ttbitwopdmareg",
    "ttloadind", "ttstoreind", "ttloadreg", "ttstorereg", "ttatincget", "ttatincgetptr", "ttatcas", "ttatswap",
    "ttreg2flop", "ttflushdma"})
#: matrix-unit instructions that read the source banks (wait for them to be valid) and are
#: charged ``matrix_*_cycles``; the matrix unit's counters (SETRWC, INCRWC …) take 1
MATRIX_WORK = frozenset({
    "ttmvmul", "ttelwadd", "ttelwmul", "ttelwsub", "ttdotpv", "ttgmpool", "ttgapool", "ttmpool3s1", "ttmpool3s2",
    "ttapool3s1", "ttapool3s2", "ttconv3s1", "ttconv3s2", "ttmfconv3s1", "ttmova2d", "ttmovb2d", "ttmovb2a",
    "ttmovd2a", "ttmovd2b"})
#: front-end instructions: consumed by the expanders, never reach a unit
FRONT_END = frozenset({"ttmop", "ttmopcfg", "ttreplay", "ttnop", "ttresourcedecl"})
#: STALLWAIT's conditions C0, C1, … per chip (STALLWAIT.md) as the model's times: a unit —
#: the thread's own last instruction in it has finished; ``unit*`` — any thread's; ``src``
#: — the source banks were last made valid (SrcA/SrcB not yet the matrix unit's: an unpack,
#: SETDVALID); None — not modelled, always met (the RISC-V core's requests not yet
#: processed).  SrcA/SrcB not yet the unpackers' is taken as the matrix unit (any thread)
#: having finished, which hands the banks back.  The model has one UNPACK and one PACK unit.
STALL_CONDITIONS: dict[str, tuple[str | None, ...]] = {
    "bh": ("THCON", "UNPACK", "UNPACK", "PACK", "MATH", "MATH*", "MATH*", "src", "src", "XMOV*", None,
           "SFPU", "CFG*"),
    "wh": ("THCON", "UNPACK", "UNPACK", "PACK", "PACK", "PACK", "PACK", "MATH", "MATH*", "MATH*", "src", "src",
           "XMOV*", None, "SFPU"),
}


def stall_waits(chip: str, conditions: int) -> tuple[str, ...]:
    """What a STALLWAIT latch with ``conditions`` (of ``chip``) waits for
    (:data:`STALL_CONDITIONS`), each once."""
    table = STALL_CONDITIONS[chip]
    got = (table[i] for i in range(len(table)) if conditions >> i & 1)
    return tuple(dict.fromkeys(w for w in got if w is not None))


#: the wait cause of an automatic stall, by unit (TileTimes._accept)
STALL_CAUSE = {"SFPU": "sfpu", "MATH": "fpu"}
#: refusals a unit keeps before the oldest are dropped (TileTimes._bar)
BAR_HORIZON = 4096
EMPTY_LREGS: frozenset[int] = frozenset()


class UnitCalendar:
    """When one shared unit is busy: sorted, disjoint ``[start, end)`` intervals.

    :meth:`reserve` gives the first free slot of the asked length at or after the asked
    time, so requests that reach the model out of time order (one thread's long burst
    observed before another's) still share the unit as the hardware's arbitration would
    by time.  Intervals that end before every thread's current time can no longer matter
    and are dropped (:meth:`forget_before`)."""

    def __init__(self, name: str) -> None:
        self.name = name
        self.starts: list[int] = []
        self.ends: list[int] = []
        self.busy = 0          # cycles reserved in all
        self.issued = 0        # instructions
        self.last_end = 0      # the latest end of any interval

    def reserve(self, at: int, length: int) -> int:
        """Book ``length`` cycles from the first free time ``>= at``; return the start."""
        t, i = self._first_free(at, length)
        self._book(t, length, i)
        return t

    def first_free(self, at: int, length: int) -> int:
        """The first time ``>= at`` from which ``length`` cycles are free (nothing is booked)."""
        return self._first_free(at, length)[0]

    def book(self, t: int, length: int) -> None:
        """Book ``[t, t + length)``, which :meth:`first_free` said is free."""
        self._book(t, length, bisect.bisect_right(self.ends, t))

    def unbook(self, t: int, length: int) -> None:
        """Free ``[t, t + length)``, which was booked (it may have merged with neighbours)."""
        starts, ends = self.starts, self.ends
        i = bisect.bisect_right(starts, t) - 1
        if i < 0 or ends[i] < t + length:      # not booked (forgotten since): nothing to free
            return
        head, tail = (starts[i], t), (t + length, ends[i])
        pieces = [p for p in (head, tail) if p[0] < p[1]]
        starts[i:i + 1] = [p[0] for p in pieces]
        ends[i:i + 1] = [p[1] for p in pieces]
        self.busy -= length

    def _first_free(self, at: int, length: int) -> tuple[int, int]:
        starts, ends = self.starts, self.ends
        i = bisect.bisect_right(ends, at)          # intervals ending at or before `at` cannot clash
        t = at
        n = len(starts)
        while i < n and starts[i] < t + length:    # this interval overlaps [t, t+length)
            t = max(t, ends[i])
            i += 1
        return t, i

    def _book(self, t: int, length: int, i: int) -> None:
        """Insert ``[t, t + length)`` before interval ``i`` (the first that starts after it)."""
        starts, ends = self.starts, self.ends
        n = len(starts)
        # merge with neighbours where they touch, to keep the lists short
        if i > 0 and ends[i - 1] == t:
            ends[i - 1] = t + length
            if i < n and starts[i] == t + length:
                ends[i - 1] = ends[i]
                del starts[i], ends[i]
        elif i < n and starts[i] == t + length:
            starts[i] = t
        else:
            starts.insert(i, t)
            ends.insert(i, t + length)
        self.busy += length
        self.issued += 1
        if t + length > self.last_end:
            self.last_end = t + length

    def forget_before(self, t: int) -> None:
        cut = bisect.bisect_right(self.ends, t)
        if cut > 64:
            del self.starts[:cut], self.ends[:cut]


#: the access ports of the coprocessor's L1 clients (WormholeB0/TensixTile/L1.md "Port
#: assignments", the diagram tt-isa-documentation Diagrams/Src/L1.lua draws): ``#n`` is
#: the diagram's port #n, which no baby core uses; a core's name is the port that core is
#: behind (``l1_ports``: by default B, NC and T0's port #2, T1 and T2's port #3).  Port #2's
#: mux also takes a second-level mux of the unpackers' exponent reads, packer 0's reads,
#: packer 2, ThCon and the mover's reads; port #3's one of the mover's writes, TDMA-RISC
#: and packer 3; port #1's ECC scrubber, packer 1 and unpacker 1.  Blackhole publishes no
#: diagram: the same ports (its one packer is packer 0).
CLIENT_PORTS: dict[str, tuple[str, ...]] = {
    "unpacker0": ("#0", "#9", "#10", "#11"), "unpacker1": ("#1", "#9", "#10", "#11"),
    "unpacker0 exponents": ("brisc",), "unpacker1 exponents": ("brisc",),
    "packer0": ("#8",), "packer1": ("#1",), "packer2": ("brisc",), "packer3": ("trisc1",),
    "packer0 read": ("brisc",), "thcon": ("brisc",), "mover read": ("brisc",), "mover write": ("trisc1",)}
#: rows a client moves per cycles when nothing waits (L1.md "Maximum theoretical
#: bandwidth"): a packer writes one a cycle, an unpacker's exponent reads and packer 0's
#: reads one a cycle; the mover's copy 8 reads and 8 writes per 11 cycles (Mover.md,
#: measured; its writes a cycle behind its reads), its memset one write a cycle; ThCon
#: makes one access; an unpacker's datum rate is ``l1_unpack_rows``
CLIENT_RATES: dict[str, tuple[int, int]] = {"mover copy": (8, 11)}
#: rows of one client's accesses in an instruction booked one by one; the rest of a longer
#: transfer (a large XMOV) holds its ports for the time it takes at its rate, its banks
#: unbooked — a row a cycle spread over all of them
EXACT_ROWS = 256


class L1Ports:
    """When L1's access ports and banks are busy: the baby cores' data accesses and the
    coprocessor's L1 clients (unpackers, packers, mover, ThCon).

    WormholeB0/TensixTile/L1.md: each bank does one 128-bit access a cycle and a bank
    conflict makes all but one port wait; clients sharing a port go through a mux that
    allocates round-robin, one a cycle; a narrow read uses the port like a full one, a
    narrow write (every baby-core store) is a read-modify-write that blocks the port and
    the bank five cycles ("Port assignments", "Baby RISCV cores"); a port passes its
    requests in order (BabyRISCV/MemoryOrdering.md, head-of-line blocking).  Which cores
    share a port is the port diagram's (tt-isa-documentation Diagrams/Src/L1.lua: B, NC
    and T0 behind port #2's mux, T1 and T2 behind port #3's), a parameter; how addresses
    are spread over the banks is not documented (``l1_bank_bytes``).

    Each port and bank is a :class:`UnitCalendar`.  An access reaches the head of its
    port at the first time at or after it asks that the port is free, holds the port from
    then until its bank is free and it is done (the head of the line blocks the port), and
    holds the bank for its own cycles; a mux's round robin is so a first-come order in
    time (ties: whichever core the functional run ran first).

    The coprocessor's clients are booked the same way (:meth:`clients`): each 16-byte row
    an instruction reads or writes is an access of its client, on the client's ports
    (:data:`CLIENT_PORTS`, rows dealt over them in turn) at the client's rate
    (:data:`CLIENT_RATES`), so a client and a core (or two clients) that want one port or
    bank in the same cycle take turns, whichever asked first going first.  The cores'
    instruction fetches, TDMA-RISC's mover commands and the NoC are not booked."""

    #: bookings between two prunings of a calendar, and how far behind the latest booking
    #: an access may still be timed against what was booked (beyond: as if it was free)
    PRUNE, HORIZON = 1024, 1 << 16
    #: the latest bookings of a poll that can be taken back
    POLL_LOG = 4096

    def __init__(self, params: TensixParams, cores: dict[str, CoreTimes],
                 threads: list[ThreadTimes] | None = None) -> None:
        self.cores = cores
        self.threads = threads or []     # a thread's instruction may ask from its gate's time on
        self.port_of: dict[str, int] = {}
        for index, group in enumerate(port_groups(params.l1_ports)):
            for name in group:
                self.port_of[name] = index
        self.ports: dict[int | str, UnitCalendar] = {}
        self.banks: dict[int, UnitCalendar] = {}
        self.bank_shift = params.l1_bank_bytes.bit_length() - 1
        self.bank_mask = params.l1_banks - 1
        self.waited = 0          # cycles accesses waited for a port or bank, in all
        #: per core, the bookings of its current run of polling loads (the latest ones): a
        #: poll the model gives back takes its accesses back too
        self.polling: dict[str, deque[tuple[UnitCalendar, int, int, UnitCalendar, int, int]]] = {}
        self.unpack_rows = params.l1_unpack_rows
        self.rmw_cycles = params.l1_store_period    # a narrow write or an atomic (L1.md: five)
        #: per coprocessor client: [instructions, rows, cycles its rows waited]
        self.client_counts: dict[str, list[int]] = {}

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)
        for name, value in (("threads", []), ("unpack_rows", 4), ("rmw_cycles", 5), ("client_counts", {})):
            self.__dict__.setdefault(name, value)   # a snapshot from before the clients were booked

    def access(self, core: str, address: int, at: int, length: int, polling: bool = False) -> int:
        """Book ``core``'s access to ``address`` for ``length`` cycles, from the first time
        ``>= at`` its port and the address's bank are both free; return that time.
        ``polling``: a load of a poll (:meth:`give_back` may withdraw it)."""
        port = self._port(core)
        bank = self._bank(address)
        head, start = self._take(port, bank, at, length)
        self.waited += start - at
        if polling:
            log = self.polling.get(core)
            if log is None:
                log = self.polling[core] = deque(maxlen=self.POLL_LOG)
            log.append((port, head, start + length - head, bank, start, length))
        return start

    def _port(self, name: str) -> UnitCalendar:
        """The port a core (or a client's ``#n`` port) is on."""
        key: int | str = self.port_of.get(name, name)
        port = self.ports.get(key)
        if port is None:
            port = self.ports[key] = UnitCalendar(f"l1 port {key}")
        return port

    def _bank(self, address: int) -> UnitCalendar:
        b = (address >> self.bank_shift) & self.bank_mask
        bank = self.banks.get(b)
        if bank is None:
            bank = self.banks[b] = UnitCalendar(f"l1 bank {b}")
        return bank

    def _take(self, port: UnitCalendar, bank: UnitCalendar, at: int, length: int) -> tuple[int, int]:
        """Book an access of ``length`` cycles through ``port`` to ``bank`` from the first
        time ``>= at`` both are free: ``(head, start)`` — when it reached the head of its
        port's line, which it holds from then on, and when it got its bank."""
        t = at
        while True:
            head = port.first_free(t, length)          # it reaches the head of its port
            start = bank.first_free(head, length)      # and waits there for its bank
            if start == head or port.first_free(head, start + length - head) == head:
                break
            t = head + 1                               # the port is wanted before then: after that
        port.book(head, start + length - head)
        bank.book(start, length)
        for cal in (port, bank):
            if cal.issued % self.PRUNE == 0:
                cal.forget_before(max(self._low(), cal.last_end - self.HORIZON) - 1)
        return head, start

    def _low(self) -> int:
        """The earliest time anything may still ask for a port: a core's next instruction, or
        the gate of a thread with instructions pushed and not yet passed."""
        times = [c.t for c in self.cores.values()] + [th.front for th in self.threads if th.pushed > th.entries]
        return min(times, default=0)

    # ------------------------------------------------------------------ the coprocessor's clients

    def clients(self, note: tuple[tuple[str, str, Any], ...], at: int) -> tuple[int, int]:
        """Book the L1 accesses of one coprocessor instruction whose unit starts at ``at``:
        ``note`` is what the unit noted, ``(client, kind, where)`` per access
        (tessera_tensix.l1: ``where`` a byte range or an array of bit addresses; ``kind``
        ``rmw``: a read-modify-write, ``l1_store_period`` cycles).  Each client's rows go
        from ``at`` (the mover's writes of a copy a cycle later), in address order, at its
        rate.  Returns ``(free, done)``: when the last access would have finished with L1
        to itself, and when it did."""
        rows: dict[str, list[Any]] = {}
        rmw: set[str] = set()
        for client, kind, where in note:
            if isinstance(where, tuple):
                got: Any = range(where[0] >> 4, (where[1] + 15) >> 4)
            else:
                got = np.unique(np.asarray(where) >> 7)
            if len(got):
                rows.setdefault(client, []).append(got)
                if kind == "rmw":
                    rmw.add(client)
        free = done = at
        copy = "mover read" in rows
        for client, parts in rows.items():
            if client not in CLIENT_PORTS:
                continue
            if len(parts) == 1:
                these = parts[0]
            else:
                these = np.unique(np.concatenate([np.asarray(part) for part in parts]))
            if client in ("mover read", "mover write") and copy:
                rate, begin = CLIENT_RATES["mover copy"], at + (client == "mover write")
            else:
                rate, begin = ((self.unpack_rows, 1) if client in ("unpacker0", "unpacker1") else (1, 1)), at
            f, d = self.stream(client, these, begin, rate, self.rmw_cycles if client in rmw else 1)
            free, done = max(free, f), max(done, d)
        return free, done

    def stream(self, client: str, rows: Any, at: int, rate: tuple[int, int], length: int) -> tuple[int, int]:
        """``client`` accesses ``rows`` (16-byte row numbers, in order) from ``at``, ``rate``
        rows per cycles (``(r, c)``: row i asks at ``at + i * c // r``), dealt over its ports
        in turn, each access ``length`` cycles.  The first :data:`EXACT_ROWS` are booked one
        by one (:meth:`_take`: its port in order, then its bank); the rest of a longer
        transfer holds each port for the time it takes at its rate (its banks are not
        booked).  Returns ``(free, done)`` as :meth:`clients`."""
        ports = [self._port(name) for name in CLIENT_PORTS[client]]
        r, c = rate
        k, n = len(ports), len(rows)
        exact = min(n, EXACT_ROWS)
        done = at
        banks, shift, mask, prune = self.banks, self.bank_shift, self.bank_mask, self.PRUNE
        for i, row in enumerate(rows[:exact].tolist() if hasattr(rows, "tolist") else rows[:exact]):
            port, t = ports[i % k], at + i * c // r
            bank = banks.get(((row << 4) >> shift) & mask) or self._bank(row << 4)
            if port.last_end <= t and bank.last_end <= t:     # nothing booked from t on: as _take, cheaply
                port._book(t, length, len(port.starts))
                bank._book(t, length, len(bank.starts))
                start = t
                if port.issued % prune == 0 or bank.issued % prune == 0:
                    for cal in (port, bank):
                        cal.forget_before(max(self._low(), cal.last_end - self.HORIZON) - 1)
            else:
                _head, start = self._take(port, bank, t, length)
            if start + length > done:
                done = start + length
        if n > exact:      # the tail, as late as the booked rows made it: its ports busy throughout
            late = max(done - (at + (exact - 1) * c // r + length), 0)
            first, last = at + exact * c // r + late, at + (n - 1) * c // r + late
            for port in ports:
                begin = port.first_free(first, last + 1 - first)
                port.book(begin, last + 1 - first)
                done = max(done, begin + last - first + length)
        free = at + (n - 1) * c // r + length if n else at
        counts = self.client_counts.get(client)
        if counts is None:
            counts = self.client_counts[client] = [0, 0, 0]
        counts[0] += 1
        counts[1] += n
        counts[2] += max(done - free, 0)
        return free, max(done, free)

    def report(self) -> dict[str, Any]:
        """Per coprocessor client: the instructions that accessed L1, the rows, and the
        cycles their last rows finished later than with L1 to themselves."""
        return {name: {"instructions": n, "rows": rows, "waited": waited}
                for name, (n, rows, waited) in sorted(self.client_counts.items())}

    def end_poll(self, core: str) -> None:
        """``core``'s run of polling loads ended: what it booked stays booked."""
        log = self.polling.get(core)
        if log:
            log.clear()

    def give_back(self, core: str, back: int) -> None:
        """The poll the model gave back from ``back``: its loads booked from then on never
        happened."""
        log = self.polling.get(core)
        while log and log[-1][1] >= back:
            port, head, held, bank, start, length = log.pop()
            port.unbook(head, held)
            bank.unbook(start, length)


class CoreTimes:
    """One baby RISC-V core's clock and scoreboard."""

    def __init__(self, name: str) -> None:
        self.name = name
        self.t = 0                         # the cycle its next instruction can issue
        self.ready = [0] * 32              # when each x register's value is ready
        self.store_free = 0                # when its next L1 store can go out
        self.last_store = -1               # 16-byte row of its last L1 store (merging)
        self.l1_next = 0                   # its L1 accesses pass its port in order: none before this
        self.loads: deque[int] = deque()   # when each outstanding L1 load's data returns
        self.instructions = 0
        self.stalls = {"data": 0, "divide": 0, "load": 0, "store": 0, "fifo": 0, "sync": 0, "fetch": 0}
        self.polled = 0                    # cycles of spinning the poll rule gave back
        self.icache: Cache | None = None   # its instruction cache (TileTimes.fetch makes it)
        self.fetch_lo = 1                  # [fetch_lo, fetch_end): the line it fetched last
        self.fetch_end = 0
        self.poll_since: int | None = None  # when the current run of pure loads began
        self.poll_seen: dict[int, int] = {}
        #: address -> model times of the poll's first and latest read of it
        self.poll_reads: dict[int, tuple[int, int]] = {}

    def report(self) -> dict[str, Any]:
        end = self.t if self.poll_since is None else self.poll_since   # a poll that never ended: from its start
        cycles = max(end, 1)
        return {"instructions": self.instructions, "cycles": end,
                "cpi": round(end / self.instructions, 4) if self.instructions else 0.0,
                "ipc": round(self.instructions / cycles, 4), "stalls": dict(self.stalls),
                "poll_cycles_given_back": self.polled,
                **({"icache": self.icache.stats()} if self.icache is not None else {})}


class ThreadTimes:
    """One Tensix thread: its FIFO's push times, when its gate is free, what it has left."""

    def __init__(self, tid: int) -> None:
        self.tid = tid
        self.arrivals: deque[int] = deque()   # push times of entries not yet observed
        self.pushed = 0                        # entries pushed in all
        self.passed: deque[int] = deque()     # gate times of the last entries observed (FIFO depth)
        self.entries = 0                       # entries observed (popped and retired)
        self.front = 0                         # when its gate can pass the next instruction
        self.done = 0                          # when everything it passed has finished
        self.expansion_start: int | None = None  # gate time of a MOP/REPLAY's first expansion
        #: the thread's SEMWAIT latches whose wait the functional run saw end with an
        #: instruction held (``thread.sem_releases``), whether the model has yet to hold
        #: that instruction, and when the thread's last SEMWAIT took effect
        self.sem_releases = 0
        self.sem_held = False
        self.latch_at = 0
        #: a latched STALLWAIT: (block mask, when its conditions are met and the mask is
        #: removed), or None
        self.stall_latch: tuple[int, int] | None = None
        #: unit -> when the thread's last instruction in it finishes (STALLWAIT's conditions)
        self.unit_end: dict[str, int] = {}
        self.instructions = 0
        self.expanded = 0
        #: ``sfpu`` / ``fpu``: the vector / matrix unit's automatic stalls (auto_stalls.py)
        self.waits = {"unit": 0, "sync": 0, "source": 0, "dest": 0, "sfpu": 0, "fpu": 0, "empty": 0}
        #: cycles its instructions' L1 accesses finished late, their ports or banks taken (not a gate wait)
        self.waits["l1"] = 0

    def report(self) -> dict[str, Any]:
        return {"instructions": self.instructions, "expanded": self.expanded, "cycles": self.done,
                "waits": dict(self.waits)}


class Timeline:
    """What happened when, for ``--cycles-trace`` (recorded only when asked: it grows with
    the run): each unit's busy spans, each FIFO's pushes and passes through the gate."""

    def __init__(self) -> None:
        #: (unit, start, cycles, thread, mnemonic)
        self.spans: list[tuple[str, int, int, int, str]] = []
        #: (thread, time) of every push into a thread's FIFO, and of every entry passing its gate
        self.pushes: list[tuple[int, int]] = []
        self.passes: list[tuple[int, int]] = []
        #: (core, time) of every instruction fetch that missed the core's cache
        self.misses: list[tuple[str, int]] = []


class TileTimes:
    """Everything the model knows about one tile (kept in ``machine.ext["cycles"]``)."""

    def __init__(self, params: TensixParams) -> None:
        self.params = params
        self.cores: dict[str, CoreTimes] = {}
        self.threads = [ThreadTimes(t) for t in range(3)]
        self.units: dict[str, UnitCalendar] = {}
        self.src_valid = 0            # when the source banks were last made valid
        self.sem_changed = 0          # when a semaphore last changed
        self.l1_written: dict[int, int] = {}   # word -> when a core last stored it
        #: aligned 8x16 block of Dest -> when a matrix-unit instruction last wrote it
        self.dest_written: dict[int, int] = {}
        #: unit -> cycle -> what the automatic stall logic refuses in that cycle (auto_stalls.Bar)
        self.bars: dict[str, dict[int, tuple[Bar, ...]]] = {}
        #: the cores' L1 access ports and banks (None: every core has L1 to itself)
        self.l1: L1Ports | None = L1Ports(params, self.cores, self.threads) if params.l1_contention else None
        #: the L1 accesses of the coprocessor instruction being observed (TensixTile sets it
        #: from the thread's note right before :meth:`tensix`, which takes it)
        self.l1_note: tuple[tuple[str, str, Any], ...] | None = None
        self.timeline: Timeline | None = None   # --cycles-trace (not kept by snapshots)
        #: each core's instruction-cache size when ``icache_size`` is 0 (the chip's; TensixTile sets it)
        self.icache_sizes: dict[str, int] = {}

    def __getstate__(self) -> dict[str, Any]:
        state = dict(self.__dict__)
        state["timeline"] = None
        return state

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)
        self.__dict__.setdefault("timeline", None)
        self.__dict__.setdefault("l1", None)          # a snapshot from before the ports were timed
        self.__dict__.setdefault("dest_written", {})
        self.__dict__.setdefault("bars", {})
        self.__dict__.setdefault("l1_note", None)
        for th in self.threads:
            for cause in ("dest", "sfpu", "fpu", "l1"):
                th.waits.setdefault(cause, 0)
            th.__dict__.setdefault("sem_releases", 0)
            th.__dict__.setdefault("latch_at", 0)
            th.__dict__.setdefault("sem_held", False)
            th.__dict__.setdefault("stall_latch", None)
            th.__dict__.setdefault("unit_end", {})
        self.__dict__.setdefault("icache_sizes", {})
        for core in self.cores.values():
            core.__dict__.setdefault("l1_next", 0)
            for name, value in (("icache", None), ("fetch_lo", 1), ("fetch_end", 0), ("poll_reads", {})):
                core.__dict__.setdefault(name, value)
            core.stalls.setdefault("fetch", 0)

    def core(self, name: str) -> CoreTimes:
        got = self.cores.get(name)
        if got is None:
            got = self.cores[name] = CoreTimes(name)
        return got

    def unit(self, name: str) -> UnitCalendar:
        got = self.units.get(name)
        if got is None:
            got = self.units[name] = UnitCalendar(name)
        return got

    def now(self) -> int:
        """The latest time anything has reached (a core still polling counts from where its poll began)."""
        times = [c.t if c.poll_since is None else c.poll_since for c in self.cores.values()]
        times += [th.done for th in self.threads]
        return max(times, default=0)

    # ------------------------------------------------------------------ cores

    def fetch(self, core: CoreTimes, address: int) -> None:
        """``core`` fetches from a line other than its last: through its instruction cache
        (BabyRISCV/InstructionCache.md: each core has its own, between it and L1; the
        Blackhole size is unpublished).  A line the cache does not hold stalls the core
        ``icache_miss_cycles`` — the amortised cost of a line its prefetcher did not
        bring in time, read off the silicon fetch ramp (docs/cycles.md "Instruction
        fetch"); true LRU in ``icache_ways``-way sets is the replacement that reproduces
        the ramp's grading.  The caches are not on the L1 access ports (the cores'
        instruction fetch has its own path in the model)."""
        cache = core.icache
        if cache is None:
            p = self.params
            size = p.icache_size or self.icache_sizes.get(core.name, DEFAULT_ICACHE)
            cache = core.icache = Cache(f"{core.name} icache", size, p.icache_ways, p.icache_line,
                                        p.icache_miss_cycles)
        stall = cache.access(address)
        core.fetch_lo, core.fetch_end = cache.mru_lo, cache.mru_end
        if stall:
            if self.timeline is not None:
                self.timeline.misses.append((core.name, core.t))
            core.t += stall
            core.stalls["fetch"] += stall

    def issue(self, core: CoreTimes, reads: tuple[int, ...]) -> int:
        """When ``core``'s next instruction issues: its turn, and the registers it reads ready."""
        t = core.t
        ready = core.ready
        for r in reads:
            if ready[r] > t:
                t = ready[r]
        if t > core.t:
            core.stalls["data"] += t - core.t
        return t

    def simple(self, core: CoreTimes, reads: tuple[int, ...], writes: tuple[int, ...], latency: int = 1,
               pure: bool = True) -> None:
        """A one-slot instruction whose result is ready ``latency`` later; ``pure``: it changes
        nothing but registers (a poll may go on through it; a CSR access or a call ends one)."""
        t = self.issue(core, reads)
        for w in writes:
            core.ready[w] = t + latency
        core.t = t + 1
        core.instructions += 1
        if not pure:
            core.poll_since = None

    def divide(self, core: CoreTimes, reads: tuple[int, ...], writes: tuple[int, ...]) -> None:
        t = self.issue(core, reads)
        cycles = self.params.div_cycles
        core.stalls["divide"] += cycles - 1
        for w in writes:
            core.ready[w] = t + cycles
        core.t = t + cycles
        core.instructions += 1

    def load(self, core: CoreTimes, reads: tuple[int, ...], writes: tuple[int, ...], latency: int,
             address: int, value: int, polled: bool | None, written: int | None, l1: bool = False) -> None:
        """A load of ``value`` from ``address`` with ``latency``; ``polled``: a location a
        poll may wait on (RAM, a semaphore), ``None`` one that neither is nor ends a poll
        (the wall clock: a poll may sit between delays); ``written``: when what it reads
        was written, if known (a load cannot see a value before it is written); ``l1``: it
        takes a slot of the core's L1 load buffer."""
        t = self.issue(core, reads)
        if polled is None:
            pass
        elif polled:
            since = core.poll_since
            if since is None:
                core.poll_since = t
                core.poll_seen = {address: value}
                core.poll_reads = {address: (t, t)}
                if self.l1 is not None:   # a new poll: what earlier loads booked stays
                    self.l1.end_poll(core.name)
            else:
                seen = core.poll_seen.get(address)
                if seen is not None and seen != value:
                    # a poll saw its word change: on the read that came after the write in
                    # the model's time, not after however long it spun here
                    back = self._poll_sees(core, address, since, written or 0, t)
                    if back > t:          # the write comes later than this read: wait for the turn
                        core.stalls["sync"] += back - t
                        t = back
                    elif back < t:
                        core.polled += t - back
                        t = back
                        if self.l1 is not None:   # and so are the port and bank cycles it booked
                            self.l1.give_back(core.name, back)
                            core.l1_next = min(core.l1_next, t)
                        # what the spin's own loads and results hold is given back with it
                        core.loads.clear()
                        core.ready = [min(r, t) for r in core.ready]
                    core.poll_since = t
                    core.poll_seen = {address: value}
                    core.poll_reads = {address: (t, t)}
                else:
                    core.poll_seen[address] = value
                    first = core.poll_reads.get(address)
                    core.poll_reads[address] = (t, t) if first is None else (first[0], t)
        else:
            core.poll_since = None
        if written is not None and written > t:
            core.stalls["sync"] += written - t
            t = written
        if l1:   # a slot of the load buffer, held until the data returns
            loads = core.loads
            while loads and loads[0] <= t:
                loads.popleft()
            if len(loads) >= self.params.l1_loads_in_flight:
                free = loads.popleft()
                core.stalls["load"] += free - t
                t = free
            if self.l1 is not None:   # its port and bank: waiting for them delays the data
                start = self.l1.access(core.name, address, max(t, core.l1_next), 1, core.poll_since is not None)
                core.l1_next = start
                latency += start - t
            loads.append(t + latency - 1)
        for w in writes:
            core.ready[w] = t + latency
        core.t = t + 1
        core.instructions += 1

    def _poll_sees(self, core: CoreTimes, address: int, since: int, written: int, t: int) -> int:
        """When the read of ``address`` that saw it change issued, of a poll that began at
        ``since`` and reads it again at ``t``; the word was written at ``written``.  A loop
        that polls reads the word once a turn: the read that sees the new value is the first
        at or after the write, a whole number of turns after the poll's first read of it (the
        turn is the model's time between its last two reads: the functional run let it spin,
        so the model timed the turns).  Without ``poll_phase``, or before a turn is known: the
        poll sees it from when it began, or when the word was written."""
        reads = core.poll_reads.get(address)
        if not self.params.poll_phase or reads is None:
            return max(since, written)
        first, last = reads
        turn = t - last
        if turn <= 0:
            return max(since, written)
        turns = max(0, -(-(written - first) // turn))
        return first + turns * turn

    def store_l1(self, core: CoreTimes, reads: tuple[int, ...], address: int) -> None:
        t = self.issue(core, reads)
        word = address >> 2
        row = address >> 4              # L1 is 16 bytes wide: stores to one row merge
        if row != core.last_store:
            if core.store_free > t:
                core.stalls["store"] += core.store_free - t
                t = core.store_free
            period = self.params.l1_store_period
            if self.l1 is not None:   # a read-modify-write: it blocks its port and bank `period` cycles
                start = self.l1.access(core.name, address, max(t, core.l1_next), period)
                core.l1_next = start
                if start > t:
                    core.stalls["store"] += start - t
                    t = start
            core.store_free = t + period
            core.last_store = row
        self.l1_written[word] = t
        core.t = t + 1
        core.instructions += 1
        core.poll_since = None

    def wait_thread(self, core: CoreTimes, reads: tuple[int, ...], writes: tuple[int, ...], tid: int) -> None:
        """CoprocessorDoneCheck: the load completes when thread ``tid`` has finished."""
        t = self.issue(core, reads)
        done = self.threads[tid].done
        if done > t:
            core.stalls["sync"] += done - t
            t = done
        for w in writes:
            core.ready[w] = t + 1
        core.t = t + 1
        core.instructions += 1
        core.poll_since = None

    def push(self, core: CoreTimes, reads: tuple[int, ...], tid: int) -> None:
        """A push into thread ``tid``'s FIFO: it waits while the FIFO is full."""
        t = self.issue(core, reads)
        th = self.threads[tid]
        depth = self.params.fifo_depth
        ahead = th.pushed - th.entries      # pushed, not yet through the gate (observed)
        gate = None
        if ahead < depth:
            # the entry `depth` before this one has passed the gate: at passed[-(depth - ahead)]
            back = depth - ahead
            if back <= len(th.passed):
                gate = th.passed[-back]
        else:
            # that entry has not been seen yet (a FIFO shallower than the functional one, which
            # takes up to 29): it passes no earlier than one a cycle after the thread's gate is
            # free and gate_latency after its push — a lower bound, exact from depth 29 up
            index = ahead - depth
            gate = max(th.front + index, th.arrivals[index] + self.params.gate_latency)
        if gate is not None and gate > t:
            core.stalls["fifo"] += gate - t
            t = gate
        th.arrivals.append(t)
        th.pushed += 1
        if self.timeline is not None:
            self.timeline.pushes.append((tid, t))
        core.t = t + 1
        core.instructions += 1
        core.poll_since = None

    # ------------------------------------------------------------------ Tensix threads

    def occupancy(self, mnemonic: str, unit: str, expanded: bool) -> int:
        p = self.params
        if unit == "MATH":
            if mnemonic in MATRIX_WORK:
                return p.matrix_expanded_cycles if expanded else p.matrix_pushed_cycles
            return 1
        if unit == "THCON":
            return p.thcon_cycles if mnemonic in THCON_LONG else 1
        if unit == "SFPU":
            return p.sfpu_cycles
        if unit == "UNPACK":
            return p.unpack_cycles if mnemonic == "ttunpacr" else 1
        if unit == "PACK":
            return p.pack_cycles if mnemonic == "ttpacr" else 1
        return 1

    def tensix(self, tid: int, mnemonic: str, unit: str, expanded: bool, popped: int,
               dest: tuple[frozenset[int], bool] | None = None, stall: View | None = None,
               dest_read: frozenset[int] | None = None, releases: int = 0, block: int = 0,
               latch: tuple[int, tuple[str, ...]] | None = None) -> None:
        """Thread ``tid`` passed ``mnemonic`` (of ``unit``; ``expanded``: made by a MOP or
        REPLAY) through its gate: when, and how long its unit is busy.  ``popped``: the
        FIFO entries the thread has popped, this one's (or its MOP's) included — entries
        the replay expander recorded without executing retire unseen, one a cycle.
        ``dest``: the aligned 8x16 Dest blocks a matrix-unit instruction wrote and whether
        it read them first (accumulated): Dst.md's window stalls it (:meth:`_dest_ready`);
        ``dest_read``: the blocks a PACR packs from, which the window stalls too.
        ``stall``: the instruction as the automatic stall logic sees it (:meth:`_accept`).
        ``releases``: the SEMWAIT latches of the thread whose wait the functional run saw
        end with an instruction held (``thread.sem_releases``); one more than the model
        knows makes this instruction, or the first backend one after it (a MOP's
        expansion), the one held (:meth:`_released`).  ``block``: the block-mask bits that
        catch the instruction at the gate (WaitGate.md); ``latch``: what a STALLWAIT (or a
        SEMWAIT without conditions) latches — its block mask and :func:`stall_waits` —
        which holds the thread's caught instructions (:meth:`_stall_latched`); without it
        a STALLWAIT waits on itself for every unit to drain."""
        th = self.threads[tid]
        while th.entries < popped - 1:
            arrival = th.arrivals[0] + self.params.gate_latency if th.arrivals else th.front
            gate = max(th.front, arrival)
            th.front = gate + 1
            self._entry_passed(th, gate)
        if expanded:
            # one a cycle after the MOP/REPLAY that made it reached the expander
            arrival = th.arrivals[0] + self.params.gate_latency if th.arrivals else th.front
        elif th.arrivals:
            arrival = th.arrivals[0] + self.params.gate_latency
        else:                    # pushed before the model saw it (a snapshot from before): now
            arrival = th.front
        t = th.front
        if arrival > t:
            th.waits["empty"] += arrival - t
            t = arrival
        if releases != th.sem_releases:
            th.sem_releases, th.sem_held = releases, True
        if mnemonic in FRONT_END or not unit:
            self._front_end(th, mnemonic, expanded, t)
            return
        t = self._gate_waits(th, mnemonic, t, block, mnemonic == "ttstallwait" and latch is None)
        held = dest[0] if dest is not None and dest[1] else dest_read
        if held and self.params.dest_window:
            ready = self._dest_ready(held)
            if ready > t:
                th.waits["dest"] += ready - t
                t = ready
        occ = self.occupancy(mnemonic, unit, expanded)
        start = self._accept(th, unit, mnemonic, stall, t, occ)
        if self.l1_note is not None:          # its L1 accesses may hold the unit longer
            occ = self._l1_clients(th, unit, start, occ)
        if dest is not None:
            written = self.dest_written
            for block in dest[0]:
                written[block] = start
        if self.timeline is not None:
            self.timeline.spans.append((unit, start, occ, tid, mnemonic))
        end = start + occ
        self._effects(unit, mnemonic, end)
        if mnemonic == "ttsemwait":          # latched: it takes effect on the next cycle
            th.latch_at = start + 1
            th.stall_latch = None             # and replaces a latched STALLWAIT
        if latch is not None:
            self._stall_latched(th, latch, start)
        unit_end = th.unit_end
        if end > unit_end.get(unit, 0):
            unit_end[unit] = end
        th.front = start + 1
        if end > th.done:
            th.done = end
        th.instructions += 1
        if expanded:
            th.expanded += 1
            if th.expansion_start is None:
                th.expansion_start = start
        else:
            self._entry_passed(th, start)

    def _accept(self, th: ThreadTimes, unit: str, mnemonic: str, stall: View | None, t: int, occ: int) -> int:
        """When ``unit`` accepts the instruction: the first time ``>= t`` it has ``occ`` free
        cycles and refuses nothing of it.  An instruction may make its unit refuse others on
        the cycles after it (:mod:`tessera_cycles.auto_stalls`: SFPSWAP.md, SFPSHFT2.md,
        SFPMAD.md, MOVD2A.md …); the thread that presents a refused one is stalled by the
        hardware (``sfpu`` / ``fpu`` in its waits), whichever thread's instruction made the
        unit refuse it.  A refusal binds the instructions the model sees after the one that
        made it (for one thread: every later one).  Books the unit; returns the start."""
        cal = self.unit(unit)
        free = cal.first_free(t, occ)
        th.waits["unit"] += free - t
        start = free
        bars = self.bars.get(unit)
        if bars:
            reads = stall.reads if stall is not None else EMPTY_LREGS
            while any(bar.refuses(mnemonic, reads) for bar in bars.get(start, ())):
                start = cal.first_free(start + 1, occ)
            if start > free:
                th.waits[STALL_CAUSE.get(unit, "unit")] += start - free
        cal.book(start, occ)
        if stall is not None and stall.bar is not None:
            self._bar(unit, start, stall.bar)
        return start

    def _bar(self, unit: str, start: int, bar: Bar) -> None:
        """``unit`` accepted an instruction at ``start`` that makes it refuse ``bar`` on the
        cycles after; refusals far behind the latest are dropped (as the calendars' intervals)."""
        bars = self.bars.get(unit)
        if bars is None:
            bars = self.bars[unit] = {}
        for cycle in range(start + 1, start + 1 + bar.cycles):
            got = bars.get(cycle)
            bars[cycle] = (bar,) if got is None else (*got, bar)
        if len(bars) > BAR_HORIZON:
            low = start - BAR_HORIZON // 2
            for cycle in [c for c in bars if c < low]:
                del bars[cycle]

    def _l1_clients(self, th: ThreadTimes, unit: str, start: int, occ: int) -> int:
        """The instruction ``unit`` started at ``start`` for ``occ`` cycles accessed L1 as
        :attr:`l1_note` says: book the accesses on L1's ports and banks
        (:meth:`L1Ports.clients`, from ``start``) and return how long the unit is busy —
        ``occ``, or as long as the accesses take at their clients' rates if longer (an XMOV
        holds the mover for its transfer, Mover.md), plus the cycles they waited for a port
        or bank another client or a core held (``l1`` in the thread's waits).  The unit's
        booking grows to match where its calendar is free."""
        note, self.l1_note = self.l1_note, None
        if self.l1 is None or not note or not self.params.l1_coprocessor:
            return occ
        free, done = self.l1.clients(note, start)
        if done > free:
            th.waits["l1"] += done - free
        busy = max(occ, free - start) + done - free
        if busy > occ:
            cal = self.unit(unit)
            if cal.first_free(start + occ, busy - occ) == start + occ:
                cal.book(start + occ, busy - occ)
                cal.issued -= 1                  # the same instruction
        return busy

    def _dest_ready(self, blocks: frozenset[int]) -> int:
        """When every block in ``blocks`` can be read: Dst.md — for four cycles after an
        instruction writes Dest, the aligned 8x16 block it wrote cannot be read, and the
        hardware stalls a matrix-unit (or PACR) reader (``dest_window`` cycles)."""
        written = self.dest_written
        last = max((written.get(b, -1 << 62) for b in blocks), default=-1 << 62)
        return last + self.params.dest_window + 1

    def _front_end(self, th: ThreadTimes, mnemonic: str, expanded: bool, t: int) -> None:
        """An instruction the expanders consume (MOP, REPLAY, MOP_CFG, NOP): no unit."""
        if expanded or mnemonic not in ("ttmop", "ttreplay"):
            gate = t
        else:  # a MOP/REPLAY leaves the FIFO when its first expansion did (observed after them)
            gate = th.expansion_start if th.expansion_start is not None else t
            th.expansion_start = None
        if not expanded:
            self._entry_passed(th, gate)
        th.front = max(th.front, t + (0 if mnemonic in ("ttmop", "ttreplay") else 1))
        th.instructions += 1

    def _released(self, th: ThreadTimes, t: int) -> int:
        """The instruction at ``t`` is the one a SEMWAIT latch held until its semaphores
        met its conditions (SEMWAIT.md): it goes on one cycle after the semaphores last
        changed, or after the latch took effect if they changed before — the block mask
        holds the instruction right after SEMWAIT for at least a cycle.  The functional
        run released it once the semaphore operation that met the conditions had run, so
        that operation's end is in :attr:`sem_changed` (the latest change the model has
        seen: a choice, on the side of waiting, when another change came later in model
        time).  A latch the functional run found met before it held anything holds
        nothing here: the hold follows the functional run's release, not the block mask."""
        th.sem_held = False
        ready = max(self.sem_changed, th.latch_at) + 1
        if ready > t:
            th.waits["sync"] += ready - t
            t = ready
        return t

    def _stall_latched(self, th: ThreadTimes, latch: tuple[int, tuple[str, ...]], start: int) -> None:
        """A STALLWAIT accepted at ``start`` latches ``latch`` (block mask, what it waits
        for): its conditions are met when everything they name has finished — the thread's
        own instructions in a unit, any thread's in the mover or the configuration unit, the
        source banks made valid (STALLWAIT.md) — as far as the model has seen; the mask is
        removed one cycle later, and not before the cycle after next (the latch takes effect
        on the next cycle: the instruction right after it is held at least one cycle)."""
        mask, waits = latch
        met = start + 1
        for what in waits:
            if what == "src":
                when = self.src_valid
            elif what.endswith("*"):
                cal = self.units.get(what[:-1])
                when = cal.last_end if cal is not None else 0
            else:
                when = th.unit_end.get(what, 0)
            if when > met:
                met = when
        th.stall_latch = (mask, met + 1)

    def _gate_waits(self, th: ThreadTimes, mnemonic: str, t: int, block: int, drain: bool) -> int:
        """What the wait gate holds ``mnemonic`` (caught by the block-mask bits ``block``)
        for, beyond its unit: the time it may go on.  A latched SEMWAIT (:meth:`_released`)
        or STALLWAIT (:meth:`_stall_latched`) holds it; STALLWAIT and SEMWAIT themselves go
        on at once, except a STALLWAIT whose mask the model cannot read (``drain``), which
        waits for every unit to drain."""
        if th.sem_held:
            t = self._released(th, t)
        if th.stall_latch is not None:
            mask, release = th.stall_latch
            if release <= t:                   # met by now: forgotten
                th.stall_latch = None
            elif block & mask:
                th.waits["sync"] += release - t
                t = release
                th.stall_latch = None
        if drain:
            drained = max((u.last_end for u in self.units.values()), default=0)
            if drained > t:
                th.waits["sync"] += drained - t
                t = drained
        if mnemonic in MATRIX_WORK and self.src_valid > t:
            th.waits["source"] += self.src_valid - t
            t = self.src_valid
        return t

    def _effects(self, unit: str, mnemonic: str, end: int) -> None:
        """What later waits learn from an instruction that finishes at ``end``."""
        if unit == "UNPACK" or mnemonic == "ttsetdvalid":
            if end > self.src_valid:
                self.src_valid = end
        elif unit == "SYNC" and mnemonic in ("ttsempost", "ttsemget", "ttseminit"):
            if end > self.sem_changed:
                self.sem_changed = end

    def _entry_passed(self, th: ThreadTimes, gate: int) -> None:
        if th.arrivals:
            th.arrivals.popleft()
        th.entries += 1
        th.passed.append(gate)
        if self.timeline is not None:
            self.timeline.passes.append((th.tid, gate))
        if len(th.passed) > MAX_FIFO_DEPTH + 2:
            th.passed.popleft()
        if gate + 1 > th.done:
            th.done = gate + 1
        if th.entries & 1023 == 0:   # old intervals of the units can no longer be asked for
            low = min(x.front for x in self.threads if x.pushed > x.entries) if any(
                x.pushed > x.entries for x in self.threads) else th.front
            for cal in self.units.values():
                cal.forget_before(low - 4096)

    # ------------------------------------------------------------------ reporting

    def report(self) -> dict[str, Any]:
        units = {name: {"instructions": u.issued, "busy": u.busy,
                        "utilisation": round(u.busy / max(self.now(), 1), 4)} for name, u in sorted(self.units.items())}
        return {"cores": {n: c.report() for n, c in sorted(self.cores.items())},
                "threads": {f"t{th.tid}": th.report() for th in self.threads}, "units": units,
                "l1": self.l1.report() if self.l1 is not None else {}}
