"""What the engine asks of the space an agent executes in: an address space, or a view.

An agent's ``space`` is usually an :class:`~tessera.memory.space.AddressSpace`.  An
architecture whose agents translate addresses (an MMU, per-thread address maps)
gives each agent a *translated view* instead: an object that answers the same calls
by translating the address and then using a physical address space.  The engine
needs only the members of :class:`AgentSpace`, so anything that has them can stand
in for a space; :class:`~tessera.memory.space.AddressSpace` has them too.

A view keeps its decoded instructions in the physical space it translates to
(:meth:`~tessera.memory.space.AddressSpace.view_cache`), so that a store to those
bytes, by any agent or device, drops them; and it empties them when its translation
changes (:meth:`~tessera.memory.space.AddressSpace.clear_view_caches`).  rfPhoenix's
``tessera_phoenix.view.ThreadView`` is the worked example.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Protocol, runtime_checkable

from tessera.types import Endian

__all__ = ["AgentSpace", "Placement"]


@runtime_checkable
class Placement(Protocol):
    """Where a fetch landed, as the engine's decode-cache fill reads it.

    A :class:`~tessera.memory.regions.Region` is one.  ``cacheable``: may what was
    fetched be cached (RAM and ROM, not MMIO).  ``end``: the first address, in the
    agent's own addresses, past the bytes known to be contiguous with the fetched
    ones, so an instruction is cached only if it lies wholly before it.
    """

    cacheable: bool
    end: int


@runtime_checkable
class AgentSpace(Protocol):
    """The members of an agent's ``space`` that the engine uses.

    ``name`` keys the machine's decode fillers (one per architecture and space);
    ``current_agent`` is set to the executing agent once per slice (memory watches
    report it).  Addresses are the agent's own (virtual, for a view).
    """

    name: str
    endian: Endian
    address_bits: int
    current_agent: Any

    def fetch(self, address: int, size: int) -> tuple[int, Placement]:
        """Instruction fetch: ``(word, placement)``; a fault raises ``MemoryFault``
        (the architecture's ``memory_trap`` turns it into a trap)."""
        ...

    def decode_cache(self, key: Any, make: Callable[[], Any] | None = None) -> Any:
        """The decode cache for architecture ``key``, made by ``make()`` if new; a view
        returns the one kept for it by its physical space (``view_cache``)."""
        ...

    def mark_code(self, region: Any, address: int, size: int) -> None:
        """Note that ``size`` bytes at ``address``, fetched into ``region`` (the
        placement ``fetch`` returned), are now cached code, so writes to them invalidate."""
        ...

    def read(self, address: int, size: int) -> int:
        """A data load, as semantic functions make it."""
        ...

    def write(self, address: int, size: int, value: int) -> None:
        """A data store, as semantic functions make it."""
        ...
