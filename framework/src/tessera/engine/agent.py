"""Agents: the things the scheduler runs (harts, hardware threads, asynchronous engines).

An agent is runnable, waiting (parked on a sync object) or halted.  The scheduler
gives each runnable agent a slice of at most ``limit`` steps; the agent returns how
many steps it used.  A *daemon* agent (an engine waiting for work) does not keep a
machine alive: a run is finished when every non-daemon agent has halted, and
deadlocked when no agent can run while some non-daemon agent waits.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from tessera.control import Halt, WaitFor
from tessera.errors import TesseraError

RUNNABLE, WAITING, HALTED = "runnable", "waiting", "halted"


class _Scheduling:
    """An agent attribute the scheduler's bookkeeping depends on (``status``, ``daemon``).

    Storing it bumps the machine's ``scheduling_version``, so the scheduler rebuilds
    its lists of live and runnable agents only when one of them changed, not before
    every slice; and a barrel run (:mod:`tessera.machine.barrel`) sees at once that
    an agent halted, parked or woke.  It defines no ``__get__``: reading the
    attribute is a plain instance-dictionary read, as fast as before.
    """

    def __set_name__(self, owner: type, name: str) -> None:
        self.name = name

    def __set__(self, obj: Any, value: Any) -> None:
        obj.__dict__[self.name] = value
        machine = obj.__dict__.get("machine")
        if machine is not None:
            machine.scheduling_version += 1


class Agent:
    """Base class for everything the scheduler runs."""

    kind = "agent"
    if TYPE_CHECKING:  # stored through the descriptor, read as plain attributes
        status: str
        daemon: bool
    else:
        status = _Scheduling()
        daemon = _Scheduling()

    def __init__(self, name: str, *, daemon: bool = False, quantum: int | None = None) -> None:
        if not name or not name.replace("_", "").replace("-", "").replace(".", "").isalnum():
            raise ValueError(f"agent name {name!r} must be alphanumeric (with _ - .)")
        self.name = name
        self.daemon = daemon
        self.quantum = quantum
        self.status = RUNNABLE
        self.waiting_on: Any = None
        self.wait_reason = ""
        self.instret = 0
        self.traps = 0
        self.cycles = 0
        self.exit_code: int | None = None
        self.yielded = False  # set when the agent gave up its turn (tessera.control.Yield)
        self.machine: Any = None

    # -- scheduling
    def wake(self) -> None:
        if self.status == WAITING:
            self.status = RUNNABLE
            self.waiting_on = None
            self.wait_reason = ""

    def park(self, obj: Any, reason: str) -> None:
        self.status = WAITING
        self.waiting_on = obj
        self.wait_reason = reason
        obj.park(self)

    def halt(self, exit_code: int = 0) -> None:
        self.status = HALTED
        self.exit_code = exit_code
        self.wait_reason = ""        # halted while parked (another agent stopped it): it waits no more
        if self.waiting_on is not None:
            self.waiting_on.unpark(self)
            self.waiting_on = None

    def prepare(self, machine: Any) -> None:
        """Called before the first slice of a run (and after a restore)."""
        self.machine = machine
        machine.scheduling_version += 1

    def run_slice(self, limit: int, cycle_limit: float = float("inf")) -> int:
        """Run up to ``limit`` steps; return the number of steps used."""
        raise NotImplementedError

    # -- state
    def state(self) -> dict[str, Any]:
        """The agent's architectural state as JSON-able data."""
        return {"kind": self.kind, "status": self.status, "instret": self.instret, "traps": self.traps,
                "cycles": self.cycles, "exit_code": self.exit_code,
                "waiting_for": self.wait_reason or None}

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self.name} {self.status}>"


class EngineAgent(Agent):
    """An asynchronous engine: takes commands from an inbox FIFO and counts completions.

    Subclasses implement :meth:`process` (do the work of one command, return the
    cycles it took).  The host issues work with ``inbox.push(agent, command)`` from
    an instruction's semantics and waits on ``completed`` (a
    :class:`~tessera.sync.Counter`), so host and engine synchronise only through sync
    objects.  Commands must be picklable for snapshots.
    """

    kind = "engine"

    def __init__(self, name: str, inbox: Any, completed: Any, **kw: Any) -> None:
        kw.setdefault("daemon", True)
        super().__init__(name, **kw)
        self.inbox = inbox
        self.completed = completed

    def process(self, command: Any) -> int:  # pragma: no cover - abstract
        raise NotImplementedError

    def run_slice(self, limit: int, cycle_limit: float = float("inf")) -> int:
        done = 0
        while done < limit and self.cycles < cycle_limit:
            try:
                command = self.inbox.pop(self)
            except WaitFor as w:
                self.park(w.obj, w.reason)
                break
            try:
                self.cycles += max(1, int(self.process(command)))
            except Halt as h:
                self.halt(h.exit_code)
                break
            except TesseraError as err:  # e.g. a DMA fault: say which engine it was
                raise err.with_context(agent=self.name) from None
            self.instret += 1
            done += 1
            self.completed.add(1, self)
        return done
