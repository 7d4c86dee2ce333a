"""A tiny ELF writer for the loader and command-line tests (struct only, no toolchain).

:func:`build_elf` lays a file out as::

    ELF header | program headers | segment bytes ... | .shstrtab | .strtab | .symtab | section headers

Program headers come right after the ELF header and section headers come last, so
cutting a file short loses the section headers and segment bytes first, never the
program headers (what the truncation tests rely on).  Every ``PT_LOAD`` segment
gets a matching section (``.text`` when executable, ``.data`` otherwise) so tools
that walk sections (``tessera disasm``) and symbol section indices work.
"""

from __future__ import annotations

import struct
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

PT_NULL, PT_LOAD, PT_NOTE = 0, 1, 4
PF_X, PF_W, PF_R = 1, 2, 4
ET_EXEC = 2
EM_RISCV = 0xF3
EM_TOY = 0x7A01

SHT_NULL, SHT_PROGBITS, SHT_SYMTAB, SHT_STRTAB, SHT_NOBITS = 0, 1, 2, 3, 8
SHT_RISCV_ATTRIBUTES = 0x70000003
SHF_WRITE, SHF_ALLOC, SHF_EXECINSTR = 0x1, 0x2, 0x4
SHN_ABS = 0xFFF1
STB_LOCAL, STB_GLOBAL = 0, 1
STT_NOTYPE, STT_OBJECT, STT_FUNC = 0, 1, 2


@dataclass
class Segment:
    """One program header.  ``memsz`` defaults to ``len(data)``; ``offset`` overrides the layout."""

    vaddr: int
    data: bytes = b""
    memsz: int | None = None
    flags: int = PF_R | PF_X
    type: int = PT_LOAD
    filesz: int | None = None  # lie about the file size (default: len(data))
    offset: int | None = None  # lie about the file offset (default: where the bytes are put)


@dataclass
class Symbol:
    name: str
    value: int
    type: int = STT_FUNC
    bind: int = STB_GLOBAL
    size: int = 0
    shndx: int | None = None  # default: the section holding ``value``, else SHN_ABS


def _as_segment(item: Segment | Sequence) -> Segment:
    if isinstance(item, Segment):
        return item
    vaddr, data, *rest = item
    return Segment(vaddr, bytes(data), rest[0] if rest else None)


def _as_symbols(symbols: Mapping[str, int] | Iterable[Symbol] | None) -> list[Symbol]:
    if symbols is None:
        return []
    if isinstance(symbols, Mapping):
        return [Symbol(name, value) for name, value in symbols.items()]
    return list(symbols)


def _align(n: int, a: int) -> int:
    return (n + a - 1) // a * a


class _StrTab:
    def __init__(self) -> None:
        self.data = bytearray(b"\x00")
        self.index: dict[str, int] = {"": 0}

    def add(self, s: str) -> int:
        if s not in self.index:
            self.index[s] = len(self.data)
            self.data += s.encode() + b"\x00"
        return self.index[s]


def build_elf(
    *,
    machine: int = EM_TOY,
    bits: int = 32,
    endian: str = "little",
    entry: int = 0,
    segments: Iterable[Segment | Sequence] = (),
    symbols: Mapping[str, int] | Iterable[Symbol] | None = None,
    sections: bool = True,
    e_type: int = ET_EXEC,
    attributes: bytes | None = None,
) -> bytes:
    """An ELF executable.

    ``segments``: :class:`Segment` objects or ``(vaddr, data[, memsz])`` tuples.
    ``symbols``: ``{name: value}`` (global functions) or :class:`Symbol` objects;
    a symbol table implies section headers.  ``sections=False`` (and no symbols)
    writes no section headers at all (``e_shnum = 0``).  ``attributes`` is the raw
    content of a ``.riscv.attributes`` section (:func:`riscv_attributes` builds one).
    """
    if bits not in (32, 64) or endian not in ("little", "big"):
        raise ValueError("bits must be 32 or 64, endian 'little' or 'big'")
    segs = [_as_segment(s) for s in segments]
    syms = _as_symbols(symbols)
    with_sections = sections or bool(syms) or attributes is not None
    e = "<" if endian == "little" else ">"
    w = "I" if bits == 32 else "Q"
    ehsize, phentsize, shentsize = (52, 32, 40) if bits == 32 else (64, 56, 64)
    align = 4 if bits == 32 else 8

    # ---- layout: segment bytes after the program headers
    body = bytearray()
    base = ehsize + phentsize * len(segs)
    seg_offsets = []
    for seg in segs:
        pad = _align(base + len(body), align) - (base + len(body))
        body += bytes(pad)
        seg_offsets.append(base + len(body))
        body += seg.data

    # ---- sections
    shdrs: list[tuple] = []  # (name, type, flags, addr, offset, size, link, info, addralign, entsize)
    if with_sections:
        shstr = _StrTab()
        shdrs.append((0, SHT_NULL, 0, 0, 0, 0, 0, 0, 0, 0))
        seg_section: list[int] = []
        for seg, off in zip(segs, seg_offsets):
            if seg.type != PT_LOAD:
                seg_section.append(0)
                continue
            execu = bool(seg.flags & PF_X)
            name = ".text" if execu else ".data"
            flags = SHF_ALLOC | (SHF_EXECINSTR if execu else SHF_WRITE)
            seg_section.append(len(shdrs))
            shdrs.append((shstr.add(name), SHT_PROGBITS, flags, seg.vaddr, off, len(seg.data),
                          0, 0, align, 0))
            memsz = seg.memsz if seg.memsz is not None else len(seg.data)
            if memsz > len(seg.data) and memsz - len(seg.data) < 1 << 31:
                shdrs.append((shstr.add(".bss"), SHT_NOBITS, SHF_ALLOC | SHF_WRITE,
                              seg.vaddr + len(seg.data), off + len(seg.data),
                              memsz - len(seg.data), 0, 0, align, 0))
        if attributes is not None:
            shdrs.append((shstr.add(".riscv.attributes"), SHT_RISCV_ATTRIBUTES, 0, 0, base + len(body),
                          len(attributes), 0, 0, 1, 0))
            body += attributes
        if syms:
            strtab = _StrTab()
            symtab = bytearray(bytes(16 if bits == 32 else 24))  # index 0: the null symbol
            ordered = sorted(syms, key=lambda s: s.bind != STB_LOCAL)  # locals first
            first_global = 1 + sum(1 for s in ordered if s.bind == STB_LOCAL)
            for sym in ordered:
                shndx = sym.shndx
                if shndx is None:
                    shndx = SHN_ABS
                    for seg, idx in zip(segs, seg_section):
                        size = seg.memsz if seg.memsz is not None else len(seg.data)
                        if idx and seg.vaddr <= sym.value < seg.vaddr + max(size, 1):
                            shndx = idx
                            break
                info = (sym.bind << 4) | sym.type
                if bits == 32:
                    symtab += struct.pack(e + "IIIBBH", strtab.add(sym.name), sym.value, sym.size,
                                          info, 0, shndx)
                else:
                    symtab += struct.pack(e + "IBBHQQ", strtab.add(sym.name), info, 0, shndx,
                                          sym.value, sym.size)
            strtab_index = len(shdrs) + 1
            off = _align(base + len(body), align)
            body += bytes(off - (base + len(body)))
            shdrs.append((shstr.add(".symtab"), SHT_SYMTAB, 0, 0, off, len(symtab), strtab_index,
                          first_global, align, 16 if bits == 32 else 24))
            body += symtab
            shdrs.append((shstr.add(".strtab"), SHT_STRTAB, 0, 0, base + len(body), len(strtab.data),
                          0, 0, 1, 0))
            body += strtab.data
        shstrndx = len(shdrs)
        name = shstr.add(".shstrtab")
        shdrs.append((name, SHT_STRTAB, 0, 0, base + len(body), 0, 0, 0, 1, 0))
        body += shstr.data
        last = shdrs[-1]
        shdrs[-1] = last[:5] + (len(shstr.data),) + last[6:]
        pad = _align(base + len(body), align) - (base + len(body))
        body += bytes(pad)
        shoff = base + len(body)
    else:
        shstrndx = 0
        shoff = 0

    # ---- headers
    ident = b"\x7fELF" + bytes([1 if bits == 32 else 2, 1 if endian == "little" else 2, 1, 0])
    ident += bytes(16 - len(ident))
    header = ident + struct.pack(e + "HHI" + w + w + w + "IHHHHHH", e_type, machine, 1, entry,
                                 ehsize if segs else 0, shoff, 0, ehsize, phentsize, len(segs),
                                 shentsize if shdrs else 0, len(shdrs), shstrndx)
    assert len(header) == ehsize
    phdrs = bytearray()
    for seg, off in zip(segs, seg_offsets):
        filesz = len(seg.data) if seg.filesz is None else seg.filesz
        memsz = len(seg.data) if seg.memsz is None else seg.memsz
        offset = off if seg.offset is None else seg.offset
        if bits == 32:
            phdrs += struct.pack(e + "8I", seg.type, offset, seg.vaddr, seg.vaddr, filesz, memsz,
                                 seg.flags, align)
        else:
            phdrs += struct.pack(e + "IIQQQQQQ", seg.type, seg.flags, offset, seg.vaddr, seg.vaddr,
                                 filesz, memsz, align)
    sh = bytearray()
    for s in shdrs:
        if bits == 32:
            sh += struct.pack(e + "10I", *s)
        else:
            sh += struct.pack(e + "IIQQQQIIQQ", *s)
    return bytes(header + phdrs + body + sh)


def _uleb(n: int) -> bytes:
    out = bytearray()
    while True:
        b = n & 0x7F
        n >>= 7
        out.append(b | (0x80 if n else 0))
        if not n:
            return bytes(out)


def riscv_attributes(arch: str | None, *, endian: str = "little", stack_align: int | None = 16,
                     vendor: str = "riscv", extra: bytes = b"") -> bytes:
    """A ``.riscv.attributes`` section as the psABI lays it out (what gcc/as/ld write).

    ``'A'``, then one sub-section ``length vendor\0`` holding one ``Tag_file`` (1)
    sub-sub-section: ``Tag_RISCV_stack_align`` (4, ULEB128) when given, ``extra`` (raw
    attribute bytes), then ``Tag_RISCV_arch`` (5, NUL-terminated string) when given.
    """
    attrs = b""
    if stack_align is not None:
        attrs += _uleb(4) + _uleb(stack_align)
    attrs += extra
    if arch is not None:
        attrs += _uleb(5) + arch.encode() + b"\x00"
    order = "little" if endian == "little" else "big"
    file_sub = bytes([1]) + (5 + len(attrs)).to_bytes(4, order) + attrs
    name = vendor.encode() + b"\x00"
    sub = (4 + len(name) + len(file_sub)).to_bytes(4, order) + name + file_sub
    return b"A" + sub


def words_le(words: Iterable[int], endian: str = "little") -> bytes:
    """32-bit words packed in the given byte order."""
    return b"".join(w.to_bytes(4, endian) for w in words)
