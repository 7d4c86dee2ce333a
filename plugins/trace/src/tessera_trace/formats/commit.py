"""What the commit-log formats (``text``, ``jsonl``) share: one record operation, one ledger.

A commit-log format writes one record per retired instruction with its effects:
the registers it changed and its memory accesses.  The formats differ only in their
templates (:class:`CommitFormat`'s hooks); how the effects are found and the
:class:`~tessera_trace.ledger.Ledger` that writes them are the same.

The effects are found by the core's record operation (:mod:`tessera.engine.record`):
each decode-cache entry gets a :class:`~tessera.engine.record.Record` whose tokens are
the entry's lines — without effects, and with the one register it writes — and whose
``otherwise`` writes the rest as finished text.  Which registers are compared is the
core's business: the ones an instruction is known to write, else all of them, and
only then are memory accesses reported.  Either way a record shows what the
instruction changed; the difference shows only for registers changed *outside*
instructions (by a debugger or another plugin between runs without
:meth:`Tracer.resync`): an instruction with known writes does not report them, the
next one without does.  Both engines follow the same rule, so their traces are
identical.  What trap entry changes is reported on the trap's note (:class:`TrapNotes`).
"""

from __future__ import annotations

from typing import Any, ClassVar

from tessera.engine.record import Change, Record
from tessera_trace.agents import AgentState
from tessera_trace.effects import changes, hex_digits
from tessera_trace.formats.base import Format, Observer
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

    def record_template(self, prefix: str, register: tuple[str, int] | None,
                        accesses: tuple[tuple[int, int], ...], layout: ArchLayout) -> str | None:
        """A ``%`` template of the whole record of one retirement that changed at most one
        register (``(label, nbytes)``) and made ``accesses`` (``(write, size)`` each), taking
        the register's value then each access's address and value, all ``int``; ``None``
        when the format has none (the pieces are then built one by one).  It must give
        exactly the text :meth:`compose` does.  Loads and stores (one access) use it."""
        return None

    def value_text(self, layout: ArchLayout, fi: int, value: Any) -> str:
        if self.hexed:
            return hex_digits(value, layout.nbytes[fi])
        return str(value)

    def __init__(self, tracer: Any) -> None:
        # here, not at the top: the ledger needs numpy, which an untraced `tessera run`
        # (it imports the formats for the --trace choices) should not pay for
        from tessera_trace.ledger import Ledger
        from tessera_trace.stream import RecordStream

        super().__init__(tracer)
        ledger = self.ledger = Ledger(tracer.out, hexed=self.hexed, indexed=self.indexed,
                                      first=tracer.window.first)
        tracer.out.before = ledger.drain
        tracer.out.on_cut = tracer.stop   # no new observers; the run's end drops the old ones
        self.notes = TrapNotes(tracer.out)
        self.stream = RecordStream(tracer, ledger)
        self.skip = skip_observer(tracer)
        self._labels: dict[str, tuple[list[list[str]], dict[str, int]]] = {}
        self.make = self.observer  # type: ignore[assignment]

    def observer(self, layout: ArchLayout, ins: Any, traced: bool) -> Observer | None:
        """The record operation of one decode-cache entry (``skip`` outside ``--trace-pc``)."""
        if not traced:
            return self.skip
        got = self._labels.get(layout.arch.name)
        if got is None:
            got = self._labels[layout.arch.name] = (self.labels(layout), {f: n for n, f in enumerate(layout.files)})
        labels, position = got
        bare_text, prefix = self.entry(layout, ins)
        ledger = self.ledger
        stream = self.stream
        bare = ledger.token(bare_text)
        tail = self.tail
        compose = self.compose
        memory_pieces = self.memory_pieces
        value_text = self.value_text
        pend = self.tracer.pend
        record = stream.record
        remember = stream.remember
        literal = stream.literal
        template = self.record_template
        singles: dict[tuple[str, int], int] = {}   # (file, index) -> the token of that register alone
        shapes: dict[Any, str | None] = {}    # (register, accesses) -> this entry's record template

        def changed(file: str, index: int) -> int:
            fi = position[file]
            return ledger.token(prefix + labels[fi][index], layout.nbytes[fi], tail)

        def one_access(found: list[Change]) -> bool:
            """Record a retirement with one memory access and at most one register changed
            (a load or a store) through its template: one ``%`` operation.  ``False``
            (nothing done) for values that are not ``int`` or a format without templates."""
            write, address, size, value = pend[0]
            if found:
                file, index, reg = found[0]
                key: tuple[Any, ...] = (file, index, write, size)
            else:
                key = (write, size)
            fmt = shapes.get(key, "")             # "": not made yet (None: the format has none)
            if fmt == "":
                register = None
                if found:
                    fi = position[file]
                    register = (labels[fi][index], layout.nbytes[fi])
                fmt = shapes[key] = template(prefix, register, ((write, size),), layout)
            if fmt is None or type(address) is not int or type(value) is not int:
                return False
            if found:
                if type(reg) is not int:
                    return False
                text = fmt % (reg, address, value)
            else:
                text = fmt % (address, value)
            pend.clear()
            literal(text)
            return True

        def otherwise(agent: Any, found: list[Change], complete: bool) -> None:
            if agent is not ledger.agent:      # outside --trace-agent (the sink just ran for it)
                if pend:
                    pend.clear()
                return
            mem: list[str] = []
            if complete and pend:              # writes not known: it may have accessed memory
                if len(pend) == 1 and len(found) <= 1 and one_access(found):
                    return
                mem = memory_pieces(pend, layout)
                pend.clear()
            if mem or len(found) > 1:
                literal(compose(prefix, [labels[position[f]][i] + value_text(layout, position[f], v)
                                         for f, i, v in found], mem))
            elif found:                        # one register: its token and value, as when compiled
                file, index, value = found[0]
                tok = singles.get((file, index))
                if tok is None:
                    tok = singles[(file, index)] = changed(file, index)
                record(tok)
                remember(value)
            else:
                record(bare)

        return Record(stream.sink, bare, changed, otherwise).observer()

    def active(self) -> bool:
        return self.stream.active(self.tracer)
