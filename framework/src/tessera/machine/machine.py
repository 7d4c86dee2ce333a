"""The machine: agents + address spaces + sync objects, run by a scheduler against a clock.

:class:`Machine` is what plugins and users hold: it builds itself from an
:class:`~tessera.isa.Architecture` (address spaces, agents, sync objects), connects
the engine to the plugin host's hooks, and offers ``run``, ``step``, ``state`` and
snapshots.  The work behind the last two is elsewhere: which agent runs when, and how
a run ends, is :mod:`tessera.machine.scheduler`; snapshot files (and what a restored
machine must satisfy) are :mod:`tessera.machine.snapshot`.
"""

from __future__ import annotations

import hashlib
import heapq
import itertools
import json
import os
from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING, Any

from tessera.control import StopRequest
from tessera.engine.agent import Agent
from tessera.engine.cpu import CpuAgent
from tessera.engine.fill import DecodeFiller
from tessera.errors import ConfigError, PluginError
from tessera.isa.decoder import Decoder, shared_decoder
from tessera.isa.description import Architecture
from tessera.machine import snapshot as snapshot_file
from tessera.machine.clock import NominalTiming
from tessera.machine.ext import MachineExtensions
from tessera.machine.limits import check_count, check_run_limits
from tessera.machine.scheduler import INTERRUPT_DEFERRED, INTERRUPT_REQUESTED, RunLimits, RunResult, Scheduler
from tessera.memory.regions import Region
from tessera.memory.space import DEFAULT_MEMORY_CAP, AddressSpace, MemoryBudget
from tessera.settings import check_config, split_tool_config
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


SNAPSHOT_MAGIC = snapshot_file.MAGIC
SNAPSHOT_FORMAT = snapshot_file.FORMAT
#: Attributes rebuilt when a machine is restored, never pickled: a host and what is
#: resolved from it, decoders and decode caches, and the engine (a choice of the process).
TRANSIENT = ("host", "_decoders", "_fillers", "_prepared", "_sync_listeners", "_trap_listeners",
             "_taken_listeners", "timing", "timing_plugin", "plugin_of_arch", "engine",
             "scheduling_version", "run_ahead", "barrel_stats", "pauses", "_pause_order")

# Re-exported: the command line and older code import them from here.
__all__ = ["ENGINES", "ENGINE_ENV", "INTERRUPT_DEFERRED", "INTERRUPT_REQUESTED", "Machine", "RunResult",
           "SNAPSHOT_FORMAT", "SNAPSHOT_MAGIC", "default_engine"]


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
        declaring = getattr(host, "tool_settings", None)  # a stand-in host may have none
        tools = [declared for _plugin, declared in declaring()] if declaring is not None else []
        #: the keys tool plugins declare (``tessera_tool_settings``), checked; the rest is the
        #: architecture's :attr:`config` (boards resolve that one against their declaration)
        self.tool_config: dict[str, Any]
        self.tool_config, config = split_tool_config(config, tools)
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
        #: whose turn it is, and how much of its quantum is left (tessera.machine.scheduler)
        self.scheduler = Scheduler()
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
            self._map_plugin_regions(self.host)

    def _map_plugin_regions(self, host: HostLike) -> None:
        """Map what ``tessera_memory_regions`` adds to each address space (devices, extra RAM)."""
        for space in self.spaces.values():
            for plugin, regions in host.call_each("tessera_memory_regions", isolate=False,
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
        #: bumped whenever an agent's ``status`` or ``daemon`` is stored (see ``tessera.engine.agent``)
        self.scheduling_version = 0
        #: the agents running ahead of their turn in a barrel run (``tessera.machine.barrel``)
        self.run_ahead: Any = None
        #: what barrel runs did: block calls run ahead, their instructions, agents undone
        self.barrel_stats = {"ahead_calls": 0, "ahead_instructions": 0, "ahead_undone": 0}
        self._prepared = False
        #: the pauses of :meth:`pause_at`, a heap of ``(steps, order, callback, plugin)``;
        #: plugins' closures, so never pickled: a tool arms them again on a restored machine
        self.pauses: list[tuple[int, int, Callable[[Machine], None], str | None]] = []
        self._pause_order = itertools.count()
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
            dec = self._decoders[arch.name] = shared_decoder(arch)
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

    def engine_stats(self) -> dict[str, Any]:
        """What the fast engine did so far: ``blocks`` translated (including those taken
        from the process-wide code cache), ``translate_seconds`` spent translating them,
        ``cached_blocks`` (translations live now), and what barrel runs did
        (:mod:`tessera.machine.barrel`): ``ahead_calls`` (blocks run ahead of their
        agent's turn), ``ahead_instructions`` and ``ahead_undone`` (agents brought back to
        their turn with instructions still to come).  Benchmarks report translation time
        apart from execution with it; the step engine does none of this (all zeros)."""
        fillers = list(self._fillers.values())
        return {"blocks": sum(f.blocks.translated for f in fillers),
                "translate_seconds": sum(f.blocks.translate_seconds for f in fillers),
                "cached_blocks": sum(len(f.blocks.blocks) for f in fillers),
                **self.barrel_stats}

    # ------------------------------------------------------------------ running

    @property
    def turn_left(self) -> int:
        """Steps left in the running agent's turn, read inside its ``run_slice``: a slice that
        uses them all ends the turn.  A slice may end before its turn does (a step budget cut
        it), so an agent that does something at the end of its turn — the same whether a run
        was cut and resumed or not — asks this rather than counting slices."""
        return self.scheduler.left

    @property
    def clock(self) -> int:
        """The machine clock in cycles, as the timing model reads it."""
        if self.run_ahead is not None:  # agents' cycle counts must be those of their turns
            self.run_ahead.settle()
        try:
            return int(self.timing.now(self))
        except Exception as exc:
            raise PluginError(f"timing model failed to read the clock: {type(exc).__name__}: {exc}",
                              plugin=self.timing_plugin) from exc

    def _set_breakpoints(self, stops: set[int]) -> None:
        """Make ``stops`` the breakpoints, re-decoding only the instructions at the addresses
        that gain or lose one (the fill weaves a breakpoint into ``ins.run``): a run to a
        symbol and then on to the end keeps every other decoded instruction and block."""
        if stops != self.breakpoints:
            changed = stops ^ self.breakpoints
            self.breakpoints.clear()
            self.breakpoints.update(stops)
            for space in self.spaces.values():
                space.forget_code(changed)

    def run(self, *, max_steps: int | None = None, max_cycles: int | None = None,
            max_seconds: float | None = None, until_pc: Iterable[int] = (),
            until_symbol: Iterable[str] = (), stop_on_trap: bool = False,
            progress: Callable[[int], None] | None = None,
            raise_on_budget: bool = True) -> RunResult:
        """Run until every non-daemon agent halts, a stop condition hits, or a budget ends.

        A budget ending raises :class:`BudgetExceeded` (with ``.result``) unless
        ``raise_on_budget`` is false; the machine stays consistent and can be run again.
        The scheduling itself is :class:`~tessera.machine.scheduler.Scheduler`'s.
        """
        until_pc = tuple(until_pc)
        check_run_limits(max_steps=max_steps, max_cycles=max_cycles, max_seconds=max_seconds,
                         until_pc=until_pc, address_bits=self.space.address_bits)
        stops = set(until_pc) | {self.symbol(s) for s in until_symbol}
        self.prepare()
        for filler in self._fillers.values():  # values blocks baked in may have changed
            filler.blocks.revalidate()
        self._set_breakpoints(stops)
        limits = RunLimits.starting(self, max_steps=max_steps, max_cycles=max_cycles, max_seconds=max_seconds)
        return self.scheduler.run(self, limits, stop_on_trap=stop_on_trap, progress=progress,
                                  raise_on_budget=raise_on_budget)

    def pause_at(self, steps: int, callback: Callable[[Machine], None], *, plugin: str | None = None) -> None:
        """Call ``callback(machine)`` once, between two steps, when ``total_steps`` reaches ``steps``.

        A pause cuts a run the way a step budget would — exactly, on every engine — but
        the run goes on after the callback, as one run (one ``tessera_run_finished``): a
        tool does something at a precise point of a run it does not drive (a fault
        injector at the N-th instruction) without a callback per instruction.  A pause
        at or before the current count fires when the next run starts; one that a run
        ending first (halted, a budget, a stop) does not reach stays armed for the next
        run.  The callback may read and change any state, and arm further pauses (one
        already due fires before the run goes on).  Arm pauses between runs or from a
        pause callback: one armed from inside a slice (an instrument callback) takes
        effect at the next pause or run.  Pauses are not machine state: snapshots do
        not keep them.  A callback raising anything but a Tessera error is a
        ``PluginError`` naming ``plugin``.
        """
        check_count("steps", steps)
        if not callable(callback):
            raise ConfigError(f"pause_at needs a callable, not {callback!r}")
        heapq.heappush(self.pauses, (int(steps), next(self._pause_order), callback, plugin))

    def step(self, agent: str | None = None) -> RunResult:
        """Single-step: one step of ``agent`` (default: the scheduler's next agent)."""
        if agent is not None:
            return self.scheduler.step_agent(self, agent)
        return self.run(max_steps=1, raise_on_budget=False)

    # ------------------------------------------------------------------ state

    def disturb(self, agent: Agent | None = None) -> None:
        """Say that ``agent``'s state was just changed from outside its own instructions.

        An instruction (or a device) that changes another agent's state — posts it an
        interrupt, changes a plain attribute its register-only code reads — calls this
        first, so that no agent keeps instructions it ran ahead of its turn in a barrel
        run (:mod:`tessera.machine.barrel`); between runs and on the step engine it
        costs nothing.  Storing ``status`` or ``daemon`` and writing code are noticed
        without it.
        """
        if self.run_ahead is not None:
            self.run_ahead.settle()

    def state(self) -> dict[str, Any]:
        """The whole architectural state as JSON-able data (what ``--dump-state`` prints)."""
        if self.run_ahead is not None:
            self.run_ahead.settle()
        return {
            "arch": self.arch.name,
            "clock": self.clock,
            "steps": self.total_steps,
            "agents": {a.name: a.state() for a in self.agents},
            "sync": {name: obj.state() for name, obj in self.sync.items()},
            "memory": {name: space.describe() for name, space in self.spaces.items()},
        }

    def state_hash(self) -> str:
        """SHA-256 over registers, PCs, memory contents, sync objects and scheduler position,
        and the bulk state of extensions that offer ``state_bytes()`` (an accelerator's
        register arrays, which ``state()`` only summarises)."""
        h = hashlib.sha256()
        st = self.state()
        st["scheduler"] = [self.scheduler.turn, self.scheduler.left]
        h.update(json.dumps(st, sort_keys=True, default=repr).encode())
        for name, space in sorted(self.spaces.items()):
            for region in space._base:
                data = getattr(region, "data", None)
                if data is not None:
                    h.update(f"{name}:{region.name}".encode())
                    h.update(data)
        for name in sorted(self.ext):
            state_bytes = getattr(self.ext[name], "state_bytes", None)
            if callable(state_bytes):
                h.update(f"ext:{name}".encode())
                h.update(state_bytes())
        return h.hexdigest()

    def __getstate__(self) -> dict[str, Any]:
        state = dict(self.__dict__)
        for key in TRANSIENT:
            state.pop(key, None)
        return state

    def __setstate__(self, state: dict[str, Any]) -> None:
        if "scheduler" not in state:  # saved before the scheduler had its own object
            state["scheduler"] = Scheduler(state.pop("_rr", 0), state.pop("_left", 0))
        state.setdefault("tool_config", {})  # saved before tools could declare keys
        self.__dict__.update(state)
        self.host = None
        self.engine = default_engine()  # a choice of this process, not machine state

    def snapshot(self) -> bytes:
        """The whole machine as checked bytes (see :mod:`tessera.machine.snapshot`).

        Restorable in another process with the same plugins installed; the header
        records which, and restoring refuses a file that is damaged or whose plugins
        are missing, disabled or of another release series.
        """
        return snapshot_file.capture(self)

    @classmethod
    def restore(cls, data: bytes, *, host: HostLike | None = None,
                architectures: Iterable[Architecture] = ()) -> Machine:
        """Rebuild a machine from :meth:`snapshot` bytes; ``host`` supplies the hooks.

        Plugins and architectures are checked against ``host`` first and the installed
        plugins second; ``architectures`` supplies descriptions no plugin provides.
        Never runs code chosen by the file; any problem is a :class:`SnapshotError`.
        """
        return snapshot_file.restore(cls, data, host=host, architectures=architectures)

    def save_snapshot(self, path: str) -> None:
        snapshot_file.write(self, path)

    @classmethod
    def load_snapshot(cls, path: str, *, host: HostLike | None = None,
                      architectures: Iterable[Architecture] = ()) -> Machine:
        return cls.restore(snapshot_file.read_bytes(path), host=host, architectures=architectures)
