"""The compiler: Debian's ``riscv64-unknown-elf-g++`` (a multilib gcc that builds rv32 code).

The vendor builds with its SFPI gcc (``riscv-tt-elf-g++ -mcpu=tt-bh-tensix``), which
knows the ``.ttinsn`` directive and the SFPI vector types; it cannot be downloaded
here.  Debian's gcc 12 builds everything else: ``.ttinsn`` words are emitted by a
stand-in (see ``standins/ttinsn.h``) and the ISA is given by ``-march`` (see
:data:`MARCH`).
"""

from __future__ import annotations

import os
import shutil
import subprocess
from dataclasses import dataclass

from tessera.errors import ConfigError

GXX = "riscv64-unknown-elf-g++"
#: the instruction set the ELFs are built for, on both chips: what every baby core runs
#: (the SFPI gcc's -mcpu=tt-bh/tt-wh are rv32im too; Blackhole's Zaamo/Zba/Zbb are not used)
MARCH = ("-march=rv32im_zicsr_zifencei", "-mabi=ilp32")


@dataclass(frozen=True)
class Toolchain:
    gxx: str
    version: str


def find() -> Toolchain:
    """The compiler named by ``TESSERA_RISCV_GXX`` or found on PATH; one-line error when missing."""
    gxx = os.environ.get("TESSERA_RISCV_GXX") or shutil.which(GXX)
    if not gxx:
        raise ConfigError(f"{GXX} is not installed: apt-get install gcc-riscv64-unknown-elf")
    try:
        done = subprocess.run([gxx, "--version"], capture_output=True, text=True, timeout=60)
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise ConfigError(f"cannot run {gxx}: {exc}") from None
    if done.returncode != 0:
        raise ConfigError(f"{gxx} --version failed: {done.stderr.strip()[:200]}")
    return Toolchain(gxx=gxx, version=done.stdout.splitlines()[0] if done.stdout else "?")


def available() -> bool:
    """True when a compiler can be found (for tests that skip without one)."""
    return bool(os.environ.get("TESSERA_RISCV_GXX") or shutil.which(GXX))
