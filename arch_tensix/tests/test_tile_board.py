"""The Tensix tile: boot through soft reset, private local memory, instruction push, FIFO
back-pressure, deadlock reports and the kernel manifest (tessera_tensix.tile)."""

from __future__ import annotations

import numpy as np
import pytest
from tensix_tile_support import BOOT_BH, EXIT, boot_bh, manifest, run_kernel

from tessera.errors import CheckFailed, Deadlock, LoadError, MemoryFault, UnhandledTrap

NOP = 0x0200_0000
PUSH = "li t0, 0xFFE40000\n"


def tensix_words(source: str) -> list[int]:
    """Tensix instruction words assembled by the Tensix plugin's assembler."""
    from tessera.isa.asm import assemble
    from tessera_tensix.arch import TENSIX_BH

    blob = assemble(TENSIX_BH, source + "\n").segments[0][1]
    return list(np.frombuffer(blob, dtype="<u4").tolist())


def ttinsn(word: int) -> str:
    """A .ttinsn word for ``word`` (the RISC-V word is the value rotated left by 2)."""
    return f".word {((word << 2) | (word >> 30)) & 0xFFFF_FFFF:#x}\n"


def test_brisc_boots_the_triscs_at_their_override_pcs(tmp_path):
    path = manifest(tmp_path, "bh", {
        "brisc": BOOT_BH + EXIT,
        "trisc0": PUSH + f"li t1, {NOP:#x}\nsw t1, 0(t0)\n" + ttinsn(NOP) + EXIT,
        "trisc1": ttinsn(NOP) * 3 + EXIT,
        "trisc2": EXIT})
    m, result = run_kernel(path)
    assert result.reason == "halted"
    by = {a.name: a for a in m.agents}
    assert [by[f"t{i}"].instret for i in range(3)] == [2, 3, 0]     # each thread ran what its core pushed
    assert all(by[c].status == "halted" for c in ("brisc", "trisc0", "trisc1", "trisc2"))
    assert by["trisc1"].instret == 3 + 3                             # three pushes and the exit sequence


def test_cores_held_in_reset_do_not_keep_the_run_going(tmp_path):
    path = manifest(tmp_path, "bh", {"brisc": EXIT, "trisc0": ttinsn(NOP) + EXIT})
    m, result = run_kernel(path)
    assert result.reason == "halted"
    trisc0 = m.agent("trisc0")
    assert trisc0.instret == 0 and trisc0.wait_reason == "trisc0 is held in soft reset"


def test_without_the_override_a_trisc_starts_at_its_fixed_pc(tmp_path):
    # T0 leaves reset at 0x6000 (SoftReset.md); the program there pushes one NOP
    from tensix_tile_support import core_elf

    core_elf(tmp_path, "brisc", "bh", "li t0, 0xFFB12000\nli t1, 0x6000\nsw t1, 0x1B0(t0)\n" + EXIT, 0)
    core_elf(tmp_path, "trisc0", "bh", ttinsn(NOP) + EXIT, 0x6000)
    path = tmp_path / "kernel.toml"
    path.write_text('chip = "bh"\n[cores]\nbrisc = "brisc.elf"\ntrisc0 = "trisc0.elf"\n')
    m, result = run_kernel(path)
    assert result.reason == "halted" and m.agent("t0").instret == 1


def test_local_data_ram_is_private_to_each_core(tmp_path):
    # BRISC stores 42 in its local RAM; T0 reads its own (zero) and exits with it
    path = manifest(tmp_path, "bh", {
        "brisc": "li t2, 0xFFB00000\nli t1, 42\nsw t1, 0(t2)\n" + boot_bh(0) + EXIT,
        "trisc0": "li t2, 0xFFB00000\nlw a0, 0(t2)\nli a7, 93\necall\n"})
    m, result = run_kernel(path)
    assert result.reason == "halted"
    assert m.agent("trisc0").exit_code == 0
    assert m.agent("brisc").space.read(0xFFB00000, 4) == 42
    assert m.agent("trisc0").space.read(0xFFB00000, 4) == 0


def test_local_ram_ends_where_the_chip_says(tmp_path):
    # Blackhole TRISCs have 4 KiB at MEM_LOCAL_BASE: 0xFFB01000 is unmapped for them
    path = manifest(tmp_path, "bh", {"brisc": boot_bh(0) + EXIT,
                                     "trisc0": "li t2, 0xFFB01000\nlw a0, 0(t2)\n" + EXIT})
    with pytest.raises(MemoryFault, match=r"read of unmapped address \(agent trisc0, pc 0x00008004, "
                                          r"address 0xffb01000\)"):
        run_kernel(path)


def test_a_full_fifo_stalls_the_core_and_a_deadlock_names_both_waits(tmp_path):
    # T0's MVMUL waits for SrcA, which the unpackers own after reset and nobody hands
    # over; its core keeps pushing until the FIFO is full: the deadlock names both waits
    mvmul = tensix_words("MVMUL 0, 0, 0, 0")[0]
    path = manifest(tmp_path, "bh", {"brisc": boot_bh(0) + EXIT,
                                     "trisc0": ttinsn(mvmul) + ttinsn(NOP) * 40 + EXIT})
    with pytest.raises(Deadlock) as err:
        run_kernel(path)
    text = str(err.value)
    assert "trisc0" in text and "t0.fifo to have room (29 instructions queued for Tensix T0)" in text
    assert "T0" in text and "SrcA" in text and "at pc 0x8000" in text


def test_a_pushed_all_zero_word_is_a_broken_rule(tmp_path):
    path = manifest(tmp_path, "bh", {"brisc": boot_bh(0) + EXIT, "trisc0": ttinsn(0) + EXIT})
    with pytest.raises(UnhandledTrap, match="all-zero word"):
        run_kernel(path)


def test_kernel_outputs_are_checked_against_their_goldens(tmp_path):
    # BRISC writes 1.0, 2.0 (BF16) at 0x20000; the golden says 1.0, 3.0
    program = "li t0, 0x20000\nli t1, 0x40003F80\nsw t1, 0(t0)\n" + EXIT
    np.save(tmp_path / "good.npy", np.array([1.0, 2.0], dtype=np.float32))
    np.save(tmp_path / "bad.npy", np.array([1.0, 3.0], dtype=np.float32))
    out = '[[outputs]]\nname = "res"\naddress = 0x20000\nformat = "Float16_b"\ncount = 2\nfile = "res.npy"\n'
    path = manifest(tmp_path, "bh", {"brisc": program}, out + 'golden = "good.npy"\n')
    m, result = run_kernel(path)
    assert result.reason == "halted"
    assert np.load(tmp_path / "res.npy").tolist() == [1.0, 2.0]
    path = manifest(tmp_path, "bh", {"brisc": program}, out + 'golden = "bad.npy"\n')
    with pytest.raises(CheckFailed, match=r"output res at 0x20000: element 1 .* is 2\.0, expected 3\.0 "
                                          r"\(1 of 2 elements differ"):
        run_kernel(path)


def test_kernel_inputs_land_in_l1(tmp_path):
    np.save(tmp_path / "a.npy", np.array([1.5, -2.0, 4.0], dtype=np.float32))
    extra = '[[inputs]]\nname = "A"\naddress = 0x1A000\nfile = "a.npy"\nformat = "Float16_b"\n'
    path = manifest(tmp_path, "bh", {"brisc": EXIT}, extra)
    m, _ = run_kernel(path)
    assert m.ext["tensix"].l1.read_as(0x1A000, np.uint16, 3).tolist() == [0x3FC0, 0xC000, 0x4080]


@pytest.mark.parametrize("text, message", [
    ('chip = "gpu"\n[cores]\nbrisc = "b.elf"\n', "chip = 'gpu'"),
    ('chip = "bh"\n[cores]\ntrisc0 = "t.elf"\n', "no brisc ELF"),
    ('chip = "bh"\n[cores]\nbrisc = "b.elf"\nsfpu = "x.elf"\n', "'sfpu' is not a core"),
    ('chip = "bh"\n[cores]\nbrisc = "missing.elf"\n', "cannot open"),
    ('chip = "bh"\n[cores]\nbrisc = "b.elf"\n[[outputs]]\naddress = 0\nformat = "Float16_b"\n', "needs count"),
    ('chip = "bh"\n[cores]\nbrisc = "b.elf"\n[[inputs]]\naddress = 0\nformat = "Bogus"\nfile = "a.npy"\n',
     "format 'Bogus'"),
    ('chip = "bh"\n[cores\n', "not a kernel manifest"),
])
def test_bad_manifests_are_one_line_load_errors(tmp_path, text, message):
    path = tmp_path / "kernel.toml"
    path.write_text(text)
    with pytest.raises(LoadError) as err:
        run_kernel(path)
    assert message in str(err.value) and "\n" not in str(err.value)
