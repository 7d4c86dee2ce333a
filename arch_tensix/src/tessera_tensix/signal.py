"""The object a waiting Tensix thread parks on: "the backend changed".

A thread waits on many kinds of condition — a semaphore's value, a SrcA bank's
``AllowedClient``, a mutex, the instruction FIFO — and the hardware re-checks them
every cycle.  Tessera parks the thread on this one :class:`~tessera.sync.SyncObject`
of the core with a text naming the exact condition (what a deadlock report prints),
and every unit that changes state a waiter may depend on calls :meth:`changed`, which
wakes all waiters; each re-executes the instruction it stopped at (before any side
effect) and parks again if its condition still fails.  One object instead of one per
condition keeps the units decoupled; waking is in agent order, so runs stay
deterministic.
"""

from __future__ import annotations

from typing import Any, NoReturn

from tessera.sync import SyncObject


class BackendSignal(SyncObject):
    """Wakes every parked Tensix thread when backend state changes."""

    kind = "tensix-backend"

    def hold(self, thread: Any, reason: str) -> NoReturn:
        """Park ``thread`` (call before any side effect): ``reason`` names the condition."""
        raise self.wait_for(thread, f"{thread.name.upper()} {reason}")

    def changed(self) -> None:
        """Some backend state changed: let every waiter re-check its condition.

        With waiters, the change is first reported as a ``change`` sync event of the
        thread that made it (the agent running now), so that a trace knows who woke
        them and when (a Perfetto wait span ends at that thread's clock)."""
        if self.waiters:
            machine = self.machine
            self.emit_event("change", machine.space.current_agent if machine is not None else None)
        self.wake_waiters()

    def state(self) -> dict[str, Any]:
        return {"kind": self.kind, "waiters": [a.name for a in self.waiters]}


class TurnBreak(SyncObject):
    """A wait that ends at once: it ends a Tensix thread's turn between two instructions of
    a MOP or REPLAY expansion (:meth:`FrontEnd.drain
    <tessera_tensix.frontend.FrontEnd.drain>`).  The MOP/REPLAY is not retired and
    resumes its queue in the thread's next turn, as after any wait."""

    kind = "turn-break"

    def park(self, agent: Any) -> None:
        # reported as a wait (tools pair the MOP's before callback, fired again when it
        # resumes, with this), then never actually waits; the turn passes as after a Yield
        self.machine = getattr(agent, "machine", None)    # one object serves every machine
        self.emit_event("wait", agent, getattr(agent, "wait_reason", None) or None)
        agent.wake()
        agent.yielded = True


#: the turn break of every Tensix thread (it holds no state of its own)
TURN = TurnBreak("tensix.turn")
