"""``--trace text``: a commit log, one line per retired instruction.

::

    hart0  00010000  00000513  addi a0, zero, 0
    hart0  0001000c  00b50533  add a0, a0, a1                    a0=0x00000005
    hart0  00010010  fea12e23  sw a0, -4(sp)                     mem[0x0001fffc]<-0x00000005
    hart0  00010014  ffc12283  lw t0, -4(sp)                     t0=0x00000005 mem[0x0001fffc]->0x00000005

Columns: agent (padded to the longest agent name), PC, instruction word, disassembly
(padded to 32 columns when effects follow), then the effects: registers whose value
changed (``name=0x...``, as wide as the register), then memory accesses in program
order (``mem[ADDR]<-VALUE`` stores, ``mem[ADDR]->VALUE`` loads; the value is as wide
as the access).  Lines starting with ``#`` are notes (traps, the size-limit cut).
Nothing depends on time or object identity, so two runs of a deterministic program
give identical files.

Which registers are compared.  When the registers an instruction can write are
known statically (:func:`tessera.engine.capture.static_writes`: its semantics,
specialised for its operands, store into register files at constant indices and
call nothing), only those are compared with their previous values — that is what
lets the fast engine record the instruction without a call.  Otherwise every
register is compared.  Either way a line shows what the instruction changed; the
difference shows only for registers changed *outside* instructions (by a debugger
or another plugin between runs without :meth:`Tracer.resync`): an instruction with
known writes does not report them, the next one without does.  Both engines follow
the same rule, so their traces are identical.
"""

from __future__ import annotations

from typing import Any

from tessera.engine.blocks import hot_threshold
from tessera.engine.capture import Capture, static_writes
from tessera_trace.agents import AgentState
from tessera_trace.effects import changes, hex_digits, text_labels, text_memory
from tessera_trace.filters import FOREVER
from tessera_trace.formats.base import Format, Observer
from tessera_trace.formats.commit import TrapNotes, skip_observer
from tessera_trace.layout import ArchLayout
from tessera_trace.ledger import DRAIN_AT, LITERAL, Ledger

ASM_WIDTH = 32

# what an instruction's known writes call for (the first element of a plan)
_NONE, _ONE, _SOME, _ALL = range(4)
_UNPLANNED = (_ALL,)


class TextFormat(Format):
    name = "text"
    default_out = "trace.txt"
    memory = True
    follows_untraced = True

    def head(self, st: AgentState) -> str:
        return f"{st.name:<{self.tracer.width}}  "

    def __init__(self, tracer: Any) -> None:
        super().__init__(tracer)
        ledger = self.ledger = Ledger(tracer.out)
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
                layout = tracer._layout(agent.arch)
                shadows = spare.get(layout.arch.name)
                if shadows is None:
                    shadows = spare[layout.arch.name] = {f: [0] * len(names) for f, names
                                                         in zip(layout.files, layout.names, strict=True)}
                return scratch.append, scratch.append, shadows
            if len(ids) >= DRAIN_AT:
                drain()
            return record, remember, st.shadow_map

        def make(layout: ArchLayout, ins: Any, traced: bool) -> Observer | None:
            if not traced:
                return skip
            labels = labels_of.get(layout.arch.name)
            if labels is None:
                labels = labels_of[layout.arch.name] = text_labels(layout)
            asm = layout.asm(ins)
            pc = f"{ins.address:0{layout.pc_digits}x}"
            word = f"{ins.word:0{layout.word_digits(ins)}x}"
            prefix = f"{pc}  {word}  {asm:<{ASM_WIDTH}}  "
            bare = ledger.token(f"{pc}  {word}  {asm}")
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
                        plan = (_ONE, fi, ri, ledger.token(prefix + labels[fi][ri], layout.nbytes[fi]))
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
                        mem = text_memory(pend, layout.pc_digits)
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
                    lits.append(prefix + " ".join(
                        [labels[fi][ri] + hex_digits(v, layout.nbytes[fi]) for fi, ri, v in found] + mem) + "\n")
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

    def on_trap(self, st: AgentState, agent: Any, trap: Any) -> None:
        if not self.active():
            return
        pc = int(getattr(agent, "pc", 0) or 0)
        digits = st.layout.pc_digits if st.layout is not None else 8
        self.notes.add(agent, f"# {st.name}: trap at 0x{pc:0{digits}x}: {trap.name} (cause {trap.cause}, "
                              f"value {int(trap.tval):#x})\n")

    def on_trap_taken(self, st: AgentState, agent: Any, trap: Any) -> None:
        layout = st.layout

        def pieces(found: list[tuple[int, int, Any]]) -> str:
            assert layout is not None
            return " ".join(f"{layout.names[fi][ri]}=0x{hex_digits(v, layout.nbytes[fi])}" for fi, ri, v in found)

        self.notes.taken(st, agent, lambda note, found: f"{note[:-1]}; entry set {pieces(found)}\n",
                         lambda found: f"# {st.name}: trap entry set {pieces(found)}\n")
