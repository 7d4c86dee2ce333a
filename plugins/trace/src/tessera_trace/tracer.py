"""The tracer: one trace of one machine in one format, and the per-machine registry.

Lifetime.  A machine can be run many times (budgets, breakpoints, a debugger), so a
tracer is not tied to one ``Machine.run``.  It is closed — the profile and closing
brackets written, the file closed — by the first of:

* :meth:`Tracer.close` (or leaving a ``with attach(...)`` block);
* the end of a run, per ``autoclose``: ``"halt"`` (the API default) when every agent
  has halted, ``"run"`` (what ``tessera run`` uses: one run per process) after any
  run, ``None`` never;
* the end of the process (``atexit``), for tracers nobody closed.

Between runs the output is flushed, so a trace is readable while its machine is
paused.  An open tracer keeps its machine alive (the registry that finds tracers by
machine holds machines weakly, but the tracer itself does not).

Nothing is stored on the machine: machines are pickled into snapshots, and a
restored machine is a new object with no tracer (attach one again).
"""

from __future__ import annotations

import atexit
import itertools
import weakref
from typing import Any

from tessera.engine import CpuAgent
from tessera.errors import ConfigError
from tessera.memory import Watch
from tessera_trace.agents import AgentState
from tessera_trace.filters import Window, check_agents, check_pc, parse_pc, parse_window
from tessera_trace.formats import FORMATS
from tessera_trace.formats.profile import DEFAULT_TOP
from tessera_trace.layout import ArchLayout
from tessera_trace.output import DEFAULT_LIMIT, Output

AUTOCLOSE = ("halt", "run", None)

#: machine -> its open tracers.  Weak keys: the registry never keeps a machine alive,
#: and nothing is stored on the machine itself (it is pickled into snapshots).
_MACHINES: weakref.WeakKeyDictionary[Any, list[Tracer]] = weakref.WeakKeyDictionary()
#: every open tracer, closed at process exit; ordered by creation
_OPEN: dict[int, Tracer] = {}
_SERIAL = itertools.count()


def tracers_of(machine: Any) -> list[Tracer]:
    """The open tracers of ``machine`` (empty when none: the hooks' fast exit)."""
    if not _MACHINES:
        return []
    return _MACHINES.get(machine) or []


class Tracer:
    """Traces ``machine`` in format ``fmt`` to ``out``; see :func:`tessera_trace.attach`."""

    def __init__(self, machine: Any, fmt: str = "text", out: Any = None, *, pc: Any = None,
                 agents: Any = (), window: Any = None, limit: int = DEFAULT_LIMIT,
                 top: int = DEFAULT_TOP, autoclose: str | None = "halt") -> None:
        if fmt not in FORMATS:
            raise ConfigError(f"unknown trace format {fmt!r} (choose from {', '.join(FORMATS)})")
        if autoclose not in AUTOCLOSE:
            raise ConfigError(f"autoclose must be one of {AUTOCLOSE}, not {autoclose!r}")
        if isinstance(agents, str):
            agents = (agents,)
        if int(top) < 1:
            raise ConfigError("--trace-top must be at least 1")
        # everything is checked before the output is opened (and truncated)
        self.pcs = parse_pc(pc, dict(getattr(machine, "symbols", {}) or {}))
        check_pc(machine, self.pcs)
        self.agent_names = check_agents(machine, agents)
        self.window: Window = parse_window(window) or Window()
        self.machine = machine
        self.format_name = fmt
        self.top = int(top)
        self.autoclose = autoclose
        self.closed = False
        self.stopped = False              # window over or size limit reached
        self.pend: list[tuple[int, int, int, int]] = []
        self.layouts: dict[str, ArchLayout] = {}
        self.states: dict[Any, AgentState | None] = {}
        self._by_name: dict[str, AgentState] = {}
        self._watches: dict[str, Watch] = {}
        self.width = max([len(a.name) for a in machine.agents] or [1])
        #: agents that do not execute instructions (DMA-style engines), by name
        self._engines = {a.name for a in machine.agents if not isinstance(a, CpuAgent)}
        self._tids = itertools.count(1)
        self.out = Output(out if out is not None else FORMATS[fmt].default_out, int(limit), self._cut_note)
        self.serial = next(_SERIAL)
        self.format = FORMATS[fmt](self)
        for agent in machine.agents:
            self.states[agent] = self._state(agent)
        self.out.write_now(self.format.header())
        _MACHINES.setdefault(machine, []).append(self)
        _OPEN[self.serial] = self
        self._apply_watches()
        machine.flush_caches()            # entries filled before now have no observer

    # ------------------------------------------------------------------ agents

    def layout_of(self, arch: Any) -> ArchLayout:
        """The presentation of architecture ``arch`` (names, widths, disassembly), made once."""
        layout = self.layouts.get(arch.name)
        if layout is None:
            layout = self.layouts[arch.name] = ArchLayout(arch)
        return layout

    def _state(self, agent: Any) -> AgentState | None:
        if self.agent_names and agent.name not in self.agent_names:
            return None
        arch = getattr(agent, "arch", None)
        layout = self.layout_of(arch) if arch is not None else None
        st = AgentState(agent, layout, next(self._tids))
        st.head = self.format.head(st)
        self._by_name[st.name] = st
        return st

    def sight(self, agent: Any) -> AgentState | None:
        """An agent retiring its first instruction without a state (added after attach)."""
        st = self.states[agent] = self._state(agent)
        if st is not None:
            self.format.new_agent(st)
        return st

    def state_named(self, name: str | None) -> AgentState | None:
        return self._by_name.get(name) if name is not None else None

    def resync(self) -> None:
        """Forget register changes made outside instructions (loaders, debuggers, other plugins).

        Called automatically when the machine is ready to run for the first time; call
        it yourself after poking registers between runs, or the next retired
        instruction of that agent reports the poked values as its effects.
        """
        for st in self.states.values():
            if st is not None:
                st.resync()
        self.pend.clear()

    # ------------------------------------------------------------------ engine hooks

    def observer(self, arch: Any, ins: Any) -> Any:
        """The observer for a decode-cache entry being filled, or ``None``."""
        if self.closed or self.stopped:
            return None
        traced = self.pcs is None or ins.address in self.pcs
        if not traced and not self.format.follows_untraced:
            return None
        return self.format.make(self.layout_of(arch), ins, traced)

    def watches(self, space: Any) -> list[Watch]:
        """A journal watch over the whole of ``space``, for formats that show memory effects.

        Its journal is :attr:`pend`: every load and store appends ``(0 | 1, address,
        size, value)`` there — translated blocks still access RAM directly and append
        themselves, the tracer is never called — and the record of the instruction that
        retires takes them out; a trap, a parked attempt or an untraced agent empties it.
        """
        if self.closed or self.stopped or not self.format.memory:
            return []
        watch = self._watches.get(space.name)
        if watch is None:
            watch = self._watches[space.name] = Watch(0, space.limit, journal=self.pend)
            watch.plugin = "trace"
        return [watch]

    def _apply_watches(self) -> None:
        """Add (or, once stopped, remove) this tracer's watches on a machine already prepared.

        A machine that is not prepared yet asks the ``tessera_memory_watches`` hook when
        it is, which answers with :meth:`watches`; this covers the other case.
        """
        mine = set(map(id, self._watches.values()))
        for space in self.machine.spaces.values():
            current = [w for w in getattr(space, "_watches", []) if id(w) not in mine]
            wanted = self.watches(space)
            mine.update(map(id, wanted))
            if wanted or len(current) != len(getattr(space, "_watches", [])):
                space.apply_watches(current + wanted)

    def on_sync(self, event: Any) -> None:
        if event.kind == "wait" or event.agent in self._engines:
            # the accesses of an attempt that parked (it will be retried), or of an engine
            # (no instruction of it retires): not effects of the next retired instruction
            self.pend.clear()
        if not self.closed:
            self.format.on_sync(event, self.state_named(event.agent))

    def on_trap(self, agent: Any, trap: Any) -> None:
        self.pend.clear()                 # the trapping instruction did not retire
        st = self.states.get(agent)
        if st is None or self.closed:
            return
        if self.pcs is not None and int(getattr(agent, "pc", 0) or 0) not in self.pcs:
            return
        self.format.on_trap(st, agent, trap)

    def on_trap_taken(self, agent: Any, trap: Any) -> None:
        st = self.states.get(agent)
        if st is None or self.closed:
            return
        self.format.on_trap_taken(st, agent, trap)

    def on_run_finished(self, result: Any) -> None:
        self.pend.clear()
        if self.autoclose == "run" or (self.autoclose == "halt" and result.reason == "halted"):
            self.close()
            return
        self.out.sync()
        if self.stopped:
            self._detach_engine()

    # ------------------------------------------------------------------ the end

    def stop(self) -> None:
        """No more records (the window ended or the size limit was reached)."""
        self.stopped = True
        self.pend.clear()

    def _cut_note(self, lines: int, written: int, limit: int) -> str:
        return self.format.cut_note(lines, written, limit)

    def _detach_engine(self) -> None:
        """Drop this tracer's observers and watches, so the machine runs at full speed again."""
        try:
            self._apply_watches()
            self.machine.flush_caches()
        except Exception:  # noqa: BLE001 - best effort: at exit the machine may be half gone
            pass

    def close(self) -> None:
        """Finish the trace (profile report, closing brackets) and close the output."""
        if self.closed:
            return
        try:
            self.out.add(self.format.finish())
            self.out.flush()
        finally:
            self.closed = True
            self.stopped = True
            self.out.close(self.format.footer())
            _OPEN.pop(self.serial, None)
            tracers = _MACHINES.get(self.machine)
            if tracers is not None and self in tracers:
                tracers.remove(self)
                if not tracers:
                    _MACHINES.pop(self.machine, None)
            self._detach_engine()

    def __enter__(self) -> Tracer:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    def __repr__(self) -> str:
        state = "closed" if self.closed else "stopped" if self.stopped else "open"
        return f"<Tracer {self.format_name} -> {self.out.name} ({state})>"


def attach(machine: Any, fmt: str = "text", out: Any = None, *, pc: Any = None, agents: Any = (),
           window: Any = None, limit: int = DEFAULT_LIMIT, top: int = DEFAULT_TOP,
           autoclose: str | None = "halt") -> Tracer:
    """Start tracing ``machine`` in format ``fmt`` (``text``, ``jsonl``, ``perfetto``, ``profile``).

    ``out`` is a path, ``"-"`` for stdout, or an open stream (text or binary; it is
    flushed, not closed); ``None`` writes the format's default file in the current
    directory.  ``pc`` is ``(start, end)`` or ``"START:END"`` (half-open; symbols of
    the loaded program allowed), ``agents`` names the agents to trace, ``window`` is
    ``(first, last)`` or ``"FIRST:LAST"`` over the filtered records, ``limit`` the
    most bytes to write, ``top`` the PCs a profile lists.  Bad values raise
    :class:`tessera.errors.ConfigError` before anything is written.

    The machine's plugin host must have the trace plugin registered
    (``host.register(tessera_trace.plugin, "trace")``; installed, it is by default).
    Attach between runs, not from inside one.
    """
    host = getattr(machine, "host", None)
    if host is None or not _registered(host):
        raise ConfigError("the machine's plugin host does not have the trace plugin: build the machine "
                          "with a PluginHost where tessera_trace.plugin is registered")
    return Tracer(machine, fmt, out, pc=pc, agents=agents, window=window, limit=limit, top=top,
                  autoclose=autoclose)


def _registered(host: Any) -> bool:
    import tessera_trace.plugin as plugin

    try:
        return any(impl.plugin is plugin for impl in host.impls("tessera_execute_observe"))
    except Exception:  # noqa: BLE001 - an unusual host: let it through
        return True


@atexit.register
def _close_all() -> None:
    """Close the tracers nobody closed, oldest first, so every file is complete."""
    for serial in sorted(_OPEN):
        tracer = _OPEN.get(serial)
        if tracer is not None:
            try:
                tracer.close()
            except Exception:  # noqa: BLE001 - at exit: finish the others
                pass
