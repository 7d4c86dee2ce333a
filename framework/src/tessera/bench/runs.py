"""Timing one machine run, and the sum every loop workload computes.

Only ``Machine.run`` is timed: building the machine and loading the program happen
before, checking the result after.  A run that does not end with every agent
halted — a budget, a trap, any Tessera error — is a :class:`BenchFailure`, never a
fast sample.
"""

from __future__ import annotations

import time
from typing import Any

from tessera.bench.model import BenchFailure
from tessera.errors import TesseraError

MASK32 = 0xFFFF_FFFF


def expected_sum(iterations: int) -> int:
    """``iterations + (iterations - 1) + ... + 1`` modulo 2**32: what every sum loop leaves."""
    return (iterations * (iterations + 1) // 2) & MASK32


def timed_run(machine: Any, *, max_steps: int) -> tuple[float, Any]:
    """``(seconds, RunResult)`` of ``machine.run``; :class:`BenchFailure` unless it halted."""
    start = time.perf_counter()
    try:
        result = machine.run(max_steps=max_steps)
    except TesseraError as exc:
        raise BenchFailure(f"the run ended in an error: {exc}") from exc
    seconds = time.perf_counter() - start
    if result.reason != "halted":
        raise BenchFailure(f"the run did not halt: {result.reason} ({result.detail})")
    return seconds, result


def require(what: str, got: int, want: int) -> None:
    """Fail loudly when a checked value is wrong."""
    if got != want:
        raise BenchFailure(f"wrong result: {what} is {got:#x}, expected {want:#x}")


__all__ = ["expected_sum", "require", "timed_run"]
