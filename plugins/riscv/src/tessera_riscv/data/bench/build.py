"""Rebuild ``sum-rv32im.elf`` from ``sum.c`` (needs ``riscv64-unknown-elf-gcc``).

The ELF is committed next to this script so that ``tessera bench`` runs without a
cross compiler; rebuild it only when ``sum.c`` changes::

    python plugins/riscv/src/tessera_riscv/data/bench/build.py [OUTPUT]

The flags give a bare-metal RV32IM executable with no C runtime (``sum.c`` brings
its own ``_start``) and an unstripped symbol table, which the bench needs to patch
the ``iterations`` global.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
GCC = "riscv64-unknown-elf-gcc"
FLAGS = ("-march=rv32im", "-mabi=ilp32", "-O1", "-nostdlib", "-ffreestanding", "-static",
         "-fno-pic", "-fno-stack-protector")


def build(output: Path = HERE / "sum-rv32im.elf") -> Path:
    """Compile ``sum.c`` into ``output``; ``RuntimeError`` without the compiler or on failure."""
    if shutil.which(GCC) is None:
        raise RuntimeError(f"{GCC} is not installed (apt-get install gcc-riscv64-unknown-elf)")
    proc = subprocess.run([GCC, *FLAGS, "-o", str(output), str(HERE / "sum.c")],
                          capture_output=True, text=True, timeout=120)
    if proc.returncode != 0:
        raise RuntimeError(f"compiling sum.c failed:\n{proc.stderr}")
    return output


if __name__ == "__main__":
    out = build(Path(sys.argv[1])) if len(sys.argv) > 1 else build()
    print(out)
