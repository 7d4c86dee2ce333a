"""What the tests of tt-llk kernels share: the check that the toolchain and the cache are there."""

from __future__ import annotations

import os

import pytest

from tessera_tensix.llk import sysroot, toolchain, wheel


def require_llk() -> None:
    """Skip (fail in CI, which sets ``TESSERA_REQUIRE_LLK=1`` after ``tessera tensix fetch``)
    unless the RISC-V compiler and the tt-llk cache are there."""
    missing = pytest.fail if os.environ.get("TESSERA_REQUIRE_LLK") == "1" else pytest.skip
    if not toolchain.available():
        missing("needs riscv64-unknown-elf-g++ (apt-get install gcc-riscv64-unknown-elf)")
    if not (wheel.cached() and sysroot.cached()):
        missing("needs the tt-llk cache: run `tessera tensix fetch` once (downloads ~220 MB)")
