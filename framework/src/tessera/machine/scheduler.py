"""The scheduler: which agent runs next, for how many steps, and how a run ends.

Round robin over the machine's agents in the order they were added, each runnable
agent getting a *quantum* of steps: the agent's own ``quantum``, else the machine's
(1 gives fine-grained interleaving); while a single agent can run, an
architecture's ``solo_quantum`` lengthens it, since there is nobody to interleave
with.  The scheduler's position — whose turn it is and how many steps are left of
that agent's quantum — is :class:`Scheduler` state, pickled with the machine, so a
run interrupted by a budget, snapshotted, restored in another process and continued
is step for step the same as an uninterrupted run.

A run ends, between two slices, when every non-daemon agent has halted, a budget
(steps, cycles, wall time) is used up, or Ctrl-C was pressed
(:data:`INTERRUPT_REQUESTED`); inside a slice, when a stop condition hits
(:class:`~tessera.control.StopRequest`) or an error is raised.  When no agent can
run and some non-daemon agent waits, the run stops with
:class:`~tessera.errors.Deadlock` naming every waiting agent and what it waits for.
"""

from __future__ import annotations

import heapq
import time
from collections.abc import Callable
from typing import Any

import attrs

from tessera.control import RunInterrupted, StopRequest
from tessera.engine.agent import HALTED, RUNNABLE, WAITING, Agent
from tessera.engine.cpu import CpuAgent
from tessera.errors import BudgetExceeded, Deadlock, PluginError, TesseraError
from tessera.machine.barrel import eligible, run_barrel

#: Set by the command line's SIGINT handler; the scheduler raises ``KeyboardInterrupt``
#: between slices while it is set.  Python may lose a ``KeyboardInterrupt`` that lands
#: inside a finaliser or weakref callback ("Exception ignored in ..."); an unlimited run
#: would then never stop, so the request is also kept here, where it cannot be lost.
INTERRUPT_REQUESTED = [False]
#: True while the command line runs a machine: its SIGINT handler then only sets
#: ``INTERRUPT_REQUESTED`` (the first time), and the scheduler stops cleanly between
#: slices with :class:`~tessera.control.RunInterrupted`.
INTERRUPT_DEFERRED = [False]

#: Steps between two calls of a run's ``progress`` callback.
PROGRESS_EVERY = 1 << 16
_INF = float("inf")


@attrs.define
class RunResult:
    """How a call to :meth:`Machine.run <tessera.machine.Machine.run>` ended.

    ``reason`` is ``halted`` (every non-daemon agent halted), ``breakpoint`` (a stop
    PC or symbol was reached), ``trap`` (``stop_on_trap``) or ``budget``; the
    ``tessera_run_finished`` hook also sees ``error`` when the run ends by raising and
    ``interrupted`` when Ctrl-C stopped it between slices (:class:`RunInterrupted`).
    """

    reason: str
    steps: int
    cycles: int
    seconds: float
    agent: str | None = None
    pc: int | None = None
    exit_code: int | None = None
    detail: str = ""

    def as_dict(self) -> dict[str, Any]:
        return attrs.asdict(self)


@attrs.define
class RunLimits:
    """One call of ``run``: its budgets, and where it started (what its result counts from).

    ``step_limit`` is ``-1`` when steps are unlimited; ``cycle_limit`` is the machine
    clock at which the cycle budget ends (infinite when there is none).
    """

    step_limit: int
    cycle_limit: float
    max_seconds: float | None
    start_steps: int
    t0: float

    @classmethod
    def starting(cls, machine: Any, *, max_steps: int | None = None, max_cycles: int | None = None,
                 max_seconds: float | None = None) -> RunLimits:
        """The limits of a run of ``machine`` starting now (this reads the machine clock)."""
        start_steps, t0 = machine.total_steps, time.perf_counter()
        cycle_limit = machine.clock + max_cycles if max_cycles is not None else _INF
        return cls(max_steps if max_steps is not None else -1, cycle_limit, max_seconds, start_steps, t0)

    def result(self, machine: Any, reason: str, **kw: Any) -> RunResult:
        """The run's result so far: steps since it started, the clock, the primary agent's exit code."""
        primary = next((a for a in machine.agents if not a.daemon), None)
        kw.setdefault("exit_code", primary.exit_code if primary else None)
        return RunResult(reason=reason, steps=machine.total_steps - self.start_steps, cycles=machine.clock,
                         seconds=time.perf_counter() - self.t0, **kw)


def run_finished(machine: Any, result: RunResult) -> None:
    """Tell the ``tessera_run_finished`` listeners how a run ended (every run, however it ends)."""
    if machine.host is not None:
        machine.host.call_each("tessera_run_finished", isolate=False, machine=machine, result=result)


class Scheduler:
    """The round-robin position of one machine: ``turn`` and ``left`` (see the module doc).

    Only the position is state; everything else a run needs is read from the machine
    it is given, so the scheduler pickles as two integers.
    """

    def __init__(self, turn: int = 0, left: int = 0) -> None:
        #: index into ``machine.agents`` of the agent whose turn it is
        self.turn = turn
        #: steps left of that agent's quantum (0: a new quantum starts at its next slice)
        self.left = left

    def current(self, machine: Any) -> Agent | None:
        """The agent whose turn it is (``None`` on a machine without agents)."""
        return machine.agents[self.turn] if machine.agents else None

    def current_name(self, machine: Any) -> str | None:
        agent = self.current(machine)
        return agent.name if agent is not None else None

    # ------------------------------------------------------------------ a whole run

    def run(self, machine: Any, limits: RunLimits, *, stop_on_trap: bool,
            progress: Callable[[int], None] | None, raise_on_budget: bool) -> RunResult:
        """Run ``machine`` until it halts, a budget ends or a stop condition hits (``Machine.run``).

        Every way out — a result, a stop, an error, Ctrl-C — reaches the
        ``tessera_run_finished`` listeners once with a result, and leaves the agents
        exact and resumable.
        """
        machine.stop_on_trap = stop_on_trap
        for cpu in machine.cpus:  # a breakpoint does not stop an agent where it resumes from
            cpu.resume_pc = cpu.pc
        try:
            if getattr(machine, "pauses", None):  # Machine.pause_at: cut the run, call, go on
                result = self._paused(machine, limits, progress)
            else:
                result = self._loop(machine, limits, progress)
        except StopRequest as stop:
            result = limits.result(machine, stop.reason, agent=self.current_name(machine), pc=stop.pc,
                                   detail=f"{stop.reason} at {stop.pc:#x}")
        except TesseraError as err:
            run_finished(machine, limits.result(machine, "error", agent=err.agent, pc=err.pc, detail=str(err)))
            raise
        except RunInterrupted as stop:  # between slices: the machine is exact and resumable
            current = self.current(machine)
            stop.result = limits.result(machine, "interrupted", agent=self.current_name(machine),
                                        pc=getattr(current, "pc", None), detail="interrupted (Ctrl-C)")
            run_finished(machine, stop.result)
            raise
        finally:
            for cpu in machine.cpus:
                cpu.resume_pc = None
            machine.stop_on_trap = False
        run_finished(machine, result)
        if result.reason == "budget" and raise_on_budget:
            raise BudgetExceeded(result.detail, result=result, agent=result.agent, pc=result.pc)
        return result

    def _paused(self, machine: Any, limits: RunLimits, progress: Callable[[int], None] | None) -> RunResult:
        """:meth:`_loop` cut at the machine's pauses (``Machine.pause_at``), each a step
        budget of its own, with the pause's callback called where it ends."""
        budget = limits.step_limit
        try:
            while True:
                fire_pauses(machine)
                cut = machine.pauses[0][0] - limits.start_steps if machine.pauses else -1
                pausing = cut >= 0 and (budget < 0 or cut <= budget)
                limits.step_limit = cut if pausing else budget
                result = self._loop(machine, limits, progress)
                if not (pausing and result.reason == "budget" and limits.start_steps + cut <= machine.total_steps):
                    return result
        finally:
            limits.step_limit = budget

    def _loop(self, machine: Any, limits: RunLimits, progress: Callable[[int], None] | None) -> RunResult:
        """Slices, turn by turn, until :meth:`_ended` says how the run ends.

        With a quantum of 1 this loop runs once per instruction, so what it does per
        slice is written out here (locals, no calls but the slice's own); only the
        end-of-run test is a method.
        """
        agents = machine.agents
        count = len(agents)
        cycle_limit = limits.cycle_limit
        step_limit = limits.step_limit
        quantum = machine.quantum
        solo = machine.arch.solo_quantum
        steps = machine.total_steps - limits.start_steps  # 0, unless a pause cut the run before
        next_report = steps + PROGRESS_EVERY
        barrel = eligible(machine, limits)
        version = -1  # the lists below are rebuilt only when an agent's status or daemon changed
        live: list[Agent] = []
        runnable: list[Agent] = []
        while True:
            if machine.scheduling_version != version or len(agents) != count:
                version = machine.scheduling_version
                count = len(agents)
                live = [a for a in agents if not a.daemon and a.status != HALTED]
                runnable = [a for a in agents if a.status == RUNNABLE]
            ended = self._ended(machine, limits, steps, live, runnable)
            if ended is not None:
                return ended
            if barrel and len(runnable) > 1 and self.left <= 0:
                before = steps
                steps, next_report = run_barrel(self, machine, limits, progress, steps, next_report,
                                                       PROGRESS_EVERY)
                version = -1
                if steps != before:
                    continue
                # no slot used (an agent parked at once): one ordinary slice, then look again;
                # with the agents' statuses as they are now (a slot that parked one may have
                # woken another): the solo quantum below depends on who can run
                live = [a for a in agents if not a.daemon and a.status != HALTED]
                runnable = [a for a in agents if a.status == RUNNABLE]
            agent = agents[self.turn]
            if agent.status != RUNNABLE or agent.cycles >= cycle_limit:  # its turn passes
                self.turn = (self.turn + 1) % count
                self.left = 0
                continue
            if self.left <= 0:  # a new quantum; longer while nobody else can run
                self.left = agent.quantum or quantum
                if solo and len(runnable) == 1:
                    self.left = max(self.left, solo)
            limit = self.left if step_limit < 0 else min(self.left, step_limit - steps)
            before = agent.instret + agent.traps
            try:
                n = agent.run_slice(limit, cycle_limit)
            except (StopRequest, TesseraError):  # mid-quantum: the quantum keeps what the slice used
                self.left -= agent.instret + agent.traps - before
                raise
            finally:  # exact even when the slice ends in a stop or an error
                machine.total_steps += agent.instret + agent.traps - before
            steps += n
            self.left -= n
            yielded, agent.yielded = agent.yielded, False
            if yielded or agent.status != RUNNABLE or self.left <= 0 or agent.cycles >= cycle_limit:
                self.turn = (self.turn + 1) % count  # its turn passes
                self.left = 0
            if progress is not None and steps >= next_report:
                progress(steps)
                next_report = steps + PROGRESS_EVERY

    def _ended(self, machine: Any, limits: RunLimits, steps: int, live: list[Agent],
               runnable: list[Agent]) -> RunResult | None:
        """How the run ends before the next slice, or ``None`` to go on.

        ``live`` are the non-daemon agents that have not halted, ``runnable`` the
        agents that can run.  In this order: every non-daemon agent halted; nobody
        can run (:class:`Deadlock`); the cycle budget, the step budget; Ctrl-C
        (:class:`RunInterrupted`); the wall-time budget.
        """
        agents = machine.agents
        if not live:
            return limits.result(machine, "halted", detail="every agent halted")
        if not runnable:
            # the agents that keep the run alive first; idle daemons (engines without work) after
            raise Deadlock({a.name: a.wait_reason for a in sorted(agents, key=lambda a: a.daemon)
                            if a.status == WAITING})
        if limits.cycle_limit != _INF and all(a.cycles >= limits.cycle_limit for a in runnable):
            return limits.result(machine, "budget", agent=self.current_name(machine),
                                 pc=getattr(agents[self.turn], "pc", None),
                                 detail=f"cycle budget exhausted after {steps} steps")
        if limits.step_limit >= 0 and steps >= limits.step_limit:
            agent = agents[self.turn]
            return limits.result(machine, "budget", agent=agent.name, pc=getattr(agent, "pc", None),
                                 detail=f"step budget of {limits.step_limit} exhausted")
        if INTERRUPT_REQUESTED[0]:
            INTERRUPT_REQUESTED[0] = False
            raise RunInterrupted
        if limits.max_seconds is not None and time.perf_counter() - limits.t0 > limits.max_seconds:
            return limits.result(machine, "budget", agent=self.current_name(machine),
                                 detail=f"wall-time budget of {limits.max_seconds}s exhausted")
        return None

    # ------------------------------------------------------------------ one step of one agent

    def step_agent(self, machine: Any, name: str) -> RunResult:
        """One step of the agent called ``name``, outside its turn (``Machine.step(agent)``).

        The scheduler's position does not move: this is a debugger's single step, not
        a scheduling decision.
        """
        target = machine.agent(name)
        machine.prepare()
        limits = RunLimits.starting(machine)
        if target.status == RUNNABLE:
            cpu = target if isinstance(target, CpuAgent) else None
            if cpu is not None:
                cpu.resume_pc = cpu.pc
            before = target.instret + target.traps
            try:
                target.run_slice(1)
            except StopRequest as stop:
                return limits.result(machine, stop.reason, agent=target.name, pc=stop.pc)
            finally:
                if cpu is not None:
                    cpu.resume_pc = None
                machine.total_steps += target.instret + target.traps - before
        return limits.result(machine, "budget", agent=target.name, pc=getattr(target, "pc", None),
                             detail="single step")


def fire_pauses(machine: Any) -> None:
    """Call the callbacks of the pauses the machine's step count has reached, in order."""
    pauses = machine.pauses
    while pauses and pauses[0][0] <= machine.total_steps:
        _steps, _order, callback, plugin = heapq.heappop(pauses)
        try:
            callback(machine)
        except (StopRequest, TesseraError):
            raise
        except Exception as exc:
            raise PluginError(f"pause callback raised {type(exc).__name__}: {exc}", plugin=plugin) from exc


__all__ = ["INTERRUPT_DEFERRED", "INTERRUPT_REQUESTED", "PROGRESS_EVERY", "RunLimits", "RunResult",
           "Scheduler", "fire_pauses", "run_finished"]
