"""C and C++ headers (and libc) for the kernels, from two Debian packages, kept in the cache.

Debian's ``gcc-riscv64-unknown-elf`` is a bare compiler: it has no C library and no
C++ standard headers.  tt-llk needs ``<cstdint>``, ``<array>``, ``<type_traits>``,
``<algorithm>`` and a ``memcpy``: picolibc (``picolibc-riscv64-unknown-elf``) gives the
C headers and an rv32im/ilp32 libc, and the header-only parts of newlib's libstdc++
(``libstdc++-arm-none-eabi-dev``: its headers are target-neutral) give C++.  Both are
fetched with ``apt-get download`` and unpacked into the cache with ``dpkg-deb``;
nothing is installed system-wide.  Only the folders a build reads are unpacked
(picolibc's full package is a gigabyte of libraries for other targets).
"""

from __future__ import annotations

import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path

from tessera.errors import ConfigError
from tessera_tensix.llk.cache import cache_root

PICOLIBC = "picolibc-riscv64-unknown-elf"
LIBSTDCXX = "libstdc++-arm-none-eabi-dev"
_PICO = "./usr/lib/picolibc/riscv64-unknown-elf"
#: package -> the members unpacked from it
MEMBERS = {PICOLIBC: (f"{_PICO}/include", f"{_PICO}/lib/rv32im/ilp32", f"./usr/share/doc/{PICOLIBC}/copyright"),
           LIBSTDCXX: ("./usr/include/newlib/c++", f"./usr/share/doc/{LIBSTDCXX}/copyright")}
#: seconds apt-get download / dpkg-deb may take
TIMEOUT = 600


@dataclass(frozen=True)
class Sysroot:
    """The include folders (in search order) and the libc folder of a prepared sysroot."""

    root: Path
    includes: tuple[Path, ...]
    libdir: Path


def cached() -> bool:
    """True when the sysroot is ready (no download needed)."""
    return (cache_root() / "sysroot" / ".complete").is_file()


def sysroot(download: bool = True) -> Sysroot:
    """The prepared sysroot, fetching and unpacking the packages when needed."""
    root = cache_root() / "sysroot"
    if not cached():
        if not download:
            raise ConfigError(f"the picolibc/libstdc++ headers are not in the cache ({root}); run "
                              "`tessera tensix build` with network access once, or drop --offline")
        _prepare(root)
    return _layout(root)


def _layout(root: Path) -> Sysroot:
    cxx = sorted((root / "usr/include/newlib/c++").glob("*/"))
    if not cxx:
        raise ConfigError(f"{root}: no C++ headers under usr/include/newlib/c++; delete the folder and build again")
    version = cxx[-1]
    return Sysroot(root=root,
                   includes=(version, version / "arm-none-eabi", root / _PICO[2:] / "include"),
                   libdir=root / _PICO[2:] / "lib/rv32im/ilp32")


def _prepare(root: Path) -> None:
    debs = cache_root() / "debs"
    debs.mkdir(parents=True, exist_ok=True)
    scratch = root.with_name(root.name + ".partial")
    shutil.rmtree(scratch, ignore_errors=True)
    scratch.mkdir(parents=True)
    for package, members in MEMBERS.items():
        _unpack(_download(package, debs), members, scratch)
    (scratch / ".complete").write_text(" ".join(p.name for p in sorted(debs.glob("*.deb"))) + "\n")
    shutil.rmtree(root, ignore_errors=True)
    scratch.rename(root)


def _download(package: str, debs: Path) -> Path:
    """The package's .deb in ``debs``, fetched with ``apt-get download`` when missing."""
    found = sorted(debs.glob(f"{package}_*.deb"))
    if not found:
        if shutil.which("apt-get") is None:
            raise ConfigError(f"apt-get is not available to download {package}; put its .deb in {debs}")
        done = _run(["apt-get", "download", package], debs, f"apt-get download {package}")
        found = sorted(debs.glob(f"{package}_*.deb"))
        if done.returncode != 0 or not found:
            lines = [ln for ln in (done.stderr or done.stdout).splitlines() if ln.startswith("E:")] or ["no .deb"]
            raise ConfigError(f"apt-get could not download {package}: {lines[-1]} (try `apt-get update`)")
    return found[-1]


def _unpack(deb: Path, members: tuple[str, ...], into: Path) -> None:
    """``dpkg-deb --fsys-tarfile deb | tar -x members``: the package's files, without installing it."""
    if shutil.which("dpkg-deb") is None:
        raise ConfigError(f"dpkg-deb is not available to unpack {deb.name}")
    try:
        dpkg = subprocess.Popen(["dpkg-deb", "--fsys-tarfile", str(deb)], stdout=subprocess.PIPE)
        tar = subprocess.run(["tar", "-x", "-C", str(into), *members], stdin=dpkg.stdout,
                             capture_output=True, text=True, timeout=TIMEOUT)
        assert dpkg.stdout is not None
        dpkg.stdout.close()
        dpkg.wait(timeout=TIMEOUT)
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise ConfigError(f"cannot unpack {deb.name}: {exc}") from None
    if tar.returncode != 0 or dpkg.returncode not in (0, None):
        lines = tar.stderr.strip().splitlines()
        raise ConfigError(f"cannot unpack {deb.name}: {lines[-1] if lines else f'dpkg-deb exit {dpkg.returncode}'}")


def _run(cmd: list[str], cwd: Path, what: str) -> subprocess.CompletedProcess:
    try:
        return subprocess.run(cmd, cwd=cwd, capture_output=True, text=True, timeout=TIMEOUT)
    except subprocess.TimeoutExpired:
        raise ConfigError(f"{what} took more than {TIMEOUT} s") from None
    except OSError as exc:
        raise ConfigError(f"cannot run {what}: {exc}") from None
