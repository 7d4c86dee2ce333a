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
  RAM), the wall clock and the device loads that have no side effects (a device's
  ``pure_read``: the Tensix semaphores, a mailbox's status; a mailbox load pops);
* a jump to itself (``j .``) parks the core for good: nothing it reads can change;
* after ``PROBE_LENGTH`` instructions that only computed and loaded from at most
  ``MAX_WORDS`` such words (and perhaps the wall clock), the core parks until one of
  those words changes (a probe that has seen only clock reads looks on up to
  ``DELAY_LENGTH``: RISCV B's poll sits between long delays).  The wall clock is left out of that condition, so a poll whose
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
PROBE_AFTER = 256
MAX_PROBE_AFTER = 1 << 14
#: instructions of computing and polling that make a probe park the core; a probe that has
#: seen only wall-clock reads so far (a delay, perhaps inside a poll) goes on to ``DELAY_LENGTH``
PROBE_LENGTH = 512
#: a probe that has seen no load at all after this many instructions ends at once
QUIET_LENGTH = 64
DELAY_LENGTH = 4096
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
        return any(peek(space, a, s) != v for a, s, v in self.words)

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


def start(hart: Any) -> None:
    """Begin probing ``hart`` (its probe state is plain data on it: a snapshot keeps it, and a
    run cut by a budget in the middle of a probe goes on with the same probe)."""
    hart.probe_reads = {}
    hart.probe_clock = False
    hart.probe_used = 0
    hart.unprobed = 0


def _end(hart: Any, *, busy: bool) -> None:
    hart.probe_reads = None
    hart.probe_after = min(2 * hart.probe_after, MAX_PROBE_AFTER) if busy else PROBE_AFTER


def probe(hart: Any, room: int, cycle_limit: float) -> int:
    """Go on probing ``hart`` for at most ``room`` steps; the steps used.  The probe ends when
    the core does something (it runs on, probed less often) or when it parks."""
    from tessera_riscv import RiscvHart

    space = hart.space
    filler = hart.machine.decode_filler(hart.arch, space)
    cache = filler.cache
    reads: dict[tuple[int, int], int] = hart.probe_reads
    used = 0
    while used < room and hart.status == RUNNABLE and not hart.yielded:
        pc = hart.pc
        try:
            ins = cache.get(pc) or filler.fill(pc)
        except Exception:  # noqa: BLE001 - a fetch fault: let the ordinary loop raise it
            _end(hart, busy=True)
            return used
        mnemonic = ins.mnemonic
        size = LOADS.get(mnemonic)
        if size is not None:
            address = (hart.x[ins.rs1] + ins.imm) & MASK32
            if address in WALL_CLOCK:
                hart.probe_clock = True
            elif (address & (size - 1)) or not _pure(space.region_at(address), address, size):
                _end(hart, busy=True)
                return used
        elif mnemonic not in PURE:
            _end(hart, busy=True)
            return used
        elif mnemonic == "jal" and ins.rd == 0 and ins.target == pc:
            _end(hart, busy=False)
            _park(hart, (), forever=True, reason=f"nothing: it loops forever at {pc:#x} (j .)")
            return used
        traps = hart.traps
        k = RiscvHart.run_slice(hart, 1, cycle_limit)   # one step, without probing again
        if k == 0 and hart.status == RUNNABLE and hart.traps == traps:   # a slice break (an
            k = RiscvHart.run_slice(hart, 1, cycle_limit)              # exact clock read): again
        used += k
        hart.probe_used += k
        if k == 0 or hart.traps != traps:
            _end(hart, busy=True)
            return used
        if size is not None and address not in WALL_CLOCK:
            reads[(address, size)] = peek(space, address, size)
            if len(reads) > MAX_WORDS:
                _end(hart, busy=True)
                return used
        if hart.probe_used >= QUIET_LENGTH and not reads and not hart.probe_clock:
            _end(hart, busy=True)   # no load at all: computing, which a poll never is
            return used
        if hart.probe_used >= PROBE_LENGTH:
            if not reads:
                if hart.probe_clock and hart.probe_used < DELAY_LENGTH:   # a delay: inside a poll?
                    continue
                _end(hart, busy=True)   # computing, or a delay on the wall clock alone: it ends
                return used
            words = tuple((a, s, v) for (a, s), v in sorted(reads.items()))
            shown = ", ".join(f"{a:#x} (= {v:#x})" for a, _, v in words[:4])
            more = f" and {len(words) - 4} more" if len(words) > 4 else ""
            also = " and the wall clock" if hart.probe_clock else ""
            _end(hart, busy=False)
            _park(hart, words, forever=False,
                  reason=f"memory at {shown}{more} to change: it polls them{also} at pc {hart.pc:#x} "
                         f"without storing anything")
            return used
    return used


def turn_ends(agent: Any, used: int, cycle_limit: float) -> bool:
    """Does the slice that used ``used`` steps end ``agent``'s turn?  The tile rechecks its
    parked polls then: at the same points whether a run was cut by a budget or not."""
    if agent.status != RUNNABLE or agent.yielded or agent.cycles >= cycle_limit:
        return True
    machine = agent.machine
    return machine is None or used >= machine.turn_left


def _device(region: Any) -> Any:
    return getattr(region, "device", None) or getattr(getattr(region, "inner", None), "device", None)


def _pure(region: Any, address: int, size: int) -> bool:
    """May a poll read ``address`` again and again without changing anything? RAM, and the
    loads a device says are free of side effects (its ``pure_read(offset, size)``)."""
    if region is None:
        return False
    if region.kind == "ram":
        return True
    pure = getattr(_device(region), "pure_read", None)
    return bool(pure is not None and pure(address - region.start, size))


def peek(space: Any, address: int, size: int) -> int:
    """The value a poll's load of ``address`` reads now, without counting as an access (no
    memory watch sees it: the tile looks, not a core)."""
    region = space.region_at(address)
    if region.kind == "ram":
        return int.from_bytes(space.read_bytes(address, size), "little")
    return int(_device(region).read(address - region.start, size))


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
