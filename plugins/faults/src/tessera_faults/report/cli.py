"""``tessera faults report RESULTS``: a campaign's results as tables, JSON or an HTML page."""

from __future__ import annotations

import json
import os

import click

from tessera.errors import ConfigError

__all__ = ["report"]


@click.command("report")
@click.argument("results", type=click.Path())
@click.option("--html", "html_file", default=None, metavar="FILE",
              help="Also write the report as one self-contained HTML page with charts.")
@click.option("--json", "as_json", is_flag=True, help="Print the summary as JSON instead of tables.")
@click.option("--meta", "meta_file", default=None, metavar="FILE",
              help="The campaign's metadata (default: RESULTS.campaign.json, when it exists).")
@click.option("--confidence", type=float, default=None, metavar="C",
              help="Confidence of the intervals, between 0 and 1 (default: the campaign's, else 0.95).")
def report(results: str, html_file: str | None, as_json: bool, meta_file: str | None,
           confidence: float | None) -> int:
    """Summarise a fault-injection campaign's results (docs/faults-report.md).

    Outcome rates over the injected faults with Wilson intervals, per population,
    structure (with its AVF), fault model and instruction class, and the failure
    fraction over the golden run.  Works on a campaign still running (the faults done so
    far) and without the metadata file (then without population sizes).
    """
    from tessera_faults.report.inputs import default_metadata_path, read_metadata, read_records
    from tessera_faults.report.summary import summarize

    if confidence is not None and not 0.0 < confidence < 1.0:
        raise ConfigError(f"--confidence {confidence}: give a confidence between 0 and 1, e.g. 0.95")
    if html_file is not None and os.path.isdir(html_file):
        raise ConfigError(f"--html {html_file}: it is a directory")
    records = read_records(results)
    if meta_file is None and os.path.isfile(default_metadata_path(results)):
        meta_file = default_metadata_path(results)
    meta = read_metadata(meta_file) if meta_file is not None else None
    summary = summarize(records, meta, confidence, results=results, metadata=meta_file)
    if html_file is not None:
        from tessera_faults.report.html import write_html

        write_html(summary, html_file)
    if as_json:
        click.echo(json.dumps(summary, indent=2))
        return 0
    from tessera_faults.report.terminal import print_report

    print_report(summary)
    if html_file is not None:
        click.echo(f"HTML report written to {html_file}", err=True)
    return 0
