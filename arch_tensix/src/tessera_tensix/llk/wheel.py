"""The ``ttnn`` wheel: tt-llk, its test harness, linker scripts and the firmware headers.

The wheel is fetched once with pip (``pip download``, no dependencies, the manylinux
build for CPython 3.10: the sources inside are the same for every build), checked
against the digest pinned here, and only the subtrees a kernel build reads are
unpacked next to it.  A wheel whose digest differs is refused: the stand-in headers
and the build header are written for exactly this tt-llk.
"""

from __future__ import annotations

import hashlib
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

from tessera.errors import ConfigError
from tessera_tensix.llk import TTNN_VERSION
from tessera_tensix.llk.cache import cache_root

WHEEL_NAME = f"ttnn-{TTNN_VERSION}-cp310-cp310-manylinux_2_34_x86_64.whl"
#: sha256 of WHEEL_NAME as PyPI serves it (computed from the download and pinned)
WHEEL_SHA256 = "ed49aa1ee3f39a87cbee21f35c9133544879ebf537b1788f6f033681ab504503"
#: pip's own arguments for exactly that file
PIP_ARGS = ("download", "--no-deps", "--only-binary=:all:", "--python-version", "3.10",
            "--platform", "manylinux_2_34_x86_64", f"ttnn=={TTNN_VERSION}")
#: the parts of the wheel a build reads (tt-llk, firmware headers, host/device constants)
SUBTREES = ("ttnn/tt_metal/tt-llk/", "ttnn/tt_metal/hw/inc/", "ttnn/tt_metal/hw/ckernels/",
            "ttnn/tt_metal/hostdevcommon/api/")
#: seconds a download may take before it is given up
DOWNLOAD_TIMEOUT = 900


def wheel_path() -> Path:
    return cache_root() / "wheels" / WHEEL_NAME


def tree_root() -> Path:
    """Where the wheel's subtrees are unpacked (``<root>/ttnn/tt_metal/...``)."""
    return cache_root() / f"ttnn-{TTNN_VERSION}"


def cached() -> bool:
    """True when the unpacked tree is ready (no download needed)."""
    return (tree_root() / ".complete").is_file()


def tt_metal(download: bool = True) -> Path:
    """The unpacked ``tt_metal`` folder, fetching and unpacking the wheel when needed."""
    root = tree_root()
    if not cached():
        if not download:
            raise ConfigError(f"tt-llk is not in the cache ({root}); run `tessera tensix build` with network "
                              "access once, or drop --offline")
        _unpack(fetch(), root)
    return root / "ttnn" / "tt_metal"


def fetch() -> Path:
    """The verified wheel in the cache, downloading it with pip when it is not there."""
    path = wheel_path()
    if not path.is_file():
        path.parent.mkdir(parents=True, exist_ok=True)
        cmd = [sys.executable, "-m", "pip", *PIP_ARGS, "--dest", str(path.parent), "--quiet"]
        try:
            done = subprocess.run(cmd, capture_output=True, text=True, timeout=DOWNLOAD_TIMEOUT)
        except subprocess.TimeoutExpired:
            raise ConfigError(f"downloading ttnn=={TTNN_VERSION} took more than {DOWNLOAD_TIMEOUT} s") from None
        except OSError as exc:
            raise ConfigError(f"cannot run pip to download ttnn=={TTNN_VERSION}: {exc}") from None
        if done.returncode != 0 or not path.is_file():
            lines = (done.stderr or done.stdout).strip().splitlines()
            raise ConfigError(f"pip could not download ttnn=={TTNN_VERSION}: {lines[-1] if lines else 'no output'}")
    verify(path)
    return path


def verify(path: Path) -> None:
    """Refuse a wheel whose sha256 is not the pinned one."""
    digest = hashlib.sha256()
    with path.open("rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            digest.update(block)
    got = digest.hexdigest()
    if got != WHEEL_SHA256:
        raise ConfigError(f"{path}: sha256 {got} is not the pinned {WHEEL_SHA256}; delete the file and "
                          "build again")


def _unpack(wheel: Path, root: Path) -> None:
    """Unpack SUBTREES into ``root`` through a scratch folder, so a half-done unpack is never used."""
    scratch = root.with_name(root.name + ".partial")
    shutil.rmtree(scratch, ignore_errors=True)
    try:
        with zipfile.ZipFile(wheel) as zf:
            for member in zf.namelist():
                if member.startswith(SUBTREES) and not member.endswith("/"):
                    zf.extract(member, scratch)
    except (OSError, zipfile.BadZipFile) as exc:
        shutil.rmtree(scratch, ignore_errors=True)
        raise ConfigError(f"cannot unpack {wheel}: {exc}") from None
    (scratch / ".complete").write_text(f"{WHEEL_NAME} {WHEEL_SHA256}\n")
    shutil.rmtree(root, ignore_errors=True)
    scratch.rename(root)
