"""What one baby RISC-V core of a Tensix tile sees: the shared tile space plus its own windows.

The five cores of a tile share L1 and most device windows, but several addresses
mean something different on each core (BlackholeA0 .../BabyRISCV/README.md, "Memory
map"): ``MEM_LOCAL_BASE`` is the core's own local data RAM, ``INSTRN_BUF_BASE``
pushes to the core's own Tensix thread, ``TENSIX_MOP_CFG_BASE`` programs its own MOP
expander, ``PC_BUF_BASE`` is its end of a PCBuf, and each mailbox address names a
different mailbox per core.  A :class:`CoreView` is the engine's
:class:`~tessera.memory.view.AgentSpace` for one core: addresses inside the core's
*private ranges* go to a small address space of that core's own (its local RAM and
per-core devices), every other address to the tile's shared space unchanged.

L1 — where all code and most data live — is mapped at the same addresses in the
shared space, so the view hands the engine that space's RAM window (blocks then load
and store L1 without a call) and its decode cache (instructions are fetched only from
L1; a store by any core, or by the coprocessor's packers, to decoded code drops it
for every core).
"""

from __future__ import annotations

import bisect
from collections.abc import Iterable
from typing import Any

from tessera.errors import MemoryFault

MASK32 = 0xFFFF_FFFF


class CoreView:
    """One core's address map: ``private`` ranges to ``own``, the rest to ``shared``."""

    def __init__(self, name: str, shared: Any, own: Any, private: Iterable[tuple[int, int]]) -> None:
        self.name = name
        self.shared = shared
        self.own = own
        self.endian = shared.endian
        self.address_bits = 32
        self.limit = 1 << 32
        ranges = sorted((start, start + size) for start, size in private)
        self._starts = [start for start, _ in ranges]
        self._ends = [end for _, end in ranges]
        #: nothing below this address is private (L1 and the low windows go straight through)
        self._lowest = ranges[0][0] if ranges else self.limit
        self._current_agent: Any = None

    @property
    def window(self) -> Any:
        """The shared space's RAM window (L1, at the same addresses in this view)."""
        return self.shared.window

    @property
    def current_agent(self) -> Any:
        return self._current_agent

    @current_agent.setter
    def current_agent(self, agent: Any) -> None:
        # devices and memory watches of either space report the executing core
        self._current_agent = agent
        self.shared.current_agent = agent
        self.own.current_agent = agent

    def space_of(self, address: int) -> Any:
        """The space that answers ``address`` for this core."""
        if address < self._lowest:
            return self.shared
        i = bisect.bisect_right(self._starts, address) - 1
        return self.own if i >= 0 and address < self._ends[i] else self.shared

    # -- the engine's interface (tessera.memory.view.AgentSpace)
    def fetch(self, address: int, size: int) -> tuple[int, Any]:
        address &= MASK32
        if address >= self._lowest and self.space_of(address) is self.own:
            raise MemoryFault(f"{self.name} cannot fetch from {address:#010x}: the baby RISC-V cores "
                              "execute only from L1", access="fetch", size=size, address=address)
        return self.shared.fetch(address, size)

    def decode_cache(self, key: Any, make: Any = None) -> Any:
        return self.shared.decode_cache(key, make)

    def mark_code(self, region: Any, address: int, size: int) -> None:
        self.shared.mark_code(region, address, size)

    # a refused access raises the space's MemoryFault; the RISC-V architecture turns it
    # into an access-fault trap (tessera_riscv.traps.memory_trap)
    def read(self, address: int, size: int) -> int:
        address &= MASK32
        return self.space_of(address).read(address, size)

    def write(self, address: int, size: int, value: int) -> None:
        address &= MASK32
        self.space_of(address).write(address, size, value)

    def read_bytes(self, address: int, n: int) -> bytes:
        return self.space_of(address & MASK32).read_bytes(address & MASK32, n)

    def write_bytes(self, address: int, data: bytes, *, force: bool = False) -> None:
        self.space_of(address & MASK32).write_bytes(address & MASK32, data, force=force)

    def covers(self, start: int, size: int) -> bool:
        return self.space_of(start).covers(start, size)

    def region_at(self, address: int) -> Any:
        return self.space_of(address).region_at(address)

    def describe(self) -> list[dict[str, Any]]:
        return self.own.describe() + self.shared.describe()

    def __repr__(self) -> str:
        return f"<CoreView {self.name}>"
