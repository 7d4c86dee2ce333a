"""Workloads ``tracing`` and ``tracing-mark``: what ``tessera-trace`` costs on compiled RV32 code.

The trace plugin's contribution to ``tessera bench`` (hook ``tessera_bench_workloads``
in :mod:`tessera_trace.plugin`, which imports this module only when the bench asks).
The program is the riscv plugin's: the workload asks the bench for the program of
the offered workload ``rv32`` (``Context.program``) instead of importing that
plugin, so without it the workload is skipped with a note.  A format whose
``tessera_trace.attach(machine, fmt, path)`` fails is skipped alone, with a note.
Variants, on the default engine:

* ``untraced`` — a host with the riscv plugin only (the baseline);
* ``idle-plugin`` — the trace plugin registered but nothing attached (an installed,
  unused tracer must cost nothing);
* ``text``, ``jsonl``, ``perfetto``, ``profile`` — the loop traced to a temporary
  file.  The time includes ``close()``, which flushes what the tracer buffered; the
  bytes written are reported.

The slowdown of a format is ``untraced`` rate / its rate (target for text: ≤ 5×).

``tracing-mark`` (:class:`MarkTracing`) is the same measurement on the riscv plugin's
``mark`` program — lists, matrices, a state machine, CRC: short blocks with loads
and stores, what real code looks like — with the variants ``untraced`` and ``text``
only (target: ≤ 2×).  Both run in this process, so after the first sample the
translations come from the process-wide cache, for the traced run and the untraced
alike: the ratio compares executing, not translating.
"""

from __future__ import annotations

import os
import tempfile
import time
from typing import Any

import tessera_trace
from tessera.bench.hosts import minimal_host
from tessera.bench.model import Context, Sample, Skip, Variant, Workload
from tessera.bench.targets import Target

#: the workload whose program is traced
PROGRAM = "rv32"
ITERATIONS = 20_000  # the tracers write ~50 bytes per instruction: keep them short
FORMATS = ("text", "jsonl", "perfetto", "profile")
SUFFIX = {"text": ".txt", "jsonl": ".jsonl", "perfetto": ".json", "profile": ".txt"}


class TracingOverhead(Workload):
    name = "tracing"
    title = "tracing overhead per format (RV32 loop)"
    samples_per_round = 3  # the untraced sample takes ~3 ms: best of more
    order = 60
    targets = (Target("text-tracing", "text tracing, slowdown vs untraced",
                      ("tracing", "derived", "slowdown", "text"), 5.0, False, "x"),)
    #: the offered workload whose program is traced, its size, the formats measured, and
    #: whether the ``idle-plugin`` variant is run
    program_name = PROGRAM
    iterations = ITERATIONS
    formats: tuple[str, ...] = FORMATS
    idle_variant = True

    def __init__(self) -> None:
        super().__init__()
        self.tmp: tempfile.TemporaryDirectory[str] | None = None

    def prepare(self, ctx: Context) -> list[Variant]:
        self.program = ctx.program(self.program_name, ctx.size(self.iterations, quick=self.iterations))
        self.plain = minimal_host(self.program.plugin)
        self.traced = minimal_host(self.program.plugin, (tessera_trace.plugin, "trace"))
        self.tmp = tempfile.TemporaryDirectory(prefix="tessera-bench-trace-")
        self.size = self._size()
        self.check = self.program.check
        variants = [Variant("untraced", self._untraced(self.plain), "host: riscv plugin only")]
        if self.idle_variant:
            variants.append(Variant("idle-plugin", self._untraced(self.traced), "trace plugin registered, not attached"))
        variants += [Variant(fmt, self._runner(fmt), f"traced to a file as {fmt}") for fmt in self.formats]
        return variants

    def _size(self) -> dict[str, Any]:
        return {"iterations": self.program.iterations, "instructions_per_iteration": 3}

    def _untraced(self, host: Any) -> Any:
        def run() -> Sample:
            return self.program.run(self.program.machine(host))

        return run

    def _runner(self, fmt: str) -> Any:
        def run() -> Sample:
            assert self.tmp is not None
            path = os.path.join(self.tmp.name, f"trace-{fmt}{SUFFIX[fmt]}")
            machine = self.program.machine(self.traced)
            try:
                tracer = tessera_trace.attach(machine, fmt, path)
            except Exception as exc:  # noqa: BLE001 - a failing tracer is a skip of this workload
                raise Skip(f"tessera_trace.attach(machine, {fmt!r}, path) failed: "
                           f"{type(exc).__name__}: {exc}") from None
            try:
                sample = self.program.run(machine)
                start = time.perf_counter()     # closing flushes what the tracer buffered: count it
                _close(tracer)
                sample.seconds += time.perf_counter() - start
            except BaseException:
                _close(tracer, quietly=True)
                raise
            written = os.path.getsize(path) if os.path.exists(path) else 0
            if written == 0:
                raise Skip(f"the {fmt} tracer wrote nothing to its file")
            sample.extra["bytes"] = written
            sample.extra["bytes_per_instruction"] = written / max(1, sample.count)
            return sample

        return run

    def derive(self, best: dict[str, Sample]) -> dict[str, Any]:
        base = best.get("untraced")
        if base is None:
            return {}
        out: dict[str, Any] = {"slowdown": {fmt: base.rate / best[fmt].rate for fmt in self.formats if fmt in best}}
        if "idle-plugin" in best:
            out["idle_plugin_overhead_percent"] = (base.rate / best["idle-plugin"].rate - 1.0) * 100.0
        return out

    def close(self) -> None:
        if self.tmp is not None:
            self.tmp.cleanup()
            self.tmp = None

    @classmethod
    def comparison(cls, entry: dict[str, Any], variant: str) -> list[str]:
        derived = entry["derived"]
        slow = derived.get("slowdown", {}).get(variant)
        if slow is not None:
            return [f"{slow:.2f}x slower than untraced"]
        if variant == "idle-plugin" and "idle_plugin_overhead_percent" in derived:
            return [f"{derived['idle_plugin_overhead_percent']:+.1f} % vs untraced"]
        return []


def _close(tracer: Any, *, quietly: bool = False) -> None:
    close = getattr(tracer, "close", None)
    if not callable(close):
        return
    try:
        close()
    except Exception:
        if not quietly:
            raise


class MarkTracing(TracingOverhead):
    """Text tracing on the ``mark`` program: the issue's "tracing real code" number."""

    name = "tracing-mark"
    title = "text tracing overhead (compiled mark program)"
    samples_per_round = 1  # a sample takes ~0.1-1 s: rounds are enough
    order = 65
    targets = (Target("mark-text-tracing", "text tracing of the compiled mark program, slowdown vs untraced",
                      ("tracing-mark", "derived", "slowdown", "text"), 2.0, False, "x"),)
    program_name = "mark"
    iterations = 6   # about 200,000 instructions, ~10 MB of text trace a sample
    formats = ("text",)
    idle_variant = False

    def _size(self) -> dict[str, Any]:
        return {"iterations": self.program.iterations, "program": self.program_name}


def workloads() -> list[type[Workload]]:
    """What the trace plugin offers ``tessera bench``."""
    return [TracingOverhead, MarkTracing]
