"""Late binding of the encoding table to the semantics registry.

The table rows reference semantic functions by vendor name (``Sem("SFPMAD")``) because
the semantics modules register themselves independently of the table
(:mod:`tessera_tensix.semantics`).  The first execution of a decoded instruction
looks the function up (importing every semantics module once) and, when nothing
instruments the instruction, rebinds ``ins.run`` to it, so later executions call the
semantic function directly.  :func:`refine` (``Architecture.refine``) does the same at
decode time.

* An instruction with no registered semantics (the matrix unit, packers, MOP/REPLAY,
  semaphores … — outside the direct mode of issue 5) stops the run with one line:
  ``ttmvmul: not supported in direct mode yet (MVMUL, a MATH instruction)``.
* A word whose reserved bits are not zero decodes through a second, less specific row
  (:class:`Reserved`): it breaks the rule "unnamed bits must be zero" (ttsim flags such
  words as NonContractualBehavior), which stops the run, or — with ``lenient`` — runs
  the instruction ignoring those bits, as the hardware decoder does.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from tessera.control import Trap
from tessera_tensix import rules

_loaded = False


def _registry() -> dict[str, Callable[[Any, Any], Any]]:
    global _loaded
    from tessera_tensix.semantics import REGISTRY, load_all

    if not _loaded:
        _loaded = True
        load_all()
    return REGISTRY


def lookup(name: str) -> Callable[[Any, Any], Any] | None:
    """The registered function of vendor instruction ``name`` (``SFP_STOCH_RND`` also as ``SFPSTOCHRND``)."""
    registry = _registry()
    fn = registry.get(name)
    if fn is None and "_" in name:
        fn = registry.get(name.replace("_", ""))
    return fn


class NotSupported:
    """Semantics of an instruction direct mode does not model: stop with one line."""

    __slots__ = ("name", "resource")

    def __init__(self, name: str, resource: str) -> None:
        self.name = name
        self.resource = resource

    def __call__(self, thread: Any, ins: Any) -> None:
        unit = f", {self.resource} unit" if self.resource and self.resource != "NONE" else ""
        raise Trap(rules.RULE, ins.word,
                   name=f"{ins.mnemonic}: not supported in direct mode yet ({self.name}{unit})",
                   word=ins.word)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, NotSupported) and (other.name, other.resource) == (self.name, self.resource)

    def __hash__(self) -> int:
        return hash(("NotSupported", self.name))

    def __reduce__(self) -> tuple[Any, ...]:
        return (NotSupported, (self.name, self.resource))


class Sem:
    """A late-bound semantic function: ``REGISTRY[name]``, looked up when first needed.

    A class (not a closure) so encodings pickle with snapshots and compare equal by
    instruction name.
    """

    __slots__ = ("name", "resource", "_fn")

    def __init__(self, name: str, resource: str = "") -> None:
        self.name = name
        self.resource = resource
        self._fn: Callable[[Any, Any], Any] | None = None

    def resolve(self) -> Callable[[Any, Any], Any]:
        fn = self._fn
        if fn is None:
            fn = lookup(self.name) or NotSupported(self.name, self.resource)
            self._fn = fn
        return fn

    def __call__(self, thread: Any, ins: Any) -> Any:
        fn = self.resolve()
        if ins.run is self:           # not instrumented: call the function directly from now on
            ins.run = fn
        return fn(thread, ins)

    def __eq__(self, other: object) -> bool:
        return type(other) is type(self) and other.name == self.name  # type: ignore[attr-defined]

    def __hash__(self) -> int:
        return hash((type(self).__name__, self.name))

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.name!r})"

    def __reduce__(self) -> tuple[Any, ...]:
        return (type(self), (self.name, self.resource))


class Reserved(Sem):
    """Semantics of a word with non-zero reserved bits: break the rule, then run ``name``."""

    __slots__ = ("reserved",)

    def __init__(self, name: str, resource: str = "", reserved: int = 0) -> None:
        super().__init__(name, resource)
        self.reserved = reserved

    def __call__(self, thread: Any, ins: Any) -> Any:
        bits = ins.word & self.reserved
        rules.broken(thread, ins, f"reserved bits {bits:#08x} are set (bits {_ranges(self.reserved)} "
                                  "must be zero; ttsim: NonContractualBehavior)")
        fn = self.resolve()
        if ins.run is self:           # lenient: the hardware ignores those bits from now on
            ins.run = fn
        return fn(thread, ins)

    def __reduce__(self) -> tuple[Any, ...]:
        return (Reserved, (self.name, self.resource, self.reserved))


def _ranges(mask: int) -> str:
    """``0xfff000`` -> ``"23:12"``; several runs are comma-separated, highest first."""
    runs, bit = [], 0
    while bit < 32:
        if mask >> bit & 1:
            lo = bit
            while bit < 32 and mask >> bit & 1:
                bit += 1
            runs.append(f"{bit - 1}:{lo}" if bit - 1 != lo else f"{lo}")
        else:
            bit += 1
    return ",".join(reversed(runs))


def refine(ins: Any, peek: Callable[[int], int | None]) -> None:
    """``Architecture.refine``: bind the semantic function when the word is decoded."""
    run = ins.run
    if type(run) is Sem:
        ins.run = run.resolve()
