"""tt-llk's own test kernels, compiled here unchanged, run on the tile and match numpy goldens.

Needs what ``tessera tensix build`` needs (Debian's riscv64-unknown-elf-g++ and the cache
``tessera tensix fetch`` fills); skipped with the reason without them.  Inputs are small
integers, so every result is exact in BF16 and the goldens compare exactly.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from tensix_llk_support import require_llk, tessera, tilize, with_data

pytestmark = pytest.mark.llk_build


@pytest.fixture(scope="module", autouse=True)
def _ready():
    require_llk()


RNG = np.random.default_rng(17)
A = RNG.integers(-8, 8, 1024).astype(np.float32)
B = RNG.integers(-8, 8, 1024).astype(np.float32)
GOLDENS = {"add": A + B, "sub": A - B, "mul": A * B}


@pytest.mark.parametrize("chip", ["blackhole", "wormhole_b0"])
def test_datacopy_copies_its_tile(tmp_path, chip):
    built = tessera("tensix", "build", "eltwise_unary_datacopy_test", "--chip", chip, "--format", "Float16_b",
                    "-o", str(tmp_path / "k"), "--offline", "--jobs", "2")
    assert built.returncode == 0, built.stderr
    run = with_data(tmp_path / "k", {"A": A}, A)
    done = tessera("run", str(run), "--max-steps", "20000000")
    assert done.returncode == 0, done.stderr
    assert np.array_equal(np.load(tmp_path / "k" / "res.npy"), A)


@pytest.mark.parametrize("op", ["add", "sub", "mul"])
def test_eltwise_binary_matches_numpy(tmp_path, op):
    built = tessera("tensix", "build", "eltwise_binary_test", "--chip", "blackhole", "--op", op,
                    "-o", str(tmp_path / "k"), "--offline", "--jobs", "2")
    assert built.returncode == 0, built.stderr
    run = with_data(tmp_path / "k", {"A": A, "B": B}, GOLDENS[op])
    done = tessera("run", str(run), "--max-steps", "20000000")
    assert done.returncode == 0, done.stderr


def test_a_corrupted_input_is_a_golden_mismatch_naming_the_element(tmp_path):
    built = tessera("tensix", "build", "eltwise_unary_datacopy_test", "--chip", "blackhole", "-o",
                    str(tmp_path / "k"), "--offline", "--jobs", "2")
    assert built.returncode == 0, built.stderr
    corrupted = A.copy()
    corrupted[37] += 1.0
    run = with_data(tmp_path / "k", {"A": corrupted}, A)
    done = tessera("run", str(run), "--max-steps", "20000000")
    assert done.returncode == 79
    assert "check failed: output res at 0x21800: element 37 (tile 0, face 0, row 2, column 5)" in done.stderr


@pytest.mark.parametrize("chip, rt, kt, ct", [("blackhole", 1, 1, 1), ("wormhole_b0", 1, 1, 1),
                                              ("blackhole", 2, 2, 2)])
def test_matmul_equals_numpy(tmp_path, chip, rt, kt, ct):
    built = tessera("tensix", "build", "matmul_test", "--chip", chip, "--param", f"RT_DIM={rt}",
                    "--param", f"KT_DIM={kt}", "--param", f"CT_DIM={ct}", "-o", str(tmp_path / "k"),
                    "--offline", "--jobs", "2")
    assert built.returncode == 0, built.stderr
    rng = np.random.default_rng(5)
    a = rng.integers(-2, 3, (32 * rt, 32 * kt)).astype(np.float32)   # every product and sum exact in BF16
    b = rng.integers(-2, 3, (32 * kt, 32 * ct)).astype(np.float32)
    run = with_data(tmp_path / "k", {"A": tilize(a), "B": tilize(b)}, tilize(a @ b))
    done = tessera("run", str(run), "--max-steps", "50000000")
    assert done.returncode == 0, done.stderr
    assert np.array_equal(np.load(tmp_path / "k" / "res.npy"), tilize(a @ b))


#: kernel -> (input layout of A, the golden of a 32x32 A): "tiles" inputs are tilized
SINGLE = {"unpack_A_test": ("tiles", lambda a: tilize(a)),
          "pack_test": ("tiles", lambda a: tilize(a)),
          "transpose_dest_test": ("tiles", lambda a: tilize(a.T)),
          "pack_untilize_test": ("tiles", lambda a: a.reshape(-1))}


@pytest.mark.parametrize("kernel", sorted(SINGLE))
def test_single_tile_kernels_equal_numpy(tmp_path, kernel):
    built = tessera("tensix", "build", kernel, "--chip", "blackhole", "-o", str(tmp_path / "k"),
                    "--offline", "--jobs", "2")
    assert built.returncode == 0, built.stderr
    a = np.random.default_rng(9).integers(-8, 8, (32, 32)).astype(np.float32)
    layout, golden = SINGLE[kernel]
    want = golden(a)
    run = with_data(tmp_path / "k", {"A": tilize(a) if layout == "tiles" else a.reshape(-1)}, want)
    done = tessera("run", str(run), "--max-steps", "20000000")
    assert done.returncode == 0, done.stderr
    assert np.array_equal(np.load(tmp_path / "k" / "res.npy"), want)


def replace_tensix_instruction(elf: Path, mnemonic: str, by: int) -> int:
    """Turn every ``.ttinsn`` word of ``mnemonic`` in ``elf``'s code into the Tensix instruction
    ``by`` (a value below 0xC0000000): how many there were."""
    import struct

    from elftools.elf.elffile import ELFFile

    from tessera.isa.decoder import shared_decoder
    from tessera_tensix.arch import TENSIX_BH
    from tessera_tensix.tile.push import value_of

    decoder = shared_decoder(TENSIX_BH)
    data = bytearray(elf.read_bytes())
    found, replacement = [], (by << 2 | by >> 30) & 0xFFFF_FFFF
    with elf.open("rb") as f:
        for section in ELFFile(f).iter_sections():
            if section.name not in (".init", ".text"):
                continue
            for at in range(section["sh_offset"], section["sh_offset"] + section["sh_size"], 4):
                word = struct.unpack_from("<I", data, at)[0]
                if word & 3 != 3:
                    name = decoder.decode(value_of(word), 0).mnemonic
                    found += [at] if name == mnemonic else []
    for at in found:
        struct.pack_into("<I", data, at, replacement)
    elf.write_bytes(bytes(data))
    return len(found)


NOP = 0x0200_0000   # the Tensix NOP


def test_a_kernel_without_its_sempost_is_a_deadlock_naming_the_semaphore(tmp_path):
    built = tessera("tensix", "build", "eltwise_unary_datacopy_test", "--chip", "blackhole", "-o",
                    str(tmp_path / "k"), "--offline", "--jobs", "2")
    assert built.returncode == 0, built.stderr
    # the math thread's SEMPOST tells the pack thread a Dest section is ready: without it the
    # pack thread's SEMWAIT never ends, its TRISC waits for it, the host for that TRISC
    assert replace_tensix_instruction(tmp_path / "k" / "math.elf", "ttsempost", NOP) == 1
    run = with_data(tmp_path / "k", {"A": A}, A)
    done = tessera("run", str(run), "--max-steps", "20000000")
    assert done.returncode == 71, done.stderr
    assert "deadlock: every agent is waiting: t2 waits for T2 SEMWAIT MATH_PACK (sem 1) value 0" in done.stderr
    assert "trisc2 waits for Tensix T2 to finish every instruction trisc2 pushed" in done.stderr
    assert "host waits for trisc2 to report KERNEL_COMPLETE" in done.stderr


@pytest.mark.parametrize("chip", ["blackhole", "wormhole_b0"])
def test_unpack_tilize_turns_rows_into_tiles(tmp_path, chip):
    # two tiles side by side: Blackhole's whole-tile tileize must follow the row stride
    built = tessera("tensix", "build", "unpack_tilize_test", "--chip", chip, "--tiles", "2", "-o",
                    str(tmp_path / "k"), "--offline", "--jobs", "2")
    assert built.returncode == 0, built.stderr
    a = np.random.default_rng(3).integers(-8, 8, (32, 64)).astype(np.float32)
    run = with_data(tmp_path / "k", {"A": a.reshape(-1)}, tilize(a))
    done = tessera("run", str(run), "--max-steps", "20000000")
    assert done.returncode == 0, done.stderr
    assert np.array_equal(np.load(tmp_path / "k" / "res.npy"), tilize(a))
