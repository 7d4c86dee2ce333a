"""What a RISC-V ELF says it was built for: the ``Tag_RISCV_arch`` build attribute.

The compiler and assembler record the ``-march`` of every object in the
``.riscv.attributes`` section, and the linker merges them, so an executable names the
ISA extensions its code may use (``rv64i2p1_m2p0_zmmul1p0``; a tile program built with
``-march=rv64im_xtile1p0`` adds ``xtile1p0``).  Tessera reads it to choose between
architectures that run the same ELF machine (``rv64im`` or ``tile``): see
:func:`tessera.loaders.elf.choose_architecture`.

The section layout (RISC-V ELF psABI, "Attributes"; the generic build-attributes
format): a version byte ``'A'``, then sub-sections ``length:u32 vendor:NTBS
{tag:u8 size:u32 attributes}*`` where ``length`` and ``size`` count themselves.  An
attribute is a ULEB128 tag and a value: a NUL-terminated string when the tag is odd,
a ULEB128 number when it is even (so unknown tags can be skipped).  ``Tag_file`` (1)
sub-sub-sections of vendor ``riscv`` hold ``Tag_RISCV_arch`` (5).

The section is optional and only informs the choice of architecture, so a damaged or
unexpected one reads as absent: it never refuses a program that would otherwise load.
"""

from __future__ import annotations

import io
import re

import attrs

from tessera.loaders.elffile import ElfFile, ElfFormatError

EM_RISCV = 0xF3
TAG_FILE = 1
TAG_RISCV_ARCH = 5

#: Extensions ``g`` stands for in an ISA string.
_G = ("i", "m", "a", "f", "d", "zicsr", "zifencei")
_VERSION = re.compile(r"\d+(?:p\d+)?$")
_SINGLE = re.compile(r"([a-z])(\d+(?:p\d+)?)?")


@attrs.frozen
class RiscvIsa:
    """An ISA string read apart: ``xlen`` and the extension names, lower case, no versions."""

    text: str
    xlen: int
    extensions: frozenset[str]


class _Malformed(Exception):
    """The attributes section does not follow the format (read as absent)."""


def parse_isa_string(text: str) -> RiscvIsa | None:
    """``rv64i2p1_m2p0_zmmul1p0`` → xlen 64, ``{i, m, zmmul}``; ``None`` if it is not one.

    Single-letter extensions may run together (``rv64imac``) or be separated by
    ``_``; multi-letter ones (``z…``, ``s…``, ``x…``) are separated by ``_``; version
    suffixes (``2p1``, ``1``) are dropped; ``g`` expands to ``imafd_zicsr_zifencei``.
    """
    low = text.strip().lower()
    match = re.match(r"rv(32|64|128)", low)
    if match is None:
        return None
    names: set[str] = set()
    for token in low[match.end():].split("_"):
        if not token:
            continue
        if token[0] in "zsx":
            name = _VERSION.sub("", token)
            if len(name) < 2 or not name.isalnum():
                return None
            names.add(name)
            continue
        pos = 0
        while pos < len(token):
            single = _SINGLE.match(token, pos)
            if single is None:
                return None
            letter = single.group(1)
            if letter in "zsx":  # a multi-letter extension must start its own token
                return None
            names.update(_G if letter == "g" else (letter,))
            pos = single.end()
    return RiscvIsa(text=text, xlen=int(match.group(1)), extensions=frozenset(names))


def riscv_isa(elf: ElfFile) -> RiscvIsa | None:
    """The ``Tag_RISCV_arch`` of an :class:`~tessera.loaders.elffile.ElfFile`, or ``None``
    (absent, or damaged: a bad section table or attributes section reads as absent)."""
    if elf.header.e_machine != EM_RISCV:
        return None
    try:
        section = elf.section_by_name(".riscv.attributes")
        if section is None:
            return None
        data = elf.section_data(section)
    except ElfFormatError:
        return None
    try:
        arch = read_arch_attribute(data, elf.header.endian)
    except _Malformed:
        return None
    return None if arch is None else parse_isa_string(arch)


def read_arch_attribute(data: bytes, endian: str = "little") -> str | None:
    """The ``Tag_RISCV_arch`` string of an attributes section's bytes (``None`` if absent).

    Raises :class:`_Malformed` when the bytes do not follow the format.
    """
    if not data or data[0] != ord("A"):
        raise _Malformed("no format-version byte 'A'")
    stream = io.BytesIO(data)
    stream.seek(1)
    while stream.tell() < len(data):
        start = stream.tell()
        length = _u32(stream, endian)
        end = start + length
        if length < 5 or end > len(data):
            raise _Malformed("sub-section length out of range")
        vendor = _ntbs(stream, end)
        if vendor == "riscv":
            found = _vendor_arch(stream, end, endian)
            if found is not None:
                return found
        stream.seek(end)
    return None


def _vendor_arch(stream: io.BytesIO, end: int, endian: str) -> str | None:
    while stream.tell() < end:
        start = stream.tell()
        tag = _byte(stream, end)
        size = _u32(stream, endian)
        sub_end = start + size
        if size < 5 or sub_end > end:
            raise _Malformed("sub-sub-section size out of range")
        if tag == TAG_FILE:
            while stream.tell() < sub_end:
                attr = _uleb(stream, sub_end)
                if attr % 2:
                    value = _ntbs(stream, sub_end)
                    if attr == TAG_RISCV_ARCH:
                        return value
                else:
                    _uleb(stream, sub_end)
        stream.seek(sub_end)
    return None


def _byte(stream: io.BytesIO, end: int) -> int:
    if stream.tell() >= end:
        raise _Malformed("truncated")
    return stream.read(1)[0]


def _u32(stream: io.BytesIO, endian: str) -> int:
    raw = stream.read(4)
    if len(raw) != 4:
        raise _Malformed("truncated length")
    return int.from_bytes(raw, endian)  # type: ignore[arg-type]


def _uleb(stream: io.BytesIO, end: int) -> int:
    value = shift = 0
    while True:
        b = _byte(stream, end)
        value |= (b & 0x7F) << shift
        shift += 7
        if not b & 0x80:
            return value
        if shift > 63:
            raise _Malformed("ULEB128 value too long")


def _ntbs(stream: io.BytesIO, end: int) -> str:
    out = bytearray()
    while True:
        b = _byte(stream, end)
        if b == 0:
            return out.decode("ascii", errors="replace")
        out.append(b)
