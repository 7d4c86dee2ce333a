"""The few facts a loader needs from a built kernel ELF: entry point and placement symbols.

A core's ``.ldm_data`` (initialised globals, constants, stack-local data) is linked
at its private memory (0xFFB00000), which the host cannot write; the vendor's loader
writes those bytes at ``__loader_init_start`` in L1 instead, and the core's start-up
code copies them over before ``main``.  The manifest records both addresses so the
project's loader can do the same.  This is a 32-bit little-endian ELF reader for
exactly that: the header, the section headers and ``.symtab``.
"""

from __future__ import annotations

import struct
from pathlib import Path

from tessera.errors import ConfigError

#: symbols the manifest's [placement] tables report, when the ELF has them
PLACEMENT_SYMBOLS = ("__loader_init_start", "__loader_init_end", "__ldm_data_start", "__ldm_data_end",
                     "__ldm_bss_start", "__ldm_bss_end", "__stack_top", "__runtime_args_start")


def read(path: Path) -> tuple[int, dict[str, int]]:
    """``(entry, {symbol: value})`` of the ELF at ``path`` (only the placement symbols)."""
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise ConfigError(f"cannot read {path}: {exc.strerror or exc}") from None
    if data[:4] != b"\x7fELF" or data[4] != 1 or data[5] != 1:
        raise ConfigError(f"{path} is not a 32-bit little-endian ELF")
    entry, shoff = struct.unpack_from("<II", data, 24)[0], struct.unpack_from("<I", data, 32)[0]
    shentsize, shnum = struct.unpack_from("<HH", data, 46)
    sections = [struct.unpack_from("<IIIIIIIIII", data, shoff + i * shentsize) for i in range(shnum)]
    wanted: dict[str, int] = {}
    for sec in sections:
        if sec[1] != 2:                       # SHT_SYMTAB
            continue
        strtab = sections[sec[6]]             # sh_link
        names = data[strtab[4]:strtab[4] + strtab[5]]
        for off in range(sec[4], sec[4] + sec[5], 16):
            name_off, value = struct.unpack_from("<II", data, off)
            name = names[name_off:names.index(b"\0", name_off)].decode("ascii", "replace")
            if name in PLACEMENT_SYMBOLS:
                wanted[name] = value
    return entry, wanted
