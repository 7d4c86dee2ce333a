"""Timing models and the machine clock.

Timing lives outside the semantics (as in gem5): a timing model prices each
instruction when it enters the decode cache, agents add the price to their own
cycle counters as they run, and the model says what the machine clock reads.
"""

from __future__ import annotations

from typing import Any


class NominalTiming:
    """The default model: each instruction costs its timing class's nominal latency.

    Agents run concurrently, so the machine clock is the largest agent cycle count.
    """

    name = "nominal"

    def __init__(self, arch: Any) -> None:
        self.arch = arch

    def cycles(self, ins: Any) -> int:
        enc = ins.encoding
        return int(self.arch.timing.get(enc.timing, self.arch.timing.get("default", 1)))

    def now(self, machine: Any) -> int:
        return max((a.cycles for a in machine.agents), default=0)
