"""rfPhoenix's fault targets beyond its register files (the ``tessera_fault_targets`` hook).

The vector registers, lane by lane: per hardware thread 64 registers × NLANES lanes of
32 bits (spec section 1.2; ``--set lanes=N``), held in the thread's ``vr`` array, entry
``reg * lanes + lane`` (written ``t0.v[3,2]``: v3, lane 2).  The scalar file ``r`` is
a declared register file, which the fault injector finds on its own.
"""

from __future__ import annotations

from typing import Any

from tessera_phoenix.thread import PhoenixThread


def fault_targets(machine: Any) -> list[dict[str, Any]] | None:
    threads = [a for a in machine.agents if isinstance(a, PhoenixThread)]
    if not threads:
        return None
    return [vector_lanes(thread) for thread in threads]


def vector_lanes(thread: PhoenixThread) -> dict[str, Any]:
    lanes = thread.lanes

    def read(index: int) -> int:
        return int(thread.vr[index // lanes, index % lanes])

    def write(index: int, value: int) -> None:
        thread.vr[index // lanes, index % lanes] = value & 0xFFFF_FFFF

    def values() -> list[int]:
        return thread.vr.reshape(-1).tolist()

    return {"name": f"{thread.name}.v", "kind": "lanes", "shape": (64, lanes), "bits": 32,
            "agent": thread.name, "read": read, "write": write, "values": values,
            "doc": f"vector registers v0..v63 of {thread.name}, {lanes} lanes each"}
