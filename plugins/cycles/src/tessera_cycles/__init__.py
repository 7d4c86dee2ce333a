"""tessera-cycles: cycle models that own the machine clock (docs/cycles.md).

A model is chosen per machine with the configuration key ``cycles`` (``--cycles
MODEL``, ``--set cycles=MODEL``, ``Machine(arch, config={"cycles": MODEL})``) and tuned
with ``cycles.NAME`` keys (``tessera cycles list`` shows them).  Without it nothing
changes; with it every functional result is the same and ``machine.clock`` reads the
model's cycles.  :func:`report` says where the time went (``--cycles-report``).

Modules: :mod:`~tessera_cycles.models` (the registry of models and the keys they
declare), :mod:`~tessera_cycles.riscv` (feeding the in-order model from running RISC-V
harts), :mod:`~tessera_cycles.inorder`, :mod:`~tessera_cycles.cache` and
:mod:`~tessera_cycles.predictor` (the model itself, independent of Tessera),
:mod:`~tessera_cycles.tables` (tables and JSON), :mod:`~tessera_cycles.cli`.
"""

from __future__ import annotations

from typing import Any

__version__ = "0.1.0"

__all__ = ["report"]


def report(machine: Any) -> dict[str, Any] | None:
    """Where the time went on ``machine`` (per agent: cycles, CPI, stalls, caches, predictor),
    or ``None`` when the machine runs no cycle model."""
    from tessera_cycles.live import model_of

    model = model_of(machine)
    return model.report(machine) if model is not None else None
