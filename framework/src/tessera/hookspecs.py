"""The plugin contract: every hook a Tessera plugin may implement.

A plugin is any module or object registered under the ``tessera`` entry-point group
that declares ``TESSERA_API_VERSION`` (see :data:`tessera.PLUGIN_API_VERSION`) and
implements some of the hooks below with ``@tessera.hookimpl``.

pluggy costs one to two microseconds per hook call even with no listener, so no
hook is called per instruction or per memory access.  Hooks that affect execution
are called when something is *prepared* (a decode-cache entry filled, an address
space set up, a run started) and return plain callables that the engine weaves in;
a family nobody implements costs nothing at all.  ``docs/hooks.md`` has an example
for every hook.

Families: **decode**, **execute**, **memory**, **sync**, **timing**; plus
**discovery** (architectures, CLI commands, conformance cases, bench workloads), **lifecycle**
(machine ready, trap, run finished) and **tools** (the structures a fault injector may hit).

The objects a hook receives are typed with the protocols of :mod:`tessera.protocols`
(``MachineLike``, ``CpuLike``, ``InstructionLike``, ``ArchitectureLike``, ``HostLike``):
what the core guarantees of them.  An implementation may annotate its arguments the
same way, importing them under ``if TYPE_CHECKING:`` so that loading it costs nothing.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import pluggy

if TYPE_CHECKING:  # pragma: no cover - annotations only: tessera.protocols is never imported to run
    import click

    from tessera.control import Trap
    from tessera.isa import Architecture, Instruction
    from tessera.machine import RunResult
    from tessera.memory import AddressSpace, Region, Watch
    from tessera.protocols import (
        ArchitectureLike,
        CommandCollector,
        CpuLike,
        HostLike,
        InstructionLike,
        Instrumentation,
        MachineLike,
        Observer,
        TimingModel,
    )
    from tessera.settings import Settings
    from tessera.sync import SyncEvent

hookspec = pluggy.HookspecMarker("tessera")


# --------------------------------------------------------------------------- discovery


@hookspec
def tessera_architectures() -> list[Architecture]:
    """Return the architectures this plugin provides (a list of ``Architecture``).

    Called once per process when the architecture registry is first needed.  Two
    plugins providing the same architecture name is an error naming both.
    """


@hookspec
def tessera_program_formats() -> list[Any]:
    """Return the program formats this plugin loads (``tessera.loaders.ProgramFormat``).

    For programs that are none of the built-in formats — e.g. a Tensix kernel: a
    manifest naming one ELF per core, inputs and expected outputs.  ``tessera run``
    (format ``auto``) asks each format whether it claims the file before trying the
    built-in ones (an ELF is always an ELF), and without ``--arch`` runs it on the
    architecture the format names (:mod:`tessera.loaders.formats`).
    """


@hookspec
def tessera_cli_commands(cli: CommandCollector) -> None:
    """Add subcommands to the ``tessera`` command line.

    ``cli`` collects commands: call ``cli.add_command(cmd)`` with a
    :class:`click.Command`, or decorate a function with ``@cli.command()``.  A name
    that clashes with a built-in command is refused with the plugin's name.
    """


@hookspec
def tessera_run_options() -> list[click.Option]:
    """Return ``click.Option`` objects to add to ``tessera run`` and ``tessera resume``.

    For tool plugins (``--trace FORMAT``).  Parameter names must not clash with the
    built-in options or another plugin's (a clash is refused naming the plugin).  The
    values the user gave reach :func:`tessera_run_configure`.
    """


@hookspec
def tessera_tool_settings() -> Settings | None:
    """Declare a tool plugin's machine-configuration keys, or return ``None``.

    Return a :class:`tessera.settings.Settings` whose keys (and family prefixes) are
    the tool's own, named after it: ``cycles`` and ``cycles.NAME``.  A machine's
    configuration may then hold them beside its architecture's — ``--set
    cycles.miss_penalty=30``, ``Machine(arch, config={"cycles": "inorder"})`` — and
    they are checked against this declaration (unknown key, wrong kind, out of range:
    one-line :class:`~tessera.errors.ConfigError`) before the machine is built, so a
    tool that must act while the machine is built (a timing model) reads them from
    ``machine.tool_config`` (``machine.config`` keeps the architecture's keys; a snapshot
    keeps both).  A key both an architecture and a tool declare is the tool's.
    A ``tessera_run_options`` option whose parameter name is one of these keys sets
    that key (``--cycles inorder`` is ``--set cycles=inorder``).
    """


@hookspec
def tessera_run_configure(machine: MachineLike, options: dict[str, Any]) -> None:
    """Configure a tool for this run from the options of :func:`tessera_run_options`.

    ``options`` maps every plugin-contributed parameter name to its value (``None``
    or the default when not given).  Called by ``tessera run``/``resume`` after the
    program is loaded and before the run starts: raise
    :class:`tessera.errors.ConfigError` for bad values (an unwritable path, a filter
    that matches nothing) — the user gets one line and exit status 64, and the run
    does not start.
    """


@hookspec
def tessera_conformance_cases(arch: ArchitectureLike) -> list[dict[str, Any]] | None:
    """Return conformance cases (program + expected final state or output) for ``arch``.

    Each case is a ``dict`` with at least ``name`` and ``source`` (assembly) or
    ``program`` (a path), and ``expect`` (register/memory values) or ``stdout``.
    Return ``None`` or ``[]`` for architectures you do not know.
    """


@hookspec
def tessera_tool_demos(host: HostLike) -> list[dict[str, Any]] | None:
    """Return the demos of a tool plugin that ``tessera demo`` runs after the architectures' examples.

    Each item is a ``dict`` with ``name``, ``arch`` (the architecture it runs on: ``--arch``
    selects by it), ``description`` and ``run``, a callable taking a scratch directory
    (a :class:`pathlib.Path`) and returning ``(ok, summary)``: whether the demo showed
    what it should, and one line about it.  Offer only demos whose architecture ``host``
    has; keep them short (the demo is the Quickstart's first command).  A ``run`` that
    raises anything but a Tessera error is reported as a plugin error naming the plugin.
    """


@hookspec
def tessera_bench_workloads(host: HostLike) -> list[type]:
    """Return the ``tessera bench`` workloads this plugin offers (``Workload`` subclasses).

    Each item is a subclass of :class:`tessera.bench.model.Workload` with a unique
    ``name``; ``tessera bench`` runs and reports it beside the core's own, and
    ``--only NAME`` selects it.  Called when ``tessera bench`` starts (its ``--help``
    and ``--only`` check included) with the command's plugin ``host``; a plugin that
    is disabled or not installed offers nothing, so its workloads are absent.  Import
    the workload module inside the hook, so that importing the plugin stays cheap.
    A raising hook or an item that is not a named ``Workload`` subclass marks the
    plugin failed; a name already offered (by the core or an earlier plugin) is
    dropped with a warning.
    """


# --------------------------------------------------------------------------- tools


@hookspec
def tessera_fault_targets(machine: MachineLike) -> list[dict[str, Any]] | None:
    """Return the structures of ``machine`` a fault injector may hit, beyond its register files.

    A fault injector (``tessera-faults``) finds the register files, RAM regions and
    the instruction word at decode of any machine from its description; an
    architecture adds what only it knows — vector registers lane by lane, accumulator
    cells, CSRs, TLB entries — as dicts with ``name`` (``t0.v``, ``dest``), ``kind``
    (``lanes``, ``array``, ``csr`` …), ``shape`` (entries per dimension, e.g.
    ``(64, 16)``) or ``entries``, ``bits`` (of one entry), ``read(index) -> int`` and
    ``write(index, value)`` on the flat entry index of *this* machine's live state,
    and optionally ``agent`` (the agent it belongs to, ``None`` for the machine's),
    ``doc``, ``names``/``aliases`` (entry names), ``exclude`` (entries that hold no
    state) and ``values()`` (every entry at once).  It takes the machine rather than
    the architecture because sizes are settings and ``read``/``write`` act on that
    machine's objects.  Called when faults are armed and targets listed (``tessera
    faults targets``), never per instruction; return ``None`` for machines of other
    architectures.
    """


# --------------------------------------------------------------------------- decode


@hookspec(firstresult=True)
def tessera_decode(
    machine: MachineLike, arch: ArchitectureLike, word: int, address: int
) -> Instruction | None:
    """Claim a word before the encoding table sees it (an extension's encodings).

    Called on a decode-cache **miss** only (once per address until the code there is
    written), never per executed instruction.  Return an ``Instruction`` (build it
    with ``tessera.isa.Instruction(encoding, word, address, size, operands)``; its
    ``run`` attribute is the semantic function) or ``None`` to leave the word to the
    table.  The first non-``None`` answer wins.
    """


# --------------------------------------------------------------------------- execute


@hookspec
def tessera_execute_instrument(
    machine: MachineLike, arch: ArchitectureLike, ins: InstructionLike
) -> Instrumentation | None:
    """Return callbacks to weave around one decoded instruction, or ``None``.

    Called when ``ins`` enters the decode cache.  Return ``(before, after)`` where
    either may be ``None``:

    * ``before(agent, ins)`` runs before the semantics.  It may read and modify any
      state (registers, memory).  Returning an ``int`` *skips* the instruction and
      continues at that PC (a fault injector's "instruction skip").
    * ``after(agent, ins)`` runs after the semantics; ``agent.next_pc`` holds the PC
      the agent will go to next and may be changed.

    A callback that raises stops the run with a ``PluginError`` naming the plugin.
    Filter by agent inside the callback (entries are shared by agents of one
    architecture and address space).
    """


@hookspec
def tessera_execute_observe(
    machine: MachineLike, arch: ArchitectureLike, ins: InstructionLike
) -> Observer | None:
    """Return ``observer(agent, ins)`` to call each time ``ins`` retires, or ``None``.

    Called when ``ins`` enters the decode cache.  An observer runs after the
    instruction's semantics completed — including an instruction that halts its
    agent or ends its slice — but not after one that trapped (see ``tessera_trap``).
    Unlike ``tessera_execute_instrument`` it cannot skip or redirect anything and must
    not change architectural state, so the fast engine keeps translating blocks and
    calls observers inside them, in retirement order: tracing and profiling stay
    cheap.  ``agent.next_pc`` is *not* maintained for observers.  A raising observer
    stops the run with a ``PluginError`` naming the plugin.

    An observer that keeps a record of what instructions change (the registers each
    retirement changed, with their new values) should be the core's record
    operation, ``tessera.engine.record.Record(sink, unchanged, changed,
    otherwise).observer()``: the core works out what the instruction writes and
    compiles the record into the fast engine's blocks (no call per retirement), and
    both engines record the same.
    """


# --------------------------------------------------------------------------- memory


@hookspec
def tessera_memory_regions(machine: MachineLike, space: AddressSpace) -> list[Region] | None:
    """Return regions/devices to map into ``space`` when the machine is built.

    Each item is a region object (``tessera.memory.RAM``, ``ROM`` or ``MMIO``).  Use
    ``MMIO(name, start, size, device)`` where ``device`` has ``read(offset, size)``
    and ``write(offset, size, value)``; devices must be picklable for snapshots.
    """


@hookspec
def tessera_memory_watches(machine: MachineLike, space: AddressSpace) -> list[Watch] | None:
    """Return ``tessera.memory.Watch`` objects observing or modifying data accesses.

    ``Watch(start, end, on_read=None, on_write=None)``: ``on_read(agent, address,
    size, value)`` may return a replacement value; ``on_write(agent, address, size,
    value)`` may return the value to store instead.  Each fires exactly once per
    access overlapping ``[start, end)`` made through ``space.read``/``space.write``.
    Only the regions a watch overlaps are wrapped, so unwatched memory costs nothing
    extra.  Instruction fetch is not a data access (use the execute family), and bulk
    transfers (``read_bytes``/``write_bytes``: loaders, DMA-style engines) are not
    watched.  ``Watch(start, end, journal=a_list)`` only records: each completed access
    appends ``(READ | WRITE, address, size, value)`` to the list, and the fast engine
    keeps accessing such RAM inline (docs/hooks.md).
    """


# --------------------------------------------------------------------------- sync


@hookspec
def tessera_sync_event(machine: MachineLike, event: SyncEvent) -> None:
    """Observe a synchronisation event (``tessera.sync.SyncEvent``).

    Kinds: ``wait`` (an agent parks), ``wake`` (an agent is woken), ``post``,
    ``acquire``, ``arrive``, ``release``, ``push``, ``pop``, ``set``, ``clear``,
    ``add``.  Events come only from sync objects, never per instruction.
    """


# --------------------------------------------------------------------------- timing


@hookspec(firstresult=True)
def tessera_timing_model(machine: MachineLike, arch: ArchitectureLike) -> TimingModel | None:
    """Supply the timing model that owns the clock (first answer wins).

    The model needs ``cycles(ins) -> int`` (charged each time ``ins`` runs; called
    once when the instruction enters the decode cache) and ``now(machine) -> int``
    (the machine clock).  Default: :class:`tessera.machine.clock.NominalTiming`, the
    architecture's nominal latencies with agents running concurrently.
    """


# --------------------------------------------------------------------------- lifecycle


@hookspec
def tessera_machine_ready(machine: MachineLike) -> None:
    """The machine is built, loaded and about to run for the first time.

    Good place to set registers or subscribe to things.  It is called again for a
    machine restored from a snapshot, whose state already holds whatever was added
    the first time: check ``machine.restored`` before adding sync objects or agents.
    """


@hookspec
def tessera_trap(machine: MachineLike, agent: CpuLike, trap: Trap) -> None:
    """An agent raised an architectural trap (before the architecture takes it)."""


@hookspec
def tessera_trap_taken(machine: MachineLike, agent: CpuLike, trap: Trap) -> None:
    """The architecture took a trap: the agent is at its handler, trap entry is done.

    Called after ``tessera_trap`` and the architecture's ``take_trap``, only when it
    took the trap (not for an unhandled trap, nor one that halted the agent).  What
    trap entry changed — the PC, registers an architecture saves or sets — is
    visible now and was not any instruction's doing: tracers account for it here.
    """


@hookspec
def tessera_run_finished(machine: MachineLike, result: RunResult) -> None:
    """A call to ``Machine.run`` ended (halt, stop condition, budget or error)."""
