"""Register windows of the coprocessor in the baby RISC-V cores' address space.

* ``REGFILE_BASE`` — the Tensix GPRs (WormholeB0 .../TensixCoprocessor/ScalarUnit.md,
  "RISCV access to GPRs"): RISCV T<i> sees thread T<i>'s 64 GPRs (``thread.gpr``,
  256 bytes); RISCV B sees ``GPRs[3][64]`` whole, thread after thread (768 bytes).
  Any load or store width, in its byte lanes.
* ``TENSIX_CFG_BASE`` — backend configuration (BackendConfiguration.md of each chip):
  ``Config[0]``, ``Config[1]`` (``CFG_STATE_SIZE * 4`` words each), on Blackhole
  ``ConfigDualWrite`` (a store writes both banks, a load reads ``Config[0]``), then
  ``ThreadConfig[3][THD_STATE_SIZE]`` — 16 bytes an entry on Wormhole
  (``{uint16_t Value, Padding[7]}``), 4 on Blackhole (``{Value, Padding}``).  Loads of
  any width; ``Config`` takes only ``sw`` (a narrower store faults), with the write's
  immediate effects (:func:`tessera_tensix.cfgregs.write_cfg`: global registers in
  both banks, ``STATE_RESET_EN``, the PRNG seed).  The RISC-V control fields there —
  Wormhole's ``TRISC_RESET_PC_SEC*_PC`` and ``*_RESET_PC_OVERRIDE`` — are ordinary
  fields, which the tile's soft-reset control reads (:mod:`tessera_tensix.tile.tilectl`).
  RISC-V cores cannot store to ``ThreadConfig`` (they push SETC16): such a store has no
  effect.  Past ``ThreadConfig`` an access faults.  RISCV NC has no such window.
* ``RISCV_TDMA_REGS_START_ADDR`` — TDMA-RISC (WormholeB0 .../TensixTile/TDMA-RISC.md;
  Blackhole has no page and the same registers in the vendor's ``tensix.h``; RISCV NC reaches
  it on Wormhole only, as the two memory maps say): the
  mover's command registers (:meth:`Mover.tdma_write <tessera_tensix.mover.Mover.tdma_write>`
  / ``tdma_read``), the packers' ``SetPackRegAddr``/``SetScaler``
  (:class:`tessera_tensix.pack.Packers`), ``ResetPackerAccTileSize``'s
  ``l1_dest_addr_offset``, the unpackers' ``SetRegAcc`` in the high half of
  ``UnpackerPackerAcc`` and bit 31 of ``ScalarsAndStatus``.  What the packers do not
  model reads as the idle state: tile sizes, accumulated tile sizes and all-zero flags
  read 0, the metadata FIFOs are empty (``MetadataFIFOStatus``), a pop of one returns 0
  (the page: "undefined data"), and the packers are never busy.  A load that would
  *peek* an empty metadata FIFO waits forever in hardware: here it faults, naming the
  register.  ``RISCV_TDMA_REG_CLK_GATE_EN`` keeps its raw value (``SetUnpackRegAddr``
  is not described by the page and changes nothing).  Other addresses fault.

**Ordering** (BlackholeA0 AutoTTSync.md; WormholeB0 TTSync.md, BackendConfiguration.md
"Danger two"): pushed Tensix instructions and a TRISC's own accesses to backend
configuration, GPRs or TDMA-RISC are ordered by hardware only on Blackhole with Auto
TTSync enabled — thread config ``TENSIX_TRISC_SYNC_TrackTensixInstructions`` and the
resource's ``TrackGlobalCfg`` / ``TrackGPR`` / ``TrackTDMARegs`` set (SETC16).  Then
Tessera models it conservatively: the access waits — the core parks on the backend
signal — until the TRISC's own Tensix thread is idle (nothing queued, nothing in
flight).  The hardware tracks resources and stalls only for instructions that touch
the accessed one, so with Auto TTSync on, a TRISC that polls such a register while its
own thread waits for that TRISC can deadlock here and not on the chip.  Without it
(always on Wormhole, whose TTSync is the manual CoprocessorDoneCheck) the access runs
at once, as the hardware's would race: programs order them with ``tensix_sync`` and
semaphores, and so do tt-llk's.  RISCV B and NC never wait (Auto TTSync does not
cover them).
"""

from __future__ import annotations

from typing import Any

from tessera.errors import MemoryFault
from tessera_tensix.tile import memmap

MASK32 = 0xFFFF_FFFF
GPRS = 64                                  # per thread
WINDOW = 0x1_0000                          # TENSIX_CFG_BASE .. 0xFFEF_FFFF
TDMA_WINDOW = 0x1000                       # RISCV_TDMA_REGS_START_ADDR .. 0xFFB1_1FFF

# TDMA-RISC registers beyond the mover's (TDMA-RISC.md's memory map)
CLK_GATE_EN = 0xFFB1_1024                  # UnpackRegAddrRaw
CLK_GATE_HYST = 0xFFB1_1028                # Scaler2Raw, SetScaler(3)
SCALERS = {0xFFB1_103C: 0, 0xFFB1_113C: 1}  # SetScaler(0) / ScalarsAndStatus(unpacker)
FIFO_PACKED_TILE_STATUS = 0xFFB1_1038      # SetPackRegAddr / MetadataFIFOStatus
PACKED_SIZE = {0xFFB1_1018 + 0x100 * p + 0x40 * t: (p, t) for p in range(4) for t in range(3)}
ACC_PACKED_SIZE = {0xFFB1_101C + 0x100 * p + 0x40 * t: (p, t) for p in range(4) for t in range(3)}
ALL_ZERO_FLAGS = {0xFFB1_1020 + 0x100 * p: p for p in range(4)}
FIFO_PACKED_TILE_SIZE = {0xFFB1_1030 + 0x100 * p: p for p in range(4)}
FIFO_PACKED_TILE_ZEROMASK = {0xFFB1_1034 + 0x100 * p: p for p in range(4)}


def _lane(word: int, offset: int, size: int) -> int:
    return word >> 8 * (offset & 3) & ((1 << 8 * size) - 1)


def _merge(word: int, offset: int, size: int, value: int) -> int:
    lane = 8 * (offset & 3)
    mask = ((1 << 8 * size) - 1) << lane
    return (word & ~mask | value << lane & mask) & MASK32


#: the Auto TTSync tracking bit of each resource (Blackhole thread config)
TRACKS = {"cfg": "TENSIX_TRISC_SYNC_TrackGlobalCfg", "gpr": "TENSIX_TRISC_SYNC_TrackGPR",
          "tdma": "TENSIX_TRISC_SYNC_TrackTDMARegs"}


def ordered(tile: Any, agent: Any, what: str, resource: str) -> None:
    """With Auto TTSync tracking ``resource`` (``cfg``, ``gpr``, ``tdma``), a TRISC's access
    waits until its own Tensix thread is idle (the module's "Ordering"); call before any
    side effect."""
    name = getattr(agent, "name", "")
    if not name.startswith("trisc") or tile.chip != "bh":
        return
    thread = tile.thread_of(name)
    tcfg = thread.tcfg
    if not (tcfg.get("TENSIX_TRISC_SYNC_TrackTensixInstructions") and tcfg.get(TRACKS[resource])):
        return
    if not thread.idle:
        raise tile.core.signal.wait_for(agent, f"Tensix {thread.name.upper()} to finish the instructions "
                                               f"{name} pushed before its {what} (TTSync)")


def _fault(agent: Any, text: str, address: int, size: int, access: str) -> MemoryFault:
    who = getattr(agent, "name", "?")
    return MemoryFault(f"{who}: {text}", access=access, size=size, address=address)


class GprWindow:
    """``REGFILE_BASE`` as one core sees it: ``threads``' GPRs one after another."""

    def __init__(self, tile: Any, hart: Any, threads: list[Any]) -> None:
        self.tile = tile
        self.hart = hart
        self.threads = threads

    def _locate(self, offset: int, size: int, access: str) -> tuple[Any, int]:
        if (offset & 3) + size > 4:
            raise _fault(self.hart, f"a {size}-byte access to Tensix GPRs must stay in one register",
                         memmap.REGFILE_BASE + offset, size, access)
        thread, index = divmod(offset // 4, GPRS)
        ordered(self.tile, self.hart, f"{'load from' if access == 'read' else 'store to'} "
                                      f"REGFILE_BASE+{offset:#x}", "gpr")
        return self.threads[thread], index

    def read(self, offset: int, size: int) -> int:
        thread, index = self._locate(offset, size, "read")
        return _lane(thread.gpr[index], offset, size)

    def write(self, offset: int, size: int, value: int) -> None:
        thread, index = self._locate(offset, size, "write")
        thread.gpr[index] = _merge(thread.gpr[index], offset, size, value)


class ConfigWindow:
    """``TENSIX_CFG_BASE``: ``Config``, (Blackhole) ``ConfigDualWrite``, ``ThreadConfig``."""

    def __init__(self, tile: Any) -> None:
        from tessera_tensix.cfgregs import register_map
        from tessera_tensix.mover import config_layout

        self.tile = tile
        self.core = tile.core
        self.space = tile.core.machine.space
        self.bank_bytes, self.tcfg_base = config_layout(self.core)
        self.stride = 16 if self.core.chip == "wh" else 4          # bytes per ThreadConfig entry
        self.tcfg_words = register_map(self.core.chip).tcfg_words
        self.end = self.tcfg_base + 3 * self.tcfg_words * self.stride

    def _agent(self, offset: int, size: int, access: str) -> Any:
        agent = self.space.current_agent
        address = memmap.TENSIX_CFG_BASE + offset
        if getattr(agent, "name", "") == "ncrisc":
            raise _fault(agent, "RISCV NC has no backend configuration window", address, size, access)
        if offset >= self.end:
            raise _fault(agent, f"{address:#010x} is past ThreadConfig (backend configuration ends at "
                                f"{memmap.TENSIX_CFG_BASE + self.end:#010x})", address, size, access)
        if (offset & 3) + size > 4:
            raise _fault(agent, f"a {size}-byte access to backend configuration must stay in one word",
                         address, size, access)
        ordered(self.tile, agent, f"{'load from' if access == 'read' else 'store to'} "
                                  f"TENSIX_CFG_BASE+{offset:#x}", "cfg")
        return agent

    def read(self, offset: int, size: int) -> int:
        from tessera_tensix.cfgregs import read_cfg, read_tcfg

        self._agent(offset, size, "read")
        if offset < self.tcfg_base:
            bank, index = divmod(offset // 4, self.bank_bytes // 4)
            return _lane(read_cfg(self.core, bank if bank < 2 else 0, index), offset, size)
        entry, within = divmod(offset - self.tcfg_base, self.stride)
        if within >= 4:
            return 0                                                  # Wormhole's padding
        tid, index = divmod(entry, self.tcfg_words)
        return _lane(read_tcfg(self.core.threads[tid], index), offset, size)

    def write(self, offset: int, size: int, value: int) -> None:
        from tessera_tensix.cfgregs import write_cfg

        agent = self._agent(offset, size, "write")
        if offset >= self.tcfg_base:
            return                      # ThreadConfig: RISC-V stores have no effect (push SETC16)
        if size != 4:
            raise _fault(agent, f"backend configuration takes only sw (a {size}-byte store to "
                                f"{memmap.TENSIX_CFG_BASE + offset:#010x})",
                         memmap.TENSIX_CFG_BASE + offset, size, "write")
        bank, index = divmod(offset // 4, self.bank_bytes // 4)
        for b in ((0, 1) if bank == 2 else (bank,)):                  # ConfigDualWrite: both banks
            write_cfg(self.core, b, index, value)


class TdmaRiscRegs:
    """The raw TDMA-RISC registers no unit keeps (``core.unit("tdma_risc")``)."""

    def __init__(self, core: Any = None) -> None:
        self.unpack_reg_addr_raw = 0        # RISCV_TDMA_REG_CLK_GATE_EN
        self.scaler2_raw = 0                # RISCV_TDMA_REG_CLK_GATE_HYST

    def state(self) -> dict[str, Any]:
        return {"unpack_reg_addr_raw": f"{self.unpack_reg_addr_raw:#010x}",
                "scaler2_raw": f"{self.scaler2_raw:#010x}"}


class TdmaWindow:
    """``RISCV_TDMA_REGS_START_ADDR`` .. + 0xFFF (shared by the cores)."""

    def __init__(self, tile: Any) -> None:
        self.tile = tile
        self.core = tile.core
        self.space = tile.core.machine.space

    def _client(self, offset: int, size: int, access: str) -> tuple[Any, str, int]:
        """The accessing core, its TDMA-RISC name (B, T0 …) and the register's address."""
        agent = self.space.current_agent
        address = memmap.RISCV_TDMA_REGS_START_ADDR + (offset & ~3)
        client = memmap.SHORT.get(getattr(agent, "name", ""))
        if client is None:
            raise _fault(agent, "only the baby RISC-V cores reach TDMA-RISC", address, size, access)
        if client == "NC" and self.core.chip == "bh":                # Blackhole's memory map
            raise _fault(agent, "RISCV NC has no TDMA-RISC window on Blackhole", address, size, access)
        ordered(self.tile, agent, f"{'load from' if access == 'read' else 'store to'} TDMA-RISC {address:#010x}",
                "tdma")
        return agent, client, address

    def write(self, offset: int, size: int, value: int) -> None:
        from tessera_tensix.mover import mover
        from tessera_tensix.pack import packers

        agent, client, address = self._client(offset, size, "write")
        value = value << 8 * (offset & 3) & MASK32
        if mover(self.core).tdma_write(self.core, address, value, client):
            return
        if address == CLK_GATE_EN:
            self.core.unit("tdma_risc", TdmaRiscRegs).unpack_reg_addr_raw = value & 0xFFFF_FF7F
        elif address == CLK_GATE_HYST:
            self.core.unit("tdma_risc", TdmaRiscRegs).scaler2_raw = value & 0x01FF_007F
            packers(self.core).set_scaler(3, value)
        elif address in SCALERS:
            packers(self.core).set_scaler(0, value)
        elif address == FIFO_PACKED_TILE_STATUS:
            packers(self.core).set_pack_reg_addr(value)
        elif address in ACC_PACKED_SIZE:                     # ResetPackerAccTileSize
            for i, packer in enumerate(packers(self.core).packers):
                if value >> (16 + i) & 1:
                    packer.l1_dest_addr_offset = value & 0xFFFF
        elif not (address in PACKED_SIZE or address in ALL_ZERO_FLAGS or address in FIFO_PACKED_TILE_SIZE
                  or address in FIFO_PACKED_TILE_ZEROMASK):  # "no effect" (a pop of an empty FIFO)
            raise _fault(agent, f"{address:#010x} is not a TDMA-RISC register", address, size, "write")

    def read(self, offset: int, size: int) -> int:
        from tessera_tensix.mover import mover
        from tessera_tensix.pack import packers
        from tessera_tensix.unpack import unpackers

        agent, client, address = self._client(offset, size, "read")
        word = mover(self.core).tdma_read(self.core, address, client)
        if word is None:
            word = self._register(agent, address, size, packers(self.core), unpackers(self.core))
        return _lane(word, offset, size)

    def _register(self, agent: Any, address: int, size: int, packs: Any, unpacks: Any) -> int:
        if address == CLK_GATE_EN:
            return self.core.unit("tdma_risc", TdmaRiscRegs).unpack_reg_addr_raw
        if address == CLK_GATE_HYST:
            return self.core.unit("tdma_risc", TdmaRiscRegs).scaler2_raw
        if address in SCALERS:                               # ScalarsAndStatus (packers never busy)
            word = sum(packs.set_reg_hi_scaler[i] << 9 * i for i in range(3))
            return word | (unpacks.set_reg_acc[SCALERS[address]] >> 16 & 1) << 31
        if address == FIFO_PACKED_TILE_STATUS:               # MetadataFIFOStatus: all four empty
            return (packs.pack_reg_addr_raw << 8 | 0b01010101) & MASK32
        if address in ACC_PACKED_SIZE:                       # UnpackerPackerAcc: AccTileSize not modelled
            packer, _thread = ACC_PACKED_SIZE[address]
            return (unpacks.set_reg_acc[packer & 1] & 0xFFFF) << 16
        if address in PACKED_SIZE or address in ALL_ZERO_FLAGS or address in FIFO_PACKED_TILE_ZEROMASK:
            return 0
        if address in FIFO_PACKED_TILE_SIZE:
            raise _fault(agent, f"{address:#010x} (RISCV_TDMA_REG_FIFO_PACKED_TILE_SIZE"
                                f"({FIFO_PACKED_TILE_SIZE[address]})) waits for a packer metadata FIFO entry, "
                                "and Tessera does not model those FIFOs", address, size, "read")
        raise _fault(agent, f"{address:#010x} is not a TDMA-RISC register", address, size, "read")


def install(machine: Any, tile: Any) -> None:
    """Map the GPR windows (per core), backend configuration and TDMA-RISC (shared)."""
    threads = tile.core.threads
    for name, hart in tile.harts.items():
        if name == "brisc":
            window = GprWindow(tile, hart, list(threads))
        elif name.startswith("trisc"):
            window = GprWindow(tile, hart, [tile.thread_of(name)])
        else:
            continue                                         # RISCV NC: unmapped
        tile.own[name].add_mmio("gprs", memmap.REGFILE_BASE, len(window.threads) * GPRS * 4, window)
    machine.space.add_mmio("tensix_cfg", memmap.TENSIX_CFG_BASE, WINDOW, ConfigWindow(tile))
    machine.space.add_mmio("tdma_risc", memmap.RISCV_TDMA_REGS_START_ADDR, TDMA_WINDOW, TdmaWindow(tile))
