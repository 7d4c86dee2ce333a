"""The author's test-bench memory (``--set memory=testbench``, spec 1.8).

The HDL test bench (``rfPhoenix_tb.sv`` with ``scratchmem128.sv``) has one 256 KiB
memory and decodes only physical address bits 17:0, so the memory repeats over the
whole address space, with no PMA table and nothing else.  The author's binaries rely
on it: ``load_store.bin`` stores to ``0xFFFC0000[r1]`` with an indexed form whose
displacement bit 18 the assembler of the time dropped, so the canonical decode
addresses ``0xFFF80000 + r1`` — outside the specification's memory map (a double
fault), but the same bench location as ``0xFFFC0000 + r1``.

How it is modelled, so that both engines see the aliasing exactly:

* the memory is one RAM region at its *home* addresses 0xFFFC0000–0xFFFFFFFF (where
  the author's images are linked, and where the reset address 0xFFFD0000 lies);
* every thread access folds its physical address onto the home copy
  (:func:`fold`, applied by :class:`~tessera_phoenix.view.ThreadView` after
  translation), so instruction fetches, loads and stores through any alias reach the
  same bytes of the same region: the decode caches index instructions by that folded
  physical address, and a store through one alias to code fetched through another
  invalidates it like any self-modifying store;
* the rest of the physical space, 0–0xFFFBFFFF, is an :class:`Alias` region onto the
  same memory, for everyone who addresses physical memory directly (page-table walks,
  debuggers, ``machine.space.read``).  It is never a source of cached code.
"""

from __future__ import annotations

from typing import Any

from tessera.memory import Region

#: The bench memory: 256 KiB, decoded by physical address bits 17:0.
SIZE = 0x4_0000
MASK = SIZE - 1
#: Where the memory is mapped itself: the top 256 KiB (scratchpad and boot ROM addresses).
HOME = 0xFFFC_0000
MODES = ("spec", "testbench")


def fold(pa: int) -> int:
    """The home address of physical address ``pa`` (``HOME | pa & 0x3FFFF``)."""
    return HOME | (pa & MASK)


class Alias(Region):
    """A window onto the bench memory: byte ``a`` of the window is the memory's ``a & 0x3FFFF``.

    Accesses go straight to the memory region (so a write invalidates decoded code
    there); one that runs past the end of the memory wraps to its start, as the
    bench's address decoding does.
    """

    kind = "alias"
    cacheable = False  # threads fetch through the folded home address, never through here

    def __init__(self, name: str, start: int, size: int, memory: Any) -> None:
        self.memory = memory
        super().__init__(name, start, size, perms="rwx")

    def _pieces(self, offset: int, n: int) -> list[tuple[int, int]]:
        """``(memory offset, length)`` pieces of ``n`` bytes from window offset ``offset``."""
        out = []
        at = (self.start + offset) & MASK
        while n > 0:
            take = min(n, SIZE - at)
            out.append((at, take))
            n -= take
            at = 0
        return out

    def read(self, offset: int, size: int) -> int:
        pieces = self._pieces(offset, size)
        if len(pieces) == 1:
            return self.memory.read(pieces[0][0], size)
        return int.from_bytes(self.read_bytes(offset, size), self.memory.endian)

    def write(self, offset: int, size: int, value: int) -> None:
        pieces = self._pieces(offset, size)
        if len(pieces) == 1:
            self.memory.write(pieces[0][0], size, value)
            return
        mask = (1 << (8 * size)) - 1
        self.write_bytes(offset, (value & mask).to_bytes(size, self.memory.endian))

    def fetch(self, offset: int, size: int) -> int:
        return self.read(offset, size)

    def read_bytes(self, offset: int, n: int) -> bytes:
        return b"".join(self.memory.read_bytes(at, take) for at, take in self._pieces(offset, n))

    def write_bytes(self, offset: int, data: bytes) -> None:
        self._put(offset, data, self.memory.write_bytes)

    def poke(self, offset: int, data: bytes) -> None:
        self._put(offset, data, self.memory.poke)

    def _put(self, offset: int, data: bytes, put: Any) -> None:
        done = 0
        for at, take in self._pieces(offset, len(data)):
            put(at, data[done:done + take])
            done += take

    def describe(self) -> dict[str, Any]:
        out = super().describe()
        out["alias_of"] = self.memory.name
        return out


class FoldedReads:
    """Physical reads of the MMU's page-table walks, folded onto the bench memory."""

    def __init__(self, space: Any) -> None:
        self.space = space

    def read(self, pa: int, size: int) -> int:
        home = fold(pa)
        if home + size <= HOME + SIZE:
            return self.space.read(home, size)
        first = HOME + SIZE - home
        low = self.space.read(home, first)
        return low | (self.space.read(HOME, size - first) << (8 * first))


def build_memory(space: Any) -> Any:
    """Map the bench memory at :data:`HOME` and its alias below it; return the memory region."""
    memory = space.add_ram("testbench", HOME, SIZE, perms="rwx")
    space.map(Alias("testbench.alias", 0, HOME, memory))
    return memory
