"""What every loader shares: reading files safely and placing bytes in memory.

A loader never allocates before it has checked: the file's size against the memory
cap, every segment's size against the cap and against the mapped memory.  So a
file that claims a segment of gigabytes is refused in one line without allocating.
"""

from __future__ import annotations

import os
from typing import Any

import attrs

from tessera.errors import ConfigError, LoadError


@attrs.define
class LoadedProgram:
    """What a loader put into a machine."""

    path: str
    format: str
    entry: int
    segments: list[tuple[int, int]] = attrs.field(factory=list)  # (address, size)
    symbols: dict[str, int] = attrs.field(factory=dict)


def read_file(path: str, cap: int) -> bytes:
    """The file's bytes; :class:`LoadError` for a missing/unreadable/oversized file."""
    try:
        size = os.path.getsize(path)
    except OSError as exc:
        raise LoadError(f"cannot open {path}: {exc.strerror or exc}") from None
    if os.path.isdir(path):
        raise LoadError(f"cannot load {path}: it is a directory")
    if size > cap:
        raise LoadError(f"{path} is {size:#x} bytes, larger than the {cap:#x}-byte memory cap")
    try:
        with open(path, "rb") as fh:
            data = _read_at_most(fh, cap + 1)  # a device or FIFO has no size: never read past the cap
    except OSError as exc:
        raise LoadError(f"cannot read {path}: {exc.strerror or exc}") from None
    if len(data) > cap:
        raise LoadError(f"{path} is larger than the {cap:#x}-byte memory cap")
    return data


def _read_at_most(fh: Any, limit: int) -> bytes:
    chunks: list[bytes] = []
    total = 0
    while total < limit:
        chunk = fh.read(min(1 << 20, limit - total))
        if not chunk:
            break
        chunks.append(chunk)
        total += len(chunk)
    return b"".join(chunks)


def place(machine: Any, address: int, data: bytes, memsize: int | None = None, *,
          what: str, auto_map: bool = False, space: Any = None) -> None:
    """Write ``data`` at ``address`` (zero-filled up to ``memsize``) into mapped RAM/ROM.

    With ``auto_map`` an unmapped range gets a fresh RAM region (within the cap).
    ``space``: where (default: the machine's main space; a board whose agents each see
    their own address map passes an agent's ``space``, which must then be mapped there).
    """
    if space is None:
        space = machine.space
    elif auto_map:
        raise LoadError(f"{what}: --auto-map maps RAM in the main address space only")
    size = max(len(data), memsize or 0)
    if size == 0:
        return
    if address < 0 or address + size > space.limit:
        raise LoadError(f"{what} [{address:#x}, {address + size:#x}) lies outside the "
                        f"{space.address_bits}-bit address space")
    if size > machine.budget.cap:
        raise LoadError(f"{what} needs {size:#x} bytes, more than the {machine.budget.cap:#x}-byte "
                        "memory cap")
    fresh = False  # a RAM region just mapped for this range is already all zeros
    if not space.covers(address, size):
        if not auto_map:
            raise LoadError(f"{what} [{address:#x}, {address + size:#x}) lies outside mapped memory "
                            f"({_describe_map(space)})")
        try:
            space.add_ram(f"load@{address:#x}", address, size)
        except ConfigError as exc:
            raise LoadError(f"{what}: {exc.message}") from None
        fresh = True
    if data:
        space.write_bytes(address, data, force=True)
    if size > len(data) and not fresh:
        _zero_fill(space, address + len(data), size - len(data))


def _zero_fill(space: Any, address: int, n: int) -> None:
    """Zero ``n`` bytes in bounded chunks: a large bss must not cost its size again in temporaries."""
    zeros = bytes(min(n, 1 << 20))
    while n > 0:
        take = min(n, len(zeros))
        space.write_bytes(address, zeros if take == len(zeros) else zeros[:take], force=True)
        address += take
        n -= take


def _describe_map(space: Any) -> str:
    parts = [f"{r['name']} {r['start']:#x}-{r['start'] + r['size']:#x}" for r in space.describe()
             if r["kind"] in ("ram", "rom")]
    return "mapped: " + (", ".join(parts) if parts else "nothing")
