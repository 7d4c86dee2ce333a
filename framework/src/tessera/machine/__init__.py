"""The machine model: agents, address spaces, sync objects, scheduler, clock, snapshots."""

from tessera.machine.clock import NominalTiming
from tessera.machine.ext import MachineExtensions
from tessera.machine.machine import ENGINES, Machine, RunResult
from tessera.machine.tools import configure_tools

__all__ = ["ENGINES", "Machine", "MachineExtensions", "RunResult", "NominalTiming", "configure_tools"]
