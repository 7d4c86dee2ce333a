"""Reading what a campaign wrote: its results file and, beside it, ``RESULTS.campaign.json``.

Every problem is one line (a :class:`LoadError`) naming the file and what is wrong with
it, so ``tessera faults report`` on the wrong file says so instead of a traceback or an
empty report.  The results file is read with :func:`tessera.batch.read_results`, which
drops a last line cut short by a killed campaign: a report of a campaign still running
(or interrupted) works and covers the faults finished so far.
"""

from __future__ import annotations

import json
import os
import re
from typing import Any

from tessera.errors import LoadError

__all__ = ["default_metadata_path", "read_metadata", "read_records"]

_NOT_RESULT = re.compile(r":(\d+): not a result line")


def default_metadata_path(results: str) -> str:
    """Where a campaign puts its metadata: ``RESULTS.campaign.json``."""
    return f"{results}.campaign.json"


def read_records(path: str) -> list[dict[str, Any]]:
    """The results of a campaign's results file, in file order (the last line of a fault wins).

    :class:`LoadError` for a missing or unreadable file, a file that is not JSON lines of
    results, results that are not a fault campaign's (no ``outcome``), and a file with none.
    """
    from tessera.batch import read_results

    if os.path.isdir(path):
        raise LoadError(f"results file {path} is a directory")
    try:
        found = read_results(path)
    except LoadError as exc:
        bad = _NOT_RESULT.search(exc.message)
        if bad is None:
            raise
        raise LoadError(f"{path} is not a results file of a fault campaign (line {bad.group(1)} is not "
                        "a result line)") from None
    records = list(found.values())
    if not records:
        raise LoadError(f"results file {path} holds no results yet (run the campaign: tessera faults run)")
    for record in records:
        if not isinstance(record.get("outcome"), str):
            raise LoadError(f"{path} is not a results file of a fault campaign (result {record['id']!r} has "
                            "no outcome)")
    return records


def read_metadata(path: str) -> dict[str, Any]:
    """A campaign's metadata file, checked for the shape a report relies on."""
    if not os.path.exists(path):
        raise LoadError(f"campaign metadata file {path} does not exist")
    try:
        with open(path, encoding="utf-8") as fh:
            data = json.load(fh)
    except OSError as exc:
        raise LoadError(f"cannot read campaign metadata file {path}: {exc.strerror or exc}") from None
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        where = f" (line {exc.lineno})" if isinstance(exc, json.JSONDecodeError) else ""
        raise LoadError(f"{path} is not a campaign metadata file: not JSON{where}") from None
    if not isinstance(data, dict):
        raise LoadError(f"{path} is not a campaign metadata file: not a JSON object")
    pops = data.get("populations", [])
    if not isinstance(pops, list) or not all(isinstance(p, dict) and isinstance(p.get("name"), str) for p in pops):
        raise LoadError(f"{path} is not a campaign metadata file: 'populations' is not a list of populations")
    if not isinstance(data.get("golden", {}), dict):
        raise LoadError(f"{path} is not a campaign metadata file: 'golden' is not an object")
    return data
