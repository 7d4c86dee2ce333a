"""The ``tensix`` model on a running Tensix tile: what each retirement tells it.

:class:`TensixTile` is the timing model ``tessera_timing_model`` hands the core for the
``tensix-tile`` and ``tensix-tile-wh`` architectures.  It prices every instruction at one
cycle (each agent's own ``cycles`` counts its instructions) and keeps the tile's times in
:class:`~tessera_cycles.tensix_model.TileTimes`, fed by observers
(``tessera_execute_observe``: the fast engine keeps its blocks):

* a baby core's instruction — its kind from its row's timing class, its registers from
  ``Architecture.register_uses``, its data access from a journal watch over the tile's
  shared space and each core's own space (address and value: L1, local RAM, the wall
  clock, ``PC_BUF`` and the semaphores, the push window), a ``.ttinsn`` push to the
  core's own thread;
* a Tensix thread's instruction — its mnemonic and unit (``Encoding.unit``), whether an
  expander made it (``ins.issued_by``), and how many words the thread has popped; what
  the automatic stall logic sees of it (:func:`~tessera_cycles.auto_stalls.view`, once
  per decoded instruction); the block-mask bits that catch it at the wait gate and what
  a STALLWAIT latches (:func:`_gate`, once per decoded instruction); the Dest rows a
  matrix-unit instruction wrote or a PACR read, the L1 rows an unpacker, packer, the
  mover or ThCon accessed, and the SEMWAIT waits that held an instruction (notes the
  Tensix plugin leaves on the thread).

The wall clock a core reads (``RISCV_DEBUG_REG_WALL_CLOCK_L``) is that core's time in the
model (:meth:`local_time`), so a kernel timing itself with the clock, as the silicon
benchmarks do, reads the model.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from tessera_cycles.auto_stalls import View, view
from tessera_cycles.live import model_state, register_model
from tessera_cycles.params import parse
from tessera_cycles.tensix_model import MATRIX_WORK, stall_waits

__all__ = ["TensixTile"]

#: tile memory map (BlackholeA0 .../BabyRISCV/README.md "Memory map"; tessera_tensix.tile.memmap)
MEM_LOCAL_BASE, LOCAL_END = 0xFFB0_0000, 0xFFB0_2000
WALL_CLOCK = range(0xFFB1_21F0, 0xFFB1_21FC)
INSTRN_BUF_BASE, INSTRN_BUF_END = 0xFFE4_0000, 0xFFE7_0000
PC_BUF_BASE, PC_BUF_END = 0xFFE8_0000, 0xFFEB_0000
#: PC_BUF + 4: CoprocessorDoneCheck (tensix_sync); + 0x20 .. 0x3F: the semaphores
DONE_CHECK, SEMAPHORES = 4, range(0x20, 0x40)
#: the tile architectures this model times
TILES = ("tensix-tile", "tensix-tile-wh")
#: the Tensix architectures of their threads
THREAD_ARCHS = ("tensix", "tensix-wh")

READ = 0  # tessera.memory.watch.READ; journal entries are (kind, address, size, value)
#: coprocessor instructions whose unit may access L1 and note it (tessera_tensix.l1)
L1_NOTED = frozenset({"ttunpacr", "ttpacr", "ttxmov", "ttloadind", "ttstoreind", "ttatcas", "ttatincget",
                      "ttatincgetptr", "ttatswap"})


def applies(arch: Any) -> bool:
    """The machine's architecture is a tile, or the coprocessor alone (direct mode: its
    threads fetch their own words, so only the gates and the shared units are timed)."""
    return getattr(arch, "name", None) in TILES + THREAD_ARCHS


def covers(arch: Any) -> bool:
    """An agent the model times: a baby core (the tile's architecture) or a Tensix thread;
    or one without an architecture — the kernel runner's test host (tile/host.py), which
    stands for the PC on the other side of PCIe and takes no tile time."""
    return arch is None or getattr(arch, "name", None) in TILES + THREAD_ARCHS


def _own_thread(name: str) -> int:
    """The Tensix thread a core's ``.ttinsn`` pushes to (T<i> -> i, RISCV B -> T0)."""
    return int(name[-1]) if name.startswith("trisc") else 0


class TensixTile:
    """The ``tensix`` timing model of one tile machine (see the module doc)."""

    name = "tensix"

    def __init__(self, machine: Any, params: dict[str, Any]) -> None:
        from tessera_cycles.tensix_model import WORMHOLE_ICACHE, TensixParams, TileTimes

        self.params = parse(TensixParams, params)
        #: kept in the machine's extensions, so a snapshot keeps the times
        self.tile: TileTimes = model_state(machine, self.name, {"tile": TileTimes(self.params)})["tile"]
        if getattr(getattr(machine, "arch", None), "name", None) == "tensix-tile-wh":
            self.tile.icache_sizes = dict(WORMHOLE_ICACHE)
        #: the journal watches' list: (kind, address, size, value) of every completed access
        self.journal: list[tuple[int, int, int, int]] = []
        self.l1_end = 0
        self._blocks: dict[tuple[Any, ...], frozenset[int]] = {}   # Dest rows -> blocks (_dest_blocks)
        register_model(machine, self)

    # ------------------------------------------------------------------ the core's timing model

    def cycles(self, ins: Any) -> int:
        return 1

    def now(self, machine: Any) -> int:
        return self.tile.now()

    def local_time(self, agent: Any) -> int:
        """The time ``agent`` (a core reading the wall clock) has reached."""
        core = self.tile.cores.get(getattr(agent, "name", ""))
        return core.t if core is not None else self.tile.now()

    def watches(self, space: Any) -> list[Any]:
        from tessera.memory import Watch

        if space.name == "main":
            l1 = next((r for r in space.regions if r.name.lower().startswith("l1")), None)
            self.l1_end = l1.end if l1 is not None else 0x18_0000
            return [Watch(0, space.limit, journal=self.journal)]
        if space.name.endswith(".own"):
            return [Watch(0, space.limit, journal=self.journal)]
        return []

    # ------------------------------------------------------------------ --trace perfetto

    def record_timeline(self) -> bool:
        """A Perfetto tracer starts (docs/hooks.md, timing models): record the units' spans
        and the FIFOs from now on, as ``--cycles-trace`` does."""
        if self.tile.timeline is None:
            from tessera_cycles.tensix_model import Timeline

            self.tile.timeline = Timeline()
        return True

    def trace_events(self) -> list[dict[str, Any]]:
        """The recorded timeline as Chrome trace events (unit spans, FIFO and IPC counters)."""
        from tessera_cycles.timeline import event_dicts

        return event_dicts(self.tile.timeline) if self.tile.timeline is not None else []

    # ------------------------------------------------------------------ observers

    def observer(self, arch: Any, ins: Any) -> Callable[[Any, Any], None] | None:
        name = getattr(arch, "name", None)
        if name in THREAD_ARCHS:
            return self._l1_noted(ins, self._thread_observer(ins, "wh" if name == "tensix-wh" else "bh"))
        if name in TILES:
            return self._core_observer(arch, ins)
        return None

    def _thread_observer(self, ins: Any, chip: str) -> Callable[[Any, Any], None]:
        """A Tensix thread's instruction (of ``chip``, "bh" or "wh"): what the automatic stall
        logic sees of it is worked out here, once per decoded instruction (auto_stalls.view)."""
        tile, journal = self.tile, self.journal
        mnemonic = ins.mnemonic
        unit = ins.encoding.unit
        expanded = getattr(ins, "issued_by", None) is not None
        stall = view(chip, mnemonic, ins) if self.params.auto_stalls else None
        gate = _gate(ins, chip)
        if mnemonic in MATRIX_WORK and self.params.dest_window:
            return self._dest_observer(ins, mnemonic, unit, expanded, stall, gate)
        if mnemonic == "ttpacr" and self.params.dest_window:
            return self._pack_observer(mnemonic, unit, expanded, stall, gate)
        block, latch = gate

        def observe(thread: Any, ins: Any) -> None:
            if journal:
                journal.clear()
            tile.tensix(thread.tid, mnemonic, unit, expanded, getattr(thread, "popped", 0), None, stall, None,
                        getattr(thread, "sem_releases", 0), block, latch)

        return observe

    def _l1_noted(self, ins: Any, observe: Callable[[Any, Any], None]) -> Callable[[Any, Any], None]:
        """``observe``, for an instruction whose unit accesses L1 (:data:`L1_NOTED`) preceded
        by handing the model the accesses the Tensix plugin noted on the thread
        (``thread.l1_note``, tessera_tensix.l1), which it books on L1's ports and banks."""
        if ins.mnemonic not in L1_NOTED or self.tile.l1 is None or not self.params.l1_coprocessor:
            return observe
        tile = self.tile

        def observe_l1(thread: Any, ins: Any) -> None:
            note = getattr(thread, "l1_note", None)
            if note is not None:
                thread.l1_note = None
            tile.l1_note = note
            observe(thread, ins)
            tile.l1_note = None

        return observe_l1

    def _dest_observer(self, ins: Any, mnemonic: str, unit: str, expanded: bool,
                       stall: View | None, gate: Gate) -> Callable[[Any, Any], None]:
        """A matrix-unit instruction: the Dest blocks it wrote, which the Tensix plugin notes
        on the thread (``thread.dest_note``, ``tessera_tensix.hazards``), and whether it read
        them (it accumulates), for Dst.md's read-after-write window."""
        hazards = _hazards()
        reads = bool(hazards.accumulates(ins)) if hazards is not None else False
        dest_blocks = hazards.dest_blocks if hazards is not None else None
        tile, journal, blocks_of = self.tile, self.journal, self._dest_blocks
        block = gate[0]

        def observe(thread: Any, ins: Any) -> None:
            if journal:
                journal.clear()
            note = getattr(thread, "dest_note", None)
            dest = None
            if note is not None and dest_blocks is not None:
                thread.dest_note = None
                dest = (blocks_of(note, dest_blocks), reads)
            tile.tensix(thread.tid, mnemonic, unit, expanded, getattr(thread, "popped", 0), dest, stall, None,
                        getattr(thread, "sem_releases", 0), block)

        return observe

    def _pack_observer(self, mnemonic: str, unit: str, expanded: bool,
                       stall: View | None, gate: Gate) -> Callable[[Any, Any], None]:
        """A PACR: the Dest blocks it packed from, which the Tensix plugin notes on the thread
        (``thread.pack_note``: ``(rows, Dst32b?)`` per Dest read, ``tessera_tensix.pack``), for
        Dst.md's read-after-write window, which holds a PACR reader too."""
        hazards = _hazards()
        dest_blocks = hazards.dest_blocks if hazards is not None else None
        tile, journal, blocks_of = self.tile, self.journal, self._dest_blocks
        block = gate[0]

        def observe(thread: Any, ins: Any) -> None:
            if journal:
                journal.clear()
            note = getattr(thread, "pack_note", None)
            blocks = None
            if note is not None and dest_blocks is not None:
                thread.pack_note = None
                blocks = blocks_of(note[0], dest_blocks)
                for more in note[1:]:
                    blocks = blocks | blocks_of(more, dest_blocks)
            tile.tensix(thread.tid, mnemonic, unit, expanded, getattr(thread, "popped", 0), None, stall, blocks,
                        getattr(thread, "sem_releases", 0), block)

        return observe

    def _dest_blocks(self, note: tuple[Any, bool], dest_blocks: Callable[[Any, bool], frozenset[int]]
                     ) -> frozenset[int]:
        """``dest_blocks`` of a note, remembered per distinct rows (a kernel writes few)."""
        rows, wide = note
        key = (rows.tobytes(), rows.dtype.str, wide) if getattr(rows, "ndim", 0) else (int(rows), wide)
        cache = self._blocks
        got = cache.get(key)
        if got is None:
            if len(cache) > 4096:
                cache.clear()
            got = cache[key] = dest_blocks(rows, wide)
        return got

    def _core_observer(self, arch: Any, ins: Any) -> Callable[[Any, Any], None]:
        """A baby core's instruction: its fetch (when the model has instruction caches),
        then its timing.  The fetch is looked up only when the core leaves the line it
        fetched last, so straight-line code pays one comparison per instruction."""
        timed = self._core_timing(arch, ins)
        address = getattr(ins, "address", None)
        if not self.params.icache or address is None:
            return timed
        tile = self.tile
        core_of, fetch = tile.core, tile.fetch

        def observe_fetched(agent: Any, ins: Any) -> None:
            core = core_of(agent.name)
            if not core.fetch_lo <= address < core.fetch_end:
                fetch(core, address)
            timed(agent, ins)

        return observe_fetched

    def _core_timing(self, arch: Any, ins: Any) -> Callable[[Any, Any], None]:
        tile, journal = self.tile, self.journal
        params = self.params
        timing = ins.encoding.timing
        declare = getattr(arch, "register_uses", None)
        uses = declare(ins) if declare is not None else None
        dynamic = uses if callable(uses) else None
        reads: tuple[int, ...] = ()
        writes: tuple[int, ...] = ()
        if uses is not None and dynamic is None:
            reads = tuple(i for f, i in uses[0] if f == "x" and i)
            writes = tuple(i for f, i in uses[1] if f == "x" and i)
        core_of = tile.core

        if timing == "ttinsn":
            def observe_push(agent: Any, ins: Any) -> None:
                if journal:
                    journal.clear()
                tile.push(core_of(agent.name), (), _own_thread(agent.name))

            return observe_push
        if timing == "mul":
            latency = params.mul_latency

            def observe_mul(agent: Any, ins: Any) -> None:
                tile.simple(core_of(agent.name), reads, writes, latency)

            return observe_mul
        if timing == "div":
            def observe_div(agent: Any, ins: Any) -> None:
                tile.divide(core_of(agent.name), reads, writes)

            return observe_div
        if timing in ("load", "store", "amo"):
            return self._memory_observer(reads, writes, dynamic)
        if dynamic is not None:
            def observe_dynamic(agent: Any, ins: Any) -> None:
                if journal:
                    journal.clear()
                r, w = dynamic(agent)
                tile.simple(core_of(agent.name), tuple(i for f, i in r if f == "x" and i),
                            tuple(i for f, i in w if f == "x" and i), 1, False)

            return observe_dynamic

        pure = timing not in ("csr", "system", "trap")

        def observe(agent: Any, ins: Any) -> None:
            tile.simple(core_of(agent.name), reads, writes, 1, pure)

        return observe

    def _memory_observer(self, reads: tuple[int, ...], writes: tuple[int, ...],
                         dynamic: Any) -> Callable[[Any, Any], None]:
        tile, journal, params = self.tile, self.journal, self.params
        model = self

        def observe_memory(agent: Any, ins: Any) -> None:
            core = tile.core(agent.name)
            r, w = reads, writes
            if dynamic is not None:
                dr, dw = dynamic(agent)
                r = tuple(i for f, i in dr if f == "x" and i)
                w = tuple(i for f, i in dw if f == "x" and i)
            if not journal:   # nothing completed (an access the journal does not see): one slot
                tile.simple(core, r, w, 1, False)
                return
            kind, address, _size, value = journal[-1]
            journal.clear()
            if kind == READ:
                if address < model.l1_end:
                    tile.load(core, r, w, params.l1_load_latency, address, value, True,
                              tile.l1_written.get(address >> 2), True)
                elif MEM_LOCAL_BASE <= address < LOCAL_END:
                    tile.load(core, r, w, params.local_load_latency, address, value, True, None)
                elif PC_BUF_BASE <= address < PC_BUF_END:
                    offset = address & 0xFFFF
                    if offset == DONE_CHECK and agent.name.startswith("trisc"):
                        tile.wait_thread(core, r, w, _own_thread(agent.name))
                    elif offset in SEMAPHORES:
                        tile.load(core, r, w, 1, address, value, True, tile.sem_changed)
                    else:
                        tile.load(core, r, w, 1, address, value, False, None)
                elif address in WALL_CLOCK:   # neither a poll nor its end: a poll may wait between delays
                    tile.load(core, r, w, 1, address, value, None, None)
                else:   # configuration, mailboxes, devices: one cycle, and the end of any poll
                    tile.load(core, r, w, 1, address, value, False, None)
                return
            if address < model.l1_end:
                tile.store_l1(core, r, address)
            elif INSTRN_BUF_BASE <= address < INSTRN_BUF_END:
                window = (address - INSTRN_BUF_BASE) >> 16
                tile.push(core, r, window if agent.name == "brisc" else _own_thread(agent.name))
            else:
                tile.simple(core, r, w, 1, False)

        return observe_memory

    # ------------------------------------------------------------------ reporting

    def report(self, machine: Any) -> dict[str, Any]:
        """Per core and thread: instructions, cycles, stalls; per unit: busy cycles; per
        coprocessor L1 client: instructions, rows, cycles waited (``l1_clients``)."""
        import attrs

        rep = self.tile.report()
        agents = {**rep["cores"], **rep["threads"]}
        return {"model": self.name, "clock": int(machine.clock), "params": attrs.asdict(self.params),
                "agents": agents, "units": rep["units"], "l1_clients": rep["l1"]}


#: an instruction at its thread's wait gate: the block-mask bits that catch it, and what it
#: latches if it is a STALLWAIT (or a SEMWAIT without conditions): block mask, waits
Gate = tuple[int, "tuple[int, tuple[str, ...]] | None"]


def _gate(ins: Any, chip: str) -> Gate:
    """What the wait gate makes of decoded ``ins`` on ``chip`` (``tessera_tensix.waitgate``,
    once per decoded instruction).  Under another Tensix implementation: caught by nothing,
    latching nothing (a STALLWAIT then waits on itself for every unit to drain)."""
    try:
        from tessera_tensix import waitgate
    except ImportError:
        return 0, None
    latch = waitgate.latch_of(ins, chip)
    stall = None
    if latch is not None and latch.opcode == "STALLWAIT":
        stall = (latch.block, stall_waits(chip, latch.conditions))
    return waitgate.instruction_bits(ins, chip), stall


def _hazards() -> Any:
    """The Tensix plugin's Dest-note helpers (``tessera_tensix.hazards``), or None under
    another Tensix implementation, which leaves no notes to read."""
    try:
        from tessera_tensix import hazards
    except ImportError:
        return None
    return hazards
