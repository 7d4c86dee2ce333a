"""The facts a benchmark number is meaningless without: CPU, cores, interpreter, versions, date.

Collected once per ``tessera bench`` run and printed with the results (and in
``--json``), so numbers pasted into docs/performance.md carry their context.  The
load average is included because other jobs on the machine slow every variant
down — the ratios less than the absolute rates.  The peer's version (``riscemu``, see
:data:`tessera.bench.PEER`) is a fact too: the ratios to it depend on it.
"""

from __future__ import annotations

import datetime
import os
import platform
from typing import Any

from tessera.bench import PEER
from tessera.version import __version__


def cpu_model() -> str:
    """The ``model name`` of /proc/cpuinfo where there is one, else what ``platform`` knows."""
    try:
        with open("/proc/cpuinfo", encoding="utf-8", errors="replace") as fh:
            for line in fh:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine() or "unknown"


def _version(dist: str) -> str | None:
    import importlib.metadata as md

    try:
        return md.version(dist)
    except md.PackageNotFoundError:
        return None


def machine_facts() -> dict[str, Any]:
    import numpy

    try:
        load: list[float] | None = [round(x, 2) for x in os.getloadavg()]
    except OSError:
        load = None
    return {
        "cpu": cpu_model(),
        "cores": os.cpu_count(),
        "python": platform.python_version(),
        "implementation": platform.python_implementation(),
        "numpy": numpy.__version__,
        PEER: _version(PEER),
        "tessera": __version__,
        "platform": platform.platform(),
        "date": datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds"),
        "load_average": load,
    }


def describe(facts: dict[str, Any]) -> str:
    """One line for the text report."""
    peer = f"{PEER} {facts[PEER]}" if facts.get(PEER) else f"{PEER} not installed"
    load = facts["load_average"]
    return (f"{facts['date']}  {facts['cpu']}, {facts['cores']} cores, "
            f"{facts['implementation']} {facts['python']}, numpy {facts['numpy']}, {peer}, "
            f"tessera {facts['tessera']}" + (f", load average {load[0]}" if load else ""))
