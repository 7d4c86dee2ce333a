"""The ``tile`` model on a running tile machine: what each retirement and each priced
operation tells it.

:class:`TileCycles` is the timing model ``tessera_timing_model`` hands the core for the
``tile`` architecture (RV64IM harts with the ACE tile extension).  The harts' ordinary
instructions feed the ``inorder`` pipeline exactly as :class:`~tessera_cycles.riscv.RiscvInOrder`
does (it is a subclass); an ACE word is a single-cycle instruction, and the times of the
tile operations it dispatches are :mod:`tessera_cycles.tile_model`'s.  What an operation
costs comes from the functional executor itself: the tile system's cost model
(``machine.tile.cost``, the hook arch_tile's ``engines`` module offers a cycle model) is
replaced by :class:`ObservedCost`, which returns the same prices and tells the model
which engine priced what:

* eager and checker mode (and synchronous operations in timed mode): the hart performs
  the operation inside its dispatching word, so the word's observer finds it priced and
  puts it on the engine at the word's cycle;
* timed mode: the word pushes the operation into its engine's queue (the observer sees a
  new last item and notes the word's cycle); the engine prices it when the scheduler
  runs it, and the model puts it on the engine at the noted cycle — so both modes give
  the same times.

A lone W1 of the control class is decoded once (the sequencer's own ``identify``):
``t_wait`` holds the hart until what it names has completed, a ``try_wait`` that
returned 1 until the latest TMA completion.  Nothing here changes architectural state.

With ``--cycles-trace`` the times record a :class:`~tessera_cycles.tile_model.TileTimeline`
(each operation named by its form) and the harts' counters are sampled as they retire
(:mod:`tessera_cycles.tile_timeline`); without it the observers are the plain ones.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from tessera_cycles.live import model_state, register_model
from tessera_cycles.params import parse
from tessera_cycles.riscv import RiscvInOrder
from tessera_tile.engines import CostModel

__all__ = ["ObservedCost", "TileCycles"]


class ObservedCost(CostModel):
    """``machine.tile.cost`` under the model: the functional prices, each also told to the model.

    Plain data only (a snapshot pickles it with the tile system): the model's times, the
    list of operations the running hart priced, the model's memory journal."""

    def __init__(self, cfg: Any, system: Any, times: Any, priced: list[Any], journal: list[Any]) -> None:
        super().__init__(cfg)
        self.system = system
        self.times = times
        self.priced = priced
        self.journal = journal

    def _seen(self, unit: str, args: tuple[Any, ...]) -> None:
        machine = self.system.machine
        agent = machine.scheduler.current(machine)
        engine_of = getattr(agent, "thread", None)
        name = None if self.times.timeline is None else getattr(self.pricing, "form", None)
        if engine_of is not None and getattr(agent, "unit", None) == unit:   # timed mode: the engine's turn
            self.journal.clear()            # its own memory traffic is not a hart's data access
            pending = self.times.pending.get(agent.name)
            at = pending.pop(0) if pending else self.times.hart(engine_of).dispatch_time()
            self.times.operation(engine_of, unit, args, at, name)
            return
        self.priced.append((unit, args, name))

    def lsu(self, space: str, nbytes: int) -> int:
        self._seen("lsu", (space, nbytes))
        return super().lsu(space, nbytes)

    def tma(self, nbytes: int, targets: int) -> int:
        self._seen("tma", (nbytes, targets))
        return super().tma(nbytes, targets)

    def mma(self, in_bits: int, k: int, count: int) -> int:
        self._seen("mma", (in_bits, k, count))
        return super().mma(in_bits, k, count)

    def alu(self, rows: int, sfu: bool) -> int:
        self._seen("alu", (rows, sfu))
        return super().alu(rows, sfu)


class TileCycles(RiscvInOrder):
    """The ``tile`` timing model of one machine (see the module doc)."""

    name = "tile"
    #: a hart's dispatch cycle is read as each tile operation retires: per-retirement pipelines
    batched = False

    def __init__(self, machine: Any, params: dict[str, Any]) -> None:
        from tessera_cycles.inorder import InOrderParams
        from tessera_cycles.tile_model import TileParams, TileTimes

        tile_params = parse(TileParams, params)
        self.params = InOrderParams(caches=tile_params.caches)
        self.tile_params = tile_params
        self.times: TileTimes = model_state(machine, self.name,
                                            {"times": TileTimes(tile_params, self.params)})["times"]
        self.pipelines = self.times.harts   # type: ignore[assignment]
        self.journal = []
        self._conditions = {}
        self.machine = machine
        self._priced: list[tuple[str, tuple[Any, ...], str | None]] = []
        self._installed = False
        register_model(machine, self)

    # ------------------------------------------------------------------ the core's timing model

    def now(self, machine: Any) -> int:
        return self.times.now()

    def pipeline(self, agent: Any) -> Any:
        return self.times.hart(agent.name)

    def _install(self) -> None:
        """Put :class:`ObservedCost` in the tile system (once the board has built it)."""
        system = getattr(self.machine, "tile", None)
        if system is None:
            return
        cost = system.cost
        if isinstance(cost, ObservedCost):      # restored from a snapshot: feed this model
            cost.times, cost.priced, cost.journal = self.times, self._priced, self.journal
        else:
            system.cost = ObservedCost(cost.cfg, system, self.times, self._priced, self.journal)
        self._installed = True

    # ------------------------------------------------------------------ observers

    def observer(self, arch: Any, ins: Any) -> Callable[[Any, Any], None] | None:
        if not self._installed:
            self._install()
        if ins.encoding.timing != "ace":
            return super().observer(arch, ins)
        control = self._control(ins)
        pc = int(ins.address)
        times, priced, journal = self.times, self._priced, self.journal

        def observe_ace(agent: Any, ins: Any) -> None:
            if journal:
                journal.clear()      # the tile operation's memory traffic, not the hart's
            hart = times.hart(agent.name)
            hart.retire(pc, "alu", (), (), (), None, None)
            at = hart.dispatch_time()
            if priced:
                for unit, args, name in priced:
                    times.operation(agent.name, unit, args, at, name)
                priced.clear()
            self._pushed(agent, at)
            if control is not None:
                control(agent, hart)

        samples = self.samples
        if samples is None:
            return observe_ace
        take = samples.take

        def sampled(agent: Any, ins: Any) -> None:     # --cycles-trace: the IPC counters
            observe_ace(agent, ins)
            take(agent.name, times.hart(agent.name))

        return sampled

    def _pushed(self, agent: Any, at: int) -> None:
        """Timed mode: note the dispatch cycle of an operation the word queued for an engine."""
        thread = getattr(agent, "tile", None)
        if thread is None:
            return
        last = self.times.last_pushed
        for engine in thread.engines.values():
            items = engine.inbox.items
            if items:
                newest = items[-1]
                if newest is not last.get(engine.name):
                    last[engine.name] = newest
                    self.times.pending.setdefault(engine.name, []).append(at)

    def _control(self, ins: Any) -> Callable[[Any, Any], None] | None:
        """The wait a lone control word makes, decoded once (``None``: not a wait)."""
        system = getattr(self.machine, "tile", None)
        if system is None or not ins.mnemonic.endswith(".ctrl"):
            return None
        from tessera.control import Trap
        from tessera_tile.sequencer import identify

        word = int(ins.word)
        tables = system.tables
        try:
            cls = tables.class_of_tuop[tables.tuop_of(word)]
            form, fields = identify(system, {"W1": word}, cls, word)
        except (Trap, KeyError):   # an illegal word traps functionally and never retires
            return None
        times, cfg = self.times, system.cfg
        if form.kind == "wait":
            kind = form.params.get("form")
            if kind == "memory":
                space = "shared" if fields["W1.shared"] == cfg.t_wait_shared_bit else "global"
                limits = [n for n in (fields["W1.ld_cnt"], fields["W1.st_cnt"]) if n != cfg.t_wait_dont_care]
                if not limits:
                    return None
                outstanding = min(limits)

                what = f"{form.name} {space} (leave {outstanding})"

                def wait_memory(agent: Any, hart: Any) -> None:
                    times.stall(hart, agent.name, what, times.memory_done(agent.name, space, outstanding))

                return wait_memory
            if kind == "tma":
                if not fields.get("W1.wait"):
                    return None
                units: tuple[str, ...] = ("tma",)
                what = form.name
            else:
                bits = tables.table("waitop")
                waitop = fields["W1.waitop"]
                units = tuple(u for u in ("tma", "mma", "alu") if waitop >> bits[u] & 1)
                what = f"{form.name} {', '.join(units)}"
                if all(waitop >> b & 1 for b in bits.values()):
                    units += ("lsu",)
                    what = f"{form.name} all"

            def wait_units(agent: Any, hart: Any) -> None:
                times.stall(hart, agent.name, what, times.done(agent.name, units))

            return wait_units
        if form.kind == "mbar" and tables.name_of("mbar_sub", fields["W1.sub"]) == "try_wait":
            rd = fields.get("W1.rd", 0)
            if not rd:
                return None

            def wait_mbarrier(agent: Any, hart: Any) -> None:
                if agent.x[rd]:
                    times.stall(hart, agent.name, "tmbar.try_wait", times.tma_done)

            return wait_mbarrier
        return None

    # ------------------------------------------------------------------ --trace perfetto

    def record_timeline(self) -> bool:
        """A Perfetto tracer starts (docs/hooks.md, timing models): record the engines'
        operations and the harts' stalls from now on, as ``--cycles-trace`` does; sample the
        harts' counters too unless a hart is already being timed (its observers are made)."""
        if self.times.timeline is None:
            from tessera_cycles.tile_model import TileTimeline

            self.times.timeline = TileTimeline()
        if self.samples is None and not self.times.harts:
            from tessera_cycles.timeline import Samples

            self.samples = Samples()
        return True

    def trace_events(self) -> list[dict[str, Any]]:
        """The recorded timeline as Chrome trace events (:mod:`tessera_cycles.tile_timeline`)."""
        from tessera_cycles.tile_timeline import events

        timeline = self.times.timeline
        return [] if timeline is None else events(timeline, self.samples, self.times.harts)

    # ------------------------------------------------------------------ reporting

    def report(self, machine: Any) -> dict[str, Any]:
        """Per hart: the pipeline's report (``tile`` stalls); per engine: its operations and load."""
        import attrs

        rep = self.times.report()
        return {"model": self.name, "clock": int(machine.clock), "params": attrs.asdict(self.tile_params),
                "agents": rep["agents"], "units": rep["units"]}
