"""``--trace perfetto``: Chrome/Perfetto trace-event JSON, one track per agent.

Open the file in https://ui.perfetto.dev ("Open trace file") or chrome://tracing.
The machine is one process; every agent (hart, hardware thread, engine) is a thread
of it with its own track, in the machine's agent order, plus a ``machine`` track for
sync events that no agent caused.  Events:

* ``X`` (complete) per retired instruction: name = mnemonic, ``args`` = pc, asm (and
  ``issued_by`` for an instruction another one issued), ``ts`` = the agent's cycle clock
  when it started, ``dur`` = its cycles;
* ``B``/``E`` around what an expander (a row with the ``expands`` flag: Tensix MOP,
  REPLAY) issued, instead of its ``X`` (:mod:`tessera_trace.issuers`);
* when the rows name execution units (``Encoding.unit``), the same ``X`` again, category
  ``unit``, on a track ``UNIT (agent)`` of a second process ``units``: one per unit and
  agent, because agents run concurrently on their own clocks and slices on one track
  must nest;
* ``X`` named ``wait OBJECT`` from the moment an agent parks on a sync object until it
  is woken (ending at the waker's clock, never before the wait began);
* ``i`` (instant) events for every other sync event (``post sem0``, ``push dma.q``,
  ``arrive bar`` ...) and for traps;
* when the machine's timing model offers a timeline (a cycle model: its optional
  ``record_timeline()`` and ``trace_events()``, docs/hooks.md), the model's own tracks
  — unit busy spans, counters such as IPC or FIFO occupancy — as further processes
  (``pid`` from :data:`MODEL_PID` on), in the model's cycles.

Time is the per-agent cycle clock: 1 µs on the timeline is one cycle.  Each agent's
clock is its cycle counter when first seen plus the cycles of every traced instruction
it retired, re-synchronised with the agent's own counter at every scheduling slice (so
cycles charged for traps or skipped by ``--trace-pc`` are accounted for).  One event
per line, so the size limit cuts between events and the file is always valid JSON.
"""

from __future__ import annotations

import json
from typing import Any

from tessera_trace.agents import AgentState
from tessera_trace.formats.base import FLUSH_MASK, Format, Observer
from tessera_trace.issuers import issued, issuer, parked
from tessera_trace.layout import ArchLayout, expands, issued_by, unit_of

PID = 1
MACHINE_TID = 0
#: the process of the execution units' tracks (architectures whose rows declare a ``unit``)
UNITS_PID = 2
#: the first process of a timing model's own tracks (its pids 1, 2 … become 10, 11 …)
MODEL_PID = 10


def _event(**fields: Any) -> str:
    return json.dumps(fields, separators=(",", ":"), default=repr) + ",\n"


class PerfettoFormat(Format):
    name = "perfetto"
    default_out = "trace.perfetto.json"

    def __init__(self, tracer: Any) -> None:
        super().__init__(tracer)
        states = tracer.states
        sight = tracer.sight
        out = tracer.out
        append = out.buf.append
        flush = out.flush
        first = tracer.window.first
        last = tracer.window.last
        n = 0
        bound = 0 if first else last
        #: agent -> (start, object, what it waits for) of the wait in progress
        self.waits: dict[str, tuple[int, str, Any]] = {}
        #: the agents in the middle of an expander's span (its end event is owed)
        self.spans: set[str] = set()
        #: (agent tid, unit) -> the head of the events on that unit's lane for that agent
        self.lanes: dict[tuple[int, str], str] = {}
        #: (architecture, address) -> the rest of the begin event of the expander there
        self.begins: dict[tuple[str, int], str] = {}
        self.actor: AgentState | None = None
        self.cut_at: str | None = None
        #: the timing model whose timeline ends the trace (it agreed to record one)
        self.model: Any = _start_model_timeline(tracer.machine)

        def stop() -> None:
            nonlocal last, bound
            last = bound = -1
            tracer.stop()

        out.on_cut = stop

        lane_of = self._lane

        def make(layout: ArchLayout, ins: Any, traced: bool) -> Observer | None:
            if not traced:
                return None
            dur = int(ins.cycles)
            name, args = self._describe(layout, ins)
            tail = f',"dur":{dur},"name":{name},"cat":"instr","args":{args}}},\n'
            unit = unit_of(ins)
            unit_tail = f',"dur":{dur},"name":{name},"cat":"unit","args":{args}}},\n'

            def observer(agent: Any, ins: Any) -> None:
                nonlocal n, bound
                try:
                    st = states[agent]
                except KeyError:
                    st = sight(agent)
                if st is None:
                    return
                ts = st.clock
                cycles = agent.cycles
                if cycles > ts:
                    ts = cycles
                st.clock = ts + dur
                i = n
                n = i + 1
                if i >= bound:          # outside the window (one comparison on the fast path)
                    if i < first:
                        return
                    if i >= last:
                        if i == last:
                            stop()
                        return
                    bound = last
                append(f"{st.head}{ts}{tail}")
                if unit:                # the same event on the lane of its unit
                    append(f"{lane_of(st, unit, layout)}{ts}{unit_tail}")
                if not i & FLUSH_MASK:
                    flush()

            return self._expansions(layout, ins, observer, dur)

        begins, spans = self.begins, self.spans

        def announce(agent: Any, st: AgentState, address: int) -> None:
            """The begin event of the expander at ``address`` (a record: --trace-window counts it)."""
            nonlocal n
            rest = begins.get((st.layout.arch.name if st.layout is not None else "", address))
            if rest is None:
                return
            i = n
            n = i + 1
            if not first <= i < last:
                if i == last:
                    stop()
                return
            append(f'{{"ph":"B","pid":{PID},"tid":{st.tid},"ts":{st.now()}{rest}')
            spans.add(st.name)

        def active() -> bool:
            return first <= n < last

        self.make = make  # type: ignore[assignment]
        self.active = active  # type: ignore[method-assign]
        self.announce = announce

    # ------------------------------------------------------------------ entries

    @staticmethod
    def _describe(layout: ArchLayout, ins: Any) -> tuple[str, str]:
        """An instruction event's ``name`` and ``args``, as JSON text."""
        args = {"pc": f"0x{ins.address:0{layout.pc_digits}x}", "asm": layout.asm(ins)}
        by = issued_by(ins)
        if by is not None:
            args["issued_by"] = by
        return json.dumps(ins.mnemonic), json.dumps(args, separators=(",", ":"))

    def _expansions(self, layout: ArchLayout, ins: Any, observer: Observer, dur: int) -> Observer:
        """``observer``, wrapped for an issued instruction (its expander's begin event first)
        or an expander (a span from its first issued instruction to its retirement, whose
        begin and end events nest what it issued and any wait in between)."""
        if issued_by(ins) is not None:
            return issued(self.tracer, ins.address, self.announce, observer)
        if not expands(ins):
            return observer
        name, args = self._describe(layout, ins)
        self.begins[(layout.arch.name, ins.address)] = f',"name":{name},"cat":"instr","args":{args}}},\n'
        append = self.tracer.out.buf.append
        spans = self.spans

        def retired(agent: Any, st: AgentState, ins: Any) -> None:
            end = st.clock = st.now() + dur
            if st.name in spans:
                spans.discard(st.name)
                append(f'{{"ph":"E","pid":{PID},"tid":{st.tid},"ts":{end}}},\n')

        return issuer(self.tracer, ins.address, retired, observer)

    # ------------------------------------------------------------------ metadata

    def head(self, st: AgentState) -> str:
        return f'{{"ph":"X","pid":{PID},"tid":{st.tid},"ts":'

    def header(self) -> str:
        machine = self.tracer.machine
        arch = getattr(getattr(machine, "arch", None), "name", "?")
        lines = ['{"traceEvents":[\n',
                 _event(name="process_name", ph="M", pid=PID, args={"name": f"tessera {arch}"}),
                 _event(name="thread_name", ph="M", pid=PID, tid=MACHINE_TID, args={"name": "machine"}),
                 _event(name="thread_sort_index", ph="M", pid=PID, tid=MACHINE_TID,
                        args={"sort_index": MACHINE_TID})]
        for st in self.tracer.states.values():
            if st is not None:
                lines.append(self._thread(st))
        return "".join(lines)

    def _thread(self, st: AgentState) -> str:
        kind = getattr(st.agent, "kind", "agent")
        return (_event(name="thread_name", ph="M", pid=PID, tid=st.tid, args={"name": f"{st.name} ({kind})"})
                + _event(name="thread_sort_index", ph="M", pid=PID, tid=st.tid, args={"sort_index": st.tid}))

    def new_agent(self, st: AgentState) -> None:
        self.tracer.out.add(self._thread(st))

    def _lane(self, st: AgentState, unit: str, layout: ArchLayout) -> str:
        """The head of the events agent ``st`` sends to execution unit ``unit``: a track
        ``UNIT (agent)`` of the ``units`` process, made (its metadata written) when first used."""
        key = (st.tid, unit)
        head = self.lanes.get(key)
        if head is None:
            tid = len(self.lanes) + 1
            head = self.lanes[key] = f'{{"ph":"X","pid":{UNITS_PID},"tid":{tid},"ts":'
            lines = []
            if tid == 1:
                lines.append(_event(name="process_name", ph="M", pid=UNITS_PID, args={"name": "units"}))
                lines.append(_event(name="process_sort_index", ph="M", pid=UNITS_PID,
                                    args={"sort_index": UNITS_PID}))
            order = layout.units.index(unit) if unit in layout.units else len(layout.units)
            lines.append(_event(name="thread_name", ph="M", pid=UNITS_PID, tid=tid,
                                args={"name": f"{unit} ({st.name})"}))
            lines.append(_event(name="thread_sort_index", ph="M", pid=UNITS_PID, tid=tid,
                                args={"sort_index": order * 1000 + st.tid}))
            self.tracer.out.add("".join(lines))
        return head

    # ------------------------------------------------------------------ events

    def on_sync(self, event: Any, st: AgentState | None) -> None:
        kind = event.kind
        if kind == "wait":
            if st is not None:
                if self.begins:          # an expander whose issued instruction waits has begun
                    parked(st, self.begins, self.announce)
                self.waits[st.name] = (st.now(), event.obj, event.value)
            return
        if kind == "wake":
            if st is None:
                return
            begun = self.waits.pop(st.name, None)
            if begun is None:
                return
            start, obj, reason = begun
            end = max(start, self.actor.now() if self.actor is not None else start)
            if self.active():
                self.tracer.out.add(_event(
                    ph="X", pid=PID, tid=st.tid, ts=start, dur=end - start, name=_wait_name(obj, reason),
                    cat="sync", args={"obj": obj, "reason": reason} if reason else {"obj": obj}))
            st.woken(end)                # the woken agent carries on from the wake-up
            return
        self.actor = st
        if not self.active():
            return
        if st is None and event.agent is not None:
            return                       # an agent outside --trace-agent
        ts = st.now() if st is not None else self._latest()
        self.tracer.out.add(_event(
            ph="i", s="t", pid=PID, tid=st.tid if st is not None else MACHINE_TID, ts=ts,
            name=f"{kind} {event.obj}", cat="sync", args={"obj": event.obj, "value": event.value}))

    def on_trap(self, st: AgentState, agent: Any, trap: Any) -> None:
        if not self.active():
            return
        self.tracer.out.add(_event(
            ph="i", s="t", pid=PID, tid=st.tid, ts=st.now(), name=f"trap {trap.name}", cat="trap",
            args={"pc": f"{int(getattr(agent, 'pc', 0) or 0):#x}", "cause": trap.cause,
                  "tval": f"{int(trap.tval):#x}"}))

    def _latest(self) -> int:
        return max((st.now() for st in self.tracer.states.values() if st is not None), default=0)

    # ------------------------------------------------------------------ the end

    def finish(self) -> str:
        """Waits still open at the end (agents parked when the run ended) end at the last clock."""
        end = self._latest()
        lines = []
        for name, (start, obj, reason) in sorted(self.waits.items()):
            st = self.tracer.state_named(name)
            if st is not None:
                args = {"obj": obj, "unfinished": True, **({"reason": reason} if reason else {})}
                lines.append(_event(ph="X", pid=PID, tid=st.tid, ts=start, dur=max(0, end - start),
                                    name=_wait_name(obj, reason), cat="sync", args=args))
        self.waits.clear()
        for name in sorted(self.spans):   # expanders still issuing (their thread waits for ever)
            st = self.tracer.state_named(name)
            if st is not None:
                lines.append(_event(ph="E", pid=PID, tid=st.tid, ts=max(end, st.clock)))
        self.spans.clear()
        if self.model is not None:
            lines += _model_events(self.tracer.machine, self.model)
            self.model = None
        return "".join(lines)

    def cut_note(self, lines: int, written: int, limit: int) -> str:
        self.cut_at = (f"trace cut after {lines} lines ({written} bytes): the --trace-limit of {limit} "
                       "bytes was reached; the run went on untraced")
        return _event(ph="i", s="g", pid=PID, tid=MACHINE_TID, ts=self._latest(), name="trace cut",
                      cat="note", args={"note": self.cut_at})

    def footer(self) -> str:
        other = {"tool": "tessera-trace", "clock": "agent cycles (1 us on the timeline = 1 cycle)"}
        if self.cut_at:
            other["cut"] = self.cut_at
        last = json.dumps({"name": "process_labels", "ph": "M", "pid": PID, "args": {"labels": "tessera trace"}},
                          separators=(",", ":"))
        return f'{last}\n],"displayTimeUnit":"ns","otherData":{json.dumps(other, separators=(",", ":"))}}}\n'


def _wait_name(obj: str, reason: Any) -> str:
    """A wait span's name: the object, then what exactly the agent waits for (the text a
    deadlock report would print), e.g. ``wait tensix: T1 STALLWAIT C8 …``."""
    return f"wait {obj}: {reason}" if reason else f"wait {obj}"


def _start_model_timeline(machine: Any) -> Any:
    """Ask the machine's timing model to record its timeline (``record_timeline()``, an
    optional method): the model if it agreed, else ``None``."""
    timing = getattr(machine, "timing", None)
    start = getattr(timing, "record_timeline", None)
    if not callable(start):
        return None
    try:
        return timing if start() else None
    except Exception as exc:
        raise _model_failed(machine, "record_timeline", exc) from exc


def _model_events(machine: Any, model: Any) -> list[str]:
    """The model's ``trace_events()``, each process moved to a pid from :data:`MODEL_PID` on."""
    try:
        evs = list(model.trace_events())
        pids: dict[Any, int] = {}
        lines = []
        for ev in evs:
            fields = dict(ev)
            pid = pids.get(fields.get("pid"))
            if pid is None:
                pid = pids[fields.get("pid")] = MODEL_PID + len(pids)
            fields["pid"] = pid
            lines.append(_event(**fields))
    except Exception as exc:
        raise _model_failed(machine, "trace_events", exc) from exc
    return lines


def _model_failed(machine: Any, what: str, exc: Exception) -> Exception:
    from tessera.errors import PluginError

    return PluginError(f"timing model failed in {what}(): {type(exc).__name__}: {exc}",
                       plugin=getattr(machine, "timing_plugin", None))
