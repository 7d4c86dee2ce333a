"""A Tensix thread's front end: expanded instructions and the wait gate in front of the backend.

The hardware pipeline of each thread is instruction FIFO -> MOP expander -> replay
expander -> wait gate -> backend (WormholeB0 .../TensixCoprocessor/MOPExpander.md,
REPLAY.md, WaitGate.md).  In Tessera a thread is a :class:`~tessera.engine.CpuAgent`
whose instructions come from memory (direct mode) or, later, a FIFO; MOP and REPLAY
are instructions whose semantics put the instructions they expand to into
:attr:`FrontEnd.pending` and issue them from there (:meth:`FrontEnd.drain`) through
the same wait gate as the rest.  If one of them must wait, the MOP/REPLAY that made it
is not retired: the thread parks, and when woken runs that instruction again, which
resumes the queue where it stopped instead of expanding again (a non-empty queue
always belongs to the instruction at the thread's PC).

The wait gate: STALLWAIT and SEMWAIT *latch* a wait (:attr:`FrontEnd.latched`) and
retire; from then on every instruction that reaches the gate is held while the
latched wait's block mask catches its unit and the condition is not met, and the
latch clears once the condition holds (WaitGate.md).  The thread's slice runs one
instruction at a time while a wait is latched (:meth:`TensixThread.run_slice`), so
the fast engine's blocks never run past the gate.  What the block and condition
masks mean is :mod:`tessera_tensix.waitgate`'s business.
"""

from __future__ import annotations

from collections import deque
from typing import Any

from tessera.control import Yield
from tessera_tensix.mop import FRONT_END_OPCODES


class Undecoded:
    """A queued expanded word as a snapshot keeps it: decoded instructions (bound
    semantics, observers) are not pickled; :meth:`FrontEnd.drain` decodes it again."""

    __slots__ = ("word", "address", "issued_by")
    mnemonic = "(undecoded)"

    def __init__(self, word: int, address: int, issued_by: str | None = None) -> None:
        self.word, self.address, self.issued_by = word, address, issued_by


class FrontEnd:
    """Per-thread front-end state."""

    #: numbering of the thread's backend instructions (:func:`tessera_tensix.hazards.position`):
    #: + 1 per instruction an expansion issues, - 1 per kernel word that is not a backend
    #: instruction (MOP, MOP_CFG, REPLAY, words recorded without executing)
    shift = 0
    #: the latched wait has held an instruction (the thread parked on it)
    held = False
    #: what the thread's next backend instruction must not read (a hazards.Watch), or None
    watch: Any = None
    #: recent writes the hazard rules look back at (a hazards.Recent), made on first use
    recent: Any = None

    def __init__(self) -> None:
        #: expanded instructions not yet issued: ``(decoded instruction, origin text,
        #: recordable)`` — MOP output passes the replay expander (may be recorded), replay
        #: output does not
        self.pending: deque[tuple[Any, str, bool]] = deque()
        #: the wait latched by STALLWAIT/SEMWAIT (a waitgate.Latch), or None
        self.latched: Any = None
        self.draining = False
        #: the PC whose instruction already passed the replay expander (it waits at the gate)
        self.admitted: int | None = None
        #: per-thread state of the expanders, created by their modules on first use
        self.mop: Any = None
        self.replay: Any = None
        #: the vector unit's SFPLOADMACRO schedule, once this thread issued an SFPLOADMACRO
        #: (semantics.loadmacro.Schedule): while it is busy every instruction clocks it
        self.macro: Any = None

    # -- the wait gate
    def gate_reason(self, thread: Any, ins: Any) -> str | None:
        """Why ``ins`` cannot pass the gate now (None: it may).  Clears a met latch."""
        latch = self.latched
        if latch is None:
            return None
        from tessera_tensix import waitgate

        if waitgate.met(thread, latch):
            self.latched = None
            if latch.opcode == "SEMWAIT" and (self.held or waitgate.catches(latch, ins)):
                # for a timing model: the wait ended with an instruction it held (the one
                # the thread parked on, or this one), which must not pass before the
                # semaphores changed in the model's time
                thread.sem_releases = getattr(thread, "sem_releases", 0) + 1
            self.held = False
            return None
        if not waitgate.catches(latch, ins):
            return None
        self.held = True
        return waitgate.describe(thread, latch, ins)

    def latch(self, thread: Any, ins: Any, latch: Any) -> None:
        """STALLWAIT/SEMWAIT: latch ``latch``; outside an expansion end the slice so the
        thread's next instructions go through the gate one by one."""
        from tessera_tensix import hazards

        hazards.latched(thread, latch)
        self.latched = latch
        self.held = False
        if not self.draining:
            raise Yield(ins.next)

    # -- expanded instructions
    def slow(self) -> bool:
        """Must the thread's instructions go one at a time through :meth:`admit`?"""
        replay = self.replay
        macro = self.macro
        return (self.latched is not None or (replay is not None and replay.loading)
                or (macro is not None and macro.busy) or self.watch is not None)

    def admit(self, thread: Any, ins: Any) -> bool:
        """The replay expander's part for ``ins`` reaching it: while REPLAY is loading it
        is recorded; returns False if it must not go on to the wait gate (load without
        execute).  MOP, MOP_CFG (opcodes 0x01, 0x03: the MOP expander consumes them) and
        REPLAY (0x04: its semantics handle one arriving mid-load) are not recorded here."""
        replay = self.replay
        if replay is None or not replay.loading or ins.word >> 24 in FRONT_END_OPCODES:
            return True
        return bool(replay.take(ins.word))

    def issue(self, thread: Any, ins: Any, origin: str, recordable: bool = True) -> None:
        """Pass ``ins`` (made by ``origin``) through the replay expander (if ``recordable``)
        and the wait gate, and execute it (may park the thread)."""
        if recordable and not self.admit(thread, ins):
            return
        reason = self.gate_reason(thread, ins)
        macro = self.macro
        if reason is not None:
            if macro is not None:  # cycles pass while the thread waits
                macro.idle(thread)
            thread.core.signal.hold(thread, f"{reason} (at {ins.mnemonic} from {origin})")
        trap = getattr(ins, "trap", None)
        if trap is not None:  # an undecodable word in an expansion
            raise trap
        if macro is not None and macro.busy and not macro.tick(thread, ins):
            return  # discarded: its sub-unit runs an instruction SFPLOADMACRO scheduled
        backend = ins.word >> 24 not in FRONT_END_OPCODES  # a REPLAY here only expands
        self.shift += backend
        try:
            if backend and self.watch is not None:
                from tessera_tensix import hazards

                hazards.watched(thread, ins, lambda: ins.run(thread, ins) or True)
            else:
                ins.run(thread, ins)
        except Yield:  # retired
            raise
        except BaseException:
            self.shift -= backend  # held: it issues again
            raise
        for observe in getattr(ins, "observers", ()):  # a trace sees each expanded instruction
            observe(thread, ins)

    def expand(self, thread: Any, words: Any, origin: str, address: int, recordable: bool = True,
               issued_by: str = "MOP") -> None:
        """Queue ``words`` (made by ``origin``, e.g. ``"MOP at 0x40"``, the instruction at the
        thread's PC) for :meth:`drain`; ``recordable``: they reach the replay expander (MOP
        output; not replay output).  Each is decoded at the origin's ``address`` (pass
        ``ins.address``: inside a slice ``thread.pc`` may lag behind) and marked
        ``ins.issued_by`` (``"MOP"``, ``"REPLAY"``), so a trace lists the expansion under
        the instruction that made it."""
        decode = thread.core.decode
        self.shift -= 1  # the MOP / REPLAY itself never reaches the backend
        self.pending.extend((decode(w, address, issued_by), origin, recordable) for w in words)

    def drain(self, thread: Any) -> None:
        """Issue the pending instructions in order; a wait leaves the rest queued."""
        pending = self.pending
        self.draining = True
        try:
            first = True
            while pending:
                if not first and thread.lockstep():   # one instruction per turn
                    from tessera_tensix.signal import TURN

                    raise TURN.wait_for(thread, "ends its turn: another Tensix thread can run")
                first = False
                ins, origin, recordable = pending[0]
                if type(ins) is Undecoded:  # queued before a snapshot was restored
                    ins = thread.core.decode(ins.word, ins.address, ins.issued_by)
                    pending[0] = (ins, origin, recordable)
                if recordable:  # through the replay expander once, even if it waits below
                    pending[0] = (ins, origin, False)
                    if not self.admit(thread, ins):
                        pending.popleft()
                        continue
                self.issue(thread, ins, origin, recordable=False)
                pending.popleft()
        finally:
            self.draining = False

    def __getstate__(self) -> dict[str, Any]:
        state = dict(self.__dict__)
        state["pending"] = deque((Undecoded(i.word, i.address, getattr(i, "issued_by", None)), o, r)
                                 for i, o, r in self.pending)
        return state

    def state(self) -> dict[str, Any]:
        return {"pending": [f"{i.mnemonic} {i.word:#010x} from {o}" for i, o, _ in self.pending],
                "latched": None if self.latched is None else self.latched.text(),
                "mop": None if self.mop is None else self.mop.state(),
                "replay": None if self.replay is None else self.replay.state()}

