"""The JSON-lines format's observer, and what the commit-log formats share.

Per retirement the observer does, in the common case: one dict look-up for the agent,
one index increment, one check of the entry's primary register, one comparison of the
agent's register lists with their shadows (in C) and one string append.  Anything
unusual — a second register changed, memory was accessed, the record is before the
window, the first retirement of the entry — takes ``full``, which is exact and slower.
The text format records differently (tokens and values, formatted in bulk, see
:mod:`tessera_trace.ledger`) but shares :func:`skip_observer` and :class:`TrapNotes`.
"""

from __future__ import annotations

from typing import Any, ClassVar

from tessera_trace.agents import AgentState
from tessera_trace.effects import changes, hex_digits
from tessera_trace.formats.base import FLUSH_MASK, Format, Observer
from tessera_trace.layout import ArchLayout


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

    A record is ``head`` (per agent), for an indexed format the index, then the
    entry's part: ``bare`` when nothing changed, else ``compose(prefix, pieces)``.
    The fast path for "exactly the primary register changed" writes ``prefix +
    label + value + tail``, which must equal ``compose`` of that one piece.  Each
    record is appended as one string (the writer counts lines by counting strings).
    """

    memory = True
    follows_untraced = True
    #: whether each record carries its index (after the head)
    indexed: ClassVar[bool] = False
    #: register values in hex as wide as the register (text) rather than decimal (JSON)
    hexed: ClassVar[bool] = False
    #: what follows a lone register effect (see ``compose``)
    tail: ClassVar[str] = "\n"

    # -- provided by the concrete format
    def labels(self, layout: ArchLayout) -> list[list[str]]:
        """What precedes each register's value (``a0=0x``)."""
        raise NotImplementedError

    def entry(self, layout: ArchLayout, ins: Any) -> tuple[str, str]:
        """``(bare, prefix)``: the rest of a record without effects, and the part before effects."""
        raise NotImplementedError

    def compose(self, prefix: str, regs: list[str], mem: list[str]) -> str:
        """The rest of a record from ``prefix`` and the effect pieces."""
        raise NotImplementedError

    def memory_pieces(self, pending: list[Any], layout: ArchLayout) -> list[str]:
        raise NotImplementedError

    def value_text(self, layout: ArchLayout, fi: int, value: Any) -> str:
        if self.hexed:
            return hex_digits(value, layout.nbytes[fi])
        return str(value)

    def __init__(self, tracer: Any) -> None:
        super().__init__(tracer)
        states = tracer.states
        sight = tracer.sight
        pend = tracer.pend
        out = tracer.out
        append = out.buf.append
        flush = out.flush
        first = tracer.window.first
        last = tracer.window.last
        indexed = self.indexed
        hexed = self.hexed
        tail = self.tail
        n = 0
        bound = 0 if first else last  # records below it take the fast path
        labels_of: dict[str, list[list[str]]] = {}
        recent: list[Any] = [None, None]  # the agent of the previous retirement and its state
        skip = skip_observer(tracer)
        compose = self.compose
        memory_pieces = self.memory_pieces
        value_text = self.value_text

        def stop() -> None:
            nonlocal last, bound
            last = bound = -1
            tracer.stop()

        out.on_cut = stop

        def make(layout: ArchLayout, ins: Any, traced: bool) -> Observer | None:
            if not traced:
                return skip
            labels = labels_of.get(layout.arch.name)
            if labels is None:
                labels = labels_of[layout.arch.name] = self.labels(layout)
            bare, prefix = self.entry(layout, ins)
            # the primary register: what this instruction changed the first time it did
            p_fi = -1
            p_ri = 0
            p_nb = 4
            p_line = ""

            def full(st: AgentState, i: int, hit: tuple[int, int, Any] | None) -> None:
                nonlocal p_fi, p_ri, p_nb, p_line
                found = changes(st)
                if hit is not None:
                    found.append(hit)
                    found.sort(key=lambda c: (c[0], c[1]))
                if p_fi < 0 and found:
                    p_fi, p_ri, _value = found[0]
                    p_nb = layout.nbytes[p_fi]
                    p_line = prefix + labels[p_fi][p_ri]
                mem: list[str] = []
                if pend:
                    mem = memory_pieces(pend, layout)
                    pend.clear()
                if i < first:
                    return
                rest = (compose(prefix, [labels[fi][ri] + value_text(layout, fi, v) for fi, ri, v in found], mem)
                        if found or mem else bare)
                append(f"{st.head}{i}{rest}" if indexed else st.head + rest)
                if not i & FLUSH_MASK:
                    flush()

            def observer(agent: Any, ins: Any) -> None:
                nonlocal n, bound
                if agent is recent[0]:  # retirements come in runs of one agent
                    st = recent[1]
                else:
                    try:
                        st = states[agent]
                    except KeyError:
                        st = sight(agent)
                    recent[0], recent[1] = agent, st
                if st is None:          # an agent outside --trace-agent
                    if pend:
                        pend.clear()
                    return
                i = n
                n = i + 1
                if i >= bound:          # outside the window (one comparison on the fast path)
                    if i < first:
                        full(st, i, None)   # keeps the shadows in step; writes nothing
                        return
                    if i >= last:
                        if pend:
                            pend.clear()
                        if i == last:
                            stop()
                        return
                    bound = last        # the window opens
                lives = st.lives
                shadows = st.shadows
                if p_fi >= 0:
                    value = lives[p_fi][p_ri]
                    shadow = shadows[p_fi]
                    if value != shadow[p_ri]:
                        shadow[p_ri] = value
                        if pend or lives != shadows:
                            full(st, i, (p_fi, p_ri, value))
                            return
                        if hexed:
                            try:
                                append(f"{st.head}{p_line}{value.to_bytes(p_nb, 'big').hex()}{tail}")
                            except (OverflowError, AttributeError, TypeError):
                                append(f"{st.head}{p_line}{hex_digits(value, p_nb)}{tail}")
                        elif indexed:
                            append(f"{st.head}{i}{p_line}{value}{tail}")
                        else:
                            append(f"{st.head}{p_line}{value}{tail}")
                        if not i & FLUSH_MASK:
                            flush()
                        return
                if pend or lives != shadows:
                    full(st, i, None)
                    return
                append(f"{st.head}{i}{bare}" if indexed else st.head + bare)
                if not i & FLUSH_MASK:
                    flush()

            return observer

        def active() -> bool:
            return first <= n < last

        self.make = make  # type: ignore[assignment]
        self.active = active  # type: ignore[method-assign]
