"""Semantic functions of the Tensix instructions, registered by vendor mnemonic.

Each module registers its functions with :func:`op` under the vendor's instruction
name (``SFPMAD``, ``SFPLOAD``, ``ADDDMAREG`` …) in :data:`REGISTRY`, the core's
:class:`~tessera.isa.SemanticsRegistry`; the encoding tables (:mod:`tessera_tensix.isa`)
name them with ``REGISTRY.ref(name)``, so tables and semantics grow separately and the
engine binds each row when it fills the decode cache.  Signature ``fn(thread, ins) ->
None`` (Tensix threads never branch); operands are the decoded fields of the table
(``ins.lreg_dest``, ``ins.instr_mod1`` …), never bits sliced out of ``ins.word``.

Two kinds of rows run functions made rather than written:

* a name no module registers (the matrix unit, packers, MOP/REPLAY, semaphores … —
  outside direct mode) runs what :func:`~tessera_tensix.semantics.unsupported.not_supported_yet`
  makes of it, the registry's ``missing`` factory: it stops the run with one line,
  ``ttmvmul: not supported in direct mode yet (MVMUL, MATH unit)``;
* the row of a word with reserved bits set names :func:`reserved_name`, registered by
  :mod:`tessera_tensix.semantics.reserved`: break the rule, then run the instruction.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from tessera.isa import SemanticsRegistry
from tessera.semantics import no_inline
from tessera_tensix.semantics.unsupported import not_supported_yet

REGISTRY = SemanticsRegistry(__name__, __path__, skip=("unsupported",), missing=not_supported_yet)


def op(*names: str) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """Decorator: ``@op("name")`` registers a semantic function.

    The fast engine's blocks *call* Tensix semantic functions rather than inline them
    (:func:`tessera.semantics.no_inline`): their time goes into numpy and numba
    kernels, so inlining would save one call and cost milliseconds of translation.
    """
    register = REGISTRY.op(*names)

    def deco(fn: Callable[..., Any]) -> Callable[..., Any]:
        return register(no_inline(fn))

    return deco


def reserved_name(name: str, reserved: int) -> str:
    """The registry name of instruction ``name`` decoded from a word that sets some of the
    ``reserved`` bits of its row (the mask differs between chips, so it is part of the name)."""
    return f"{name} reserved {reserved:#08x}"


def load_all() -> SemanticsRegistry:
    """Import every semantics module (they register themselves) and return the registry."""
    return REGISTRY.load_all()
