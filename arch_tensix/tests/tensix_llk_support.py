"""What the tests of tt-llk kernels share: the check that the toolchain and the cache are there,
the command line as a user runs it, and the manifest plus inputs and a golden."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import numpy as np
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


def tessera(*args: str) -> subprocess.CompletedProcess:
    """``tessera ARGS`` in a subprocess with only the Tensix plugin (and the cache, engine settings)."""
    script = Path(sys.executable).parent / "tessera"
    cmd = [str(script)] if script.exists() else [sys.executable, "-m", "tessera.cli.main"]
    env = {k: v for k, v in os.environ.items() if not k.startswith("TESSERA_") or k in ("TESSERA_CACHE",
                                                                                           "TESSERA_ENGINE")}
    env["TESSERA_PLUGINS"] = "tensix"
    return subprocess.run(cmd + list(args), capture_output=True, text=True, env=env, timeout=900)


def with_data(directory: Path, inputs: dict[str, np.ndarray], golden: np.ndarray) -> Path:
    """The built manifest plus input files, an output file and the golden: ``run.toml``."""
    text = (directory / "kernel.toml").read_text()
    for name, values in inputs.items():
        np.save(directory / f"{name}.npy", values)
        text = text.replace(f'name = "{name}"\n', f'name = "{name}"\nfile = "{name}.npy"\n', 1)
    np.save(directory / "golden.npy", golden)
    text = text.replace('name = "res"\n', 'name = "res"\nfile = "res.npy"\ngolden = "golden.npy"\n', 1)
    path = directory / "run.toml"
    path.write_text(text)
    return path


def tilize(matrix: np.ndarray) -> np.ndarray:
    """A matrix of 32x32 tiles as L1 holds it: tiles row by row, each four 16x16 faces."""
    rows, cols = matrix.shape[0] // 32, matrix.shape[1] // 32
    return np.concatenate([matrix[r * 32:(r + 1) * 32, c * 32:(c + 1) * 32].reshape(2, 16, 2, 16)
                           .transpose(0, 2, 1, 3).reshape(-1) for r in range(rows) for c in range(cols)])
