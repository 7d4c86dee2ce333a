"""Workload ``sfpu``: ns per 32-lane Tensix SFPU instruction, beside the numpy floor.

The Tensix plugin's contribution to ``tessera bench`` (hook ``tessera_bench_workloads``
in :mod:`tessera_tensix.plugin`).  Three variants, run in Tensix direct mode
(``--arch tensix``) on one machine each that is rewound and rerun ``runs`` times per
sample: ``kernel`` (an exp(x)/x kernel over one 32x32 FP32 tile of Dest, its results
checked against float64), ``sfpnop`` (as many SFPNOPs: the dispatch cost) and
``numpy-floor`` (no emulator: the least numpy work a 32-lane multiply-add needs).
:mod:`tessera_tensix.bench_kernel` has the kernel, its reference and Dest's layout;
it needs numpy, so it is imported only when the workload prepares.
"""

from __future__ import annotations

from typing import Any

from tessera.bench.hosts import architecture_plugin, minimal_host
from tessera.bench.model import BenchFailure, Context, Sample, Variant, Workload
from tessera.bench.targets import Target

RUNS = 50
TOLERANCE = 1e-5


class SfpuStream(Workload):
    name = "sfpu"
    title = "Tensix SFPU stream"
    samples_per_round = 3  # samples of ~20 ms, and the only target in absolute time
    order = 40
    rate_style = "ns"
    targets = (Target("sfpu", "SFPU kernel, ns per 32-lane instruction",
                      ("sfpu", "derived", "ns_per_instruction", "kernel"), 1500.0, False, "ns"),)

    def prepare(self, ctx: Context) -> list[Variant]:
        from tessera_tensix.bench_kernel import DirectMode, dest_bits, kernel_source, reference, tile_values

        arch, plugin_name, plugin = architecture_plugin(ctx.host, "tensix", "tessera-tensix")
        host = minimal_host((plugin, plugin_name))
        self.runs = ctx.size(RUNS, quick=RUNS)
        self.x = tile_values()
        self.dest = dest_bits(self.x)
        self.want = reference(self.x)
        self.kernel = DirectMode(arch, host, kernel_source())
        self.nops = DirectMode(arch, host, "sfpnop\n" * (self.kernel.instructions - 1) + "end\n")
        self.kernel.run(self.dest)       # warms the decode caches and the compiled kernels
        self.error = self._check()
        self.nops.run(None)
        self.size = {"kernel_instructions": self.kernel.instructions, "runs_per_sample": self.runs,
                     "engine": self.kernel.machine.engine}
        self.check = {"what": f"every Dest result within {TOLERANCE:g} relative error of float64",
                      "expected": f"< {TOLERANCE:g}"}
        return [Variant("kernel", self._kernel, "exp(x)/x over a 32x32 FP32 tile"),
                Variant("sfpnop", self._sfpnop, "as many SFPNOPs"),
                Variant("numpy-floor", self._floor, "3 numpy calls per instruction, no emulator")]

    def _check(self) -> float:
        from tessera_tensix.bench_kernel import max_relative_error

        err = max_relative_error(self.kernel.dest, self.want)
        if not err < TOLERANCE:
            raise BenchFailure(f"wrong result: the kernel's max relative error is {err:.3g} "
                               f"(must be < {TOLERANCE:g})")
        return err

    def _repeat(self, once: Any) -> Sample:
        seconds = 0.0
        count = 0
        for _ in range(self.runs):
            s, n = once()
            seconds += s
            count += n
        return Sample(seconds, count)

    def _kernel(self) -> Sample:
        def once() -> tuple[float, int]:
            got = self.kernel.run(self.dest)
            self.error = max(self.error, self._check())
            return got

        sample = self._repeat(once)
        sample.extra["max_relative_error"] = self.error
        return sample

    def _sfpnop(self) -> Sample:
        return self._repeat(lambda: self.nops.run(None))

    def _floor(self) -> Sample:
        from tessera_tensix.bench_kernel import numpy_floor

        return self._repeat(lambda: numpy_floor(self.kernel.instructions))

    def derive(self, best: dict[str, Sample]) -> dict[str, Any]:
        ns = {name: 1e9 / s.rate for name, s in best.items()}
        out: dict[str, Any] = {"ns_per_instruction": ns}
        if "kernel" in ns and "numpy-floor" in ns:
            out["kernel_over_floor"] = ns["kernel"] / ns["numpy-floor"]
        return out

    @classmethod
    def comparison(cls, entry: dict[str, Any], variant: str) -> list[str]:
        over = entry["derived"].get("kernel_over_floor")
        return [f"{over:.2f}x numpy floor"] if variant == "kernel" and over is not None else []


def workloads() -> list[type[Workload]]:
    """What the Tensix plugin offers ``tessera bench``: ``sfpu``, ``matmul``
    (:mod:`tessera_tensix.bench_matmul`) and ``llk-matmul`` (:mod:`tessera_tensix.bench_llk`)."""
    from tessera_tensix.bench_llk import LlkMatmul
    from tessera_tensix.bench_matmul import MatmulTile

    return [SfpuStream, MatmulTile, LlkMatmul]
