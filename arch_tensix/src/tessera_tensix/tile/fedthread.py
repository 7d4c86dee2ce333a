"""A Tensix thread of a tile: instructions come from its FIFO, pushed by a baby RISC-V core.

In direct mode (:class:`~tessera_tensix.thread.TensixThread`) a thread fetches words
from memory at its pc.  On a tile nothing is fetched: the coprocessor executes what
the cores push (BlackholeA0 .../BabyRISCV/PushTensixInstruction.md), so this thread
pops its :class:`~tessera_tensix.tile.fifo.InstructionFifo` and hands each word to
the same front end — the MOP expander, the replay expander and the wait gate
(:meth:`FrontEnd.issue <tessera_tensix.frontend.FrontEnd.issue>`) — one at a time.
An instruction that must wait (the gate holds it, or a MOP's expansion is held
part-way) stays the thread's *current* instruction and is issued again, past the
replay expander, when the thread is woken.

With its FIFO empty and nothing in flight the thread is *idle*: it parks on the FIFO
as a daemon, so a run ends when the RISC-V cores have finished and the coprocessor
has drained, and a core that waits for an idle thread is woken through the core's
backend signal.  Its ``pc`` is the pc of the RISC-V store that pushed the
instruction it is on, which is what reports name.
"""

from __future__ import annotations

from typing import Any

from tessera.control import Halt, Trap, WaitFor, Yield
from tessera.engine import RUNNABLE
from tessera.errors import TesseraError
from tessera_tensix import rules
from tessera_tensix.frontend import Undecoded
from tessera_tensix.thread import TensixThread
from tessera_tensix.tile.polls import turn_ends

#: the 64 KiB pages of INSTRN_BUF_BASE, INSTRN1_BUF_BASE, INSTRN2_BUF_BASE: a word whose
#: pc is there was pushed by a store (tessera_tensix.tile.push), not by a .ttinsn word
STORE_PUSH_PAGES = (0xFFE4, 0xFFE5, 0xFFE6)


class FedThread(TensixThread):
    """Tensix thread T0/T1/T2 of a tile."""

    fetches = False   # fed by its core's pushes (tessera.engine.CpuAgent.fetches)

    def __init__(self, *args: Any, **kw: Any) -> None:
        super().__init__(*args, **kw)
        self.fifo: Any = None                     # its InstructionFifo (the board sets it)
        #: the instruction being issued, until it retires: ``(ins, origin, recordable)``
        self.current: tuple[Any, str, bool] | None = None
        self.daemon = True                        # idle until something is pushed
        self.popped = 0                           # words popped: hazards.position counts these
        self.after_store = False                  # the last word popped was pushed by a store
        self.polls: Any = None                    # the tile's parked pollers (the board sets it)

    def fed(self) -> None:
        """A word was pushed: the thread has work (the run must wait for it)."""
        self.daemon = False

    def lockstep(self) -> bool:
        """Must the thread end its turn after each instruction?  Yes while another Tensix
        thread of the core can run: the hardware threads issue side by side, one
        instruction per cycle each, and kernels rely on the order that gives.  (tt-llk's
        ``transpose_dest_test`` on Wormhole: the unpacker's UNPACR_NOP ZEROSRC +
        SETDVALID for SrcB must run between the matrix unit's MOVA2Ds and the SETRWC
        that clears SrcB — UNPACR_NOP_ZEROSRC.md waits on the matrix unit's bank,
        SETRWC.md waits for nothing.  Run ahead, the matrix unit clears a bank the
        unpacker has not handed over yet, and the threads deadlock.)"""
        for thread in self.core.threads:
            if thread is not self and thread.status == RUNNABLE:
                return True
        return False

    @property
    def idle(self) -> bool:
        """Nothing queued and nothing in flight (CoprocessorDoneCheck's condition)."""
        return not self.fifo.items and self.current is None and not self.frontend.pending

    def run_slice(self, limit: int, cycle_limit: float = float("inf")) -> int:
        used = self._run(limit, cycle_limit)
        polls = self.polls
        if polls is not None and polls.parked and turn_ends(self, used, cycle_limit):
            polls.recheck()   # what the thread wrote may wake a polling core
        return used

    def _run(self, limit: int, cycle_limit: float) -> int:
        used = 0
        fifo, frontend = self.fifo, self.frontend
        self.space.current_agent = self
        while used < limit and self.status == RUNNABLE and self.cycles < cycle_limit:
            current = self.current
            if current is None:
                if not fifo.items:
                    self._go_idle()
                    return used
                word, pc, core = fifo.pop()
                self.pc = pc
                self.popped += 1
                stored = pc >> 16 in STORE_PUSH_PAGES
                if frontend.watch is not None and (stored or self.after_store) and self.core.config.store_push_gap:
                    frontend.watch = None   # not adjacent at the gate (store_push_gap, docs/tensix.md)
                self.after_store = stored
                current = self.current = (self.core.decode(word, pc, None, instrument=True), f"{core} at {pc:#x}",
                                          True)
            ins, origin, recordable = current
            if type(ins) is Undecoded:   # popped before a snapshot was restored: decode it again
                ins = self.core.decode(ins.word, ins.address, None, instrument=True)
                current = self.current = (ins, origin, recordable)
            if recordable:  # through the replay expander once, even if the gate holds it below
                if not frontend.admit(self, ins):   # recorded by REPLAY, not executed: consumed
                    frontend.shift -= 1             # by the front end, not retired (as in direct
                    self.current = None             # mode: no step, no callbacks)
                    continue
                self.current = (ins, origin, False)
            try:
                frontend.issue(self, ins, origin, False)
            except Yield:                         # retired: a latched wait ends the turn in direct
                for observe in getattr(ins, "observers", ()):   # mode; issue() skipped these
                    observe(self, ins)
            except WaitFor as wait:
                self.current = (ins, origin, False)   # passed the replay expander already
                self.park(wait.obj, wait.reason)
                return used
            except Halt:
                # the all-zero word, direct mode's END, is no Tensix instruction (opcode 0 is
                # unassigned): pushed, it is a broken rule; leniently it does nothing
                self.current = None
                try:
                    rules.broken(self, ins, "the all-zero word is not a Tensix instruction (direct mode's "
                                            "END); a core pushed it")
                except Trap as trap:
                    self.deliver_trap(trap)
                    return used + 1
            except Trap as trap:
                self.current = None
                self.deliver_trap(trap)
                return used + 1
            except TesseraError as exc:
                raise exc.with_context(agent=self.name, pc=self.pc) from None
            self.current = None
            self.pc = ins.next        # retired: the thread is past it (as a CPU's pc moves on)
            self.cycles += ins.cycles
            self.instret += 1
            used += 1
            if self.lockstep():
                self.yielded = True
                return used
        return used

    def _go_idle(self) -> None:
        """Park on the empty FIFO as a daemon and tell whoever waits for this thread to be idle."""
        self.daemon = True
        self.park(self.fifo, f"{self.name.upper()} is idle: no instruction pushed")
        self.core.signal.changed()

    def __getstate__(self) -> dict[str, Any]:
        state = super().__getstate__()
        cur = state.get("current")
        if cur is not None and type(cur[0]) is not Undecoded:   # a decoded instruction is not state
            state["current"] = (Undecoded(cur[0].word, cur[0].address), cur[1], cur[2])
        return state

    def state_extra(self) -> dict[str, Any]:
        out = super().state_extra()
        cur = self.current
        out["current"] = None if cur is None else f"{cur[0].mnemonic} from {cur[1]}"
        out["fifo"] = [f"{w:#010x} from {core} at {pc:#x}" for w, pc, core in self.fifo.items]
        return out
