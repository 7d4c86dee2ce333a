"""A Tensix thread in direct mode: executes Tensix instruction words from memory.

A thread runs a kernel given as words, one after another, and ends at the first
all-zero word (not a valid Tensix instruction: opcode 0 is unassigned).  MOP and
REPLAY expand into further instructions and every instruction passes the thread's
wait gate (:mod:`tessera_tensix.frontend`); the baby RISC-V cores that push words
into the thread's FIFO come with issue 17.  Per-thread state: the scalar unit's 64
GPRs, the register-window counters (RWCs), the thread's config and its front end;
the units (Dest, SrcA/SrcB, the vector unit, sync unit …) are the core's
(``thread.core``).
"""

from __future__ import annotations

import functools
from typing import Any

from tessera.control import Trap
from tessera.engine import RUNNABLE, CpuAgent
from tessera_tensix.config import ConfigSpace
from tessera_tensix.frontend import FrontEnd
from tessera_tensix.mop import FRONT_END_OPCODES

MASK32 = 0xFFFF_FFFF


class TensixThread(CpuAgent):
    """One Tensix thread (T0..T2) fed directly with instruction words."""

    kind = "tensix"
    #: SEMWAIT latches whose wait ended with an instruction held — the one the thread
    #: parked on, or one the mask catches when the wait is found over
    #: (:meth:`FrontEnd.gate_reason <tessera_tensix.frontend.FrontEnd.gate_reason>`): a
    #: timing model holds that instruction until the semaphores changed in its own time
    sem_releases = 0

    def __init__(self, name: str, arch: Any, space: Any, *, tid: int, core: Any, pc: int = 0) -> None:
        super().__init__(name, arch, space, pc=pc)
        self.tid = tid
        self.core = core
        self.gpr = [0] * 64                       # scalar-unit GPRs (ADDDMAREG …)
        self.rwc = {"dst": 0, "srca": 0, "srcb": 0, "sp": 0, "fidelity": 0, "bias": 0,
                    "dst_cr": 0, "srca_cr": 0, "srcb_cr": 0}
        self.tcfg = ConfigSpace()                 # ThreadConfig fields of this thread
        self.frontend = FrontEnd()

    def run_slice(self, limit: int, cycle_limit: float = float("inf")) -> int:
        """Run as a CPU does, except while a STALLWAIT/SEMWAIT is latched, REPLAY is
        loading or instructions scheduled by SFPLOADMACRO wait: then one instruction at a
        time, each first passing the replay expander (recorded; skipped if not also
        executed), the wait gate (parks when held) and SFPLOADMACRO's clock
        (:mod:`tessera_tensix.semantics.loadmacro`)."""
        frontend = self.frontend
        if not frontend.slow():
            return super().run_slice(limit, cycle_limit)
        used = 0
        while used < limit and self.status == RUNNABLE and frontend.slow():
            ins = self.core.decode(self.space.fetch(self.pc, 4)[0])  # a fetch: no data access a trace would show
            reason = None
            if not frontend.pending:  # (a MOP/REPLAY at pc with a queue resumes it)
                if frontend.admitted != self.pc:  # through the replay expander once per visit
                    if not frontend.admit(self, ins):  # recorded by REPLAY, not executed
                        frontend.shift -= 1  # (no backend instruction: hazards.position)
                        # consumed by the front end, not retired: no step (a slice's steps
                        # are its retirements, which budgets and the scheduler count)
                        self.pc = self.next_pc = self.pc + 4
                        continue
                    frontend.admitted = self.pc
                reason = frontend.gate_reason(self, ins)
            macro = frontend.macro
            if macro is not None and macro.busy and not frontend.pending:
                try:  # SFPLOADMACRO's schedule: cycles pass while waiting, or this one issues
                    if reason is not None:
                        macro.idle(self)
                    elif not macro.tick(self, ins):  # discarded: its sub-unit is taken
                        self.pc = self.next_pc = self.pc + 4
                        used += 1
                        continue
                except Trap as trap:  # a rule broken by a scheduled instruction
                    self.deliver_trap(trap)
                    return used + 1
            if reason is not None:
                self.park(self.core.signal, f"{self.name.upper()} {reason} (at pc {self.pc:#x})")
                return used
            if frontend.watch is not None and ins.word >> 24 not in FRONT_END_OPCODES:
                from tessera_tensix import hazards  # the instruction right after WRCFG …

                step = hazards.watched(self, ins, functools.partial(super().run_slice, 1, cycle_limit))
            else:
                step = super().run_slice(1, cycle_limit)
            if step == 0:
                return used
            frontend.admitted = None
            used += step
        if used < limit and self.status == RUNNABLE:
            used += super().run_slice(limit - used, cycle_limit)
        return used

    def lockstep(self) -> bool:
        """Must the thread end its turn after each instruction (of a MOP/REPLAY expansion
        too)?  Not in direct mode: its threads run their slices (a tile's fed threads do,
        :meth:`FedThread.lockstep <tessera_tensix.tile.fedthread.FedThread.lockstep>`)."""
        return False

    def state_extra(self) -> dict[str, Any]:
        return {"tid": self.tid, "gpr": list(self.gpr), "rwc": dict(self.rwc),
                "thread_config": self.tcfg.state(), "frontend": self.frontend.state()}
