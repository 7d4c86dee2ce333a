"""``tessera batch RUNS.jsonl``: many ``tessera run`` specifications, on local workers or a Dask cluster."""

from __future__ import annotations

import os
import sys
from typing import Any

import click

from tessera.batch.backends import scheduler_option


def default_output(runs: str) -> str:
    """``runs.jsonl`` -> ``runs.results.jsonl``, beside it."""
    root, _ext = os.path.splitext(runs)
    return f"{root}.results.jsonl"


@click.command()
@click.argument("runs", type=click.Path())  # a missing file is a load error (65), as for `run`
@click.option("-o", "--output", default=None, metavar="FILE",
              help="Results file, JSON lines, resumed when it exists (default: RUNS with .results.jsonl; "
                   "'-' = stdout, nothing resumed).")
@click.option("--workers", type=click.IntRange(min=1), default=None, metavar="N",
              help="Local worker processes (default: the CPU count).")
@click.option("--scheduler", default=None, metavar="tcp://HOST:PORT", callback=scheduler_option,
              help="Run on the Dask cluster of this scheduler instead (pip install 'tessera[dask]').")
@click.option("-q", "--quiet", is_flag=True, help="No progress bar, notes or summary line.")
@click.pass_obj
def batch(obj: Any, runs: str, output: str | None, workers: int | None, scheduler: str | None,
          quiet: bool) -> int:
    """Run every ``tessera run`` specification of RUNS (one JSON object per line).

    Results go to the output file as each run finishes; running the same command again
    skips the runs already there (same id, same spec), so an interrupted batch goes on
    where it stopped.  Every spec is checked before anything runs: a bad line is one
    error naming it.  Exit status 0 once every run has a result, whatever the runs'
    outcomes (they are in the results).  See docs/batch.md.
    """
    from tessera.batch.backends import connect
    from tessera.batch.runner import run_batch

    out = output or default_output(runs)
    if scheduler is not None and workers is not None:
        raise click.UsageError("--workers is for the local pool; a Dask cluster has its own workers")
    client = connect(scheduler) if scheduler is not None else None
    try:
        summary = run_batch(runs, out, workers=workers, client=client, host=obj.host,
                            progress=False if quiet else None, quiet=quiet)
    except KeyboardInterrupt as exc:
        if out != "-":
            click.echo(f"interrupted; finished runs are in {out}: run the same command again to go on",
                       err=True)
            exc.reported = True  # type: ignore[attr-defined]  # main() need not say it again
        raise
    finally:
        if client is not None:
            client.close()
    if not quiet:
        click.echo(summary.line(), err=True)
        sys.stderr.flush()
    return 0
