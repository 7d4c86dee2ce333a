"""Address spaces: a sorted set of regions, a memory cap, and the code caches to invalidate.

The per-access path is short on purpose: the last region hit is remembered, so a
program working inside one region pays one range check and one method call per
access.  Unmapped addresses, accesses that straddle regions and permission
violations raise :class:`~tessera.errors.MemoryFault` with the address.

A space keeps the caches that hold what was decoded from its bytes, because a write
to code must reach them; what such a cache holds is the engine's business
(:class:`tessera.engine.decodecache.DecodeCache`).  Memory only needs the
:class:`CodeCache` protocol, so it sits below the engine in the core's layer order.

A space also describes its :class:`RamWindow`: the one region of plain RAM whose
bytes the fast engine's translated blocks may read and write directly, skipping
these methods (:mod:`tessera.engine.memops`).
"""

from __future__ import annotations

import bisect
import struct
from collections.abc import Callable, Iterable
from typing import Any, Protocol

from tessera.errors import ConfigError, MemoryFault
from tessera.memory.regions import CODE_PAGE, CODE_PAGE_BITS, MMIO, RAM, ROM, Region, Watched
from tessera.types import Endian

#: Default cap on the bytes of RAM and ROM one machine may allocate.
DEFAULT_MEMORY_CAP = 1 << 30


class CodeCache(Protocol):
    """What an address space asks of a cache of things decoded from its bytes."""

    def invalidate(self, start: int, end: int) -> set[int]:
        """Drop what overlaps ``[start, end)``; return the code pages still holding entries."""

    def clear(self) -> None:
        """Drop everything."""


class MemoryBudget:
    """Bytes of RAM/ROM a machine may allocate across all its address spaces."""

    def __init__(self, cap: int = DEFAULT_MEMORY_CAP) -> None:
        if cap <= 0:
            raise ConfigError("the memory cap must be positive")
        self.cap = cap
        self.used = 0

    def check(self, size: int, what: str) -> None:
        if self.used + size > self.cap:
            raise ConfigError(
                f"{what} needs {size:#x} bytes but only {self.cap - self.used:#x} of the "
                f"{self.cap:#x}-byte memory cap remain (raise it with --memory-cap)")

    def charge(self, size: int, what: str) -> None:
        self.check(size, what)
        self.used += size


def _never(offset: int, size: int) -> None:  # pragma: no cover - an empty window matches nothing
    raise AssertionError("an empty RAM window was written")


def _unjournalled(*_args: Any) -> Any:  # pragma: no cover - the journal path is closed without one
    raise AssertionError("a RAM window without a journal was journalled")


class RamWindow:
    """The one RAM region of a space that translated blocks may access directly.

    Blocks of the fast engine turn a load of ``N`` bytes at ``a`` into "if
    ``0 <= a - start <= last<N>``: unpack ``data`` at ``a - start``, else call the
    space" (:mod:`tessera.engine.memops`); a store also runs the self-modifying-code
    test :meth:`RAM.write <tessera.memory.regions.RAM.write>` runs (``code``, the
    region's set of pages holding decoded code, and ``written``, its invalidation).
    So the window holds only RAM whose accesses do nothing but that: a readable and
    writable :class:`~tessera.memory.regions.RAM` of the exact class, no access
    method replaced on the instance, and either no watch on it or one *journal*
    watch covering all of it (:class:`~tessera.memory.watch.Watch` with
    ``journal=``).  Everything else — other regions, ROM, devices, memory with a
    callback watch, more than one watch, or a journal covering only part of it,
    unmapped addresses, accesses that cross the window's end — falls to the space's
    own methods, so faults, devices and watches behave exactly as without a window.

    A journalled window has two sets of limits: ``last<N>`` (and ``span``, for other
    sizes) of the plain path are negative and ``jlast<N>`` (``jspan``) hold the
    region's; without a journal it is the other way round.  A block tests the plain
    limits first and the journal's only when that fails, so an unjournalled access
    costs what it did before journals existed; a journalled one calls ``jr<N>`` or
    ``jw<N>`` (``jread``/``jwrite`` for other sizes), which make the access and
    append the tuple the watch records to the journal (``log``, its ``append``).

    A space owns one window for its life and changes it *in place* whenever its
    regions change (:meth:`AddressSpace.refresh_window`): a block reads the fields
    at each access, so a watch set while a block runs applies to its very next
    access.  An empty window (``region is None``) matches no address: every limit
    is negative.  The ``u<N>``/``p<N>`` members are ``struct`` unpackers
    and packers of the space's byte order, so a translation shared by machines of
    different byte orders is still right for each.
    """

    __slots__ = ("region", "start", "end", "size", "data", "endian", "code", "written",
                 "last1", "last2", "last4", "last8", "span", "journal", "log",
                 "jlast1", "jlast2", "jlast4", "jlast8", "jspan", "jr1", "jr2", "jr4", "jr8",
                 "jw1", "jw2", "jw4", "jw8", "u2", "u4", "u8", "p2", "p4", "p8")

    def __init__(self, endian: Endian = "little") -> None:
        self.endian = endian
        order = "<" if endian == "little" else ">"
        for n, code in ((2, "H"), (4, "I"), (8, "Q")):
            packer = struct.Struct(order + code)
            setattr(self, f"u{n}", packer.unpack_from)
            setattr(self, f"p{n}", packer.pack_into)
        self.close()

    def close(self) -> None:
        """Match no address."""
        self.region: RAM | None = None
        self.start = self.end = self.size = 0
        self.data: Any = b""
        self.code: set[int] | frozenset[int] = frozenset()
        self.written: Callable[[int, int], None] = _never
        self.journal: list[Any] | None = None
        self.log: Callable[[Any], None] = _unjournalled
        self.last1 = self.last2 = self.last4 = self.last8 = -1
        self.jlast1 = self.jlast2 = self.jlast4 = self.jlast8 = -1
        self.span = self.jspan = 0
        self.jr1 = self.jr2 = self.jr4 = self.jr8 = self.jw1 = self.jw2 = self.jw4 = self.jw8 = _unjournalled

    def open(self, region: RAM, journal: list[Any] | None = None) -> None:
        """Cover ``region`` (a plain, readable and writable RAM of this byte order),
        journalling every access into ``journal`` when given."""
        self.region = region
        self.start, self.end, self.size = region.start, region.end, region.size
        self.data = region.data
        self.code = region.code_pages
        self.written = region._code_written
        limits = tuple(region.size - n for n in (1, 2, 4, 8))
        self.journal = journal
        if journal is None:
            self.log = _unjournalled
            self.last1, self.last2, self.last4, self.last8 = limits
            self.jlast1 = self.jlast2 = self.jlast4 = self.jlast8 = -1
            self.span, self.jspan = region.size, 0
            self.jr1 = self.jr2 = self.jr4 = self.jr8 = self.jw1 = self.jw2 = self.jw4 = self.jw8 = _unjournalled
        else:
            self.log = journal.append
            self.last1 = self.last2 = self.last4 = self.last8 = -1
            self.jlast1, self.jlast2, self.jlast4, self.jlast8 = limits
            self.span, self.jspan = 0, region.size
            for n in (1, 2, 4, 8):
                read, write = self._journalled(n)
                setattr(self, f"jr{n}", read)
                setattr(self, f"jw{n}", write)

    def _journalled(self, n: int) -> tuple[Callable[[int], int], Callable[[int, int], None]]:
        """``jr<n>(offset)`` and ``jw<n>(offset, value)``: an ``n``-byte load or store inside the
        journalled window and its journal entry — what :meth:`jread` and :meth:`jwrite` do, with
        everything they look up bound (one call per access)."""
        data, start, code, written, log = self.data, self.start, self.code, self.written, self.log
        mask, last = (1 << (8 * n)) - 1, n - 1
        unpack = getattr(self, f"u{n}", None)
        pack = getattr(self, f"p{n}", None)

        if n == 1:
            def read(offset: int) -> int:
                value = data[offset]
                log((0, start + offset, 1, value))
                return value

            def write(offset: int, value: int) -> None:
                value &= 0xFF
                data[offset] = value
                if code and offset >> CODE_PAGE_BITS in code:
                    written(offset, 1)
                log((1, start + offset, 1, value))
        else:
            def read(offset: int) -> int:
                value = unpack(data, offset)[0]  # type: ignore[misc]
                log((0, start + offset, n, value))
                return value

            def write(offset: int, value: int) -> None:
                value &= mask
                pack(data, offset, value)  # type: ignore[misc]
                if code and (offset >> CODE_PAGE_BITS in code or (offset + last) >> CODE_PAGE_BITS in code):
                    written(offset, n)
                log((1, start + offset, n, value))
        return read, write

    def jread(self, offset: int, size: int) -> int:
        """A load of any size at ``offset`` inside a journalled window: :meth:`RAM.read
        <tessera.memory.regions.RAM.read>`, then the journal entry the watch makes."""
        value = int.from_bytes(self.data[offset:offset + size], self.endian)
        self.log((0, self.start + offset, size, value))
        return value

    def jwrite(self, offset: int, size: int, value: int) -> None:
        """A store of any size at ``offset`` inside a journalled window: :meth:`RAM.write
        <tessera.memory.regions.RAM.write>` (with its code-page test), then the journal entry."""
        value &= (1 << (size << 3)) - 1
        self.data[offset:offset + size] = value.to_bytes(size, self.endian)
        code = self.code
        if code and (offset >> CODE_PAGE_BITS in code or (offset + size - 1) >> CODE_PAGE_BITS in code
                     or size > CODE_PAGE):
            self.written(offset, size)
        self.log((1, self.start + offset, size, value))

    def covers(self, address: int, size: int) -> bool:
        """Would a block access ``size`` bytes at ``address`` directly (journalled or not)?"""
        return 0 <= address - self.start <= self.size - size

    def __repr__(self) -> str:
        if self.region is None:
            return "<RamWindow empty>"
        journal = " journalled" if self.journal is not None else ""
        return f"<RamWindow {self.region.name!r} [{self.start:#x}, {self.end:#x}){journal}>"


def direct_ram(region: Region) -> bool:
    """May blocks access ``region`` directly (see :class:`RamWindow`)?"""
    if not (isinstance(region, RAM) and region.readable and region.writable):
        return False
    cls = type(region)
    if cls.read is not RAM.read or cls.write is not RAM.write or cls._code_written is not RAM._code_written:
        return False
    # an instance attribute replacing a method: check mode's memory tap journals writes that way
    return not {"read", "write", "_code_written"} & region.__dict__.keys()


def window_target(region: Region) -> tuple[RAM, list[Any] | None] | None:
    """``(RAM, journal)`` if blocks may access mapped ``region`` directly, else ``None``.

    A plain RAM (:func:`direct_ram`) has no journal; a :class:`Watched` one qualifies
    when its only watch is a journal covering all of it (:attr:`Watched.journal`) and
    nothing replaced the wrapper's methods (check mode's memory tap refuses watched
    memory that way).
    """
    if type(region) is Watched:
        if region.journal is None or {"read", "write"} & region.__dict__.keys():
            return None
        return (region.inner, region.journal) if direct_ram(region.inner) else None  # type: ignore[return-value]
    return (region, None) if direct_ram(region) else None  # type: ignore[return-value]


class AddressSpace:
    """Regions reachable through one set of addresses (``address_bits`` wide)."""

    def __init__(self, name: str = "main", *, endian: Endian = "little", address_bits: int = 32,
                 budget: MemoryBudget | None = None) -> None:
        self.name = name
        self.endian = endian
        self.address_bits = address_bits
        self.limit = 1 << address_bits
        self.budget = budget or MemoryBudget()
        self.regions: list[Region] = []  # sorted by start; the mapped objects (maybe Watched)
        self._base: list[Region] = []  # the same regions without watch wrappers
        self._starts: list[int] = []
        self._last: Region | None = None
        self.current_agent: Any = None
        self._caches: dict[Any, CodeCache] = {}
        #: the RAM translated blocks access directly (changed in place, never replaced)
        self.window = RamWindow(endian)

    # ------------------------------------------------------------------ mapping

    def map(self, region: Region) -> Region:
        """Add a region; overlap, addresses beyond the space or the cap → ConfigError."""
        if region.end > self.limit:
            raise ConfigError(f"region {region.name!r} [{region.start:#x}, {region.end:#x}) "
                              f"lies outside the {self.address_bits}-bit address space")
        for other in self._base:
            if region.start < other.end and other.start < region.end:
                raise ConfigError(f"region {region.name!r} overlaps {other.name!r}")
            if other.name == region.name:
                raise ConfigError(f"region name {region.name!r} is already mapped")
        if isinstance(region, RAM):
            self.budget.charge(region.size, f"region {region.name!r}")
        region.space = self
        self._base.append(region)
        self._base.sort(key=lambda r: r.start)
        self._rebuild()
        return region

    def add_ram(self, name: str, start: int, size: int, perms: str = "rwx",
                data: bytes | None = None) -> RAM:
        self.budget.check(size, f"region {name!r}")
        return self.map(RAM(name, start, size, perms, self.endian, data))  # type: ignore[return-value]

    def add_rom(self, name: str, start: int, size: int, data: bytes | None = None,
                perms: str = "rx") -> ROM:
        self.budget.check(size, f"region {name!r}")
        return self.map(ROM(name, start, size, perms, self.endian, data))  # type: ignore[return-value]

    def add_mmio(self, name: str, start: int, size: int, device: Any, perms: str = "rw") -> MMIO:
        return self.map(MMIO(name, start, size, device, perms))  # type: ignore[return-value]

    def apply_watches(self, watches: list[Any]) -> None:
        """Wrap exactly the regions that some watch overlaps (replacing earlier watches)."""
        self._watches = list(watches)
        self._rebuild()

    def _rebuild(self) -> None:
        watches = getattr(self, "_watches", [])
        mapped = []
        for r in self._base:
            mine = [w for w in watches if w.start < r.end and r.start < w.end]
            mapped.append(Watched(r, mine) if mine else r)
        self.regions = mapped
        self._starts = [r.start for r in mapped]
        self._last = mapped[0] if mapped else None
        self.refresh_window()

    def refresh_window(self) -> None:
        """Choose the :class:`RamWindow` again: the largest region blocks may access directly
        (plain RAM, or RAM whose only watch is a journal covering it: :func:`window_target`).

        Mapping a region and applying watches call this; so must anything that
        replaces a region's access methods on the instance (check mode's memory tap,
        :class:`tessera.engine.memtap.MemoryTap`), both when it installs and removes them.
        Ties go to the lowest address.
        """
        best: tuple[RAM, list[Any] | None] | None = None
        for r in self.regions:
            got = window_target(r)
            if got is not None and got[0].endian == self.endian and (best is None or r.size > best[0].size):
                best = got
        if best is None:
            self.window.close()
        else:
            self.window.open(*best)

    def region_at(self, address: int) -> Region | None:
        i = bisect.bisect_right(self._starts, address) - 1
        if i >= 0 and address < self.regions[i].end:
            return self.regions[i]
        return None

    def region_named(self, name: str) -> Region:
        for r in self._base:
            if r.name == name:
                return r
        raise ConfigError(f"no region named {name!r} in address space {self.name!r}")

    def _find(self, address: int, size: int, access: str) -> Region:
        r = self.region_at(address)
        if r is None:
            raise MemoryFault(f"{access} of unmapped address", address=address, access=access, size=size)
        if address + size > r.end:
            raise MemoryFault(f"{access} of {size} bytes crosses the end of region {r.name!r}",
                              address=address, access=access, size=size)
        self._last = r
        return r

    # ------------------------------------------------------------------ access

    def read(self, address: int, size: int) -> int:
        """Read an unsigned ``size``-byte value in the space's byte order."""
        r = self._last
        if r is None or not (r.start <= address and address + size <= r.end):
            r = self._find(address, size, "read")
        return r.read(address - r.start, size)

    def write(self, address: int, size: int, value: int) -> None:
        """Write the low ``size`` bytes of ``value``."""
        r = self._last
        if r is None or not (r.start <= address and address + size <= r.end):
            r = self._find(address, size, "write")
        r.write(address - r.start, size, value)

    def fetch(self, address: int, size: int) -> tuple[int, Region]:
        """Read an instruction word (execute permission); returns the word and its region."""
        r = self.region_at(address)
        if r is None or address + size > r.end:
            raise MemoryFault("instruction fetch from unmapped address", address=address,
                              access="fetch", size=size)
        if not r.executable:
            raise MemoryFault(f"instruction fetch from non-executable region {r.name!r}",
                              address=address, access="fetch", size=size)
        return r.fetch(address - r.start, size), r

    def read_bytes(self, address: int, n: int) -> bytes:
        """Bulk read (may span adjacent regions)."""
        out = bytearray()
        while n > 0:
            r = self._find(address, 1, "read")
            take = min(n, r.end - address)
            out += r.read_bytes(address - r.start, take)
            address += take
            n -= take
        return bytes(out)

    def write_bytes(self, address: int, data: bytes, *, force: bool = False) -> None:
        """Bulk write; ``force`` ignores permissions (loaders writing ROM)."""
        view = memoryview(bytes(data))
        while view.nbytes:
            r = self._find(address, 1, "write")
            take = min(view.nbytes, r.end - address)
            chunk = bytes(view[:take])
            if force:
                r.poke(address - r.start, chunk)
            else:
                r.write_bytes(address - r.start, chunk)
            address += take
            view = view[take:]

    def covers(self, start: int, size: int) -> bool:
        """Is every byte of ``[start, start + size)`` mapped to RAM/ROM?"""
        addr, end = start, start + size
        while addr < end:
            r = self.region_at(addr)
            if r is None or not isinstance(getattr(r, "inner", r), RAM):
                return False
            addr = r.end
        return True

    # ------------------------------------------------------------------ code caches

    def decode_cache(self, key: Any, make: Callable[[], Any] | None = None) -> Any:
        """The code cache kept under ``key`` (an architecture's name), made by ``make()`` if new.

        The engine passes its cache class as ``make`` when it starts filling a cache;
        without ``make`` an unknown ``key`` is a ``KeyError`` (nothing ran from here yet).
        """
        cache = self._caches.get(key)
        if cache is None:
            if make is None:
                raise KeyError(f"no decode cache {key!r} in address space {self.name!r}")
            cache = self._caches[key] = make()
        return cache

    def view_cache(self, view: str, key: Any, make: Callable[[], Any]) -> Any:
        """The code cache of translated view ``view`` for ``key``, made by ``make()`` if new.

        A view that translates addresses (:class:`tessera.memory.view.AgentSpace`) caches
        instructions by *virtual* address, but a store to this space's bytes must still
        drop them; so the view's caches live here, next to this space's own, and index
        their entries by physical address.
        """
        return self.decode_cache((key, view), make)

    def clear_view_caches(self, view: str) -> None:
        """Empty every code cache of view ``view``: its translation changed.

        The caches stay (the engine holds them); only their entries and blocks go.
        """
        for key, cache in self._caches.items():
            if isinstance(key, tuple) and len(key) == 2 and key[1] == view:
                cache.clear()

    def mark_code(self, region: Region, address: int, size: int) -> None:
        first = (address - region.start) >> CODE_PAGE_BITS
        last = (address + size - 1 - region.start) >> CODE_PAGE_BITS
        region.code_pages.update(range(first, last + 1))

    def invalidate_code(self, start: int, end: int) -> set[int]:
        """Drop decoded entries overlapping ``[start, end)``; return pages still holding code."""
        live: set[int] = set()
        for cache in self._caches.values():
            live |= cache.invalidate(start, end)
        return live

    def flush_caches(self) -> None:
        for cache in self._caches.values():
            cache.clear()
        for r in self._base:
            r.code_pages.clear()

    def forget_code(self, addresses: Iterable[int]) -> None:
        """Drop the decoded instructions at these addresses (and the blocks holding them),
        as a write to their bytes would: they are decoded again when next run."""
        wanted = tuple(addresses)
        for cache in self._caches.values():
            extents = getattr(cache, "extent", None)  # DecodeCache: entry -> the bytes it was decoded from
            if not isinstance(extents, dict):
                cache.clear()  # a cache that cannot say where an entry's bytes are: drop it all
                continue
            for address in wanted:
                extent = extents.get(address)
                if extent is not None:
                    cache.invalidate(*extent)

    def __getstate__(self) -> dict[str, Any]:
        state = dict(self.__dict__)
        state["_caches"] = {}
        state["_watches"] = []
        state["current_agent"] = None
        state["regions"] = list(self._base)
        state["_last"] = None
        state.pop("window", None)  # rebuilt from the regions (its packers do not pickle)
        return state

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)
        self.window = RamWindow(self.endian)
        self._rebuild()

    def describe(self) -> list[dict[str, Any]]:
        return [r.describe() for r in self._base]
