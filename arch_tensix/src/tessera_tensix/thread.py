"""A Tensix thread in direct mode: executes Tensix instruction words from memory.

The real front end (baby RISC-V pushes → MOP/replay expanders → wait gate) comes in a
later issue; here a thread runs a kernel given as words, one after another, and ends
at the first all-zero word (not a valid Tensix instruction: opcode 0 is unassigned).
Per-thread state: the scalar unit's 64 GPRs, the register-window counters (RWCs) and
the thread's config; the vector unit and Dest are the core's (``thread.core``).
"""

from __future__ import annotations

from typing import Any

from tessera.engine import CpuAgent
from tessera_tensix.config import ConfigSpace

MASK32 = 0xFFFF_FFFF


class TensixThread(CpuAgent):
    """One Tensix thread (T0..T2) fed directly with instruction words."""

    kind = "tensix"

    def __init__(self, name: str, arch: Any, space: Any, *, tid: int, core: Any, pc: int = 0) -> None:
        super().__init__(name, arch, space, pc=pc)
        self.tid = tid
        self.core = core
        self.gpr = [0] * 64                       # scalar-unit GPRs (ADDDMAREG …)
        self.rwc = {"dst": 0, "srca": 0, "srcb": 0, "sp": 0, "fidelity": 0, "bias": 0,
                    "dst_cr": 0, "srca_cr": 0, "srcb_cr": 0}
        self.tcfg = ConfigSpace()                 # ThreadConfig fields of this thread

    def state_extra(self) -> dict[str, Any]:
        return {"tid": self.tid, "gpr": list(self.gpr), "rwc": dict(self.rwc),
                "thread_config": self.tcfg.state()}
