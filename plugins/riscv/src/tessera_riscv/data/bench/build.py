"""Rebuild the bench's RV32IM programs (needs ``riscv64-unknown-elf-gcc``; ``qemu-riscv32`` for
the expected results).

The ELFs are committed next to this script so that ``tessera bench`` runs without a
cross compiler or qemu; rebuild them only when a source changes::

    python plugins/riscv/src/tessera_riscv/data/bench/build.py [DIRECTORY]

* ``sum.c`` → ``sum-rv32im.elf`` at ``-O1`` (the ``rv32`` workload's loop);
* ``mark.c`` → ``mark-rv32im.elf`` at ``-O2`` (the ``mark`` workload), and
  ``mark-rv32im.json``: the checksums the bench checks every run against, computed by
  running the new ELF under ``qemu-riscv32`` — an emulator that is not Tessera.  It
  holds each of mark.c's 64 per-seed checksums (from one run with ``verbose`` patched
  to 1: the bench folds them into the result of any iteration count), the final
  ``result`` qemu printed for the iteration counts in :data:`RESULT_COUNTS` (what the
  bench and its tests run; the tests check the fold against them), and the SHA-256
  of the ELF and of the source it was made from, so a stale file is detected.

The flags give bare-metal RV32IM executables with no C runtime (each source brings
its own ``_start``) and an unstripped symbol table, which the bench needs to patch
globals such as ``iterations``.
"""

from __future__ import annotations

import hashlib
import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
GCC = "riscv64-unknown-elf-gcc"
QEMU = "qemu-riscv32"
COMMON = ("-march=rv32im", "-mabi=ilp32", "-nostdlib", "-ffreestanding", "-static",
          "-fno-pic", "-fno-stack-protector")
FLAGS = (*COMMON[:2], "-O1", *COMMON[2:])      # sum.c (the order its committed ELF was built with)
#: source, committed ELF and optimisation level of each program
PROGRAMS = {
    "sum": ("sum.c", "sum-rv32im.elf", FLAGS),
    "mark": ("mark.c", "mark-rv32im.elf", (*COMMON[:2], "-O2", *COMMON[2:])),
}
MARK_EXPECTED = "mark-rv32im.json"
SEEDS = 64                                     # mark.c's SEEDS
#: iteration counts whose result qemu prints into the JSON: the tests' (1-3, 65 crosses the
#: seed period), tracing's (6), --quick's (20) and the default (60)
RESULT_COUNTS = (1, 2, 3, 6, 20, 60, 65)
_RESULT = re.compile(rb"^mark result=0x([0-9a-f]{8})\n$")
_SEED = re.compile(rb"^seed (\d+) checksum=0x([0-9a-f]{8})$")


def build(output: Path = HERE / "sum-rv32im.elf", program: str = "sum") -> Path:
    """Compile ``program``'s source into ``output``; ``RuntimeError`` without the compiler or on failure."""
    source, _elf, flags = PROGRAMS[program]
    if shutil.which(GCC) is None:
        raise RuntimeError(f"{GCC} is not installed (apt-get install gcc-riscv64-unknown-elf)")
    proc = subprocess.run([GCC, *flags, "-o", str(output), str(HERE / source)],
                          capture_output=True, text=True, timeout=120)
    if proc.returncode != 0:
        raise RuntimeError(f"compiling {source} failed:\n{proc.stderr}")
    return output


def patched(image: bytes, **values: int) -> bytes:
    """``image`` with 4-byte initialised globals set (through the core's ELF patcher)."""
    from tessera.bench.elfpatch import patch_symbol

    for name, value in values.items():
        image = patch_symbol(image, name, value)
    return image


def run_qemu(image: bytes, workdir: Path) -> bytes:
    """What ``image`` writes to stdout under qemu-riscv32 (``RuntimeError`` unless it exits 0)."""
    if shutil.which(QEMU) is None:
        raise RuntimeError(f"{QEMU} is not installed (apt-get install qemu-user)")
    path = workdir / "mark-qemu.elf"
    path.write_bytes(image)
    path.chmod(0o755)
    proc = subprocess.run([QEMU, str(path)], capture_output=True, timeout=300, stdin=subprocess.DEVNULL)
    if proc.returncode != 0:
        raise RuntimeError(f"{QEMU} exited with {proc.returncode}: {proc.stderr[-500:]!r}")
    return proc.stdout


def qemu_result(output: bytes) -> int:
    """The ``result`` in mark.c's last line of output."""
    lines = output.splitlines(keepends=True)
    match = _RESULT.match(lines[-1]) if lines else None
    if match is None:
        raise RuntimeError(f"unexpected output from mark: {output[-200:]!r}")
    return int(match.group(1), 16)


def expected_results(elf: Path, workdir: Path) -> dict[str, object]:
    """mark's checksums from qemu: per seed, and the final result for :data:`RESULT_COUNTS`."""
    image = elf.read_bytes()
    verbose = run_qemu(patched(image, iterations=SEEDS, verbose=1), workdir)
    per_seed = []
    for seed, line in enumerate(verbose.splitlines()[:-1]):
        match = _SEED.match(line)
        if match is None or int(match.group(1)) != seed:
            raise RuntimeError(f"unexpected line {seed} of mark's verbose output: {line!r}")
        per_seed.append(int(match.group(2), 16))
    if len(per_seed) != SEEDS:
        raise RuntimeError(f"mark printed {len(per_seed)} per-seed checksums, not {SEEDS}")
    results = {str(n): qemu_result(run_qemu(patched(image, iterations=n), workdir)) for n in RESULT_COUNTS}
    version = subprocess.run([QEMU, "--version"], capture_output=True, text=True).stdout.splitlines()[0]
    return {
        "what": "mark.c's checksums under qemu-riscv32: per_seed[s] is iteration checksum of seed s; "
                "result(n) folds per_seed[i % seeds] for i < n with zlib.crc32 from 0; results[n] is "
                "what qemu printed for n iterations",
        "elf": PROGRAMS["mark"][1],
        "elf_sha256": hashlib.sha256(image).hexdigest(),
        "source_sha256": hashlib.sha256((HERE / PROGRAMS["mark"][0]).read_bytes()).hexdigest(),
        "qemu": version,
        "seeds": SEEDS,
        "per_seed": per_seed,
        "results": results,
    }


def main(directory: Path = HERE) -> list[Path]:
    """Build every program into ``directory`` and write mark's expected results there."""
    import tempfile

    directory.mkdir(parents=True, exist_ok=True)
    outputs = [build(directory / elf, name) for name, (_src, elf, _flags) in PROGRAMS.items()]
    with tempfile.TemporaryDirectory(prefix="tessera-bench-build-") as tmp:
        expected = expected_results(directory / PROGRAMS["mark"][1], Path(tmp))
    path = directory / MARK_EXPECTED
    path.write_text(json.dumps(expected, indent=1) + "\n", encoding="utf-8")
    return [*outputs, path]


if __name__ == "__main__":
    for out in main(Path(sys.argv[1]) if len(sys.argv) > 1 else HERE):
        print(out)
