"""An rfPhoenix hardware thread: the agent that executes instructions.

Per-thread state (spec 1.1): IP, 64 GPRs, 64 vector registers of NLANES x 32 bits,
the 8-entry status and IP stacks with their nesting depth, CAUSE/BADADDR per mode,
PTBR, ASID, the stack-pointer alias selector and the global-interrupt-enable latch.
Shared state (CR0, TVEC, TLB, PMA, queues, debug registers) lives in
:class:`~tessera_phoenix.shared.Shared`, reached as ``thread.shared``.

Semantic functions use the helpers here rather than the raw lists so that the r0,
r47 (SP alias) and r59 (PC) rules are applied in one place.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from tessera.control import Trap
from tessera.engine import RUNNABLE, CpuAgent
from tessera_phoenix import causes, debug, interrupts
from tessera_phoenix.registers import (
    MSP,
    PCREG,
    RESET_IP,
    RESET_STATUS,
    SP,
    SP_ALIAS,
)

MASK32 = 0xFFFF_FFFF


class PhoenixThread(CpuAgent):
    """One of the core's hardware threads."""

    kind = "thread"
    #: The scalar register file, made by ``CpuAgent`` from the architecture's "r" declaration.
    r: list[int]

    def __init__(self, name: str, arch: Any, space: Any, *, tid: int, shared: Any,
                 lanes: int, pc: int = RESET_IP) -> None:
        # A thread CR0 disables is a daemon: it does not keep a run alive (Shared.set_cr0)
        super().__init__(name, arch, space, pc=pc, daemon=not (shared.cr0 >> tid) & 1)
        self.tid = tid
        self.shared = shared
        self.lanes = lanes
        self.gpr = self.r  # the 64-entry scalar file (the "r" register file)
        self.vr = np.zeros((64, lanes), dtype=np.uint32)
        self.status_stack = [RESET_STATUS] * 8
        self.ip_stack = [RESET_IP] * 8
        self.depth = 1                     # reset counts as an exception
        self.sp_sel = MSP                  # r47 currently means r62 (machine mode)
        self.cause = [0, 0, 0, 0]          # per operating mode
        self.badaddr = [0, 0, 0, 0]
        self.ptbr = 0
        self.asid = 0
        self.gie = False                   # set by the first write to r62 (HDL)
        self.reservation: int | None = None
        self.pending_irq: list[tuple[int, int]] = []  # (level, cause) raised through the API
        self.ssm_pending = False           # single step: take SSM at the next boundary
        self.clock_read_pc: int | None = None  # see semantics.system (exact clock reads)

    # ------------------------------------------------------------------ status

    # ``status`` is the scheduler's runnable/waiting/halted (Agent); the STATUS CSR is
    # ``status_word`` so the two can never be confused.
    @property
    def status_word(self) -> int:
        """STATUS: entry 0 of the status stack."""
        return self.status_stack[0]

    @status_word.setter
    def status_word(self, value: int) -> None:
        self.status_stack[0] = value & MASK32

    @property
    def mode(self) -> int:
        """Operating mode: 0 user, 1 supervisor, 2 hypervisor, 3 machine."""
        return (self.status_stack[0] >> 10) & 3

    def set_sp_alias_for_mode(self, mode: int) -> None:
        self.sp_sel = SP_ALIAS[mode]

    # ------------------------------------------------------------------ scalar registers

    def rd(self, index: int, pc: int) -> int:
        """Read scalar GPR ``index`` (0..63) as the instruction at ``pc`` sees it."""
        if index == SP:
            return self.gpr[self.sp_sel]
        if index == PCREG:
            return pc
        return self.gpr[index]  # gpr[0] is never written, so it reads 0

    def wr(self, index: int, value: int) -> None:
        """Write scalar GPR ``index``; r0 and r59 ignore writes."""
        if index == 0 or index == PCREG:
            return
        if index == SP:
            index = self.sp_sel
        if index == MSP:
            self.gie = True
        self.gpr[index] = value & MASK32

    # ------------------------------------------------------------------ vectors and masks

    def lane_mask(self, mask_reg: int, pc: int) -> int:
        """The lane-enable bits named by a Mask field (0 = every lane)."""
        if mask_reg == 0:
            return (1 << self.lanes) - 1
        return self.rd(mask_reg, pc) & ((1 << self.lanes) - 1)

    def lane_mask_array(self, mask_reg: int, pc: int) -> np.ndarray:
        """The lane mask as a boolean array of NLANES entries."""
        bits = self.lane_mask(mask_reg, pc)
        return ((bits >> np.arange(self.lanes)) & 1).astype(bool)

    # ------------------------------------------------------------------ scheduling

    def run_slice(self, limit: int, cycle_limit: float = float("inf")) -> int:
        """One scheduling slice: instruction-boundary events first, then instructions.

        Order at the boundary: scheduled interrupts become pending (and cut ``limit``
        so the next one lands on its exact step); a disabled thread parks on the CR0
        gate; a pending single-step exception, else a recognisable interrupt, is taken
        (one step); then either one debug-checked instruction (single step, trace or
        fetch breakpoints active) or the engine's fast loop.
        """
        shared = self.shared
        if shared.irq_schedule:
            limit = interrupts.poll_schedule(self, limit)
        if not (shared.cr0 >> self.tid) & 1:
            self.park(shared.gate, _gate_reason(self))
            return 0
        used = 0
        if self.ssm_pending:
            used = debug.take(self, Trap(causes.SSM, 0, name="single step"))
            self.ssm_pending = False  # only once taken: a stop_on_trap stop keeps it pending
        elif self.pending_irq and interrupts.deliver(self):
            used = 1
        if used >= limit or self.status != RUNNABLE:
            return used
        # debug.needs_stepping, inlined: this runs once per instruction with several threads
        if self.status_stack[0] & debug.STEP_BITS or (
                shared.dbcr & 0xF and debug.fetch_breakpoints_on(shared, self.tid)):
            return used + debug.step(self, cycle_limit)
        return used + super().run_slice(limit - used, cycle_limit)

    def boundary_quiet(self) -> bool:
        """Nothing but instructions at this thread's next boundaries (see :meth:`run_slice`):
        no scheduled or pending interrupt, no single-step, the thread enabled, no debug
        stepping or fetch breakpoint.  Then a barrel run may run it ahead of its turn."""
        shared = self.shared
        return not (shared.irq_schedule or self.ssm_pending or self.pending_irq
                    or not (shared.cr0 >> self.tid) & 1
                    or self.status_stack[0] & debug.STEP_BITS or shared.dbcr & 0xF)

    # ------------------------------------------------------------------ state for dumps

    def snapshot_state(self) -> dict[str, Any]:
        return {
            "tid": self.tid,
            "mode": self.mode,
            "status_word": self.status_word,
            "depth": self.depth,
            "sp_alias": self.sp_sel,
            "cause": list(self.cause),
            "badaddr": list(self.badaddr),
            "eip": self.ip_stack[0],
            "ptbr": self.ptbr,
            "gie": self.gie,
            "pending_irq": [list(p) for p in self.pending_irq],
            "ssm_pending": self.ssm_pending,
            "asid": self.asid,
            "vectors": {f"v{i}": [int(x) for x in self.vr[i]] for i in range(64)
                        if self.vr[i].any()},
        }


def _gate_reason(thread: PhoenixThread) -> str:
    return f"CR0 bit {thread.tid} (thread enable) to be set"
