"""ELF loader: loadable segments, entry point, symbols.

The file is read by :mod:`tessera.loaders.elffile`, the core's own small, strict ELF
reader (not pyelftools, whose import alone cost a short run tens of milliseconds of
start-up).

The ELF's machine, class and byte order are checked against the architecture, or
used to choose the architecture when the user gave none (:func:`choose_architecture`,
which also reads a RISC-V ELF's build attributes to prefer the base architecture over
an extension architecture the program does not need).  An architecture without an
ELF machine runs no ELF files; ``any_machine`` (``tessera run --any-elf-machine``)
waives the machine check, never the class or byte order.  Every malformation —
wrong magic, truncated headers or segments, segments outside memory or over the
memory cap — becomes a one-line :class:`~tessera.errors.LoadError`.  A damaged
section header or symbol table only loses the symbols: the segments are what runs.

Symbols: mapping symbols (``$x``, ``$d``, ``$xrv32i2p1_m2p0``, Arm's ``$a``/``$t``:
any name starting with ``$``) mark where code and data start for disassemblers; they
are not program labels, so neither ``machine.symbols`` nor disassembly labels contain
them (:func:`is_mapping_symbol`).
"""

from __future__ import annotations

from typing import Any

from tessera.errors import ConfigError, LoadError
from tessera.loaders.common import LoadedProgram, place, read_file
from tessera.loaders.elfattrs import riscv_isa
from tessera.loaders.elffile import (
    ELF_MAGIC,
    PT_LOAD,
    SHN_UNDEF,
    STB_LOCAL,
    STT_FUNC,
    STT_NOTYPE,
    STT_OBJECT,
    ElfFile,
    ElfFormatError,
)

EM_NONE = 0

#: Names of the ELF machines a user is likely to meet, for messages.
MACHINE_NAMES = {0: "none", 3: "x86", 8: "MIPS", 20: "PowerPC", 21: "PowerPC64", 40: "Arm",
                 62: "x86-64", 183: "AArch64", 243: "RISC-V"}


def describe_machine(number: int) -> str:
    """``0xf3 (RISC-V)``: an ELF machine number, with its name when it is a common one."""
    name = MACHINE_NAMES.get(number)
    return f"{number:#x} ({name})" if name else f"{number:#x}"


def is_mapping_symbol(name: str) -> bool:
    """Is ``name`` a mapping symbol (``$x``, ``$d``, ``$x<isa>``, ``$a``, ``$t`` …)?"""
    return name.startswith("$")


def open_elf(data: bytes, path: str) -> ElfFile:
    """The ELF header of ``data`` read and checked; a :class:`LoadError` naming ``path`` if bad."""
    if not data.startswith(ELF_MAGIC):
        raise LoadError(f"{path} is not an ELF file (bad magic)")
    if len(data) < (64 if data[4:5] == b"\x02" else 52):  # the ELF64 header is 64 bytes
        raise LoadError(f"{path} is truncated: {len(data)} bytes is shorter than an ELF header")
    try:
        return ElfFile(data)
    except ElfFormatError as exc:
        raise load_error(path, exc) from None


def load_error(path: str, exc: ElfFormatError) -> LoadError:
    """``… is truncated: …`` when the file ends too soon, else ``… is a malformed ELF file: …``."""
    text = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
    kind = "is truncated" if exc.truncated else "is a malformed ELF file"
    return LoadError(f"{path} {kind}: {text[:160]}")


def elf_identity(data: bytes, path: str) -> tuple[int, int, str]:
    """``(e_machine, class bits, endian)`` of an ELF image."""
    return _identity(open_elf(data, path))


def _identity(elf: ElfFile) -> tuple[int, int, str]:
    return elf.header.e_machine, elf.header.elfclass, elf.header.endian


def choose_architecture(host: Any, data: bytes, path: str) -> Any:
    """The installed architecture that runs the ELF ``data``: machine, class, byte order, ISA.

    Among the architectures whose ELF machine, class and byte order match, an
    *extension architecture* (``Architecture.elf_extensions``, e.g. ``tile`` with
    ``{"xtile"}``) is chosen only when the ELF's build attributes name all its
    extensions (``-march=rv64im_xtile1p0``); otherwise the base architectures (no
    ``elf_extensions``) are the candidates.  More than one candidate left is a
    :class:`ConfigError` asking for ``--arch``.  An ``EM_NONE`` ELF names no machine,
    so it never chooses an architecture by itself.

    Only the architectures that may run the file are built
    (:meth:`PluginHost.elf_candidates <tessera.plugins.PluginHost.elf_candidates>`,
    from the plugins' ``TESSERA_ELF_MACHINES``); when they do not settle it, the
    choice is made again among all of them, so the errors name every architecture.
    """
    machine_no, bits, endian = elf_identity(data, path)
    if machine_no == EM_NONE:
        raise ConfigError(f"{path} is an ELF file for no particular machine (EM_NONE); "
                          "pass --arch to say which architecture runs it")
    try:
        return _choose(host.elf_candidates(machine_no, elf_extensions(data)), data, path)
    except (ConfigError, LoadError):
        pass  # no answer among the candidates: the message must weigh every architecture
    return _choose([a for a, _ in host.architectures().values()], data, path)


def _choose(archs: list[Any], data: bytes, path: str) -> Any:
    """:func:`choose_architecture` among ``archs``."""
    machine_no, bits, endian = elf_identity(data, path)
    matches = [a for a in archs
               if a.elf_machine == machine_no and (a.elf_class in (None, bits)) and a.endian == endian]
    if not matches:
        raise LoadError(f"{path}: no installed architecture runs ELF machine {describe_machine(machine_no)} "
                        f"({bits}-bit, {endian}-endian); install its plugin or pass --arch")
    named = elf_extensions(data) if any(a.elf_extensions for a in matches) else frozenset()
    needed = [a for a in matches if a.elf_extensions and a.elf_extensions <= named]
    if needed:
        most = max(len(a.elf_extensions) for a in needed)
        pool = [a for a in needed if len(a.elf_extensions) == most]
    else:
        pool = [a for a in matches if not a.elf_extensions]
    if not pool:
        names = ", ".join(sorted(a.name for a in matches))
        wanted = ", ".join(sorted({e for a in matches for e in a.elf_extensions}))
        raise ConfigError(f"{path}: only extension architectures run this ELF ({names}) and its build "
                          f"attributes do not name their extension ({wanted}); pass --arch to run it "
                          "there anyway")
    if len(pool) > 1:
        names = ", ".join(sorted(a.name for a in pool))
        raise ConfigError(f"{path}: several architectures run this ELF ({names}); pass --arch")
    return pool[0]


def elf_extensions(data: bytes) -> frozenset[str]:
    """The ISA extensions a RISC-V ELF's ``Tag_RISCV_arch`` names (empty if it names none)."""
    try:
        elf = open_elf(data, "")
    except LoadError:
        return frozenset()
    isa = riscv_isa(elf)
    return isa.extensions if isa is not None else frozenset()


def load_elf(machine: Any, path: str, data: bytes | None = None, *, entry: int | None = None,
             auto_map: bool = False, any_machine: bool = False, agent: Any = None) -> LoadedProgram:
    """Load an ELF executable into ``machine`` and point its CPUs at the entry.

    ``any_machine`` loads an ELF whatever its ``e_machine`` says (``--any-elf-machine``).
    ``agent``: load into that agent's address map (its ``space``) and point only it at
    the entry — for boards whose cores each run their own ELF (a Tensix tile).
    """
    if data is None:
        data = read_file(path, machine.budget.cap)
    arch = machine.arch
    elf = open_elf(data, path)
    machine_no, bits, endian = _identity(elf)
    if not any_machine:
        check_machine(arch, machine_no, path)
    if arch.elf_class is not None and bits != arch.elf_class:
        raise LoadError(f"{path} is a {bits}-bit ELF; {arch.name} takes {arch.elf_class}-bit ELFs")
    if endian != arch.endian:
        raise LoadError(f"{path} is {endian}-endian; {arch.name} is {arch.endian}-endian")
    loaded = LoadedProgram(path=path, format="elf", entry=0)
    try:
        segments = elf.segments
    except ElfFormatError as exc:
        raise load_error(path, exc) from None
    e_entry = elf.header.e_entry
    loads = [s for s in segments if s.p_type == PT_LOAD and s.p_memsz > 0]
    if not loads:
        raise LoadError(f"{path} has no loadable segments")
    for seg in loads:
        off, filesz, memsz = seg.p_offset, seg.p_filesz, seg.p_memsz
        addr = seg.p_vaddr
        what = f"segment at {addr:#x}"
        if filesz > memsz:
            raise LoadError(f"{path}: {what} has file size {filesz:#x} > memory size {memsz:#x}")
        if off + filesz > len(data):
            raise LoadError(f"{path} is truncated: {what} needs bytes up to {off + filesz:#x}, "
                            f"file has {len(data):#x}")
        if memsz > machine.budget.cap:
            raise LoadError(f"{path}: {what} claims {memsz:#x} bytes, more than the "
                            f"{machine.budget.cap:#x}-byte memory cap")
        place(machine, addr, data[off:off + filesz], memsz, what=f"{path}: {what}", auto_map=auto_map,
              space=None if agent is None else agent.space)
        loaded.segments.append((addr, memsz))
    loaded.symbols = _symbols(elf)
    loaded.entry = e_entry if entry is None else entry
    if agent is not None:  # one core's ELF: its symbols are its own (several ELFs share names)
        agent.pc = loaded.entry
        return loaded
    machine.symbols.update(loaded.symbols)
    machine.set_entry(loaded.entry)
    return loaded


def check_machine(arch: Any, machine_no: int, path: str) -> None:
    """:class:`LoadError` unless ``arch`` runs ELF machine ``machine_no``."""
    force = "; --any-elf-machine loads it anyway"
    if arch.elf_machine is None:
        raise LoadError(f"{path} is an ELF file for machine {describe_machine(machine_no)}, and "
                        f"{arch.name} runs no ELF files (raw images, word lists and assembly "
                        f"only){force}")
    if machine_no != arch.elf_machine:
        raise LoadError(f"{path} is for ELF machine {describe_machine(machine_no)}, not {arch.name} "
                        f"(which runs ELF machine {describe_machine(arch.elf_machine)}){force}")


_LABEL_RANK = {STT_FUNC: 0, STT_OBJECT: 1, STT_NOTYPE: 2}


def _defined_symbols(elf: ElfFile) -> list[tuple[str, int, int]]:
    """``(name, value, rank)`` of the defined function/object/untyped symbols of ``.symtab``,
    in table order.

    Mapping symbols are left out; ``rank`` orders the kinds a label prefers
    (function, object, untyped; globals before locals).  A damaged section header or
    symbol table (:class:`ElfFormatError`) propagates; the callers read it as no symbols.
    """
    out: list[tuple[str, int, int]] = []
    for sym in elf.symbols():
        if not sym.name or sym.type not in _LABEL_RANK or is_mapping_symbol(sym.name):
            continue
        if sym.shndx == SHN_UNDEF:
            continue
        local = sym.bind == STB_LOCAL
        out.append((sym.name, sym.value, 2 * _LABEL_RANK[sym.type] + local))
    return out


def _symbols(elf: ElfFile) -> dict[str, int]:
    """Name → address of the program's symbols (what ``--until-symbol`` may name)."""
    out: dict[str, int] = {}
    try:
        for name, value, _rank in _defined_symbols(elf):
            out.setdefault(name, value)
    except ElfFormatError:  # a damaged symbol table only loses symbols
        return {}
    return out


def label_symbols(elf: ElfFile) -> dict[int, str]:
    """Address → the one name a listing shows there: a function before an object before an
    untyped symbol, a global before a local, else the first in the table; never a mapping symbol."""
    best: dict[int, tuple[int, str]] = {}
    try:
        for name, value, rank in _defined_symbols(elf):
            if value not in best or rank < best[value][0]:
                best[value] = (rank, name)
    except ElfFormatError:  # a damaged symbol table only loses labels
        return {}
    return {addr: name for addr, (_rank, name) in best.items()}
