"""Patching an initialised global of an ELF image through its symbol table.

The compiled RV32 workload ships one prebuilt ELF (``data/sum-rv32im.elf``) whose
iteration count is the global ``iterations``.  Rather than rebuilding per size,
the bench looks the symbol up in ``.symtab``, finds the loadable segment whose
file bytes hold its address, and rewrites those bytes in a copy of the image.  The
loader then sees an ordinary ELF, so the patched program is exactly what
``tessera run`` would load.
"""

from __future__ import annotations

import io
from typing import Literal

from tessera.bench.model import BenchFailure


def symbol_location(image: bytes, name: str) -> tuple[int, int, Literal["little", "big"]]:
    """``(file offset, size, byte order)`` of the initialised object ``name`` in ``image``."""
    from elftools.elf.elffile import ELFFile
    from elftools.elf.sections import SymbolTableSection

    elf = ELFFile(io.BytesIO(image))
    symtab = elf.get_section_by_name(".symtab")
    symbols = symtab.get_symbol_by_name(name) if isinstance(symtab, SymbolTableSection) else None
    if not symbols:
        raise BenchFailure(f"the ELF has no symbol {name!r} (was it stripped?)")
    address, size = symbols[0]["st_value"], symbols[0]["st_size"]
    for segment in elf.iter_segments():
        header = segment.header
        start = header["p_vaddr"]
        if header["p_type"] == "PT_LOAD" and start <= address and address + size <= start + header["p_filesz"]:
            order: Literal["little", "big"] = "little" if elf.little_endian else "big"
            return header["p_offset"] + address - start, size, order
    raise BenchFailure(f"symbol {name!r} at {address:#x} is not in the file bytes of a loadable segment")


def patch_symbol(image: bytes, name: str, value: int) -> bytes:
    """A copy of ``image`` with the object ``name`` set to ``value`` (its size, its byte order)."""
    offset, size, order = symbol_location(image, name)
    if not 0 <= value < 1 << (8 * size):
        raise BenchFailure(f"{value} does not fit the {size}-byte symbol {name!r}")
    return image[:offset] + value.to_bytes(size, order) + image[offset + size:]
