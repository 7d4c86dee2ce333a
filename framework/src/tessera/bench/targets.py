"""The speed targets ``tessera bench`` reports as met or not met (``--check`` enforces them).

Each target reads one number from the report's workload entries: a ratio measured
in the same run where it can, or an absolute time (the SFPU's ns per instruction,
the start-up times of whole commands) where the number itself is the promise.  A
target whose workload was skipped or not selected is neither met nor missed
(``met`` is ``null``).  Targets come with the workloads that offer them
(``Workload.targets``); the report lists them in the order of the workloads they read.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import attrs


@attrs.frozen
class Target:
    """One promise about one number of the report: ``path`` leads to it from ``workloads``."""

    name: str
    description: str
    path: tuple[str, ...]      # where the value is in the report's "workloads"
    limit: float
    higher_is_better: bool
    unit: str
    aim: float | None = None

    def value(self, workloads: dict[str, Any]) -> float | None:
        node: Any = workloads
        for key in self.path:
            if not isinstance(node, dict) or node.get(key) is None:
                return None
            node = node[key]
        return float(node) if isinstance(node, int | float) else None

    def evaluate(self, workloads: dict[str, Any]) -> dict[str, Any]:
        value = self.value(workloads)
        met = None if value is None else (value >= self.limit if self.higher_is_better else value <= self.limit)
        return {"name": self.name, "description": self.description, "value": value,
                "limit": self.limit, "comparison": ">=" if self.higher_is_better else "<=",
                "unit": self.unit, "aim": self.aim, "met": met}


def evaluate(workloads: dict[str, Any], targets: Iterable[Target]) -> list[dict[str, Any]]:
    """Every target against the report's ``workloads`` entries."""
    return [t.evaluate(workloads) for t in targets]


__all__ = ["Target", "evaluate"]
