"""The machine model: agents, address spaces, sync objects, scheduler, clock, snapshots."""

from tessera.machine.clock import NominalTiming
from tessera.machine.machine import Machine, RunResult

__all__ = ["Machine", "RunResult", "NominalTiming"]
