"""Reports over a fault-injection campaign's results: ``tessera faults report RESULTS``.

:mod:`.inputs` reads the results file and its ``RESULTS.campaign.json``; :mod:`.stats`
has the intervals (Wilson, with the finite-population correction); :mod:`.summary`
aggregates the results into one JSON-able dict; :mod:`.terminal` prints it as tables,
:mod:`.html` writes it as a self-contained page with SVG charts; :mod:`.cli` is the
command.  docs/faults-report.md describes the report and its JSON.
"""

from __future__ import annotations

import importlib
from typing import Any

#: imported on first use: ``tessera run`` imports the faults command line, which names
#: the report command (:mod:`.cli`), and nothing else of the report is needed then
_EXPORTS = {"Interval": "stats", "wilson": "stats", "summarize": "summary"}

__all__ = ["Interval", "summarize", "wilson"]


def __getattr__(name: str) -> Any:
    if name not in _EXPORTS:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(f"tessera_faults.report.{_EXPORTS[name]}"), name)
