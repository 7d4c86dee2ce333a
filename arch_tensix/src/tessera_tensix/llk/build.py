"""Compile one tt-llk test kernel, unchanged, into the four ELFs of a Tensix tile, plus its manifest.

The kernel source (``tests/sources/<kernel>.cpp``) is compiled three times, as the
harness does: once per TRISC (``-DLLK_TRISC_UNPACK/MATH/PACK``,
``-DCOMPILE_FOR_TRISC=0/1/2``), each time together with ``tests/helpers/src/trisc.cpp``
(the start-up code that copies the runtime arguments and reports completion in the
mailbox); BRISC gets the harness's ``brisc.cpp`` (the boot firmware that releases the
TRISCs).  The flags are the harness's (``test_config.py``) minus the SFPI compiler's
own (``-mcpu=tt-*``, ``-ftt-*``), with Debian gcc's ``-march`` instead.  Every compiler
run's output is kept next to the ELFs (``build/<part>.log``); a failure is one line
that names the part and the first error, or says that the kernel needs SFPI, or names a
parameter to give with ``--param`` (with the values tt-llk's tests pass).  A kernel that
tt-llk's own tests do not run on the chip asked for (:mod:`.vendorchips`), or that
includes a header only the other chip's tt-llk has, stops with
:class:`~.vendorchips.UnsupportedChip` (exit status 80) instead.
"""

from __future__ import annotations

import dataclasses
import os
import re
import shutil
import subprocess
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from importlib import resources
from pathlib import Path

from tessera.errors import ConfigError
from tessera_tensix.llk import (
    buildheader,
    chips,
    elfinfo,
    manifest,
    params,
    sysroot,
    toolchain,
    vendorchips,
    vendorvalues,
    wheel,
)
from tessera_tensix.llk.kernels import Options, Resolved, resolve
from tessera_tensix.llk.params import VOCABULARY, MissingParameter
from tessera_tensix.llk.vendorchips import UnsupportedChip

#: core -> (part name, -DLLK_TRISC_ define, COMPILE_FOR_TRISC) of the three TRISC builds
TRISCS = {"trisc0": ("unpack", "UNPACK", 0), "trisc1": ("math", "MATH", 1), "trisc2": ("pack", "PACK", 2)}
#: the harness's optimisation and language flags that Debian's gcc shares
CXXFLAGS = ("-g", "-O3", "-std=c++17", "-ffast-math", "-fno-finite-math-only", "-fsigned-zeros",
            "-fno-associative-math", "-fno-exceptions", "-fno-rtti", "-fno-use-cxa-atexit")
DEFINES = ("-DTENSIX_FIRMWARE", "-DENV_LLK_INFRA", "-DKERNEL_BUILD", "-DENABLE_LLK_ASSERT", "-DLLK_BOOT_MODE_BRISC",
           "-DLLK_PERF_L1_MUX_GROUP=0")
LINKFLAGS = ("-nostdlib", "-nostartfiles", "-Wl,-z,max-page-size=16", "-Wl,-z,common-page-size=16")
#: seconds one compiler run may take
COMPILE_TIMEOUT = 600
#: names only the harness's fused (multi-pass) build headers define
FUSED_NAMES = frozenset({"formats_array", "L1_to_L1_ITERATIONS", "UNPACK_A_IN", "UNPACK_A_OUT", "PACK_IN", "PACK_OUT",
                         "MATH_FORMAT", "UNPACK_A_IN_LIST"})
#: names of the SFPI vector library; an error about one means the kernel needs the SFPI compiler
_SFPI_WORDS = re.compile(r"\b(vFloat|vInt|vUInt|vConst\w*|dst_reg|l_reg|v_if|v_elseif|v_else|v_endif|v_block)\b")


@dataclass(frozen=True)
class Built:
    directory: Path
    manifest: Path
    resolved: Resolved


@dataclass(frozen=True)
class Tree:
    """The folders a compile reads: the unpacked wheel, the sysroot and the stand-ins."""

    tt_metal: Path
    sysroot: sysroot.Sysroot
    standins: Path

    @property
    def llk(self) -> Path:
        return self.tt_metal / "tt-llk"

    @property
    def tests(self) -> Path:
        return self.llk / "tests"

    @property
    def python_tests(self) -> Path:
        return self.tests / "python_tests"


def prepare(download: bool = True) -> tuple[toolchain.Toolchain, Tree]:
    """The compiler and the vendor tree, fetched into the cache when needed."""
    tools = toolchain.find()
    standins = Path(str(resources.files("tessera_tensix.llk") / "standins"))
    return tools, Tree(tt_metal=wheel.tt_metal(download), sysroot=sysroot.sysroot(download), standins=standins)


def source_of(tree: Tree, kernel: str) -> Path:
    """``tests/sources/<kernel>.cpp``; one-line error with the nearest names when there is none."""
    name = kernel.removeprefix("sources/").removesuffix(".cpp")
    path = tree.tests / "sources" / f"{name}.cpp"
    if not re.fullmatch(r"[\w\-/]+", name) or not path.is_file():
        known = sorted(p.stem for p in (tree.tests / "sources").glob("*.cpp"))
        near = [k for k in known if name.split("_")[0] in k][:5] or known[:5]
        raise ConfigError(f"tt-llk has no kernel {name!r} (tests/sources); e.g. {', '.join(near)}")
    return path


def kernels(download: bool = True) -> list[str]:
    """Every single-file kernel of tt-llk's tests/sources."""
    return sorted(p.stem for p in (wheel.tt_metal(download) / "tt-llk" / "tests" / "sources").glob("*.cpp"))


def build(opts: Options, out: Path, *, download: bool = True, jobs: int | None = None) -> Built:
    """Build ``opts.kernel`` into ``out`` (brisc.elf, unpack.elf, math.elf, pack.elf, kernel.toml)."""
    tools, tree = prepare(download)
    name = opts.kernel.removeprefix("sources/").removesuffix(".cpp")
    opts = dataclasses.replace(opts, kernel=name)
    source = source_of(tree, name)
    chip = chips.chip(opts.chip)
    if not opts.force_chip:
        require_chip(tree.python_tests, name, chip.name)
    usage = params.scan(source, (tree.tests / "helpers" / "include",))
    try:
        res = resolve(opts, usage)
    except MissingParameter as exc:
        raise exc.with_hint(vendorvalues.hint(tree.python_tests, name, exc.name)) from None
    work = out / "build"
    try:
        work.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise ConfigError(f"cannot create {work}: {exc.strerror or exc}") from None
    (work / "build.h").write_text(buildheader.header(res.spec))
    (work / "kernel.cpp").write_text(f"#include <sources/{name}.cpp>\n#include <trisc.cpp>\n")
    jobs = jobs or min(4, os.cpu_count() or 1)
    commands = {core: trisc_command(tools, tree, chip, res, work, core, out) for core in TRISCS}
    commands["brisc"] = brisc_command(tools, tree, chip, work, out)
    with ThreadPoolExecutor(max_workers=max(1, jobs)) as pool:
        done = dict(zip(commands, pool.map(lambda item: _compile(item[0], item[1], work), commands.items()), strict=True))
    failed = [core for core, (code, _log) in done.items() if code != 0]
    failed.sort(key=lambda core: not _needs_sfpi(done[core][1]))     # SFPI is the reason that matters most
    if failed:
        core = failed[0]
        log, path = done[core][1], work / f"{_part(core)}.log"
        other = _only_elsewhere(tree, chip, log)
        if other is not None:
            raise UnsupportedChip(f"{name} does not build for {chip.name}: tt-llk has {other[0]} for "
                                  f"{other[1]} only (log {path})")
        raise ConfigError(diagnose(name, chip.name, core, log, path,
                                   hint=lambda missing: vendorvalues.hint(tree.python_tests, name, missing)))
    placement = {}
    for core, file in manifest.CORE_FILES.items():
        entry, symbols = elfinfo.read(out / file)
        placement[core] = {"entry": entry, **{k.strip("_"): symbols[k] for k in elfinfo.PLACEMENT_SYMBOLS
                                              if k in symbols}}
    path = manifest.write(out, manifest.render(res, placement, tools.version))
    return Built(directory=out, manifest=path, resolved=res)


def require_chip(python_tests: Path, kernel: str, chip: str) -> None:
    """UnsupportedChip when every test of tt-llk that uses ``kernel`` skips ``chip``."""
    verdict = vendorchips.chips_of(python_tests, kernel)
    if verdict is not None and not verdict.supports(chip):
        raise UnsupportedChip(verdict.refusal(chip))


def check_chip(opts: Options, download: bool = True) -> None:
    """:func:`require_chip` for ``opts`` (nothing with ``force_chip``), before anything is built."""
    if not opts.force_chip:
        name = opts.kernel.removeprefix("sources/").removesuffix(".cpp")
        require_chip(wheel.tt_metal(download) / "tt-llk" / "tests" / "python_tests", name, chips.chip(opts.chip).name)


def _only_elsewhere(tree: Tree, chip: chips.Chip, log: str) -> tuple[str, str] | None:
    """(header, other chip) when the compile failed for want of a header that only the other
    chip's tt-llk folder has: the kernel is written for that chip."""
    missing = re.search(r"tests/(?:sources|helpers)/\S+ fatal error: (\S+): No such file or directory", log)
    if missing is None:
        return None
    header = missing.group(1)
    for other in {c.name: c for c in chips.CHIPS.values()}.values():
        if other.name == chip.name:
            continue
        root = tree.llk / other.llk_root
        dirs = (root / "llk_lib", root / "llk_lib" / "hal", root / "common" / "inc", root / "common" / "inc" / "sfpu",
                *(tree.tt_metal / d for d in other.hw_includes))
        if any((d / header).is_file() for d in dirs):
            return header, other.name
    return None


def _part(core: str) -> str:
    return TRISCS[core][0] if core in TRISCS else "brisc"


def includes(tree: Tree, chip: chips.Chip, work: Path) -> list[str]:
    """The harness's include order, with the stand-ins where SFPI's headers would be."""
    llk, tests, tm = tree.llk, tree.tests, tree.tt_metal
    root = llk / chip.llk_root
    dirs = [tests, tests / "helpers" / "src", work, tree.standins, root / "llk_lib", root / "llk_lib" / "hal",
            root / "common" / "inc", root / "common" / "inc" / "sfpu", llk / "common", llk / "tools" / "include",
            tm / "hw" / "inc", tests / "helpers" / "include", tm / "hostdevcommon" / "api",
            *(tm / d for d in chip.hw_includes)]
    flags = [f"-I{d}" for d in dirs]
    for d in tree.sysroot.includes:
        flags += ["-isystem", str(d)]
    return flags


def _common(tools: toolchain.Toolchain, tree: Tree, chip: chips.Chip, work: Path) -> list[str]:
    return [tools.gxx, *toolchain.MARCH, *CXXFLAGS, *DEFINES, f"-D{chip.define}", *includes(tree, chip, work)]


def _link(tree: Tree, chip: chips.Chip, part_ld: str, source: Path, elf: Path) -> list[str]:
    ld = tree.tests / "helpers" / "ld"
    return [*LINKFLAGS, f"-T{ld / chip.memory_ld}", f"-T{ld / part_ld}", f"-T{ld / 'sections.ld'}", str(source),
            f"-L{tree.sysroot.libdir}", "-lc", "-lgcc", "-o", str(elf)]


def trisc_command(tools: toolchain.Toolchain, tree: Tree, chip: chips.Chip, res: Resolved, work: Path, core: str,
                  out: Path) -> list[str]:
    part, define, index = TRISCS[core]
    extra = ["-DRUNTIME_FORMATS"] if res.spec.runtime_formats else []
    return [*_common(tools, tree, chip, work), f"-DCOMPILE_FOR_TRISC={index}", f"-DLLK_TRISC_{define}", *extra,
            "-include", str(tree.standins / "ttinsn.h"),
            *_link(tree, chip, f"{part}.ld", work / "kernel.cpp", out / f"{part}.elf")]


def brisc_command(tools: toolchain.Toolchain, tree: Tree, chip: chips.Chip, work: Path, out: Path) -> list[str]:
    return [*_common(tools, tree, chip, work),
            *_link(tree, chip, "brisc.ld", tree.tests / "helpers" / "src" / "brisc.cpp", out / "brisc.elf")]


def _compile(core: str, cmd: list[str], work: Path) -> tuple[int, str]:
    try:
        done = subprocess.run(cmd, capture_output=True, text=True, timeout=COMPILE_TIMEOUT)
        code, log = done.returncode, done.stdout + done.stderr
    except subprocess.TimeoutExpired:
        code, log = -1, f"error: the compiler took more than {COMPILE_TIMEOUT} s\n"
    except OSError as exc:
        code, log = -1, f"error: cannot run {cmd[0]}: {exc}\n"
    (work / f"{_part(core)}.log").write_text(" ".join(cmd) + "\n\n" + log)
    return code, log


def diagnose(kernel: str, chip: str, core: str, log: str, path: Path,
             hint: Callable[[str], str] | None = None) -> str:
    """One line for a failed compile: SFPI needed, a parameter to give (``hint(name)``: what the
    vendor's tests pass for it), or the first error with its log's path."""
    if _needs_sfpi(log):
        return (f"{kernel} uses SFPI vector types (sfpi::vFloat and kin), which need the vendor's SFPI "
                f"compiler: it cannot be built here ({_part(core)}, {chip}; log {path})")
    undeclared = re.search(r"tests/(?:sources|helpers)/\S+ error: '([A-Za-z]\w*)' was not declared in this scope", log)
    if undeclared and undeclared.group(1) in FUSED_NAMES:
        return (f"{kernel} runs several L1-to-L1 passes with their own formats (the harness's fused "
                f"L1_to_L1_ITERATIONS > 1), which tessera's build header does not describe (log {path})")
    missing = re.search(r"tests/(?:sources|helpers)/\S+ fatal error: (\S+): No such file or directory", log)
    if missing:
        return (f"{kernel} is not built for {chip}: tt-llk has no {missing.group(1)} there (log {path})")
    if undeclared and (undeclared.group(1) in VOCABULARY or re.fullmatch(r"[A-Z][A-Z0-9_]*", undeclared.group(1))):
        name = undeclared.group(1)
        told = (hint(name) if hint is not None else "") or "see its test in tt-llk's tests/python_tests"
        return (f"{kernel} needs the build-header parameter {name}, which tessera does not know: give it with "
                f"--param {name}=VALUE ({told}; log {path})")
    errors = [ln for ln in log.splitlines() if " error: " in ln or ln.startswith("error:") or "undefined reference" in ln]
    first = errors[0] if errors else (log.strip().splitlines() or ["no output"])[-1]
    first = re.sub(r"^\S*/(tt-llk|tt_metal|ttnn)/", r"\1/", first.strip())
    return f"{kernel}: the {_part(core)} part does not compile for {chip}: {first[:300]} (log {path})"


def _needs_sfpi(log: str) -> bool:
    return any(" error: " in ln and _SFPI_WORDS.search(ln) for ln in log.splitlines())


def clean(out: Path) -> None:
    """Remove what a previous build left in ``out`` (its ELFs, manifest and build folder)."""
    for name in (*manifest.CORE_FILES.values(), "kernel.toml"):
        (out / name).unlink(missing_ok=True)
    shutil.rmtree(out / "build", ignore_errors=True)
