"""A small, strict ELF reader over ``bytes``: headers, segments, sections, symbols.

Why not pyelftools: importing ``elftools.elf.elffile`` pulls in construct, DWARF,
ehabi and more, about 50 ms of a ``tessera run`` that takes 250 ms, to read a few
fixed-layout tables.  This module imports only :mod:`struct` and reads exactly what
the loaders, ``disasm`` and the bench need.

Why strict: an ELF file is user input.  Every offset, size and count is checked
against the file before it is used, so a truncated or hostile file raises one
:class:`ElfFormatError` with a short message saying what is wrong ("program header
3 of 5 lies past the end of the file (0x90 bytes)"), never ``IndexError`` or
``struct.error``; a table's entry count times its entry size must fit in the file
before any loop runs over it, so a huge ``e_phnum`` or ``sh_size`` costs nothing.

Layouts (System V gABI, "Object Files": ELF Header, Sections, String Table, Symbol
Table, Program Header), for ELFCLASS32 and ELFCLASS64, ELFDATA2LSB and ELFDATA2MSB:

- ELF header: ``e_ident[16]`` (magic, ``EI_CLASS``, ``EI_DATA``, ``EI_VERSION``,
  ``EI_OSABI``, ``EI_ABIVERSION``), then ``e_type e_machine e_version e_entry e_phoff
  e_shoff e_flags e_ehsize e_phentsize e_phnum e_shentsize e_shnum e_shstrndx``
  (52 bytes in ELF32, 64 in ELF64; addresses and offsets are 4 or 8 bytes).
- Extended numbering: ``e_shnum == 0`` with a section table means the count is
  section 0's ``sh_size``; ``e_shstrndx == SHN_XINDEX`` means the index is section 0's
  ``sh_link``; ``e_phnum == PN_XNUM`` means the count is section 0's ``sh_info``.
- Program header: ELF32 ``p_type p_offset p_vaddr p_paddr p_filesz p_memsz p_flags
  p_align``; ELF64 moves ``p_flags`` after ``p_type``.
- Section header: ``sh_name sh_type sh_flags sh_addr sh_offset sh_size sh_link
  sh_info sh_addralign sh_entsize``; names are offsets into the section-name string
  table ``e_shstrndx``.
- Symbol: ELF32 ``st_name st_value st_size st_info st_other st_shndx``; ELF64
  ``st_name st_info st_other st_shndx st_value st_size``; ``st_info`` is
  ``bind << 4 | type``; names are offsets into the string table ``sh_link`` names.

Not read: relocations, dynamic tables, notes, DWARF, compressed sections (their bytes
are returned as stored), and ``SHN_XINDEX`` symbol section indices (reported as
``0xffff``).  Values are small immutable tuples with named fields; numbers stay
numbers (``e_machine`` 243, ``p_type`` 1), with the common constants below.
"""

from __future__ import annotations

import struct
from collections.abc import Iterator
from operator import itemgetter
from typing import Any

ELF_MAGIC = b"\x7fELF"
ELFCLASS32, ELFCLASS64 = 1, 2
ELFDATA2LSB, ELFDATA2MSB = 1, 2

PT_NULL, PT_LOAD, PT_DYNAMIC, PT_INTERP, PT_NOTE = 0, 1, 2, 3, 4
PF_X, PF_W, PF_R = 0x1, 0x2, 0x4
PN_XNUM = 0xFFFF

SHT_NULL, SHT_PROGBITS, SHT_SYMTAB, SHT_STRTAB, SHT_NOBITS, SHT_DYNSYM = 0, 1, 2, 3, 8, 11
SHF_WRITE, SHF_ALLOC, SHF_EXECINSTR = 0x1, 0x2, 0x4
SHN_UNDEF, SHN_LORESERVE, SHN_ABS, SHN_COMMON, SHN_XINDEX = 0, 0xFF00, 0xFFF1, 0xFFF2, 0xFFFF

STB_LOCAL, STB_GLOBAL, STB_WEAK = 0, 1, 2
STT_NOTYPE, STT_OBJECT, STT_FUNC, STT_SECTION, STT_FILE = 0, 1, 2, 3, 4


class ElfFormatError(ValueError):
    """The bytes are not a well-formed ELF file; the message says what is wrong.

    ``truncated`` is true when something the file describes lies past its end (a file
    cut short, or an offset or size beyond it), false for inconsistent contents.
    """

    def __init__(self, message: str, *, truncated: bool = False) -> None:
        super().__init__(message)
        self.truncated = truncated


class _Record(tuple):
    """Base of the value classes: an immutable tuple whose fields are the subclass's
    annotations, in order (``typing.NamedTuple``'s idea without its class-creation
    cost, which would be most of this module's import time)."""

    __slots__ = ()
    _fields: tuple[str, ...] = ()

    def __init_subclass__(cls) -> None:
        cls._fields = tuple(cls.__dict__.get("__annotations__", {}))
        for i, name in enumerate(cls._fields):
            setattr(cls, name, property(itemgetter(i)))

    def __new__(cls, *values: Any) -> Any:
        if len(values) != len(cls._fields):
            raise TypeError(f"{cls.__name__} takes {len(cls._fields)} values, not {len(values)}")
        return tuple.__new__(cls, values)

    def __repr__(self) -> str:
        return f"{type(self).__name__}({', '.join(f'{n}={v!r}' for n, v in zip(self._fields, self))})"

    def _asdict(self) -> dict[str, Any]:
        return dict(zip(self._fields, self))


class ElfHeader(_Record):
    """The ELF header as stored (``e_phnum``, ``e_shnum``, ``e_shstrndx`` before the
    extended-numbering escapes; :class:`ElfFile` resolves those)."""

    __slots__ = ()

    elfclass: int  # 32 or 64
    endian: str  # "little" or "big"
    osabi: int
    abiversion: int
    e_type: int
    e_machine: int
    e_version: int
    e_entry: int
    e_phoff: int
    e_shoff: int
    e_flags: int
    e_ehsize: int
    e_phentsize: int
    e_phnum: int
    e_shentsize: int
    e_shnum: int
    e_shstrndx: int


class Segment(_Record):
    """One program header."""

    __slots__ = ()

    number: int  # its place in the program header table
    p_type: int
    p_flags: int
    p_offset: int
    p_vaddr: int
    p_paddr: int
    p_filesz: int
    p_memsz: int
    p_align: int


class Section(_Record):
    """One section header, with its name read from the section-name string table."""

    __slots__ = ()

    number: int  # its place in the section header table (the section index)
    name: str
    sh_name: int
    sh_type: int
    sh_flags: int
    sh_addr: int
    sh_offset: int
    sh_size: int
    sh_link: int
    sh_info: int
    sh_addralign: int
    sh_entsize: int


class Symbol(_Record):
    """One symbol-table entry; ``bind`` and ``type`` are ``st_info`` taken apart."""

    __slots__ = ()

    name: str
    value: int
    size: int
    type: int
    bind: int
    other: int
    shndx: int


class _Layout:
    """The ``struct`` formats of one class and byte order: header (after ``e_ident``),
    program header, section header, symbol."""

    __slots__ = ("header", "phdr", "shdr", "sym")

    def __init__(self, order: str, elf64: bool) -> None:
        formats = (("HHIQQQIHHHHHH", "IIQQQQQQ", "IIQQQQIIQQ", "IBBHQQ") if elf64 else
                   ("HHIIIIIHHHHHH", "8I", "10I", "IIIBBH"))
        self.header, self.phdr, self.shdr, self.sym = (struct.Struct(order + f) for f in formats)


_LAYOUTS = {(ELFCLASS32, ELFDATA2LSB): _Layout("<", False), (ELFCLASS32, ELFDATA2MSB): _Layout(">", False),
            (ELFCLASS64, ELFDATA2LSB): _Layout("<", True), (ELFCLASS64, ELFDATA2MSB): _Layout(">", True)}
_IDENT = 16


class ElfFile:
    """An ELF image in memory.  The header is read (and checked) on construction;
    the program and section header tables when first asked for, so a file whose
    section table is damaged can still give its header and segments."""

    __slots__ = ("data", "header", "_layout", "_segments", "_sections", "_section0")

    def __init__(self, data: bytes | bytearray | memoryview) -> None:
        self.data = data
        size = len(data)
        if bytes(data[:4]) != ELF_MAGIC:
            raise ElfFormatError("not an ELF file (bad magic)")
        if size < _IDENT:
            raise ElfFormatError(f"the file is {size} bytes, shorter than the 16-byte ELF identification",
                                 truncated=True)
        cls, enc = data[4], data[5]
        if cls not in (ELFCLASS32, ELFCLASS64):
            raise ElfFormatError(f"unknown ELF class {cls} (EI_CLASS is 1 for ELF32, 2 for ELF64)")
        if enc not in (ELFDATA2LSB, ELFDATA2MSB):
            raise ElfFormatError(f"unknown ELF data encoding {enc} (EI_DATA is 1 for little-, 2 for "
                                 "big-endian)")
        layout = _LAYOUTS[cls, enc]
        need = _IDENT + layout.header.size
        bits = 32 if cls == ELFCLASS32 else 64
        if size < need:
            raise ElfFormatError(f"the file is {size} bytes, shorter than the {need}-byte ELF{bits} header",
                                 truncated=True)
        self._layout = layout
        self.header = ElfHeader(bits, "little" if enc == ELFDATA2LSB else "big", data[7], data[8],
                                *layout.header.unpack_from(data, _IDENT))
        self._segments: tuple[Segment, ...] | None = None
        self._sections: tuple[Section, ...] | None = None
        self._section0: tuple | None = None

    # ------------------------------------------------------------------ tables

    @property
    def segments(self) -> tuple[Segment, ...]:
        """The program headers, in table order (empty without a program header table)."""
        if self._segments is None:
            h = self.header
            count = h.e_phnum
            if count == PN_XNUM:
                count = self._raw_section0()[7]  # sh_info
            if count and not h.e_phoff:
                raise ElfFormatError(f"e_phnum says {count} program headers but e_phoff is 0")
            unpack = self._layout.phdr.unpack_from
            offsets = self._table(h.e_phoff, count, h.e_phentsize, self._layout.phdr.size,
                                  "program header", "e_phentsize")
            out = []
            for i, off in enumerate(offsets):
                f = unpack(self.data, off)
                if self.header.elfclass == 32:  # type offset vaddr paddr filesz memsz flags align
                    out.append(Segment(i, f[0], f[6], f[1], f[2], f[3], f[4], f[5], f[7]))
                else:  # type flags offset vaddr paddr filesz memsz align
                    out.append(Segment(i, *f))
            self._segments = tuple(out)
        return self._segments

    @property
    def sections(self) -> tuple[Section, ...]:
        """The section headers, in table order, with their names (empty without a section table)."""
        if self._sections is None:
            h = self.header
            count = self.section_count
            raw = [self._layout.shdr.unpack_from(self.data, off)
                   for off in self._table(h.e_shoff, count, h.e_shentsize, self._layout.shdr.size,
                                          "section header", "e_shentsize")]
            names = self._section_names(raw)
            self._sections = tuple(Section(i, names[i], *f) for i, f in enumerate(raw))
        return self._sections

    @property
    def section_count(self) -> int:
        """How many section headers the file has (``e_shnum``, or section 0's ``sh_size``)."""
        h = self.header
        if not h.e_shoff:
            return 0
        return h.e_shnum if h.e_shnum else self._raw_section0()[5]

    @property
    def shstrndx(self) -> int:
        """The index of the section-name string table (``SHN_XINDEX`` resolved; 0: none)."""
        index = self.header.e_shstrndx
        return self._raw_section0()[6] if index == SHN_XINDEX else index

    def section_by_name(self, name: str) -> Section | None:
        """The first section called ``name``, or ``None``."""
        for section in self.sections:
            if section.name == name:
                return section
        return None

    # ------------------------------------------------------------------ contents

    def section_data(self, section: Section) -> bytes:
        """The bytes a section holds in the file (``SHT_NOBITS``: none)."""
        if section.sh_type == SHT_NOBITS:
            return b""
        return self._bytes(section.sh_offset, section.sh_size, f"section {section.number} "
                           f"({section.name or 'unnamed'})")

    def segment_data(self, segment: Segment) -> bytes:
        """The ``p_filesz`` bytes a segment holds in the file."""
        return self._bytes(segment.p_offset, segment.p_filesz, f"segment {segment.number}")

    def symbols(self, section: Section | None = None) -> Iterator[Symbol]:
        """The entries of a symbol table (default ``.symtab``; none: no symbols), in order,
        index 0 (the null symbol) included."""
        if section is None:
            section = self.section_by_name(".symtab")
            if section is None:
                return iter(())
        what = f"symbol table {section.number} ({section.name or 'unnamed'})"
        if section.sh_type not in (SHT_SYMTAB, SHT_DYNSYM):
            raise ElfFormatError(f"section {section.number} ({section.name or 'unnamed'}) is not a "
                                 f"symbol table (sh_type {section.sh_type:#x})")
        sym = self._layout.sym
        if section.sh_entsize < sym.size:
            raise ElfFormatError(f"{what} has entry size {section.sh_entsize}, less than a "
                                 f"{sym.size}-byte symbol")
        if section.sh_size % section.sh_entsize:
            raise ElfFormatError(f"{what} is {section.sh_size:#x} bytes, not a whole number of "
                                 f"{section.sh_entsize}-byte entries")
        table = self.section_data(section)
        link = section.sh_link
        sections = self.sections
        if not 0 < link < len(sections):
            raise ElfFormatError(f"{what} links to string table {link}, which is not a section")
        strtab = sections[link]
        if strtab.sh_type != SHT_STRTAB:
            raise ElfFormatError(f"{what} links to section {link}, which is not a string table")
        strings = self.section_data(strtab)
        return self._iter_symbols(table, section.sh_entsize, strings, what)

    def _iter_symbols(self, table: bytes, entsize: int, strings: bytes, what: str) -> Iterator[Symbol]:
        unpack = self._layout.sym.unpack_from
        elf32 = self.header.elfclass == 32
        for i, off in enumerate(range(0, len(table), entsize)):
            f = unpack(table, off)
            if elf32:  # name value size info other shndx
                name_off, value, size, info, other, shndx = f
            else:  # name info other shndx value size
                name_off, info, other, shndx, value, size = f
            name = _string(strings, name_off, f"{what}: symbol {i}'s name")
            yield Symbol(name, value, size, info & 0xF, info >> 4, other, shndx)

    # ------------------------------------------------------------------ checks

    def _bytes(self, offset: int, size: int, what: str) -> bytes:
        end = offset + size
        if end > len(self.data):
            raise ElfFormatError(f"{what} lies past the end of the file (needs bytes up to {end:#x}, "
                                 f"the file has {len(self.data):#x})", truncated=True)
        return bytes(self.data[offset:end])

    def _table(self, offset: int, count: int, entsize: int, minimum: int, what: str,
               field: str) -> range:
        """The file offsets of a table's entries, after checking the whole table fits."""
        if not count:
            return range(0)
        if entsize < minimum:
            raise ElfFormatError(f"{field} is {entsize}, less than the {minimum}-byte {what}")
        size = len(self.data)
        if offset + count * entsize > size:
            first_bad = max(0, (size - offset) // entsize) if offset <= size else 0
            raise ElfFormatError(f"{what} {first_bad} of {count} lies past the end of the file "
                                 f"({size:#x} bytes)", truncated=True)
        return range(offset, offset + count * entsize, entsize)

    def _raw_section0(self) -> tuple:
        """Section header 0's fields: where the extended-numbering escapes keep the real values."""
        if self._section0 is None:
            h = self.header
            shdr = self._layout.shdr
            if not h.e_shoff:
                raise ElfFormatError("extended section/segment numbering needs a section header "
                                     "table, and e_shoff is 0")
            (offset,) = self._table(h.e_shoff, 1, h.e_shentsize, shdr.size, "section header",
                                    "e_shentsize")
            self._section0 = shdr.unpack_from(self.data, offset)
        return self._section0

    def _section_names(self, raw: list[tuple]) -> list[str]:
        if not raw:
            return []
        index = self.shstrndx
        if index == SHN_UNDEF:
            return [""] * len(raw)
        if index >= len(raw):
            raise ElfFormatError(f"the section-name string table is section {index}, and the file "
                                 f"has {len(raw)} sections")
        f = raw[index]
        if f[1] != SHT_STRTAB:  # sh_type
            raise ElfFormatError(f"the section-name string table (section {index}) is not a string "
                                 f"table (sh_type {f[1]:#x})")
        strings = self._bytes(f[4], f[5], f"the section-name string table (section {index})")
        return [_string(strings, fields[0], f"section {i}'s name") for i, fields in enumerate(raw)]


def _string(table: bytes, offset: int, what: str) -> str:
    """The NUL-terminated string at ``offset`` of a string table section's bytes."""
    if offset == 0 and not table:  # an empty table holds only the empty name
        return ""
    end = table.find(b"\x00", offset)
    if offset >= len(table) or end < 0:
        raise ElfFormatError(f"{what} (string offset {offset:#x}) runs past the end of its string "
                             f"table ({len(table):#x} bytes)")
    return table[offset:end].decode("utf-8", errors="replace")
