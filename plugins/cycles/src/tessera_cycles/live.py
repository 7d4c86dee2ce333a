"""The cycle models of live machines: which machine runs which model (weakly held).

The plugin's hooks ask :func:`model_of` for every machine; this module is imported only
when a model was built, so a machine without one costs the hooks a dictionary lookup in
``sys.modules`` and nothing else (:mod:`tessera_cycles.plugin`).
"""

from __future__ import annotations

import weakref
from typing import Any

__all__ = ["model_of", "register_model"]

_MODELS: weakref.WeakKeyDictionary[Any, Any] = weakref.WeakKeyDictionary()


def register_model(machine: Any, model: Any) -> None:
    """Say that ``model`` times ``machine`` (its constructor does)."""
    _MODELS[machine] = model


def model_of(machine: Any) -> Any:
    """The model timing ``machine``, or ``None``."""
    return _MODELS.get(machine)
