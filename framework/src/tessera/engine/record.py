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

Memory.  A tool that also shows what each retirement read and wrote (a commit log's
``mem[...]`` effects) keeps a journal watch (:class:`tessera.memory.Watch` with
``journal=``: compiled blocks append to it themselves) and gives its list to the
request as ``journal``, with ``accessed``.  Then a retirement that compared every
register (its writes are not known — a load or a store is one — or it has not been
analysed yet) and found at most one changed is recorded by the core too, whatever
the journal holds: with accesses, the token ``accessed(register, accesses)``
(``register``: ``(file, index)`` or ``None``; ``accesses``: ``(write, size)`` of each
journal entry, in order), then the register's new value if one changed, then each
access's address and value; the journal is emptied.  Without accesses it is recorded
as any other retirement.  ``otherwise`` then sees only retirements that changed
several registers (and reads the journal itself).  Retirements with known writes never
look at the journal: they make no access.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from operator import ne as _ne
from typing import TYPE_CHECKING, Any

import attrs

from tessera.engine.capture import LOOP_CAP, Capture, static_effects, static_writes

if TYPE_CHECKING:
    from tessera.protocols import Observer

__all__ = ["LOOP_CAP", "Change", "Record", "Sink"]

#: ``sink(agent) -> (record, remember, shadows)``: see the module docstring.
Sink = Callable[[Any], tuple[Callable[[Any], Any], Callable[[Any], Any], Mapping[str, list[Any]]]]
#: One changed register as ``otherwise`` receives it: ``(file, index, new value)``.
Change = tuple[str, int, Any]

# what an instruction's known writes call for (the first element of a plan)
_NONE, _ONE, _SOME, _ALL, _MEM = range(5)   # _MEM: one memory access and at most one known register
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
    none changed.  ``journal`` and ``accessed`` record memory accesses too (see
    "Memory" in the module docstring).
    """

    sink: Sink = attrs.field(validator=_callable)
    unchanged: Any
    changed: Callable[[str, int], Any] = attrs.field(validator=_callable)
    otherwise: Callable[[Any, list[Change], bool], None] | None = attrs.field(
        default=None, validator=attrs.validators.optional(_callable))
    #: the journal of a journal watch and the token of a retirement that made accesses
    #: (see "Memory" in the module docstring): both or neither
    journal: list[Any] | None = attrs.field(default=None, kw_only=True)
    accessed: Callable[[tuple[str, int] | None, tuple[tuple[int, int], ...]], Any] | None = attrs.field(
        default=None, kw_only=True, validator=attrs.validators.optional(_callable))

    def __attrs_post_init__(self) -> None:
        if (self.journal is None) != (self.accessed is None):
            raise TypeError("Record.journal and Record.accessed go together: give both or neither")
        if self.journal is not None and not isinstance(self.journal, list):
            raise TypeError(f"Record.journal must be a list, not {type(self.journal).__name__}")

    def observer(self) -> Observer:
        """The observer to return from ``tessera_execute_observe`` (one per instruction)."""
        return _observer(self)


class _Entry:
    """What the observer of one instruction keeps: the request, the plan of the first
    agent class seen (the common case, read by the observer's fast path), and the rest.

    One object with slots rather than closure cells: a traced program has an observer
    per decode-cache entry, and every object made per entry is one more for the
    garbage collector to allocate, traverse and free.
    """

    __slots__ = ("sink", "unchanged", "token_of", "otherwise", "journal", "accessed", "unplanned",
                 "plans", "tokens", "shapes", "cls0", "kind", "p_file", "p_index", "p_token", "hint",
                 "h_file", "h_index", "observe")

    def __init__(self, request: Record, unplanned: int) -> None:
        self.sink = request.sink
        self.unchanged = request.unchanged
        self.token_of = request.changed
        self.otherwise = request.otherwise
        self.journal: list[Any] = request.journal if request.journal is not None else []
        self.accessed = request.accessed
        # Working out an instruction's writes costs about a millisecond, so it waits until
        # the instruction has retired half as often as a PC must be reached to be
        # translated: cold code never pays, hot code is analysed before its block is built.
        # Until then every register is compared.  The count is the engine's own, so both
        # engines switch at the same retirement and record the same.
        self.unplanned = unplanned
        self.plans: dict[type, tuple[Any, ...]] = {}
        self.tokens: dict[tuple[str, int], Any] | None = None
        self.shapes: dict[tuple[Any, ...], Any] | None = None  # what a retirement changed and accessed -> token
        # the plan of the first agent class seen (the common case)
        self.cls0: Any = None
        self.kind = -1
        self.p_file = ""
        self.p_index = 0
        self.p_token: Any = None
        # the registers this instruction changed when its writes were last compared in full,
        # and the one it changed the last time that was one (the observer's fast path)
        self.hint: dict[str, list[int]] = {}
        self.h_file: str | None = None
        self.h_index = 0
        self.observe: Any = None

    def token(self, file: str, index: int) -> Any:
        tokens = self.tokens
        if tokens is None:
            tokens = self.tokens = {}
        got = tokens.get((file, index), tokens)
        if got is tokens:
            got = tokens[(file, index)] = self.token_of(file, index)
        return got

    def plan_for(self, agent: Any, ins: Any, shadows: Mapping[str, list[Any]]) -> tuple[Any, ...]:
        cls = agent.__class__
        got = self.plans.get(cls)
        if got is not None:
            return got
        if self.unplanned > 1:   # not hot yet: compare everything (what unknown writes do)
            self.unplanned -= 1
            return _UNPLANNED
        plan = _plan(static_writes(ins, agent), shadows, self.token)
        if plan[0] == _ALL and self.accessed is not None:   # a load or a store, perhaps
            plan = self.memory_plan(ins, agent, shadows)
        self.plans[cls] = plan
        if self.cls0 is None:
            self.cls0 = cls
            kind = self.kind = plan[0]
            if kind == _ONE:
                _k, self.p_file, self.p_index, self.p_token = plan
            if kind in (_NONE, _ONE):   # what the fast engine compiles into blocks
                register = (self.p_file, self.p_index) if kind == _ONE else None
                self.observe.capture = Capture(self.sink, register, self.p_token if kind == _ONE
                                               else self.unchanged, self.unchanged, cls)
            elif kind == _MEM:          # compiled too, with its access (tessera.engine.capture)
                _k, register, changed, unchanged, access = plan
                self.observe.journal = self.journal
                self.observe.capture = Capture(self.sink, register, changed if register is not None else unchanged,
                                               unchanged, cls, access=access, files=tuple(shadows),
                                               observer=self.observe, ins=ins)
        return plan

    def memory_plan(self, ins: Any, agent: Any, shadows: Mapping[str, list[Any]]) -> tuple[Any, ...]:
        """``(_MEM, register, changed token, unchanged token, access)`` for an instruction
        whose only call is one memory access and that writes at most one shadowed
        register; else ``(_ALL,)``.  The tokens are those its records take (the
        comparison still covers every register, as for unknown writes)."""
        writes, access = static_effects(ins, agent)
        if writes is None or access is None:
            return _UNPLANNED
        known = [(f, i) for f, i in writes if f in shadows and 0 <= i < len(shadows[f])]
        if len(known) > 1:
            return _UNPLANNED
        shapes = self.shapes
        if shapes is None:
            shapes = self.shapes = {}
        assert self.accessed is not None
        write, size = access
        unchanged = shapes.get((write, size), shapes)
        if unchanged is shapes:
            unchanged = shapes[(write, size)] = self.accessed(None, (access,))
        register = known[0] if known else None
        changed = None
        if register is not None:
            changed = shapes.get((*register, write, size), shapes)
            if changed is shapes:
                changed = shapes[(*register, write, size)] = self.accessed(register, (access,))
        return (_MEM, register, changed, unchanged, access)

    def default(self, found: list[Change], record: Any, remember: Any) -> None:
        """Without ``otherwise``: each changed register as if it were the only one."""
        if found:
            for file, index, value in found:
                record(self.token(file, index))
                remember(value)
        else:
            record(self.unchanged)

    def memory(self, change: Change | None, record: Any, remember: Any) -> None:
        """Record a retirement that changed at most ``change`` and made the journal's accesses."""
        journal = self.journal
        if len(journal) == 1:
            e = journal[0]
            key: tuple[Any, ...] = (e[0], e[2]) if change is None else (change[0], change[1], e[0], e[2])
        else:
            shape = tuple([(e[0], e[2]) for e in journal])
            key = (shape,) if change is None else (change[0], change[1], shape)
        shapes = self.shapes
        if shapes is None:
            shapes = self.shapes = {}
        tok = shapes.get(key, shapes)
        if tok is shapes:
            assert self.accessed is not None
            tok = shapes[key] = self.accessed(None if change is None else (change[0], change[1]),
                                              tuple([(e[0], e[2]) for e in journal]))
        record(tok)
        if change is not None:
            remember(change[2])
        for e in journal:
            remember(e[1])
            remember(e[3])
        journal.clear()

    def complete(self, agent: Any, record: Any, remember: Any, shadows: Mapping[str, list[Any]],
                 first: Change | None = None) -> None:
        """A retirement whose writes are not known (or not yet): every register compared
        (``first``: a change the observer found already, in a file before the others)."""
        found: list[Change] = [] if first is None else [first]
        _compare_all(agent, shadows, found, self.hint)
        if len(found) == 1:
            self.h_file, self.h_index = found[0][0], found[0][1]
        if self.accessed is not None and len(found) < 2:
            if self.journal:
                self.memory(found[0] if found else None, record, remember)
            elif found:
                file, index, value = found[0]
                record(self.token(file, index))
                remember(value)
            else:
                record(self.unchanged)
        elif self.otherwise is not None:
            self.otherwise(agent, found, True)
        else:
            self.default(found, record, remember)
            if self.accessed is not None and self.journal:
                self.memory(None, record, remember)

    def general(self, agent: Any, ins: Any, record: Any, remember: Any, shadows: Mapping[str, list[Any]]) -> None:
        plan = self.plan_for(agent, ins, shadows)
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
                record(self.unchanged)
            return
        if what == _NONE:
            record(self.unchanged)
            return
        if what == _ALL or what == _MEM:
            self.complete(agent, record, remember, shadows)
            return
        found: list[Change] = []   # several known registers: only those are compared
        regs = agent.regs
        for file, index in plan[1]:
            value = regs[file][index]
            shadow = shadows[file]
            if value != shadow[index]:
                shadow[index] = value
                found.append((file, index, value))
        if self.otherwise is not None:
            self.otherwise(agent, found, False)
        else:
            self.default(found, record, remember)


def _observer(request: Record) -> Observer:
    """Build the observer of ``request``: per agent class, a plan made from the
    instruction's known writes, with the common cases inline."""
    from tessera.engine.blocks import hot_threshold

    e = _Entry(request, max(1, hot_threshold() // 2))

    def observe(agent: Any, ins: Any) -> None:
        record, remember, shadows = e.sink(agent)
        if agent.__class__ is e.cls0:
            kind = e.kind
            if kind == _ONE:      # the common case, as a block's compiled form does it
                file = e.p_file
                index = e.p_index
                value = agent.regs[file][index]
                shadow = shadows[file]
                if value != shadow[index]:
                    shadow[index] = value
                    record(e.p_token)
                    remember(value)
                else:
                    record(e.unchanged)
                return
            if kind == _NONE:
                record(e.unchanged)
                return
            if kind != _ALL and kind != _MEM:
                e.general(agent, ins, record, remember, shadows)
                return
        elif e.unplanned > 1 and not e.plans:   # not analysed yet: what plan_for does, inline
            e.unplanned -= 1
        else:
            e.general(agent, ins, record, remember, shadows)
            return
        # Every register compared: the writes are not known (memory accesses, calls) or not
        # yet.  What is common — no register changed, or only the one this instruction
        # changed the last time, and at most one memory access — is done here, without a
        # call; anything else by complete(), which compares everything the long way.
        if e.accessed is None:
            e.complete(agent, record, remember, shadows)
            return
        regs = agent.regs
        c_file = None
        c_index = 0
        c_value: Any = None
        for name, shadow in shadows.items():
            live = regs.get(name)
            if live is None or live == shadow:
                continue
            if c_file is None and name == e.h_file and len(live) == len(shadow):
                index = e.h_index
                value = live[index]
                old = shadow[index]
                if value != old:
                    shadow[index] = value
                    if live == shadow:
                        c_file, c_index, c_value = name, index, value
                        continue
                    shadow[index] = old
            e.complete(agent, record, remember, shadows, None if c_file is None else (c_file, c_index, c_value))
            return
        journal = e.journal
        if journal:
            shapes = e.shapes
            if len(journal) == 1 and shapes is not None:
                j = journal[0]
                tok = shapes.get((j[0], j[2]) if c_file is None else (c_file, c_index, j[0], j[2]))
                if tok is not None:
                    record(tok)
                    if c_file is not None:
                        remember(c_value)
                    remember(j[1])
                    remember(j[3])
                    journal.clear()
                    return
            e.memory(None if c_file is None else (c_file, c_index, c_value), record, remember)
        elif c_file is not None:
            tokens = e.tokens
            tok = tokens.get((c_file, c_index)) if tokens is not None else None
            record(tok if tok is not None else e.token(c_file, c_index))
            remember(c_value)
        else:
            record(e.unchanged)

    e.observe = observe
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
