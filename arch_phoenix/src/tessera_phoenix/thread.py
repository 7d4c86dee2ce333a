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

from tessera.engine import CpuAgent

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

    def __init__(self, name: str, arch: Any, space: Any, *, tid: int, shared: Any,
                 lanes: int, pc: int = RESET_IP) -> None:
        super().__init__(name, arch, space, pc=pc)
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

    # ------------------------------------------------------------------ status

    @property
    def status(self) -> int:
        return self.status_stack[0]

    @status.setter
    def status(self, value: int) -> None:
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
        """Run only while CR0 enables this thread; take pending interrupts first."""
        if not (self.shared.cr0 >> self.tid) & 1:
            self.park(self.shared.gate, _gate_reason(self))
            return 0
        if self.pending_irq:
            from tessera_phoenix.interrupts import deliver

            deliver(self)
        return super().run_slice(limit, cycle_limit)

    # ------------------------------------------------------------------ state for dumps

    def snapshot_state(self) -> dict[str, Any]:
        return {
            "tid": self.tid,
            "mode": self.mode,
            "status": self.status,
            "depth": self.depth,
            "sp_alias": self.sp_sel,
            "cause": list(self.cause),
            "badaddr": list(self.badaddr),
            "eip": self.ip_stack[0],
            "ptbr": self.ptbr,
            "asid": self.asid,
            "vectors": {f"v{i}": [int(x) for x in self.vr[i]] for i in range(64)
                        if self.vr[i].any()},
        }


def _gate_reason(thread: PhoenixThread) -> str:
    return f"CR0 bit {thread.tid} (thread enable) to be set"
