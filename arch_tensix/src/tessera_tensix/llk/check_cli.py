"""``tessera tensix check``: the command line of :mod:`.check` (one kernel, or ``--matrix``).

Kept apart from :mod:`.cli` so the build command's module stays small; :mod:`.cli`
adds this command to the ``tensix`` group.  Option names and meanings are the build's.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

import click

from tessera.errors import CheckFailed, ConfigError
from tessera_tensix.llk.options import _FIDELITIES, _dims


@click.command("check")
@click.argument("kernels", nargs=-1)
@click.option("--chip", "chips", multiple=True,
              help="blackhole or wormhole_b0 (default blackhole; --matrix: both). Repeatable with --matrix.")
@click.option("--format", "input_format", default="Float16_b", show_default=True, help="L1 format of the inputs.")
@click.option("--out-format", "output_format", default=None, help="L1 format of the result (default: --format).")
@click.option("--format-b", "input_format_b", default=None, help="L1 format of input B (default: --format).")
@click.option("--tiles", default=1, show_default=True, type=click.IntRange(1, 256), help="Input tiles, in one tile-row.")
@click.option("--dims", default=None, callback=_dims, help="Input size ROWSxCOLUMNS in elements.")
@click.option("--dest-acc/--no-dest-acc", "dest_acc", default=None, help="32-bit Dest.")
@click.option("--unpack-to-dest/--no-unpack-to-dest", "unpack_to_dest", default=None, help="Unpack straight into Dest.")
@click.option("--math-fidelity", type=click.Choice(_FIDELITIES), default=None,
              help="MATH_FIDELITY (default: HiFi4 for kernels that multiply, else LoFi).")
@click.option("--op", default=None, help="The kernel's operation (add/sub/mul, row-sum ...).")
@click.option("--param", "param_list", multiple=True, metavar="NAME=VALUE", help="A build-header parameter (repeatable).")
@click.option("--force-chip", is_flag=True,
              help="Check even if tt-llk's own tests do not run KERNEL on --chip (they skip it there).")
@click.option("--inputs", "inputs", type=click.Choice(["integer", "random", "both"]), default=None,
              help="Integer-valued inputs compared exactly, random ones under the vendor's tolerance, or both "
                   "(default: integer; --matrix: both).")
@click.option("--seed", default=0, show_default=True, type=int, help="Seed of the inputs.")
@click.option("-o", "--out", "out", default=None, type=click.Path(file_okay=False, path_type=Path),
              help="Keep the build, inputs, golden and run manifests here (--matrix: one folder per case "
                   "and matrix.md).")
@click.option("--keep", is_flag=True, help="Keep the temporary build folder (its path is printed).")
@click.option("--matrix", is_flag=True, help="Check every kernel with a golden over chips, formats, operations and sizes.")
@click.option("--max-steps", default=50_000_000, show_default=True, type=click.IntRange(1),
              help="Step budget of each run.")
@click.option("--timeout", default=900.0, show_default=True, type=click.FloatRange(1), help="Seconds each run may take.")
@click.option("--jobs", type=click.IntRange(1, 64), default=None, help="Compiler runs at once.")
def check_command(kernels: tuple[str, ...], chips: tuple[str, ...], input_format: str, output_format: str | None,
                  input_format_b: str | None, tiles: int, dims: tuple[int, int] | None, dest_acc: bool | None,
                  unpack_to_dest: bool | None, math_fidelity: str | None, op: str | None, param_list: tuple[str, ...],
                  force_chip: bool, inputs: str | None, seed: int, out: Path | None, keep: bool, matrix: bool, max_steps: int,
                  timeout: float, jobs: int | None) -> None:
    """Build tt-llk's KERNEL, run it on the tile with generated inputs and compare with a numpy golden.

    Prints `KERNEL chip formats size inputs: pass` or `... FAIL <reason>`; exit 0 or 79
    (64: the build fails; 80: tt-llk does not build or test KERNEL for --chip).
    With --matrix (KERNEL names, if given, pick kernels) prints a Markdown table.
    Needs the cache `tessera tensix fetch` fills (builds are offline).
    """
    from tessera_tensix.llk import check as checks
    from tessera_tensix.llk.chips import chip as known_chip
    from tessera_tensix.llk.kernels import Options
    from tessera_tensix.llk.params import parse_assignment

    modes = {"integer": ("integer",), "random": ("random",), "both": checks.MODES, None: None}[inputs]
    for name in chips:
        known_chip(name)
    settings = checks.Settings(seed=seed, max_steps=max_steps, timeout=timeout, jobs=jobs, keep=keep)
    if matrix:
        settings.modes = modes or checks.MODES
        _matrix(checks, tuple(chips) or ("blackhole", "wormhole_b0"), kernels, settings, out)
        return
    if len(kernels) != 1:
        raise ConfigError("tessera tensix check takes one KERNEL (or --matrix)")
    if len(chips) > 1:
        raise ConfigError("--chip: give one chip (several only with --matrix)")
    settings.modes = modes or ("integer",)
    assigned: dict[str, object] = {}
    for text in param_list:
        name, value = parse_assignment(text)
        assigned[name] = value
    opts = Options(kernel=kernels[0], chip=(chips or ("blackhole",))[0], input_format=input_format,
                   output_format=output_format, input_format_b=input_format_b, dest_acc=dest_acc,
                   unpack_to_dest=unpack_to_dest, dims=dims, tiles=tiles, math_fidelity=math_fidelity, op=op,
                   params=assigned, force_chip=force_chip)
    outcome = checks.check(opts, settings, out)
    for verdict in outcome.verdicts:
        result = "pass" if verdict.passed else f"FAIL {verdict.reason}"
        click.echo(f"{outcome.label} {verdict.mode}: {result}")
    if keep and out is None and outcome.directory is not None:
        click.echo(f"kept the build, inputs, golden and run manifests in {outcome.directory}", err=True)
    if not outcome.passed:
        raise CheckFailed(f"{outcome.label}: {sum(not v.passed for v in outcome.verdicts)} of "
                          f"{len(outcome.verdicts)} runs differ from the golden")


def _matrix(checks, chips: tuple[str, ...], kernels: tuple[str, ...], settings, out: Path | None) -> None:
    from tessera_tensix.llk import goldens

    unknown = [k for k in kernels if k not in goldens.KERNELS and k not in goldens.UNBUILDABLE]
    if unknown:
        raise ConfigError(f"--matrix {unknown[0]!r}: the matrix knows {', '.join([*goldens.KERNELS, *goldens.UNBUILDABLE])}")
    cases = list(checks.matrix_cases(chips, kernels))
    table = None
    if out is not None:
        try:
            out.mkdir(parents=True, exist_ok=True)
            table = (out / "matrix.md").open("w")
        except OSError as exc:
            raise ConfigError(f"cannot write {out / 'matrix.md'}: {exc.strerror or exc}") from None
    started = time.monotonic()

    def emit(line: str) -> None:
        click.echo(line)
        sys.stdout.flush()
        if table is not None:
            table.write(line + "\n")
            table.flush()
    emit(f"tessera tensix check --matrix: {len(cases)} builds, inputs {'+'.join(settings.modes)}, seed "
         f"{settings.seed}; a row is `tessera tensix check KERNEL --chip CHIP --format F [--op OP] "
         "[--dims RxC | --param RT_DIM=..] [--dest-acc] --inputs integer|random --seed S`")
    emit("")
    emit(checks.HEADER)
    failed = checked = 0
    for opts in cases:
        outcome = checks.matrix_case(opts, settings, out)
        emit(checks.table_row(opts, outcome, settings.modes))
        if opts.kernel in goldens.KERNELS:
            checked += 1
            failed += not outcome.passed
    emit("")
    emit(f"{checked - failed} of {checked} checked builds pass ({len(cases) - checked} listed kernels do not build "
         f"here); {time.monotonic() - started:.0f} s")
    if table is not None:
        table.close()
    if failed:
        raise CheckFailed(f"{failed} of {checked} matrix builds differ from their goldens")
