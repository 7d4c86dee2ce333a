"""Workload ``llk-matmul``: tt-llk's own ``matmul_test`` on a Blackhole tile, and the cores waiting.

The other Tensix workloads run hand-written coprocessor code; this one runs the vendor's
kernel as ``tessera tensix build`` compiles it (docs/tensix-llk.md), and holds the tile's
RISC-V cores to the issue's promise: they keep at least half of the ``rv32`` loop's rate
while other cores spin on semaphores and mailboxes (a core that polls must park,
:mod:`tessera_tensix.tile.polls`, not spin in Python).

* **spin** — the target.  :mod:`tessera_tensix.bench_spin`'s tile program: TRISC0 runs
  the ``rv32`` loop's body for as many iterations as the ``rv32`` reference below, while
  RISCV B polls an L1 flag, TRISC1 its Tensix semaphore 0 and TRISC2 a mailbox status,
  until TRISC0 releases them.  Every run's exit codes and sum are checked.  The count is
  TRISC0's ``instret``, so the rate is its instructions per second of the whole run's wall
  time; ``spin_over_rv32`` (≥ 0.5) divides it by the ``rv32`` variant's rate.  Needs no
  build, so it runs without the compiler.
* **spin-unparked** — the same with ``park_polls=false`` (every poll executed), at a tenth
  of the iterations: context, no target.
* **rv32** — the reference: the ``rv32`` workload's program (``Context.program``), same
  iteration count, on the engine the tile ran on, in the same round.  Skipped with a note
  when no enabled plugin offers ``rv32`` (then the ratios are ``None``).
* **kernel** — information, no target.  ``prepare`` builds ``matmul_test`` for Blackhole
  with RT_DIM = KT_DIM = CT_DIM = 2 (A 64x64, B 64x64, four output tiles) once into
  ``<llk cache>/bench/<key>`` and reuses it; the key hashes the build code
  (``tessera_tensix.llk``), the compiler's version and the tt-llk release.  Without the
  compiler or the cache this variant alone is skipped with a note (``tessera tensix
  fetch``).  The inputs are small integers, so every product and sum is exact in BF16 and
  the golden compares exactly.  One untimed run warms the process-wide caches, a second
  counts the Tensix instructions that reached the backend (MOP and REPLAY expansions
  included).  ``runs`` kernel runs a sample, each on a fresh machine built and loaded
  outside the timed section (``load_ms_per_run`` reports that apart); only ``Machine.run``
  is timed, and each run's output is compared with numpy's ``A @ B``.  The count is the
  RISC-V instructions the four cores retired.  Where the time goes: for this variant only,
  each agent's ``run_slice`` and each core's decode filler (``Machine.decode_filler(...).fill``:
  an instruction's first execution on this machine) are wrapped in timers on the fresh
  machine — instance attributes, never the classes, so the normal path is untouched (about
  1 µs a timed call, about 1 % of a run).  What no slice accounts for is the scheduler and
  the end-of-run hooks (``other``).

Derived: ``spin_per_second``, ``spin_unparked_per_second``, ``rv32_per_second`` and their
ratios ``spin_over_rv32`` (the target) and ``spin_unparked_over_rv32``.  From the kernel:
``ms_per_run``; RISC-V and Tensix instructions/s over wall time (``riscv_per_second``,
``tensix_per_second``, ``tensix_backend_per_second``) and over the time in those agents'
own slices (``..._own``); ``ms_per_run_by_agent`` and ``share_by_agent`` (brisc, trisc0..2,
t0..t2, host, other); ``riscv_decode_ms_per_run`` and ``translate_ms_per_run`` (first
executions and block translation, inside the cores' slices); ``riscv_over_rv32`` (the
kernel's RISC-V instructions per second of the cores' own slices over the ``rv32`` rate)
and ``warm_over_rv32`` (the same without the decode and translation seconds): a cold,
tiny kernel, so these say what a kernel run costs, not how fast waiting is.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import tempfile
import time
from pathlib import Path
from typing import Any

import tessera
from tessera.bench.hosts import architecture_plugin, minimal_host
from tessera.bench.model import BenchFailure, Context, Sample, Skip, Variant, Workload
from tessera.bench.targets import Target

ARCH = "tensix-tile"
KERNEL = "matmul_test"
CHIP = "blackhole"
DIMS = {"RT_DIM": 2, "KT_DIM": 2, "CT_DIM": 2}
SEED = 5
#: inputs in [-BOUND, BOUND]: a 64-term dot product stays within 256, exact in BF16
BOUND = 2
RUNS = 3                 # kernel runs a sample, each a fresh machine
RV32_ITERATIONS = 300_000   # the rv32 workload's default size (3 instructions an iteration)
#: spin-unparked runs 1/UNPARKED_SHARE of the iterations: every poll executes, ~10x slower
UNPARKED_SHARE = 10
MAX_STEPS = 50_000_000
RISCV = ("brisc", "trisc0", "trisc1", "trisc2")
TENSIX = ("t0", "t1", "t2")
AGENTS = (*RISCV, *TENSIX, "host")


class LlkMatmul(Workload):
    name = "llk-matmul"
    title = "tt-llk matmul_test on a Blackhole tile (2x2x2 tiles); RISC-V cores waiting"
    order = 44
    targets = (
        Target("llk-matmul-riscv", "RISC-V rate while the other cores wait, vs the rv32 loop",
               ("llk-matmul", "derived", "spin_over_rv32"), 0.5, True, "x"),
    )

    def prepare(self, ctx: Context) -> list[Variant]:
        from tessera_tensix.bench_spin import SpinProgram

        arch, plugin_name, plugin = architecture_plugin(ctx.host, ARCH, "tessera-tensix")
        self.plugin = (plugin, plugin_name)
        self.host = minimal_host(self.plugin)
        self.arch = arch
        iterations = ctx.size(RV32_ITERATIONS, quick=RV32_ITERATIONS)
        self.spin = SpinProgram(arch, self.host, iterations)
        self.unparked = SpinProgram(arch, self.host, max(1, iterations // UNPARKED_SHARE))
        warm = self._spin_once(self.spin, park_polls=True)           # translations, decoder tables
        self._spin_once(self.unparked, park_polls=False)
        self.engine = warm.extra["engine"]
        self.rv32: Any = None
        self.rv32_note = ""
        try:
            self.rv32 = ctx.program("rv32", iterations)
            self.rv32_host = minimal_host(self.rv32.plugin)
        except Skip as skip:
            self.rv32_note = str(skip)
        self.runs = ctx.size(RUNS, quick=RUNS)
        self.kernel_note = ""
        kernel_size: dict[str, Any] = {}
        try:
            kernel_size = self._prepare_kernel()
        except Skip as skip:
            self.kernel_note = str(skip)
        self.size = {"spin_iterations": iterations, "spin_unparked_iterations": self.unparked.iterations,
                     "engine": self.engine, "kernel": KERNEL, "chip": CHIP, **DIMS, "runs_per_sample": self.runs,
                     "build": None, "build_seconds": None, "riscv_instructions_per_run": None,
                     "tensix_instructions_per_run": None, "tensix_backend_instructions_per_run": None,
                     **kernel_size, "kernel_note": self.kernel_note or None,
                     "rv32_iterations": self.rv32.iterations if self.rv32 is not None else None,
                     "rv32": self.rv32_note or "measured in this workload (variant rv32)"}
        self.check = {"what": "spin: every core's exit code (brisc 7, trisc0 0, trisc1 1, trisc2 9: each waiter "
                              "exits with what released it) and TRISC0's sum in L1; kernel: every run's output res "
                              f"equals numpy's A @ B (tilized, integers in [-{BOUND}, {BOUND}]); the rv32 "
                              "reference's own check",
                      "expected": "exact"}
        return [Variant("spin", self._spin, "TRISC0 runs the rv32 loop while B, T1, T2 poll (park_polls)"),
                Variant("spin-unparked", self._spin_unparked, "the same with park_polls=false (context)"),
                Variant("rv32", self._rv32, "the rv32 workload's loop on the same engine: the reference rate"),
                Variant("kernel", self._kernel, "matmul_test, a fresh tile a run, build and load untimed")]

    def _prepare_kernel(self) -> dict[str, Any]:
        """Build (or find) ``matmul_test``, write its inputs, warm up and count the backend's
        instructions: the kernel's entries of ``size``.  :class:`Skip` without the compiler."""
        import numpy as np

        rng = np.random.default_rng(SEED)
        rows, inner, cols = 32 * DIMS["RT_DIM"], 32 * DIMS["KT_DIM"], 32 * DIMS["CT_DIM"]
        a = rng.integers(-BOUND, BOUND + 1, (rows, inner)).astype(np.float32)
        b = rng.integers(-BOUND, BOUND + 1, (inner, cols)).astype(np.float32)
        self.want = tilize(a @ b)
        start = time.perf_counter()
        directory, built_now = built_kernel()
        build_seconds = time.perf_counter() - start if built_now else None
        self.manifest = write_run_manifest(directory, {"A": tilize(a), "B": tilize(b)})
        warm = self._run_once(self.machine())          # translations, numba kernels, decoder tables
        self.backend = count_backend(self)
        return {"build": str(directory), "build_seconds": build_seconds,
                "riscv_instructions_per_run": warm.riscv, "tensix_instructions_per_run": warm.tensix,
                "tensix_backend_instructions_per_run": self.backend}

    def _spin_once(self, program: Any, *, park_polls: bool) -> Sample:
        from tessera.bench.runs import timed_run

        machine = program.machine(park_polls=park_polls)
        seconds, result = timed_run(machine, max_steps=4 * (3 * program.iterations + 1000))
        program.check(machine, result)
        retired = {a.name: a.instret for a in machine.agents if a.name in RISCV}
        return Sample(seconds, retired["trisc0"], {"engine": machine.engine, "park_polls": park_polls,
                                                   "iterations": program.iterations,
                                                   "instructions_by_core": retired})

    def _spin(self) -> Sample:
        return self._spin_once(self.spin, park_polls=True)

    def _spin_unparked(self) -> Sample:
        return self._spin_once(self.unparked, park_polls=False)

    def machine(self) -> Any:
        """A fresh Blackhole tile with the kernel, its inputs and its runtime arguments loaded."""
        from tessera.loaders import load_program
        from tessera.machine import Machine

        machine = Machine(self.arch, host=self.host)
        load_program(machine, str(self.manifest))
        return machine

    def _run_once(self, machine: Any) -> RunTimes:
        times = RunTimes(machine)
        times.run()
        self.check_output(machine)
        return times

    def check_output(self, machine: Any) -> None:
        """BenchFailure naming the first element of ``res`` that differs from numpy's."""
        from tessera.errors import CheckFailed
        from tessera_tensix.tile import kernel

        manifest = machine.ext["tensix_kernel"]
        res = next(t for t in manifest.outputs if t.name == "res")
        try:
            kernel.check(res, kernel.read_output(machine.ext["tensix"].l1, res), self.want)
        except CheckFailed as exc:
            raise BenchFailure(f"wrong result: {exc.message}") from None

    def _kernel(self) -> Sample:
        if self.kernel_note:
            raise Skip(self.kernel_note)
        seconds = decode = translate = load = 0.0
        by_agent = dict.fromkeys((*AGENTS, "other"), 0.0)
        riscv = tensix = slices = decoded = 0
        for _ in range(self.runs):
            start = time.perf_counter()
            machine = self.machine()
            load += time.perf_counter() - start
            times = self._run_once(machine)
            seconds += times.seconds
            for name, s in times.by_agent().items():
                by_agent[name] = by_agent.get(name, 0.0) + s
            riscv += times.riscv
            tensix += times.tensix
            slices += sum(times.slices.values())
            decode += times.decode
            decoded += times.decoded
            translate += times.translate
        return Sample(seconds, riscv, {"runs": self.runs, "tensix_instructions": tensix,
                                       "seconds_by_agent": by_agent, "slices": slices,
                                       "decode_seconds": decode, "decoded": decoded,
                                       "translate_seconds": translate, "load_seconds": load})

    def _rv32(self) -> Sample:
        if self.rv32 is None:
            raise Skip(self.rv32_note)
        return self.rv32.run(self.rv32.machine(self.rv32_host, self.engine))

    def derive(self, best: dict[str, Sample]) -> dict[str, Any]:
        rv32 = best.get("rv32")
        reference = rv32.rate if rv32 is not None else None
        out: dict[str, Any] = {"rv32_per_second": reference}
        for name, key in (("spin", "spin"), ("spin-unparked", "spin_unparked")):
            sample = best.get(name)
            rate = sample.rate if sample is not None else None
            out[f"{key}_per_second"] = rate
            out[f"{key}_over_rv32"] = rate / reference if rate is not None and reference else None
        kernel = best.get("kernel")
        if kernel is not None:
            out.update(self._derive_kernel(kernel, reference))
        return out

    def _derive_kernel(self, kernel: Sample, reference: float | None) -> dict[str, Any]:
        """The kernel's numbers: information, no target."""
        extra = kernel.extra
        runs, by_agent = extra["runs"], extra["seconds_by_agent"]
        riscv_own = sum(by_agent[n] for n in RISCV)
        tensix_own = sum(by_agent[n] for n in TENSIX)
        first = extra["decode_seconds"] + extra["translate_seconds"]
        own = kernel.count / riscv_own if riscv_own > 0 else None
        warm = kernel.count / (riscv_own - first) if riscv_own > first else None
        return {
            "ms_per_run": 1e3 * kernel.seconds / runs,
            "load_ms_per_run": 1e3 * extra["load_seconds"] / runs,
            "riscv_per_second": kernel.count / kernel.seconds,
            "riscv_per_second_own": own,
            "riscv_per_second_warm": warm,
            "tensix_per_second": extra["tensix_instructions"] / kernel.seconds,
            "tensix_per_second_own": extra["tensix_instructions"] / tensix_own if tensix_own > 0 else None,
            "tensix_backend_per_second": self.backend * runs / kernel.seconds,
            "ms_per_run_by_agent": {n: 1e3 * s / runs for n, s in by_agent.items()},
            "share_by_agent": {n: s / kernel.seconds for n, s in by_agent.items()},
            "riscv_decode_ms_per_run": 1e3 * extra["decode_seconds"] / runs,
            "riscv_decoded_per_run": extra["decoded"] / runs,
            "translate_ms_per_run": 1e3 * extra["translate_seconds"] / runs,
            "riscv_over_rv32": own / reference if own is not None and reference else None,
            "warm_over_rv32": warm / reference if warm is not None and reference else None,
        }

    @classmethod
    def comparison(cls, entry: dict[str, Any], variant: str) -> list[str]:
        derived = entry["derived"]
        if variant in ("spin", "spin-unparked"):
            ratio = derived.get(f"{variant.replace('-', '_')}_over_rv32")
            parts = [f"{ratio:.2f}x rv32"] if ratio is not None else []
            cores = entry["variants"].get(variant, {}).get("instructions_by_core", {})
            waiting = sum(n for core, n in cores.items() if core != "trisc0")
            parts.append(f"{waiting:,} instructions polled" + (" before parking" if variant == "spin" else ""))
            return parts
        if variant != "kernel" or "ms_per_run" not in derived:
            return []
        parts = [f"{derived['ms_per_run']:.0f} ms/run"]
        if derived["riscv_per_second_own"] is not None:
            parts.append(f"RISC-V {derived['riscv_per_second_own'] / 1e6:.3f} M/s in its slices")
        if derived["riscv_over_rv32"] is not None:
            parts.append(f"{derived['riscv_over_rv32']:.2f}x rv32")
        if derived["warm_over_rv32"] is not None:
            parts.append(f"{derived['warm_over_rv32']:.2f}x without first executions")
        parts.append(f"Tensix {derived['tensix_per_second'] / 1e3:.1f} k instr/s "
                     f"({derived['tensix_backend_per_second'] / 1e3:.1f} k expanded)")
        ms = derived["ms_per_run_by_agent"]
        parts.append("ms/run: " + " ".join(f"{n} {v:.0f}" for n, v in ms.items())
                     + f" (RISC-V decode {derived['riscv_decode_ms_per_run']:.0f})")
        return parts


def tilize(matrix: Any) -> Any:
    """A matrix of 32x32 tiles as the kernel's L1 buffers hold it: tiles row by row, each
    four 16x16 faces, face rows in order (the ``tiles`` layout of docs/tensix-llk.md)."""
    rows, cols = matrix.shape[0] // 32, matrix.shape[1] // 32
    return matrix.reshape(rows, 2, 16, cols, 2, 16).transpose(0, 3, 1, 4, 2, 5).reshape(-1)


class RunTimes:
    """One timed kernel run: the wall time of ``Machine.run`` and each agent's share of it.

    Each agent's ``run_slice`` is wrapped by an instance attribute of this machine only;
    the scheduler calls ``agent.run_slice``, so every slice is timed, while the classes and
    every other machine keep the normal path.
    """

    def __init__(self, machine: Any) -> None:
        self.machine = machine
        self.engine = machine.engine
        self.seconds = 0.0
        self.in_agent: dict[str, float] = {}
        self.slices: dict[str, int] = {}
        self.riscv = self.tensix = 0
        self.translate = 0.0
        #: the RISC-V cores' first executions: seconds and instructions decoded (filled)
        self.decode = 0.0
        self.decoded = 0
        for agent in machine.agents:
            self._time(agent)
        fillers = {id(f): f for f in (machine.decode_filler(a.arch, a.space) for a in machine.agents
                                      if a.name in RISCV)}
        for filler in fillers.values():
            self._time_decode(filler)

    def _time(self, agent: Any) -> None:
        inner = agent.run_slice
        name = agent.name
        clock = time.perf_counter
        in_agent, slices = self.in_agent, self.slices
        in_agent[name], slices[name] = 0.0, 0

        def run_slice(limit: int, cycle_limit: float = float("inf")) -> int:
            start = clock()
            try:
                return inner(limit, cycle_limit)
            finally:
                in_agent[name] += clock() - start
                slices[name] += 1

        agent.run_slice = run_slice

    def _time_decode(self, filler: Any) -> None:
        """Time the machine's decode filler of a core: the first execution of each instruction
        (decode, semantics bound, hooks asked) happens there, inside the core's slices."""
        inner = filler.fill
        clock = time.perf_counter

        def fill(pc: int) -> Any:
            start = clock()
            try:
                return inner(pc)
            finally:
                self.decode += clock() - start
                self.decoded += 1

        filler.fill = fill

    def run(self) -> None:
        from tessera.bench.runs import timed_run

        self.seconds, _result = timed_run(self.machine, max_steps=MAX_STEPS)
        retired = {a.name: a.instret for a in self.machine.agents}
        self.riscv = sum(retired.get(n, 0) for n in RISCV)
        self.tensix = sum(retired.get(n, 0) for n in TENSIX)
        self.translate = self.machine.engine_stats()["translate_seconds"]

    def by_agent(self) -> dict[str, float]:
        """Seconds in each agent's slices, and ``other``: the rest of the wall time."""
        out = {n: s for n, s in self.in_agent.items()}
        out["other"] = max(0.0, self.seconds - sum(self.in_agent.values()))
        return out


def count_backend(workload: LlkMatmul) -> int:
    """One untimed, checked run under a host that also counts the Tensix instructions T0..T2
    retire in the backend (MOP and REPLAY expansions included; MOP, REPLAY themselves not)."""
    from tessera.loaders import load_program
    from tessera.machine import Machine

    counter = _BackendCounter()
    machine = Machine(workload.arch, host=minimal_host(workload.plugin, (counter, "tessera-bench-count")))
    load_program(machine, str(workload.manifest))
    RunTimes(machine).run()
    workload.check_output(machine)
    return counter.count


class _BackendCounter:
    """A tool plugin counting the backend instructions of the Tensix threads."""

    TESSERA_API_VERSION = 1

    def __init__(self) -> None:
        self.count = 0

    @tessera.hookimpl
    def tessera_execute_observe(self, machine: Any, arch: Any, ins: Any) -> Any:
        from tessera_tensix.mop import FRONT_END_OPCODES

        if arch.name not in ("tensix", "tensix-wh") or ins.word == 0 or ins.word >> 24 in FRONT_END_OPCODES:
            return None

        def observe(agent: Any, ins: Any) -> None:
            if agent.name in TENSIX:
                self.count += 1
        return observe


# ------------------------------------------------------------------ the build


def built_kernel() -> tuple[Path, bool]:
    """The bench's build of ``matmul_test`` (directory, built by this call): reused when its
    key matches, else built (about 10 s).  :class:`Skip` without the compiler or the cache."""
    from tessera.errors import TesseraError
    from tessera_tensix.llk import build, sysroot, toolchain, wheel
    from tessera_tensix.llk.cache import cache_root
    from tessera_tensix.llk.kernels import Options

    if not toolchain.available():
        raise Skip(f"needs {toolchain.GXX} to build tt-llk's {KERNEL} (apt-get install gcc-riscv64-unknown-elf)")
    if not (wheel.cached() and sysroot.cached()):
        raise Skip("needs the tt-llk cache: run `tessera tensix fetch` once (downloads ~220 MB)")
    try:
        tools = toolchain.find()
        root = cache_root() / "bench"
        directory = root / f"{KERNEL}-{CHIP}-{_key(tools.version)}"
        if (directory / "kernel.toml").is_file():
            return directory, False
        root.mkdir(parents=True, exist_ok=True)
        work = Path(tempfile.mkdtemp(prefix=f".{KERNEL}-", dir=root))
        try:
            opts = Options(kernel=KERNEL, chip=CHIP, params=dict(DIMS))
            build.build(opts, work, download=False, jobs=min(2, os.cpu_count() or 1))
            try:
                work.rename(directory)
            except OSError:        # another bench built it meanwhile: use that one
                if not (directory / "kernel.toml").is_file():
                    raise
        finally:
            shutil.rmtree(work, ignore_errors=True)
    except TesseraError as exc:
        raise BenchFailure(f"building {KERNEL} for {CHIP}: {exc}") from None
    except OSError as exc:
        raise BenchFailure(f"building {KERNEL} for {CHIP} in {cache_root() / 'bench'}: {exc}") from None
    return directory, True


def _key(compiler: str) -> str:
    """What the build depends on: the build code, the compiler, the tt-llk release, the options."""
    from tessera_tensix import llk
    from tessera_tensix.llk import wheel

    digest = hashlib.sha256(f"{compiler}\n{wheel.TTNN_VERSION}\n{sorted(DIMS.items())}\n".encode())
    package = Path(llk.__file__).parent
    for path in sorted(package.rglob("*")):
        if path.is_file() and "__pycache__" not in path.parts:
            digest.update(str(path.relative_to(package)).encode() + b"\0" + path.read_bytes())
    return digest.hexdigest()[:12]


def write_run_manifest(directory: Path, inputs: dict[str, Any]) -> Path:
    """``bench.toml`` next to the build's ``kernel.toml``: the same manifest with the input
    files (``bench-<name>.npy``) named.  No output file and no golden: the bench reads the
    output itself after the timed run.  Written again each time (the inputs are the bench's)."""
    import numpy as np

    text = (directory / "kernel.toml").read_text()
    for name, values in inputs.items():
        file = f"bench-{name}.npy"
        partial = directory / f".{file}-{os.getpid()}.npy"
        np.save(partial, values)
        os.replace(partial, directory / file)
        entry = f'name = "{name}"\n'
        if entry not in text:
            raise BenchFailure(f"{directory / 'kernel.toml'} declares no input {name}")
        text = text.replace(entry, f'{entry}file = "{file}"\n', 1)
    path = directory / "bench.toml"
    partial = directory / f".bench-{os.getpid()}.toml"
    partial.write_text(text)
    os.replace(partial, path)      # another bench writing the same text at once is harmless
    return path
