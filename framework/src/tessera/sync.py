"""Synchronisation objects: semaphore, barrier, FIFO, event, counter.

Semantic functions call these with the agent that executes.  An operation that
cannot proceed raises :class:`~tessera.control.WaitFor`; the engine parks the agent
on the object *without retiring the instruction*, and the object wakes its waiters
when its state changes, whereupon they execute the instruction again.  Waking is
in agent order, so runs are deterministic.  ``describe_wait`` texts are what a
deadlock report prints.
"""

from __future__ import annotations

from collections import deque
from typing import Any

import attrs

from tessera.control import WaitFor
from tessera.errors import ConfigError

__all__ = ["SyncEvent", "SyncObject", "Semaphore", "Barrier", "Fifo", "Event", "Counter"]


@attrs.frozen
class SyncEvent:
    """One event for the ``tessera_sync_event`` hook."""

    kind: str
    obj: str
    agent: str | None
    value: Any = None


class SyncObject:
    """Base class: a named object agents can wait on."""

    kind = "sync"

    def __init__(self, name: str) -> None:
        self.name = name
        self.waiters: list[Any] = []
        self.machine: Any = None  # set by Machine.add_sync

    # -- for subclasses: a new kind of object blocks, wakes and reports through these
    def wait_for(self, agent: Any, reason: str) -> WaitFor:
        """The signal that parks ``agent`` on this object: ``raise self.wait_for(agent, reason)``.

        Raise it before any side effect (the instruction runs again once woken);
        ``reason`` is what a deadlock report prints.
        """
        return WaitFor(self, reason)

    def wake_waiters(self) -> None:
        """Wake every waiter (call after a change); each retries its instruction in agent order."""
        if self.waiters:
            waiters, self.waiters = self.waiters, []
            for agent in waiters:
                agent.wake()
                self.emit_event("wake", agent)

    def emit_event(self, kind: str, agent: Any = None, value: Any = None) -> None:
        """Report ``kind`` (``post``, ``arrive`` ...) by ``agent`` to the ``tessera_sync_event`` hooks."""
        m = self.machine
        if m is not None and m._sync_listeners:
            m.emit_sync(SyncEvent(kind, self.name, getattr(agent, "name", agent), value))

    # the names these helpers had before they were public, for subclasses written then
    _wait = wait_for
    _changed = wake_waiters
    _emit = emit_event

    def park(self, agent: Any) -> None:
        """Called by the engine when ``agent`` must wait on this object; the ``wait`` event's
        value is what the agent waits for (its ``wait_reason``, a deadlock report's text)."""
        if agent not in self.waiters:
            self.waiters.append(agent)
        self.emit_event("wait", agent, getattr(agent, "wait_reason", None) or None)

    def unpark(self, agent: Any) -> None:
        if agent in self.waiters:
            self.waiters.remove(agent)

    def state(self) -> dict[str, Any]:
        """Architectural state (snapshots hash it; dumps show it)."""
        return {"kind": self.kind}

    def __repr__(self) -> str:
        return f"<{self.kind} {self.name} {self.state()}>"


class Semaphore(SyncObject):
    """A counting semaphore; ``post`` blocks at ``maximum`` when one is given."""

    kind = "semaphore"

    def __init__(self, name: str, value: int = 0, maximum: int | None = None) -> None:
        super().__init__(name)
        if value < 0 or (maximum is not None and not 0 <= value <= maximum):
            raise ConfigError(f"semaphore {name}: bad initial value {value}")
        self.value = value
        self.maximum = maximum

    def wait(self, agent: Any) -> None:
        """P: take one unit, or park until one is posted."""
        if self.value <= 0:
            raise self.wait_for(agent, f"semaphore {self.name} to be posted (value 0)")
        self.value -= 1
        self.emit_event("acquire", agent, self.value)
        self.wake_waiters()

    def try_wait(self, agent: Any) -> bool:
        if self.value <= 0:
            return False
        self.value -= 1
        self.emit_event("acquire", agent, self.value)
        self.wake_waiters()
        return True

    def post(self, agent: Any = None, n: int = 1) -> None:
        """V: add ``n`` units, or park while that would pass ``maximum``."""
        if self.maximum is not None and self.value + n > self.maximum:
            raise self.wait_for(agent, f"semaphore {self.name} to drop below its maximum {self.maximum}")
        self.value += n
        self.emit_event("post", agent, self.value)
        self.wake_waiters()

    def state(self) -> dict[str, Any]:
        return {"kind": self.kind, "value": self.value, "maximum": self.maximum}


class Barrier(SyncObject):
    """``parties`` agents arrive; all leave together; the barrier then resets."""

    kind = "barrier"

    def __init__(self, name: str, parties: int) -> None:
        super().__init__(name)
        if parties < 1:
            raise ConfigError(f"barrier {name}: parties must be at least 1")
        self.parties = parties
        self.arrived: list[str] = []
        self.released: set[str] = set()
        self.generation = 0

    def arrive(self, agent: Any) -> None:
        name = agent.name
        if name in self.released:  # woken after the barrier tripped: pass through
            self.released.discard(name)
            return
        if name not in self.arrived:
            self.arrived.append(name)
            self.emit_event("arrive", agent, len(self.arrived))
        if len(self.arrived) >= self.parties:
            self.released.update(n for n in self.arrived if n != name)
            self.arrived = []
            self.generation += 1
            self.emit_event("release", agent, self.generation)
            self.wake_waiters()
            return
        raise self.wait_for(agent, f"barrier {self.name} ({len(self.arrived)} of {self.parties} arrived)")

    def state(self) -> dict[str, Any]:
        return {"kind": self.kind, "parties": self.parties, "arrived": list(self.arrived),
                "generation": self.generation}


class Fifo(SyncObject):
    """A bounded queue: ``push`` waits when full, ``pop`` waits when empty."""

    kind = "fifo"

    def __init__(self, name: str, capacity: int) -> None:
        super().__init__(name)
        if capacity < 1:
            raise ConfigError(f"fifo {name}: capacity must be at least 1")
        self.capacity = capacity
        self.items: deque[Any] = deque()

    def push(self, agent: Any, item: Any) -> None:
        if len(self.items) >= self.capacity:
            raise self.wait_for(agent, f"fifo {self.name} to have room (full, {self.capacity} entries)")
        self.items.append(item)
        self.emit_event("push", agent, len(self.items))
        self.wake_waiters()

    def pop(self, agent: Any) -> Any:
        if not self.items:
            raise self.wait_for(agent, f"fifo {self.name} to receive an entry (empty)")
        item = self.items.popleft()
        self.emit_event("pop", agent, len(self.items))
        self.wake_waiters()
        return item

    def __len__(self) -> int:
        return len(self.items)

    def state(self) -> dict[str, Any]:
        return {"kind": self.kind, "capacity": self.capacity, "items": list(self.items)}


class Event(SyncObject):
    """A flag agents wait to see set."""

    kind = "event"

    def __init__(self, name: str, is_set: bool = False) -> None:
        super().__init__(name)
        self.is_set = is_set

    def set(self, agent: Any = None) -> None:
        self.is_set = True
        self.emit_event("set", agent)
        self.wake_waiters()

    def clear(self, agent: Any = None) -> None:
        self.is_set = False
        self.emit_event("clear", agent)

    def wait(self, agent: Any) -> None:
        if not self.is_set:
            raise self.wait_for(agent, f"event {self.name} to be set")

    def state(self) -> dict[str, Any]:
        return {"kind": self.kind, "set": self.is_set}


class Counter(SyncObject):
    """A monotonically increasing completion counter (async engines count finished work)."""

    kind = "counter"

    def __init__(self, name: str, value: int = 0) -> None:
        super().__init__(name)
        self.value = value

    def add(self, n: int = 1, agent: Any = None) -> None:
        self.value += n
        self.emit_event("add", agent, self.value)
        self.wake_waiters()

    def wait_at_least(self, agent: Any, target: int) -> None:
        if self.value < target:
            raise self.wait_for(agent, f"counter {self.name} to reach {target} (now {self.value})")

    def state(self) -> dict[str, Any]:
        return {"kind": self.kind, "value": self.value}
