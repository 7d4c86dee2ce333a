"""Instructions direct mode does not execute: they decode and disassemble, and stop the run.

The encoding tables have a row for every instruction of the chip, the semantics only
for those direct mode models (issue 5: the SFPU, ZEROACC, the scalar-unit GPR
instructions, END).  A row naming any other instruction resolves, through the
registry's ``missing`` factory :func:`not_supported_yet`, to a copy of
:func:`not_supported` that stops with one line naming the instruction and its unit::

    ttmvmul: not supported in direct mode yet (MVMUL, MATH unit)

This module registers nothing (the registry skips it when it loads its modules).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from tessera.control import Trap
from tessera.isa import specialised
from tessera.semantics import no_inline
from tessera_tensix import rules

#: What the run stops with, after the mnemonic; replaced in each copy (:func:`not_supported_yet`).
WHY = "not supported in direct mode yet"


@no_inline
def not_supported(thread: Any, ins: Any) -> None:
    raise Trap(rules.RULE, ins.word, name=f"{ins.mnemonic}: {WHY}", word=ins.word)


def not_supported_yet(name: str) -> Callable[[Any, Any], None]:
    """The semantics of vendor instruction ``name``, which no semantics module registers
    (``missing`` of :data:`tessera_tensix.semantics.REGISTRY`): a copy of
    :func:`not_supported` whose message names the instruction and its execution unit,
    from the table data."""
    from tessera_tensix.isa import resource

    unit = resource(name)
    unit = f", {unit} unit" if unit and unit != "NONE" else ""
    return specialised(not_supported, f"not_supported[{name}]",
                       WHY=f"not supported in direct mode yet ({name}{unit})")
