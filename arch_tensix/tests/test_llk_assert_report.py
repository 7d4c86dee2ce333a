"""A baby core's ``ebreak`` — how tt-llk's LLK_ASSERT stops a core (``common/llk_assert.h``
under ``ENV_LLK_INFRA``) — is reported as a failed LLK_ASSERT naming the core, the pc and,
from the ELF, the function and ``file:line`` (tessera_tensix.tile.asserts, .sourcepos).

The reports are checked on hand-made ELFs and source files (no compiler); one end-to-end
case (marked ``llk_build``) builds tt-llk's ``pack_rows_test`` with a row count its
LLK_ASSERT refuses and checks the command-line line, DWARF lookup included.
"""

from __future__ import annotations

import struct
from pathlib import Path

import pytest
from tensix_llk_support import require_llk, tessera
from tensix_tile_support import image, manifest, run_kernel

from tessera.errors import UnhandledTrap
from tessera_tensix.tile import asserts, sourcepos
from tessera_tensix.tile.sourcepos import Frame, Place


def elf_with_symbols(path: Path, segments: list[tuple[int, bytes]], entry: int,
                     functions: dict[str, tuple[int, int]]) -> Path:
    """A little-endian ELF32 RISC-V executable: one PT_LOAD per segment, and a ``.symtab`` of
    ``functions`` (name -> (address, size), STT_FUNC) with its ``.strtab`` and ``.shstrtab``."""
    strtab = b"\0" + b"".join(n.encode() + b"\0" for n in functions)
    symtab = bytes(16)
    at = 1
    for name, (value, size) in functions.items():
        symtab += struct.pack("<IIIBBH", at, value, size, (1 << 4) | 2, 0, 0xFFF1)   # GLOBAL FUNC, ABS
        at += len(name) + 1
    shstrtab = b"\0.symtab\0.strtab\0.shstrtab\0"
    head, ph = 52, 32
    offset = head + ph * len(segments)
    headers, blobs = b"", b""
    for address, blob in segments:
        headers += struct.pack("<8I", 1, offset + len(blobs), address, address, len(blob), len(blob), 7, 4)
        blobs += blob
    tables = offset + len(blobs)
    sym_off, str_off = tables, tables + len(symtab)
    shs_off = str_off + len(strtab)
    sh_off = (shs_off + len(shstrtab) + 3) // 4 * 4
    pad = bytes(sh_off - shs_off - len(shstrtab))
    sections = bytes(40) + struct.pack("<10I", 1, 2, 0, 0, sym_off, len(symtab), 2, 1, 4, 16) \
        + struct.pack("<10I", 9, 3, 0, 0, str_off, len(strtab), 0, 0, 1, 0) \
        + struct.pack("<10I", 17, 3, 0, 0, shs_off, len(shstrtab), 0, 0, 1, 0)
    ident = b"\x7fELF" + bytes([1, 1, 1]) + bytes(9)
    header = ident + struct.pack("<HHIIIIIHHHHHH", 2, 0xF3, 1, entry, head, sh_off, 0, head, ph, len(segments),
                                 40, 4, 3)
    path.write_bytes(header + headers + blobs + symtab + strtab + shstrtab + pad + sections)
    return path


# ------------------------------------------------------------------ the report's wording


def test_a_failed_llk_assert_is_quoted_from_its_source_line(tmp_path):
    """The line table leads to the LLK_ASSERT call, which may span lines: the report quotes
    the whole call (what failed), names the function and the kernel line it was inlined into."""
    header = tmp_path / "tt-llk" / "tt_llk_blackhole" / "llk_lib" / "llk_pack_rows.h"
    header.parent.mkdir(parents=True)
    header.write_text("inline void init(int num_rows) {\n    LLK_ASSERT(num_rows >= 1 &&\n"
                      "               num_rows <= 64, \"num_rows must be between 1 and 64\");\n}\n")
    place = Place((Frame("_llk_pack_rows_init_", str(header), 2),
                   Frame("run_kernel", "/x/tt-llk/tests/sources/pack_rows_test.cpp", 97)))
    text = asserts.describe("trisc2", place)
    assert text.startswith("trisc2: the kernel's LLK_ASSERT failed: ")
    assert 'LLK_ASSERT(num_rows >= 1 && num_rows <= 64, "num_rows must be between 1 and 64")' in text
    assert "in _llk_pack_rows_init_ (tt-llk/tt_llk_blackhole/llk_lib/llk_pack_rows.h:2" in text
    assert "inlined into run_kernel at tt-llk/tests/sources/pack_rows_test.cpp:97)" in text
    assert "\n" not in text


def test_an_ebreak_that_is_not_an_assert_says_what_it_is(tmp_path):
    """tt-llk's hal headers call __builtin_trap(), which gcc also compiles to ebreak: the source
    line tells the two apart; with no line information the report still names LLK_ASSERT."""
    src = tmp_path / "field.h"
    src.write_text("void f() {\n    __builtin_trap();\n}\n")
    trap = asserts.describe("trisc0", Place((Frame("f", str(src), 2),)))
    assert trap == f"trisc0: the kernel reached __builtin_trap() in f ({src}:2)"
    bare = asserts.describe("brisc", None)
    assert bare.startswith("brisc stopped at an ebreak: the kernel's LLK_ASSERT failed")
    named = asserts.describe("trisc1", Place((Frame("_Z10run_kernelv"),)))
    assert named == "trisc1 stopped at an ebreak (how tt-llk's LLK_ASSERT fails) in _Z10run_kernelv"


def test_statements_are_read_until_their_parentheses_close(tmp_path):
    src = tmp_path / "a.h"
    src.write_text("x;\nLLK_ASSERT(a,\n  b(c));\nnext();\n")
    assert sourcepos.read_statement(str(src), 2) == "LLK_ASSERT(a, b(c));"
    assert sourcepos.read_statement(str(src), 9) is None
    assert sourcepos.read_statement(str(tmp_path / "missing.h"), 1) is None
    assert sourcepos.short_path("/root/.cache/ttnn/tt_metal/tt-llk/tests/sources/k.cpp") == "tt-llk/tests/sources/k.cpp"


def test_the_symbol_table_names_the_function_without_debug_information(tmp_path):
    elf = elf_with_symbols(tmp_path / "k.elf", [(0x100, bytes(32))], 0x100,
                           {"first": (0x100, 8), "second": (0x108, 24)})
    assert sourcepos.symbol_at(str(elf), 0x10C) == "second"
    assert sourcepos.symbol_at(str(elf), 0x200) is None
    place = sourcepos.locate(str(elf), 0x104)       # no DWARF: the symbol alone
    assert place is not None and place.inner == Frame("first")
    assert sourcepos.locate(str(tmp_path / "none.elf"), 0) is None


# ------------------------------------------------------------------ on the tile


@pytest.mark.parametrize("chip", ["bh", "wh"])
def test_an_ebreak_on_the_tile_is_a_one_line_assert_report_with_the_old_exit_status(tmp_path, chip):
    """RISCV B executes ebreak in a function its ELF names: the run stops as an unhandled
    breakpoint (exit status 68, cause 3, the pc of the ebreak), reported as LLK_ASSERT's."""
    path = manifest(tmp_path, chip, {"brisc": "nop\nebreak\n"})
    segments = image(chip, "nop\nebreak\n", 0x0)
    elf_with_symbols(tmp_path / "brisc.elf", segments, 0x0, {"check_shapes": (0x0, 8)})
    with pytest.raises(UnhandledTrap) as info:
        run_kernel(path)
    exc = info.value
    assert (exc.exit_code, exc.cause, exc.agent, exc.pc) == (68, 3, "brisc", 4)
    assert str(exc) == ("unhandled trap: brisc stopped at an ebreak (how tt-llk's LLK_ASSERT fails) in check_shapes "
                        "(agent brisc, pc 0x00000004, word 0x100073)")


def test_other_unhandled_traps_keep_their_message(tmp_path):
    """Only the breakpoint is reworded: an illegal instruction still says what it is."""
    path = manifest(tmp_path, "bh", {"brisc": ".word 0xffffffff\n"})
    with pytest.raises(UnhandledTrap) as info:
        run_kernel(path)
    assert info.value.cause == 2 and "illegal instruction" in str(info.value) and "LLK_ASSERT" not in str(info.value)


# ------------------------------------------------------------------ a tt-llk kernel (compiler and cache)


@pytest.mark.llk_build
def test_a_kernel_whose_llk_assert_fails_names_it_with_function_and_line(tmp_path):
    """pack_rows_test with NUM_ROWS_TO_PACK=0: _llk_pack_rows_init_ asserts 1 <= rows <= 64 on
    the pack core; the line comes from the ELF's DWARF (inlined into the kernel's run_kernel)."""
    require_llk()
    built = tessera("tensix", "build", "pack_rows_test", "--chip", "blackhole", "--param", "NUM_ROWS_TO_PACK=0",
                    "-o", str(tmp_path / "k"), "--offline", "--jobs", "2")
    assert built.returncode == 0, built.stderr
    done = tessera("run", str(tmp_path / "k" / "kernel.toml"), "--max-steps", "5000000")
    assert done.returncode == 68, done.stderr
    line = done.stderr.strip()
    assert line.count("\n") == 0 and line.startswith("tessera: unhandled trap: trisc2: the kernel's LLK_ASSERT failed: ")
    assert 'LLK_ASSERT(num_rows >= 1 && num_rows <= MAX_ROWS, "num_rows must be between 1 and 64")' in line
    assert "in _llk_pack_rows_init_ (tt-llk/tt_llk_blackhole/llk_lib/llk_pack_rows.h:" in line
    assert "inlined into run_kernel at tt-llk/tests/sources/pack_rows_test.cpp:" in line
    assert "(agent trisc2, pc 0x" in line
