"""Barrel runs: per-instruction round robin at the speed of translated blocks.

Architectures such as rfPhoenix interleave their hardware threads one instruction
at a time (``quantum=1``).  Run literally, every instruction is a scheduler slice of
its own, about twenty times slower than one thread running in translated blocks.
A barrel run gives the same result — step for step — much faster.

**Slots and credit.** With quantum 1, the round robin gives each runnable agent one
*slot* per turn.  When an agent's turn comes and the block at its PC is *private*
(it touches only that agent's register files: :mod:`tessera.engine.private`), the
agent runs the whole block — a looping block, many iterations — at once, uses this
slot for the first instruction and keeps the others as *credit*: at each of its
following turns it uses one credit instead of running anything.  Every other
instruction runs exactly at its turn, as before.

**Why that is exact.** A private instruction reads and writes nothing another agent
can see or change, so the only thing that matters is that every other instruction
— memory accesses, synchronisation, traps, anything an observer sees — runs in the
order of the literal round robin, and it does: those run only at their own turns,
when the agent has no credit left.  Step counts and budgets are counted in slots, so
they are the literal ones too.  What is not invisible is undone:

* *code written* while some agent has credit (``DecodeCache.generation`` moved): the
  instructions that agent ran ahead might be ones the literal run would have run
  from the new code;
* an agent with credit that stops being runnable (another agent halted it);
* anything that reads agents' state in between: the machine clock (the agents'
  cycle counts), ``machine.state()``, and :meth:`Machine.disturb
  <tessera.machine.Machine.disturb>`, which an architecture calls when one agent
  changes another's state from outside its instructions (posting an interrupt);
* the end of the run — a budget, Ctrl-C, the wall-time limit.

Undoing is :meth:`RunAhead.settle`: each agent with credit gets back the register
files it had before it started running ahead (blocks running ahead write nothing
else), then runs again exactly the instructions whose slots were used — the same
block functions, so the same code even when memory has changed since — and is left
exactly where the literal round robin has it.

An agent runs ahead only while :meth:`CpuAgent.boundary_quiet
<tessera.engine.cpu.CpuAgent.boundary_quiet>` says nothing happens at its
instruction boundaries (no interrupt to take, no debug event).  Barrel runs are used
on the fast engine when every agent's quantum is 1 and there is no cycle budget;
otherwise the scheduler runs slices as usual.
"""

from __future__ import annotations

import time
from typing import Any

from tessera.engine.agent import HALTED, RUNNABLE
from tessera.engine.blocks import EXIT_BITS, EXIT_MASK
from tessera.engine.cpu import CpuAgent
from tessera.engine.decodecache import DecodeCache

__all__ = ["AHEAD_CAP", "BarrelRun", "RunAhead", "eligible", "run_barrel"]

#: most instructions one agent runs ahead in one go (a looping block's iterations)
AHEAD_CAP = 1 << 15
_INF = float("inf")


def eligible(machine: Any, limits: Any) -> bool:
    """May this run of ``machine`` use barrel runs (see the module doc)?"""
    if machine.engine != "fast" or limits.cycle_limit != _INF or len(machine.agents) < 2:
        return False
    return all((a.quantum or machine.quantum) == 1 for a in machine.agents)


class RunAhead:
    """The agents of one barrel run that ran ahead of their turns, and how to undo it.

    Per agent index: ``credit`` (instructions run but whose slots are still to come),
    ``saved`` (its register files, PC and counters before it started running ahead),
    ``log`` (the ``(block, iterations, instructions)`` calls since) and ``executed``
    (their total).  ``outstanding`` counts agents with credit.
    """

    def __init__(self, agents: list[Any]) -> None:
        self.agents = agents
        n = len(agents)
        self.credit = [0] * n
        self.saved: list[Any] = [None] * n
        self.log: list[list[tuple[Any, int, int]]] = [[] for _ in range(n)]
        self.executed = [0] * n
        self.outstanding = 0
        #: block calls run ahead, and the instructions they ran
        self.calls = 0
        self.instructions = 0
        #: agents brought back by :meth:`settle` with instructions still to come
        self.undone = 0

    def ahead(self, i: int, agent: Any, block: Any, cap: int) -> int:
        """Run private ``block`` for agent ``i`` (at its turn, without credit); return the
        instructions it ran, of which the caller uses one slot now; 0 if it raised
        (nothing of it kept: the caller runs the slot exactly)."""
        if self.saved[i] is None:
            self.saved[i] = ({name: list(values) for name, values in agent.regs.items()},
                             agent.pc, agent.cycles, agent.instret)
        budget = max(1, cap // block.n) if block.loop else 0
        try:
            n = _call(block, agent, budget)
        except BaseException:
            self._undo(i)  # it had no credit: back to the state saved just now
            self._forget(i)
            raise
        self.calls += 1
        self.instructions += n
        agent.at_entry = True
        self.log[i].append((block, budget, n))
        self.executed[i] += n
        if n > 1:  # it had no credit (its turn came): now it has
            self.outstanding += 1
            self.credit[i] = n - 1
        else:
            self._forget(i)
        return n

    def use(self, i: int, k: int) -> None:
        """Agent ``i`` used ``k`` of its credits (its slots came)."""
        left = self.credit[i] - k
        self.credit[i] = left
        if left == 0:
            self.outstanding -= 1
            self._forget(i)

    def _forget(self, i: int) -> None:
        self.saved[i] = None
        self.log[i].clear()
        self.executed[i] = 0

    def settle(self) -> None:
        """Bring every agent with credit back to exactly where its used slots leave it."""
        if not self.outstanding:
            return
        for i, credit in enumerate(self.credit):
            if credit:
                self.undone += 1
                self._undo(i)
                self.credit[i] = 0
                self._forget(i)
        self.outstanding = 0

    def _undo(self, i: int) -> None:
        """Restore agent ``i`` to its saved state, then run again its used instructions."""
        saved = self.saved[i]
        if saved is None:
            return
        agent = self.agents[i]
        regs, agent.pc, agent.cycles, agent.instret = saved
        for name, values in regs.items():
            agent.regs[name][:] = values
        remaining = self.executed[i] - self.credit[i]
        for block, budget, n in self.log[i]:
            if remaining <= 0:
                break
            if n <= remaining:  # the same call again: the same instructions, to the same end
                _call(block, agent, budget)
                remaining -= n
                continue
            whole, rest = divmod(remaining, block.n)  # every pass but the last was whole
            if whole:
                _call(block, agent, whole)
            if rest:  # the first `rest` instructions of one pass, none of them leaving it
                for ins in block.ins[:rest]:
                    ins.run(agent, ins)
                agent.pc = block.ins[rest].address
                agent.cycles += block.prefix[rest]
                agent.instret += rest
            remaining = 0


def _call(block: Any, agent: Any, budget: int) -> int:
    """Call ``block`` for ``agent`` (a looping block: at most ``budget`` passes), move the
    agent past what it ran, as the run loop does, and return how many instructions that was."""
    if block.loop:
        pc, it = block.fn(agent, budget)
        if pc < 0:  # a side exit in pass `it` (tessera.engine.blocks.EXIT_BITS)
            pc, j = -pc >> EXIT_BITS, -pc & EXIT_MASK
            it -= 1
        else:
            j = 0
        n = block.n * it + j
        cycles = block.cycles * it + block.prefix[j]
    else:
        pc = block.fn(agent)
        if pc < 0:
            pc, j = -pc >> EXIT_BITS, -pc & EXIT_MASK
            n, cycles = j, block.prefix[j]
        else:
            n, cycles = block.n, block.cycles
    agent.pc = pc
    agent.cycles += cycles
    agent.instret += n
    return n


def run_barrel(sched: Any, machine: Any, limits: Any, progress: Any, steps: int,
               next_report: int, every: int) -> tuple[int, int]:
    """Barrel slots until the run must leave them: returns ``(steps, next_report)``.

    Returns to the scheduler's ordinary loop — which then decides how the run ends or
    goes on — when fewer than two agents can run, a budget or Ctrl-C is due, or every
    agent left alive is a daemon; always with no agent ahead of its turn.
    """
    run = BarrelRun(sched, machine, limits, steps)
    machine.run_ahead = run.ahead
    try:
        while run.next_slot():
            if progress is not None and run.steps >= next_report:
                progress(run.steps)
                next_report = run.steps + every
        return run.steps, next_report
    finally:
        run.ahead.settle()
        machine.run_ahead = None
        stats = machine.barrel_stats
        stats["ahead_calls"] += run.ahead.calls
        stats["ahead_instructions"] += run.ahead.instructions
        stats["ahead_undone"] += run.ahead.undone


class BarrelRun:
    """The slots of one barrel run: whose turn, and what that turn does (module doc)."""

    def __init__(self, sched: Any, machine: Any, limits: Any, steps: int) -> None:
        self.sched = sched
        self.machine = machine
        self.limits = limits
        self.agents = machine.agents
        self.count = len(self.agents)
        self.ahead = RunAhead(self.agents)
        self.steps = steps
        self.generation = DecodeCache.generation
        self.version = -1
        self.runnable: list[int] = []

    def next_slot(self) -> bool:
        """Run the next slot (or whole rounds of credit); ``False``: leave the barrel run."""
        from tessera.machine.scheduler import INTERRUPT_REQUESTED

        machine, limits = self.machine, self.limits
        if machine.scheduling_version != self.version and not self._rescan():
            return False
        if (0 <= limits.step_limit <= self.steps) or INTERRUPT_REQUESTED[0] or (
                limits.max_seconds is not None and time.perf_counter() - limits.t0 > limits.max_seconds):
            return False
        sched = self.sched
        turn = sched.turn
        agent = self.agents[turn]
        if agent.status != RUNNABLE:
            sched.turn = (turn + 1) % self.count
        elif self.ahead.credit[turn]:
            self._use_credit(turn)
        elif not self._run_ahead(turn, agent):
            self._exact(turn, agent)
        return True

    def _rescan(self) -> bool:
        """An agent's status or daemon changed: the runnable agents again; ``False`` to leave."""
        agents, credit = self.agents, self.ahead.credit
        self.version = self.machine.scheduling_version
        self.runnable = [i for i, a in enumerate(agents) if a.status == RUNNABLE]
        if self.ahead.outstanding and any(credit[i] and agents[i].status != RUNNABLE
                                          for i in range(self.count)):
            self.ahead.settle()  # another agent stopped one that ran ahead
        return len(self.runnable) >= 2 and any(not a.daemon and a.status != HALTED for a in agents)

    def _use_credit(self, turn: int) -> None:
        """The turn of an agent with credit: whole rounds at once when everyone has some."""
        credit, runnable, sched = self.ahead.credit, self.runnable, self.sched
        r = len(runnable)
        m = min(credit[i] for i in runnable)
        if m and self.limits.step_limit >= 0:
            m = min(m, (self.limits.step_limit - self.steps) // r)
        if m:  # m whole rounds: every runnable agent uses m credits
            for i in runnable:
                self.ahead.use(i, m)
            used = m * r
            # the last slot was the runnable agent before this one: the turn is just after
            # it (agents that cannot run are skipped only when the turn comes to them)
            last = max((i for i in runnable if i < turn), default=runnable[-1])
            sched.turn = (last + 1) % self.count
        else:
            self.ahead.use(turn, 1)
            used = 1
            sched.turn = (turn + 1) % self.count
        self.steps += used
        self.machine.total_steps += used

    def _run_ahead(self, turn: int, agent: Any) -> bool:
        """Run the private block at the agent's PC ahead of its turns, if there is one."""
        if not (isinstance(agent, CpuAgent) and agent.boundary_quiet()):
            return False
        b = agent._filler.cache.blocks.get(agent.pc)
        if b is None or not b.private:
            return False
        cap = AHEAD_CAP
        if self.limits.step_limit >= 0:
            cap = min(cap, (self.limits.step_limit - self.steps - 1) // len(self.runnable) + 1)
        if b.n > cap:
            return False
        try:
            n = self.ahead.ahead(turn, agent, b, cap)
        except Exception:  # noqa: BLE001 - undone; the exact slot runs it again and raises it there
            return False
        self.steps += 1
        self.machine.total_steps += 1
        self.sched.turn = (turn + 1) % self.count
        return n > 0

    def _exact(self, turn: int, agent: Any) -> None:
        """The literal scheduler's slice of one step (see ``Scheduler._loop``)."""
        sched, machine = self.sched, self.machine
        sched.left = 1
        before = agent.instret + agent.traps
        try:
            k = agent.run_slice(1, _INF)
        except BaseException:
            sched.left -= agent.instret + agent.traps - before
            raise
        finally:
            machine.total_steps += agent.instret + agent.traps - before
        self.steps += k
        sched.left -= k
        yielded, agent.yielded = agent.yielded, False
        if yielded or agent.status != RUNNABLE or sched.left <= 0:
            sched.turn = (turn + 1) % self.count
            sched.left = 0
        if DecodeCache.generation != self.generation:
            self.generation = DecodeCache.generation
            self.ahead.settle()  # code was written: nobody keeps instructions run ahead of it
