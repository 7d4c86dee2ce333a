"""Named barriers of ``t_sync`` (tile.md 5.8): one sync object per PE (CTA scope) and per cluster.

A barrier is ``(scope instance, sync_id)`` like PTX ``bar.sync``/``bar.arrive``: the first
arrival of a generation fixes its mask, ``expected = popcount(mask)``, each ``t_sync``
counts one, and when the count reaches ``expected`` every blocked participant is
released and the barrier starts a new generation.  A blocking arrival parks the hart on
this object (``WaitFor``), so a barrier that can never complete shows in the core's
deadlock report with who waits on which barrier, how many arrived and who is missing.
The arrival is recorded before the wait is raised, as :class:`tessera.sync.Barrier`
does: re-executing the parked ``t_sync`` recognises the hart as already counted.
"""

from __future__ import annotations

from typing import Any

from tessera.sync import SyncObject


class NamedBarriers(SyncObject):
    kind = "tile-barriers"

    def __init__(self, name: str, labels: list[str], members: list[list[str]]) -> None:
        super().__init__(name)
        self.labels = labels                     # bit i of a mask names labels[i] ...
        self.members = members                   # ... whose harts are members[i]
        self.barriers: dict[int, dict[str, Any]] = {}

    def arrive(self, agent: Any, sync_id: int, mask: int, blocking: bool) -> str | None:
        """Count ``agent``'s arrival; park it when ``blocking`` and others are missing.

        Returns a problem description (the mask differs from the generation's) instead of
        counting, so the caller can raise its illegal-instruction trap with nothing changed.
        """
        b = self.barriers.get(sync_id)
        name = agent.name
        if b is not None and name in b["released"]:
            b["released"].remove(name)
            self._cleanup(sync_id)
            return None
        if b is not None and name in b["blocked"]:
            raise self.wait_for(agent, self._reason(sync_id))
        if b is None or not b["count"]:
            fresh = {"mask": mask, "count": 0, "blocked": [], "arrived": [],
                     "released": b["released"] if b else [], "generation": b["generation"] if b else 0}
            b = self.barriers[sync_id] = fresh
        elif b["mask"] != mask:
            return (f"t_sync barrier {sync_id} of {self.name}: mask {mask:#x} differs from the mask "
                    f"{b['mask']:#x} of this generation")
        b["count"] += 1
        b["arrived"].append(name)
        self.emit_event("arrive", agent, (sync_id, b["count"]))
        if b["count"] >= bin(b["mask"]).count("1"):
            b["released"].extend(b["blocked"])
            b["blocked"] = []
            b["arrived"] = []
            b["count"] = 0
            b["generation"] += 1
            self.emit_event("release", agent, (sync_id, b["generation"]))
            self.wake_waiters()
            self._cleanup(sync_id)
            return None
        if blocking:
            b["blocked"].append(name)
            raise self.wait_for(agent, self._reason(sync_id))
        return None

    def _cleanup(self, sync_id: int) -> None:
        b = self.barriers[sync_id]
        if not b["count"] and not b["released"] and not b["blocked"]:
            b["mask"] = 0

    def _reason(self, sync_id: int) -> str:
        b = self.barriers[sync_id]
        expected = bin(b["mask"]).count("1")
        missing = [label for i, label in enumerate(self.labels)
                   if b["mask"] >> i & 1 and not set(self.members[i]) & set(b["arrived"])]
        return (f"t_sync barrier {sync_id} of {self.name}: {b['count']} of {expected} arrived "
                f"(mask {b['mask']:#x}; not yet: {', '.join(missing) or 'none'})")

    def state(self) -> dict[str, Any]:
        return {"kind": self.kind,
                "barriers": {str(k): {"mask": v["mask"], "count": v["count"], "generation": v["generation"],
                                      "blocked": list(v["blocked"])}
                             for k, v in sorted(self.barriers.items())}}


class SemaphoreSignals(SyncObject):
    """Woken whenever a tile semaphore is signalled (TMA completion, ``t_sem signal``)."""

    kind = "tile-semaphores"

    def signalled(self, agent: Any = None) -> None:
        self.emit_event("signal", agent)
        self.wake_waiters()

    def wait(self, agent: Any, reason: str) -> None:
        raise self.wait_for(agent, reason)
