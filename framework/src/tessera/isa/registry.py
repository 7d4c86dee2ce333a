"""Binding encoding rows to semantic functions: the one way every architecture does it.

An architecture keeps its semantic functions in modules of one package and its
encoding table elsewhere.  Each semantics module registers its functions by name in
the package's :class:`SemanticsRegistry` (``@REGISTRY.op("add")``); a table row
names the function it runs with ``REGISTRY.ref("add")``, a :class:`SemanticRef`.
The two can be read and grown separately, and a row pickles (into snapshots) as the
pair *(package, name)* whatever the function is.

When an instruction enters the decode cache the engine resolves the row's reference
(:meth:`SemanticRef.resolve`: the registry imports every module of its package once,
the first time a name is missing), so executing it calls the function directly.  A
name nobody registered resolves to what the registry's ``missing`` factory makes of it
(an architecture whose table is ahead of its semantics: "not supported yet"), or is a
:class:`~tessera.errors.ConfigError` naming the package and the name.

``Architecture.refine`` may swap a decoded instruction's function for another, but
only for one the row declares in its ``variants`` (``Encoding(variants={"x0": nop})``)
using :func:`swap`; the engine refuses anything else.  So every function a row can
run is on the row, and ``tessera semantics`` lists them all.

:func:`specialised` makes copies of a function with some module constants replaced
(one body for RV32 and RV64, with the XLEN mask a constant in each copy).
"""

from __future__ import annotations

import importlib
import types
from collections.abc import Callable, Iterable
from typing import Any

from tessera.errors import ConfigError

__all__ = ["SemanticRef", "Semantics", "SemanticsRegistry", "resolve", "specialised", "swap"]

Semantics = Callable[[Any, Any], Any]

#: package name → its registry, so a pickled :class:`SemanticRef` finds its registry again
_REGISTRIES: dict[str, SemanticsRegistry] = {}


class SemanticsRegistry(dict[str, Semantics]):
    """``name → semantic function`` of one package; registering a name twice is an error.

    ``package``/``path``: the semantics package (``__name__``, ``__path__``), whose
    modules :meth:`load_all` imports (except those in ``skip``: helpers that register
    nothing).  ``missing(name)`` returns the function a row naming an unregistered
    ``name`` runs; without it such a row is a configuration error when decoded.
    """

    def __init__(self, package: str, path: Iterable[str] = (), skip: Iterable[str] = (),
                 missing: Callable[[str], Semantics] | None = None) -> None:
        super().__init__()
        self.package = package
        self.path = list(path)
        self.skip = frozenset(skip)
        self.missing = missing
        self.loaded = False
        self._refs: dict[str, SemanticRef] = {}
        _REGISTRIES[package] = self

    def op(self, *names: str) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
        """Decorator registering a function under one or more names."""

        def deco(fn: Callable[..., Any]) -> Callable[..., Any]:
            for name in names:
                self.register(name, fn)
            return fn

        return deco

    def register(self, name: str, fn: Semantics) -> None:
        """Register ``fn`` as ``name`` (for functions made rather than defined: :func:`specialised`)."""
        if name in self:
            raise ValueError(f"semantics for {name!r} defined twice in {self.package}")
        if not callable(fn):
            raise TypeError(f"semantics for {name!r} in {self.package} is not callable: {fn!r}")
        self[name] = fn

    def ref(self, name: str) -> SemanticRef:
        """The late-bound reference a table row holds (one object per name)."""
        ref = self._refs.get(name)
        if ref is None:
            ref = self._refs[name] = SemanticRef(self.package, name)
        return ref

    def load_all(self) -> SemanticsRegistry:
        """Import every module of the package (they register themselves); return self."""
        import pkgutil  # here: the engine imports this module, and start-up time counts

        self.loaded = True
        for info in pkgutil.iter_modules(self.path):
            if info.name not in self.skip:
                importlib.import_module(f"{self.package}.{info.name}")
        return self

    def lookup(self, name: str) -> Semantics | None:
        """The function registered as ``name`` (loading every module once if needed), or ``None``."""
        fn = self.get(name)
        if fn is None and not self.loaded:
            self.load_all()
            fn = self.get(name)
        return fn

    def resolve(self, name: str) -> Semantics:
        """The function ``name`` runs: registered, else ``missing(name)``, else a ConfigError."""
        fn = self.lookup(name)
        if fn is not None:
            return fn
        if self.missing is not None:
            return self.missing(name)
        raise ConfigError(f"no semantic function registered as {name!r} in {self.package} "
                          f"(known: {len(self)})")


def _registry(package: str) -> SemanticsRegistry:
    registry = _REGISTRIES.get(package)
    if registry is None:
        importlib.import_module(package)  # creating the registry registers it
        registry = _REGISTRIES.get(package)
        if registry is None:
            raise ConfigError(f"package {package} defines no SemanticsRegistry")
    return registry


def _unpickle_ref(package: str, name: str) -> SemanticRef:
    return _registry(package).ref(name)


class SemanticRef:
    """A row's semantic function, named: ``registry[name]``, resolved when first needed.

    Callable (it resolves, then calls), so a decoder used on its own still runs
    instructions; the engine resolves it when it fills the decode cache, so executing
    never goes through it.  Compares and hashes by *(package, name)*.
    """

    __slots__ = ("package", "name", "_fn")

    def __init__(self, package: str, name: str) -> None:
        self.package = package
        self.name = name
        self._fn: Semantics | None = None

    def resolve(self) -> Semantics:
        fn = self._fn
        if fn is None:
            fn = self._fn = _registry(self.package).resolve(self.name)
        return fn

    def __call__(self, agent: Any, ins: Any) -> Any:
        return self.resolve()(agent, ins)

    def __eq__(self, other: object) -> bool:
        return type(other) is SemanticRef and (other.package, other.name) == (self.package, self.name)

    def __hash__(self) -> int:
        return hash((SemanticRef, self.package, self.name))

    def __repr__(self) -> str:
        return f"SemanticRef({self.package!r}, {self.name!r})"

    def __reduce__(self) -> tuple[Any, ...]:
        return (_unpickle_ref, (self.package, self.name))


def resolve(fn: Any) -> Any:
    """``fn`` itself, or the function a :class:`SemanticRef` names."""
    return fn.resolve() if type(fn) is SemanticRef else fn


def swap(ins: Any, variant: str) -> None:
    """In ``Architecture.refine``: make ``ins`` run its row's declared ``variant``.

    The engine refuses a refine that installs a function its row does not declare,
    so the functions a row may run are all listed on it (``tessera semantics``).
    """
    enc = ins.encoding
    fn = enc.variant(variant)
    if fn is None:
        raise ConfigError(f"{enc.mnemonic}: refine asked for variant {variant!r}, which the row "
                          f"does not declare (declared: {', '.join(enc.variant_names) or 'none'})")
    ins.run = resolve(fn)


def specialised(fn: Callable[..., Any], name: str, **constants: Any) -> types.FunctionType:
    """A copy of ``fn`` named ``name`` that sees ``constants`` in place of module globals.

    The copy's globals are a snapshot of ``fn``'s module taken now, with ``constants``
    replacing some of them: make copies after the module has defined everything the
    function uses (at its end), and keep the function free of module state that is
    rebound later.  The fast engine inlines a copy like any function (its constants
    become literals).  ``name`` is also the qualified name, so reports and tracebacks
    tell the copies apart.
    """
    if not isinstance(fn, types.FunctionType):
        raise TypeError(f"specialised() needs a plain function, not {type(fn).__name__}")
    unknown = [k for k in constants if k not in fn.__globals__]
    if unknown:
        raise ValueError(f"{fn.__qualname__}: specialised constants {unknown} are not globals "
                         f"of {fn.__module__}")
    namespace = dict(fn.__globals__)
    namespace.update(constants)
    copy = types.FunctionType(fn.__code__, namespace, name, fn.__defaults__, fn.__closure__)
    copy.__qualname__ = name
    copy.__module__ = fn.__module__
    copy.__doc__ = fn.__doc__
    copy.__dict__.update(fn.__dict__)
    return copy
