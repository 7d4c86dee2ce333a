"""Building an rfPhoenix machine: memory map (spec 1.8), shared state, threads.

Memory map: DRAM at 0 (``dram`` bytes, default 512 MiB), I/O 0xFF80_0000–0xFF9F_FFFF
(the PMA register window at 0xFF9F_0000), scratchpad RAM 0xFFFC_0000–0xFFFC_FFFF and
the boot ROM 0xFFFD_0000–0xFFFF_FFFF.  Threads t0..t(N-1) start at the reset address
0xFFFD_0000; only those enabled in CR0 (reset: thread 0) run.

With ``memory=testbench`` the map is instead the HDL test bench's: one 256 KiB
memory repeated over the whole address space, no I/O and no PMA table
(:mod:`tessera_phoenix.testbench`).
"""

from __future__ import annotations

from typing import Any

from tessera.errors import ConfigError
from tessera_phoenix.config import PhoenixConfig
from tessera_phoenix.interrupts import parse_schedule
from tessera_phoenix.registers import RESET_IP
from tessera_phoenix.shared import Shared, ThreadEnable
from tessera_phoenix.testbench import build_memory
from tessera_phoenix.thread import PhoenixThread
from tessera_phoenix.view import ThreadView

IO_BASE, IO_SIZE = 0xFF80_0000, 0x20_0000
PMA_WINDOW = 0xFF9F_0000
SCRATCH_BASE, SCRATCH_SIZE = 0xFFFC_0000, 0x1_0000
ROM_BASE, ROM_SIZE = 0xFFFD_0000, 0x3_0000


def build(machine: Any) -> None:
    cfg = PhoenixConfig.from_machine(machine.config)
    space = machine.space
    if cfg.memory == "testbench":
        _testbench_only(cfg, machine.config)
        build_memory(space)
    else:
        space.add_ram("dram", 0, cfg.dram, perms="rwx")
        space.add_ram("io", IO_BASE, PMA_WINDOW - IO_BASE, perms="rw")
        space.add_ram("scratch", SCRATCH_BASE, SCRATCH_SIZE, perms="rwx")
        space.add_rom("rom", ROM_BASE, ROM_SIZE)
    shared = Shared(cfg)
    shared.machine = machine
    shared.irq_schedule = parse_schedule(cfg.irq, cfg.threads)
    install_units(machine, shared)
    machine.ext.declare("phoenix", shared)
    gate = ThreadEnable("cr0", shared)
    machine.add_sync(gate)
    shared.gate = gate
    for tid in range(cfg.threads):
        view = ThreadView(f"t{tid}.view", space, shared)
        thread = PhoenixThread(f"t{tid}", machine.arch, view, tid=tid, shared=shared,
                               lanes=cfg.lanes, pc=RESET_IP)
        view.thread = thread
        machine.add_agent(thread)


def _testbench_only(cfg: PhoenixConfig, given: dict[str, Any]) -> None:
    """Refuse settings the bench memory has no place for (rather than silently ignore them)."""
    if "dram" in given:
        raise ConfigError("memory=testbench has one 256 KiB memory and no DRAM: drop the dram setting")
    if "pma" in given and cfg.pma:
        raise ConfigError("memory=testbench has no PMA table: drop pma=true")


def install_units(machine: Any, shared: Shared) -> None:
    """Install the MMU and the PMA table (with its register window) on the shared state."""
    from tessera_phoenix.mmu import install

    install(machine, shared)
