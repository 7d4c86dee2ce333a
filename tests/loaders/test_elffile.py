"""The core's ELF reader (``tessera.loaders.elffile``): same answers as pyelftools, strict on bad files.

pyelftools is the oracle: every ELF in the repository, ELFs compiled here for RV32 and
RV64 (when ``riscv64-unknown-elf-gcc`` is installed), a host executable, and
synthetic images of both classes and byte orders must read the same in both.  Bad
files (cut short at every offset, hostile counts and offsets, random bytes after a
valid identification) must raise :class:`ElfFormatError` and nothing else, quickly.
Loading an ELF must never import pyelftools (its import is the start-up cost this
reader removes).
"""

from __future__ import annotations

import io
import os
import shutil
import struct
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest
from elfgen import (
    EM_RISCV,
    PF_R,
    PF_W,
    PT_NOTE,
    STB_LOCAL,
    STT_OBJECT,
    Segment,
    Symbol,
    build_elf,
    riscv_attributes,
)
from hypothesis import given, settings
from hypothesis import strategies as st
from toyprog import EXIT7, STAGED

from tessera.errors import LoadError
from tessera.loaders.elf import label_symbols, load_elf
from tessera.loaders.elfattrs import riscv_isa
from tessera.loaders.elffile import SHT_NOBITS, ElfFile, ElfFormatError
from tessera.machine import Machine
from tessera_toyarch import TOY

REPO = Path(__file__).resolve().parents[2]
GCC = "riscv64-unknown-elf-gcc"
LAYOUTS = [(32, "little"), (32, "big"), (64, "little"), (64, "big")]

# --------------------------------------------------------------------------- reading everything


def ours(data: bytes) -> dict:
    """Everything the reader reads, each part its value or ``"error"`` (an ElfFormatError).

    Any exception other than :class:`ElfFormatError` escapes and fails the test.
    """
    out: dict = {}
    try:
        elf = ElfFile(data)
    except ElfFormatError:
        return {"header": "error"}
    h = elf.header
    out["header"] = (h.elfclass, h.endian, h.osabi, h.abiversion, h.e_type, h.e_machine, h.e_version,
                     h.e_entry, h.e_phoff, h.e_shoff, h.e_flags, h.e_ehsize, h.e_phentsize, h.e_phnum,
                     h.e_shentsize, h.e_shnum, h.e_shstrndx)
    out["segments"] = _part(lambda: [(s.p_type, s.p_flags, s.p_offset, s.p_vaddr, s.p_paddr,
                                      s.p_filesz, s.p_memsz, s.p_align) for s in elf.segments])
    for seg in _value(lambda: elf.segments, ()):
        out[f"segment {seg.number} data"] = _part(lambda seg=seg: elf.segment_data(seg))
    out["sections"] = _part(lambda: [(s.name, s.sh_type, s.sh_flags, s.sh_addr, s.sh_offset, s.sh_size,
                                      s.sh_link, s.sh_info, s.sh_addralign, s.sh_entsize)
                                     for s in elf.sections])
    for sec in _value(lambda: elf.sections, ()):
        if sec.sh_type != SHT_NOBITS:
            out[f"section {sec.number} data"] = _part(lambda sec=sec: elf.section_data(sec))
    for table in (".symtab", ".dynsym"):
        out[table] = _part(lambda table=table: _our_symbols(elf, table))
    return out


def _our_symbols(elf: ElfFile, name: str) -> list | None:
    section = elf.section_by_name(name)
    if section is None:
        return None
    return [(s.name, s.value, s.size, s.type, s.bind, s.other & 7, s.other >> 5, s.shndx)
            for s in elf.symbols(section)]


def _part(read):
    try:
        return read()
    except ElfFormatError:
        return "error"


def _value(read, default):
    try:
        return read()
    except ElfFormatError:
        return default


def _enum(prefix: str) -> dict[str, int]:
    import elftools.elf.enums as enums

    merged: dict[str, int] = {}
    for name in dir(enums):
        if name.startswith(prefix):
            merged.update(getattr(enums, name))
    return merged


def _num(value, prefix: str) -> int:
    """pyelftools names the values it knows (``'PT_LOAD'``): back to the number."""
    return value if isinstance(value, int) else _enum(prefix)[value]


def theirs(data: bytes) -> dict:
    """The same reading done by pyelftools (on well-formed files only)."""
    from elftools.elf.elffile import ELFFile

    elf = ELFFile(io.BytesIO(data))
    h = elf.header
    ident = h["e_ident"]
    out: dict = {"header": (
        elf.elfclass, "little" if elf.little_endian else "big", _num(ident["EI_OSABI"], "ENUM_EI_OSABI"),
        ident["EI_ABIVERSION"], _num(h["e_type"], "ENUM_E_TYPE"), _num(h["e_machine"], "ENUM_E_MACHINE"),
        _num(h["e_version"], "ENUM_E_VERSION"), h["e_entry"], h["e_phoff"], h["e_shoff"], h["e_flags"],
        h["e_ehsize"], h["e_phentsize"], h["e_phnum"], h["e_shentsize"], h["e_shnum"], h["e_shstrndx"])}
    segments = [elf.get_segment(i) for i in range(elf.num_segments())]
    out["segments"] = [(_num(s["p_type"], "ENUM_P_TYPE"), s["p_flags"], s["p_offset"], s["p_vaddr"],
                        s["p_paddr"], s["p_filesz"], s["p_memsz"], s["p_align"]) for s in segments]
    for i, seg in enumerate(segments):
        out[f"segment {i} data"] = seg.data()
    sections = [elf.get_section(i) for i in range(elf.num_sections())]
    out["sections"] = [(s.name, _num(s["sh_type"], "ENUM_SH_TYPE"), s["sh_flags"], s["sh_addr"],
                        s["sh_offset"], s["sh_size"], s["sh_link"], s["sh_info"], s["sh_addralign"],
                        s["sh_entsize"]) for s in sections]
    for i, sec in enumerate(sections):
        if sec["sh_type"] != "SHT_NOBITS":
            out[f"section {i} data"] = sec.data()
    for table in (".symtab", ".dynsym"):
        section = elf.get_section_by_name(table)
        out[table] = None if section is None else [
            (s.name, s["st_value"], s["st_size"], _num(s["st_info"]["type"], "ENUM_ST_INFO_TYPE"),
             _num(s["st_info"]["bind"], "ENUM_ST_INFO_BIND"),
             _num(s["st_other"]["visibility"], "ENUM_ST_VISIBILITY"),
             _num(s["st_other"]["local"], "ENUM_ST_LOCAL"), _num(s["st_shndx"], "ENUM_ST_SHNDX"))
            for s in section.iter_symbols()]
    return out


def assert_same_as_pyelftools(data: bytes) -> dict:
    mine = ours(data)
    assert "error" not in mine.values(), [k for k, v in mine.items() if v == "error"]
    reference = theirs(data)
    assert mine.keys() == reference.keys()
    for key in reference:
        assert mine[key] == reference[key], key
    return mine


# --------------------------------------------------------------------------- the corpus


def repository_elfs() -> list[Path]:
    found = []
    for root, dirs, files in os.walk(REPO):
        dirs[:] = [d for d in dirs if not d.startswith(".") and d not in ("__pycache__", "node_modules")]
        found += [Path(root) / f for f in files if f.endswith(".elf")]
    return sorted(found)


def synthetic(bits: int, endian: str) -> bytes:
    """A small executable with code, data, bss, a note, local and global symbols, attributes."""
    return build_elf(
        machine=EM_RISCV, bits=bits, endian=endian, entry=0x100,
        segments=[(0x100, STAGED), Segment(0x1000, b"\x11\x22\x33\x44", memsz=0x40, flags=PF_R | PF_W),
                  Segment(0x2000, b"NOTE" * 3, type=PT_NOTE)],
        symbols=[Symbol("_start", 0x100), Symbol("buffer", 0x1000, STT_OBJECT, size=0x40),
                 Symbol("local", 0x104, bind=STB_LOCAL), Symbol("$x", 0x100), Symbol("ünï", 0x108)],
        attributes=riscv_attributes(f"rv{bits}i2p1_m2p0", endian=endian))


def test_the_repository_has_elfs_to_compare():
    assert any(p.name == "sum-rv32im.elf" for p in repository_elfs())


@pytest.mark.parametrize("path", repository_elfs(), ids=lambda p: str(p.relative_to(REPO)))
def test_every_elf_in_the_repository_reads_as_pyelftools_reads_it(path):
    mine = assert_same_as_pyelftools(path.read_bytes())
    assert mine[".symtab"]  # these are linked programs with symbols


@pytest.mark.parametrize(("bits", "endian"), LAYOUTS)
def test_synthetic_images_of_both_classes_and_byte_orders(bits, endian):
    data = synthetic(bits, endian)
    mine = assert_same_as_pyelftools(data)
    elf = ElfFile(data)
    assert (elf.header.elfclass, elf.header.endian, elf.header.e_machine) == (bits, endian, EM_RISCV)
    assert [s.p_type for s in elf.segments] == [1, 1, 4]
    assert elf.segment_data(elf.segments[0]) == STAGED
    bss = elf.section_by_name(".bss")
    assert bss is not None and bss.sh_size == 0x3C and elf.section_data(bss) == b""
    names = {s.name: s for s in elf.symbols()}
    assert names["buffer"].size == 0x40 and names["local"].bind == STB_LOCAL and "ünï" in names
    assert riscv_isa(elf).xlen == bits
    assert mine["sections"][0] == ("", 0, 0, 0, 0, 0, 0, 0, 0, 0)
    for value in (elf.header, elf.segments[0], bss, names["buffer"]):  # frozen values
        with pytest.raises(AttributeError):
            value.extra = 1
        with pytest.raises(AttributeError):
            setattr(value, value._fields[1], 0)
    assert repr(elf.segments[0]).startswith("Segment(number=0, p_type=1, p_flags=5, ")


def _extended_numbering(data: bytes, bits: int, endian: str) -> bytes:
    """The same file with ``e_shnum``, ``e_shstrndx`` and ``e_phnum`` moved into section 0."""
    e = "<" if endian == "little" else ">"
    out = bytearray(data)
    at = {32: {"phnum": 44, "shnum": 48, "shstrndx": 50, "shoff": (32, "I")},
          64: {"phnum": 56, "shnum": 60, "shstrndx": 62, "shoff": (40, "Q")}}[bits]
    phnum, shnum, shstrndx = (struct.unpack_from(e + "H", out, at[k])[0] for k in ("phnum", "shnum", "shstrndx"))
    shoff = struct.unpack_from(e + at["shoff"][1], out, at["shoff"][0])[0]
    for key, value in (("phnum", 0xFFFF), ("shnum", 0), ("shstrndx", 0xFFFF)):
        struct.pack_into(e + "H", out, at[key], value)
    if bits == 32:  # section 0: sh_size at 20, sh_link at 24, sh_info at 28
        struct.pack_into(e + "III", out, shoff + 20, shnum, shstrndx, phnum)
    else:  # sh_size at 32, sh_link at 40, sh_info at 44
        struct.pack_into(e + "QII", out, shoff + 32, shnum, shstrndx, phnum)
    return bytes(out)


@pytest.mark.parametrize(("bits", "endian"), LAYOUTS)
def test_extended_section_and_segment_numbering(bits, endian):
    plain = synthetic(bits, endian)
    data = _extended_numbering(plain, bits, endian)
    mine = assert_same_as_pyelftools(data)
    elf, ref = ElfFile(data), ElfFile(plain)
    assert (elf.header.e_phnum, elf.header.e_shnum, elf.header.e_shstrndx) == (0xFFFF, 0, 0xFFFF)
    assert elf.segments == ref.segments
    assert elf.section_count == ref.section_count and elf.shstrndx == ref.shstrndx
    assert [s.name for s in elf.sections] == [s.name for s in ref.sections]
    assert mine[".symtab"] == ours(plain)[".symtab"]


_PROGRAM = r"""
int counter = 5;
static int hidden;
const char message[] = "hello";
int table[64];
static int helper(int x) { return x * counter + hidden; }
int compute(int n) { int s = 0; for (int i = 0; i < n; i++) s += helper(i) + table[i & 63]; return s; }
void _start(void) { counter = compute(message[0]); for (;;) {} }
"""


@pytest.fixture(scope="module")
def compiled(tmp_path_factory) -> list[Path]:
    """RV32 and RV64 programs with debug information, and a relocatable object."""
    if shutil.which(GCC) is None:
        pytest.skip(f"{GCC} is not installed")
    out = tmp_path_factory.mktemp("elfs")
    source = out / "prog.c"
    source.write_text(_PROGRAM)
    built = []
    for march, mabi in (("rv32im", "ilp32"), ("rv64im", "lp64")):
        for extra, name in ((["-nostdlib", "-ffreestanding", "-static"], f"{march}.elf"),
                            (["-c"], f"{march}.o")):
            target = out / name
            subprocess.run([GCC, f"-march={march}", f"-mabi={mabi}", "-O0", "-g", *extra, "-o", str(target),
                            str(source)], check=True, capture_output=True, timeout=120)
            built.append(target)
    return built


def test_compiled_programs_and_objects_read_as_pyelftools_reads_them(compiled):
    for path in compiled:
        data = path.read_bytes()
        mine = assert_same_as_pyelftools(data)
        names = {row[0] for row in mine[".symtab"]}
        assert {"compute", "counter", "table", "helper", "hidden"} <= names, path.name
        elf = ElfFile(data)
        assert any(s.name.startswith(".debug_") for s in elf.sections)
        assert riscv_isa(elf).xlen == (32 if "rv32" in path.name else 64)


def test_a_host_executable_with_dynamic_symbols_reads_as_pyelftools_reads_it():
    host = shutil.which("ls")
    if host is None or not Path(host).read_bytes().startswith(b"\x7fELF"):
        pytest.skip("no ELF host executable")
    mine = assert_same_as_pyelftools(Path(host).read_bytes())
    assert mine[".dynsym"]


# --------------------------------------------------------------------------- bad files


def _image(bits: int = 32, endian: str = "little") -> bytes:
    return build_elf(bits=bits, endian=endian, entry=0x100, segments=[(0x100, EXIT7)],
                     symbols={"_start": 0x100, "done": 0x104})


def _put(data: bytes, offset: int, fmt: str, value: int, endian: str = "little") -> bytes:
    out = bytearray(data)
    struct.pack_into(("<" if endian == "little" else ">") + fmt, out, offset, value)
    return bytes(out)


_HEADER = {32: {"e_phoff": (28, "I"), "e_shoff": (32, "I"), "e_phentsize": (42, "H"), "e_phnum": (44, "H"),
                "e_shentsize": (46, "H"), "e_shnum": (48, "H"), "e_shstrndx": (50, "H")},
           64: {"e_phoff": (32, "Q"), "e_shoff": (40, "Q"), "e_phentsize": (54, "H"), "e_phnum": (56, "H"),
                "e_shentsize": (58, "H"), "e_shnum": (60, "H"), "e_shstrndx": (62, "H")}}
_SHDR = {32: {"sh_name": (0, "I"), "sh_type": (4, "I"), "sh_offset": (16, "I"), "sh_size": (20, "I"),
              "sh_link": (24, "I"), "sh_entsize": (36, "I")},
         64: {"sh_name": (0, "I"), "sh_type": (4, "I"), "sh_offset": (24, "Q"), "sh_size": (32, "Q"),
              "sh_link": (40, "I"), "sh_entsize": (56, "Q")}}


def with_header(data: bytes, bits: int, endian: str, **fields: int) -> bytes:
    for name, value in fields.items():
        offset, fmt = _HEADER[bits][name]
        data = _put(data, offset, fmt, value, endian)
    return data


def with_section(data: bytes, name: str, **fields: int) -> bytes:
    elf = ElfFile(data)
    bits, endian = elf.header.elfclass, elf.header.endian
    section = elf.section_by_name(name)
    assert section is not None
    base = elf.header.e_shoff + section.number * elf.header.e_shentsize
    for field, value in fields.items():
        offset, fmt = _SHDR[bits][field]
        data = _put(data, base + offset, fmt, value, endian)
    return data


def refused(data: bytes, read=lambda elf: (elf.segments, elf.sections, list(elf.symbols()))) -> str:
    """The message of the ElfFormatError reading ``data`` raises (quickly, nothing else)."""
    start = time.perf_counter()
    with pytest.raises(ElfFormatError) as info:
        read(ElfFile(data))
    assert time.perf_counter() - start < 0.5
    return str(info.value)


@pytest.mark.parametrize(("bits", "endian"), LAYOUTS)
def test_cut_short_at_every_offset_reads_the_same_or_refuses(bits, endian):
    data = _image(bits, endian)
    full = ours(data)
    assert "error" not in full.values()
    for n in range(len(data)):
        cut = ours(data[:n])
        for key, value in cut.items():
            assert value in ("error", full[key]), (n, key)
        assert (cut["header"] == "error") == (n < (52 if bits == 32 else 64)), n


def test_cut_short_at_every_offset_loads_the_same_or_is_one_load_error(write):
    data = _image()
    path = write("t.elf", data)
    full = load_elf(Machine(TOY), path, data)
    outcomes = set()
    for n in range(4, len(data)):  # shorter than the magic: "not an ELF file"
        try:
            loaded = load_elf(Machine(TOY), path, data[:n])
        except LoadError as exc:
            outcomes.add("truncated" if "is truncated" in str(exc) else str(exc))
            continue
        assert (loaded.entry, loaded.segments) == (full.entry, full.segments)
        assert loaded.symbols in (full.symbols, {})  # a lost section table loses only the symbols
        outcomes.add("loaded")
    assert outcomes == {"truncated", "loaded"}


@pytest.mark.parametrize(("bits", "endian"), [(32, "little"), (64, "big")])
def test_huge_counts_are_refused_before_any_loop(bits, endian):
    data = _image(bits, endian)
    msg = refused(with_header(data, bits, endian, e_phnum=0xFFFE), lambda elf: elf.segments)
    assert "program header" in msg and "of 65534 lies past the end of the file" in msg
    msg = refused(with_header(data, bits, endian, e_shnum=0xFEFF), lambda elf: elf.sections)
    assert "section header" in msg and "of 65279 lies past the end" in msg
    # extended numbering: section 0 claims 2**31 sections / program headers
    big = _extended_numbering(data, bits, endian)
    shoff = ElfFile(data).header.e_shoff
    size_at = shoff + (20 if bits == 32 else 32)
    msg = refused(_put(big, size_at, "I" if bits == 32 else "Q", 1 << 31, endian), lambda elf: elf.sections)
    assert "of 2147483648 lies past the end" in msg
    info_at = shoff + (28 if bits == 32 else 44)
    msg = refused(_put(big, info_at, "I", 1 << 31, endian), lambda elf: elf.segments)
    assert "program header" in msg and "of 2147483648" in msg


@pytest.mark.parametrize(("bits", "endian"), [(32, "big"), (64, "little")])
def test_offsets_past_the_end_are_refused(bits, endian):
    data = _image(bits, endian)
    far = (1 << bits) - 8
    assert "lies past the end" in refused(with_header(data, bits, endian, e_phoff=far), lambda e: e.segments)
    assert "lies past the end" in refused(with_header(data, bits, endian, e_shoff=far), lambda e: e.sections)
    msg = refused(with_section(data, ".text", sh_offset=far), lambda e: e.section_data(e.sections[1]))
    assert msg.startswith("section 1 (.text) lies past the end of the file")
    msg = refused(with_section(data, ".text", sh_size=1 << (bits - 1)),
                  lambda e: e.section_data(e.sections[1]))
    assert "lies past the end of the file" in msg
    seg = ElfFile(data).segments[0]
    phdr = ElfFile(data).header.e_phoff
    filesz_at = phdr + (16 if bits == 32 else 32)
    grown = _put(data, filesz_at, "I" if bits == 32 else "Q", len(data), endian)
    msg = refused(grown, lambda e: e.segment_data(e.segments[0]))
    assert msg.startswith("segment 0 lies past the end of the file")
    assert ElfFile(data).segment_data(seg) == EXIT7  # the untouched file reads


def test_program_headers_at_offset_zero_or_smaller_than_their_size_are_refused():
    data = _image()
    assert "e_phoff is 0" in refused(with_header(data, 32, "little", e_phoff=0), lambda e: e.segments)
    assert "e_phentsize is 8" in refused(with_header(data, 32, "little", e_phentsize=8), lambda e: e.segments)
    assert "e_shentsize is 0" in refused(with_header(data, 32, "little", e_shentsize=0), lambda e: e.sections)


def test_bad_links_and_string_offsets_are_refused():
    data = _image()
    count = ElfFile(data).section_count
    msg = refused(with_section(data, ".symtab", sh_link=count + 5))
    assert f"links to string table {count + 5}, which is not a section" in msg
    assert "which is not a section" in refused(with_section(data, ".symtab", sh_link=0))
    assert "not a string table" in refused(with_section(data, ".symtab", sh_link=1))
    assert "entry size 0" in refused(with_section(data, ".symtab", sh_entsize=0))
    assert "not a whole number" in refused(with_section(data, ".symtab", sh_size=17))
    assert "not a symbol table" in refused(with_section(data, ".symtab", sh_type=1))
    msg = refused(with_section(data, ".text", sh_name=0x7FFF_FFF0), lambda e: e.sections)
    assert msg.startswith("section 1's name (string offset 0x7ffffff0) runs past the end")
    assert "section-name string table is section 99" in refused(
        with_header(data, 32, "little", e_shstrndx=99), lambda e: e.sections)
    # a symbol's name beyond its string table
    elf = ElfFile(data)
    symtab = elf.section_by_name(".symtab")
    bad = _put(data, symtab.sh_offset + 16, "I", 0x10000)  # symbol 1's st_name
    assert "symbol 1's name (string offset 0x10000) runs past the end" in refused(bad)
    # a name that is not NUL-terminated inside its table
    strtab = elf.sections[symtab.sh_link]
    unterminated = bytearray(data)
    unterminated[strtab.sh_offset + strtab.sh_size - 1] = ord("x")
    assert "runs past the end of its string table" in refused(bytes(unterminated))


def test_a_damaged_symbol_table_loses_only_the_symbols(write):
    data = with_section(_image(), ".symtab", sh_link=77)
    loaded = load_elf(Machine(TOY), write("p.elf", data), data)
    assert loaded.entry == 0x100 and loaded.segments == [(0x100, len(EXIT7))] and loaded.symbols == {}
    assert label_symbols(ElfFile(data)) == {}
    assert label_symbols(ElfFile(_image())) == {0x100: "_start", 0x104: "done"}


def test_bad_program_headers_are_one_load_error(write):
    data = with_header(_image(), 32, "little", e_phnum=0xFFFE)
    with pytest.raises(LoadError, match=r"p.elf is truncated: program header \d+ of 65534 lies past"):
        load_elf(Machine(TOY), write("p.elf", data), data)
    data = with_header(_image(), 32, "little", e_phentsize=8)
    with pytest.raises(LoadError, match=r"p.elf is a malformed ELF file: e_phentsize is 8, less than"):
        load_elf(Machine(TOY), write("p.elf", data), data)


def test_identification_errors():
    assert "bad magic" in str(pytest.raises(ElfFormatError, ElfFile, b"\x7fELX" + bytes(60)).value)
    assert "bad magic" in str(pytest.raises(ElfFormatError, ElfFile, b"\x7fE").value)
    ident = b"\x7fELF\x03\x01\x01" + bytes(60)
    assert "unknown ELF class 3" in str(pytest.raises(ElfFormatError, ElfFile, ident).value)
    ident = b"\x7fELF\x01\x05\x01" + bytes(60)
    assert "unknown ELF data encoding 5" in str(pytest.raises(ElfFormatError, ElfFile, ident).value)
    short = _image(64)[:60]
    assert "shorter than the 64-byte ELF64 header" in str(pytest.raises(ElfFormatError, ElfFile, short).value)


def _identification(bits: int, endian: str) -> bytes:
    return b"\x7fELF" + bytes([bits // 32, 1 if endian == "little" else 2, 1]) + bytes(9)


@settings(deadline=None, max_examples=300)
@given(layout=st.sampled_from(LAYOUTS), tail=st.binary(min_size=0, max_size=600))
def test_random_bytes_after_a_valid_identification_never_raise_anything_else(layout, tail):
    parts = ours(_identification(*layout) + tail)
    assert parts["header"] == "error" or len(parts) >= 4


@settings(deadline=None, max_examples=300)
@given(layout=st.sampled_from(LAYOUTS), flips=st.lists(st.tuples(st.integers(0, 10_000), st.integers(0, 255)),
                                                      min_size=1, max_size=8))
def test_random_damage_to_a_valid_file_never_raises_anything_else(layout, flips):
    data = bytearray(synthetic(*layout))
    for where, value in flips:
        data[16 + where % (len(data) - 16)] = value  # keep the identification
    parts = ours(bytes(data))
    assert parts["header"] != "error"  # the header is fixed-size: any values read


# --------------------------------------------------------------------------- start-up cost

_NO_ELFTOOLS = textwrap.dedent("""
    import sys
    sys.path.insert(0, {here!r})
    from elfgen import build_elf, riscv_attributes
    import tessera.loaders.elf as elf
    from tessera.loaders import load_program
    from tessera.machine import Machine
    from tessera_toyarch import TOY
    data = build_elf(entry=0x100, segments=[(0x100, bytes(8))], symbols={{"_start": 0x100}},
                     attributes=riscv_attributes("rv32i2p1"))
    with open(sys.argv[1], "wb") as fh:
        fh.write(data)
    loaded = load_program(Machine(TOY), sys.argv[1])
    assert loaded.symbols == {{"_start": 0x100}}, loaded.symbols
    elf.elf_extensions(data), elf.label_symbols(elf.open_elf(data, "p"))
    print(sorted(m for m in sys.modules if m.split(".")[0] in ("elftools", "construct")))
""")


def test_loading_an_elf_never_imports_pyelftools(tmp_path):
    here = str(Path(__file__).resolve().parent)
    proc = subprocess.run([sys.executable, "-c", _NO_ELFTOOLS.format(here=here), str(tmp_path / "p.elf")],
                          capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "[]"
