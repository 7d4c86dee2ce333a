"""The record operation: observers that keep a record of what instructions change.

A tool that logs every retirement with the registers it changed — a commit-log
tracer, register coverage, a checker comparing two runs — does not have to work out
what an instruction writes, nor keep two implementations in step.  It describes the
record it wants with a :class:`Record` and returns ``Record(...).observer()`` from
``tessera_execute_observe``; the core does the rest, the same way on both engines:

* it finds which registers the instruction can write (from its semantic function
  specialised for its operands, as the fast engine inlines it) once the instruction
  has retired a few times, per agent class;
* after each retirement it compares those registers with the sink's *shadow*
  copies, updates the shadows, and records: the ``unchanged`` token when the
  instruction writes no register or did not change the one it writes; the
  ``changed(file, index)`` token followed by the new value when it changed its one
  register; for an instruction that writes several registers, or whose writes are
  not known (it calls something, indexes a register file with a variable, accesses
  memory, has not retired often enough yet), the changed registers are found by
  comparison — only its known registers, or every register of every shadowed file —
  and handed to ``otherwise``;
* the fast engine compiles the first two cases into its translated blocks (a compare
  and one or two list appends, no call: :mod:`tessera.engine.capture`), and calls the
  observer for the rest; the step engine and instructions run one at a time call
  the observer, which does exactly the same.

So records never depend on the engine, and an unused record operation costs nothing:
it exists only in the observers a plugin returns.

The sink is ``sink(agent) -> (record, remember, shadows)``: two appenders (``record``
takes a token, ``remember`` a register's new value) and the agent's shadow copies
by register-file name (lists the core compares and updates; take them as copies of
``agent.regs`` when tracing starts).  The core calls it before each retirement it
records through the observer, and once per call of a translated block — a looping
block at least every :data:`LOOP_CAP` iterations — so the sink is where records
that accumulated can be written out.  Tokens are ints, strings or bytes (they become
literals in compiled blocks; any other value is recorded through the observer).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from operator import ne as _ne
from typing import TYPE_CHECKING, Any

import attrs

from tessera.engine.capture import LOOP_CAP, Capture, static_writes

if TYPE_CHECKING:
    from tessera.protocols import Observer

__all__ = ["LOOP_CAP", "Change", "Record", "Sink"]

#: ``sink(agent) -> (record, remember, shadows)``: see the module docstring.
Sink = Callable[[Any], tuple[Callable[[Any], Any], Callable[[Any], Any], Mapping[str, list[Any]]]]
#: One changed register as ``otherwise`` receives it: ``(file, index, new value)``.
Change = tuple[str, int, Any]

# what an instruction's known writes call for (the first element of a plan)
_NONE, _ONE, _SOME, _ALL = range(4)
_UNPLANNED = (_ALL,)


def _callable(_instance: Any, attribute: Any, value: Any) -> None:
    if not callable(value):
        raise TypeError(f"Record.{attribute.name} must be callable, not {type(value).__name__}")


@attrs.frozen
class Record:
    """What to record after each retirement of one instruction (see the module docstring).

    ``sink`` gives, per agent, where records go and the shadow copies registers are
    compared with; ``unchanged`` is the token of a retirement that changed no register;
    ``changed(file, index)`` the token of one that changed register ``index`` of
    ``file``, its only register (asked once per instruction and agent class; the new
    value is remembered after it).  ``otherwise(agent, changes, complete)`` records a
    retirement of an instruction that writes several registers or whose writes are not
    known: ``changes`` lists the registers that differ from their shadows, in file
    then index order (the shadows are already updated); ``complete`` is true when every
    register was compared because the writes are not known — such an instruction may
    also have accessed memory.  Without ``otherwise``, each changed register is
    recorded as with one register (its token, then its value), and ``unchanged`` when
    none changed.
    """

    sink: Sink = attrs.field(validator=_callable)
    unchanged: Any
    changed: Callable[[str, int], Any] = attrs.field(validator=_callable)
    otherwise: Callable[[Any, list[Change], bool], None] | None = attrs.field(
        default=None, validator=attrs.validators.optional(_callable))

    def observer(self) -> Observer:
        """The observer to return from ``tessera_execute_observe`` (one per instruction)."""
        return _observer(self)


def _observer(request: Record) -> Observer:  # noqa: C901 - one closure: its cells are the fast path
    """Build the observer of ``request``: per agent class, a plan made from the
    instruction's known writes, with the common cases inline."""
    from tessera.engine.blocks import hot_threshold

    sink = request.sink
    unchanged = request.unchanged
    token_of = request.changed
    otherwise = request.otherwise
    # Working out an instruction's writes costs about a millisecond, so it waits until
    # the instruction has retired half as often as a PC must be reached to be
    # translated: cold code never pays, hot code is analysed before its block is built.
    # Until then every register is compared.  The count is the engine's own, so both
    # engines switch at the same retirement and record the same.
    unplanned = max(1, hot_threshold() // 2)
    plans: dict[type, tuple[Any, ...]] = {}
    tokens: dict[tuple[str, int], Any] = {}
    # the plan of the first agent class seen, in cells (the common case)
    cls0: Any = None
    kind = -1
    p_file = ""
    p_index = 0
    p_token: Any = None
    # the registers this instruction changed when its writes were last compared in full
    hint: dict[str, list[int]] = {}

    def token(file: str, index: int) -> Any:
        got = tokens.get((file, index), tokens)
        if got is tokens:
            got = tokens[(file, index)] = token_of(file, index)
        return got

    def plan_for(agent: Any, ins: Any, shadows: Mapping[str, list[Any]]) -> tuple[Any, ...]:
        nonlocal unplanned, cls0, kind, p_file, p_index, p_token
        cls = agent.__class__
        got = plans.get(cls)
        if got is not None:
            return got
        if unplanned > 1:   # not hot yet: compare everything (what unknown writes do)
            unplanned -= 1
            return _UNPLANNED
        plan = plans[cls] = _plan(static_writes(ins, agent), shadows, token)
        if cls0 is None:
            cls0 = cls
            kind = plan[0]
            if kind == _ONE:
                _k, p_file, p_index, p_token = plan
            if kind in (_NONE, _ONE):   # what the fast engine compiles into blocks
                register = (p_file, p_index) if kind == _ONE else None
                observe.capture = Capture(sink, register, p_token if kind == _ONE else unchanged,  # type: ignore[attr-defined]
                                          unchanged, cls)
        return plan

    def general(agent: Any, ins: Any, record: Any, remember: Any, shadows: Mapping[str, list[Any]]) -> None:
        plan = plan_for(agent, ins, shadows)
        what = plan[0]
        if what == _ONE:          # an agent of another class than the first
            _k, file, index, tok = plan
            value = agent.regs[file][index]
            shadow = shadows[file]
            if value != shadow[index]:
                shadow[index] = value
                record(tok)
                remember(value)
            else:
                record(unchanged)
            return
        if what == _NONE:
            record(unchanged)
            return
        found: list[Change] = []
        if what == _SOME:
            regs = agent.regs
            for file, index in plan[1]:
                value = regs[file][index]
                shadow = shadows[file]
                if value != shadow[index]:
                    shadow[index] = value
                    found.append((file, index, value))
        else:
            _compare_all(agent, shadows, found, hint)
        if otherwise is not None:
            otherwise(agent, found, what == _ALL)
        elif found:
            for file, index, value in found:
                record(token(file, index))
                remember(value)
        else:
            record(unchanged)

    def observe(agent: Any, ins: Any) -> None:
        record, remember, shadows = sink(agent)
        if agent.__class__ is cls0:
            if kind == _ONE:      # the common case, as a block's compiled form does it
                value = agent.regs[p_file][p_index]
                shadow = shadows[p_file]
                if value != shadow[p_index]:
                    shadow[p_index] = value
                    record(p_token)
                    remember(value)
                else:
                    record(unchanged)
                return
            if kind == _NONE:
                record(unchanged)
                return
            if kind == _ALL and otherwise is not None:   # unknown writes (memory accesses, calls)
                found: list[Change] = []
                _compare_all(agent, shadows, found, hint)
                otherwise(agent, found, True)
                return
        general(agent, ins, record, remember, shadows)

    return observe


def _plan(writes: frozenset[tuple[str, int]] | None, shadows: Mapping[str, list[Any]],
          token: Callable[[str, int], Any]) -> tuple[Any, ...]:
    """What a retirement calls for, given the instruction's known writes (``None``:
    unknown); only registers the sink shadows count, in the shadows' file order."""
    if writes is None:
        return (_ALL,)
    order = {name: n for n, name in enumerate(shadows)}
    known = sorted((order[f], i, f) for f, i in writes if f in order and 0 <= i < len(shadows[f]))
    if not known:
        return (_NONE,)
    if len(known) == 1:
        _n, index, file = known[0]
        return (_ONE, file, index, token(file, index))
    return (_SOME, tuple((f, i) for _n, i, f in known))


def _compare_all(agent: Any, shadows: Mapping[str, list[Any]], found: list[Change],
                 hint: dict[str, list[int]]) -> None:
    """Every register of the shadowed files that differs from its shadow, into ``found``;
    shadows updated.  A file that changed size is followed, not reported.

    ``hint`` holds, per file, the registers this instruction changed the last time the
    file had to be scanned: they are compared first, and when the file then
    equals its shadow (one C-level list comparison) nothing else is looked at — a
    load changes the same register every time.  Otherwise the rest of the file is
    scanned; either way every register is compared, so the result never depends on it.
    """
    regs = agent.regs
    for name, shadow in shadows.items():
        live = regs.get(name)
        if live is None or live == shadow:
            continue
        if len(live) != len(shadow):
            shadow[:] = live
            continue
        got: list[Change] = []
        for i in hint.get(name, ()):
            value = live[i]
            if value != shadow[i]:
                shadow[i] = value
                got.append((name, i, value))
        if live != shadow:                        # the hint missed some: scan the rest
            diff = list(map(_ne, live, shadow))   # C-level; then jump from difference to difference
            i = -1
            while True:
                try:
                    i = diff.index(True, i + 1)
                except ValueError:
                    break
                value = live[i]
                shadow[i] = value
                got.append((name, i, value))
            got.sort(key=_index)
            hint[name] = [c[1] for c in got]
        found.extend(got)


def _index(change: Change) -> int:
    return change[1]
