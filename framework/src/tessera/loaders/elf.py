"""ELF loader (pyelftools): loadable segments, entry point, symbols.

The ELF's machine, class and byte order are checked against the architecture, or
used to choose the architecture when the user gave none.  Every malformation —
wrong magic, truncated headers or segments, segments outside memory or over the
memory cap — becomes a one-line :class:`~tessera.errors.LoadError`.
"""

from __future__ import annotations

import io
from typing import Any

from tessera.errors import ConfigError, LoadError
from tessera.loaders.common import LoadedProgram, place, read_file

ELF_MAGIC = b"\x7fELF"


def _open(data: bytes, path: str) -> Any:
    from elftools.elf.elffile import ELFFile

    if not data.startswith(ELF_MAGIC):
        raise LoadError(f"{path} is not an ELF file (bad magic)")
    if len(data) < 52:
        raise LoadError(f"{path} is truncated: {len(data)} bytes is shorter than an ELF header")
    try:
        elf = ELFFile(io.BytesIO(data))
        elf.header  # noqa: B018 - force parsing
        return elf
    except Exception as exc:  # noqa: BLE001 - pyelftools raises many kinds
        raise LoadError(f"{path} is a malformed ELF file: {_why(exc)}") from None


def _why(exc: Exception) -> str:
    text = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
    return text[:160]


def elf_identity(data: bytes, path: str) -> tuple[int, int, str]:
    """``(e_machine, class bits, endian)`` of an ELF image."""
    elf = _open(data, path)
    try:
        machine = elf.header["e_machine"]
        machine_no = machine if isinstance(machine, int) else _machine_number(elf)
    except Exception as exc:  # noqa: BLE001
        raise LoadError(f"{path} is a malformed ELF file: {_why(exc)}") from None
    return machine_no, elf.elfclass, "little" if elf.little_endian else "big"


def _machine_number(elf: Any) -> int:
    """pyelftools gives known machines as names; recover the number from the raw header."""
    raw = elf.stream
    raw.seek(18)
    b = raw.read(2)
    return int.from_bytes(b, "little" if elf.little_endian else "big")


def choose_architecture(host: Any, data: bytes, path: str) -> Any:
    """The installed architecture whose ELF machine/class/endianness match the file."""
    machine_no, bits, endian = elf_identity(data, path)
    matches = [a for a, _ in host.architectures().values()
               if a.elf_machine == machine_no and (a.elf_class in (None, bits)) and a.endian == endian]
    if not matches:
        raise LoadError(f"{path}: no installed architecture runs ELF machine {machine_no:#x} "
                        f"({bits}-bit, {endian}-endian); install its plugin or pass --arch")
    if len(matches) > 1:
        names = ", ".join(sorted(a.name for a in matches))
        raise ConfigError(f"{path}: several architectures run this ELF ({names}); pass --arch")
    return matches[0]


def load_elf(machine: Any, path: str, data: bytes | None = None, *, entry: int | None = None,
             auto_map: bool = False) -> LoadedProgram:
    """Load an ELF executable into ``machine`` and point its CPUs at the entry."""
    if data is None:
        data = read_file(path, machine.budget.cap)
    arch = machine.arch
    machine_no, bits, endian = elf_identity(data, path)
    if arch.elf_machine is not None and machine_no != arch.elf_machine:
        raise LoadError(f"{path} is for ELF machine {machine_no:#x}, not {arch.name} "
                        f"(machine {arch.elf_machine:#x})")
    if arch.elf_class is not None and bits != arch.elf_class:
        raise LoadError(f"{path} is a {bits}-bit ELF; {arch.name} takes {arch.elf_class}-bit ELFs")
    if endian != arch.endian:
        raise LoadError(f"{path} is {endian}-endian; {arch.name} is {arch.endian}-endian")
    elf = _open(data, path)
    loaded = LoadedProgram(path=path, format="elf", entry=0)
    try:
        segments = [elf.get_segment(i).header for i in range(elf.num_segments())]
        e_entry = elf.header["e_entry"]
    except Exception as exc:  # noqa: BLE001
        raise LoadError(f"{path} is a malformed ELF file: {_why(exc)}") from None
    loads = [s for s in segments if s["p_type"] == "PT_LOAD" and s["p_memsz"] > 0]
    if not loads:
        raise LoadError(f"{path} has no loadable segments")
    for seg in loads:
        off, filesz, memsz = seg["p_offset"], seg["p_filesz"], seg["p_memsz"]
        addr = seg["p_vaddr"]
        what = f"segment at {addr:#x}"
        if filesz > memsz:
            raise LoadError(f"{path}: {what} has file size {filesz:#x} > memory size {memsz:#x}")
        if off + filesz > len(data):
            raise LoadError(f"{path} is truncated: {what} needs bytes up to {off + filesz:#x}, "
                            f"file has {len(data):#x}")
        if memsz > machine.budget.cap:
            raise LoadError(f"{path}: {what} claims {memsz:#x} bytes, more than the "
                            f"{machine.budget.cap:#x}-byte memory cap")
        place(machine, addr, data[off:off + filesz], memsz, what=f"{path}: {what}", auto_map=auto_map)
        loaded.segments.append((addr, memsz))
    loaded.symbols = _symbols(elf)
    machine.symbols.update(loaded.symbols)
    loaded.entry = e_entry if entry is None else entry
    machine.set_entry(loaded.entry)
    return loaded


def _symbols(elf: Any) -> dict[str, int]:
    out: dict[str, int] = {}
    try:
        symtab = elf.get_section_by_name(".symtab")
        if symtab is None or not hasattr(symtab, "iter_symbols"):
            return out
        for sym in symtab.iter_symbols():
            if sym.name and sym["st_info"]["type"] in ("STT_FUNC", "STT_OBJECT", "STT_NOTYPE"):
                if sym["st_shndx"] != "SHN_UNDEF":
                    out.setdefault(sym.name, sym["st_value"])
    except Exception:  # noqa: BLE001 - a damaged symbol table only loses symbols
        return out
    return out
