"""``tessera faults demo``: run the bundled demo campaigns of the installed architectures."""

from __future__ import annotations

import tempfile
from pathlib import Path
from typing import Any

import click


@click.command("demo")
@click.option("--arch", "only", multiple=True, help="Only the demos of these architectures.")
@click.option("--workers", type=click.IntRange(min=1), default=None, metavar="N",
              help="Local worker processes (default: the CPU count).")
@click.option("-o", "--output", default=None, metavar="DIR",
              help="Keep the results here (default: a temporary directory, removed afterwards).")
@click.pass_obj
def demo(obj: Any, only: tuple[str, ...], workers: int | None, output: str | None) -> int:
    """Run a small fault-injection campaign on each installed architecture and show its outcomes.

    Exit status 0 when every demo gave a result for every fault, no tool error, and at
    least one failure; 1 otherwise.  ``tessera faults report DIR/ARCH-NAME.jsonl``
    reports on one.
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
            click.echo(f"== {d.label}: {d.description}")
            ok, line, _summary = run_demo(d, obj.host, where / d.arch, workers=workers)
            if output is None:
                line = line.split(" (results:")[0]
            click.echo(f"-- {d.label}: {'ok' if ok else 'FAILED'} ({line})")
            failed += not ok
    return 1 if failed else 0
