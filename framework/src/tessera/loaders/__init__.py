"""Loaders: put a program into a machine.  Formats: ELF, raw image, word list, assembly.

:func:`load_program` picks the format from the file (ELF magic), then asks the
plugins' formats (:mod:`tessera.loaders.formats`), then goes by its extension
(``.s``/``.S``/``.asm`` assembly, ``.hex``/``.words`` word list, anything else raw).
"""

from __future__ import annotations

import os
from typing import Any

from tessera.errors import AssemblyError, ConfigError, LoadError
from tessera.loaders.common import LoadedProgram, place, read_file
from tessera.loaders.elf import ELF_MAGIC, choose_architecture, elf_identity, load_elf
from tessera.loaders.formats import ProgramFormat, call_format, claiming, plugin_formats
from tessera.loaders.raw import load_raw, load_words, parse_word_list, parse_words

ASM_EXTENSIONS = (".s", ".S", ".asm")
WORD_EXTENSIONS = (".hex", ".words")
FORMATS = ("auto", "elf", "raw", "words", "asm")


def detect_format(path: str, head: bytes) -> str:
    if head.startswith(ELF_MAGIC):
        return "elf"
    ext = os.path.splitext(path)[1]
    if ext in ASM_EXTENSIONS:
        return "asm"
    if ext in WORD_EXTENSIONS:
        return "words"
    return "raw"


def load_asm(machine: Any, path: str, data: bytes, *, load: int | None = None,
             entry: int | None = None, auto_map: bool = False) -> LoadedProgram:
    from tessera.isa.asm import assemble

    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        raise LoadError(f"{path} is not UTF-8 assembly text") from None
    base = machine.arch.reset_pc if load is None else load
    program = assemble(machine.arch, text, file=path, base=base)
    if not program.segments:
        raise LoadError(f"{path} assembles to no bytes")
    loaded = LoadedProgram(path=path, format="asm", entry=0)
    for address, blob in program.segments:
        place(machine, address, blob, what=f"{path}: section at {address:#x}", auto_map=auto_map)
        loaded.segments.append((address, len(blob)))
    machine.symbols.update(program.symbols)
    loaded.symbols = dict(program.symbols)
    if entry is not None:
        loaded.entry = entry
    elif program.entry is not None:
        loaded.entry = program.entry
    else:
        loaded.entry = base
    machine.set_entry(loaded.entry)
    return loaded


def load_program(machine: Any, path: str, *, fmt: str = "auto", load: int | None = None,
                 entry: int | None = None, auto_map: bool = False,
                 any_elf_machine: bool = False) -> LoadedProgram:
    """Load ``path`` into ``machine`` in the given (or detected) format.

    ``any_elf_machine`` loads an ELF whatever machine its header names (see :func:`load_elf`).
    """
    if fmt not in FORMATS:
        raise LoadError(f"unknown program format {fmt!r} (use one of {', '.join(FORMATS)})")
    bits = machine.space.address_bits
    for option, value in (("--entry", entry), ("--load", load)):
        if value is not None and not 0 <= value < 1 << bits:
            raise ConfigError(f"{option} {value:#x} lies outside the {bits}-bit address space")
    data = read_file(path, machine.budget.cap)
    if fmt == "auto" and not data.startswith(ELF_MAGIC):
        claimed = claiming(machine.host, path, data)
        if claimed is not None:  # a plugin's format (tessera.loaders.formats)
            return call_format(*claimed, "load", machine, path, data)
    if fmt == "auto":
        fmt = detect_format(path, data[:4])
    if fmt == "elf":
        if load is not None:
            raise LoadError("--load applies to raw images and word lists, not ELF files")
        return load_elf(machine, path, data, entry=entry, auto_map=auto_map,
                        any_machine=any_elf_machine)
    if fmt == "asm":
        return load_asm(machine, path, data, load=load, entry=entry, auto_map=auto_map)
    if fmt == "words":
        return load_words(machine, path, data, load=load, entry=entry, auto_map=auto_map)
    return load_raw(machine, path, data, load=load, entry=entry, auto_map=auto_map)


__all__ = ["LoadedProgram", "ProgramFormat", "plugin_formats", "load_program", "load_elf", "load_raw", "load_words", "load_asm",
           "choose_architecture", "elf_identity", "detect_format", "parse_words", "parse_word_list", "read_file",
           "place", "AssemblyError"]
