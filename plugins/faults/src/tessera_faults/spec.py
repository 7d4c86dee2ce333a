"""A fault, as a record and as the compact text ``--fault`` takes.

``target=x5,model=flip,bit=3,at=retired:1000`` — comma-separated ``key=value``:

==========  ========================================================================  ===========
``target``  what it hits (:func:`tessera_faults.targets.resolve`): ``x5``,             by model
            ``hart0.x[5]``, ``mem[0x80001000]``, ``t0.v[3,2]``, ``dest[5,0]``,
            ``insn``; a structure without an entry (``hart0.x``) means a random one
``model``   ``flip``, ``random``, ``zero``, ``stuck0``, ``stuck1``, ``skip``            ``flip``
            (:mod:`tessera_faults.models`)
``bit``     the (lowest) bit a flip or stuck-at touches                              random
``k``       how many bits                                                             1
``spread``  ``adjacent`` bits from ``bit``, or ``random`` distinct bits                ``adjacent``
``at``      the trigger (:mod:`tessera_faults.triggers`)                               required
``window``  a stuck-at's length in instructions (any agent's) after the trigger       the run
``seed``    the seed of every random choice                                           0
==========  ========================================================================  ===========

``skip`` takes no target (it is the instruction at the trigger); a ``class`` trigger
chooses its target itself, the instruction's destination, so it takes none either.
Anything malformed is a :class:`~tessera.errors.ConfigError` with one line naming it
(``tessera run`` exits with status 64).
"""

from __future__ import annotations

import re
from typing import Any

import attrs

from tessera.errors import ConfigError
from tessera.settings import parse_int
from tessera_faults.models import MODELS, SPREADS, STUCK_MODELS
from tessera_faults.triggers import Trigger, parse_trigger

#: the commas between KEY=VALUE parts (not those of an index: ``dest[5,0]``)
_PARTS = re.compile(r",(?![^\[\]]*\])")

KEYS = ("target", "model", "bit", "k", "spread", "at", "window", "seed")


@attrs.frozen
class Fault:
    """One fault: what it hits, how, and when (the keys of the module doc)."""

    at: str
    target: str | None = None
    model: str = "flip"
    bit: int | None = None
    k: int = 1
    spread: str = "adjacent"
    window: int | None = None
    seed: int = 0

    def __attrs_post_init__(self) -> None:
        self.check()

    @classmethod
    def parse(cls, text: str) -> Fault:
        """A fault from its text (``Fault.parse("target=x5,at=retired:10")``)."""
        values: dict[str, Any] = {}
        for part in _PARTS.split(text or ""):
            if not part.strip():
                continue
            key, eq, value = part.partition("=")
            key, value = key.strip().lower(), value.strip()
            if not eq or not value:
                raise ConfigError(f"fault {text!r}: {part.strip()!r} is not KEY=VALUE")
            if key not in KEYS:
                raise ConfigError(f"fault {text!r}: unknown key {key!r} (keys: {', '.join(KEYS)})")
            if key in values:
                raise ConfigError(f"fault {text!r}: {key} is given twice")
            values[key] = _number(text, key, value) if key in ("bit", "k", "window", "seed") else value
        if "at" not in values:
            raise ConfigError(f"fault {text!r}: needs at=TRIGGER (e.g. at=retired:1000)")
        return cls(**values)

    def check(self) -> None:
        """Refuse what no machine could inject (everything that needs the machine comes later)."""
        if self.model not in MODELS:
            raise ConfigError(f"model={self.model}: choose from {', '.join(MODELS)}")
        if self.spread not in SPREADS:
            raise ConfigError(f"spread={self.spread}: choose from {', '.join(SPREADS)}")
        trigger = self.trigger
        if self.k < 1:
            raise ConfigError(f"k={self.k}: at least one bit")
        if self.bit is not None and self.bit < 0:
            raise ConfigError(f"bit={self.bit}: bits count from 0")
        if self.window is not None and (self.model not in STUCK_MODELS or self.window < 1):
            raise ConfigError("window= is the length of a stuck-at (model stuck0 or stuck1), at least 1")
        if self.model == "skip" and (self.bit is not None or self.k != 1 or self.spread != "adjacent"):
            raise ConfigError("model=skip skips an instruction: it takes no bit, k or spread")
        if trigger.kind == "class" and self.target is not None:
            raise ConfigError(f"at={self.at}: a class trigger hits the instruction's destination; give no target")
        if trigger.kind == "class" and self.model == "skip":
            raise ConfigError(f"at={self.at}: skip an instruction with a pc or retired trigger, not a class one")
        if self.target is None and self.model != "skip" and trigger.kind != "class":
            raise ConfigError(f"fault {self}: needs target= (what it hits)")

    @property
    def trigger(self) -> Trigger:
        return parse_trigger(self.at)

    def __str__(self) -> str:
        """The canonical text: the keys in a fixed order, defaults left out."""
        parts = []
        for key in KEYS:
            value = getattr(self, key)
            if value is None or value == _DEFAULTS.get(key):
                continue
            parts.append(f"{key}={self.trigger if key == 'at' else value}")
        return ",".join(parts)


_DEFAULTS: dict[str, Any] = {"model": "flip", "k": 1, "spread": "adjacent", "seed": 0}


def _number(text: str, key: str, value: str) -> int:
    try:
        return parse_int(value)
    except ValueError:
        raise ConfigError(f"fault {text!r}: {key}={value} is not a whole number") from None


def as_fault(fault: Fault | str) -> Fault:
    """A :class:`Fault` given as itself or as its text."""
    if isinstance(fault, Fault):
        return fault
    if isinstance(fault, str):
        return Fault.parse(fault)
    raise ConfigError(f"a fault is a Fault or its text, not {type(fault).__name__}")
