"""A registry of semantic functions by name, for architectures whose tables bind late.

Large architectures keep their semantic functions in several modules and their
encoding table in another; each semantics module registers its functions by name
(``@SEMANTICS.op("add")``) and the table looks names up, so the two can be read and
grown separately.  ``load_all`` imports every module of the semantics package so the
registry is complete before anyone checks it.
"""

from __future__ import annotations

import importlib
import pkgutil
from collections.abc import Callable, Iterable
from typing import Any

Semantics = Callable[[Any, Any], Any]


class SemanticsRegistry(dict[str, Semantics]):
    """``name → semantic function``; registering a name twice is an error."""

    def __init__(self, package: str, path: Iterable[str], skip: Iterable[str] = ()) -> None:
        super().__init__()
        self.package = package
        self.path = list(path)
        self.skip = frozenset(skip)

    def op(self, *names: str) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
        """Decorator registering a function under one or more names."""

        def deco(fn: Callable[..., Any]) -> Callable[..., Any]:
            for name in names:
                if name in self:
                    raise ValueError(f"semantics for {name!r} defined twice")
                self[name] = fn
            return fn

        return deco

    def load_all(self) -> SemanticsRegistry:
        """Import every module of the package (they register themselves); return self."""
        for info in pkgutil.iter_modules(self.path):
            if info.name not in self.skip:
                importlib.import_module(f"{self.package}.{info.name}")
        return self
