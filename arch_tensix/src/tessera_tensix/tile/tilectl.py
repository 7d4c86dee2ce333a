"""Tile control registers: soft reset and the cores' reset pcs (the vendor's boot protocol).

SoftReset.md (both chips): bits 11..14 and 18 of ``RISCV_DEBUG_REG_SOFT_RESET_0`` hold
RISCV B, T0, T1, T2 and NC in soft reset.  Leaving reset, a core starts at a fixed pc
unless its override is enabled: on Blackhole the override and the pcs are tile-control
registers (``RISCV_DEBUG_REG_TRISC_RESET_PC_OVERRIDE``, ``..._TRISC0_RESET_PC`` …); on
Wormhole they are backend-configuration fields (``TRISC_RESET_PC_OVERRIDE_Reset_PC_Override_en``,
``TRISC_RESET_PC_SEC0_PC`` …, written through ``TENSIX_CFG_BASE``).  Entering reset, a
TRISC's Tensix FIFO is emptied.  Power-on state (a choice: the pages give none; the
vendor's boot has RISCV B release the others): only RISCV B runs.

The other registers of the window (``RISCV_DEBUG_REGS_START_ADDR`` .. + 0xFFF) read back
what was last stored; the wall clock (``RISCV_DEBUG_REG_WALL_CLOCK_L``/``_H``,
DebugTimestamper.md) counts the machine's cycles (``Machine.clock``).
"""

from __future__ import annotations

from typing import Any

from tessera.control import WaitFor
from tessera.engine import HALTED
from tessera.sync import SyncObject
from tessera_tensix.tile import memmap
from tessera_tensix.tile.pcbufs import PC_BUF_OVERRIDE

#: DebugTimestamper.md: the wall clock's low word (latches the high one), the live high
#: word, the latched high word
WALL_CLOCK_L, WALL_CLOCK_L4, WALL_CLOCK_H = 0x1F0, 0x1F4, 0x1F8
#: the power-on value of RISCV_DEBUG_REG_SOFT_RESET_0: every core but RISCV B held
POWER_ON_RESET = sum(1 << bit for name, bit in memmap.RESET_BIT.items() if name != "brisc")


class SoftReset(SyncObject):
    """What a core held in soft reset waits on."""

    kind = "tensix-soft-reset"

    def state(self) -> dict[str, Any]:
        return {"kind": self.kind, "held": [a.name for a in self.waiters]}


class TileControl:
    """The tile control / debug / status window (shared by every core)."""

    def __init__(self, tile: Any, reset: SoftReset) -> None:
        self.tile = tile
        self.reset = reset
        self.regs: dict[int, int] = {}
        self.soft_reset = POWER_ON_RESET
        self.high_at = 0                       # the wall clock's high word, latched by a read of _L
        self.exact_for: Any = None             # the core whose clock read ended its slice (_exact)

    def read(self, offset: int, size: int) -> int:
        if offset == memmap.SOFT_RESET_0 - memmap.RISCV_DEBUG_REGS_START_ADDR:
            return self.soft_reset
        if offset in (WALL_CLOCK_L, WALL_CLOCK_L4):
            machine = self.tile.core.machine
            self._exact(machine)
            # a timing model that keeps a time per agent (a cycle model's baby cores) says
            # what this core reads; otherwise the machine clock
            local = getattr(machine.timing, "local_time", None)
            agent = machine.space.current_agent
            counter = int(local(agent)) if local is not None and agent is not None else int(machine.clock)
            if offset == WALL_CLOCK_L4:
                return counter >> 32 & 0xFFFF_FFFF
            self.high_at = counter >> 32 & 0xFFFF_FFFF
            return counter & 0xFFFF_FFFF
        if offset == WALL_CLOCK_H:
            return self.high_at
        return self.regs.get(offset, 0)

    def _exact(self, machine: Any) -> None:
        """A core reads the clock with its cycle count exact: the machine clock counts every
        agent's committed cycles, and a core running a translated block commits its own only
        when the slice ends.  So the first read ends the slice there (as the RISC-V plugin's
        counter CSRs do) and the read runs again, first in the next slice, exactly — the same
        value whether or not a run was cut by a budget just before."""
        agent = machine.space.current_agent
        stop = getattr(agent, "slice_break", None)
        if stop is None:
            return
        if self.exact_for is not agent:
            self.exact_for = agent
            raise WaitFor(stop, "an exact wall-clock read")
        self.exact_for = None

    def write(self, offset: int, size: int, value: int) -> None:
        if offset == memmap.SOFT_RESET_0 - memmap.RISCV_DEBUG_REGS_START_ADDR:
            self.set_soft_reset(value & 0xFFFF_FFFF)
            return
        self.regs[offset] = value & 0xFFFF_FFFF
        if offset == PC_BUF_OVERRIDE:          # OverrideEn/OverrideBusy may release parked cores
            self.wake_override_waiters()

    def wake_override_waiters(self) -> None:
        """Cores parked where the PCBuf override answers (pcbufs.py) re-check their condition:
        on the backend signal (RISCV B's PCBuf load, CoprocessorDoneCheck), a PCBuf (T<i>'s
        load of an empty one) or an instruction FIFO (MOPExpanderDoneCheck)."""
        self.tile.core.signal.changed()
        for obj in (*getattr(self.tile, "pcbufs", ()), *self.tile.fifos):
            obj.wake_waiters()

    def set_soft_reset(self, value: int) -> None:
        """Store ``RISCV_DEBUG_REG_SOFT_RESET_0``: cores whose bit rises enter reset, those
        whose bit falls leave it at their reset pc."""
        old, self.soft_reset = self.soft_reset, value
        for name, hart in self.tile.harts.items():
            bit = 1 << memmap.RESET_BIT[name]
            if value & bit and not old & bit:
                self.hold(name, hart)
            elif old & bit and not value & bit:
                self.release(name, hart)

    def hold(self, name: str, hart: Any) -> None:
        for listener in self.tile.on_hold:
            listener.held(name)
        if name.startswith("trisc"):
            self.tile.fifos[int(name[-1])].items.clear()   # the FIFO before the MOP expander
        if hart.status != HALTED:
            hart.daemon = True                 # a core held in reset does not keep a run going
            if hart.waiting_on is not None:
                hart.waiting_on.unpark(hart)
            hart.park(self.reset, f"{name} is held in soft reset")

    def release(self, name: str, hart: Any) -> None:
        for listener in self.tile.on_release:
            listener.released(name)
        hart.x[:] = [0] * len(hart.x)
        hart.pc = hart.next_pc = self.reset_pc(name)
        hart.at_entry = True
        if hart.waiting_on is self.reset:
            self.reset.unpark(hart)
            hart.wake()
        hart.daemon = False

    def reset_pc(self, name: str) -> int:
        """Where ``name`` starts out of reset (SoftReset.md's table)."""
        if name == "brisc":
            return memmap.DEFAULT_PC[name]
        base = memmap.RISCV_DEBUG_REGS_START_ADDR
        cfg = self.tile.core.cfg
        wh = self.tile.chip == "wh"
        if name == "ncrisc":
            on = (cfg.get("NCRISC_RESET_PC_OVERRIDE_Reset_PC_Override_en") if wh
                  else self.regs.get(memmap.NCRISC_RESET_PC_OVERRIDE - base, 0)) & 1
            pc = cfg.get("NCRISC_RESET_PC_PC") if wh else self.regs.get(memmap.NCRISC_RESET_PC - base, 0)
            return pc if on else memmap.DEFAULT_PC[name]
        i = int(name[-1])
        on = (cfg.get("TRISC_RESET_PC_OVERRIDE_Reset_PC_Override_en") if wh
              else self.regs.get(memmap.TRISC_RESET_PC_OVERRIDE - base, 0)) >> i & 1
        pc = cfg.get(f"TRISC_RESET_PC_SEC{i}_PC") if wh else self.regs.get(memmap.TRISC_RESET_PC[i] - base, 0)
        return pc if on else memmap.DEFAULT_PC[name]

    def state(self) -> dict[str, Any]:
        return {"soft_reset": f"{self.soft_reset:#010x}",
                "regs": {f"{memmap.RISCV_DEBUG_REGS_START_ADDR + k:#010x}": f"{v:#x}"
                         for k, v in sorted(self.regs.items())}}


def install(machine: Any, tile: Any) -> TileControl:
    """Map the window, and hold every core but RISCV B in soft reset."""
    reset = SoftReset("tile.soft_reset")
    machine.add_sync(reset)
    ctl = TileControl(tile, reset)
    machine.space.add_mmio("tile_control", memmap.RISCV_DEBUG_REGS_START_ADDR, 0x1000, ctl)
    tile.control = ctl
    for name, hart in tile.harts.items():
        if POWER_ON_RESET >> memmap.RESET_BIT[name] & 1:
            ctl.hold(name, hart)
    return ctl
