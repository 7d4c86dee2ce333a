"""The machine: agents + address spaces + sync objects + a deterministic scheduler + a clock.

The scheduler is round robin over the agents in the order they were added, each
runnable agent getting a quantum of steps (the architecture's ``quantum``, or the
agent's own: 1 gives fine-grained interleaving).  Its position (current agent and
steps left in its quantum) is machine state, so a run interrupted by a budget,
snapshotted, restored in another process and continued is step-for-step the same
as an uninterrupted run.

When no agent can run and some non-daemon agent waits, the run stops with
:class:`~tessera.errors.Deadlock` naming every waiting agent and what it waits for.
"""

from __future__ import annotations

import hashlib
import json
import os
import time
from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING, Any

import attrs

from tessera.control import RunInterrupted, StopRequest
from tessera.engine.agent import HALTED, RUNNABLE, WAITING, Agent
from tessera.engine.cpu import CpuAgent
from tessera.engine.fill import DecodeFiller
from tessera.errors import (
    BudgetExceeded,
    ConfigError,
    Deadlock,
    PluginError,
    SnapshotError,
    TesseraError,
)
from tessera.isa.decoder import Decoder
from tessera.isa.description import Architecture
from tessera.machine import snapshot as snapshot_file
from tessera.machine.clock import NominalTiming
from tessera.machine.ext import MachineExtensions
from tessera.machine.limits import check_run_limits
from tessera.memory.regions import Region
from tessera.memory.space import DEFAULT_MEMORY_CAP, AddressSpace, MemoryBudget
from tessera.settings import check_config
from tessera.sync import SyncObject
from tessera.types import Endian, HookCall

if TYPE_CHECKING:  # pragma: no cover - the host's class is tessera.plugins', a layer above
    from tessera.protocols import HostLike

#: The execution engines: ``fast`` translates straight-line blocks (tessera.engine.blocks),
#: ``step`` runs one decode-cache entry at a time.  Results are identical by design, and
#: ``check`` proves it as it goes: the fast engine, each block call repeated by stepping
#: and compared (tessera.engine.check), at a fraction of the speed.
ENGINES = ("fast", "step", "check")
ENGINE_ENV = "TESSERA_ENGINE"


def default_engine() -> str:
    """``$TESSERA_ENGINE`` if set (so a whole test suite can run on either engine), else ``fast``."""
    name = os.environ.get(ENGINE_ENV, "").strip() or "fast"
    if name not in ENGINES:
        raise ConfigError(f"{ENGINE_ENV}={name!r} is not an engine (choose from {', '.join(ENGINES)})")
    return name


#: Set by the command line's SIGINT handler; the scheduler raises ``KeyboardInterrupt``
#: between slices while it is set.  Python may lose a ``KeyboardInterrupt`` that lands
#: inside a finaliser or weakref callback ("Exception ignored in ..."); an unlimited run
#: would then never stop, so the request is also kept here, where it cannot be lost.
INTERRUPT_REQUESTED = [False]
#: True while the command line runs a machine: its SIGINT handler then only sets
#: ``INTERRUPT_REQUESTED`` (the first time), and the scheduler stops cleanly between
#: slices with :class:`~tessera.control.RunInterrupted`.
INTERRUPT_DEFERRED = [False]

SNAPSHOT_MAGIC = snapshot_file.MAGIC
SNAPSHOT_FORMAT = snapshot_file.FORMAT
_INF = float("inf")


@attrs.define
class RunResult:
    """How a call to :meth:`Machine.run` ended.

    ``reason`` is ``halted`` (every non-daemon agent halted), ``breakpoint`` (a stop
    PC or symbol was reached), ``trap`` (``stop_on_trap``) or ``budget``; the
    ``tessera_run_finished`` hook also sees ``error`` when the run ends by raising and
    ``interrupted`` when Ctrl-C stopped it between slices (:class:`RunInterrupted`).
    """

    reason: str
    steps: int
    cycles: int
    seconds: float
    agent: str | None = None
    pc: int | None = None
    exit_code: int | None = None
    detail: str = ""

    def as_dict(self) -> dict[str, Any]:
        return attrs.asdict(self)


class Machine:
    """An emulated machine built from an :class:`~tessera.isa.Architecture`.

    ``host`` is the :class:`~tessera.plugins.PluginHost` whose hooks apply (``None``:
    no plugins at all, the bare engine).  The architecture's ``build`` function adds
    agents and sync objects; by default the machine has one CPU agent ``core0``.
    """

    def __init__(self, arch: Architecture, *, host: HostLike | None = None,
                 memory_cap: int = DEFAULT_MEMORY_CAP, config: dict[str, Any] | None = None,
                 quantum: int | None = None, engine: str | None = None) -> None:
        self.arch = arch
        self.engine = default_engine()
        if engine is not None:
            self.set_engine(engine)
        self.host = host
        self.config: dict[str, Any] = check_config(arch, config)  # before anything is built
        self.budget = MemoryBudget(memory_cap)
        self.spaces: dict[str, AddressSpace] = {}
        self.agents: list[Agent] = []
        self.sync: dict[str, SyncObject] = {}
        self.symbols: dict[str, int] = {}
        self.breakpoints: set[int] = set()
        self.quantum = quantum or arch.quantum
        self.total_steps = 0
        self.stop_on_trap = False
        self._rr = 0
        self._left = 0
        self.restored = False  # True on a machine rebuilt from a snapshot
        #: plugins' own state, under names they declare (tessera.machine.ext); snapshotted
        self.ext = MachineExtensions(self)
        self._init_transient()
        space = self.add_space("main")
        for spec in arch.memory_map:
            if spec.kind == "rom":
                space.add_rom(spec.name, spec.start, spec.size, perms=spec.perms)
            else:
                space.add_ram(spec.name, spec.start, spec.size, perms=spec.perms)
        if arch.build is not None:
            arch.build(self)
        else:
            self.add_cpu("core0")
        if self.host is not None:
            for space in self.spaces.values():
                for plugin, regions in self.host.call_each("tessera_memory_regions", isolate=False,
                                                           machine=self, space=space):
                    for region in regions or []:
                        if not isinstance(region, Region):
                            raise PluginError(f"tessera_memory_regions returned {type(region).__name__}, "
                                              "not a region (RAM, ROM or MMIO)", plugin=plugin)
                        try:
                            space.map(region)
                        except ConfigError as exc:
                            raise PluginError(f"cannot map region: {exc.message}", plugin=plugin) from None

    def _init_transient(self) -> None:
        """State that is rebuilt, not snapshotted: decoders, caches, hook lists."""
        self._decoders: dict[str, Decoder] = {}
        self._fillers: dict[tuple[str, str], DecodeFiller] = {}
        self._prepared = False
        self._sync_listeners: list[HookCall] = []
        self._trap_listeners: list[HookCall] = []
        self._taken_listeners: list[HookCall] = []
        self.plugin_of_arch = self.host.plugin_of(self.arch.name) if self.host is not None else None
        self.timing = NominalTiming(self.arch)
        self.timing_plugin: str | None = None
        if self.host is not None:
            got = self.host.first("tessera_timing_model", machine=self, arch=self.arch)
            if got is not None:
                self.timing_plugin, self.timing = got

    if not TYPE_CHECKING:  # hidden from type checkers: a misspelt attribute stays an error there
        def __getattr__(self, name: str) -> Any:
            """``machine.<name>``: the extension declared as ``name`` (``machine.ext[name]``), for reading."""
            ext = self.__dict__.get("ext")  # not self.ext: an unpickled machine has no attributes yet
            if ext is not None and name in ext:
                return ext[name]
            raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}")

    def set_engine(self, engine: str) -> None:
        """Choose the execution engine (``fast``, ``step`` or ``check``); takes effect at the next slice."""
        if engine not in ENGINES:
            raise ConfigError(f"unknown engine {engine!r} (choose from {', '.join(ENGINES)})")
        self.engine = engine

    # ------------------------------------------------------------------ building

    def add_space(self, name: str, *, endian: Endian | None = None,
                  address_bits: int | None = None) -> AddressSpace:
        if name in self.spaces:
            raise ConfigError(f"address space {name!r} already exists")
        space = AddressSpace(name, endian=endian or self.arch.endian,
                             address_bits=address_bits or self.arch.address_bits, budget=self.budget)
        self.spaces[name] = space
        return space

    @property
    def space(self) -> AddressSpace:
        """The main address space."""
        return self.spaces["main"]

    def add_agent(self, agent: Agent) -> Agent:
        if any(a.name == agent.name for a in self.agents):
            raise ConfigError(f"agent name {agent.name!r} is already used")
        agent.machine = self
        self.agents.append(agent)
        self._prepared = False
        return agent

    def add_cpu(self, name: str, *, space: AddressSpace | None = None, pc: int | None = None,
                cls: type[CpuAgent] = CpuAgent, **kw: Any) -> CpuAgent:
        return self.add_agent(cls(name, self.arch, space or self.space, pc=pc, **kw))  # type: ignore[return-value]

    def add_sync(self, obj: SyncObject) -> SyncObject:
        if obj.name in self.sync:
            raise ConfigError(f"sync object name {obj.name!r} is already used")
        obj.machine = self
        self.sync[obj.name] = obj
        return obj

    def agent(self, name: str) -> Agent:
        for a in self.agents:
            if a.name == name:
                return a
        raise ConfigError(f"no agent named {name!r} (agents: {', '.join(a.name for a in self.agents)})")

    @property
    def cpus(self) -> list[CpuAgent]:
        return [a for a in self.agents if isinstance(a, CpuAgent)]

    def set_entry(self, pc: int) -> None:
        """Start every CPU agent at ``pc`` (loaders call this with the program entry)."""
        for cpu in self.cpus:
            cpu.pc = pc

    def symbol(self, name: str) -> int:
        if name not in self.symbols:
            raise ConfigError(f"unknown symbol {name!r}")
        return self.symbols[name]

    # ------------------------------------------------------------------ engine plumbing

    def hook_calls(self, hook: str) -> list[HookCall]:
        """The implementations of ``hook`` in call order, resolved by the host (none without one).

        The machine and the engine call plugins through these, never through the
        host's module (:mod:`tessera.plugins` sits above them in the layer order).
        """
        return self.host.hook_calls(hook) if self.host is not None else []

    def decoder(self, arch: Architecture) -> Decoder:
        dec = self._decoders.get(arch.name)
        if dec is None:
            dec = self._decoders[arch.name] = Decoder(arch)
        return dec

    def decode_filler(self, arch: Architecture, space: AddressSpace) -> DecodeFiller:
        key = (arch.name, space.name)
        tr = self._fillers.get(key)
        if tr is None:
            tr = self._fillers[key] = DecodeFiller(self, arch, space)
        return tr

    def prepare(self) -> None:
        """Resolve hooks, wrap watched memory, give agents their fillers (idempotent)."""
        if self._prepared:
            return
        host = self.host
        if host is not None:
            self._sync_listeners = self.hook_calls("tessera_sync_event")
            self._trap_listeners = self.hook_calls("tessera_trap")
            self._taken_listeners = self.hook_calls("tessera_trap_taken")
            for space in self.spaces.values():
                watches = []
                for plugin, got in host.call_each("tessera_memory_watches", isolate=False,
                                                  machine=self, space=space):
                    for w in got or []:
                        w.plugin = plugin
                        watches.append(w)
                space.apply_watches(watches)
        for agent in self.agents:
            agent.prepare(self)
        self._prepared = True
        if host is not None:
            host.call_each("tessera_machine_ready", isolate=False, machine=self)

    def flush_caches(self) -> None:
        for space in self.spaces.values():
            space.flush_caches()

    def emit_sync(self, event: Any) -> None:
        for impl in self._sync_listeners:
            try:
                impl(machine=self, event=event)
            except Exception as exc:
                raise PluginError(f"tessera_sync_event raised {type(exc).__name__}: {exc}",
                                  plugin=impl.plugin_name) from exc

    def notify_trap(self, agent: Agent, trap: Any) -> None:
        self._tell_trap(self._trap_listeners, "tessera_trap", agent, trap)
        if self.stop_on_trap:
            raise StopRequest("trap", getattr(agent, "pc", 0))

    def notify_trap_taken(self, agent: Agent, trap: Any) -> None:
        """Call the ``tessera_trap_taken`` listeners: ``agent`` is at its handler."""
        self._tell_trap(self._taken_listeners, "tessera_trap_taken", agent, trap)

    def _tell_trap(self, listeners: list[HookCall], hook: str, agent: Agent, trap: Any) -> None:
        for impl in listeners:
            try:
                impl(machine=self, agent=agent, trap=trap)
            except Exception as exc:
                raise PluginError(f"{hook} raised {type(exc).__name__}: {exc}",
                                  plugin=impl.plugin_name, agent=agent.name) from exc

    # ------------------------------------------------------------------ running

    @property
    def clock(self) -> int:
        """The machine clock in cycles, as the timing model reads it."""
        try:
            return int(self.timing.now(self))
        except Exception as exc:
            raise PluginError(f"timing model failed to read the clock: {type(exc).__name__}: {exc}",
                              plugin=self.timing_plugin) from exc

    def _set_breakpoints(self, stops: set[int]) -> None:
        if stops != self.breakpoints:
            self.breakpoints.clear()
            self.breakpoints.update(stops)
            self.flush_caches()

    def run(self, *, max_steps: int | None = None, max_cycles: int | None = None,
            max_seconds: float | None = None, until_pc: Iterable[int] = (),
            until_symbol: Iterable[str] = (), stop_on_trap: bool = False,
            progress: Callable[[int], None] | None = None,
            raise_on_budget: bool = True) -> RunResult:
        """Run until every non-daemon agent halts, a stop condition hits, or a budget ends.

        A budget ending raises :class:`BudgetExceeded` (with ``.result``) unless
        ``raise_on_budget`` is false; the machine stays consistent and can be run again.
        """
        until_pc = tuple(until_pc)
        check_run_limits(max_steps=max_steps, max_cycles=max_cycles, max_seconds=max_seconds,
                         until_pc=until_pc, address_bits=self.space.address_bits)
        stops = set(until_pc) | {self.symbol(s) for s in until_symbol}
        self.prepare()
        for filler in self._fillers.values():  # values blocks baked in may have changed
            filler.blocks.revalidate()
        self._set_breakpoints(stops)
        self.stop_on_trap = stop_on_trap
        for cpu in self.cpus:
            cpu.resume_pc = cpu.pc
        start_steps, t0 = self.total_steps, time.perf_counter()
        cycle_limit = self.clock + max_cycles if max_cycles is not None else _INF
        step_limit = max_steps if max_steps is not None else -1
        try:
            result = self._schedule(step_limit, cycle_limit, max_seconds, t0, progress)
        except StopRequest as stop:
            result = self._result(stop.reason, start_steps, t0, agent=self._current_name(),
                                  pc=stop.pc, detail=f"{stop.reason} at {stop.pc:#x}")
        except TesseraError as err:
            self._finished(self._result("error", start_steps, t0, agent=err.agent, pc=err.pc,
                                        detail=str(err)))
            raise
        except RunInterrupted as stop:  # between slices: the machine is exact and resumable
            stop.result = self._result("interrupted", start_steps, t0, agent=self._current_name(),
                                       pc=getattr(self.agents[self._rr], "pc", None) if self.agents
                                       else None, detail="interrupted (Ctrl-C)")
            self._finished(stop.result)
            raise
        finally:
            for cpu in self.cpus:
                cpu.resume_pc = None
            self.stop_on_trap = False
        if result.reason == "budget" and raise_on_budget:
            self._finished(result)
            raise BudgetExceeded(result.detail, result=result, agent=result.agent, pc=result.pc)
        self._finished(result)
        return result

    def _finished(self, result: RunResult) -> None:
        if self.host is not None:
            self.host.call_each("tessera_run_finished", isolate=False, machine=self, result=result)

    def _current_name(self) -> str | None:
        return self.agents[self._rr].name if self.agents else None

    def _result(self, reason: str, start_steps: int, t0: float, **kw: Any) -> RunResult:
        primary = next((a for a in self.agents if not a.daemon), None)
        kw.setdefault("exit_code", primary.exit_code if primary else None)
        return RunResult(reason=reason, steps=self.total_steps - start_steps, cycles=self.clock,
                         seconds=time.perf_counter() - t0, **kw)

    def _schedule(self, step_limit: int, cycle_limit: float, max_seconds: float | None,
                  t0: float, progress: Callable[[int], None] | None) -> RunResult:
        agents = self.agents
        count = len(agents)
        start = self.total_steps
        steps = 0
        next_report = 1 << 16
        while True:
            live = [a for a in agents if not a.daemon and a.status != HALTED]
            if not live:
                return self._result("halted", start, t0, detail="every agent halted")
            runnable = [a for a in agents if a.status == RUNNABLE]
            if not runnable:
                waits = {a.name: a.wait_reason for a in agents if a.status == WAITING}
                raise Deadlock(waits)
            if all(a.cycles >= cycle_limit for a in runnable):
                return self._result("budget", start, t0, agent=self._current_name(),
                                    pc=getattr(agents[self._rr], "pc", None),
                                    detail=f"cycle budget exhausted after {steps} steps")
            if step_limit >= 0 and steps >= step_limit:
                agent = agents[self._rr]
                return self._result("budget", start, t0, agent=agent.name,
                                    pc=getattr(agent, "pc", None),
                                    detail=f"step budget of {step_limit} exhausted")
            if INTERRUPT_REQUESTED[0]:
                INTERRUPT_REQUESTED[0] = False
                raise RunInterrupted
            if max_seconds is not None and time.perf_counter() - t0 > max_seconds:
                return self._result("budget", start, t0, agent=self._current_name(),
                                    detail=f"wall-time budget of {max_seconds}s exhausted")
            agent = agents[self._rr]
            if agent.status != RUNNABLE or agent.cycles >= cycle_limit:
                self._rr = (self._rr + 1) % count
                self._left = 0
                continue
            if self._left <= 0:
                self._left = agent.quantum or self.quantum
                if self.arch.solo_quantum and len(runnable) == 1:
                    self._left = max(self._left, self.arch.solo_quantum)
            limit = self._left if step_limit < 0 else min(self._left, step_limit - steps)
            before = agent.instret + agent.traps
            try:
                n = agent.run_slice(limit, cycle_limit)
            except (StopRequest, TesseraError):  # mid-quantum: the quantum keeps what the slice used
                self._left -= agent.instret + agent.traps - before
                raise
            finally:  # exact even when the slice ends in a stop or an error
                self.total_steps += agent.instret + agent.traps - before
            steps += n
            self._left -= n
            yielded, agent.yielded = agent.yielded, False
            if yielded or agent.status != RUNNABLE or self._left <= 0 or agent.cycles >= cycle_limit:
                self._rr = (self._rr + 1) % count
                self._left = 0
            if progress is not None and steps >= next_report:
                progress(steps)
                next_report = steps + (1 << 16)

    def step(self, agent: str | None = None) -> RunResult:
        """Single-step: one step of ``agent`` (default: the scheduler's next agent)."""
        if agent is not None:
            target = self.agent(agent)
            self.prepare()
            t0 = time.perf_counter()
            start = self.total_steps
            if target.status == RUNNABLE:
                if isinstance(target, CpuAgent):
                    target.resume_pc = target.pc
                before = target.instret + target.traps
                try:
                    target.run_slice(1)
                except StopRequest as stop:
                    return self._result(stop.reason, start, t0, agent=target.name, pc=stop.pc)
                finally:
                    if isinstance(target, CpuAgent):
                        target.resume_pc = None
                    self.total_steps += target.instret + target.traps - before
            return self._result("budget", start, t0, agent=target.name,
                                pc=getattr(target, "pc", None), detail="single step")
        return self.run(max_steps=1, raise_on_budget=False)

    # ------------------------------------------------------------------ state

    def state(self) -> dict[str, Any]:
        """The whole architectural state as JSON-able data (what ``--dump-state`` prints)."""
        return {
            "arch": self.arch.name,
            "clock": self.clock,
            "steps": self.total_steps,
            "agents": {a.name: a.state() for a in self.agents},
            "sync": {name: obj.state() for name, obj in self.sync.items()},
            "memory": {name: space.describe() for name, space in self.spaces.items()},
        }

    def state_hash(self) -> str:
        """SHA-256 over registers, PCs, memory contents, sync objects and scheduler position."""
        h = hashlib.sha256()
        st = self.state()
        st["scheduler"] = [self._rr, self._left]
        h.update(json.dumps(st, sort_keys=True, default=repr).encode())
        for name, space in sorted(self.spaces.items()):
            for region in space._base:
                data = getattr(region, "data", None)
                if data is not None:
                    h.update(f"{name}:{region.name}".encode())
                    h.update(data)
        return h.hexdigest()

    def __getstate__(self) -> dict[str, Any]:
        state = dict(self.__dict__)
        for key in ("host", "_decoders", "_fillers", "_prepared", "_sync_listeners",
                    "_trap_listeners", "_taken_listeners", "timing", "timing_plugin", "plugin_of_arch", "engine"):
            state.pop(key, None)
        return state

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)
        self.host = None
        self.engine = default_engine()  # a choice of this process, not machine state

    def snapshot(self) -> bytes:
        """The whole machine as checked bytes (see :mod:`tessera.machine.snapshot`).

        Restorable in another process with the same plugins installed; the header
        records which, and restoring refuses a file that is damaged or whose plugins
        are missing, disabled or of another release series.
        """
        return snapshot_file.dump(self, snapshot_file.Registry(self.host))

    @classmethod
    def restore(cls, data: bytes, *, host: HostLike | None = None,
                architectures: Iterable[Architecture] = ()) -> Machine:
        """Rebuild a machine from :meth:`snapshot` bytes; ``host`` supplies the hooks.

        Plugins and architectures are checked against ``host`` first and the installed
        plugins second; ``architectures`` supplies descriptions no plugin provides.
        Never runs code chosen by the file; any problem is a :class:`SnapshotError`.
        """
        machine = snapshot_file.load(bytes(data), snapshot_file.Registry(host),
                                     architectures=architectures)
        if not isinstance(machine, Machine):
            raise SnapshotError(f"snapshot holds a {type(machine).__name__}, not a machine")
        if not isinstance(machine.__dict__.get("arch"), Architecture):
            raise SnapshotError("snapshot holds a machine without an architecture")
        if not isinstance(machine.__dict__.get("ext"), MachineExtensions):
            raise SnapshotError("snapshot holds a machine without plugin extensions (machine.ext): "
                                "made by an older Tessera; make it again")
        machine.host = host
        machine.restored = True
        try:
            machine._init_transient()
            machine.state()
        except TesseraError as exc:
            raise SnapshotError(f"snapshot holds an inconsistent machine: {exc}") from None
        except Exception as exc:  # noqa: BLE001
            raise SnapshotError(f"snapshot holds an inconsistent machine: "
                                f"{type(exc).__name__}: {exc}") from None
        return machine

    def save_snapshot(self, path: str) -> None:
        with open(path, "wb") as fh:
            fh.write(self.snapshot())

    @classmethod
    def load_snapshot(cls, path: str, *, host: HostLike | None = None,
                      architectures: Iterable[Architecture] = ()) -> Machine:
        try:
            with open(path, "rb") as fh:
                data = fh.read()
        except OSError as exc:
            raise SnapshotError(f"cannot read snapshot {path}: {exc.strerror}") from None
        return cls.restore(data, host=host, architectures=architectures)
