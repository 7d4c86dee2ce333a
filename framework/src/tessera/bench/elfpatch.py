"""Patching an initialised global of an ELF image through its symbol table.

A workload that ships a prebuilt ELF whose size is an initialised global (e.g. a
loop's ``iterations``) sizes it without rebuilding: the bench looks the symbol up in ``.symtab``, finds the loadable segment whose file
bytes hold its address, and rewrites those bytes in a copy of the image.  The
loader then sees an ordinary ELF, so the patched program is exactly what
``tessera run`` would load.
"""

from __future__ import annotations

from typing import Literal

from tessera.bench.model import BenchFailure
from tessera.loaders.elffile import PT_LOAD, ElfFile, ElfFormatError


def symbol_location(image: bytes, name: str) -> tuple[int, int, Literal["little", "big"]]:
    """``(file offset, size, byte order)`` of the initialised object ``name`` in ``image``."""
    try:
        elf = ElfFile(image)
        symbols = [sym for sym in elf.symbols() if sym.name == name]
        segments = elf.segments
    except ElfFormatError as exc:
        raise BenchFailure(f"the workload ELF is malformed: {exc}") from None
    if not symbols:
        raise BenchFailure(f"the ELF has no symbol {name!r} (was it stripped?)")
    address, size = symbols[0].value, symbols[0].size
    for segment in segments:
        start = segment.p_vaddr
        if segment.p_type == PT_LOAD and start <= address and address + size <= start + segment.p_filesz:
            order: Literal["little", "big"] = "little" if elf.header.endian == "little" else "big"
            return segment.p_offset + address - start, size, order
    raise BenchFailure(f"symbol {name!r} at {address:#x} is not in the file bytes of a loadable segment")


def patch_symbol(image: bytes, name: str, value: int) -> bytes:
    """A copy of ``image`` with the object ``name`` set to ``value`` (its size, its byte order)."""
    offset, size, order = symbol_location(image, name)
    if not 0 <= value < 1 << (8 * size):
        raise BenchFailure(f"{value} does not fit the {size}-byte symbol {name!r}")
    return image[:offset] + value.to_bytes(size, order) + image[offset + size:]


__all__ = ["patch_symbol", "symbol_location"]
