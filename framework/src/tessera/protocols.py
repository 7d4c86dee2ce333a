"""What a plugin may rely on in the objects the core hands it, as ``typing.Protocol`` classes.

Hooks and semantic functions receive a machine, an agent, an instruction, an
architecture and (for ``tessera_bench_workloads``) the plugin host.  The concrete
classes (:class:`tessera.machine.Machine`, :class:`tessera.engine.CpuAgent`, ...)
carry much more than a plugin should touch: the scheduler's position, decode fillers,
hook lists.  The protocols here name only what the core guarantees, so a hook
annotated with them is checked by mypy against the contract, not against whatever
the current implementation happens to have; ``tests/core/test_protocols.py`` checks
that the core's real objects have every member named here, and ``tox -e type``
checks that their classes satisfy the protocols.

Annotations only: import them under ``if TYPE_CHECKING:`` (with ``from __future__
import annotations``), so a plugin's module costs nothing more to import::

    from __future__ import annotations
    from typing import TYPE_CHECKING

    if TYPE_CHECKING:
        from tessera.protocols import CpuLike, InstructionLike, MachineLike, Observer

    @tessera.hookimpl
    def tessera_execute_observe(machine: MachineLike, ins: InstructionLike) -> Observer | None:
        def count(agent: CpuLike, ins: InstructionLike) -> None:
            ...
        return count

The core's own lower layers name their callers through these too (the machine
knows its host only as a :class:`HostLike`: :mod:`tessera.plugins` sits above it).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Protocol, TypeAlias, overload

if TYPE_CHECKING:  # pragma: no cover - annotations only
    import click

    from tessera.control import Trap
    from tessera.isa import Encoding, Example, Field, MemoryRegionSpec, RegisterFile
    from tessera.memory import AddressSpace, AgentSpace
    from tessera.settings import Settings
    from tessera.sync import SyncObject
    from tessera.types import Endian, HookCall

__all__ = ["AgentLike", "CpuLike", "InstructionLike", "ArchitectureLike", "MachineLike",
           "MachineExtensionsLike", "HostLike", "TimingModel", "CommandCollector",
           "Observer", "BeforeCallback", "AfterCallback", "Instrumentation"]


class InstructionLike(Protocol):
    """A decoded instruction, as semantic functions, observers and execute hooks see it.

    Read-only: decoded instructions are shared by every execution of their address
    and sealed once in the decode cache.  Operand fields are attributes holding ints
    (``ins.rd``, ``ins.imm``); ``__getattr__`` below says so to a type checker.
    """

    @property
    def encoding(self) -> Encoding:
        """The table row the word matched."""
        ...

    @property
    def mnemonic(self) -> str: ...

    @property
    def word(self) -> int:
        """The instruction word as fetched."""
        ...

    @property
    def address(self) -> int: ...

    @property
    def size(self) -> int:
        """Bytes of the instruction word."""
        ...

    @property
    def next(self) -> int:
        """The fall-through PC (``address + size``)."""
        ...

    @property
    def span(self) -> int:
        """Bytes of code the decoded entry depends on (more than ``size`` after ``refine``)."""
        ...

    @property
    def cycles(self) -> int:
        """What the timing model charges each time it runs."""
        ...

    @property
    def operands(self) -> Mapping[str, int]:
        """Every operand field by name (the same values as the attributes)."""
        ...

    def __getattr__(self, name: str) -> int:
        """An operand field (``ins.rd``)."""
        ...


class AgentLike(Protocol):
    """Anything the scheduler runs (``machine.agents``): a CPU, or an engine fed by a FIFO."""

    @property
    def name(self) -> str: ...

    @property
    def kind(self) -> str:
        """``cpu``, ``engine`` or an architecture's own kind."""
        ...

    @property
    def daemon(self) -> bool:
        """A daemon (an engine waiting for work) does not keep the machine running."""
        ...

    @property
    def status(self) -> str:
        """``runnable``, ``waiting`` or ``halted`` (``tessera.engine.RUNNABLE`` ...)."""
        ...

    @property
    def wait_reason(self) -> str: ...

    @property
    def instret(self) -> int:
        """Steps retired (instructions, or commands for an engine)."""
        ...

    @property
    def cycles(self) -> int: ...

    @property
    def traps(self) -> int:
        """Traps taken."""
        ...

    @property
    def exit_code(self) -> int | None: ...

    @property
    def machine(self) -> MachineLike | None:
        """The machine it was added to."""
        ...

    def halt(self, exit_code: int = 0) -> None:
        """Stop the agent for good."""
        ...

    def state(self) -> dict[str, Any]:
        """Its architectural state as JSON-able data."""
        ...


class CpuLike(AgentLike, Protocol):
    """A processor core: the ``agent`` of semantic functions, observers, instrument
    callbacks and the trap hooks (an architecture's subclass of ``CpuAgent``).

    Register files are ``regs[name]`` (and, by the architecture's declaration, the
    attribute of the same name, which its own agent class types).
    """

    #: The next instruction's address between slices (a hook may move it).
    pc: int
    #: Where the agent goes after the current instruction; an ``after`` callback may change it.
    next_pc: int

    @property
    def arch(self) -> ArchitectureLike: ...

    @property
    def space(self) -> AgentSpace:
        """The memory it fetches from and accesses (an address space or a translated view)."""
        ...

    @property
    def regs(self) -> Mapping[str, list[int]]: ...

    def deliver_trap(self, trap: Trap) -> None:
        """Take ``trap`` at an instruction boundary (an interrupt, a debug event)."""
        ...

    def step(self) -> int:
        """Run exactly one step; the steps used (0 when parked)."""
        ...


class ArchitectureLike(Protocol):
    """An architecture description (:class:`tessera.isa.Architecture`), read-only data."""

    @property
    def name(self) -> str: ...

    @property
    def description(self) -> str: ...

    @property
    def word_bits(self) -> int: ...

    @property
    def word_bytes(self) -> int: ...

    @property
    def address_bits(self) -> int: ...

    @property
    def endian(self) -> Endian: ...

    @property
    def register_files(self) -> tuple[RegisterFile, ...]: ...

    @property
    def fields(self) -> tuple[Field, ...]: ...

    @property
    def encodings(self) -> tuple[Encoding, ...]: ...

    @property
    def memory_map(self) -> tuple[MemoryRegionSpec, ...]: ...

    @property
    def timing(self) -> Mapping[str, int]:
        """Nominal latency of each timing class."""
        ...

    @property
    def capabilities(self) -> frozenset[str]: ...

    @property
    def reset_pc(self) -> int: ...

    @property
    def quantum(self) -> int: ...

    @property
    def settings(self) -> Settings | None: ...

    @property
    def examples(self) -> tuple[Example, ...]: ...

    @property
    def field_map(self) -> dict[str, Field]: ...

    @property
    def register_file_map(self) -> dict[str, RegisterFile]: ...

    def encodings_named(self, mnemonic: str) -> list[Encoding]: ...

    def cycles(self, encoding: Encoding) -> int:
        """Nominal latency of a form."""
        ...


class MachineExtensionsLike(Protocol):
    """``machine.ext``: plugins' state under declared names, a read-only mapping plus ``declare``."""

    def declare(self, name: str, value: Any) -> Any:
        """Keep ``value`` under ``name`` (once per machine); returns ``value``."""
        ...

    def __getitem__(self, name: str, /) -> Any: ...

    def __contains__(self, name: object, /) -> bool: ...

    def __iter__(self) -> Iterator[str]: ...

    def __len__(self) -> int: ...

    @overload
    def get(self, name: str, /) -> Any: ...

    @overload
    def get(self, name: str, default: Any, /) -> Any: ...


class MachineLike(Protocol):
    """A machine, as hooks receive it: what it is made of, its clock and its state.

    Running it (``run``, ``step``) and snapshotting are not here: a hook is called
    from inside a run or while the machine is being built, where neither is allowed.
    """

    @property
    def arch(self) -> ArchitectureLike: ...

    @property
    def engine(self) -> str:
        """The execution engine: ``fast``, ``step`` or ``check``."""
        ...

    @property
    def host(self) -> HostLike | None:
        """The plugin host whose hooks apply (``None``: no plugins)."""
        ...

    @property
    def config(self) -> Mapping[str, Any]:
        """The architecture's settings as checked (``--set KEY=VALUE``)."""
        ...

    @property
    def ext(self) -> MachineExtensionsLike: ...

    @property
    def spaces(self) -> Mapping[str, AddressSpace]: ...

    @property
    def space(self) -> AddressSpace:
        """The main address space."""
        ...

    @property
    def agents(self) -> Sequence[AgentLike]:
        """In scheduling order."""
        ...

    @property
    def cpus(self) -> Sequence[CpuLike]: ...

    @property
    def sync(self) -> Mapping[str, SyncObject]: ...

    @property
    def symbols(self) -> Mapping[str, int]:
        """The loaded program's symbols."""
        ...

    @property
    def restored(self) -> bool:
        """Rebuilt from a snapshot (its state already holds what plugins added the first time)."""
        ...

    @property
    def total_steps(self) -> int: ...

    @property
    def clock(self) -> int:
        """The machine clock in cycles, as the timing model reads it."""
        ...

    def agent(self, name: str) -> AgentLike: ...

    def symbol(self, name: str) -> int: ...

    def add_space(self, name: str, *, endian: Endian | None = None,
                  address_bits: int | None = None) -> AddressSpace: ...

    def add_sync(self, obj: SyncObject) -> SyncObject: ...

    def set_entry(self, pc: int) -> None:
        """Start every CPU agent at ``pc``."""
        ...

    def flush_caches(self) -> None:
        """Drop every decoded instruction (code changed behind the machine's back)."""
        ...

    def hook_calls(self, hook: str) -> list[HookCall]:
        """The implementations of ``hook`` in call order (none without a host)."""
        ...

    def state(self) -> dict[str, Any]: ...

    def state_hash(self) -> str: ...


class HostLike(Protocol):
    """The plugin host (:class:`tessera.plugins.PluginHost`): architectures and hook calls."""

    def architectures(self) -> Mapping[str, tuple[ArchitectureLike, str]]:
        """``{name: (architecture, plugin name)}`` from every active plugin."""
        ...

    def architecture(self, name: str) -> ArchitectureLike: ...

    def plugin_of(self, arch_name: str) -> str | None: ...

    def hook_calls(self, hook: str) -> list[HookCall]: ...

    def call_each(self, hook: str, *, isolate: bool = True, **kwargs: Any) -> list[tuple[str, Any]]:
        """Every implementation's answer, ``[(plugin, result), ...]``."""
        ...

    def first(self, hook: str, **kwargs: Any) -> tuple[str, Any] | None:
        """The first answer that is not ``None``, with its plugin."""
        ...

    def tool_settings(self) -> list[tuple[str, Any]]:
        """``[(plugin, Settings), ...]`` of ``tessera_tool_settings`` (a stand-in host may
        leave it out: the machine then knows no tool keys)."""
        ...


class TimingModel(Protocol):
    """What ``tessera_timing_model`` returns (the default is ``tessera.machine.NominalTiming``)."""

    def cycles(self, ins: InstructionLike) -> int:
        """What ``ins`` costs each time it runs (asked once, when it is decoded)."""
        ...

    def now(self, machine: MachineLike) -> int:
        """The machine clock."""
        ...


class CommandCollector(Protocol):
    """The ``cli`` of ``tessera_cli_commands``: add ``click`` commands to ``tessera``."""

    def add_command(self, cmd: click.Command, name: str | None = None) -> None: ...

    def command(self, *args: Any, **kwargs: Any) -> Callable[[Callable[..., Any]], click.Command]: ...


#: ``observer(agent, ins)``, from ``tessera_execute_observe``: called each time ``ins`` retires.
Observer: TypeAlias = "Callable[[CpuLike, InstructionLike], None]"
#: ``before(agent, ins)`` of ``tessera_execute_instrument``: an ``int`` skips to that PC.
BeforeCallback: TypeAlias = "Callable[[CpuLike, InstructionLike], int | None]"
#: ``after(agent, ins)`` of ``tessera_execute_instrument``: may change ``agent.next_pc``.
AfterCallback: TypeAlias = "Callable[[CpuLike, InstructionLike], None]"
#: What ``tessera_execute_instrument`` returns for one instruction.
Instrumentation: TypeAlias = "tuple[BeforeCallback | None, AfterCallback | None]"
