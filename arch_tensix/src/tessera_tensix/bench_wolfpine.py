"""The ``matmul`` workload's peer: the same kernel words in wolfpine, a pure-Python Tensix simulator.

wolfpine (PyPI ``wolfpine``, BSD-3-Clause; ``pip install wolfpine``, in
``requirements-bench.txt``) is only ever imported here, when the bench runs and it is
installed — never by the plugin.  Its package is named ``framework``; what is used is
``framework.pe.tensix`` (wolfpine 2.2), driven as its own tests and its tile drive it:

* a ``TensixCoProcessor`` of the Blackhole profile (the kernel is Tessera's ``tensix``,
  Blackhole) with L1 as wolfpine's ``AddressableMemory`` of 1536 KiB, the inputs written
  at the kernel's ``IN_A`` / ``IN_B``;
* each thread's nine ``MopCfg`` words (the kernel's ``unpack_mop:`` … sections, which
  Tessera's direct mode programs) stored into that thread's MOP expander, as the baby
  RISC-V core's stores to ``TENSIX_MOP_CFG_BASE`` would;
* each thread's words (its section up to, not including, the END word that ends a
  thread in direct mode) pushed into its front end as a core's ``.ttinsn`` store does,
  one per thread per cycle while the front end accepts (it refuses, ``MemoryStall``,
  past 64 instructions in flight); every clock ticks once per cycle until all words
  are pushed and no thread has instructions in flight.

wolfpine runs as installed: its cost model off (``TT_SIM_COST_MODEL`` unset, its default
— one cycle per unit, its fastest setting) and its optional numba MVMUL kernel left to
its own rule (it engages after 512 MVMULs in the process).  Its config-register layout
is a process-wide selection: set to Blackhole for each run and back to Wormhole after,
as its tests do.  Building the coprocessor and checking the packed tile are not timed.
"""

from __future__ import annotations

import contextlib
import io
import time
from typing import Any

from tessera.bench.model import BenchFailure, Skip

INSTALL = "pip install wolfpine (or: pip install -r requirements-bench.txt)"
L1_BYTES = 1536 * 1024


def wolfpine_version() -> str | None:
    """The installed wolfpine's version, or ``None``."""
    import importlib.metadata as md

    try:
        return md.version("wolfpine")
    except md.PackageNotFoundError:
        return None


def load() -> Any:
    """wolfpine's modules the driver uses, or :class:`Skip` with the reason."""
    version = wolfpine_version()
    if version is None:
        raise Skip(f"wolfpine is not installed: {INSTALL}")
    try:
        from framework.arch.blackhole import BLACKHOLE_PROFILE
        from framework.memory.memory import AddressableMemory, MemoryStall
        from framework.pe.tensix.tensix import TensixCoProcessor
        from framework.pe.tensix.util import TensixConfigurationConstants
    except Exception as exc:  # noqa: BLE001 - a broken or shadowed peer install is a skip, not a failure
        raise Skip(f"wolfpine {version} does not import ({type(exc).__name__}: {exc}): {INSTALL}") from None
    return {"profile": BLACKHOLE_PROFILE, "memory": AddressableMemory, "stall": MemoryStall,
            "coprocessor": TensixCoProcessor, "constants": TensixConfigurationConstants, "version": version}


class WolfpineTile:
    """The matmul example's words (a :class:`~tessera_tensix.bench_matmul_kernel.TileProgram`)
    run in wolfpine, one fresh coprocessor per tile."""

    def __init__(self, program: Any) -> None:
        self.wp = load()
        self.program = program
        self.threads = [program.section(label) for label in ("unpack", "math", "pack")]
        self.mops = [program.mop_cfg(label) for label in ("unpack", "math", "pack")]
        self.version = self.wp["version"]
        self.cycles = 0

    def build(self) -> tuple[Any, Any]:
        """A coprocessor with L1, the inputs and the MOP configuration (not timed)."""
        wp, program = self.wp, self.program
        profile = wp["profile"]
        cp = wp["coprocessor"](None, profile.tensix_cfg_state_size, profile.tensix_thd_state_size,
                               blackhole=True)
        l1 = wp["memory"](L1_BYTES)
        l1.write(program.in_a, program.a_bits.tobytes())
        l1.write(program.in_b, program.b_bits.tobytes())
        cp.setAddressableMemory([l1])
        for tid, cfg in enumerate(self.mops):
            cp.getThread(tid).mop_expander.mop_cfg = list(cfg)
        return cp, l1

    def run(self) -> float:
        """Build (untimed), run (timed) and check one tile; the seconds."""
        import numpy as np

        constants = self.wp["constants"]
        try:
            with contextlib.redirect_stdout(io.StringIO()):    # keep --json clean
                cp, l1 = self.build()
                seconds, self.cycles = self._drive(cp)
        except BenchFailure:
            raise
        except Exception as exc:
            raise BenchFailure(f"wolfpine raised {type(exc).__name__}: {exc}") from exc
        finally:
            constants.use_blackhole(False)
        self.program.check(np.frombuffer(l1.read(self.program.out, 4096), dtype="<f4"), "wolfpine")
        return seconds

    def _drive(self, cp: Any, max_cycles: int = 1_000_000) -> tuple[float, int]:
        stall = self.wp["stall"]
        threads = self.threads
        fronts = [cp.getThread(tid) for tid in range(3)]
        words = [[w.to_bytes(4, "little") for w in section] for section in threads]
        pos = [0, 0, 0]
        clocks = cp.getClocks()
        start = time.perf_counter()
        for cycle in range(max_cycles):
            for tid in range(3):
                if pos[tid] < len(words[tid]) and fronts[tid].write(0, words[tid][pos[tid]]) is not stall:
                    pos[tid] += 1
            for clock in clocks:
                clock.clock_tick(cycle)
            if pos == [len(w) for w in words] and not any(cp.CoprocessorDoneCheck(t) for t in range(3)):
                return time.perf_counter() - start, cycle + 1
        raise BenchFailure(f"wolfpine did not finish the tile in {max_cycles} cycles (words pushed: {pos})")
