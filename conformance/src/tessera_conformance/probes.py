"""Probe plugins: ordinary Tessera plugins the checks register next to the plugin under test.

They use only the public hooks, so what they see is what any tool plugin sees, and
they keep pluggy off the per-instruction path like any plugin must: the hooks return
plain callbacks, which append tuples to a list.

Event tuples (one shared ``log`` per run, in the order things happened):

* ``("B", agent, pc, word, cycles)`` — an execute ``before`` callback;
* ``("A", agent, pc, next_pc)`` — an execute ``after`` callback;
* ``("T", agent, pc, cause)`` — ``tessera_trap``;
* ``("W", agent, obj, pc)`` — a ``wait`` sync event (an agent parked at ``pc``);
* ``("R" | "S", agent, address, size, value, space)`` — a memory watch saw a read / store;
* ``("O", agent, "PC WORD")`` — an execute *observer* saw an instruction retire and change no
  register; ``("O", agent, "PC WORD FILE[INDEX] =")`` then ``("V", agent, value)`` for each
  register it changed, with the new value.

:class:`RegisterBounds` is not a plugin: an :class:`Observer` given one checks, at each
retirement it sees, that the registers the instruction wrote hold values within the
width their ``RegisterFile`` declares (``register-width``).
"""

from __future__ import annotations

import hashlib
from typing import Any

import tessera
from tessera.engine.record import Change, Record
from tessera.memory import Watch

CHUNK = 1 << 16
_ZERO = bytes(CHUNK)


class Recorder:
    """Execute, trap and wait events of every agent (the trace of a run)."""

    TESSERA_API_VERSION = 1

    def __init__(self, log: list[tuple[Any, ...]] | None = None, *, after: bool = True) -> None:
        self.log = [] if log is None else log
        self.after = after

    @tessera.hookimpl
    def tessera_execute_instrument(self, ins: Any) -> Any:
        log = self.log

        def before(agent: Any, ins: Any) -> None:
            log.append(("B", agent.name, ins.address, ins.word, ins.cycles))

        def after(agent: Any, ins: Any) -> None:
            log.append(("A", agent.name, ins.address, agent.next_pc))

        return before, (after if self.after else None)

    @tessera.hookimpl
    def tessera_trap(self, agent: Any, trap: Any) -> None:
        self.log.append(("T", agent.name, getattr(agent, "pc", None), trap.cause))

    @tessera.hookimpl
    def tessera_sync_event(self, machine: Any, event: Any) -> None:
        if event.kind == "wait":
            pc = None
            for agent in machine.agents:  # where the agent stands when it parks
                if agent.name == event.agent:
                    pc = getattr(agent, "pc", None)
            self.log.append(("W", event.agent, event.obj, pc))

    def trace(self) -> list[tuple[str, int, int]]:
        """``(agent, pc, word)`` of every instruction started, in order."""
        return [(e[1], e[2], e[3]) for e in self.log if e[0] == "B"]


class RegisterBounds:
    """Register values outside the width their ``RegisterFile`` declares (``register-width``).

    A register of a ``width``-bit file holds an ``int`` in ``0 .. 2**width - 1``;
    a semantic function that forgets to mask (``2**32`` in a 32-bit register, ``-1``
    instead of ``0xFFFFFFFF``) breaks that silently until some comparison or store
    goes wrong much later.  :meth:`check` looks at one register, :meth:`check_all` at
    every register of an agent; the first ``limit`` problems are kept, in order, each
    register once.
    """

    def __init__(self, limit: int = 5) -> None:
        self.found: list[str] = []
        self.limit = limit
        self._seen: set[tuple[str, str, int]] = set()  # each register once: where it first went wrong
        self._masks: dict[str, dict[str, int]] = {}  # by architecture name

    def masks(self, agent: Any) -> dict[str, int]:
        """``{file: 2**width - 1}`` for the agent's register files with storage."""
        arch = agent.arch
        got = self._masks.get(arch.name)
        if got is None:
            got = self._masks[arch.name] = {rf.name: (1 << rf.width) - 1 for rf in arch.register_files
                                            if rf.storage}
        return got

    def _note(self, agent: Any, regfile: str, index: int, value: Any, where: str) -> None:
        key = (agent.name, regfile, index)
        if len(self.found) >= self.limit or key in self._seen:
            return
        self._seen.add(key)
        width = self.masks(agent)[regfile].bit_length()
        if not isinstance(value, int):
            what = f"{value!r}, not an integer"
        elif value < 0:
            what = f"{value} (negative; a {width}-bit register holds 0 .. {(1 << width) - 1:#x})"
        else:
            what = f"{value:#x}, wider than {width} bits"
        self.found.append(f"{agent.name} {regfile}[{index}] = {what} {where}")

    def check(self, agent: Any, regfile: str, index: int, value: Any, where: str) -> None:
        mask = self.masks(agent).get(regfile)
        if mask is not None and not (isinstance(value, int) and 0 <= value <= mask):
            self._note(agent, regfile, index, value, where)

    def check_all(self, agent: Any, where: str) -> None:
        regs = getattr(agent, "regs", None)
        if not regs:
            return
        masks = self.masks(agent)
        for regfile, values in regs.items():
            mask = masks.get(regfile)
            if mask is None or not values:
                continue
            try:  # two C-level passes: cheap enough to run after every instruction
                fine = min(values) >= 0 and max(values) <= mask
            except TypeError:  # something that is not a number
                fine = False
            if not fine:
                for index, value in enumerate(values):
                    if not (isinstance(value, int) and 0 <= value <= mask):
                        self._note(agent, regfile, index, value, where)
                        break


def _where(ins: Any) -> str:
    return f"after {ins.mnemonic} at {ins.address:#x} (word {ins.word:#x})"


class Observer:
    """Retirements (``tessera_execute_observe``), traps and waits: a trace that keeps the fast
    engine translating blocks, unlike :class:`Recorder`'s execute callbacks.

    Its observers are the core's record operation (:class:`tessera.engine.record.Record`),
    as a tracer's would be: per retirement the token ``"PC WORD"`` when no register
    changed, else ``"PC WORD FILE[INDEX] ="`` and ``("V", agent, value)`` for each
    register that changed.  The fast engine compiles them into its blocks wherever an
    instruction writes one known register or none, and calls them elsewhere; the
    step engine calls them at every retirement, so ``engine-equivalence``, which
    requires the logs to be equal, compares the compiled records with the called ones.

    Given ``bounds`` (:class:`RegisterBounds`), every new value recorded is checked —
    on both engines, since a compiled block hands its values to the same sink — and so
    is every register after an instruction whose writes are not known (or not yet
    worked out: the core compares every register until an instruction is hot); trap
    entry and the state before the first instruction are checked whole.
    """

    TESSERA_API_VERSION = 1

    def __init__(self, log: list[tuple[Any, ...]] | None = None, *,
                 bounds: RegisterBounds | None = None) -> None:
        self.log = [] if log is None else log
        self.bounds = bounds
        self._sinks: dict[Any, tuple[Any, Any, dict[str, list[Any]]]] = {}
        #: changed-token -> ``(file, index, where)``: what a recorded value is checked as
        self._written: dict[str, tuple[str, int, str]] = {}

    def sink(self, agent: Any) -> tuple[Any, Any, dict[str, list[Any]]]:
        """Per agent: ``(record, remember, shadows)`` (a :data:`tessera.engine.record.Sink`)."""
        got = self._sinks.get(agent)
        if got is None:
            log, name, bounds, written = self.log, agent.name, self.bounds, self._written

            def record(token: str) -> None:
                log.append(("O", name, token))

            def remember(value: Any) -> None:
                if bounds is not None:  # the token just recorded names the register
                    register = written.get(log[-1][2])
                    if register is not None:
                        bounds.check(agent, register[0], register[1], value, register[2])
                log.append(("V", name, value))

            shadows = {f: list(v) for f, v in (getattr(agent, "regs", None) or {}).items()}
            got = self._sinks[agent] = (record, remember, shadows)
        return got

    @tessera.hookimpl
    def tessera_machine_ready(self, machine: Any) -> None:
        mine = set(map(id, machine.agents))  # one probe may serve machine after machine: keep none alive
        self._sinks = {a: v for a, v in self._sinks.items() if id(a) in mine}
        for agent in machine.agents:  # shadows from the same moment on both engines
            self._sinks.pop(agent, None)
            if getattr(agent, "regs", None) is not None:
                self.sink(agent)
                if self.bounds is not None:
                    self.bounds.check_all(agent, "before the first instruction (set by the board or a plugin)")

    @tessera.hookimpl
    def tessera_execute_observe(self, ins: Any) -> Any:
        unchanged = f"{ins.address:#x} {ins.word:#x}"
        where = _where(ins)
        written = self._written
        sink = self.sink
        bounds = self.bounds

        def changed(regfile: str, index: int) -> str:
            token = f"{unchanged} {regfile}[{index}] ="
            written[token] = (regfile, index, where)
            return token

        def otherwise(agent: Any, changes: list[Change], complete: bool) -> None:
            record, remember, _shadows = sink(agent)
            for regfile, index, value in changes:  # what the record operation does without otherwise
                record(changed(regfile, index))
                remember(value)
            if not changes:
                record(unchanged)
            if complete and bounds is not None:  # writes not known: look at every register
                bounds.check_all(agent, where)

        return Record(sink, unchanged, changed, otherwise).observer()

    @tessera.hookimpl
    def tessera_trap(self, agent: Any, trap: Any) -> None:
        self.log.append(("T", agent.name, getattr(agent, "pc", None), trap.cause))

    @tessera.hookimpl
    def tessera_trap_taken(self, agent: Any, trap: Any) -> None:
        if self.bounds is not None:
            self.bounds.check_all(agent, f"after trap entry ({getattr(trap, 'name', 'trap')}, "
                                        f"cause {getattr(trap, 'cause', '?')})")

    @tessera.hookimpl
    def tessera_sync_event(self, machine: Any, event: Any) -> None:
        if event.kind in ("wait", "wake"):
            self.log.append((event.kind, event.agent, event.obj))


class Selective:
    """Subscribes to one address only: its callbacks must fire there and nowhere else."""

    TESSERA_API_VERSION = 1

    def __init__(self, address: int) -> None:
        self.address = address
        self.seen: list[tuple[str, int]] = []

    @tessera.hookimpl
    def tessera_execute_instrument(self, ins: Any) -> Any:
        if ins.address != self.address:
            return None
        seen = self.seen

        def before(agent: Any, ins: Any) -> None:
            seen.append((agent.name, ins.address))

        return before, None


class Watcher:
    """Watches ``[start, end)`` of every address space (default: all of it).

    With ``keep_originals`` it saves each 64 KiB chunk of RAM/ROM the first time a
    watched store is about to change it, so that every byte a run changed can be
    traced back to a store the watch saw (see :func:`unwatched_changes`).
    """

    TESSERA_API_VERSION = 1

    def __init__(self, log: list[tuple[Any, ...]] | None = None, *, window: tuple[int, int] | None = None,
                 keep_originals: bool = False) -> None:
        self.log = [] if log is None else log
        self.window = window
        self.keep_originals = keep_originals
        self.originals: dict[tuple[str, str, int], bytes] = {}

    @tessera.hookimpl
    def tessera_memory_watches(self, space: Any) -> Any:
        start, end = self.window if self.window is not None else (0, space.limit)
        log = self.log
        name = space.name
        originals = self.originals
        keep = self.keep_originals

        def on_read(agent: Any, address: int, size: int, value: int) -> None:
            log.append(("R", getattr(agent, "name", None), address, size, value, name))

        def on_write(agent: Any, address: int, size: int, value: int) -> None:
            log.append(("S", getattr(agent, "name", None), address, size, value, name))
            if keep:
                _save_chunks(space, originals, address, size)

        return [Watch(start, end, on_read=on_read, on_write=on_write)]


def _data_regions(space: Any) -> list[Any]:
    out = []
    for desc in space.describe():
        if desc["kind"] in ("ram", "rom"):
            region = space.region_named(desc["name"])
            if getattr(region, "data", None) is not None:
                out.append(region)
    return out


def _save_chunks(space: Any, originals: dict[tuple[str, str, int], bytes], address: int, size: int) -> None:
    for region in _data_regions(space):
        if region.start <= address < region.end:
            first = (address - region.start) // CHUNK * CHUNK
            last = min(address + size, region.end) - region.start - 1
            for off in range(first, last + 1, CHUNK):
                key = (space.name, region.name, off)
                if key not in originals:
                    originals[key] = bytes(region.data[off:off + CHUNK])
            return


def chunk_digests(machine: Any) -> dict[tuple[str, str, int], bytes]:
    """A digest of every 64 KiB chunk of RAM and ROM in every address space."""
    out = {}
    for space in machine.spaces.values():
        for region in _data_regions(space):
            data = region.data
            for off in range(0, region.size, CHUNK):
                chunk = data[off:off + CHUNK]  # a bytes copy: comparing it is a memcmp
                out[(space.name, region.name, off)] = (
                    b"" if chunk == _ZERO[:len(chunk)] else hashlib.blake2b(chunk, digest_size=16).digest())
    return out


def unwatched_changes(machine: Any, before: dict[tuple[str, str, int], bytes], watcher: Watcher,
                      limit: int = 5) -> list[str]:
    """Bytes of RAM/ROM the run changed that no watched store covers (at most ``limit``)."""
    after = chunk_digests(machine)
    stores: dict[str, list[tuple[int, int]]] = {}
    for e in watcher.log:
        if e[0] == "S":
            stores.setdefault(e[5], []).append((e[2], e[2] + e[3]))
    bad: list[str] = []
    covered: dict[str, set[int]] = {}
    for key, digest in after.items():
        if before.get(key) == digest:
            continue
        space_name, region_name, off = key
        space = machine.spaces[space_name]
        region = space.region_named(region_name)
        base = region.start + off
        old = watcher.originals.get(key)
        if old is None:
            last = base + min(CHUNK, region.size - off) - 1
            bad.append(f"{space_name} {base:#x}..{last:#x} (region {region_name}) changed "
                       "and no watched store touched it")
        else:
            new = bytes(region.data[off:off + CHUNK])
            if space_name not in covered:
                covered[space_name] = {a for lo, hi in stores.get(space_name, []) for a in range(lo, hi)}
            mine = covered[space_name]
            for i, (a, b) in enumerate(zip(old, new)):
                if a != b and base + i not in mine:
                    bad.append(f"{space_name} byte {base + i:#x} changed ({a:#04x} -> {b:#04x}) and no "
                               "watched store covers it")
                    break
        if len(bad) >= limit:
            break
    return bad
