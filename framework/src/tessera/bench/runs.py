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


def scaling(best: dict[str, Any], counts: Any, unit: str,
            engines: tuple[str, ...] = ("fast", "step")) -> tuple[dict[str, float], dict[str, float]]:
    """How a workload run on several agents compares, from variants named ``<engine>-<n><unit>``
    (``fast-4t``: 4 threads): ``(over_fewest, fast_over_step)``.

    ``over_fewest`` is each variant's rate over the rate of its engine's variant with the
    fewest agents (keyed by variant); ``fast_over_step`` the fast rate over the step rate
    at each count (keyed ``<n><unit>``).  Variants not measured are left out.
    """
    base = min(counts)
    over: dict[str, float] = {}
    for engine in engines:
        one = best.get(f"{engine}-{base}{unit}")
        for n in counts:
            many = best.get(f"{engine}-{n}{unit}")
            if n != base and one is not None and many is not None:
                over[f"{engine}-{n}{unit}"] = many.rate / one.rate
    fast_over_step: dict[str, float] = {}
    for n in counts:
        fast, step = best.get(f"fast-{n}{unit}"), best.get(f"step-{n}{unit}")
        if fast is not None and step is not None:
            fast_over_step[f"{n}{unit}"] = fast.rate / step.rate
    return over, fast_over_step


def scaling_comparison(derived: dict[str, Any], variant: str, over_key: str, fewest: str) -> list[str]:
    """The report's ``compared`` words for ``variant`` from :func:`scaling`'s numbers, stored in
    ``derived`` as ``over_key`` and ``fast_over_step`` (``fewest``: how the base reads, "1 thread")."""
    parts = []
    over = derived.get(over_key, {}).get(variant)
    if over is not None:
        parts.append(f"{over:.2f}x {fewest}")
    engine, _, count = variant.partition("-")
    ratio = derived.get("fast_over_step", {}).get(count)
    if engine == "fast" and ratio is not None:
        parts.append(f"{ratio:.2f}x step")
    return parts


__all__ = ["expected_sum", "require", "scaling", "scaling_comparison", "timed_run"]
