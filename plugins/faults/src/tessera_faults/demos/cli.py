"""``tessera faults demo``: run the bundled demo campaigns of the installed architectures."""

from __future__ import annotations

import tempfile
from pathlib import Path
from typing import Any

import click


@click.command("demo")
@click.option("--arch", "only", multiple=True, metavar="A",
              help="Only the demos of these architectures (repeatable).")
@click.option("--workers", type=click.IntRange(min=1), default=None, metavar="N",
              help="Local worker processes (default: the CPU count).")
@click.option("-o", "--output", default=None, metavar="DIR",
              help="Write the results here and keep them (default: a fresh temporary directory, "
                   "removed afterwards).")
@click.pass_obj
def demo(obj: Any, only: tuple[str, ...], workers: int | None, output: str | None) -> int:
    """Run a small fault-injection campaign on each installed architecture and show its outcomes.

    One line per demo: its faults, how many ended in each outcome, and its results file
    (``tessera faults report DIR/ARCH-NAME.jsonl`` reports on one).  Exit status 0 when
    every demo gave a result for every fault, no tool error and at least one failure; 1
    otherwise.
    """
    from tessera_faults.demos import available, run_demo

    demos = available(obj.host, only)
    if not demos:
        click.echo("no demo campaign for the installed architectures" + (f" {', '.join(only)}" if only else ""))
        return 1 if only else 0
    with tempfile.TemporaryDirectory(prefix="tessera-faults-demo-") as tmp:
        where = Path(output) if output is not None else Path(tmp)
        failed = 0
        for d in demos:
            result = run_demo(d, obj.host, where, workers=workers)
            click.echo(f"{d.label}: {result.counts()} (results: {result.results})")
            failed += not result.ok
        if output is None:
            click.echo(f"results: {where}, a temporary directory removed now (-o DIR keeps them)")
        else:
            click.echo(f"results kept in {where} (tessera faults report {where}/ARCH-NAME.jsonl)")
    return 1 if failed else 0
