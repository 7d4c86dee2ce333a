"""The cycle models of live machines: which machine runs which model (weakly held).

The plugin's hooks ask :func:`model_of` for every machine; this module is imported only
when a model was built, so a machine without one costs the hooks a dictionary lookup in
``sys.modules`` and nothing else (:mod:`tessera_cycles.plugin`).
"""

from __future__ import annotations

import weakref
from typing import Any

__all__ = ["EXT", "model_of", "model_state", "register_model"]

#: the machine extension holding the model's counts (``machine.ext["cycles"]``)
EXT = "cycles"

_MODELS: weakref.WeakKeyDictionary[Any, Any] = weakref.WeakKeyDictionary()


def register_model(machine: Any, model: Any) -> None:
    """Say that ``model`` times ``machine`` (its constructor does)."""
    _MODELS[machine] = model


def model_of(machine: Any) -> Any:
    """The model timing ``machine``, or ``None``."""
    return _MODELS.get(machine)


def model_state(machine: Any, model: str, fresh: dict[str, Any]) -> dict[str, Any]:
    """The model's counts kept in the machine's extensions: ``fresh`` declared on a new
    machine; on one restored from a snapshot, what the snapshot kept (the same model: the
    configuration that chose it is in the snapshot too)."""
    if EXT in machine.ext:
        state: dict[str, Any] = machine.ext[EXT]
        if state.get("model") == model:
            return state
        raise ValueError(f"machine extension {EXT!r} holds the state of model {state.get('model')!r}, "
                         f"not {model!r}")
    return machine.ext.declare(EXT, {"model": model, **fresh})  # type: ignore[no-any-return]
