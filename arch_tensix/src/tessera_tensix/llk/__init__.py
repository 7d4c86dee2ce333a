"""Build the vendor's tt-llk test kernels on this machine (``tessera tensix build``).

The kernels that run on a Tensix tile are four RISC-V ELFs (BRISC boot + TRISC0/1/2
unpack, math and pack) compiled from tt-llk's ``tests/sources/*.cpp``.  tt-llk, its
test harness and linker scripts ship inside the ``ttnn`` wheel on PyPI; the compiler is
Debian's ``riscv64-unknown-elf-gcc`` with picolibc and libstdc++ headers from Debian
packages.  The vendor's SFPI compiler cannot be downloaded here, so a few stand-in
headers of the project's own (``standins/``) replace what it would provide, and
kernels that use SFPI vector types are reported as such instead of being built.

Nothing of the vendor's is part of this package: the sources are fetched into a cache
(:mod:`.cache`), checked against a pinned digest and compiled from there unchanged.

Modules, one job each: :mod:`.cache` (where things are kept), :mod:`.wheel` (the ttnn
wheel), :mod:`.sysroot` (Debian headers and libc), :mod:`.toolchain` (the compiler),
:mod:`.chips` (per-chip facts), :mod:`.formats` (data formats and their inference),
:mod:`.params` (the harness's parameter vocabulary), :mod:`.kernels` (what each known
kernel is given), :mod:`.buildheader` (the generated ``build.h`` and runtime
arguments), :mod:`.elfinfo` (entry and placement symbols of a built ELF),
:mod:`.manifest` (``kernel.toml``), :mod:`.build` (the compiler runs) and :mod:`.cli`
(the commands).
"""

from __future__ import annotations

#: the vendor release whose tt-llk the project builds
TTNN_VERSION = "0.81.1"
