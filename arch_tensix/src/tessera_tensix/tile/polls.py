"""Cores that poll park: a baby RISC-V core spinning on memory waits instead of running.

The vendor's firmware waits by polling: RISCV B loops on its L1 command slot between
``ckernel::wait`` delays for as long as the run lasts, a TRISC that has finished its
kernel ends in ``j .``, and the test host polls the mailboxes.  Executed, such loops
cost as much as real work (they would slow every other core down) and they hide
deadlocks: while anything spins, the scheduler never sees that nobody can progress.

So a core that stops doing anything observable is parked on its :class:`PollWait`
until what it reads changes.  Which cores are polling is found out, not declared:

* every ``PROBE_AFTER`` instructions without a wait, the core's next instructions are
  *probed*: stepped one by one while their kinds are checked before each runs;
* the probe ends, and the core runs on normally, at the first instruction that could
  change anything outside the core — a store, a ``.ttinsn`` push, a CSR access, a
  system call, an atomic — or at a load from anything but RAM (L1, the core's local
  RAM) and the wall clock (device reads may have side effects, e.g. a mailbox pop);
* a jump to itself (``j .``) parks the core for good: nothing it reads can change;
* after ``PROBE_LENGTH`` instructions that only computed and loaded from at most
  ``MAX_WORDS`` RAM words (and perhaps the wall clock), the core parks until one of
  those words changes.  The wall clock is left out of that condition, so a poll whose
  only exit is a timeout waits for the memory instead (documented in docs/tensix.md);
  a loop that reads nothing but the clock (a delay) is never parked.

Parking is architecturally invisible: the core is where its last probed instruction
left it and continues from there once woken; a snapshot holds the condition as plain
data.  The tile checks the parked conditions after every slice of any of its agents
(:meth:`Polls.recheck`: a few reads each), since only an agent's slice can change
memory.  The ``park_polls`` setting turns all of this off.
"""

from __future__ import annotations

from typing import Any

from tessera.engine import RUNNABLE
from tessera.sync import SyncObject
from tessera_tensix.tile import memmap

#: instructions a core runs without waiting before it is probed (doubled after each probe
#: that finds work, up to ``MAX_PROBE_AFTER``; back to the start when it parks)
PROBE_AFTER = 2048
MAX_PROBE_AFTER = 1 << 18
#: instructions of computing and polling that make a probe park the core
PROBE_LENGTH = 512
#: distinct RAM words a poll may read
MAX_WORDS = 16
LOADS = {"lb": 1, "lbu": 1, "lh": 2, "lhu": 2, "lw": 4}
#: what a polling core may execute besides loads: it changes nothing but its registers
PURE = frozenset({
    "lui", "auipc", "jal", "jalr", "beq", "bne", "blt", "bge", "bltu", "bgeu",
    "addi", "slti", "sltiu", "xori", "ori", "andi", "slli", "srli", "srai",
    "add", "sub", "sll", "slt", "sltu", "xor", "srl", "sra", "or", "and",
    "mul", "mulh", "mulhsu", "mulhu", "div", "divu", "rem", "remu", "fence", "fence.i", "nop"})
WALL_CLOCK = frozenset(memmap.RISCV_DEBUG_REGS_START_ADDR + o for o in (0x1F0, 0x1F4, 0x1F8))
MASK32 = 0xFFFF_FFFF


class PollWait(SyncObject):
    """What one polling core waits on: a change of the RAM words it read (``words``)."""

    kind = "tensix-poll"

    def __init__(self, name: str) -> None:
        super().__init__(name)
        #: ``(address, size, value)`` of every word the poll read, as it read them
        self.words: tuple[tuple[int, int, int], ...] = ()
        self.forever = False

    def changed(self, space: Any) -> bool:
        return any(space.read(a, s) != v for a, s, v in self.words)

    def state(self) -> dict[str, Any]:
        return {"kind": self.kind, "forever": self.forever,
                "words": [f"{a:#x}={v:#x}" for a, _, v in self.words]}


class Polls:
    """The tile's parked pollers, and the check that wakes them."""

    def __init__(self, space: Any) -> None:
        self.space = space         # the tile's shared space (for pollers without one: the host)
        self.waits: dict[str, PollWait] = {}
        self.parked = 0            # waits with a waiter (kept exact by park/wake below)

    def add(self, machine: Any, core: str) -> PollWait:
        wait = PollWait(f"{core}.poll")
        machine.add_sync(wait)
        self.waits[core] = wait
        return wait

    def recheck(self) -> None:
        """Wake every parked core whose words changed (after any agent's slice)."""
        for wait in self.waits.values():
            for agent in list(wait.waiters):
                if agent.status != RUNNABLE and not wait.forever and wait.changed(
                        getattr(agent, "space", self.space)):
                    wait.wake_waiters()
                    break
        self.parked = sum(1 for w in self.waits.values() if w.waiters)


def probe(hart: Any, room: int, cycle_limit: float) -> int:
    """Step ``hart`` while it only computes and polls; park it if it polls.  Steps used."""
    filler = hart._filler
    cache = filler.cache
    space = hart.space
    reads: dict[tuple[int, int], int] = {}
    clock = False
    used = 0
    while used < room:
        pc = hart.pc
        try:
            ins = cache.get(pc) or filler.fill(pc)
        except Exception:  # noqa: BLE001 - a fetch fault: let the ordinary loop raise it
            return used
        mnemonic = ins.mnemonic
        size = LOADS.get(mnemonic)
        if size is not None:
            address = (hart.x[ins.rs1] + ins.imm) & MASK32
            if address in WALL_CLOCK:
                clock = True
            elif (address & (size - 1)) or space.region_at(address).kind != "ram":
                return used
        elif mnemonic not in PURE:
            return used
        elif mnemonic == "jal" and ins.rd == 0 and ins.target == pc:
            _park(hart, (), forever=True, reason=f"nothing: it loops forever at {pc:#x} (j .)")
            return used
        k, trapped = hart._step_loop(1, cycle_limit)
        used += k
        if k == 0 or trapped or hart.status != RUNNABLE:
            return used
        if size is not None and address not in WALL_CLOCK:
            reads[(address, size)] = space.read(address, size)
            if len(reads) > MAX_WORDS:
                return used
        if used >= PROBE_LENGTH:
            if not reads:   # computing, or a delay on the wall clock: it ends by itself
                return used
            words = tuple((a, s, v) for (a, s), v in sorted(reads.items()))
            shown = ", ".join(f"{a:#x} (= {v:#x})" for a, _, v in words[:4])
            more = f" and {len(words) - 4} more" if len(words) > 4 else ""
            also = " and the wall clock" if clock else ""
            _park(hart, words, forever=False,
                  reason=f"L1/local RAM at {shown}{more} to change: it polls them{also} at pc {hart.pc:#x} "
                         f"without storing anything")
            return used
    return used


def _park(hart: Any, words: tuple[tuple[int, int, int], ...], *, forever: bool, reason: str) -> None:
    park(hart, hart.tile.polls, words, reason, forever=forever)


def park(agent: Any, polls: Polls, words: tuple[tuple[int, int, int], ...], reason: str, *,
         forever: bool = False) -> None:
    """Park ``agent`` on its poll wait until one of ``words`` (address, size, value) changes."""
    wait = polls.waits[agent.name]
    wait.words = words
    wait.forever = forever
    agent.park(wait, reason)
    polls.parked += 1
