"""Building a Tensix tile: L1, the coprocessor, its three fed threads and the baby RISC-V cores.

The machine's main address space is the tile's shared space: L1 at 0 (executable:
the cores run from it) and the windows every core sees alike (backend configuration,
TDMA-RISC, tile control).  Each core gets a :class:`~tessera_tensix.tile.view.CoreView`
over that space and a small space of its own (``<core>.own``: its local data RAM at
``MEM_LOCAL_BASE`` and the per-core windows: instruction push, MOP configuration,
GPRs, PCBuf/TTSync/semaphores, mailboxes).  The Tensix threads T0..T2 are
:class:`~tessera_tensix.tile.fedthread.FedThread` agents fed by their FIFOs.

At power-on only RISCV B runs (from 0); the TRISCs (and NC) are held in soft reset
until RISCV B clears their bits of ``RISCV_DEBUG_REG_SOFT_RESET_0``
(:mod:`tessera_tensix.tile.tilectl`), which is the vendor's boot protocol.
"""

from __future__ import annotations

from typing import Any

from tessera_tensix.config import TensixConfig, presets
from tessera_tensix.core import TensixCore
from tessera_tensix.tile import memmap
from tessera_tensix.tile.fedthread import FedThread
from tessera_tensix.tile.fifo import InstructionFifo
from tessera_tensix.tile.polls import Polls
from tessera_tensix.tile.view import CoreView


class Tile:
    """The parts of a tile other modules look up (``machine.ext["tensix_tile"]``)."""

    def __init__(self, chip: str, core: TensixCore) -> None:
        self.chip = chip
        self.core = core
        #: core name -> RiscvHart, in memmap.CORES order (those the tile has)
        self.harts: dict[str, Any] = {}
        #: core name -> its private AddressSpace
        self.own: dict[str, Any] = {}
        self.fifos: list[InstructionFifo] = []
        #: told a core's name as it enters (``held(name)``) / leaves (``released(name)``) soft
        #: reset (SoftReset.md: the mailboxes it writes are emptied; a TRISC's PCBuf too)
        self.on_hold: list[Any] = []
        self.on_release: list[Any] = []
        #: cores that only poll memory park on these (polls.py; the ``park_polls`` setting)
        self.polls = Polls(core.l1.space if core.l1 is not None else None)
        self.park_polls = core.config.park_polls

    def thread_of(self, core_name: str) -> Any:
        """The Tensix thread a TRISC pushes to (``trisc1`` -> T1)."""
        return self.core.threads[int(core_name[-1])]

    def state(self) -> dict[str, Any]:
        return {"chip": self.chip, "cores": {name: h.status for name, h in self.harts.items()}}


def build_tile(machine: Any, tensix_arch: Any, riscv_arch: Any, chip: str, *, ncrisc: bool = False) -> Tile:
    """Populate ``machine`` (a tile architecture's) with a tile of ``chip`` (``bh``/``wh``)."""
    from tessera_riscv import RiscvIO
    from tessera_tensix.l1 import L1
    from tessera_tensix.tile import devices, tilectl
    from tessera_tensix.tile.hart import BabyHart

    cfg = TensixConfig.from_machine(machine.config, machine.arch.settings)
    core = TensixCore(cfg, chip)
    core.machine = machine
    machine.ext.declare("tensix", core)
    machine.add_sync(core.signal)
    for name, value in presets(machine.config, "cfg.").items():
        core.cfg.set(name, value)
    shared = machine.space
    core.l1 = L1(shared, memmap.MEM_L1_BASE, chip, perms="rwx")
    core.l1.signal = core.signal
    from tessera_tensix import l1io

    l1io.parse_outputs(cfg.l1_out, core.l1.size)  # refuse a bad --l1-out before running, not after
    l1io.load_inputs(core.l1, cfg.l1)
    tile = Tile(chip, core)
    machine.ext.declare("tensix_tile", tile)
    for tid in range(3):
        thread = FedThread(f"t{tid}", tensix_arch, shared, tid=tid, core=core)
        for name, value in presets(machine.config, "tcfg.").items():
            thread.tcfg.set(name, value)
        fifo = InstructionFifo(f"t{tid}.fifo", thread)
        thread.fifo = fifo
        thread.polls = tile.polls
        machine.add_sync(fifo)
        tile.fifos.append(fifo)
        machine.add_agent(thread)
        core.threads.append(thread)
    # ecall is a system call (exit, write) as on the plain RISC-V board, so a hand-written
    # tile program can end and print; the vendor's firmware never executes one
    machine.ext.declare("riscv_io", RiscvIO(echo=cfg.echo))
    names = [n for n in memmap.CORES if n != "ncrisc" or ncrisc]
    for index, name in enumerate(names):
        own = machine.add_space(f"{name}.own", address_bits=32)
        own.add_ram("local", memmap.MEM_LOCAL_BASE, memmap.LOCAL_BYTES[chip][name], perms="rw")
        tile.own[name] = own
        view = CoreView(name, shared, own, memmap.PRIVATE)
        hart = BabyHart(name, riscv_arch, view, xlen=32, hartid=index, syscalls=True,
                        pc=memmap.DEFAULT_PC[name], tile=tile)
        machine.add_agent(hart)
        tile.harts[name] = hart
        tile.polls.add(machine, name)
    devices.install(machine, tile)
    tilectl.install(machine, tile)
    return tile
