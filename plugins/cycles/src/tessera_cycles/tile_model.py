"""The tile extension's timing: RISC-V harts and the engines their tile operations run on,
in one time base.

This is the ``tile`` cycle model's arithmetic, independent of Tessera (the glue that feeds
it is :mod:`tessera_cycles.tilex`).  It follows ``../shared/spec/tile.md`` 9.3 (one LSU,
TMA, MMA and ALU engine per thread, engines concurrent, each completing in order) and 9.6
(the latency/bandwidth placeholders, the defaults of ``tile.lat_*``/``tile.bw_*``):

* **A hart** is the ``inorder`` model's five-stage pipeline
  (:class:`~tessera_cycles.inorder.InOrderPipeline`, default parameters); an ACE word is a
  single-cycle instruction.
* **An operation** dispatched in cycle ``d`` (the cycle its dispatching word is in EX)
  starts on its engine at the first free time ``s >= d`` (a
  :class:`~tessera_cycles.tensix_model.UnitCalendar` per engine), keeps it busy ``b``
  cycles and completes at ``c = max(s + b + latency, c_prev)`` (in order).  ``b`` and the
  latency split tile.md 9.6's price: LSU ``ceil(bytes / bw)`` and ``lat_lsu_global`` or
  ``lat_lsu_shared``; TMA ``ceil(bytes / bw_tma)`` and ``lat_tma + tma_multicast`` per extra
  target; MMA ``count * ceil(16*16*K / rate)`` (rate by input width) and ``lat_mma``; ALU one
  cycle a row and ``lat_alu``, SFU ops ``sfu_row_cycles`` a row and ``lat_sfu``.  ``b`` is
  at least 1.  So an operation alone on its engine takes exactly the functional timed
  mode's price (``CostModel``), and back-to-back operations overlap their latencies.
* **A wait** (``t_wait``, a successful mbarrier ``try_wait``) holds the waiting word in EX
  until the completion it waits for; the cycles are the hart's ``tile`` stalls.

With ``--cycles-trace`` a :class:`TileTimeline` also records every operation's times and
every stall (:mod:`tessera_cycles.tile_timeline` draws them); without it nothing is kept.
"""

from __future__ import annotations

from typing import Any

import attrs

from tessera_cycles.inorder import InOrderParams, InOrderPipeline
from tessera_cycles.params import boolean, non_negative, positive
from tessera_cycles.tensix_model import UnitCalendar

__all__ = ["ENGINES", "PARAM_DOCS", "EngineTimes", "TileHart", "TileParams", "TileTimeline", "TileTimes"]

#: the engines of one thread (tile.md 9.3), in report order
ENGINES = ("lsu", "tma", "mma", "alu")


@attrs.frozen
class TileParams:
    """The ``tile`` model's parameters (``--set cycles.NAME=V``); defaults = tile.md 9.6."""

    lat_lsu_global: int = attrs.field(default=300, validator=non_negative)
    bw_lsu_global: int = attrs.field(default=32, validator=positive)
    lat_lsu_shared: int = attrs.field(default=20, validator=non_negative)
    bw_lsu_shared: int = attrs.field(default=64, validator=positive)
    lat_tma: int = attrs.field(default=400, validator=non_negative)
    bw_tma: int = attrs.field(default=64, validator=positive)
    tma_multicast: int = attrs.field(default=8, validator=non_negative)
    lat_mma: int = attrs.field(default=8, validator=non_negative)
    mma_rate_8: int = attrs.field(default=1024, validator=positive)
    mma_rate_16: int = attrs.field(default=512, validator=positive)
    mma_rate_32: int = attrs.field(default=128, validator=positive)
    lat_alu: int = attrs.field(default=4, validator=non_negative)
    lat_sfu: int = attrs.field(default=8, validator=non_negative)
    sfu_row_cycles: int = attrs.field(default=2, validator=positive)
    caches: bool = attrs.field(default=True, validator=boolean)


PARAM_DOCS: dict[str, str] = {
    "lat_lsu_global": "cycles from a tile load/store to global memory leaving the LSU to its completion "
                      "(tile.lat_lsu_global)",
    "bw_lsu_global": "bytes per cycle the LSU moves to or from global memory (tile.bw_lsu_global)",
    "lat_lsu_shared": "the same latency for shared memory and L2B (tile.lat_lsu_shared)",
    "bw_lsu_shared": "bytes per cycle to or from shared memory and L2B (tile.bw_lsu_shared)",
    "lat_tma": "cycles from a TMA copy leaving the engine to its completion (tile.lat_tma)",
    "bw_tma": "bytes per cycle the TMA engine moves (tile.bw_tma)",
    "tma_multicast": "extra TMA latency per multicast target beyond the first (tile.md 9.6: 8)",
    "lat_mma": "MMA fill cycles after its last MAC (tile.lat_mma)",
    "mma_rate_8": "MACs per cycle of the MMA engine for 8-bit (and 4-bit) inputs",
    "mma_rate_16": "MACs per cycle for 16-bit inputs",
    "mma_rate_32": "MACs per cycle for 32-bit inputs",
    "lat_alu": "ALU cycles after its last row (tile.lat_alu; one row a cycle)",
    "lat_sfu": "SFU (transcendental TALU ops) cycles after its last row (tile.md 9.6: 8)",
    "sfu_row_cycles": "cycles the SFU takes per row (tile.md 9.6: 2)",
    "caches": "the harts' I and D caches (the inorder model's, default geometry); false = perfect memory",
}


def _ceil(a: int, b: int) -> int:
    return -(-a // b)


def price(params: TileParams, unit: str, args: tuple[Any, ...]) -> tuple[int, int]:
    """``(busy, latency)`` of one operation from what the functional executor priced it with
    (the ``CostModel`` method ``unit`` and its arguments)."""
    p = params
    if unit == "lsu":
        space, nbytes = args
        if space == "global":
            return max(1, _ceil(nbytes, p.bw_lsu_global)), p.lat_lsu_global
        return max(1, _ceil(nbytes, p.bw_lsu_shared)), p.lat_lsu_shared
    if unit == "tma":
        nbytes, targets = args
        return max(1, _ceil(nbytes, p.bw_tma)), p.lat_tma + p.tma_multicast * max(0, targets - 1)
    if unit == "mma":
        in_bits, k, count = args
        rate = p.mma_rate_8 if in_bits <= 8 else p.mma_rate_16 if in_bits <= 16 else p.mma_rate_32
        return max(1, count * _ceil(16 * 16 * k, rate)), p.lat_mma
    if unit == "alu":
        rows, sfu = args
        if sfu:
            return max(1, rows * p.sfu_row_cycles), p.lat_sfu
        return max(1, rows), p.lat_alu
    raise ValueError(f"unknown tile engine {unit!r}; expected one of: {', '.join(ENGINES)}")


class TileHart(InOrderPipeline):
    """A hart: the in-order pipeline, plus the dispatch time of its last word and waits."""

    def __init__(self, params: InOrderParams) -> None:
        super().__init__(params)
        self.waited = 0          # cycles its words were held waiting for tile operations
        self.ops = 0             # tile operations it dispatched

    def dispatch_time(self) -> int:
        """The cycle the last retired instruction was in EX (an ACE word makes no data access,
        so it left EX the cycle before ``_base``)."""
        return self._base - 1

    def wait_until(self, t: int) -> int:
        """Hold the last retired instruction in EX until cycle ``t`` at the earliest; the
        cycles it waited (charged to ``tile``)."""
        extra = t - self.dispatch_time()
        if extra <= 0:
            return 0
        self._base += extra
        self._control += extra
        self.waited += extra
        return extra

    def report(self) -> dict[str, Any]:
        rep = super().report()
        rep["stalls"]["tile"] = self.waited
        rep["tile_ops"] = self.ops
        return rep


class TileTimeline:
    """What happened when, for ``--cycles-trace`` (recorded only when asked: it grows with
    the run, and snapshots do not keep it)."""

    def __init__(self) -> None:
        #: per operation: (hart, engine, name, dispatch, start, busy, latency, done, priced
        #: with) — ``name`` the operation's form (``tld.g.us``), or the engine's when unknown
        self.ops: list[tuple[str, str, str, int, int, int, int, int, tuple[Any, ...]]] = []
        #: per wait that held its hart: (hart, what it waited for, from, until)
        self.stalls: list[tuple[str, str, int, int]] = []


class EngineTimes:
    """One engine of one thread: its busy calendar and its in-order completions."""

    def __init__(self, name: str) -> None:
        self.calendar = UnitCalendar(name)
        self.done = 0            # the latest completion (in order: every earlier one is done by then)
        self.queued = 0          # cycles operations waited for the engine after dispatch

    def run(self, at: int, busy: int, latency: int) -> int:
        start = self.calendar.reserve(at, busy)
        self.queued += start - at
        done = max(start + busy + latency, self.done)
        self.done = done
        return done


class TileTimes:
    """The harts and engines of one tile machine (kept in ``machine.ext["cycles"]``)."""

    def __init__(self, params: TileParams, hart_params: InOrderParams) -> None:
        self.params = params
        self.hart_params = hart_params
        self.harts: dict[str, TileHart] = {}
        self.engines: dict[str, EngineTimes] = {}
        #: per hart and LSU space: completion of each operation, in dispatch order
        self.lsu_done: dict[tuple[str, str], list[int]] = {}
        #: the latest completion of any TMA operation (an mbarrier wait waits for it)
        self.tma_done = 0
        #: timed mode: per engine, the dispatch cycles of the operations still in its queue
        self.pending: dict[str, list[int]] = {}
        #: timed mode: per engine, the newest operation seen in its queue (pickled with the
        #: queues, so a restored machine does not take a queued operation for a new one)
        self.last_pushed: dict[str, Any] = {}

    #: ``--cycles-trace`` (None: not asked; a class default, so snapshots made before it
    #: existed restore without it)
    timeline: TileTimeline | None = None

    def __getstate__(self) -> dict[str, Any]:
        state = dict(self.__dict__)
        state.pop("timeline", None)     # a snapshot keeps the times, not the drawing
        return state

    def hart(self, name: str) -> TileHart:
        got = self.harts.get(name)
        if got is None:
            got = self.harts[name] = TileHart(self.hart_params)
        return got

    def engine(self, hart: str, unit: str) -> EngineTimes:
        key = f"{hart}.{unit}"
        got = self.engines.get(key)
        if got is None:
            got = self.engines[key] = EngineTimes(key)
        return got

    def operation(self, hart: str, unit: str, args: tuple[Any, ...], at: int, name: str | None = None) -> int:
        """Put one operation dispatched by ``hart`` at cycle ``at`` on its engine; its completion
        (``name``: the operation's form, for the timeline)."""
        busy, latency = price(self.params, unit, args)
        engine = self.engine(hart, unit)
        queued = engine.queued
        done = engine.run(at, busy, latency)
        if self.timeline is not None:   # it started once it had queued behind the engine's earlier work
            start = at + engine.queued - queued
            self.timeline.ops.append((hart, unit, name or unit, at, start, busy, latency, done, args))
        self.hart(hart).ops += 1
        if unit == "lsu":
            self.lsu_done.setdefault((hart, "global" if args[0] == "global" else "shared"), []).append(done)
        elif unit == "tma" and done > self.tma_done:
            self.tma_done = done
        return done

    def stall(self, pipeline: TileHart, hart: str, what: str, until: int) -> None:
        """Hold the last word ``hart`` (its ``pipeline``) retired until ``until``: a wait for
        ``what``, drawn on the timeline when one is recorded."""
        since = pipeline.dispatch_time()
        if pipeline.wait_until(until) and self.timeline is not None:
            self.timeline.stalls.append((hart, what, since, until))

    def done(self, hart: str, units: tuple[str, ...]) -> int:
        """When every operation ``hart`` gave to ``units`` has completed."""
        return max([0, *(self.engines[k].done for k in (f"{hart}.{u}" for u in units) if k in self.engines)])

    def memory_done(self, hart: str, space: str, outstanding: int) -> int:
        """When at most ``outstanding`` of ``hart``'s LSU operations on ``space`` are left."""
        done = self.lsu_done.get((hart, space), [])
        return done[-(outstanding + 1)] if len(done) > outstanding else 0

    def now(self) -> int:
        harts = [h.cycles() for h in self.harts.values()]
        engines = [e.done for e in self.engines.values()]
        return max([0, *harts, *engines])

    def report(self) -> dict[str, Any]:
        clock = max(self.now(), 1)
        agents = {name: h.report() for name, h in sorted(self.harts.items())}
        units = {name: {"instructions": e.calendar.issued, "busy": e.calendar.busy, "queued": e.queued,
                        "done_at": e.done, "utilisation": round(e.calendar.busy / clock, 4)}
                 for name, e in sorted(self.engines.items())}
        return {"agents": agents, "units": units}
