"""Workload ``tracing``: what each ``tessera-trace`` format costs on the compiled RV32 loop.

The trace plugin (``plugins/trace``, module ``tessera_trace``) is optional; without
it, or when its API does not answer as expected, the workload — or the one format
that failed to attach — is skipped with a note.  The API used is
``tessera_trace.attach(machine, fmt, path) -> tracer`` and ``tracer.close()``, on a
machine whose host has ``tessera_trace.plugin`` registered.  Variants, on the
default engine:

* ``untraced`` — a host with the riscv plugin only (the baseline);
* ``idle-plugin`` — the trace plugin registered but nothing attached (an installed,
  unused tracer must cost nothing);
* ``text``, ``jsonl``, ``perfetto``, ``profile`` — the loop traced to a temporary
  file.  The time includes ``close()``, which flushes what the tracer buffered; the
  bytes written are reported.

The slowdown of a format is ``untraced`` rate / its rate (target for text: ≤ 5×).
"""

from __future__ import annotations

import os
import tempfile
import time
from typing import Any

from tessera.bench.hosts import architecture_plugin, minimal_host
from tessera.bench.model import Context, Sample, Skip, Variant, Workload
from tessera.bench.rv32 import Rv32Program
from tessera.plugins import ACTIVE

ITERATIONS = 20_000  # traced runs are slower and write ~50 bytes per instruction: keep them short
FORMATS = ("text", "jsonl", "perfetto", "profile")
SUFFIX = {"text": ".txt", "jsonl": ".jsonl", "perfetto": ".json", "profile": ".txt"}
INSTALL = "pip install -e plugins/trace"


def import_trace() -> tuple[Any, Any]:
    """``(tessera_trace, tessera_trace.plugin)`` or :class:`Skip` with the reason."""
    try:
        import tessera_trace
        import tessera_trace.plugin as plugin
    except Exception as exc:  # noqa: BLE001 - missing or broken: either way, a note
        raise Skip(f"tessera_trace is not importable ({type(exc).__name__}: {exc}); {INSTALL}") from None
    if not callable(getattr(tessera_trace, "attach", None)):
        raise Skip("tessera_trace has no attach(machine, fmt, path) function")
    return tessera_trace, plugin


class TracingOverhead(Workload):
    name = "tracing"
    title = "tracing overhead per format (RV32 loop)"
    samples_per_round = 3  # the untraced sample takes ~3 ms: best of more

    def __init__(self) -> None:
        super().__init__()
        self.tmp: tempfile.TemporaryDirectory[str] | None = None

    def prepare(self, ctx: Context) -> list[Variant]:
        arch, plugin_name, plugin = architecture_plugin(ctx.host, "rv32im")
        record = ctx.host.records.get("trace")
        if record is not None and record.status != ACTIVE:
            raise Skip(f"the trace plugin is {record.status} ({record.reason})")
        self.api, trace_plugin = import_trace()
        self.program = Rv32Program(arch, ctx.size(ITERATIONS, quick=ITERATIONS))
        self.plain = minimal_host((plugin, plugin_name))
        self.traced = minimal_host((plugin, plugin_name), (trace_plugin, "trace"))
        self.tmp = tempfile.TemporaryDirectory(prefix="tessera-bench-trace-")
        self.size = {"iterations": self.program.iterations, "instructions_per_iteration": 3}
        self.check = self.program.check
        variants = [Variant("untraced", self._untraced(self.plain), "host: riscv plugin only"),
                    Variant("idle-plugin", self._untraced(self.traced), "trace plugin registered, not attached")]
        variants += [Variant(fmt, self._runner(fmt), f"traced to a file as {fmt}") for fmt in FORMATS]
        return variants

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
                tracer = self.api.attach(machine, fmt, path)
            except Exception as exc:  # noqa: BLE001 - an API mismatch: skip this format, say why
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
        out: dict[str, Any] = {"slowdown": {fmt: base.rate / best[fmt].rate for fmt in FORMATS if fmt in best}}
        if "idle-plugin" in best:
            out["idle_plugin_overhead_percent"] = (base.rate / best["idle-plugin"].rate - 1.0) * 100.0
        return out

    def close(self) -> None:
        if self.tmp is not None:
            self.tmp.cleanup()
            self.tmp = None


def _close(tracer: Any, *, quietly: bool = False) -> None:
    close = getattr(tracer, "close", None)
    if not callable(close):
        return
    try:
        close()
    except Exception:
        if not quietly:
            raise
