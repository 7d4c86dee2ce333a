"""The Tensix core's shared state: Dest, the vector unit, backend configuration."""

from __future__ import annotations

from typing import Any

from tessera_tensix.config import ConfigSpace, TensixConfig
from tessera_tensix.dest import Dest
from tessera_tensix.sfpu_state import SfpuState


class TensixCore:
    """What the Tensix threads of one core share."""

    def __init__(self, config: TensixConfig) -> None:
        self.config = config
        self.dest = Dest()
        self.sfpu = SfpuState(ttsim_reset=config.ttsim_reset)
        if config.lane_flags_reset:
            self.sfpu.lane_flags[:] = True
        self.cfg = ConfigSpace()                  # backend config (one bank modelled)
        self.machine: Any = None

    def state(self) -> dict[str, Any]:
        return {"sfpu": self.sfpu.state(), "dest": self.dest.state(), "config": self.cfg.state()}
