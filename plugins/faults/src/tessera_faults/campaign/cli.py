"""``tessera faults run CAMPAIGN`` and ``tessera faults plan CAMPAIGN``."""

from __future__ import annotations

import json
import os
import sys
from typing import Any

import click

from tessera.batch import scheduler_option


def default_output(campaign: str) -> str:
    """``sum.toml`` -> ``sum.results.jsonl``, beside it."""
    root, _ext = os.path.splitext(campaign)
    return f"{root}.results.jsonl"


@click.command("run")
@click.argument("campaign", type=click.Path())
@click.option("-o", "--output", default=None, metavar="FILE",
              help="Results file, JSON lines, resumed when it exists (default: CAMPAIGN with .results.jsonl).")
@click.option("--workers", type=click.IntRange(min=1), default=None, metavar="N",
              help="Local worker processes (default: the CPU count).")
@click.option("--scheduler", default=None, metavar="tcp://HOST:PORT", callback=scheduler_option,
              help="Run on the Dask cluster of this scheduler instead (pip install 'tessera[dask]').")
@click.option("--limit", type=click.IntRange(min=0), default=None, metavar="N",
              help="Inject at most N faults now (run again to go on).")
@click.option("-q", "--quiet", is_flag=True, help="No progress bar, notes or summary line.")
@click.pass_obj
def run(obj: Any, campaign: str, output: str | None, workers: int | None, scheduler: str | None,
        limit: int | None, quiet: bool) -> int:
    """Run a fault-injection campaign (a TOML file: docs/faults.md, "Campaigns").

    The golden run first, then every sampled fault, on local workers or a Dask cluster;
    results stream to the output file, and running the same command again skips the
    faults already there, so an interrupted campaign goes on where it stopped.  Exit
    status 0 once every fault has a result; ``tessera faults report`` summarises them.
    """
    from tessera.batch import connect
    from tessera_faults.campaign.runner import run_campaign

    out = output or default_output(campaign)
    if scheduler is not None and workers is not None:
        raise click.UsageError("--workers is for the local pool; a Dask cluster has its own workers")
    client = connect(scheduler) if scheduler is not None else None
    try:
        summary = run_campaign(campaign, out, workers=workers, client=client, host=obj.host,
                               progress=False if quiet else None, quiet=quiet, limit=limit)
    except KeyboardInterrupt as exc:
        click.echo(f"interrupted; finished faults are in {out}: run the same command again to go on", err=True)
        exc.reported = True  # type: ignore[attr-defined]
        raise
    finally:
        if client is not None:
            client.close()
    if not quiet:
        click.echo(summary.line(), err=True)
        sys.stderr.flush()
    return 0


@click.command("plan")
@click.argument("campaign", type=click.Path())
@click.option("--json", "as_json", is_flag=True, help="Machine-readable output.")
@click.option("--faults", "list_faults", is_flag=True, help="List every fault too.")
@click.pass_obj
def plan(obj: Any, campaign: str, as_json: bool, list_faults: bool) -> int:
    """Check a campaign, do its golden run and show the fault list it would inject."""
    from tessera_faults.campaign.runner import prepare

    ready = prepare(campaign, host=obj.host)
    meta = ready.metadata()
    if list_faults:
        meta["fault_list"] = [f.text for f in ready.faults]
    if as_json:
        click.echo(json.dumps(meta, indent=2, sort_keys=True))
        return 0
    from rich.console import Console
    from rich.markup import escape
    from rich.table import Table

    golden = meta["golden"]
    console = Console(width=max(100, Console().width))
    console.print(f"campaign {escape(meta['name'])}: {meta['program']} on {meta['arch']}; golden run {golden['steps']:,} "
                  f"steps, exit {golden['exit']}, {golden['snapshots']} snapshots "
                  f"({golden['snapshot_bytes']:,} bytes); hang budget {meta['budget']:,} steps", highlight=False)
    table = Table(title=f"{meta['faults']:,} faults, sampling {meta['sampling']}")
    for col in ("population", "size", "sampled"):
        table.add_column(col, justify="left" if col == "population" else "right")
    for pop in meta["populations"]:  # a range is written in brackets, which rich would take as markup
        table.add_row(escape(pop["name"]), f"{pop['size']:,}", f"{pop['sampled']:,}")
    console.print(table)
    for text in meta.get("fault_list", []):
        click.echo(text)
    return 0
