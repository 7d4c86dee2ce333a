"""``tessera tensix check``: build a tt-llk kernel, run it on the tile against a numpy golden, say pass or FAIL.

One check is what the vendor's harness does for one test variant: build the kernel
(:mod:`.build`), write its inputs and golden (:mod:`.goldens`), run it with ``tessera run``
and compare.  The run manifest it writes (``run-<inputs>.toml`` next to the ELFs) names
the input files, the output file and — for formats the loader reads as values — the
golden with its tolerance, so ``tessera run`` on it repeats the check by itself (exit 79
on a mismatch).  :func:`matrix_cases` lists every kernel with a golden over chips, the
formats its vendor test uses, operations and sizes, :func:`matrix_case` checks one, and
:func:`table_row` formats the result as one row of a Markdown table.
"""

from __future__ import annotations

import dataclasses
import json
import re
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from tessera.errors import ConfigError
from tessera_tensix.llk import goldens
from tessera_tensix.llk.kernels import Options

#: steps one run may take (the largest listed kernel, matmul 2x2x2, needs a few million)
MAX_STEPS = 50_000_000
#: seconds one run may take before it counts as hung
RUN_TIMEOUT = 900
MODES = ("integer", "random")


@dataclass(frozen=True)
class Verdict:
    """The outcome of one kernel run against its golden."""

    mode: str
    passed: bool
    reason: str = ""
    seconds: float = 0.0


@dataclass(frozen=True)
class Outcome:
    """One build and its runs (one per input mode); ``problem`` when it did not build."""

    label: str
    verdicts: tuple[Verdict, ...] = ()
    problem: str | None = None
    seconds: float = 0.0
    directory: Path | None = None          # where the build and its run files were kept

    @property
    def passed(self) -> bool:
        return self.problem is None and all(v.passed for v in self.verdicts)


def with_defaults(opts: Options) -> Options:
    """The check's defaults: MATH_FIDELITY HiFi4 for kernels that multiply (the golden is the
    full-precision product), unless the user chose a fidelity."""
    kspec = goldens.spec(opts.kernel)
    if goldens.multiplies(kspec, opts.op) and opts.math_fidelity is None and "MATH_FIDELITY" not in opts.params:
        return dataclasses.replace(opts, math_fidelity="HiFi4")
    return opts


def label(opts: Options) -> str:
    """``KERNEL[op] chip in->out size``, the way the check's lines and the matrix name a case."""
    fmt_in = opts.input_format + (f"+{opts.input_format_b}" if opts.input_format_b else "")
    size = (f"{opts.dims[0]}x{opts.dims[1]}" if opts.dims else
            "x".join(f"{k.split('_')[0]}{v}" for k, v in opts.params.items() if k in ("RT_DIM", "KT_DIM", "CT_DIM"))
            or f"32x{32 * opts.tiles}")
    op = f"[{opts.op}]" if opts.op else ""
    return f"{opts.kernel}{op} {opts.chip} {fmt_in}->{opts.output_format or opts.input_format} {size}"


def tessera_command() -> list[str]:
    script = Path(sys.executable).parent / "tessera"
    return [str(script)] if script.exists() else [sys.executable, "-m", "tessera.cli.main"]


def _toml(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        return repr(value)
    return json.dumps(str(value))


def write_run(built: goldens.Built, prepared: goldens.Prepared, mode: str) -> Path:
    """``run-<mode>.toml``: the build's manifest with input files, the output file and its golden."""
    directory = built.path.parent
    text = built.path.read_text()
    text = text.split("\n[[outputs]]", 1)[0].rstrip("\n") + "\n"
    blocks = text.split("\n\n")
    for i, block in enumerate(blocks):
        head = block.lstrip("\n")
        name = next((n for n in prepared.inputs if head.startswith(f'[[inputs]]\nname = "{n}"\n')), None)
        if name is None:
            continue
        file = f"{name}-{mode}.bin"
        (directory / file).write_bytes(prepared.inputs[name])
        block = block.replace(f'name = "{name}"\n', f'name = "{name}"\nfile = "{file}"\n', 1)
        fmt = next(b.format for b in built.inputs if b.name == name)
        raw = goldens.encoding(fmt).raw_format
        if raw is not None:       # the bytes are written as they are; the loader needs a format it knows
            block = block.replace(f'format = "{fmt}"\n', f'format = "{raw}"                 # {fmt} bytes\n', 1)
        blocks[i] = block
    text = "\n\n".join(blocks)
    out = built.outputs[0]
    enc = goldens.encoding(out.format)
    entry: dict[str, Any] = {"name": out.name, "address": out.address, "format": enc.raw_format or out.format}
    # elements; a block format's raw output is its bytes
    entry["count"] = out.tiles * out.tile_bytes if enc.raw_format and not enc.integer else prepared.golden.size
    entry["file"] = f"{out.name}-{mode}.npy"
    if enc.raw_format is None or enc.integer:
        golden_file = f"golden-{mode}.npy"
        if enc.raw_format is None:
            np.save(directory / golden_file, prepared.golden.astype(np.float32))
        else:
            bits = np.frombuffer(enc.encode(prepared.golden), dtype="<u4" if enc.raw_format == "UInt32" else "u1")
            np.save(directory / golden_file, bits)
        entry.update(golden=golden_file, atol=prepared.atol, rtol=prepared.rtol)
    np.save(directory / f"golden-{mode}-values.npy", prepared.golden)
    text += "\n[[outputs]]\n" + "".join(f"{k} = {_toml(v) if k != 'address' else hex(v)}\n" for k, v in entry.items())
    path = directory / f"run-{mode}.toml"
    path.write_text(text)
    return path


def run(path: Path, *, max_steps: int = MAX_STEPS, timeout: float = RUN_TIMEOUT) -> tuple[int | None, str]:
    """``tessera run path``: its exit status (None when it timed out) and its last stderr line."""
    try:
        done = subprocess.run([*tessera_command(), "run", str(path), "--max-steps", str(max_steps)],
                              capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return None, f"timed out after {timeout:g} s"
    lines = [ln.strip() for ln in done.stderr.splitlines() if ln.strip()]
    return done.returncode, (lines[-1] if lines else "")


def check_built(directory: Path, mode: str, seed: int, *, max_steps: int = MAX_STEPS,
                timeout: float = RUN_TIMEOUT) -> Verdict:
    """Run the build in ``directory`` with ``mode`` inputs and compare its output with the golden."""
    start = time.monotonic()
    built = goldens.read_built(directory / "kernel.toml")
    prepared = goldens.prepare(built, mode, seed)
    path = write_run(built, prepared, mode)
    out = built.outputs[0]
    saved = directory / f"{out.name}-{mode}.npy"
    saved.unlink(missing_ok=True)           # a run that fails early leaves none
    code, line = run(path, max_steps=max_steps, timeout=timeout)
    took = time.monotonic() - start
    if code not in (0, 79) or not saved.exists():
        reason = line.removeprefix("tessera: ") if code is None or line else f"tessera run exited {code}"
        return Verdict(mode, False, f"run: {reason} (exit {code})" if code is not None else f"run: {reason}", took)
    got = goldens.encoding(out.format).saved(np.load(saved))
    problem = goldens.compare(got, prepared.golden, atol=prepared.atol, rtol=prepared.rtol, layout=out.layout,
                              dims=built.dims, pcc=not prepared.exact)
    if problem is None and code == 79:
        problem = line.removeprefix("tessera: ")
    return Verdict(mode, problem is None, problem or "", took)


@dataclass
class Settings:
    """How checks run: inputs, seed, budgets, where builds go."""

    modes: tuple[str, ...] = ("integer",)
    seed: int = 0
    max_steps: int = MAX_STEPS
    timeout: float = RUN_TIMEOUT
    jobs: int | None = None
    keep: bool = False                       # keep the temporary build folder


def check(opts: Options, settings: Settings, out: Path | None = None) -> Outcome:
    """Build ``opts`` (into ``out``, else a temporary folder) and run it once per input mode.

    A kernel without a golden, or options the build refuses, are ConfigErrors; a kernel
    tt-llk's tests do not run on the chip is an UnsupportedChip first."""
    from tessera_tensix.llk.build import build, check_chip, clean

    check_chip(opts, download=False)
    opts = with_defaults(opts)
    for fmt in (opts.input_format, opts.output_format, opts.input_format_b):
        if fmt is not None:
            goldens.encoding(fmt)
    start = time.monotonic()
    with _folder(out, settings.keep) as directory:
        clean(directory)
        build(opts, directory, download=False, jobs=settings.jobs)
        verdicts = tuple(check_built(directory, mode, settings.seed, max_steps=settings.max_steps,
                                     timeout=settings.timeout) for mode in settings.modes)
    kept = directory if out is not None or settings.keep else None
    return Outcome(label(opts), verdicts, seconds=time.monotonic() - start, directory=kept)


@contextmanager
def _folder(out: Path | None, keep: bool) -> Iterator[Path]:
    """``out`` (created), else a temporary folder, removed afterwards unless ``keep``."""
    if out is not None:
        try:
            out.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise ConfigError(f"cannot create {out}: {exc.strerror or exc}") from None
        yield out
        return
    temp = Path(tempfile.mkdtemp(prefix="tessera-llk-check-"))
    try:
        yield temp
    finally:
        if not keep:
            shutil.rmtree(temp, ignore_errors=True)


# ------------------------------------------------------------------ the matrix


def matrix_cases(chips: tuple[str, ...], kernels: tuple[str, ...] = ()) -> Iterator[Options]:
    """Every kernel with a golden x chip x format of its vendor test x operation x size, then
    the listed kernels that do not build here (one default build per chip)."""
    for kernel, kspec in goldens.KERNELS.items():
        if kernels and kernel not in kernels:
            continue
        for chip in chips:
            for fmt in kspec.formats:
                for op in kspec.ops:
                    if (fmt, op) in kspec.excluded:
                        continue
                    for kind, size in kspec.sizes:
                        extra = dict(kspec.format_options.get(fmt, {}))
                        shape: dict[str, Any] = ({"params": dict(size)} if kind == "params" else
                                                 {"dims": tuple(int(n) for n in str(size).split("x"))})
                        yield Options(kernel=kernel, chip=chip, input_format=fmt, op=op, **shape, **extra)
    for kernel in goldens.UNBUILDABLE:
        if not kernels or kernel in kernels:
            for chip in chips:
                yield Options(kernel=kernel, chip=chip)


def matrix_case(opts: Options, settings: Settings, folder: Path | None = None) -> Outcome:
    """One row of the matrix: a check, or for a kernel without a golden, whether it builds
    (builds go to ``folder/<case>`` when given, else to temporary folders)."""
    from tessera_tensix.llk.build import build

    start = time.monotonic()
    out = folder / _slug(label(opts)) if folder is not None else None
    try:
        if opts.kernel in goldens.UNBUILDABLE:
            with _folder(out, False) as directory:
                build(opts, directory, download=False, jobs=settings.jobs)
            return Outcome(label(opts), problem="builds, but the check has no golden for it",
                           seconds=time.monotonic() - start)
        return check(opts, dataclasses.replace(settings, keep=False), out)
    except ConfigError as exc:
        why = re.sub(r"; log [^)]*\)$", ")", re.sub(r" \(log [^)]*\)$", "", exc.message))
        kind = "not buildable here" if opts.kernel in goldens.UNBUILDABLE else "build"
        return Outcome(label(with_defaults(opts)) if opts.kernel in goldens.KERNELS else label(opts),
                       problem=f"{kind}: {why}", seconds=time.monotonic() - start)
    except (OSError, ValueError, AssertionError) as exc:    # one bad case must not end the whole matrix
        return Outcome(label(opts), problem=f"error: {type(exc).__name__}: {exc}", seconds=time.monotonic() - start)


def _slug(text: str) -> str:
    return "".join(c if c.isalnum() or c in "-_." else "_" for c in text)


HEADER = ("| kernel | op | chip | formats | size | integer inputs | random inputs | seconds |\n"
          "|---|---|---|---|---|---|---|---|")


def table_row(opts: Options, outcome: Outcome, modes: tuple[str, ...] = MODES) -> str:
    """The Markdown row of one case: each input mode's pass/FAIL, or the build's problem."""
    opts = with_defaults(opts) if opts.kernel in goldens.KERNELS else opts
    parts = label(opts).split(" ")
    kernel, _, op = parts[0].partition("[")
    fmts, size = parts[2], parts[3]
    if opts.math_fidelity and goldens.KERNELS.get(opts.kernel, None) is not None:
        size += f" {opts.math_fidelity}"
    if opts.dest_acc:
        fmts += " (32-bit Dest)"
    by_mode = {v.mode: v for v in outcome.verdicts}
    cells = []
    for mode in MODES:
        if outcome.problem is not None:
            cells.append(outcome.problem if mode == MODES[0] else "—")
        elif mode not in modes or mode not in by_mode:
            cells.append("—")
        else:
            v = by_mode[mode]
            cells.append("pass" if v.passed else f"FAIL: {v.reason}")
    cells = [c.replace("|", "\\|") for c in cells]
    return (f"| {kernel} | {op.rstrip(']') or '—'} | {opts.chip} | {fmts} | {size} | {cells[0]} | {cells[1]} | "
            f"{outcome.seconds:.0f} |")
