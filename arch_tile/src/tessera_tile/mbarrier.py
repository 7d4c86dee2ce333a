"""mbarrier objects (tile.md 9.5, PTX-derived): 8 bytes of shared memory or L2B.

The state ``{phase, pending, expected, tx}`` is packed into one little-endian 64-bit
word with the bit positions of ``codes.toml [mbar_object]`` (software treats it as
opaque).  Operations:

* ``init(count)``: phase 0, pending = expected = count, tx 0;
* ``arrive(n)``: pending -= n, returns the phase *before* the update;
* ``expect_tx(bytes)``: tx += bytes; ``arrive_tx(bytes)`` does both (tx first);
* ``complete_tx(bytes)`` (engine side): tx -= bytes;
* after any update, ``pending == 0 and tx == 0`` completes the phase: phase ^= 1,
  pending = expected, tx = 0;
* ``try_wait(parity)``: 1 when the current phase differs from ``parity`` (the phase
  with that parity has completed).
"""

from __future__ import annotations

from typing import Any


class Packing:
    """Bit layout of the 8-byte object, from the code table."""

    def __init__(self, table: dict[str, Any]) -> None:
        self.size = int(table["bytes"])
        self.fields = {k: (int(v[0]), int(v[1])) for k, v in table.items() if k != "bytes"}

    def unpack(self, value: int) -> dict[str, int]:
        out = {}
        for name, (lo, width) in self.fields.items():
            v = value >> lo & ((1 << width) - 1)
            if name == "tx" and v >> (width - 1):
                v -= 1 << width
            out[name] = v
        return out

    def pack(self, state: dict[str, int]) -> int:
        value = 0
        for name, (lo, width) in self.fields.items():
            value |= (state[name] & ((1 << width) - 1)) << lo
        return value


def settle(state: dict[str, int]) -> bool:
    """Complete the phase if nothing is pending; returns whether it did."""
    if state["pending"] == 0 and state["tx"] == 0:
        state["phase"] ^= 1
        state["pending"] = state["expected"]
        state["tx"] = 0
        return True
    return False


def init(count: int) -> dict[str, int]:
    return {"phase": 0, "pending": count, "expected": count, "tx": 0}


def arrive(state: dict[str, int], n: int = 1) -> int:
    phase = state["phase"]
    state["pending"] -= n
    settle(state)
    return phase


def expect_tx(state: dict[str, int], nbytes: int) -> None:
    state["tx"] += nbytes
    settle(state)


def arrive_tx(state: dict[str, int], nbytes: int) -> int:
    phase = state["phase"]
    state["tx"] += nbytes
    state["pending"] -= 1
    settle(state)
    return phase


def complete_tx(state: dict[str, int], nbytes: int) -> None:
    state["tx"] -= nbytes
    settle(state)


def try_wait(state: dict[str, int], parity: int) -> bool:
    return state["phase"] != parity & 1
