"""``tessera bench``: measure the engine against its peers and print the numbers (not part of CI)."""

from __future__ import annotations

import sys
from typing import Any

import click

from tessera.bench import WORKLOAD_NAMES

QUICK_SCALE = 0.1
QUICK_REPEAT = 2
DEFAULT_REPEAT = 3


def _names(values: tuple[str, ...]) -> list[str]:
    """``--only a --only b`` and ``--only a,b`` alike; unknown names are a usage error."""
    names = [n.strip() for v in values for n in v.split(",") if n.strip()]
    unknown = [n for n in names if n not in WORKLOAD_NAMES]
    if unknown:
        raise click.BadParameter(f"unknown workload {', '.join(map(repr, unknown))} "
                                 f"(choose from {', '.join(WORKLOAD_NAMES)})", param_hint="--only")
    return names


@click.command()
@click.option("--quick", is_flag=True,
              help=f"A short run: --repeat {QUICK_REPEAT}, --scale {QUICK_SCALE} for workloads that stay "
                   "representative when small (unless given).")
@click.option("--json", "as_json", is_flag=True, help="Print the report as JSON (machine facts and every number).")
@click.option("--only", "only", multiple=True, metavar="NAME",
              help=f"Only these workloads (repeatable or comma-separated): {', '.join(WORKLOAD_NAMES)}.")
@click.option("--repeat", type=click.IntRange(min=1), default=None,
              help=f"Rounds; each variant keeps its best (default {DEFAULT_REPEAT}, {QUICK_REPEAT} with --quick).")
@click.option("--scale", type=click.FloatRange(min=0, min_open=True), default=None,
              help="Multiply every workload's size (default 1; tests use tiny values).")
@click.option("--check", is_flag=True, help="Exit 1 when a target is not met.")
@click.pass_obj
def bench(obj: Any, quick: bool, as_json: bool, only: tuple[str, ...], repeat: int | None,
          scale: float | None, check: bool) -> int:
    """Measure instructions per second against riscemu, engines, hooks, tracing and the SFPU,
    and how long whole tessera commands take (startup).

    Every workload checks its result on every run: a wrong result is reported
    and the exit status is 1.  Workloads whose plugin is not installed (or is
    disabled with --no-plugin) are skipped with a note.
    """
    names = _names(only)
    repeat = repeat or (QUICK_REPEAT if quick else DEFAULT_REPEAT)
    floors = quick and scale is None  # --quick keeps the steady-state workloads big enough
    scale = scale or (QUICK_SCALE if quick else 1.0)
    progress = None
    if not as_json and sys.stderr.isatty():
        def progress(workload: str, variant: str, round_no: int) -> None:
            click.echo(f"\r\x1b[Kround {round_no + 1}/{repeat}: {workload} / {variant}", err=True, nl=False)

    from tessera.bench.report import print_text, to_json
    from tessera.bench.runner import run_bench

    report = run_bench(obj.host, only=names, repeat=repeat, scale=scale, progress=progress, quick=floors)
    if progress is not None:
        click.echo("\r\x1b[K", err=True, nl=False)
    if as_json:
        click.echo(to_json(report))
    else:
        print_text(report)
    for failure in report["failures"]:
        click.echo(f"tessera bench: FAILED {failure}", err=True)
    missed = [t["name"] for t in report["targets"] if t["met"] is False]
    if check and missed:
        click.echo(f"tessera bench: target(s) not met: {', '.join(missed)}", err=True)
    return 1 if report["failures"] or (check and missed) else 0
