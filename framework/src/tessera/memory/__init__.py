"""Memory: address spaces, regions (RAM, ROM and MMIO) and watches.

The decode caches an address space keeps are the engine's
(:class:`tessera.engine.DecodeCache`); memory sits below the engine.
"""

from tessera.memory.regions import MMIO, RAM, ROM, Device, Region
from tessera.memory.space import DEFAULT_MEMORY_CAP, AddressSpace, CodeCache, MemoryBudget
from tessera.memory.view import AgentSpace, Placement
from tessera.memory.watch import READ, WRITE, Watch

__all__ = ["AddressSpace", "AgentSpace", "CodeCache", "MemoryBudget", "DEFAULT_MEMORY_CAP", "Placement",
           "Region", "RAM", "ROM", "MMIO", "Device", "Watch", "READ", "WRITE"]
