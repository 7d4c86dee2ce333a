"""Fault models: what a fault does to the entry it hits.

=============  ===============================================================================
``flip``       transient: invert ``k`` bits (1 by default) — adjacent from ``bit`` (or from a
               random bit), or ``k`` random distinct bits with ``spread=random``
``random``     transient: a random value of the entry's width
``zero``       transient: the value 0
``stuck0``     permanent over a window: ``k`` bits from ``bit`` read 0, re-applied before and
``stuck1``     after every instruction for ``window`` instructions (to the end of the run
               without one)
``skip``       the instruction at the trigger is not executed (it still counts as a step)
=============  ===============================================================================

On the instruction word at decode (target ``insn``), ``flip``, ``random`` and
``zero`` corrupt the word fetched for one execution, which is decoded again and run
in its place (:mod:`tessera_faults.corrupt`).  Every random choice comes from the
fault's ``seed``: the same spec gives the same fault.
"""

from __future__ import annotations

import random

from tessera.errors import ConfigError

MODELS = ("flip", "random", "zero", "stuck0", "stuck1", "skip")
#: transient models that give an entry a new value once
VALUE_MODELS = ("flip", "random", "zero")
STUCK_MODELS = ("stuck0", "stuck1")
SPREADS = ("adjacent", "random")


def choose_bits(width: int, *, k: int, bit: int | None, spread: str, rng: random.Random,
                what: str = "the entry") -> tuple[int, ...]:
    """The bits a flip or stuck-at touches, in ascending order."""
    if not 1 <= k <= width:
        raise ConfigError(f"k={k}: {what} has {width} bits")
    if spread == "random":
        if bit is not None:
            raise ConfigError("spread=random chooses the bits: give no bit=")
        return tuple(sorted(rng.sample(range(width), k)))
    low = rng.randrange(width - k + 1) if bit is None else bit
    if not 0 <= low or low + k > width:
        last = f"..{low + k - 1}" if k > 1 else ""
        raise ConfigError(f"bit={low}{last}: {what} has bits 0..{width - 1}")
    return tuple(range(low, low + k))


def mask_of(bits: tuple[int, ...] | list[int]) -> int:
    out = 0
    for b in bits:
        out |= 1 << b
    return out


def apply(model: str, old: int, width: int, bits: tuple[int, ...] | list[int], rng: random.Random) -> int:
    """The entry's value after ``model`` hits it (``bits`` as :func:`choose_bits` chose them)."""
    mask = mask_of(bits)
    if model == "flip":
        return old ^ mask
    if model == "random":
        return rng.getrandbits(width)
    if model == "zero":
        return 0
    if model == "stuck0":
        return old & ~mask
    if model == "stuck1":
        return old | mask
    raise ConfigError(f"model={model} gives no value")  # skip: nothing to compute
