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
from tessera_trace.issuers import issued, issuer, parked
from tessera_trace.layout import ArchLayout, expands, issued_by


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

    def access_template(self, prefix: str, register: tuple[str, int] | None,
                        accesses: tuple[tuple[int, int], ...], layout: ArchLayout) -> Any:
        """The ledger template (``(texts, holes)``, see :meth:`Ledger.template
        <tessera_trace.ledger.Ledger.template>`) of a retirement that changed at most one
        register (``(label, nbytes)``) and made ``accesses`` (``(write, size)`` each), whose
        holes take the register's value, then each access's address and value; ``None``
        when the format has none (such records go through ``otherwise``, as finished
        text).  It must give exactly the text :meth:`compose` does."""
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
        self._templates = type(self).access_template is not CommitFormat.access_template
        #: (architecture, address) -> the record token of the expander there (issuers.py)
        self._expanders: dict[tuple[str, int], int] = {}
        self.make = self.observer  # type: ignore[assignment]

    def observer(self, layout: ArchLayout, ins: Any, traced: bool) -> Observer | None:
        """The record operation of one decode-cache entry (``skip`` outside ``--trace-pc``)."""
        if not traced:
            return self.skip
        got = self._labels.get(layout.arch.name)
        if got is None:
            got = self._labels[layout.arch.name] = (self.labels(layout), {f: n for n, f in enumerate(layout.files)})
        bare_text, prefix = self.entry(layout, ins)
        entry = _Entry(self, layout, got, prefix, self.ledger.token(bare_text))
        if self._templates:   # loads and stores are recorded by the core, their effects in the ledger's holes
            record = Record(self.stream.sink, entry.bare, entry.changed, entry.otherwise,
                            journal=self.tracer.pend, accessed=entry.accessed).observer()
        else:
            record = Record(self.stream.sink, entry.bare, entry.changed, entry.otherwise).observer()
        if issued_by(ins) is not None:
            return issued(self.tracer, ins.address, self._announcer(layout.arch.name), record)
        if expands(ins):
            self._expanders[(layout.arch.name, ins.address)] = entry.bare
            return issuer(self.tracer, ins.address, self._retired, record)
        return record

    def _announcer(self, arch: str) -> Any:
        """Write the record of architecture ``arch``'s expander at an address (its bare line:
        an expander's own effects, if any, are not shown)."""
        expanders = self._expanders
        sink = self.stream.sink

        def announce(agent: Any, st: AgentState, address: int) -> None:
            token = expanders.get((arch, address))
            if token is not None:
                sink(agent)[0](token)

        return announce

    def _retired(self, agent: Any, st: AgentState, ins: Any) -> None:
        self.skip(agent, ins)         # listed before its expansion: keep the shadows in step

    def on_sync(self, event: Any, st: AgentState | None) -> None:
        if event.kind == "wait" and st is not None and self._expanders and st.layout is not None:
            parked(st, self._expanders, self._announcer(st.layout.arch.name))

    def active(self) -> bool:
        return self.stream.active(self.tracer)


class _Entry:
    """The record tokens of one decode-cache entry, and what it records through ``otherwise``.

    An object with slots, not closures: a trace makes one per decode-cache entry, and
    every object made per entry is one more for the garbage collector.
    """

    __slots__ = ("format", "layout", "labels", "position", "prefix", "bare", "singles")

    def __init__(self, fmt: CommitFormat, layout: ArchLayout, labels: tuple[list[list[str]], dict[str, int]],
                 prefix: str, bare: int) -> None:
        self.format = fmt
        self.layout = layout
        self.labels, self.position = labels
        self.prefix = prefix
        self.bare = bare
        self.singles: dict[tuple[str, int], int] | None = None   # (file, index) -> that register's token

    def changed(self, file: str, index: int) -> int:
        """The token of a retirement that changed register ``index`` of ``file`` alone."""
        fi = self.position[file]
        return self.format.ledger.token(self.prefix + self.labels[fi][index], self.layout.nbytes[fi],
                                        self.format.tail)

    def accessed(self, register: tuple[str, int] | None, accesses: tuple[tuple[int, int], ...]) -> int:
        """The token of a retirement that changed at most ``register`` and made ``accesses``."""
        label = None
        if register is not None:
            fi = self.position[register[0]]
            label = (self.labels[fi][register[1]], self.layout.nbytes[fi])
        texts, holes = self.format.access_template(self.prefix, label, accesses, self.layout)
        return self.format.ledger.template(texts, holes)

    def otherwise(self, agent: Any, found: list[Change], complete: bool) -> None:
        """Several registers changed, or (formats without templates) the writes are not known."""
        fmt = self.format
        pend = fmt.tracer.pend
        if agent is not fmt.ledger.agent:      # outside --trace-agent (the sink just ran for it)
            if pend:
                pend.clear()
            return
        layout, position, labels = self.layout, self.position, self.labels
        stream = fmt.stream
        mem: list[str] = []
        if complete and pend:              # writes not known: it may have accessed memory
            mem = fmt.memory_pieces(pend, layout)
            pend.clear()
        if mem or len(found) > 1:
            stream.literal(fmt.compose(self.prefix, [labels[position[f]][i] + fmt.value_text(layout, position[f], v)
                                                     for f, i, v in found], mem))
        elif found:                        # one register: its token and value, as when compiled
            file, index, value = found[0]
            singles = self.singles
            if singles is None:
                singles = self.singles = {}
            tok = singles.get((file, index))
            if tok is None:
                tok = singles[(file, index)] = self.changed(file, index)
            stream.record(tok)
            stream.remember(value)
        else:
            stream.record(self.bare)
