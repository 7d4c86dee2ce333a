"""Vector-unit (SFPU) state (spec tensix-sfpu.md §2), shared by the Tensix threads.

Lanes are numpy arrays, preallocated and updated in place: ``lreg`` is LReg[0..16]
× 32 lanes of uint32 (float32 views through ``lreg.view(np.float32)``).  Reset
values follow Blackhole's soft reset (§2.1, E4, E20); ``ttsim_reset`` selects the
vendor simulator's power-on LReg[12] instead.
"""

from __future__ import annotations

import numpy as np

LANES = 32
FLAG_STACK_DEPTH = 8
#: lane i of LReg[15] holds 2*i
LREG15 = np.arange(LANES, dtype=np.uint32) * 2
RESET_CONSTANTS = {8: 0x3F56594B, 9: 0x00000000, 10: 0x3F800000, 11: 0xBF800000,
                   12: 0x37800000, 13: 0xBF2CC4C7, 14: 0xBEB08FF9}


class SfpuState:
    """LRegs, lane flags and their stack, LaneConfig, LoadMacroConfig, PRNG."""

    def __init__(self, *, ttsim_reset: bool = False) -> None:
        self.lreg = np.zeros((17, LANES), dtype=np.uint32)
        for index, value in RESET_CONSTANTS.items():
            self.lreg[index, :] = value
        if ttsim_reset:
            self.lreg[12, :] = 0x3B000000
        self.lreg[15, :] = LREG15
        self.lane_flags = np.zeros(LANES, dtype=bool)        # LaneFlags
        self.use_lane_flags = np.zeros(LANES, dtype=bool)    # UseLaneFlagsForLaneEnable
        self.flag_stack: list[tuple[np.ndarray, np.ndarray]] = []  # (LaneFlags, UseLF) entries
        self.lane_config = np.zeros(LANES, dtype=np.uint32)  # 18 bits per lane (§2.2)
        self.template = np.zeros((4, LANES), dtype=np.uint32)  # LoadMacroConfig.InstructionTemplate
        self.sequence = np.zeros((4, LANES), dtype=np.uint32)  # LoadMacroConfig.Sequence
        self.misc = np.zeros(LANES, dtype=np.uint32)           # LoadMacroConfig.Misc (12 bits)
        self.prng = np.zeros(LANES, dtype=np.uint32)

    def state(self) -> dict:
        """JSON-able dump (``--dump-state``): LRegs as hex strings per lane."""
        return {
            "lreg": [[f"{int(v):#010x}" for v in row] for row in self.lreg],
            "lane_flags": [bool(x) for x in self.lane_flags],
            "use_lane_flags": [bool(x) for x in self.use_lane_flags],
            "flag_stack_depth": len(self.flag_stack),
            "lane_config": [int(x) for x in self.lane_config],
            "prng": [int(x) for x in self.prng],
        }
