"""The riscv plugin's packaged RV32 ELF: its symbols, patching ``iterations`` through the symbol
table, its source (the core's ``tessera.bench.elfpatch`` on the plugin's ``data/bench``)."""

from __future__ import annotations

import importlib.util
import shutil
from importlib import resources
from pathlib import Path

import pytest

import tessera_riscv.plugin
from tessera.bench.elfpatch import patch_symbol, symbol_location
from tessera.bench.hosts import minimal_host
from tessera.bench.model import BenchFailure
from tessera.loaders.elf import load_elf
from tessera.machine import Machine
from tessera_riscv.bench import ELF_NAME, Rv32Program, elf_image

DATA = Path(str(resources.files("tessera_riscv").joinpath("data", "bench")))


@pytest.fixture(scope="module")
def rv32():
    import tessera_riscv.plugin

    host = minimal_host((tessera_riscv.plugin, "riscv"))
    return host.architecture("rv32im"), host


def run_image(rv32, image: bytes) -> tuple[Machine, int]:
    arch, host = rv32
    machine = Machine(arch, host=host, config={"echo": False, "ram": 1 << 20})
    load_elf(machine, "<test>", image)
    result = machine.run(max_steps=100_000)
    assert result.reason == "halted" and result.exit_code == 0
    return machine, machine.space.read(machine.symbol("result"), 4)


def test_the_package_data_is_there():
    for name in (ELF_NAME, "sum.c", "build.py"):
        assert (DATA / name).is_file(), name
    assert elf_image().startswith(b"\x7fELF")


def test_patching_writes_the_value_at_the_symbols_file_offset():
    image = elf_image()
    offset, size, order = symbol_location(image, "iterations")
    assert (size, order) == (4, "little")
    assert int.from_bytes(image[offset:offset + 4], "little") == 1000     # sum.c's initialiser
    patched = patch_symbol(image, "iterations", 0x01020304)
    assert len(patched) == len(image)
    assert patched[offset:offset + 4] == bytes([4, 3, 2, 1])
    assert patched[:offset] == image[:offset] and patched[offset + 4:] == image[offset + 4:]


def test_the_patched_iteration_count_changes_the_checked_sum(rv32):
    _, unpatched = run_image(rv32, elf_image())
    _, ten = run_image(rv32, patch_symbol(elf_image(), "iterations", 10))
    _, hundred = run_image(rv32, patch_symbol(elf_image(), "iterations", 100))
    assert (unpatched, ten, hundred) == (500500, 55, 5050)


def test_the_bench_program_checks_the_patched_sum(rv32):
    arch, host = rv32
    program = Rv32Program(arch, 7, (tessera_riscv.plugin, "riscv"))
    sample = program.run(program.machine(host, "step"))
    assert program.expected == 28 and sample.count > 3 * 7
    wrong = Rv32Program(arch, 7, (tessera_riscv.plugin, "riscv"))
    wrong.expected = 29
    with pytest.raises(BenchFailure, match="wrong result: result is 0x1c, expected 0x1d"):
        wrong.run(wrong.machine(host))


def test_unknown_symbols_and_oversized_values_are_refused():
    with pytest.raises(BenchFailure, match="no symbol 'nosuch'"):
        patch_symbol(elf_image(), "nosuch", 1)
    with pytest.raises(BenchFailure, match="does not fit"):
        patch_symbol(elf_image(), "iterations", 1 << 32)
    with pytest.raises(BenchFailure, match="not in the file bytes"):
        patch_symbol(elf_image(), "result", 1)     # .sbss: no bytes in the file to patch


@pytest.mark.skipif(shutil.which("riscv64-unknown-elf-gcc") is None,
                    reason="riscv64-unknown-elf-gcc is not installed")
def test_the_source_builds_into_a_program_the_bench_can_patch(rv32, tmp_path):
    spec = importlib.util.spec_from_file_location("bench_elf_build", DATA / "build.py")
    assert spec is not None and spec.loader is not None
    build = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(build)
    out = build.build(tmp_path / "sum.elf")
    _, got = run_image(rv32, patch_symbol(out.read_bytes(), "iterations", 12))
    assert got == 78
