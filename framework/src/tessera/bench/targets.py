"""The speed targets ``tessera bench`` reports as met or not met (``--check`` enforces them).

Each target reads one number from the report's workload entries: a ratio measured
in the same run, never an absolute time, except the SFPU one, whose target is an
absolute 1.5 µs per 32-lane instruction, and the start-up ones, absolute times of whole
commands on the machine the bench runs on.  A target whose workload was skipped is
neither met nor missed (``met`` is ``null``).
"""

from __future__ import annotations

from typing import Any

import attrs


@attrs.frozen
class Target:
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


TARGETS = (
    Target("rv32-vs-riscemu", "compiled RV32 loop, fast engine, speed vs riscemu",
           ("rv32", "vs_riscemu", "fast"), 20.0, True, "x", aim=40.0),
    Target("phoenix-vs-riscemu", "rfPhoenix loop, fast engine, speed vs riscemu",
           ("phoenix", "vs_riscemu", "fast"), 20.0, True, "x", aim=40.0),
    Target("idle-hooks", "idle hook families, overhead vs riscv plugin only",
           ("hooks", "derived", "idle_overhead_percent"), 5.0, False, "%"),
    Target("text-tracing", "text tracing, slowdown vs untraced",
           ("tracing", "derived", "slowdown", "text"), 5.0, False, "x"),
    Target("sfpu", "SFPU kernel, ns per 32-lane instruction",
           ("sfpu", "derived", "ns_per_instruction", "kernel"), 1500.0, False, "ns"),
    Target("startup-version", "tessera --version, whole process",
           ("startup", "derived", "seconds", "version"), 0.15, False, "s"),
    Target("startup-run", "tessera run --arch rv32im of a tiny program, whole process",
           ("startup", "derived", "seconds", "run-rv32"), 0.35, False, "s"),
)


def evaluate(workloads: dict[str, Any]) -> list[dict[str, Any]]:
    return [t.evaluate(workloads) for t in TARGETS]
