"""Differential test: Tessera's assembler (generated from the encoding table) against GNU as.

The random blocks of the other differential tests — every RV32IM/RV64IM, Zaamo,
Zba and Zbb form with random operands, labels and forward branches — are
assembled by both; the bytes must be identical.  The disassembler must then name
the same mnemonic for every word.  Skips without the cross toolchain.
"""

from __future__ import annotations

import random
import shutil
import subprocess

import pytest
from diffsupport import random_block, riscv_arch

AS = "riscv64-unknown-elf-as"
OBJCOPY = "riscv64-unknown-elf-objcopy"


def gnu_assemble(tmp_path, xlen: int, lines: list[str]) -> bytes:
    src, obj, binary = tmp_path / "b.s", tmp_path / "b.o", tmp_path / "b.bin"
    src.write_text("  .option norelax\n  .option norvc\n" + "\n".join(lines) + "\n")
    march = f"rv{xlen}ima_zba_zbb"
    subprocess.run([AS, f"-march={march}", f"-mabi={'lp64' if xlen == 64 else 'ilp32'}", "-o", str(obj),
                    str(src)], check=True, capture_output=True, timeout=60)
    subprocess.run([OBJCOPY, "-O", "binary", "-j", ".text", str(obj), str(binary)], check=True,
                   capture_output=True, timeout=60)
    return binary.read_bytes()


@pytest.mark.parametrize("xlen", [32, 64])
@pytest.mark.parametrize("seed", range(3))
def test_assembler_matches_gnu_as(tmp_path, xlen, seed):
    if shutil.which(AS) is None or shutil.which(OBJCOPY) is None:
        pytest.skip(f"{AS} is not installed (apt-get install gcc-riscv64-unknown-elf)")
    from tessera.isa import Disassembler
    from tessera.isa.asm import assemble

    rng = random.Random(f"asm-{xlen}-{seed}")
    lines = random_block(rng, xlen, 400, bitmanip=True, atomics=True, branches=True, memory=True,
                         misaligned=True)
    ours = assemble(riscv_arch(xlen), "\n".join(lines) + "\n", file="<random>", base=0)
    ((_, blob),) = ours.segments
    theirs = gnu_assemble(tmp_path, xlen, lines)
    instructions = [line for line in lines if not line.endswith(":")]
    for i in range(0, max(len(blob), len(theirs)), 4):
        assert blob[i:i + 4] == theirs[i:i + 4], (
            f"word {i // 4} ({instructions[i // 4]!r}): tessera {blob[i:i + 4].hex()}, "
            f"GNU as {theirs[i:i + 4].hex()}")
    dis = Disassembler(riscv_arch(xlen))
    for i, text in enumerate(instructions):
        word = int.from_bytes(blob[4 * i:4 * i + 4], "little")
        if word == 0x0000_0013:         # addi x0, x0, 0 disassembles as its alias, nop
            continue
        shown = dis.word(word, 4 * i)
        assert shown.split()[0] == text.split()[0], (text, shown)
