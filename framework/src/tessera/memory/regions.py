"""Regions of an address space: RAM, ROM and MMIO devices.

Regions take *offsets* (the address space subtracts the base).  Permission checks
are not done per access: a region without read or write permission gets methods
that fault, chosen once when it is created, so permitted accesses pay nothing.
Regions remember which of their pages hold decoded code so that a write to code
invalidates the decode caches (self-modifying code, loaders writing code at run time).
A write tests only whether the pages it touched are among them (a set look-up or
two), so data stored next to code pays nothing more; the translated blocks of the
fast engine make the same test inline (:mod:`tessera.engine.memops`).
"""

from __future__ import annotations

import mmap
from typing import Any, Protocol

from tessera.control import ControlSignal
from tessera.errors import ConfigError, HostMemoryError, MemoryFault, TesseraError
from tessera.settings import format_size
from tessera.types import Endian as Endian  # re-exported: plugins may name it from here

#: Granularity of code tracking for decode-cache invalidation.
CODE_PAGE_BITS = 10
#: A write longer than a code page may cover a page its first and last byte miss.
CODE_PAGE = 1 << CODE_PAGE_BITS
_SNAP_CHUNK = 1 << 16
_ZERO_CHUNK = bytes(_SNAP_CHUNK)


def parse_perms(perms: str) -> tuple[bool, bool, bool]:
    bad = set(perms) - set("rwx-")
    if bad:
        raise ConfigError(f"permissions {perms!r}: use a combination of r, w, x")
    return "r" in perms, "w" in perms, "x" in perms


#: RAM at least this big is backed by an anonymous mapping instead of a ``bytearray``.
LAZY_RAM_THRESHOLD = 1 << 20


#: A *private* anonymous mapping: reading a page never written maps the kernel's one
#: zero page, so a snapshot's scan of an untouched 512 MiB RAM stays at a few MiB of
#: RSS (a shared mapping allocates every page it reads: +515 MiB).  Where the flags
#: do not exist (Windows) the default mapping is used.
_PRIVATE: dict[str, int] = ({"flags": mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS}
                            if hasattr(mmap, "MAP_PRIVATE") and hasattr(mmap, "MAP_ANONYMOUS") else {})


def _zeroed(size: int, name: str = "") -> bytearray | mmap.mmap:
    """Zero-filled storage of ``size`` bytes for region ``name``.

    Large regions use a private anonymous ``mmap``: the operating system hands out zero
    pages only when they are first written, so a 512 MiB DRAM costs nothing until used
    (a ``bytearray`` would be zero-filled, i.e. touched, up front).  Both types support
    the slicing and buffer protocol the accessors use.

    A size the host refuses (the kernel's overcommit check says ``ENOMEM``, or the size
    does not fit the host's address width) is the user's setting asking for more than
    this machine has: :class:`HostMemoryError` naming the region, never an internal error.
    """
    try:
        if size >= LAZY_RAM_THRESHOLD:
            return mmap.mmap(-1, size, **_PRIVATE)
        return bytearray(size)
    except (MemoryError, OverflowError, OSError) as exc:
        reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else type(exc).__name__
        what = f"region {name!r}" if name else "a region"
        raise HostMemoryError(f"the host cannot allocate {format_size(size)} ({size:#x} bytes) for {what}: "
                              f"{reason}; lower the setting that sizes it (e.g. --set ram=...) "
                              "or free host memory") from None


class Region:
    """Base class: a named range ``[start, start + size)`` with permissions."""

    kind = "region"
    cacheable = False  # may decoded code from here be cached?

    def __init__(self, name: str, start: int, size: int, perms: str = "rw") -> None:
        if size <= 0:
            raise ConfigError(f"region {name!r}: size must be positive")
        if start < 0:
            raise ConfigError(f"region {name!r}: start must not be negative")
        self.name = name
        self.start = start
        self.size = size
        self.end = start + size
        self.perms = perms
        self.readable, self.writable, self.executable = parse_perms(perms)
        self.code_pages: set[int] = set()
        self.space: Any = None  # set by AddressSpace.map
        self._bind()

    def _bind(self) -> None:
        """Pick the access methods once (faulting ones where permission is missing)."""
        if not self.readable:
            self.read = self._deny_read  # type: ignore[method-assign]
        if not self.writable:
            self.write = self._deny_write  # type: ignore[method-assign]

    def __getstate__(self) -> dict[str, Any]:
        state = dict(self.__dict__)
        for k in ("read", "write"):
            state.pop(k, None)
        state["code_pages"] = set()
        return state

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)
        self._bind()

    def _fault(self, what: str, offset: int, size: int, access: str) -> MemoryFault:
        return MemoryFault(f"{what} {self.kind} {self.name!r}", address=self.start + offset,
                           access=access, size=size)

    def _deny_read(self, offset: int, size: int) -> int:
        raise self._fault("read from unreadable", offset, size, "read")

    def _deny_write(self, offset: int, size: int, value: int) -> None:
        raise self._fault("write to read-only", offset, size, "write")

    def read(self, offset: int, size: int) -> int:  # pragma: no cover - abstract
        raise NotImplementedError

    def write(self, offset: int, size: int, value: int) -> None:  # pragma: no cover
        raise NotImplementedError

    def fetch(self, offset: int, size: int) -> int:  # pragma: no cover - abstract
        """Read an instruction word (the address space has checked execute permission)."""
        raise NotImplementedError

    def read_bytes(self, offset: int, n: int) -> bytes:
        raise self._fault("bulk read from", offset, n, "read")

    def write_bytes(self, offset: int, data: bytes) -> None:
        raise self._fault("bulk write to", offset, len(data), "write")

    def poke(self, offset: int, data: bytes) -> None:
        """Write bytes ignoring permissions (loaders, debuggers)."""
        raise self._fault("bulk write to", offset, len(data), "write")

    def describe(self) -> dict[str, Any]:
        return {"name": self.name, "kind": self.kind, "start": self.start, "size": self.size,
                "perms": self.perms}


class RAM(Region):
    """Byte-addressed storage backed by a ``bytearray``."""

    kind = "ram"
    cacheable = True

    def __init__(self, name: str, start: int, size: int, perms: str = "rwx",
                 endian: Endian = "little", data: bytes | None = None) -> None:
        self.endian = endian
        self.data = _zeroed(size, name)
        super().__init__(name, start, size, perms)
        if data is not None:
            if len(data) > size:
                raise ConfigError(f"region {name!r}: {len(data)} bytes of data for {size} bytes")
            self.data[: len(data)] = data

    def read(self, offset: int, size: int) -> int:
        return int.from_bytes(self.data[offset:offset + size], self.endian)

    def write(self, offset: int, size: int, value: int) -> None:
        self.data[offset:offset + size] = (value & ((1 << (size << 3)) - 1)).to_bytes(size, self.endian)
        code = self.code_pages
        if code and (offset >> CODE_PAGE_BITS in code or (offset + size - 1) >> CODE_PAGE_BITS in code
                     or size > CODE_PAGE):
            self._code_written(offset, size)

    def _code_written(self, offset: int, size: int) -> None:
        """Drop the code decoded from ``[offset, offset + size)``; callers have seen that the
        write touched a page in :attr:`code_pages` (or is longer than a page)."""
        first, last = offset >> CODE_PAGE_BITS, (offset + size - 1) >> CODE_PAGE_BITS
        hit = [p for p in range(first, last + 1) if p in self.code_pages]
        if hit and self.space is not None:
            # exactly the written bytes; a page stays marked while any entry remains in it
            live = self.space.invalidate_code(self.start + offset, self.start + offset + size)
            if not self.start & ((1 << CODE_PAGE_BITS) - 1):  # else pages do not line up: keep them
                base = self.start >> CODE_PAGE_BITS
                self.code_pages.difference_update(p for p in hit if base + p not in live)

    def read_bytes(self, offset: int, n: int) -> bytes:
        if not self.readable:
            raise self._fault("read from unreadable", offset, n, "read")
        return bytes(self.data[offset:offset + n])

    def write_bytes(self, offset: int, data: bytes) -> None:
        if not self.writable:
            raise self._fault("write to read-only", offset, len(data), "write")
        self.poke(offset, data)

    def poke(self, offset: int, data: bytes) -> None:
        size = len(data)
        self.data[offset:offset + size] = data
        code = self.code_pages
        if code and size and (offset >> CODE_PAGE_BITS in code or (offset + size - 1) >> CODE_PAGE_BITS in code
                              or size > CODE_PAGE):
            self._code_written(offset, size)

    def fetch(self, offset: int, size: int) -> int:
        return int.from_bytes(self.data[offset:offset + size], self.endian)

    def __getstate__(self) -> dict[str, Any]:
        # Snapshots keep only the non-zero 64 KiB chunks: a mostly empty 1 GiB RAM stays small.
        state = super().__getstate__()
        data = state.pop("data")
        chunks = {}
        for off in range(0, len(data), _SNAP_CHUNK):
            chunk = data[off:off + _SNAP_CHUNK]  # a bytes copy: comparing it is far faster than a memoryview
            if chunk != _ZERO_CHUNK[: len(chunk)]:
                chunks[off] = bytes(chunk)
        state["_chunks"] = chunks
        return state

    def __setstate__(self, state: dict[str, Any]) -> None:
        chunks = state.pop("_chunks")
        data = _zeroed(state["size"], state.get("name", ""))
        for off, chunk in chunks.items():
            data[off:off + len(chunk)] = chunk
        state["data"] = data
        super().__setstate__(state)


class ROM(RAM):
    """RAM the program cannot write (loaders can, through :meth:`poke`)."""

    kind = "rom"

    def __init__(self, name: str, start: int, size: int, perms: str = "rx",
                 endian: Endian = "little", data: bytes | None = None) -> None:
        if "w" in perms:
            raise ConfigError(f"ROM {name!r} cannot be writable")
        super().__init__(name, start, size, perms, endian, data)


class Device(Protocol):
    """What an MMIO device implements (offsets are relative to the region start)."""

    def read(self, offset: int, size: int) -> int: ...

    def write(self, offset: int, size: int, value: int) -> None: ...


class MMIO(Region):
    """A device window: every access calls the device.  Never cached as code.

    What a device raises on purpose passes through unchanged: a Tessera error (its own
    one-line report) and a control signal — a device *blocks the accessing agent* by
    raising ``sync_object.wait_for(agent, reason)`` before any side effect (a mailbox
    read of an empty FIFO, a store to a full one): the agent parks and its load or
    store runs again when the object wakes it (``space.current_agent`` is the agent).
    Anything else is a device bug, reported as a :class:`MemoryFault` naming the device.
    """

    kind = "mmio"

    def __init__(self, name: str, start: int, size: int, device: Device, perms: str = "rw") -> None:
        self.device = device
        super().__init__(name, start, size, perms)

    def _bind(self) -> None:
        if self.readable:
            self.read = self._device_read  # type: ignore[method-assign]
        if self.writable:
            self.write = self._device_write  # type: ignore[method-assign]
        super()._bind()

    def _device_read(self, offset: int, size: int) -> int:
        try:
            return int(self.device.read(offset, size))
        except (ControlSignal, TesseraError, BrokenPipeError):  # deliberate (see the class doc); a
            raise                                               # closed stdout is the user's
        except Exception as exc:  # a device bug is reported, not propagated
            raise MemoryFault(f"device {self.name!r} read failed: {type(exc).__name__}: {exc}",
                              address=self.start + offset, access="read", size=size) from exc

    def _device_write(self, offset: int, size: int, value: int) -> None:
        try:
            self.device.write(offset, size, value & ((1 << (size << 3)) - 1))
        except (ControlSignal, TesseraError, BrokenPipeError):
            raise
        except Exception as exc:  # a device bug is reported, not propagated
            raise MemoryFault(f"device {self.name!r} write failed: {type(exc).__name__}: {exc}",
                              address=self.start + offset, access="write", size=size) from exc

    def fetch(self, offset: int, size: int) -> int:
        return self.read(offset, size)


class Watched(Region):
    """A region wrapped by memory watches (built by the address space, never by users).

    Callback watches run first (``on_read`` after the access, ``on_write`` before
    it; either may change the value), then journal watches record the access as it
    completed: the value the program receives, or the low ``size`` bytes of the value
    stored.  An access that faults records nothing.  :attr:`journal` is the list of
    the region's only watch when that is a journal covering the whole region: then
    blocks may access the region inline and append to it themselves
    (:class:`tessera.memory.space.RamWindow`).
    """

    def __init__(self, inner: Region, watches: list[Any]) -> None:
        self.inner = inner
        self.watches = watches
        self.kind = inner.kind
        self.cacheable = inner.cacheable
        self.name, self.start, self.size, self.end = inner.name, inner.start, inner.size, inner.end
        self.perms = inner.perms
        self.readable, self.writable, self.executable = inner.readable, inner.writable, inner.executable
        self.code_pages = inner.code_pages
        self.space = inner.space
        self._readers = [w for w in watches if w.on_read is not None]
        self._writers = [w for w in watches if w.on_write is not None]
        self._journals = [w for w in watches if getattr(w, "journal", None) is not None]
        only = watches[0] if len(watches) == 1 else None
        self.journal: list[Any] | None = (
            only.journal if only is not None and getattr(only, "journal", None) is not None
            and only.start <= self.start and self.end <= only.end else None)

    def _bind(self) -> None:  # the wrapper's methods always delegate
        pass

    def read(self, offset: int, size: int) -> int:
        value = self.inner.read(offset, size)
        addr = self.start + offset
        for w in self._readers:
            if w.start < addr + size and addr < w.end:
                new = w.call_read(self.space.current_agent, addr, size, value)
                if new is not None:
                    value = new
        for w in self._journals:
            if w.start < addr + size and addr < w.end:
                w.journal.append((0, addr, size, value))
        return value

    def write(self, offset: int, size: int, value: int) -> None:
        addr = self.start + offset
        for w in self._writers:
            if w.start < addr + size and addr < w.end:
                new = w.call_write(self.space.current_agent, addr, size, value)
                if new is not None:
                    value = new
        self.inner.write(offset, size, value)
        if self._journals:
            value &= (1 << (size << 3)) - 1
            for w in self._journals:
                if w.start < addr + size and addr < w.end:
                    w.journal.append((1, addr, size, value))

    def fetch(self, offset: int, size: int) -> int:
        return self.inner.fetch(offset, size)

    def read_bytes(self, offset: int, n: int) -> bytes:
        return self.inner.read_bytes(offset, n)

    def write_bytes(self, offset: int, data: bytes) -> None:
        self.inner.write_bytes(offset, data)

    def poke(self, offset: int, data: bytes) -> None:
        self.inner.poke(offset, data)
