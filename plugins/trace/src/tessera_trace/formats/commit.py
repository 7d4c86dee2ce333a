"""What the commit-log formats (``text``, ``jsonl``) share: one observer, one ledger.

A commit-log format writes one record per retired instruction with its effects:
the registers it changed and its memory accesses.  The formats differ only in their
templates (:class:`CommitFormat`'s hooks); the observer that finds the effects and
the :class:`~tessera_trace.ledger.Ledger` that writes them are the same.

Which registers are compared.  When the registers an instruction can write are
known statically (:func:`tessera.engine.capture.static_writes`: its semantics,
specialised for its operands, store into register files at constant indices and
call nothing), only those are compared with their previous values — that is what
lets the fast engine record the instruction without a call (the observers carry a
:class:`~tessera.engine.capture.Capture`).  Otherwise every register is compared,
and memory accesses are reported.  Either way a record shows what the instruction
changed; the difference shows only for registers changed *outside* instructions
(by a debugger or another plugin between runs without :meth:`Tracer.resync`): an
instruction with known writes does not report them, the next one without does.
Both engines follow the same rule, so their traces are identical.  What trap entry
changes is reported on the trap's note (:class:`TrapNotes`).
"""

from __future__ import annotations

from typing import Any, ClassVar

from tessera.engine.blocks import hot_threshold
from tessera.engine.capture import Capture, static_writes
from tessera_trace.agents import AgentState
from tessera_trace.effects import changes, hex_digits
from tessera_trace.filters import FOREVER
from tessera_trace.formats.base import Format, Observer
from tessera_trace.layout import ArchLayout

# what an instruction's known writes call for (the first element of a plan)
_NONE, _ONE, _SOME, _ALL = range(4)
_UNPLANNED = (_ALL,)


def skip_observer(tracer: Any) -> Observer:
    """For instructions outside ``--trace-pc``: keep shadows and pending effects in step.

    Without it, what an untraced instruction changed would be reported by the next
    traced instruction of the same agent.
    """
    states = tracer.states
    pend = tracer.pend

    def skip(agent: Any, ins: Any) -> None:
        if pend:
            pend.clear()
        st = states.get(agent)
        if st is not None and st.lives != st.shadows:
            for live, shadow in zip(st.lives, st.shadows):
                shadow[:] = live

    return skip


class TrapNotes:
    """Trap notes, completed with what trap entry changed once the trap is taken.

    A trap is reported before the architecture takes it (``tessera_trap``), so the
    registers trap entry sets (a saved PC, a cause register) are known only at
    ``tessera_trap_taken``.  They belong to the trap, not to the handler's first
    instruction: :meth:`taken` takes them into the shadows and rewrites the note —
    still queued, nothing is written in between — with them; if the note was
    written already, ``separate`` gives a note line of its own.
    """

    def __init__(self, out: Any) -> None:
        self.out = out
        self.pending: dict[Any, tuple[int, str]] = {}

    def add(self, agent: Any, note: str) -> None:
        self.out.add(note)
        self.pending[agent] = (len(self.out.buf) - 1, note)

    def taken(self, st: AgentState, agent: Any, amend: Any, separate: Any) -> None:
        """``amend(note, found)``/``separate(found)``: the texts with trap entry's changes."""
        found = changes(st)
        got = self.pending.pop(agent, None)
        if not found or got is None:
            return
        index, note = got
        buf = self.out.buf
        if index < len(buf) and buf[index] is note:
            buf[index] = amend(note, found)
        else:
            self.out.add(separate(found))


class CommitFormat(Format):
    """A format with one record per retired instruction, showing its effects.

    A record is ``head`` (per agent), for an indexed format its index, then the
    entry's part: ``bare`` when nothing changed, ``prefix + label + value + tail``
    when exactly one register did, else ``compose(prefix, pieces, memory)``; the
    ledger ends every record with a newline.
    """

    memory = True
    follows_untraced = True
    #: whether each record carries its index (after the head)
    indexed: ClassVar[bool] = False
    #: register values in hex as wide as the register (text) rather than decimal (JSON)
    hexed: ClassVar[bool] = False
    #: what follows a lone register effect's value
    tail: ClassVar[str] = ""

    # -- provided by the concrete format
    def labels(self, layout: ArchLayout) -> list[list[str]]:
        """What precedes each register's value (``a0=0x``)."""
        raise NotImplementedError

    def entry(self, layout: ArchLayout, ins: Any) -> tuple[str, str]:
        """``(bare, prefix)``: the rest of a record without effects (no newline), and the
        part before the effects."""
        raise NotImplementedError

    def compose(self, prefix: str, regs: list[str], mem: list[str]) -> str:
        """The rest of a record (with its newline) from ``prefix`` and the effect pieces."""
        raise NotImplementedError

    def memory_pieces(self, pending: list[Any], layout: ArchLayout) -> list[str]:
        raise NotImplementedError

    def value_text(self, layout: ArchLayout, fi: int, value: Any) -> str:
        if self.hexed:
            return hex_digits(value, layout.nbytes[fi])
        return str(value)

    def __init__(self, tracer: Any) -> None:  # noqa: C901 - to split (issue 14 §5)
        # here, not at the top: the ledger needs numpy, which an untraced `tessera run`
        # (it imports the formats for the --trace choices) should not pay for
        from tessera_trace.ledger import DRAIN_AT, LITERAL, Ledger

        super().__init__(tracer)
        ledger = self.ledger = Ledger(tracer.out, hexed=self.hexed, indexed=self.indexed,
                                      first=tracer.window.first)
        tracer.out.before = ledger.drain
        tracer.out.on_cut = tracer.stop   # no new observers; the run's end drops the old ones
        self.notes = TrapNotes(tracer.out)
        states = tracer.states
        sight = tracer.sight
        pend = tracer.pend
        record = ledger.record
        remember = ledger.remember
        ids = ledger.ids
        lits = ledger.lits
        drain = ledger.drain
        first = tracer.window.first
        last = tracer.window.last
        windowed = first > 0 or last < FOREVER
        n = 0  # records of the filtered stream so far (counted only with a window)
        labels_of: dict[str, list[list[str]]] = {}
        tail = self.tail
        compose = self.compose
        memory_pieces = self.memory_pieces
        value_text = self.value_text
        skip = skip_observer(tracer)
        # Analysing an instruction's writes costs about a millisecond, so it waits until
        # the instruction has retired half as often as a PC must be reached to be
        # translated: cold code never pays, hot code is analysed before its block is
        # built.  The count is the same on both engines, so their traces stay identical.
        analyse_after = max(1, hot_threshold() // 2)
        scratch: list[Any] = []   # where the records of agents outside --trace-agent go
        spare: dict[str, dict[str, list[int]]] = {}

        def state_of(agent: Any) -> AgentState | None:
            """The agent's state, with the ledger switched to it (``None``: not traced)."""
            try:
                st = states[agent]
            except KeyError:
                st = sight(agent)
            if st is not None:
                ledger.enter(agent, st)
            return st

        def sink(agent: Any) -> tuple[Any, Any, Any]:
            """Per call of a block with captures (see tessera.engine.capture)."""
            st = ledger.state if agent is ledger.agent else state_of(agent)
            if st is None:          # not traced: let the block record into a scratch list
                scratch.clear()
                layout = tracer.layout_of(agent.arch)
                shadows = spare.get(layout.arch.name)
                if shadows is None:
                    shadows = spare[layout.arch.name] = {f: [0] * len(names) for f, names
                                                         in zip(layout.files, layout.names, strict=True)}
                return scratch.append, scratch.append, shadows
            if len(ids) >= DRAIN_AT:
                drain()
            return record, remember, st.shadow_map

        def make(layout: ArchLayout, ins: Any, traced: bool) -> Observer | None:  # noqa: C901 - to split (issue 14 §5)
            if not traced:
                return skip
            labels = labels_of.get(layout.arch.name)
            if labels is None:
                labels = labels_of[layout.arch.name] = self.labels(layout)
            bare_text, prefix = self.entry(layout, ins)
            bare = ledger.token(bare_text)
            plans: dict[type, tuple[Any, ...]] = {}
            # the plan for the first agent class seen, in cells (the common case)
            kind = -1
            p_fi = p_ri = p_tok = 0
            cls0: Any = None
            unplanned = analyse_after   # retirements before the writes are analysed

            def plan_for(agent: Any) -> tuple[Any, ...]:
                nonlocal kind, p_fi, p_ri, p_tok, cls0, unplanned
                cls = agent.__class__
                got = plans.get(cls)
                if got is not None:
                    return got
                if unplanned > 1:   # not hot yet: compare everything (what an unknown plan does)
                    unplanned -= 1
                    return _UNPLANNED
                plan: tuple[Any, ...]
                writes = static_writes(ins, agent)
                if writes is None:
                    plan = (_ALL,)
                else:
                    known = sorted((layout.files.index(f), i) for f, i in writes
                                   if f in layout.files and 0 <= i < len(layout.names[layout.files.index(f)]))
                    if not known:
                        plan = (_NONE,)
                    elif len(known) == 1:
                        fi, ri = known[0]
                        plan = (_ONE, fi, ri, ledger.token(prefix + labels[fi][ri], layout.nbytes[fi], tail))
                    else:
                        plan = (_SOME, known)
                plans[cls] = plan
                if cls0 is None:
                    cls0 = cls
                    kind = plan[0]
                    if kind == _ONE:
                        one: Any = plan
                        p_fi, p_ri, p_tok = one[1], one[2], one[3]
                    if not windowed and kind in (_NONE, _ONE):
                        register = (layout.files[p_fi], p_ri) if kind == _ONE else None
                        observer.capture = Capture(sink, register, p_tok if kind == _ONE else bare, bare, cls)  # type: ignore[attr-defined]
                return plan

            def effects(st: AgentState, agent: Any, emit: bool) -> None:
                """Compare what this instruction may have changed; record it when ``emit``."""
                plan = plan_for(agent)
                what = plan[0]
                lives = st.lives
                shadows = st.shadows
                if what == _ONE:
                    _k, fi, ri, tok = plan
                    value = lives[fi][ri]
                    shadow = shadows[fi]
                    if value != shadow[ri]:
                        shadow[ri] = value
                        if emit:
                            record(tok)
                            remember(value)
                        return
                    if emit:
                        record(bare)
                    return
                mem: list[str] = []
                if what == _ALL:
                    found = changes(st)
                    if pend:
                        mem = memory_pieces(pend, layout)
                        pend.clear()
                elif what == _SOME:
                    found = []
                    for fi, ri in plan[1]:
                        value = lives[fi][ri]
                        if value != shadows[fi][ri]:
                            shadows[fi][ri] = value
                            found.append((fi, ri, value))
                else:
                    found = []
                if not emit:
                    return
                if found or mem:
                    record(LITERAL)
                    lits.append(compose(prefix, [labels[fi][ri] + value_text(layout, fi, v) for fi, ri, v in found],
                                        mem))
                else:
                    record(bare)

            def observer(agent: Any, ins: Any) -> None:
                st = ledger.state if agent is ledger.agent else state_of(agent)
                if st is None:              # an agent outside --trace-agent
                    if pend:
                        pend.clear()
                    return
                if agent.__class__ is cls0:
                    if kind == _ONE:        # the common case, as a block's capture does it
                        value = st.lives[p_fi][p_ri]
                        shadow = st.shadows[p_fi]
                        if value != shadow[p_ri]:
                            shadow[p_ri] = value
                            record(p_tok)
                            remember(value)
                        else:
                            record(bare)
                    elif kind == _NONE:
                        record(bare)
                    else:
                        effects(st, agent, True)
                else:
                    effects(st, agent, True)
                if len(ids) >= DRAIN_AT:
                    drain()

            def in_window(agent: Any, ins: Any) -> None:
                nonlocal n
                st = ledger.state if agent is ledger.agent else state_of(agent)
                if st is None:
                    if pend:
                        pend.clear()
                    return
                i = n
                n = i + 1
                if i < first:
                    effects(st, agent, False)   # keeps the shadows in step; records nothing
                    return
                if i >= last:
                    if pend:
                        pend.clear()
                    if i == last:
                        tracer.stop()
                    return
                effects(st, agent, True)
                if len(ids) >= DRAIN_AT:
                    drain()

            return in_window if windowed else observer

        def active() -> bool:
            return not windowed or first <= n < last

        self.make = make  # type: ignore[assignment]
        self.active = active  # type: ignore[method-assign]

