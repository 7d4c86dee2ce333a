"""The tt-llk kernel shipped for ``tessera demo`` (``tessera_tensix/tile/prebuilt``).

* On both chips the prebuilt ``eltwise_unary_datacopy_test`` runs to its end, its result
  in L1 equals its golden, and ``tessera demo`` shows it among the tile's four examples;
* the example's check catches a wrong result (naming the element), and a wrong golden
  fails the run as ``tessera run`` fails it;
* everything in ``prebuilt/`` is package data (the wheel installs it), with its licence;
* the shipped ELFs and manifest are what ``tessera tensix build`` builds today: rebuilt
  into a temporary directory, every loaded section's bytes and the manifest are the
  same (needs the compiler and the tt-llk cache; skipped with the reason otherwise).
"""

from __future__ import annotations

import fnmatch
import functools
import shutil
import struct
import tomllib
from pathlib import Path

import numpy as np
import pytest
from tensix_llk_support import tessera

import tessera_tensix
from tessera.cli.demo import load_example, run_example
from tessera.engine import HALTED
from tessera.errors import CheckFailed
from tessera.machine import Machine
from tessera.plugins import PluginHost
from tessera_tensix.examples.tile import PREBUILT, check_golden, llk_example
from tessera_tensix.tile.arch import TILE_BH, TILE_WH

PACKAGE = Path(tessera_tensix.__file__).parent
PREBUILT_DIR = PACKAGE / "tile" / "prebuilt"
ARCH = {"bh": TILE_BH, "wh": TILE_WH}
CORES = ("brisc", "unpack", "math", "pack")
#: the input the README describes: element i = (i mod 17) - 8
A = (np.arange(1024) % 17 - 8).astype(np.float32)


@functools.cache
def host() -> PluginHost:
    """A host of this module's own, as a fresh process has (the Tensix plugin's program format)."""
    return PluginHost()


def run(chip: str, example=None):
    """A tile machine that ran ``example`` (default: the shipped one of ``chip``), and its result."""
    machine = Machine(ARCH[chip], host=host())
    example = example or llk_example(chip)
    load_example(machine, example)
    return machine, machine.run(max_steps=example.max_steps, raise_on_budget=False)


def result_of(machine) -> np.ndarray:
    from tessera_tensix.tile import kernel

    (res,) = machine.ext.get("tensix_kernel").outputs
    return kernel.read_output(machine.ext["tensix"].l1, res)


@pytest.mark.parametrize("chip", ["bh", "wh"])
def test_the_shipped_kernel_copies_its_tile(chip):
    example = llk_example(chip)
    assert example.program_path() == str(PREBUILT_DIR / PREBUILT[chip] / "run.toml")
    machine, result = run(chip)
    assert result.reason == "halted", result.detail
    cores = ("brisc", "trisc0", "trisc1", "trisc2")
    assert {name: machine.agent(name).status for name in cores} == dict.fromkeys(cores, HALTED)
    assert np.array_equal(result_of(machine), A)
    assert np.array_equal(np.load(PREBUILT_DIR / PREBUILT[chip] / "golden.npy"), A)
    assert check_golden(machine, result) is None
    ok, summary = run_example(host(), ARCH[chip], example)
    assert ok, summary


@pytest.mark.parametrize("arch", ["tensix-tile", "tensix-tile-wh"])
def test_demo_runs_the_four_tile_examples(arch):
    done = tessera("demo", "--arch", arch)
    assert done.returncode == 0, done.stdout + done.stderr
    ends = [line for line in done.stdout.splitlines() if line.startswith("-- ")]
    assert [line.split(":")[0] for line in ends] == [f"-- {arch}/{name}" for name in
                                                    ("datacopy", "eltwise-add", "matmul", "llk-datacopy")]
    assert all(": ok (" in line and "halted" in line for line in ends), ends


def test_the_check_names_the_first_wrong_element():
    machine, result = run("bh")
    (res,) = machine.ext.get("tensix_kernel").outputs
    l1 = machine.ext["tensix"].l1
    element = 37   # Float16_b: two bytes per element; A[37] = -5.0 (0xC0A0), make it -4.0 (0xC080)
    l1.write(res.address + 2 * element, np.frombuffer(struct.pack("<H", 0xC080), dtype=np.uint8), who="test")
    problem = check_golden(machine, result)
    assert problem is not None and "element 37 (tile 0, face 0, row 2, column 5) is -4.0, expected -5.0" in problem


def test_a_wrong_golden_fails_the_example(tmp_path):
    copy = tmp_path / "bh"
    shutil.copytree(PREBUILT_DIR / "blackhole", copy)
    golden = A.copy()
    golden[100] = 2.5   # A[100] = 100 mod 17 - 8 = 7
    np.save(copy / "golden.npy", golden)
    example = llk_example("bh")
    from tessera.isa import Example

    wrong = Example(name=example.name, description=example.description, program=str(copy / "run.toml"),
                    max_steps=example.max_steps, check=example.check)
    with pytest.raises(CheckFailed, match=r"element 100 .* is 7\.0, expected 2\.5"):
        run_example(host(), TILE_BH, wrong)


def test_a_kernel_that_does_not_finish_fails_its_check():
    example = llk_example("wh")
    machine, result = run("wh", type(example)(name=example.name, description=example.description,
                                              program=example.program, max_steps=500, check=example.check))
    assert result.reason == "budget"
    assert check_golden(machine, result).startswith("the kernel did not finish: the run ended budget")


def test_prebuilt_is_package_data_with_its_licence():
    globs = tomllib.loads((PACKAGE.parents[1] / "pyproject.toml").read_text())["tool"]["setuptools"][
        "package-data"]["tessera_tensix"]
    files = [p.relative_to(PACKAGE).as_posix() for p in PREBUILT_DIR.rglob("*") if p.is_file()
             and "__pycache__" not in p.parts]
    assert len(files) == 4 + 2 * 7
    assert [f for f in files if not any(fnmatch.fnmatch(f, g) for g in globs)] == []
    licence = (PREBUILT_DIR / "LICENSE").read_text()
    assert "Apache License" in licence and "Version 2.0" in licence and "Tenstorrent" in licence
    assert "tt-metal" in (PREBUILT_DIR / "NOTICE").read_text()
    readme = (PREBUILT_DIR / "README.md").read_text()
    assert "tessera tensix build eltwise_unary_datacopy_test --chip $CHIP --format Float16_b" in readme
    for chip in PREBUILT.values():
        assert sorted(p.name for p in (PREBUILT_DIR / chip).iterdir()) == sorted(
            [f"{c}.elf" for c in CORES] + ["run.toml", "A.npy", "golden.npy"])
        assert np.array_equal(np.load(PREBUILT_DIR / chip / "A.npy"), A)
        for core in CORES:
            assert len(loaded_sections((PREBUILT_DIR / chip / f"{core}.elf").read_bytes())) >= 2


# --------------------------------------------------------------------------- rebuilt: the same bytes

def loaded_sections(image: bytes) -> dict[str, tuple[int, bytes]]:
    """``name -> (address, bytes)`` of an ELF32's allocated sections that have bytes in the file."""
    assert image[:4] == b"\x7fELF" and image[4] == 1, "an ELF32"
    shoff, = struct.unpack_from("<I", image, 0x20)
    shentsize, shnum, shstrndx = struct.unpack_from("<HHH", image, 0x2E)
    headers = [struct.unpack_from("<IIIIIIIIII", image, shoff + i * shentsize) for i in range(shnum)]
    names_at = headers[shstrndx][4]

    def name(offset: int) -> str:
        start = names_at + offset
        return image[start:image.index(b"\0", start)].decode()
    sht_nobits, shf_alloc = 8, 2
    return {name(h[0]): (h[3], image[h[4]:h[4] + h[5]]) for h in headers
            if h[2] & shf_alloc and h[1] != sht_nobits and h[5]}


def without_data(manifest: str) -> str:
    """A prebuilt ``run.toml`` as the build wrote it: without the input file and golden lines."""
    return manifest.replace('file = "A.npy"\n', "", 1).replace('golden = "golden.npy"\n', "", 1)


@pytest.mark.llk_build
@pytest.mark.parametrize("chip", ["blackhole", "wormhole_b0"])
def test_prebuilt_is_what_the_tooling_builds(tmp_path, chip):
    from tensix_llk_support import require_llk

    require_llk()
    built = tessera("tensix", "build", "eltwise_unary_datacopy_test", "--chip", chip, "--format", "Float16_b",
                    "-o", str(tmp_path / "k"), "--offline", "--jobs", "2")
    assert built.returncode == 0, built.stderr
    stale = f"tile/prebuilt/{chip} is stale: rebuild it as its README says"
    for core in CORES:
        fresh = loaded_sections((tmp_path / "k" / f"{core}.elf").read_bytes())
        shipped = loaded_sections((PREBUILT_DIR / chip / f"{core}.elf").read_bytes())
        assert ".text" in fresh
        assert sorted(shipped) == sorted(fresh), f"{core}.elf: {stale}"
        for section, (address, data) in fresh.items():
            assert shipped[section] == (address, data), f"{core}.elf section {section}: {stale}"
    manifest = (PREBUILT_DIR / chip / "run.toml").read_text()
    assert without_data(manifest) == (tmp_path / "k" / "kernel.toml").read_text(), f"run.toml: {stale}"
    assert tomllib.loads(manifest)["chip"] == chip
