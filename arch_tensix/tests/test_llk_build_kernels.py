"""tt-llk's own test kernels compiled here (``tessera tensix build``): needs Debian's
riscv64-unknown-elf-g++ and the cache that ``tessera tensix fetch`` fills; skipped without them."""

from __future__ import annotations

import os
import re
import struct
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest
from tensix_llk_support import require_llk

from tessera_tensix.llk import chips, formats, wheel

pytestmark = pytest.mark.llk_build

#: the issue's kernels that tt-llk 0.81.1 has in a buildable state (multiple_tiles_eltwise_test is stale
#: vendor code and eltwise_unary_typecast_test needs SFPI: both are checked below)
LISTED = ["eltwise_unary_datacopy_test", "eltwise_binary_test", "matmul_test", "math_matmul_test", "reduce_test",
          "unpack_tilize_test", "pack_untilize_test", "transpose_dest_test", "pack_test", "unpack_A_test"]
#: where each core's code starts (the ELF entry), per chip: tests/helpers/ld/memory.<chip>.ld
ENTRIES = {"blackhole": {"brisc": 0x0, "trisc0": 0x6000, "trisc1": 0xB000, "trisc2": 0x10000},
           "wormhole_b0": {"brisc": 0x0, "trisc0": 0x5000, "trisc1": 0x9800, "trisc2": 0xE000}}


@pytest.fixture(scope="module", autouse=True)
def _ready():
    require_llk()


def tessera(*args: str) -> subprocess.CompletedProcess:
    script = Path(sys.executable).parent / "tessera"
    cmd = [str(script)] if script.exists() else [sys.executable, "-m", "tessera.cli.main"]
    env = {k: v for k, v in os.environ.items() if not k.startswith("TESSERA_") or k == "TESSERA_CACHE"}
    env["TESSERA_PLUGINS"] = "tensix"
    return subprocess.run(cmd + ["tensix", "build", *args, "--offline", "--jobs", "2"], capture_output=True,
                          text=True, env=env, timeout=900)


def elf_text_words(path: Path) -> tuple[int, int, list[int]]:
    """(e_machine, e_entry, the words of every executable section) of a 32-bit ELF."""
    data = path.read_bytes()
    assert data[:4] == b"\x7fELF" and data[4] == 1
    machine, entry, shoff = struct.unpack_from("<H", data, 18)[0], *struct.unpack_from("<I", data, 24), \
        struct.unpack_from("<I", data, 32)[0]
    shentsize, shnum = struct.unpack_from("<HH", data, 46)
    words = []
    for i in range(shnum):
        _n, kind, flags, _a, off, size = struct.unpack_from("<6I", data, shoff + i * shentsize)
        if kind == 1 and flags & 4:                       # PROGBITS, SHF_EXECINSTR
            words += struct.unpack_from(f"<{size // 4}I", data, off)
    return machine, entry, words


def tensix_opcodes(words: list[int]) -> set[int]:
    """Opcodes of the Tensix instructions among code words: a word whose low bits are not 0b11 is
    one, rotated left by two (RV32IM has no 16-bit instructions)."""
    return {(((w >> 2) | (w << 30)) & 0xFFFFFFFF) >> 24 for w in words if w & 3 != 3}


@pytest.mark.parametrize("chip", ["blackhole", "wormhole_b0"])
def test_datacopy_builds_into_four_elfs_and_a_manifest(tmp_path, chip):
    res = tessera("eltwise_unary_datacopy_test", "--chip", chip, "--format", "Float16_b", "-o", str(tmp_path))
    assert res.returncode == 0, res.stderr
    doc = tomllib.loads((tmp_path / "kernel.toml").read_text())
    assert doc["chip"] == chip and doc["kernel"] == "eltwise_unary_datacopy_test"
    for core, file in doc["cores"].items():
        machine, entry, words = elf_text_words(tmp_path / file)
        assert machine == 243 and entry == ENTRIES[chip][core] == doc["placement"][core]["entry"]
        assert doc["placement"][core]["ldm_data_start"] == 0xFFB00000
    _m, _e, brisc = elf_text_words(tmp_path / "brisc.elf")
    # BRISC's device_setup: ZEROACC, NOP, SFPENCC, SFPCONFIG, SEMINIT
    assert tensix_opcodes(brisc) == {0x10, 0x02, 0x8A, 0x91, 0xA3}
    _m, _e, unpack = elf_text_words(tmp_path / "unpack.elf")
    assert {0x01, 0xA2, 0xB2} <= tensix_opcodes(unpack)   # MOP, STALLWAIT, SETC16
    (a,), (out,) = doc["inputs"], doc["outputs"]
    assert (a["name"], a["address"], a["format"], a["tiles"]) == ("A", chips.BUFFERS_BASE, "Float16_b", 1)
    assert (out["name"], out["address"]) == ("res", chips.BUFFERS_BASE + 2048)
    assert doc["runtime_args"]["words"][:7] == [128, 128, 128, a["address"], 2048, out["address"], 2048]
    kernel_cpp = (tmp_path / "build" / "kernel.cpp").read_text()
    assert kernel_cpp == "#include <sources/eltwise_unary_datacopy_test.cpp>\n#include <trisc.cpp>\n"


@pytest.mark.parametrize("chip", ["blackhole", "wormhole_b0"])
@pytest.mark.parametrize("kernel", LISTED)
def test_listed_kernels_build(tmp_path, kernel, chip):
    res = tessera(kernel, "--chip", chip, "-o", str(tmp_path))
    assert res.returncode == 0, res.stderr
    doc = tomllib.loads((tmp_path / "kernel.toml").read_text())
    assert doc["outputs"][0]["name"] == "res" and doc["inputs"][0]["name"] == "A"
    assert all((tmp_path / f).stat().st_size > 1000 for f in doc["cores"].values())


def test_formats_tiles_and_dest_mode_reach_the_runtime_arguments(tmp_path):
    res = tessera("eltwise_unary_datacopy_test", "--chip", "wh", "--format", "Float32", "--dest-acc", "--tiles", "8",
                  "-o", str(tmp_path))
    assert res.returncode == 0, res.stderr
    doc = tomllib.loads((tmp_path / "kernel.toml").read_text())
    assert doc["config"]["unpack_to_dest"] and doc["config"]["dest_acc"]
    assert doc["config"]["runtime"]["NUM_BLOCKS"] == 2 and doc["config"]["runtime"]["NUM_TILES_IN_BLOCK"] == 4
    assert doc["inputs"][0]["tiles"] == 8 and doc["outputs"][0]["address"] == chips.BUFFERS_BASE + 8 * 4096
    assert "constexpr bool is_fp32_dest_acc_en = true;" in (tmp_path / "build" / "build.h").read_text()


def test_the_operation_changes_the_math_code(tmp_path):
    texts = {}
    for op in ("add", "mul"):
        res = tessera("eltwise_binary_test", "--op", op, "-o", str(tmp_path / op))
        assert res.returncode == 0, res.stderr
        texts[op] = elf_text_words(tmp_path / op / "math.elf")[2]
    assert "ELWMUL" in (tmp_path / "mul" / "build" / "build.h").read_text()
    assert texts["add"] != texts["mul"]


def test_kernels_that_need_sfpi_are_named(tmp_path):
    res = tessera("eltwise_unary_typecast_test", "-o", str(tmp_path))
    assert res.returncode == 64 and res.stderr.count("\n") == 1
    assert "uses SFPI vector types" in res.stderr and "cannot be built here" in res.stderr


def test_stale_vendor_source_fails_with_its_first_error(tmp_path):
    res = tessera("multiple_tiles_eltwise_test", "-o", str(tmp_path))
    assert res.returncode == 64 and "math part does not compile" in res.stderr
    assert (tmp_path / "build" / "math.log").read_text().count("error:") >= 1


def test_format_numbers_are_the_vendors():
    root = wheel.tt_metal(download=False) / "hw" / "inc" / "internal" / "tt-1xx"
    for header in (root / "blackhole" / "tensix_types.h", root / "wormhole" / "wormhole_b0_defines" / "tensix_types.h"):
        text = header.read_text()
        body = text[text.index("enum class DataFormat"):]
        body = body[:body.index("};")]
        vendor = {m.group(1): int(m.group(2), 0) for m in re.finditer(r"(\w+)\s*=\s*(0x[0-9A-Fa-f]+|\d+)", body)}
        for name, value in formats.ENUM.items():
            if name in vendor:
                assert vendor[name] == value, (header, name)
        assert set(formats.ENUM) - {"Fp8_e4m3"} <= set(vendor)
