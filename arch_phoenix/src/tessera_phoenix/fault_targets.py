"""rfPhoenix's fault targets beyond its register files (the ``tessera_fault_targets`` hook).

The vector registers, lane by lane: per hardware thread 64 registers × NLANES lanes of
32 bits (spec section 1.2; ``--set lanes=N``), held in the thread's ``vr`` array, entry
``reg * lanes + lane`` (written ``t0.v[3,2]``: v3, lane 2).  The scalar file ``r`` is
a declared register file, which the fault injector finds on its own.

The unified TLB (spec 5.4) is the target ``tlb`` (see :func:`tlb_targets`).
"""

from __future__ import annotations

from typing import Any

from tessera_phoenix.mmu.tlb import SETS, WAYS, WORDS
from tessera_phoenix.thread import PhoenixThread


def fault_targets(machine: Any) -> list[dict[str, Any]] | None:
    threads = [a for a in machine.agents if isinstance(a, PhoenixThread)]
    if not threads:
        return None
    return [vector_lanes(thread) for thread in threads] + tlb_targets(machine)


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


def tlb_targets(machine: Any) -> list[dict[str, Any]]:
    """The core's unified TLB (``tlb``), when the machine has an MMU (spec 5.4).

    One TLB per core, shared by its threads, so the target has no agent: 5 ways × 1024
    sets (entry ``[way, set]``), each entry the 12 words the TLB stores for it
    (:mod:`tessera_phoenix.mmu.tlb`: TLB words 0..3, PMT entry 4..7, PTE address 8..9,
    PMTE address 10..11 — the TLBRD/TLBRW vector elements) packed word 0 lowest, so
    bits 0..31 are the PTE word (R/W/X at bits 4/3/2) and bits 32..63 the VPN/ASID
    word.  A write replaces the live entry and drops the code the threads decoded
    under the old translation, as TLBRW does.
    """
    shared = machine.ext.get("phoenix")
    mmu = getattr(shared, "mmu", None)
    if mmu is None:
        return []
    tlb = mmu.tlb

    def read(index: int) -> int:
        return pack(tlb.read(index // SETS, index % SETS))

    def write(index: int, value: int) -> None:
        tlb.write(index // SETS, index % SETS, unpack(value))
        mmu.changed()

    def values() -> list[int]:
        out = [0] * (WAYS * SETS)
        for way, s, words in tlb.entries():
            out[way * SETS + s] = pack(words)
        return out

    return [{"name": "tlb", "kind": "array", "shape": (WAYS, SETS), "bits": WORDS * 32, "read": read,
             "write": write, "values": values,
             "doc": f"the unified TLB: {WAYS} ways × {SETS} sets of {WORDS}-word entries "
                    "(word 0 in bits 31:0; spec 5.4)"}]


def pack(words: list[int]) -> int:
    """An entry's words as one number, word 0 in the low 32 bits."""
    return sum((w & 0xFFFF_FFFF) << (32 * i) for i, w in enumerate(words))


def unpack(value: int) -> list[int]:
    return [(value >> (32 * i)) & 0xFFFF_FFFF for i in range(WORDS)]
