"""Workload ``mark``: a compiled program shaped like real embedded code, on both engines and Unicorn.

The sum loop of ``rv32`` is one translated block iterating in place: the fast
engine's best case.  Real programs are many short blocks, loads and stores, calls
and indirect jumps, so ``mark`` runs ``data/bench/mark.c`` (the project's own code:
linked lists in a static pool, 8×8 integer matrix products and transforms, a state
machine scanning text, CRC-16 and CRC-32), compiled for RV32IM at ``-O2`` by
``data/bench/build.py``; about 34,000 instructions an iteration and some 240
translated blocks.

How a sample is measured, per engine (``fast``, ``step``):

* **a fresh process per sample.**  The fast engine keeps translations process-wide
  (a machine reuses what another translated), so after the first sample a run in
  this process would no longer pay for translation, and the whole-run numbers would
  not be what ``tessera run`` of the program sees.  Each sample therefore runs in a
  child Python (``python -m tessera_riscv.bench_mark ENGINE ITERATIONS WARMUP``,
  same interpreter and environment, a host holding only the RISC-V plugin), which
  times the run itself and reports it as JSON; starting the child is not timed.
* **whole run and steady state.**  The program calls ``mark_warm()`` once, before
  iteration ``warmup`` (half the iterations).  The child runs until that symbol (a
  breakpoint: ``Machine.run(until_symbol=...)``), then runs the rest.  The whole
  run is the sample's rate; the second half alone, timed separately, is the steady
  state — by then every block that an iteration enters 16 times has been translated
  (``steady_blocks`` says how many were still translated after the warm-up).
* **translation apart.**  ``Machine.engine_stats()`` gives the blocks translated and
  the seconds spent translating them (in a fresh process: every translation is
  real work, none comes from the process-wide cache).

Every sample is checked: the global ``result``, the line the program writes, exit
status 0, and the instruction counts (the whole run and the warm-up) must agree
between the variants.  The expected ``result`` comes from ``mark-rv32im.json``,
written by ``build.py`` from runs under ``qemu-riscv32``: the per-seed checksums,
folded with ``zlib.crc32`` for any iteration count.

The ``unicorn`` variant runs the same ELF in Unicorn (:mod:`tessera_riscv.bench_unicorn`),
the ceiling; without unicorn that variant is skipped with a note and the ratios to it
are absent.  :meth:`CompiledMark.program_for` offers the program to other workloads
(the trace plugin's ``tracing-mark``).
"""

from __future__ import annotations

import functools
import hashlib
import json
import os
import subprocess
import sys
import time
import zlib
from importlib import resources
from typing import Any

from tessera.bench.elfpatch import patch_symbol
from tessera.bench.hosts import architecture_plugin, minimal_host
from tessera.bench.model import BenchFailure, Context, Sample, Variant, Workload
from tessera.bench.runs import require, timed_run
from tessera.bench.targets import Target

ARCH = "rv32im"
DISTRIBUTION = "tessera-riscv"
ELF_NAME = "mark-rv32im.elf"
EXPECTED_NAME = "mark-rv32im.json"
ITERATIONS = 60          # about 2 M instructions, like a short CoreMark run
QUICK_ITERATIONS = 20    # --quick: half of them warm-up, still past the engine's hot threshold
ENGINES = ("fast", "step")
RAM = 1 << 20            # linked at 0x10000; the stack goes at the top of this
WARM_SYMBOL = "mark_warm"
NEVER = 0xFFFF_FFFF      # `warmup` for runs that do not stop: mark_warm is never called
STEPS_PER_ITERATION = 100_000   # the budget: an iteration takes about 34,000
CHILD_TIMEOUT = 1800.0


def _data(name: str) -> Any:
    return resources.files("tessera_riscv").joinpath("data", "bench", name)


def elf_image() -> bytes:
    """The prebuilt ELF (package data)."""
    return _data(ELF_NAME).read_bytes()


@functools.lru_cache(maxsize=1)
def expected_checksums() -> dict[str, Any]:
    """``mark-rv32im.json``: qemu's checksums; :class:`BenchFailure` if it is not the ELF's."""
    data = json.loads(_data(EXPECTED_NAME).read_text(encoding="utf-8"))
    if data.get("elf_sha256") != hashlib.sha256(elf_image()).hexdigest():
        raise BenchFailure(f"{EXPECTED_NAME} was not made from this {ELF_NAME}: rerun data/bench/build.py")
    return data


def expected_result(iterations: int) -> int:
    """``result`` after ``iterations`` iterations: qemu's per-seed checksums folded as mark.c does."""
    data = expected_checksums()
    seeds, per_seed = data["seeds"], data["per_seed"]
    acc = 0
    for i in range(iterations):
        acc = zlib.crc32(per_seed[i % seeds].to_bytes(4, "little"), acc)
    return acc


def result_line(result: int) -> bytes:
    """What the program writes last."""
    return f"mark result={result:#010x}\n".encode()


class MarkProgram:
    """mark.c for one iteration count: the patched image, how to run it, how to check it.

    ``warmup`` is the iteration before which ``mark_warm()`` is called (``None``: never).
    Implements the bench's ``Program`` protocol (:meth:`machine`, :meth:`run`).
    """

    def __init__(self, arch: Any, iterations: int, plugin: tuple[Any, str], warmup: int | None = None) -> None:
        if not 1 <= iterations < NEVER:
            raise BenchFailure(f"iterations must be 1..2**32-2, not {iterations}")
        if warmup is not None and not 0 <= warmup < iterations:
            raise BenchFailure(f"warmup must be 0..{iterations - 1}, not {warmup}")
        self.arch = arch
        self.iterations = iterations
        self.warmup = warmup
        self.plugin = plugin
        image = patch_symbol(elf_image(), "iterations", iterations)
        self.image = patch_symbol(image, "warmup", NEVER if warmup is None else warmup)
        self.expected = expected_result(iterations)
        self.max_steps = STEPS_PER_ITERATION * (iterations + 1)

    @classmethod
    def for_context(cls, ctx: Context, iterations: int, warmup: int | None = None) -> MarkProgram:
        """The program on the command's ``rv32im`` (:class:`Skip` without it)."""
        arch, plugin_name, plugin = architecture_plugin(ctx.host, ARCH, DISTRIBUTION)
        return cls(arch, iterations, (plugin, plugin_name), warmup)

    @property
    def check(self) -> dict[str, Any]:
        return {"what": "the global `result` and the line `mark result=0x...` == qemu-riscv32's checksum "
                        f"({EXPECTED_NAME}), exit status 0, the same instruction counts on every variant",
                "expected": self.expected}

    def machine(self, host: Any, engine: str | None = None, config: dict[str, Any] | None = None) -> Any:
        """A fresh machine with the program loaded (nothing run yet); ``None``: the default engine;
        ``config``: more configuration keys (a tool's: a cycle model)."""
        from tessera.loaders import load_elf
        from tessera.machine import Machine

        machine = Machine(self.arch, host=host, engine=engine, config={"echo": False, "ram": RAM, **(config or {})})
        load_elf(machine, f"<bench:{ELF_NAME}>", self.image)
        return machine

    def verify(self, result: int, stdout: bytes, exit_code: int | None) -> None:
        """:class:`BenchFailure` unless the run computed and printed the expected checksum."""
        require("result", result, self.expected)
        if not stdout.endswith(result_line(self.expected)):
            raise BenchFailure(f"wrong output: {stdout[-60:]!r}, expected it to end in "
                               f"{result_line(self.expected)!r}")
        require("exit status", exit_code or 0, 0)

    def _verify_machine(self, machine: Any, exit_code: int | None) -> None:
        result = machine.space.read(machine.symbol("result"), 4)
        self.verify(result, bytes(machine.ext["riscv_io"].stdout), exit_code)

    def run(self, machine: Any) -> Sample:
        """Time the whole run of a machine from :meth:`machine` and check it."""
        seconds, result = timed_run(machine, max_steps=self.max_steps)
        self._verify_machine(machine, result.exit_code)
        return Sample(seconds, result.steps, {"engine": machine.engine})

    def run_phases(self, machine: Any) -> dict[str, Any]:
        """Run to ``mark_warm``, then to the end, timing each part (the child's measurement).

        Returns the times, counts and engine statistics, and what the program computed
        (``result``, ``stdout``, ``exit_code``) for :meth:`verify`, which is the caller's.
        """
        from tessera.errors import TesseraError

        stops = (WARM_SYMBOL,)
        try:
            start = time.perf_counter()
            first = machine.run(max_steps=self.max_steps, until_symbol=stops)
            middle = time.perf_counter()
            warm_stats = machine.engine_stats()
            if first.reason != "breakpoint":
                raise BenchFailure(f"the run did not stop at {WARM_SYMBOL}: {first.reason} ({first.detail})")
            second = machine.run(max_steps=self.max_steps, until_symbol=stops)
            end = time.perf_counter()
        except TesseraError as exc:
            raise BenchFailure(f"the run ended in an error: {exc}") from exc
        if second.reason != "halted":
            raise BenchFailure(f"the run did not halt: {second.reason} ({second.detail})")
        stats = machine.engine_stats()
        return {"engine": machine.engine, "warmup_seconds": middle - start, "steady_seconds": end - middle,
                "warmup_instructions": first.steps, "steady_instructions": second.steps,
                "translate_seconds": stats["translate_seconds"], "blocks": stats["blocks"],
                "steady_blocks": stats["blocks"] - warm_stats["blocks"],
                "result": machine.space.read(machine.symbol("result"), 4),
                "stdout": bytes(machine.ext["riscv_io"].stdout).decode("latin-1"),
                "exit_code": second.exit_code}

    def verify_phases(self, data: dict[str, Any]) -> None:
        """:meth:`verify` what :meth:`run_phases` reported."""
        self.verify(data["result"], data["stdout"].encode("latin-1"), data["exit_code"])

    def memory_image(self) -> Any:
        """The program as loaded: entry, segment bytes, symbols (for Unicorn)."""
        from tessera.loaders import load_elf
        from tessera.machine import Machine
        from tessera_riscv.bench_unicorn import MemoryImage

        machine = Machine(self.arch, host=minimal_host(self.plugin), engine="step",
                          config={"echo": False, "ram": RAM})
        loaded = load_elf(machine, f"<bench:{ELF_NAME}>", self.image)
        segments = tuple((address, machine.space.read_bytes(address, size)) for address, size in loaded.segments)
        return MemoryImage(loaded.entry, segments, dict(loaded.symbols), RAM)


# ---- one sample in a child process ---------------------------------------------------

def run_in_child(engine: str, iterations: int, warmup: int) -> dict[str, Any]:
    """Measure one run in a fresh interpreter; the child's JSON (it does not check the result)."""
    argv = [sys.executable, "-m", "tessera_riscv.bench_mark", engine, str(iterations), str(warmup)]
    try:
        proc = subprocess.run(argv, capture_output=True, text=True, timeout=CHILD_TIMEOUT,
                              stdin=subprocess.DEVNULL, env=dict(os.environ))
    except subprocess.TimeoutExpired:
        raise BenchFailure(f"the {engine} run took longer than {CHILD_TIMEOUT:.0f} s") from None
    lines = proc.stdout.strip().splitlines()
    try:
        data = json.loads(lines[-1]) if lines else None
    except json.JSONDecodeError:
        data = None
    if proc.returncode != 0 or not isinstance(data, dict):
        raise BenchFailure(f"the {engine} child process failed (exit status {proc.returncode}): "
                           f"{(proc.stderr or proc.stdout).strip()[-400:]}")
    if data.get("error"):
        raise BenchFailure(data["error"])
    return data


def child_main(argv: list[str]) -> int:
    """``python -m tessera_riscv.bench_mark ENGINE ITERATIONS WARMUP``: one measured run, as JSON.

    Prints the phases' times and counts, the engine statistics and what the program
    computed; the parent checks them.  A failure is ``{"error": ...}``.
    """
    import tessera_riscv.plugin

    engine, iterations, warmup = argv[0], int(argv[1]), int(argv[2])
    host = minimal_host((tessera_riscv.plugin, "riscv"))
    try:
        program = MarkProgram(host.architecture(ARCH), iterations, (tessera_riscv.plugin, "riscv"), warmup)
        out = program.run_phases(program.machine(host, engine))
    except BenchFailure as exc:
        out = {"error": str(exc)}
    print(json.dumps(out))
    return 0


# ---- the workload -------------------------------------------------------------------

class CompiledMark(Workload):
    name = "mark"
    title = "compiled RV32 mark program (lists, matrices, state machine, CRC)"
    order = 25
    targets = (
        Target("mark-fast-over-step", "compiled mark program, fast vs step engine, whole run",
               ("mark", "derived", "fast_over_step"), 4.0, True, "x"),
        Target("mark-steady", "compiled mark program, fast engine, steady state",
               ("mark", "derived", "steady_rate", "fast"), 15e6, True, "instr/s"),
    )

    def prepare(self, ctx: Context) -> list[Variant]:
        iterations = ctx.size(ITERATIONS, quick=QUICK_ITERATIONS)
        self.program = MarkProgram.for_context(ctx, iterations, warmup=iterations // 2)
        self.size = {"iterations": iterations, "warmup_iterations": self.program.warmup, "elf": ELF_NAME}
        self.check = self.program.check
        self.counts: tuple[str, int, int] | None = None
        self.unicorn: Any = None
        from tessera_riscv.bench_unicorn import unicorn_version

        version = unicorn_version()
        variants = [Variant(engine, self._child(engine), f"engine={engine}, a fresh process per sample")
                    for engine in ENGINES]
        variants.append(Variant("unicorn", self._unicorn,
                                f"unicorn {version}, RV32 (QEMU's JIT)" if version else "unicorn"))
        return variants

    def _agree(self, variant: str, warm: int, total: int) -> None:
        """Every variant must retire the same instructions, before and after ``mark_warm``."""
        if self.counts is None:
            self.counts = (variant, warm, total)
        elif self.counts[1:] != (warm, total):
            first, w, t = self.counts
            raise BenchFailure(f"{variant} ran {warm:,} + {total - warm:,} instructions, {first} "
                               f"{w:,} + {t - w:,}: the variants disagree")

    def _child(self, engine: str) -> Any:
        def run() -> Sample:
            program = self.program
            assert program.warmup is not None
            data = run_in_child(engine, program.iterations, program.warmup)
            program.verify_phases(data)
            warm, steady = data["warmup_instructions"], data["steady_instructions"]
            self._agree(engine, warm, warm + steady)
            seconds = data["warmup_seconds"] + data["steady_seconds"]
            extra = {key: data[key] for key in ("engine", "warmup_seconds", "steady_seconds",
                                                "steady_instructions", "translate_seconds", "blocks",
                                                "steady_blocks")}
            extra["steady_rate"] = _rate(steady, data["steady_seconds"])
            return Sample(seconds, warm + steady, extra)

        return run

    def _unicorn(self) -> Sample:
        from tessera_riscv.bench_unicorn import UnicornMark

        if self.unicorn is None:
            self.unicorn = UnicornMark(self.program.memory_image(), WARM_SYMBOL)   # Skip without unicorn
        warm, total = self.unicorn.count()
        self._agree("unicorn", warm, total)
        out = self.unicorn.run(self.unicorn.image.symbols["result"])
        self.program.verify(out.result, out.stdout, out.exit_code)
        steady = total - warm
        return Sample(out.warmup_seconds + out.steady_seconds, total,
                      {"warmup_seconds": out.warmup_seconds, "steady_seconds": out.steady_seconds,
                       "steady_instructions": steady, "steady_rate": _rate(steady, out.steady_seconds)})

    def derive(self, best: dict[str, Sample]) -> dict[str, Any]:
        out: dict[str, Any] = {}
        steady = {name: s.extra["steady_rate"] for name, s in best.items()}
        out["steady_rate"] = steady
        fast, step, uni = best.get("fast"), best.get("step"), best.get("unicorn")
        if fast is not None and step is not None:
            out["fast_over_step"] = fast.rate / step.rate
            out["steady_fast_over_step"] = steady["fast"] / steady["step"]
        if fast is not None:
            seconds = fast.extra["translate_seconds"]
            out["translation"] = {"seconds": seconds, "blocks": fast.extra["blocks"],
                                  "steady_blocks": fast.extra["steady_blocks"],
                                  "share_of_run": seconds / fast.seconds if fast.seconds else None}
        if uni is not None:
            out["vs_unicorn"] = {name: rate / steady["unicorn"] for name, rate in steady.items() if name != "unicorn"}
        any_sample = next(iter(best.values()), None)
        runs = self.program.iterations - (self.program.warmup or 0)
        if any_sample is not None and runs > 0:
            out["instructions_per_iteration"] = any_sample.extra["steady_instructions"] / runs
        return out

    @classmethod
    def comparison(cls, entry: dict[str, Any], variant: str) -> list[str]:
        derived = entry["derived"]
        parts = []
        rate = derived.get("steady_rate", {}).get(variant)
        if rate is not None:
            text = f"steady {rate / 1e6:.2f} M/s"
            if variant == "fast" and "steady_fast_over_step" in derived:
                text += f" = {derived['steady_fast_over_step']:.2f}x step"
            parts.append(text)
        translation = derived.get("translation")
        if variant == "fast" and translation:
            parts.append(f"translation {translation['seconds']:.2f} s for {translation['blocks']} blocks")
        vs = derived.get("vs_unicorn", {}).get(variant)
        if vs:
            parts.append(f"steady 1/{1 / vs:,.0f} of unicorn")
        return parts

    @classmethod
    def program_for(cls, ctx: Context, iterations: int) -> MarkProgram:
        return MarkProgram.for_context(ctx, iterations)


def _rate(count: int, seconds: float) -> float:
    return count / seconds if seconds > 0 else float("inf")


__all__ = ["CompiledMark", "MarkProgram", "expected_result", "run_in_child"]


if __name__ == "__main__":   # the child of run_in_child
    sys.exit(child_main(sys.argv[1:]))
