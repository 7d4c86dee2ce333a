"""Build the differential test programs with Debian's riscv64-unknown-elf-gcc (no Makefile).

Every program is one C file linked with ``rt.c`` (the tiny runtime) using
``-nostdlib``.  A *configuration* is an ``-march``/``-mabi`` pair plus an
optimisation level; :func:`configurations` lists the ones a program is built in.

Used by the tests (``diffsupport.py``) and by hand::

    python plugins/riscv/tests/programs/build.py OUTDIR [PROGRAM ...]

writes ``OUTDIR/<program>-<config>.elf`` for every program and configuration and
prints one line per ELF.  Only the standard library is needed here.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

HERE = Path(__file__).resolve().parent
GCC = "riscv64-unknown-elf-gcc"

CFLAGS = (
    "-ffreestanding", "-nostdlib", "-static", "-Wall", "-Wno-unused-function",
    # gcc may turn the byte loops of memcpy/memset into calls to memcpy/memset:
    "-fno-tree-loop-distribute-patterns",
    "-fno-stack-protector", "-fno-pic",
)


@dataclass(frozen=True)
class Config:
    """How one ELF is built: ``-march``, ``-mabi``, ``-O`` level."""

    march: str
    mabi: str
    opt: str
    cmodel: str = "medlow"

    @property
    def xlen(self) -> int:
        return 64 if self.march.startswith("rv64") else 32

    @property
    def name(self) -> str:
        return f"{self.march}-{self.opt}" + ("" if self.cmodel == "medlow" else f"-{self.cmodel}")

    @property
    def qemu(self) -> str:
        return f"qemu-riscv{self.xlen}"

    @property
    def arch(self) -> str:
        """The Tessera architecture that runs it."""
        return f"rv{self.xlen}im"


def cfg(march: str, opt: str, cmodel: str = "medlow") -> Config:
    return Config(march, "lp64" if march.startswith("rv64") else "ilp32", opt, cmodel)


# -O0 and -O2, and -Os with the medany code model (addresses built with auipc)
BASE = tuple(cfg(m, o) for m in ("rv32im", "rv64im") for o in ("O0", "O2")) + (
    cfg("rv32im", "Os", "medany"), cfg("rv64im", "Os", "medany"))
BITMANIP = (cfg("rv32im_zba_zbb", "O2"), cfg("rv64im_zba_zbb", "O2"))
ATOMIC = (cfg("rv32ima", "O0"), cfg("rv32ima", "O2"), cfg("rv64ima", "O0"), cfg("rv64ima", "O2"))


@dataclass(frozen=True)
class Program:
    """A C program of this folder and the configurations it is built in."""

    name: str
    configs: tuple[Config, ...]
    variants: tuple[int, ...] = (None,)  # type: ignore[assignment]

    @property
    def source(self) -> Path:
        return HERE / f"{self.name}.c"


# The general programs run in the base configurations and with Zba/Zbb enabled (gcc
# then uses sh*add, andn, min/max, sext/zext ... in ordinary code).
GENERAL = BASE + BITMANIP
PROGRAMS: tuple[Program, ...] = (
    Program("arith", GENERAL),
    Program("muldiv", GENERAL),
    Program("shifts", GENERAL),
    Program("recursion", GENERAL),
    Program("memloops", GENERAL),
    Program("matmul", GENERAL),
    Program("printing", GENERAL),
    Program("algorithms", GENERAL),
    Program("exitcode", (cfg("rv32im", "O2"), cfg("rv64im", "O2")), variants=(0, 1, 2, 3, 4, 5)),
    Program("zbb", (cfg("rv32im_zba_zbb", "O0"), cfg("rv32im_zba_zbb", "O2"),
                    cfg("rv64im_zba_zbb", "O0"), cfg("rv64im_zba_zbb", "O2"))),
    Program("amo", ATOMIC),
)


def program(name: str) -> Program:
    for p in PROGRAMS:
        if p.name == name:
            return p
    raise KeyError(name)


def builds() -> list[tuple[Program, Config, int | None]]:
    """Every (program, configuration, variant) that the tests run."""
    return [(p, c, v) for p in PROGRAMS for c in p.configs for v in p.variants]


def build_id(prog: Program, config: Config, variant: int | None) -> str:
    suffix = "" if variant is None else f"-v{variant}"
    return f"{prog.name}{suffix}-{config.name}"


def toolchain_problem() -> str | None:
    """Why the programs cannot be built here, or ``None``."""
    if shutil.which(GCC) is None:
        return f"{GCC} is not installed (apt-get install gcc-riscv64-unknown-elf)"
    return None


_LIBGCC: dict[int, str] = {}


def libgcc(xlen: int) -> str:
    """The RV32IM/RV64IM multilib's libgcc (gcc -Os may call its shift helpers on rv32).

    Asked for explicitly: for -march strings without a multilib of their own
    (rv64im_zba_zbb) gcc would fall back to the default rv64imafdc library, whose
    code uses the C extension.
    """
    if xlen not in _LIBGCC:
        mabi = "lp64" if xlen == 64 else "ilp32"
        proc = subprocess.run([GCC, f"-march=rv{xlen}im", f"-mabi={mabi}", "-print-libgcc-file-name"],
                              capture_output=True, text=True, timeout=60, check=True)
        _LIBGCC[xlen] = proc.stdout.strip()
    return _LIBGCC[xlen]


def _run_gcc(args: list[str], what: str) -> None:
    proc = subprocess.run(args, capture_output=True, text=True, timeout=120)
    if proc.returncode != 0:
        raise RuntimeError(f"compiling {what} failed:\n{proc.stderr}")


def compile_program(prog: Program, config: Config, outdir: str | os.PathLike,
                    variant: int | None = None) -> Path:
    """Compile ``prog`` in ``config`` into ``outdir``; reuse an identical earlier build.

    The runtime (``rt.c``) is always built at -O2, so printing stays cheap in the
    emulators; the program itself at the configuration's level.
    """
    out = Path(outdir)
    out.mkdir(parents=True, exist_ok=True)
    common = [GCC, f"-march={config.march}", f"-mabi={config.mabi}", f"-mcmodel={config.cmodel}",
              *CFLAGS, f"-I{HERE}"]
    args = [*common, f"-{config.opt}"]
    if variant is not None:
        args.append(f"-DVARIANT={variant}")
    digest = hashlib.sha256(" ".join(args).encode())
    for src in (prog.source, HERE / "rt.c", HERE / "rt.h"):
        digest.update(src.read_bytes())
    stem = f"{build_id(prog, config, variant)}-{digest.hexdigest()[:12]}"
    elf = out / f"{stem}.elf"
    if elf.exists():
        return elf
    rt_obj = out / f"{stem}.rt.o"
    tmp = out / f"{stem}.tmp"
    _run_gcc([*common, "-O2", "-c", "-o", str(rt_obj), str(HERE / "rt.c")], f"rt.c ({config.name})")
    _run_gcc([*args, "-o", str(tmp), str(prog.source), str(rt_obj), libgcc(config.xlen)],
             f"{prog.name} ({config.name})")
    rt_obj.unlink()
    tmp.replace(elf)
    return elf


def main(argv: list[str]) -> int:
    if not argv or argv[0] in ("-h", "--help"):
        print(__doc__)
        return 0 if argv else 2
    problem = toolchain_problem()
    if problem:
        print(problem, file=sys.stderr)
        return 1
    outdir, names = argv[0], set(argv[1:])
    for prog, config, variant in builds():
        if names and prog.name not in names:
            continue
        print(compile_program(prog, config, outdir, variant))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
