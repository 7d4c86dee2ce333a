"""Workload ``matmul``: the 32×32×32 matmul example per tile, one MVMUL beside the numpy floor, wolfpine.

The Tensix plugin offers it next to ``sfpu`` (:func:`tessera_tensix.bench.workloads`).
Variants, each sample checked (:mod:`tessera_tensix.bench_matmul_kernel` has the
programs, :mod:`tessera_tensix.bench_wolfpine` the peer):

* ``tile`` — ``examples/matmul.s`` on the whole coprocessor (three threads, MOP and
  REPLAY, 64 MVMULs, PACR), ``tiles`` tiles a sample, each on a fresh machine built
  outside the timed section; every packed tile equals numpy's ``A @ B``.  The count is
  the instructions that reached the backend (expansions included, counted once in an
  untimed run), so the rate is instructions/s; ``tiles_per_second`` is derived;
* ``mvmul`` — MVMULs back to back on fixed operands (SrcA 16×16, SrcB 8×16, BF16 into
  an FP32 Dest), ``runs`` reruns of one machine a sample; Dest is checked after each;
* ``numpy-floor`` — no emulator: the bare numpy product of the same operands (8×16 @
  16×16, float32), as many as the MVMULs;
* ``wolfpine-tile`` — the same kernel words in wolfpine, when it is installed (else
  skipped with a note); the same check, and the same instruction count per tile.

Derived: ``ns_per_instruction`` per variant, ``ms_per_tile`` and ``tiles_per_second``
of both tile variants, ``mvmul_over_floor`` (target ≤ 4) and ``wolfpine_over_tessera``
(wolfpine's time per tile over Tessera's; target ≥ 50).
"""

from __future__ import annotations

from typing import Any

from tessera.bench.hosts import architecture_plugin, minimal_host
from tessera.bench.model import BenchFailure, Context, Sample, Skip, Variant, Workload
from tessera.bench.targets import Target

TILES = 4               # tiles a sample (Tessera), each a fresh machine
WOLFPINE_TILES = 2      # tiles a sample in wolfpine (a few times slower a tile)
MVMULS = 256            # MVMULs a run of the stream
RUNS = 8                # runs of the stream a sample


class MatmulTile(Workload):
    name = "matmul"
    title = "Tensix matmul tile (32x32x32)"
    samples_per_round = 3   # the stream and floor samples take milliseconds: see sfpu
    order = 42
    rate_style = "ns"
    targets = (
        Target("matmul-mvmul", "one MVMUL against the numpy product of its operands (8x16 @ 16x16)",
               ("matmul", "derived", "mvmul_over_floor"), 4.0, False, "x"),
        Target("matmul-wolfpine", "matmul tile, speed vs wolfpine",
               ("matmul", "derived", "wolfpine_over_tessera"), 50.0, True, "x"),
    )

    def prepare(self, ctx: Context) -> list[Variant]:
        from tessera_tensix.bench_matmul_kernel import MvmulStream, TileProgram

        arch, plugin_name, plugin = architecture_plugin(ctx.host, "tensix", "tessera-tensix")
        self.plugin = (plugin, plugin_name)
        self.host = minimal_host(self.plugin)
        self.tiles = ctx.size(TILES, quick=TILES)
        self.wolfpine_tiles = ctx.size(WOLFPINE_TILES, quick=WOLFPINE_TILES)
        self.runs = ctx.size(RUNS, quick=RUNS)
        self.program = TileProgram(arch)
        per_tile = self.program.count_instructions(self.plugin)   # also the first, warming run
        self.per_tile = sum(per_tile.values())
        a, b = self.program.b[:16, :16], self.program.a[:8, :16]   # SrcA: B's face, SrcB: A's rows
        self.operands = (a, b)
        self.stream = MvmulStream(arch, self.host, MVMULS, a, b)
        self.stream.run()                                           # warms the compiled kernel
        self.wolfpine: Any = None
        self.wolfpine_note = self._wolfpine()
        self.size = {"tile_instructions": self.per_tile, "tile_mvmuls": per_tile.get("ttmvmul", 0),
                     "tiles_per_sample": self.tiles, "wolfpine_tiles_per_sample": self.wolfpine_tiles,
                     "mvmuls_per_run": MVMULS, "runs_per_sample": self.runs,
                     "engine": self.stream.mode.machine.engine, "wolfpine": self.wolfpine_note}
        self.check = {"what": "every packed tile (Tessera, wolfpine) equals numpy's A @ B; Dest after each "
                              f"MVMUL run equals {MVMULS} x B @ A",
                      "expected": "exact (integer-valued BF16 inputs)"}
        return [Variant("tile", self._tile, "examples/matmul.s on three threads, a fresh machine a tile"),
                Variant("mvmul", self._mvmul, "MVMULs back to back on fixed operands"),
                Variant("numpy-floor", self._floor, "np.matmul of the same operands, no emulator"),
                Variant("wolfpine-tile", self._wolfpine_tile, "the same kernel words in wolfpine")]

    def _wolfpine(self) -> str:
        """Set up the peer and run one tile (wolfpine loads its tables on first use); what
        the report says about it: its version, or why the variant is dropped (not
        installed, does not import, or cannot run the kernel: the first run's error)."""
        from tessera_tensix.bench_wolfpine import WolfpineTile

        try:
            peer = WolfpineTile(self.program)
        except Skip as skip:
            return str(skip)
        try:
            peer.run()
        except BenchFailure as exc:
            return f"wolfpine {peer.version} cannot run the matmul kernel: {exc}"
        self.wolfpine = peer
        return f"wolfpine {peer.version}"

    def _tile(self) -> Sample:
        seconds = 0.0
        for _ in range(self.tiles):
            machine = self.program.machine(self.host)
            seconds += self.program.run(machine)
        return Sample(seconds, self.tiles * self.per_tile, {"tiles": self.tiles})

    def _wolfpine_tile(self) -> Sample:
        if self.wolfpine is None:
            raise Skip(self.wolfpine_note)
        seconds = sum(self.wolfpine.run() for _ in range(self.wolfpine_tiles))
        return Sample(seconds, self.wolfpine_tiles * self.per_tile,
                      {"tiles": self.wolfpine_tiles, "cycles_per_tile": self.wolfpine.cycles})

    def _mvmul(self) -> Sample:
        seconds = 0.0
        count = 0
        for _ in range(self.runs):
            s, n = self.stream.run()
            seconds += s
            count += n
        return Sample(seconds, count)

    def _floor(self) -> Sample:
        from tessera_tensix.bench_matmul_kernel import numpy_floor

        a, b = self.operands
        seconds, count, out = numpy_floor(self.runs * MVMULS, a, b)
        if not (out == b @ a).all():
            raise BenchFailure("wrong result: the numpy floor's product differs from b @ a")
        return Sample(seconds, count)

    def derive(self, best: dict[str, Sample]) -> dict[str, Any]:
        ns = {name: 1e9 / s.rate for name, s in best.items()}
        out: dict[str, Any] = {"ns_per_instruction": ns}
        tiles = {name: s for name, s in best.items() if "tiles" in s.extra}
        out["ms_per_tile"] = {name: 1e3 * s.seconds / s.extra["tiles"] for name, s in tiles.items()}
        out["tiles_per_second"] = {name: s.extra["tiles"] / s.seconds for name, s in tiles.items()}
        if "mvmul" in ns and "numpy-floor" in ns:
            out["mvmul_over_floor"] = ns["mvmul"] / ns["numpy-floor"]
        out["wolfpine_over_tessera"] = (best["tile"].rate / best["wolfpine-tile"].rate
                                        if "tile" in best and "wolfpine-tile" in best else None)
        return out

    @classmethod
    def comparison(cls, entry: dict[str, Any], variant: str) -> list[str]:
        derived = entry["derived"]
        parts = []
        if variant in derived.get("ms_per_tile", {}):
            parts.append(f"{derived['ms_per_tile'][variant]:.2f} ms/tile, "
                         f"{derived['tiles_per_second'][variant]:.1f} tiles/s")
        if variant == "mvmul" and derived.get("mvmul_over_floor") is not None:
            parts.append(f"{derived['mvmul_over_floor']:.2f}x numpy floor")
        if variant == "wolfpine-tile" and derived.get("wolfpine_over_tessera") is not None:
            parts.append(f"Tessera {derived['wolfpine_over_tessera']:.1f}x faster")
        return parts
