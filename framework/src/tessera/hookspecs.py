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
**discovery** (architectures, CLI commands, conformance cases) and **lifecycle**
(machine ready, trap, run finished).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import pluggy

if TYPE_CHECKING:  # pragma: no cover
    from tessera.engine.agent import Agent
    from tessera.isa.description import Architecture
    from tessera.isa.instruction import Instruction
    from tessera.machine.machine import Machine, RunResult
    from tessera.memory.space import AddressSpace

hookspec = pluggy.HookspecMarker("tessera")


# --------------------------------------------------------------------------- discovery


@hookspec
def tessera_architectures() -> list[Architecture]:
    """Return the architectures this plugin provides (a list of ``Architecture``).

    Called once per process when the architecture registry is first needed.  Two
    plugins providing the same architecture name is an error naming both.
    """


@hookspec
def tessera_cli_commands(cli: Any) -> None:
    """Add subcommands to the ``tessera`` command line.

    ``cli`` collects commands: call ``cli.add_command(cmd)`` with a
    :class:`click.Command`, or decorate a function with ``@cli.command()``.  A name
    that clashes with a built-in command is refused with the plugin's name.
    """


@hookspec
def tessera_run_options() -> list[Any]:
    """Return ``click.Option`` objects to add to ``tessera run`` and ``tessera resume``.

    For tool plugins (``--trace FORMAT``).  Parameter names must not clash with the
    built-in options or another plugin's (a clash is refused naming the plugin).  The
    values the user gave reach :func:`tessera_run_configure`.
    """


@hookspec
def tessera_run_configure(machine: Machine, options: dict[str, Any]) -> None:
    """Configure a tool for this run from the options of :func:`tessera_run_options`.

    ``options`` maps every plugin-contributed parameter name to its value (``None``
    or the default when not given).  Called by ``tessera run``/``resume`` after the
    program is loaded and before the run starts: raise
    :class:`tessera.errors.ConfigError` for bad values (an unwritable path, a filter
    that matches nothing) — the user gets one line and exit status 64, and the run
    does not start.
    """


@hookspec
def tessera_conformance_cases(arch: Architecture) -> list[Any]:
    """Return conformance cases (program + expected final state or output) for ``arch``.

    Each case is a ``dict`` with at least ``name`` and ``source`` (assembly) or
    ``program`` (a path), and ``expect`` (register/memory values) or ``stdout``.
    Return ``None`` or ``[]`` for architectures you do not know.
    """


# --------------------------------------------------------------------------- decode


@hookspec(firstresult=True)
def tessera_decode(
    machine: Machine, arch: Architecture, word: int, address: int
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
    machine: Machine, arch: Architecture, ins: Instruction
) -> Any:
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
def tessera_execute_observe(machine: Machine, arch: Architecture, ins: Instruction) -> Any:
    """Return ``observer(agent, ins)`` to call each time ``ins`` retires, or ``None``.

    Called when ``ins`` enters the decode cache.  An observer runs after the
    instruction's semantics completed — including an instruction that halts its
    agent or ends its slice — but not after one that trapped (see ``tessera_trap``).
    Unlike ``tessera_execute_instrument`` it cannot skip or redirect anything and must
    not change architectural state, so the fast engine keeps translating blocks and
    calls observers inside them, in retirement order: tracing and profiling stay
    cheap.  ``agent.next_pc`` is *not* maintained for observers.  A raising observer
    stops the run with a ``PluginError`` naming the plugin.
    """


# --------------------------------------------------------------------------- memory


@hookspec
def tessera_memory_regions(machine: Machine, space: AddressSpace) -> list[Any]:
    """Return regions/devices to map into ``space`` when the machine is built.

    Each item is a region object (``tessera.memory.RAM``, ``ROM`` or ``MMIO``).  Use
    ``MMIO(name, start, size, device)`` where ``device`` has ``read(offset, size)``
    and ``write(offset, size, value)``; devices must be picklable for snapshots.
    """


@hookspec
def tessera_memory_watches(machine: Machine, space: AddressSpace) -> list[Any]:
    """Return ``tessera.memory.Watch`` objects observing or modifying data accesses.

    ``Watch(start, end, on_read=None, on_write=None)``: ``on_read(agent, address,
    size, value)`` may return a replacement value; ``on_write(agent, address, size,
    value)`` may return the value to store instead.  Each fires exactly once per
    access overlapping ``[start, end)`` made through ``space.read``/``space.write``.
    Only the regions a watch overlaps are wrapped, so unwatched memory costs nothing
    extra.  Instruction fetch is not a data access (use the execute family), and bulk
    transfers (``read_bytes``/``write_bytes``: loaders, DMA-style engines) are not
    watched.
    """


# --------------------------------------------------------------------------- sync


@hookspec
def tessera_sync_event(machine: Machine, event: Any) -> None:
    """Observe a synchronisation event (``tessera.sync.SyncEvent``).

    Kinds: ``wait`` (an agent parks), ``wake`` (an agent is woken), ``post``,
    ``acquire``, ``arrive``, ``release``, ``push``, ``pop``, ``set``, ``clear``,
    ``add``.  Events come only from sync objects, never per instruction.
    """


# --------------------------------------------------------------------------- timing


@hookspec(firstresult=True)
def tessera_timing_model(machine: Machine, arch: Architecture) -> Any:
    """Supply the timing model that owns the clock (first answer wins).

    The model needs ``cycles(ins) -> int`` (charged each time ``ins`` runs; called
    once when the instruction enters the decode cache) and ``now(machine) -> int``
    (the machine clock).  Default: :class:`tessera.machine.clock.NominalTiming`, the
    architecture's nominal latencies with agents running concurrently.
    """


# --------------------------------------------------------------------------- lifecycle


@hookspec
def tessera_machine_ready(machine: Machine) -> None:
    """The machine is built, loaded and about to run for the first time.

    Good place to set registers or subscribe to things.  It is called again for a
    machine restored from a snapshot, whose state already holds whatever was added
    the first time: check ``machine.restored`` before adding sync objects or agents.
    """


@hookspec
def tessera_trap(machine: Machine, agent: Agent, trap: Any) -> None:
    """An agent raised an architectural trap (before the architecture takes it)."""


@hookspec
def tessera_trap_taken(machine: Machine, agent: Agent, trap: Any) -> None:
    """The architecture took a trap: the agent is at its handler, trap entry is done.

    Called after ``tessera_trap`` and the architecture's ``take_trap``, only when it
    took the trap (not for an unhandled trap, nor one that halted the agent).  What
    trap entry changed — the PC, registers an architecture saves or sets — is
    visible now and was not any instruction's doing: tracers account for it here.
    """


@hookspec
def tessera_run_finished(machine: Machine, result: RunResult) -> None:
    """A call to ``Machine.run`` ended (halt, stop condition, budget or error)."""
