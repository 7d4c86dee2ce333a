"""The ``matmul`` workload's programs: the matmul example as a tile, an MVMUL stream, the numpy floor.

Imported by :class:`tessera_tensix.bench_matmul.MatmulTile` when it prepares (this
module needs numpy, which listing the workloads must not import).

* :class:`TileProgram` — ``examples/matmul.s`` (a 32×32×32 BF16 matmul on the three
  Tensix threads: UNPACR, 64 MVMULs through MOP and REPLAY, PACR of an FP32 tile), its
  L1 layout taken from the kernel's own symbols (``IN_A``, ``IN_B``, ``OUT``).  Each tile
  runs on a fresh machine, as ``tessera run`` of the kernel would; building, loading and
  preparing it (``Machine.prepare``: its decoder, the threads started at their labels)
  are outside the timed section, filling the decode cache is inside.  The packed tile is
  checked against numpy's ``A @ B`` (the inputs are small integers, so every product and
  sum is exact and the check is equality).
* :class:`MvmulStream` — MVMULs back to back on one thread, on fixed operands already in
  SrcA (16×16) and SrcB (8×16), both banks owned by the matrix unit, BF16 into an FP32
  Dest: Dest rows 0..7 must hold ``count * (B @ A)`` after each run.
* :func:`numpy_floor` — no emulator: ``np.matmul`` of the same operands (8×16 @ 16×16,
  float32) into a preallocated array, the least work an MVMUL's arithmetic needs.
"""

from __future__ import annotations

import time
from importlib import resources
from typing import Any

import numpy as np

import tessera
from tessera.bench.model import BenchFailure
from tessera.errors import TesseraError
from tessera.machine import Machine
from tessera_tensix.mop import FRONT_END_OPCODES

#: the kernel (package data of tessera_tensix.examples) and the symbols it must define
KERNEL = "matmul.s"
LAYOUT = ("IN_A", "IN_B", "OUT")


def to_tile(m: np.ndarray) -> np.ndarray:
    """A 32×32 matrix in tile order: four 16×16 faces, each row-major (the kernel's layout)."""
    return m.reshape(2, 16, 2, 16).transpose(0, 2, 1, 3).reshape(32, 32)


def from_tile(t: np.ndarray) -> np.ndarray:
    """The inverse of :func:`to_tile`."""
    return t.reshape(2, 2, 16, 16).transpose(0, 2, 1, 3).reshape(32, 32)


def bf16_bits(values: np.ndarray) -> np.ndarray:
    """BF16 bit patterns of values BF16 holds exactly (small integers here)."""
    return (np.ascontiguousarray(values, dtype=np.float32).view(np.uint32) >> 16).astype("<u2")


def operands(seed: int = 16) -> tuple[np.ndarray, np.ndarray]:
    """Integer-valued A and B in -4..4: exact in BF16, every product and sum exact in FP32."""
    rng = np.random.default_rng(seed)
    return (rng.integers(-4, 5, (32, 32)).astype(np.float32),
            rng.integers(-4, 5, (32, 32)).astype(np.float32))


class TileProgram:
    """The assembled matmul example, its inputs and expected output."""

    def __init__(self, arch: Any) -> None:
        from tessera.isa.asm import assemble

        self.arch = arch
        self.source = resources.files("tessera_tensix.examples").joinpath(KERNEL).read_text(encoding="utf-8")
        self.program = assemble(arch, self.source, file=KERNEL)
        missing = [name for name in (*LAYOUT, "unpack", "math", "pack") if name not in self.program.symbols]
        if missing:
            raise BenchFailure(f"{KERNEL} no longer defines {', '.join(missing)} (its L1 layout / threads)")
        if self.program.symbols.get("PACK_OUT", 0) != 0:
            raise BenchFailure(f"{KERNEL} packs its output as format {self.program.symbols['PACK_OUT']}, "
                               "the bench checks an FP32 tile (PACK_OUT = FP32)")
        self.in_a, self.in_b, self.out = (self.program.symbols[name] for name in LAYOUT)
        self.a, self.b = operands()
        self.want = self.a @ self.b
        self.a_bits, self.b_bits = bf16_bits(to_tile(self.a)), bf16_bits(to_tile(self.b))

    def image(self) -> bytes:
        """The kernel's words as one image at address 0 (the assembler's segments)."""
        out = bytearray()
        for address, blob in self.program.segments:
            out.extend(b"\0" * max(0, address + len(blob) - len(out)))
            out[address:address + len(blob)] = blob
        return bytes(out)

    def section(self, label: str) -> list[int]:
        """The words of thread section ``label`` up to its END (the all-zero word, not included)."""
        words = np.frombuffer(self.image(), dtype="<u4")
        start = self.program.symbols[label] // 4
        end = start
        while end < len(words) and words[end]:
            end += 1
        return [int(w) for w in words[start:end]]

    def mop_cfg(self, label: str) -> list[int]:
        """The nine MopCfg words at ``<label>_mop:`` (what direct mode programs), or zeros."""
        address = self.program.symbols.get(f"{label}_mop")
        if address is None:
            return [0] * 9
        words = np.frombuffer(self.image(), dtype="<u4")
        return [int(w) for w in words[address // 4:address // 4 + 9]]

    def machine(self, host: Any) -> Any:
        """A fresh Tessera machine with the kernel and the inputs loaded and prepared (its
        decoder built, the threads at their labels, MopCfg programmed), not yet run."""
        from tessera.loaders import place

        machine = Machine(self.arch, host=host)
        for address, blob in self.program.segments:
            place(machine, address, blob, what=KERNEL)
        machine.symbols.update(self.program.symbols)
        machine.set_entry(self.program.entry if self.program.entry is not None else 0)
        l1 = machine.ext["tensix"].l1
        l1.write(self.in_a, self.a_bits.tobytes())
        l1.write(self.in_b, self.b_bits.tobytes())
        machine.prepare()
        return machine

    def check(self, out: np.ndarray, who: str) -> None:
        """``out``: the FP32 values at ``OUT`` (1024, tile order); equal to numpy's ``A @ B``."""
        got = from_tile(np.asarray(out, dtype=np.float32).reshape(32, 32))
        if not np.array_equal(got, self.want):
            bad = np.argwhere(got != self.want)
            r, c = (int(v) for v in bad[0])
            raise BenchFailure(f"wrong result: {who}'s C[{r}][{c}] = {got[r, c]!r}, numpy's A @ B has "
                               f"{self.want[r, c]!r} ({len(bad)} of 1024 values differ)")

    def run(self, machine: Any) -> float:
        """Time ``machine``'s run of the tile and check it; the seconds."""
        start = time.perf_counter()
        try:
            result = machine.run(max_steps=1_000_000)
        except TesseraError as exc:
            raise BenchFailure(f"the matmul kernel run ended in an error: {exc}") from exc
        seconds = time.perf_counter() - start
        if result.reason != "halted" or result.exit_code != 0:
            raise BenchFailure(f"the matmul kernel did not end cleanly: {result.reason} ({result.detail})")
        self.check(machine.ext["tensix"].l1.read_as(self.out, np.float32, 1024), "Tessera")
        return seconds

    def count_instructions(self, plugin: tuple[Any, str]) -> dict[str, int]:
        """One untimed run under a host that also counts retirements: per mnemonic, the
        instructions that reached the backend (MOP and REPLAY expansions included; MOP,
        MOP_CFG, REPLAY and END themselves not)."""
        from tessera.bench.hosts import minimal_host

        counts: dict[str, int] = {}
        machine = self.machine(minimal_host(plugin, (_Counter(counts), "tessera-bench-count")))
        self.run(machine)
        return counts


class _Counter:
    """A tool plugin that counts the backend instructions a machine retires."""

    TESSERA_API_VERSION = 1

    def __init__(self, counts: dict[str, int]) -> None:
        self.counts = counts

    @tessera.hookimpl
    def tessera_execute_observe(self, machine: Any, arch: Any, ins: Any) -> Any:
        if ins.word == 0 or ins.word >> 24 in FRONT_END_OPCODES:
            return None
        counts, name = self.counts, ins.mnemonic

        def observe(agent: Any, ins: Any) -> None:
            counts[name] = counts.get(name, 0) + 1
        return observe


class MvmulStream:
    """``count`` MVMULs and END on thread T0, rerun from the start on the same machine."""

    def __init__(self, arch: Any, host: Any, count: int, a: np.ndarray, b: np.ndarray) -> None:
        from tessera_tensix.bench_kernel import DirectMode
        from tessera_tensix.matrixbanks import FORMATS, src_from_bf16
        from tessera_tensix.srcab import MATRIX

        self.count = count
        self.mode = DirectMode(arch, host, "mvmul 0,0,0,0\n" * count + "end\n")
        core = self.mode.machine.ext["tensix"]
        core.cfg.set("ALU_FORMAT_SPEC_REG0_SrcA", FORMATS["BF16"])
        core.cfg.set("ALU_ACC_CTRL_Fp32_enabled", 1)
        for reg in (core.srca, core.srcb):
            reg.allowed[:] = [MATRIX, MATRIX]
        core.srca.rows[0, :16] = src_from_bf16(bf16_bits(a).astype(np.uint32))
        core.srcb.rows[0, :8] = src_from_bf16(bf16_bits(b).astype(np.uint32))
        self.zero = np.zeros_like(core.dest.bits)
        self.want = np.float32(count) * (b @ a)

    def run(self) -> tuple[float, int]:
        from tessera_tensix.bench_kernel import read_tile

        seconds, steps = self.mode.run(self.zero)
        if steps != self.count + 1:
            raise BenchFailure(f"the MVMUL stream retired {steps} instructions, not {self.count} MVMULs and END")
        got = read_tile(self.mode.dest)[:8]
        if not np.array_equal(got, self.want):
            raise BenchFailure(f"wrong result: after {self.count} MVMULs Dest row 0 holds {got[0, :4]}..., "
                               f"expected {self.want[0, :4]}... ({self.count} x B @ A)")
        return seconds, self.count


def numpy_floor(count: int, a: np.ndarray, b: np.ndarray) -> tuple[float, int, np.ndarray]:
    """``count`` products ``b @ a`` (8×16 @ 16×16, float32) into a preallocated array."""
    a, b = np.ascontiguousarray(a, dtype=np.float32), np.ascontiguousarray(b, dtype=np.float32)
    out = np.empty((b.shape[0], a.shape[1]), dtype=np.float32)
    matmul = np.matmul
    start = time.perf_counter()
    for _ in range(count):
        matmul(b, a, out=out)
    return time.perf_counter() - start, count, out
