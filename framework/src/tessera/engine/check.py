"""The lockstep engine (``--engine check``): every call of a translated block checked against stepping.

A translated block is generated code: the semantic functions of a run of
instructions, specialised and inlined (:mod:`tessera.engine.inline`).  A translation
that does not do what its semantic functions do gives a silently different answer.
In check mode the fast engine runs as usual, and each call of a translated block is
repeated on the step path from the same state; the first difference stops the run
with :class:`~tessera.errors.EngineMismatch` naming the architecture, the block, the
instruction and the register or memory byte that differs, with both values.

One call is checked in seven steps (:meth:`Lockstep.check`):

1. the live state is copied (:class:`~tessera.engine.livestate.Snapshot`): every
   agent, every sync object and the plugins' machine state (``machine.ext`` and
   attributes boards hang on the machine) — what a snapshot pickles, except memory;
2. the block runs, with every RAM and ROM write journalled
   (:class:`~tessera.engine.memtap.MemoryTap`);
3. its effects are recorded: the state, the bytes it wrote, where it went or what
   it raised at which instruction (:meth:`tessera.engine.blocks.Block.locate`);
4. state and memory are rolled back;
5. the same instructions run on the step path, one decode-cache entry at a time;
6. the two effects are compared — outcome, cycles charged, state, memory; a
   difference is narrowed down to the instruction (:func:`_localise`), the machine is
   rolled back to the block's start and ``EngineMismatch`` is raised;
7. otherwise the step path's state stands (it equals the block's) and the block's
   result is handed to the run loop, which commits it exactly as in fast mode.

What is not repeated.  An access to a device (MMIO) or to memory a plugin watches
has effects outside the machine's state, so it must happen once: the tap stops the
block *before* such an access, the instructions before it are compared, and the run
loop steps that instruction for real.  Observers (``tessera_execute_observe``,
compiled captures included) see the block's run only: the repeat calls each
instruction's semantic function without them, with ``tessera_sync_event`` listeners
muted and the host's standard output and error discarded (what the program printed,
the block's run printed).

Looping blocks are checked per call, at most :data:`CHECK_LOOP_CAP` iterations each.
"""

from __future__ import annotations

import sys
import weakref
from typing import Any

from tessera.engine.blocks import EXIT_BITS, EXIT_MASK, FIRST_LINE, NEVER, Block, BlockExit, semantic
from tessera.engine.capture import capture_of
from tessera.engine.livestate import MISSING, OPAQUE, Snapshot, diff, kind, same_leaf
from tessera.engine.memtap import MemoryTap, Unrepeatable, memory_diff
from tessera.errors import EngineMismatch

__all__ = ["CHECK_LOOP_CAP", "CheckedBlock", "CheckedBlocks", "Lockstep", "blocks_for", "statistics"]

#: Iterations of a looping block per checked call (each call is repeated and compared whole).
CHECK_LOOP_CAP = 64


class _Text(str):
    """A value already put into words (an outcome): shown as it is in a report."""

    __slots__ = ()


class _Found(BaseException):
    """Stops a traced block at the first instruction boundary where it differs from the step path."""


# ====================================================================== muting side effects of a repeat

class _Discard:
    """Standard output or error while the step path repeats a block: the block's run already printed."""

    encoding = "utf-8"
    errors = "replace"

    def write(self, data: Any) -> int:
        return len(data)

    def writelines(self, lines: Any) -> None:
        pass

    def flush(self) -> None:
        pass

    def isatty(self) -> bool:
        return False

    @property
    def buffer(self) -> _Discard:
        return self


class _Quiet:
    """While repeating: output discarded, ``tessera_sync_event`` listeners muted, memory tapped."""

    def __init__(self, machine: Any, tap: MemoryTap) -> None:
        self.machine, self.tap = machine, tap
        self.saved: tuple[Any, Any] = (None, None)

    def __enter__(self) -> _Quiet:
        self.saved = (sys.stdout, sys.stderr)
        sys.stdout = sys.stderr = _Discard()  # type: ignore[assignment]
        self.machine.__dict__["emit_sync"] = _ignore
        self.tap.install()
        return self

    def __exit__(self, *exc: Any) -> None:
        self.tap.uninstall()
        self.machine.__dict__.pop("emit_sync", None)
        sys.stdout, sys.stderr = self.saved


def _ignore(*_args: Any, **_kw: Any) -> None:
    return None


class _MutedObservers:
    """A block's observers and capture sinks swapped for no-ops (re-runs made to localise a difference)."""

    def __init__(self, block: Block) -> None:
        self.namespace = block.fn.__globals__
        silent: dict[int, Any] = {}
        for ins in block.ins:
            for ob, _plugin in getattr(ins, "observer_calls", ()):
                silent[id(ob)] = _ignore
                cap = capture_of(ob)
                if cap is not None:
                    silent[id(cap.sink)] = _null_sink
        self.swapped = {name: value for name, value in self.namespace.items() if id(value) in silent}
        self.silent = silent

    def __enter__(self) -> _MutedObservers:
        for name, value in self.swapped.items():
            self.namespace[name] = self.silent[id(value)]
        return self

    def __exit__(self, *exc: Any) -> None:
        self.namespace.update(self.swapped)


class _Shadows(dict):  # type: ignore[type-arg]
    def __missing__(self, key: Any) -> list[Any]:
        value = self[key] = [MISSING] * 4096
        return value


def _null_sink(_agent: Any) -> tuple[Any, Any, Any]:
    return [].append, [].append, _Shadows()


# ====================================================================== the checker

def _roots(agent: Any) -> list[tuple[str, Any]]:
    """Everything a block may change besides memory, named for reports; the checked agent first."""
    machine = agent.machine
    roots: list[tuple[str, Any]] = []
    for other in [agent] + [a for a in machine.agents if a is not agent]:
        prefix = "" if other is agent else f"{other.name}."
        for name, regs in (getattr(other, "regs", None) or {}).items():
            roots.append((f"{prefix}{name}", regs))
        roots.append((other.name, other))
    for name, obj in machine.sync.items():
        roots.append((f"sync {name}", obj))
    ext = machine.__dict__.get("ext")
    if ext is not None:
        for name in ext:
            roots.append((f"machine.ext[{name!r}]", ext[name]))
    for name, value in machine.__dict__.items():
        if name not in _MACHINE_CORE and not name.startswith("_") and kind(type(value)) > OPAQUE:
            roots.append((f"machine.{name}", value))
    return roots


#: Machine attributes that are the core's own (configuration, structure), not state a block changes.
_MACHINE_CORE = frozenset({"arch", "engine", "host", "config", "budget", "spaces", "agents", "sync", "symbols",
                           "breakpoints", "quantum", "total_steps", "stop_on_trap", "restored", "ext", "timing",
                           "timing_plugin", "plugin_of_arch"})


class _Outcome:
    """How a run of the block's instructions ended: after ``count`` instructions, at ``pc`` or raising."""

    __slots__ = ("count", "pc", "exc", "cycles")

    def __init__(self, count: int, pc: int | None, exc: BaseException | None, cycles: int = 0) -> None:
        self.count, self.pc, self.exc, self.cycles = count, pc, exc, cycles

    def describe(self) -> _Text:
        if isinstance(self.exc, Unrepeatable):
            return _Text(self.exc.describe())
        if self.exc is not None:
            return _Text(f"raises {_render_exception(self.exc)}")
        return _Text(f"continues at {self.pc:#010x}" if self.pc is not None else "stops")


def _render_exception(exc: BaseException) -> str:
    if type(exc).__repr__ is not BaseException.__repr__:  # its own (Trap's names cause and value)
        return repr(exc)
    fields = {k: v for k, v in vars(exc).items() if not k.startswith("_") and v not in (None, {}, ())}
    shown = ", ".join(f"{k}={_render(v)}" for k, v in fields.items())
    return f"{type(exc).__name__}({shown or ', '.join(map(repr, exc.args))})"


def _render(value: Any) -> str:
    if isinstance(value, _Text):
        return str(value)
    if isinstance(value, bool) or not isinstance(value, int):
        text = repr(value)
        return text if len(text) <= 80 else text[:77] + "..."
    return f"{value:#x}"


def _same_signal(a: BaseException | None, b: BaseException | None) -> bool:
    """The same exception, as the run loop would act on it: class, arguments and attributes."""
    if a is None or b is None:
        return a is b
    if type(a) is not type(b) or a.args != b.args:
        return False
    va, vb = vars(a), vars(b)
    if va.keys() != vb.keys():
        return False
    for key, x in va.items():
        y = vb[key]
        if x is y or same_leaf(x, y):
            continue
        try:
            if not bool(x == y):
                return False
        except Exception:  # noqa: BLE001 - a value whose == raises is a difference
            return False
    return True


class Lockstep:
    """Checks the blocks of one decode cache (one filler: an architecture in an address space)."""

    def __init__(self, filler: Any) -> None:
        self.filler = filler
        self.proxies: dict[int, CheckedBlock] = {}
        self.step_next: tuple[Any, int] | None = None
        self._tap: MemoryTap | None = None
        #: the agent whose slice runs, and its roots (named), computed once per slice
        self._roots: tuple[Any, list[tuple[str, Any]], list[Any]] = (None, [], [])
        #: calls compared whole, calls compared up to an unrepeatable access, instructions replayed
        self.checked = 0
        self.partial = 0
        self.replayed = 0

    def tap(self, machine: Any) -> MemoryTap:
        if self._tap is None or self._tap.machine is not machine:
            self._tap = MemoryTap(machine)
        return self._tap

    def view(self, agent: Any) -> CheckedBlocks:
        """The block table for one slice of ``agent`` (what may change is found again per slice)."""
        self._roots = (None, [], [])
        return CheckedBlocks(self, agent)

    def roots(self, agent: Any) -> tuple[list[tuple[str, Any]], list[Any]]:
        who, named, objects = self._roots
        if who is not agent:
            named = _roots(agent)
            objects = [obj for _name, obj in named]
            self._roots = (agent, named, objects)
        return named, objects

    # ------------------------------------------------------------------ one call

    def check(self, block: Block, agent: Any, budget: int | None) -> Any:
        """Run ``block`` as the run loop asked, check it against stepping, hand back its result."""
        machine = agent.machine
        tap = self.tap(machine)
        named, roots = self.roots(agent)
        before = Snapshot(roots)
        start = tap.mark()
        tap.install()
        result: Any = None
        raised: BaseException | None = None
        try:
            result = block.fn(agent) if budget is None else block.fn(agent, budget)
        except BaseException as exc:  # noqa: BLE001 - the block's own exception is the outcome compared
            raised = exc
        finally:
            tap.uninstall()
        fast = self._outcome(block, result, raised)
        if fast is None:  # an observer raised or Ctrl-C: not comparable; the run loop handles it as ever
            tap.forget(start)
            assert raised is not None
            raise raised
        block_changes = before.changes()
        block_memory = tap.effect(start)
        tap.undo(start)
        before.restore()
        step = self._replay(block, agent, fast, tap)
        step_memory = tap.effect(start)
        self.replayed += step.count
        _TOTALS["replayed"] += step.count
        difference = self._compare(fast, step, before, block_changes, block_memory, step_memory, named)
        if difference is not None:
            tap.undo(start)
            before.restore()
            raise self._mismatch(block, agent, fast, difference, before, named)
        tap.forget(start)
        if isinstance(fast.exc, Unrepeatable):  # compared up to it; the run loop steps it for real
            self.partial += 1
            _TOTALS["partial"] += 1
            assert fast.pc is not None  # _outcome gives the address of the instruction that raised it
            self.step_next = (agent, fast.pc)
            raise BlockExit(fast.count, fast.pc)
        self.checked += 1
        _TOTALS["checked"] += 1
        if raised is not None:
            raise raised
        return result

    @staticmethod
    def _outcome(block: Block, result: Any, raised: BaseException | None) -> _Outcome | None:
        n = block.n
        if raised is None:
            if block.loop:
                pc, it = result
                if pc < 0:  # a side exit in pass `it` after j instructions
                    pc, j = -pc >> EXIT_BITS, -pc & EXIT_MASK
                    return _Outcome((it - 1) * n + j, pc, None, block.cycles * (it - 1) + block.prefix[j])
                return _Outcome(it * n, pc, None, block.cycles * it)
            if result < 0:
                pc, j = -result >> EXIT_BITS, -result & EXIT_MASK
                return _Outcome(j, pc, None, block.prefix[j])
            return _Outcome(n, result, None, block.cycles)
        if type(raised) is BlockExit:
            whole, part = divmod(raised.count, n)
            return _Outcome(raised.count, raised.pc, None, block.cycles * whole + block.prefix[part])
        where = block.locate(raised)
        if isinstance(raised, Unrepeatable):  # in an instruction or one of its observers: stop before it
            j, it = (where[0], where[1]) if where is not None else (0, 0)
        elif where is None or where[2] is not None or not isinstance(raised, Exception) \
                or isinstance(raised, MemoryError):
            return None
        else:
            j, it, _plugin = where
        pc = block.ins[j].address
        return _Outcome(it * n + j, pc, raised, block.cycles * it + block.prefix[j])

    def _replay(self, block: Block, agent: Any, fast: _Outcome, tap: MemoryTap) -> _Outcome:
        """Step the instructions the block ran (``fast.count``, then the one that raised, if one did)."""
        cache = self.filler.cache
        fill = self.filler.fill
        ins_list, n = block.ins, block.n
        pc, cycles, i = block.start, 0, 0
        with _Quiet(agent.machine, tap):
            try:
                while i < fast.count:
                    if pc != ins_list[i % n].address:
                        return _Outcome(i, pc, None, cycles)
                    ins = cache.get(pc) or fill(pc)
                    r = semantic(ins)(agent, ins)
                    pc = ins.next if r is None else r
                    cycles += ins.cycles
                    i += 1
                if fast.exc is not None and not isinstance(fast.exc, Unrepeatable) \
                        and pc == ins_list[i % n].address:
                    ins = cache.get(pc) or fill(pc)
                    r = semantic(ins)(agent, ins)  # expected to raise as the block's did
                    return _Outcome(i + 1, ins.next if r is None else r, None, cycles + ins.cycles)
            except (Exception, Unrepeatable) as exc:  # noqa: BLE001 - the step path's exception is the outcome compared
                return _Outcome(i, pc, exc, cycles)
        return _Outcome(i, pc, None, cycles)

    @staticmethod
    def _compare(fast: _Outcome, step: _Outcome, before: Snapshot, block_changes: Snapshot, block_memory: Any,
                 step_memory: Any, named: list[tuple[str, Any]]) -> tuple[str, Any, Any] | None:
        """The first difference between the block's run and the step path's (now live), if any."""
        if fast.count != step.count or fast.pc != step.pc or not _same_signal(fast.exc, step.exc):
            if isinstance(fast.exc, Unrepeatable) and step.exc is None and fast.count == step.count \
                    and fast.pc == step.pc:
                pass  # the step path stopped where the block did, before the access
            else:
                return "the outcome", fast.describe(), step.describe()
        if fast.cycles != step.cycles:
            return "the cycles charged", fast.cycles, step.cycles
        if not block_changes.equal_changes(before.changes()):
            found = diff(before.overlay(block_changes), Snapshot([obj for _name, obj in named]), named)
            if found is not None:
                return found
        return memory_diff(block_memory, step_memory)

    # ------------------------------------------------------------------ reporting

    def _mismatch(self, block: Block, agent: Any, fast: _Outcome, difference: tuple[str, Any, Any],
                  before: Snapshot, named: list[tuple[str, Any]]) -> EngineMismatch:
        """Narrow the difference down to an instruction; the machine is left as ``before``."""
        tap = self.tap(agent.machine)
        start = tap.mark()
        try:
            located = _localise(self, block, agent, named, fast)
        except Exception:  # noqa: BLE001 - locating is best effort; the mismatch is reported anyway
            located = None
        finally:
            tap.undo(start)
            before.restore()
        if located is not None:
            index, difference = located
        else:  # the last instruction the block ran
            index = fast.count if fast.exc is not None or fast.count == 0 else fast.count - 1
        ins = block.ins[index % block.n]
        what, a, b = difference
        where = f"instruction {index} at {ins.address:#010x} ({_disassemble(agent, ins)})"
        if located is None:
            where += " or before it in the block"
        if isinstance(a, _Text):  # an outcome: what each engine does
            found = f"the fast engine {a} but the step engine {b}"
        else:
            found = f"{what} is {_render(a)} on the fast engine but {_render(b)} on the step engine"
        message = f"{agent.arch.name} block at {block.start:#010x}, {where}: {found}"
        return EngineMismatch(message, arch=agent.arch.name, block=block.start, instruction=ins.address,
                              location=what, fast=a, step=b, agent=agent.name, pc=block.start)


def _disassemble(agent: Any, ins: Any) -> str:
    try:
        arch = agent.arch
        return str(arch.disassembler_class()(arch).text(ins))
    except Exception:  # noqa: BLE001 - a message helper: fall back to the mnemonic
        return str(getattr(ins, "mnemonic", "?"))


# ====================================================================== localising a difference

class _Stop:
    """How the step path's run of one iteration ended, for :func:`_traced_iteration`.

    ``how`` is ``end`` (all instructions retired, continuing at ``pc``), ``raised``
    (instruction ``k`` raised ``exc``; ``state`` is the state it left) or ``diverged``
    (after ``k`` instructions the step path is at ``pc``, not at the block's next one).
    """

    __slots__ = ("how", "k", "pc", "exc", "state")

    def __init__(self, how: str, k: int, pc: int, exc: BaseException | None = None,
                 state: tuple[Snapshot, Any, int] | None = None) -> None:
        self.how, self.k, self.pc, self.exc, self.state = how, k, pc, exc, state

    def describe(self) -> str:
        return _Outcome(self.k, self.pc, self.exc).describe()


def _localise(lock: Lockstep, block: Block, agent: Any, named: list[tuple[str, Any]],
              fast: _Outcome) -> tuple[int, tuple[str, Any, Any]] | None:
    """``(instruction index, difference)``: the first instruction after which block and step differ.

    Iteration by iteration (a looping block is called with a budget of one): the step
    path runs the iteration and keeps a copy of the state after each instruction; then
    the block runs it under a line tracer — every statement of instruction ``k``
    carries line ``FIRST_LINE + k`` — that compares the state at each instruction
    boundary.  Observers are muted in both.  ``None`` when every single iteration
    agrees (the difference is in how one call strings iterations together).  The
    caller rolls the machine back afterwards.
    """
    tap = lock.tap(agent.machine)
    roots = [obj for _name, obj in named]
    limit = fast.count + (1 if fast.exc is not None else 0)
    done = 0
    while done < limit:
        start_state = Snapshot(roots)
        start = tap.mark()
        records, stop = _step_iteration(lock, block, agent, roots, tap, start)
        tap.undo(start)
        start_state.restore()
        found = _traced_iteration(block, agent, named, tap, start, records, stop)
        if found is not None:
            k, difference = found
            return done + k, difference
        if stop.how != "end" or stop.pc != block.start or not block.loop:
            return None
        done += block.n
    return None


def _step_iteration(lock: Lockstep, block: Block, agent: Any, roots: list[Any], tap: MemoryTap,
                    start: int) -> tuple[list[tuple[Snapshot, Any, int]], _Stop]:
    """Step one iteration of the block: after each instruction the state, the memory written
    and the PC; and how the iteration ended."""
    cache, fill = lock.filler.cache, lock.filler.fill
    records: list[tuple[Snapshot, Any, int]] = [(Snapshot(roots), {}, block.start)]
    pc = block.start
    with _Quiet(agent.machine, tap):
        for k, expected in enumerate(block.ins):
            if pc != expected.address:
                return records, _Stop("diverged", k, pc)
            try:
                ins = cache.get(pc) or fill(pc)
                r = semantic(ins)(agent, ins)
            except (Exception, Unrepeatable) as exc:  # noqa: BLE001 - the step path's exception is the outcome compared
                return records, _Stop("raised", k, pc, exc, (Snapshot(roots), tap.effect(start), pc))
            pc = ins.next if r is None else r
            records.append((Snapshot(roots), tap.effect(start), pc))
    return records, _Stop("end", block.n, pc)


def _traced_iteration(block: Block, agent: Any, named: list[tuple[str, Any]], tap: MemoryTap, start: int,
                      records: list[tuple[Snapshot, Any, int]],
                      stop: _Stop) -> tuple[int, tuple[str, Any, Any]] | None:
    """Run one iteration of the block, comparing with ``records`` at every instruction boundary.

    Returns ``(k, difference)`` for the first instruction ``k`` (of this iteration) after
    which the block's state, memory, next PC or signal differs from the step path's.
    """
    roots = [obj for _name, obj in named]
    code, first, end = block.code, FIRST_LINE, FIRST_LINE + block.n
    reached = [0]
    found: list[tuple[int, tuple[str, Any, Any]]] = []

    def state_difference(record: tuple[Snapshot, Any, int]) -> tuple[str, Any, Any] | None:
        state, memory, _pc = record
        return diff(Snapshot(roots), state, named) or memory_diff(tap.effect(start), memory)

    def boundary(k: int) -> None:  # the block retired instructions 0..k-1 and is about to run k
        if stop.how == "raised" and k > stop.k:
            found.append((stop.k, ("the outcome", _Text("retires it"), stop.describe())))
            raise _Found
        if stop.how == "diverged" and k >= stop.k:
            difference = state_difference(records[stop.k]) or \
                ("the next pc", block.ins[stop.k].address, stop.pc)
            found.append((stop.k - 1, difference))
            raise _Found
        changed = state_difference(records[k])
        if changed is not None:
            found.append((k - 1, changed))
            raise _Found

    def local(frame: Any, event: str, _arg: Any) -> Any:
        if event == "line":
            k = frame.f_lineno - first
            if 0 < k < end - first and k > reached[0]:
                reached[0] = k
                boundary(k)
        return local

    def calls(frame: Any, _event: str, _arg: Any) -> Any:
        return local if frame.f_code is code else None

    result: Any = None
    raised: BaseException | None = None
    previous = sys.gettrace()
    tap.install()
    try:
        with _MutedObservers(block):
            sys.settrace(calls)
            try:
                result = block.fn(agent) if not block.loop else block.fn(agent, 1)
            finally:
                sys.settrace(previous)
    except _Found:
        return found[0]
    except BaseException as exc:  # noqa: BLE001 - re-raised after the tracer is removed
        raised = exc
    finally:
        tap.uninstall()
    fast = Lockstep._outcome(block, result, raised)
    if fast is None:
        return None
    return _final_difference(block, fast, stop, records, state_difference)


def _final_difference(block: Block, fast: _Outcome, stop: _Stop, records: list[tuple[Snapshot, Any, int]],
                      state_difference: Any) -> tuple[int, tuple[str, Any, Any]] | None:
    """How the traced iteration ended, against how the step path's did."""
    k = fast.count
    if fast.exc is not None:  # the block raised in instruction k
        if stop.how == "raised" and stop.k == k and _same_signal(fast.exc, stop.exc):
            assert stop.state is not None
            difference = state_difference(stop.state)
            return None if difference is None else (k, difference)
        if stop.how == "end" or stop.k > k:
            before = state_difference(records[k])
            return (k - 1, before) if before is not None and k > 0 else \
                (k, ("the outcome", fast.describe(), _Text("retires it")))
        return (min(k, stop.k), ("the outcome", fast.describe(), stop.describe()))
    if stop.how == "raised" and stop.k < k:
        return stop.k, ("the outcome", _Text("retires it"), stop.describe())
    if stop.how == "diverged" and stop.k <= k:
        difference = state_difference(records[stop.k]) or ("the next pc", block.ins[stop.k].address, stop.pc)
        return stop.k - 1, difference
    if 0 < k < len(records):  # the block retired k instructions (all, or up to a write to its code)
        difference = state_difference(records[k])
        if difference is not None:
            return k - 1, difference
        if records[k][2] != fast.pc:
            return k - 1, ("the next pc", fast.pc, records[k][2])
    return None


# ====================================================================== the run loop's view

class CheckedBlock:
    """What the run loop sees of a block in check mode: the block's shape, a checking ``fn``."""

    __slots__ = ("block", "lock", "start", "n", "cycles", "guard", "prefix", "ins", "loop", "cap")

    def __init__(self, block: Block, lock: Lockstep) -> None:
        self.block, self.lock = block, lock
        self.start, self.n, self.cycles, self.guard = block.start, block.n, block.cycles, block.guard
        self.prefix, self.ins, self.loop = block.prefix, block.ins, block.loop
        self.cap = min(block.cap, CHECK_LOOP_CAP)

    def fn(self, agent: Any, budget: int | None = None) -> Any:
        return self.lock.check(self.block, agent, budget)

    def locate(self, exc: BaseException) -> tuple[int, int, str | None] | None:
        return self.block.locate(exc)


_STEP = Block(0, [])  # n == NEVER: the run loop steps this PC once


class CheckedBlocks:
    """``blocks.get(pc)`` for the run loop of one agent's slice in check mode."""

    __slots__ = ("lock", "agent", "blocks", "proxies")

    def __init__(self, lock: Lockstep, agent: Any) -> None:
        self.lock, self.agent = lock, agent
        self.blocks = lock.filler.cache.blocks
        self.proxies = lock.proxies

    def get(self, pc: int) -> Any:
        block = self.blocks.get(pc)
        if block is None or block.n == NEVER:
            return block
        lock = self.lock
        if lock.step_next is not None and lock.step_next[1] == pc and lock.step_next[0] is self.agent:
            lock.step_next = None
            return _STEP
        proxy = self.proxies.get(pc)
        if proxy is None or proxy.block is not block:
            proxy = self.proxies[pc] = CheckedBlock(block, lock)
        return proxy


#: every live checker, for :func:`statistics`; a checker lives as long as its filler
_LOCKSTEPS: weakref.WeakSet[Lockstep] = weakref.WeakSet()
#: the same counts for the whole process
_TOTALS = {"checked": 0, "partial": 0, "replayed": 0}


def blocks_for(agent: Any, filler: Any) -> CheckedBlocks:
    """The run loop's block table for ``agent`` in check mode (selected once per slice).

    The checker is kept with the filler (transient engine state like it: not
    pickled, gone with the machine), never in a global table that would keep
    machines — and their memories — alive.
    """
    lock = filler.__dict__.get("_lockstep")
    if lock is None:
        lock = filler.__dict__["_lockstep"] = Lockstep(filler)
        _LOCKSTEPS.add(lock)
    return lock.view(agent)


def statistics(machine: Any = None) -> dict[str, int]:
    """What check mode compared on ``machine`` so far (``None``: in this process, machines gone
    included): calls compared whole, calls compared up to an access that happens once,
    instructions repeated by stepping."""
    if machine is None:
        return dict(_TOTALS)
    totals = {"checked": 0, "partial": 0, "replayed": 0}
    for lock in list(_LOCKSTEPS):
        if getattr(lock.filler, "machine", None) is machine:
            totals["checked"] += lock.checked
            totals["partial"] += lock.partial
            totals["replayed"] += lock.replayed
    return totals

