"""The bounds of a run's budgets and stop addresses, checked before the run starts.

A budget the scheduler cannot honour is a user error, not a run: ``nan`` seconds
compare false with everything (the budget would never end the run), a step count
beyond 64 bits is no count a run can reach, and a stop address outside the
architecture's address space can never be hit.  The command line bounds its options
with the same numbers (:data:`MAX_COUNT`), and :meth:`Machine.run
<tessera.machine.Machine.run>` checks what a Python caller passes.
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Iterable
from typing import Any

from tessera.errors import ConfigError

#: Largest step or cycle budget (a signed 64-bit count: ~290 years at 10^9 steps a second).
MAX_COUNT = (1 << 63) - 1


def check_count(name: str, value: Any) -> None:
    """A step or cycle budget: ``None`` or an integer in ``0..MAX_COUNT``."""
    if value is None:
        return
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise ConfigError(f"{name} must be a whole number, not {value!r}")
    if not 0 <= int(value) <= MAX_COUNT:
        raise ConfigError(f"{name}={value} is out of range (0..2**63-1)")


def check_seconds(name: str, value: Any) -> None:
    """A wall-time budget: ``None`` or a finite number of seconds above 0."""
    if value is None:
        return
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise ConfigError(f"{name} must be a number of seconds, not {value!r}")
    if not math.isfinite(value) or value <= 0:
        raise ConfigError(f"{name} must be a finite number of seconds above 0, not {value!r}")


def check_stops(addresses: Iterable[Any], address_bits: int) -> None:
    """Stop addresses: integers inside the ``address_bits``-wide address space."""
    top = (1 << address_bits) - 1
    for address in addresses:
        if isinstance(address, bool) or not isinstance(address, numbers.Integral):
            raise ConfigError(f"stop address {address!r} is not an integer")
        address = int(address)
        if not 0 <= address <= top:
            shown = f"{address:#x}" if address >= 0 else str(address)
            raise ConfigError(f"stop address {shown} lies outside the {address_bits}-bit address space "
                              f"(0..{top:#x})")


def check_run_limits(*, max_steps: Any, max_cycles: Any, max_seconds: Any, until_pc: Iterable[Any],
                     address_bits: int) -> None:
    """Every limit of one :meth:`Machine.run` call (:class:`ConfigError` on the first bad one)."""
    check_count("max_steps", max_steps)
    check_count("max_cycles", max_cycles)
    check_seconds("max_seconds", max_seconds)
    check_stops(until_pc, address_bits)
