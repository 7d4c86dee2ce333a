"""Workload ``cycles-inorder``: what the in-order model costs a real program.

Issue 19 asks a cycle model to stay usable: on the compiled RV32 workload the in-order
model must run at least a fifth of the functional fast engine's rate, caches included,
measured in the same run.  The workload runs the riscv plugin's ``mark`` program (C
compiled with gcc: calls, loads and stores, branches; about 2 M instructions, found
through the bench with ``Context.program``) on the fast engine under a host holding the
riscv plugin and this one:

* ``functional`` — no model (the nominal clock);
* ``inorder`` — ``--cycles inorder``, caches and predictor at their defaults;
* ``inorder-perfect`` — the same with ``cycles.caches = false``.

Every sample checks the program's own result (its checksum, as the ``mark`` workload
does) and that a modelled run's clock is at least its instruction count + 4.
``model_ratio`` is ``inorder``'s rate over ``functional``'s (target ≥ 0.2); the modelled
variants also report CPI and the stall breakdown of the run.
"""

from __future__ import annotations

from typing import Any

from tessera.bench.hosts import minimal_host
from tessera.bench.model import BenchFailure, Context, Sample, Variant, Workload
from tessera.bench.targets import Target

__all__ = ["InOrderCost", "workloads"]

PROGRAM = "mark"
ITERATIONS = 60
ENGINE = "fast"
VARIANTS: dict[str, dict[str, Any] | None] = {
    "functional": None,
    "inorder": {"cycles": "inorder"},
    "inorder-perfect": {"cycles": "inorder", "cycles.caches": False},
}


class InOrderCost(Workload):
    name = "cycles-inorder"
    title = "the in-order RISC-V cycle model on the compiled mark program, fast engine"
    order = 75
    targets = (Target("cycles-inorder", "in-order cycle model (caches on), rate vs the functional fast engine",
                      ("cycles-inorder", "derived", "model_ratio"), 0.2, True, "x"),)

    def prepare(self, ctx: Context) -> list[Variant]:
        import tessera_cycles.plugin

        self.program = ctx.program(PROGRAM, ctx.size(ITERATIONS, minimum=2, quick=20))
        self.host = minimal_host(self.program.plugin, (tessera_cycles.plugin, "cycles"))
        self.size = {"iterations": self.program.iterations, "engine": ENGINE}
        self.check = {**self.program.check, "clock": "a modelled run's clock >= its instructions + 4"}
        return [Variant(name, self._runner(name), "no cycle model" if cfg is None else
                        ", ".join(f"{k}={v}" for k, v in cfg.items())) for name, cfg in VARIANTS.items()]

    def _runner(self, variant: str) -> Any:
        def run() -> Sample:
            import tessera_cycles

            machine = self.program.machine(self.host, ENGINE, VARIANTS[variant])
            sample = self.program.run(machine)
            rep = tessera_cycles.report(machine)
            if VARIANTS[variant] is not None:
                if rep is None:
                    raise BenchFailure(f"{variant}: the machine ran no cycle model")
                hart = rep["agents"]["hart0"]
                if hart["cycles"] < hart["instructions"] + 4 or machine.clock != rep["clock"]:
                    raise BenchFailure(f"{variant}: clock {machine.clock} for {hart['instructions']} instructions")
                sample.extra.update(cpi=round(hart["cpi"], 4), cycles=hart["cycles"], stalls=hart["stalls"])
            return sample

        return run

    def derive(self, best: dict[str, Sample]) -> dict[str, Any]:
        base = best.get("functional")
        if base is None:
            return {}
        return {f"{'model' if v == 'inorder' else 'perfect'}_ratio": best[v].rate / base.rate
                for v in ("inorder", "inorder-perfect") if v in best}

    @classmethod
    def comparison(cls, entry: dict[str, Any], variant: str) -> list[str]:
        key = {"inorder": "model_ratio", "inorder-perfect": "perfect_ratio"}.get(variant)
        ratio = entry["derived"].get(key) if key else None
        return [] if ratio is None else [f"{ratio:.3f}x the functional rate"]


def workloads() -> list[type[Workload]]:
    return [InOrderCost]
