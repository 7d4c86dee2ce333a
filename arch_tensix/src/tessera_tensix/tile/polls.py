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
* the core parks until a word it read changes only when its polling is provably a loop
  without progress: it comes back to a *loop head* (the target of a backward branch or
  jump: every loop has one) in the state of an earlier visit in this probe — the same pc
  and the same value in every register — having loaded at least one word in between,
  all its loads in between having read the words' present values (a word that reads
  otherwise than before makes the probe forget the visits so far).  The core is
  deterministic, so with memory unchanged it would go round that loop for ever: parking
  changes nothing it will do.  A loop that makes progress never repeats its state — a
  counter, a moving index, a pointer chase over changing addresses — so a finite loop
  that re-reads the same few words (at most ``MAX_WORDS``) is never parked, however long
  it runs;
* the wall clock is left out of that condition: the probe follows which registers hold
  a value computed from a wall-clock load (loaded from the clock or from an address
  computed from such a register, or the result of arithmetic on one; a constant, a link
  address or anything else written to a register clears it) and compares only the
  others, an earlier visit's clock registers having to be among this visit's (a probe
  that begins inside a delay sees some of them only from the next round on).  From the
  repeated state, the other registers go the same way as the round before until a
  branch, jump or load address depends on a clock register, so RISCV B's poll, whose
  every round reads the clock for its delay, still parks; the price is the choice
  documented in docs/tensix.md: with memory unchanged such a loop could end only through
  a decision on a clock value (a timeout), and it waits for the memory instead.  A loop
  round that loaded no word (a delay on the clock alone) is not a poll and never parks
  the core;
* a probe ends (the core runs on, probed less often) after ``PROBE_LENGTH``
  instructions without such a repeat, or ``DELAY_LENGTH`` while the core keeps reading
  the wall clock (RISCV B's poll sits between long delays); one that has seen no load
  at all after ``QUIET_LENGTH`` instructions ends at once (computing).

Parking is architecturally invisible: the core is where its last probed instruction
left it (the loop head) and continues from there once woken; a snapshot holds the
condition as plain data, and the probe's own state (its reads, loop heads, clock
registers) is plain data on the core.  The tile checks the parked conditions after every
slice of any of its agents (:meth:`Polls.recheck`: a few reads each), since only an
agent's slice can change memory.  The ``park_polls`` setting turns all of this off.
"""

from __future__ import annotations

from functools import cache
from typing import Any

from tessera.engine import RUNNABLE
from tessera.sync import SyncObject
from tessera_tensix.tile import memmap

#: instructions a core runs without waiting before it is probed (doubled after each probe
#: that finds work, up to ``MAX_PROBE_AFTER``; back to the start when it parks)
PROBE_AFTER = 256
MAX_PROBE_AFTER = 1 << 14
#: instructions a probe looks for a loop without progress; one that read the wall clock in
#: its last ``PROBE_LENGTH`` instructions (a delay, perhaps inside a poll) goes on to ``DELAY_LENGTH``
PROBE_LENGTH = 512
DELAY_LENGTH = 4096
#: a probe that has seen no load at all after this many instructions ends at once
QUIET_LENGTH = 64
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
    hart.probe_reads = {}      # (address, size) -> the value last read there
    hart.probe_clock = False   # has the probe read the wall clock?
    hart.probe_used = 0
    hart.unprobed = 0
    hart.probe_loads = 0       # loads of words (not the clock) so far
    hart.probe_clock_at = -1   # probe_used at the latest wall-clock read
    hart.probe_taint = 0       # bit i: x[i] holds a value computed from a wall-clock read
    #: loop head pc -> its visits' clock registers -> the other registers' values -> probe_loads
    #: at the first such visit
    hart.probe_heads = {}


def _end(hart: Any, *, busy: bool) -> None:
    hart.probe_reads = None
    hart.probe_heads = None
    hart.probe_after = min(2 * hart.probe_after, MAX_PROBE_AFTER) if busy else PROBE_AFTER


def _taint(ins: Any, mnemonic: str, taint: int, clock: bool) -> int:
    """The clock registers (a bit mask) after ``ins`` runs: its destination holds a value
    computed from the wall clock if it loads the clock or any of its sources is such a
    register (a link address or a constant is not)."""
    rd = getattr(ins, "rd", None)
    if not rd:
        return taint
    if clock:
        derived = True
    elif mnemonic in ("jal", "jalr", "lui", "auipc"):
        derived = False
    else:
        rs1, rs2 = getattr(ins, "rs1", None), getattr(ins, "rs2", None)
        derived = bool((rs1 is not None and taint >> rs1 & 1) or (rs2 is not None and taint >> rs2 & 1))
    return taint | (1 << rd) if derived else taint & ~(1 << rd)


def probe(hart: Any, room: int, cycle_limit: float) -> int:
    """Go on probing ``hart`` for at most ``room`` steps; the steps used.  The probe ends when
    the core does something (it runs on, probed less often), when it has looked long enough
    without finding a loop that makes no progress (the same), or when it parks."""
    from tessera_riscv import RiscvHart

    space = hart.space
    filler = hart.machine.decode_filler(hart.arch, space)
    cache = filler.cache
    reads: dict[tuple[int, int], int] = hart.probe_reads
    heads = _heads(hart)
    x = hart.x
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
        address = (x[ins.rs1] + ins.imm) & MASK32 if size is not None else -1
        clock = address in WALL_CLOCK
        if size is not None and not clock and (
                (address & (size - 1)) or not _pure(space.region_at(address), address, size)):
            _end(hart, busy=True)
            return used
        if size is None and mnemonic not in PURE:
            _end(hart, busy=True)
            return used
        if mnemonic == "jal" and ins.rd == 0 and ins.target == pc:
            _end(hart, busy=False)
            _park(hart, (), forever=True, reason=f"nothing: it loops forever at {pc:#x} (j .)")
            return used
        taint = _taint(ins, mnemonic, hart.probe_taint, clock) if hart.probe_taint or clock else 0
        traps = hart.traps
        k = RiscvHart.run_slice(hart, 1, cycle_limit)   # one step, without probing again
        if k == 0 and hart.status == RUNNABLE and hart.traps == traps:   # a slice break (an
            k = RiscvHart.run_slice(hart, 1, cycle_limit)              # exact clock read): again
        used += k
        hart.probe_used += k
        if k == 0 or hart.traps != traps:
            _end(hart, busy=True)
            return used
        hart.probe_taint = taint
        if clock:
            hart.probe_clock = True
            hart.probe_clock_at = hart.probe_used
        elif size is not None and not _read(hart, reads, heads, address, size):
            _end(hart, busy=True)   # too many words: not a poll
            return used
        if hart.pc <= pc and _repeats(hart, heads, taint):
            _park_on(hart, reads)
            return used
        if hart.probe_used >= QUIET_LENGTH and not reads and not hart.probe_clock:
            _end(hart, busy=True)   # no load at all: computing, which a poll never is
            return used
        if hart.probe_used >= PROBE_LENGTH:
            if hart.probe_used < DELAY_LENGTH and hart.probe_used - hart.probe_clock_at <= PROBE_LENGTH:
                continue   # still reading the clock: a delay, perhaps inside a poll
            _end(hart, busy=True)   # no loop without progress: computing (perhaps re-reading words)
            return used
    return used


def _heads(hart: Any) -> dict[int, dict[int, dict[Any, int]]]:
    """The probe's loop heads (for a probe begun before they were kept: none yet)."""
    heads = getattr(hart, "probe_heads", None)
    if heads is None:
        hart.probe_loads, hart.probe_clock_at, hart.probe_taint = 0, -1, 0
        heads = hart.probe_heads = {}
    return heads


def _read(hart: Any, reads: dict[tuple[int, int], int], heads: dict[int, dict[int, dict[Any, int]]],
          address: int, size: int) -> bool:
    """Note the probed core's load of a word; false when it has read more than ``MAX_WORDS``.
    A word that reads otherwise than before forgets the loop heads seen: they saw other memory."""
    value = peek(hart.space, address, size)
    if reads.get((address, size), value) != value:
        heads.clear()
    reads[(address, size)] = value
    hart.probe_loads += 1
    return len(reads) <= MAX_WORDS


def _repeats(hart: Any, heads: dict[int, dict[int, dict[Any, int]]], taint: int) -> bool:
    """Is the probed core, at a loop head, in the state of an earlier visit, with a load of a
    word in between?  States are compared outside the clock registers (``taint``); an earlier
    visit whose clock registers were fewer counts too, compared outside this one's (a probe
    that begins inside a delay sees some clock registers only from the next round on)."""
    x, loads = hart.x, hart.probe_loads
    masks = heads.setdefault(hart.pc, {})   # clock registers -> the other registers' values -> loads
    if taint not in masks:
        table = masks[taint] = {}
        for mask, seen in list(masks.items()):
            if mask != taint and not mask & ~taint:   # fewer clock registers: compare outside ours
                keep = [j for j, i in enumerate(_outside(mask)) if not taint >> i & 1]
                for values, first in seen.items():
                    key = tuple(values[j] for j in keep)
                    table[key] = min(first, table.get(key, first))
    repeated = False
    for mask, table in masks.items():
        if not taint & ~mask:   # record this visit for every visit to come with as many clock registers
            values = tuple(x) if not mask else tuple(x[i] for i in _outside(mask))
            first = table.setdefault(values, loads)
            repeated |= mask == taint and first < loads
    return repeated


@cache
def _outside(mask: int) -> tuple[int, ...]:
    """The registers a loop-head state compares: those not in the clock registers ``mask``."""
    return tuple(i for i in range(32) if not mask >> i & 1)


def _park_on(hart: Any, reads: dict[tuple[int, int], int]) -> None:
    """Park ``hart``, at a loop head it came back to unchanged, until a word it read changes."""
    words = tuple((a, s, v) for (a, s), v in sorted(reads.items()))
    shown = ", ".join(f"{a:#x} (= {v:#x})" for a, _, v in words[:4])
    more = f" and {len(words) - 4} more" if len(words) > 4 else ""
    also = " and the wall clock" if hart.probe_clock else ""
    _end(hart, busy=False)
    _park(hart, words, forever=False,
          reason=f"memory at {shown}{more} to change: it polls them{also} at pc {hart.pc:#x} "
                 f"without storing anything")


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
