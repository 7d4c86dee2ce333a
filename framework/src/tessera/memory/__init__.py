"""Memory: address spaces, regions (RAM, ROM, MMIO) and watches."""

from tessera.memory.regions import MMIO, RAM, ROM, Device, Region
from tessera.memory.space import DEFAULT_MEMORY_CAP, AddressSpace, DecodeCache, MemoryBudget
from tessera.memory.watch import Watch

__all__ = ["AddressSpace", "DecodeCache", "MemoryBudget", "DEFAULT_MEMORY_CAP", "Region", "RAM",
           "ROM", "MMIO", "Device", "Watch"]

