"""The host's part of tt-llk's test protocol, played by an agent of the tile.

The vendor's test firmware does not run on its own: RISCV B (``tests/helpers/src/
brisc.cpp``) initialises, publishes a boot-ready sentinel in an L1 mailbox and then
polls a command slot that the *host* writes (start the TRISCs); each TRISC
(``trisc.cpp``) runs its kernel, waits for its Tensix thread (``tensix_sync``) and
writes ``KERNEL_COMPLETE`` to its L1 mailbox; then every core loops forever.  So a
run of those ELFs needs the host's side, and this agent is it (the facts are the
test helpers' — addresses and values are the manifest's ``[host]`` table, with the
helpers' values as defaults):

1. wait for RISCV B's sentinel (``0xB001CAFE`` at the counter slot);
2. on Wormhole, write each TRISC's start address to the slots RISCV B copies into the
   reset-pc configuration (``TRISC_START_BASE``) and send ``UPDATE_START_ADDR_CACHE_AND_START``;
   on Blackhole set each TRISC's reset pc (tile-control registers, override on) to its
   ELF's entry, as the harness's ELF loader does over the NoC, and send ``START_TRISCS``;
3. wait until every TRISC's mailbox holds ``KERNEL_COMPLETE`` and every Tensix thread
   is idle; then halt every core (they spin in their final loops) and itself: the run
   ends ``halted`` with exit status 0.

Each look at L1 is one step of ``POLL_CYCLES`` cycles; between looks the host is parked
on its :class:`~tessera_tensix.tile.polls.PollWait` until a word it waits for changes (or,
for the threads, on the backend signal), so it costs nothing while the kernel runs and a
deadlock report says what it waits for.
"""

from __future__ import annotations

from typing import Any

from tessera.engine import Agent
from tessera_tensix.tile.polls import park, turn_ends

#: tt-llk test helpers (brisc.cpp, trisc.cpp, boot.h, ckernel.h)
MAILBOXES = 0x1FFB8
BOOT_READY = 0xB001CAFE
KERNEL_COMPLETE = 0xFF
START_TRISCS, UPDATE_START_ADDR_CACHE_AND_START = 1, 3
TRISC_START_BASE_WH = 0x16DFF0
#: cycles between two polls of the host
POLL_CYCLES = 64


class TestHost(Agent):
    """The Python harness's part of a tt-llk test run."""

    kind = "host"

    def __init__(self, name: str, tile: Any, starts: dict[str, int], *, mailboxes: tuple[int, int, int] = (
                     MAILBOXES, MAILBOXES + 4, MAILBOXES + 8), brisc_command: int = MAILBOXES + 12,
                 brisc_counter: int = MAILBOXES + 20, start_command: int | None = None,
                 brisc_ready: int = BOOT_READY, kernel_complete: int = KERNEL_COMPLETE,
                 cores: tuple[str, ...] = ("trisc0", "trisc1", "trisc2")) -> None:
        super().__init__(name)
        self.tile = tile
        self.starts = starts                 # TRISC name -> its ELF's entry (Wormhole's start slots)
        self.mailboxes = mailboxes
        self.brisc_command = brisc_command
        self.brisc_counter = brisc_counter
        self.start_command = start_command if start_command is not None else (
            UPDATE_START_ADDR_CACHE_AND_START if tile.chip == "wh" else START_TRISCS)
        self.brisc_ready = brisc_ready
        self.kernel_complete = kernel_complete
        self.cores = cores
        self.phase = "boot"
        tile.polls.add(tile.core.machine, name)

    def _word(self, address: int) -> int:
        return self.tile.core.l1.word(address, who="the test host")

    def run_slice(self, limit: int, cycle_limit: float = float("inf")) -> int:
        used = self._look()
        polls = self.tile.polls
        if polls.parked and turn_ends(self, used, cycle_limit):
            polls.recheck()   # what the host wrote (the start command) may wake RISCV B
        return used

    def _look(self) -> int:
        self.cycles += POLL_CYCLES
        self.instret += 1
        l1 = self.tile.core.l1
        polls = self.tile.polls
        if self.phase == "boot":
            ready = self._word(self.brisc_counter)
            if ready != self.brisc_ready:
                park(self, polls, ((self.brisc_counter, 4, ready),), "RISCV B to publish its boot-ready "
                     f"sentinel {self.brisc_ready:#x} at L1 {self.brisc_counter:#x}")
                return 1
            if self.tile.chip == "wh":
                for i, core in enumerate(("trisc0", "trisc1", "trisc2")):
                    l1.set_word(TRISC_START_BASE_WH + 4 * i, self.starts.get(core, 0), who="the test host")
            else:  # the harness's ELF loader points each TRISC's reset pc at its ELF's entry
                self._set_reset_pcs()
            # the command slot (counter & 1) = 0 of the first command
            l1.set_word(self.brisc_command, self.start_command, who="the test host")
            self.phase = "run"
            return 1
        missing = [(core, self.mailboxes[i]) for i, core in enumerate(("trisc0", "trisc1", "trisc2"))
                   if core in self.cores and self._word(self.mailboxes[i]) != self.kernel_complete]
        if missing:
            words = tuple((address, 4, self._word(address)) for _, address in missing)
            park(self, polls, words, f"{', '.join(c for c, _ in missing)} to report KERNEL_COMPLETE "
                                     f"({self.kernel_complete:#x}) in L1 mailbox")
            return 1
        busy = [t.name.upper() for t in self.tile.core.threads if not t.idle]
        if busy:   # a thread going idle changes the backend signal
            self.park(self.tile.core.signal, f"Tensix {', '.join(busy)} to finish")
            return 1
        for hart in self.tile.harts.values():   # (the Tensix threads are idle daemons)
            if hart.status != "halted":
                hart.halt(0)
        self.wait_reason = ""
        self.halt(0)
        return 1

    def _set_reset_pcs(self) -> None:
        """Blackhole: ``RISCV_DEBUG_REG_TRISC<i>_RESET_PC`` = the ELF's entry and the override
        on, as the host does over the NoC before starting the TRISCs (SoftReset.md)."""
        from tessera_tensix.tile import memmap

        control = self.tile.control
        base = memmap.RISCV_DEBUG_REGS_START_ADDR
        override = control.regs.get(memmap.TRISC_RESET_PC_OVERRIDE - base, 0)
        for i, core in enumerate(("trisc0", "trisc1", "trisc2")):
            if core in self.starts:
                control.regs[memmap.TRISC_RESET_PC[i] - base] = self.starts[core]
                override |= 1 << i
        control.regs[memmap.TRISC_RESET_PC_OVERRIDE - base] = override

    def state(self) -> dict[str, Any]:
        out = super().state()
        out["phase"] = self.phase
        return out
