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
from tessera.bench.model import BenchFailure, Context, Sample, Skip, Variant, Workload
from tessera.bench.targets import Target

__all__ = ["InOrderCost", "SiliconComparison", "TensixCost", "workloads"]

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


#: the tile kernels ``cycles-tensix`` runs: the tile matmul example (MOP and replay, three
#: threads) and the vendor's prebuilt datacopy kernel (tt-llk firmware on every core)
TILE_KERNELS = ("matmul", "llk-datacopy")


class TensixCost(Workload):
    """Workload ``cycles-tensix``: what the tensix model adds to a tile kernel's run.

    Issue 19 asks the Tensix model to add at most 3x to a kernel run.  Each sample runs
    the tile's matmul example and tt-llk's prebuilt ``eltwise_unary_datacopy_test`` (both
    shipped with the tensix plugin: no compiler needed) ``runs`` times each, on fresh
    machines built outside the timed section, with and without ``--cycles tensix``; every
    run must end halted with its example's check passing.  The count is the instructions
    every agent retired (cores and Tensix threads).  ``model_overhead`` is the functional
    rate over the modelled one (target <= 3).
    """

    name = "cycles-tensix"
    title = "the tensix cycle model on tile kernels (matmul example, tt-llk datacopy), fast engine"
    order = 76
    targets = (Target("cycles-tensix", "tensix cycle model: a kernel run's time with the model over without",
                      ("cycles-tensix", "derived", "model_overhead"), 3.0, False, "x"),)

    def prepare(self, ctx: Context) -> list[Variant]:
        import tessera_cycles.plugin

        try:
            import tessera_riscv.plugin
            import tessera_tensix.plugin
            from tessera_tensix.tile.arch import TILE_BH
        except ImportError:
            raise Skip("cycles-tensix needs the tensix and riscv plugins (tessera-tensix, tessera-riscv)") from None
        self.arch = TILE_BH
        self.examples = [e for e in TILE_BH.examples if e.name in TILE_KERNELS]
        self.runs = ctx.size(5, minimum=1, quick=2)
        self.hosts = {model: minimal_host((tessera_riscv.plugin, "riscv"), (tessera_tensix.plugin, "tensix"),
                                          *([(tessera_cycles.plugin, "cycles")] if model else []))
                      for model in (False, True)}
        self.size = {"runs": self.runs, "kernels": list(TILE_KERNELS), "engine": ENGINE}
        self.check = {"what": "every kernel run halts and passes its example's check (its golden); a modelled "
                              "run reports the tensix model",
                      "expected": {"kernels": list(TILE_KERNELS), "model": "tensix"}}
        return [Variant("functional", self._runner(False), "no cycle model"),
                Variant("tensix", self._runner(True), "cycles=tensix")]

    def _machine(self, example: Any, model: bool) -> Any:
        from tessera.isa.asm import assemble
        from tessera.loaders import load_program
        from tessera.machine import Machine

        m = Machine(self.arch, host=self.hosts[model], config={"cycles": "tensix"} if model else {}, engine=ENGINE)
        if example.source:
            for address, blob in assemble(m.arch, example.source).segments:
                m.space.write_bytes(address, blob, force=True)
            m.set_entry(0)
        else:
            load_program(m, example.program_path())
        return m

    def _runner(self, model: bool) -> Any:
        def run() -> Sample:
            import time

            import tessera_cycles

            seconds, count = 0.0, 0
            for _ in range(self.runs):
                for example in self.examples:
                    m = self._machine(example, model)
                    t0 = time.perf_counter()
                    result = m.run(max_steps=example.max_steps)
                    seconds += time.perf_counter() - t0
                    problem = example.check(m, result) if example.check else None
                    if result.reason != "halted" or problem:
                        raise BenchFailure(f"{example.name}: {problem or result.detail}")
                    if model and (tessera_cycles.report(m) or {}).get("model") != "tensix":
                        raise BenchFailure(f"{example.name}: the machine ran no tensix model")
                    count += m.total_steps
            return Sample(seconds, count)

        return run

    def derive(self, best: dict[str, Sample]) -> dict[str, Any]:
        if "functional" not in best or "tensix" not in best:
            return {}
        return {"model_overhead": best["functional"].rate / best["tensix"].rate}

    @classmethod
    def comparison(cls, entry: dict[str, Any], variant: str) -> list[str]:
        overhead = entry["derived"].get("model_overhead")
        return [f"{overhead:.2f}x the functional run's time"] if variant == "tensix" and overhead else []


class SiliconComparison(Workload):
    """Workload ``cycles-silicon``: the tensix model against Blackhole silicon, point by point.

    Runs every probe suite of :mod:`tessera_cycles.probes` (tensixbench and riscvbench as
    tile programs) under ``--cycles tensix`` at the silicon runs' own loop counts (base 32;
    ``--quick``: 8) and compares each tracked point with the shipped measurements
    (:func:`tessera_cycles.calibration.compare`).  The sample's count is the tracked points,
    its time the whole comparison's.  Reported: ``within`` of ``tracked`` points within 10 %,
    ``within_fraction`` (target 1.0: every point), the points outside with their errors.
    """

    name = "cycles-silicon"
    title = "the tensix cycle model against Blackhole silicon (tensixbench, riscvbench)"
    order = 77
    targets = (Target("cycles-silicon", "tracked silicon points the tensix model matches within 10 %",
                      ("cycles-silicon", "derived", "within_fraction"), 1.0, True, ""),)

    def prepare(self, ctx: Context) -> list[Variant]:
        try:
            import tessera_tensix.plugin  # noqa: F401
        except ImportError:
            raise Skip("cycles-silicon needs the tensix plugin (tessera-tensix)") from None
        self.base = None if not ctx.quick else 8
        self.size = {"base_blocks": self.base or 32}
        self.check = {"what": "every probe run halts with every result slot written and every active core "
                              "exiting 0",
                      "expected": {"suites": "all (tessera_cycles.probes.SUITES)"}}
        return [Variant("tensix", self._run, "cycles=tensix")]

    def _run(self) -> Sample:
        import time

        from tessera_cycles import calibration

        t0 = time.perf_counter()
        rows = calibration.compare({"cycles": "tensix"}, base_blocks=self.base)
        seconds = time.perf_counter() - t0
        tracked = [r for r in rows if r.tracked and r.within is not None]
        misses = [f"{r.dataset} {r.label} {r.variant}: silicon {r.silicon:.3f}, Tessera {r.tessera or 0.0:.3f} "
                  f"({r.error_pct or 0.0:+.1f} %)" for r in tracked if not r.within]
        worst = max((abs(r.error_pct or 0.0) for r in tracked), default=0.0)
        return Sample(seconds, len(tracked), {"tracked": len(tracked), "within": len(tracked) - len(misses),
                                              "outside": misses, "worst_error_pct": round(worst, 1)})

    def derive(self, best: dict[str, Sample]) -> dict[str, Any]:
        got = best.get("tensix")
        if got is None or not got.extra.get("tracked"):
            return {}
        return {"within_fraction": got.extra["within"] / got.extra["tracked"], "within": got.extra["within"],
                "tracked": got.extra["tracked"]}

    @classmethod
    def comparison(cls, entry: dict[str, Any], variant: str) -> list[str]:
        d = entry["derived"]
        return [f"{d['within']} of {d['tracked']} points within 10 %"] if d.get("tracked") else []


def workloads() -> list[type[Workload]]:
    return [InOrderCost, TensixCost, SiliconComparison]
