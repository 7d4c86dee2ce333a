"""Entry points of installed distributions, read without :mod:`importlib.metadata`.

Why not the standard library: importing :mod:`importlib.metadata` pulls in the
``email`` package, ``zipfile``, ``socket`` and friends, about 50 ms of a command
that should start in a few hundred (``tessera run`` of a tiny program, see
docs/performance.md). Tessera only needs the ``[group]`` sections of each
``entry_points.txt`` and a distribution's name and version, which are plain text.

The semantics follow :func:`importlib.metadata.entry_points`: ``sys.path`` is
searched in order for ``*.dist-info`` and ``*.egg-info`` directories, and a
distribution found twice (same normalised name) counts once, the first one.
Where this reader cannot see what the standard library can (a ``sys.path``
entry that is a zip archive, or a custom finder on ``sys.meta_path``) it hands
the whole search to :mod:`importlib.metadata`, so nothing installed is missed.
"""

from __future__ import annotations

import os
import re
import sys
from collections.abc import Iterable

__all__ = ["EntryPoint", "entry_points"]

_NORMALISE = re.compile(r"[-_.]+")


class EntryPoint:
    """One ``name = value`` line of group ``group`` in distribution ``distribution``."""

    __slots__ = ("name", "value", "group", "distribution", "version")

    def __init__(self, name: str, value: str, group: str, distribution: str, version: str) -> None:
        self.name, self.value, self.group = name, value, group
        self.distribution, self.version = distribution, version

    @property
    def module(self) -> str:
        """The module part of ``module.path[:attr]``."""
        return self.value.partition(":")[0].strip()

    def __repr__(self) -> str:
        return f"EntryPoint({self.name!r}, {self.value!r}, group={self.group!r}, distribution={self.distribution!r})"


def _normalise(name: str) -> str:
    return _NORMALISE.sub("-", name).lower()


def _parse_sections(text: str, groups: frozenset[str]) -> dict[str, list[tuple[str, str]]]:
    """The ``name = value`` pairs of the wanted ``[group]`` sections of an INI text."""
    found: dict[str, list[tuple[str, str]]] = {}
    current: list[tuple[str, str]] | None = None
    for raw in text.splitlines():
        line = raw.strip()
        if not line or line[0] in "#;":
            continue
        if line.startswith("[") and line.endswith("]"):
            group = line[1:-1].strip()
            current = found.setdefault(group, []) if group in groups else None
            continue
        if current is not None and "=" in line:
            name, _, value = line.partition("=")
            current.append((name.strip(), value.strip()))
    return found


def _headers(path: str) -> tuple[str, str]:
    """``(Name, Version)`` from a METADATA / PKG-INFO file (the header block only)."""
    name = version = ""
    try:
        with open(path, encoding="utf-8", errors="replace") as stream:
            for line in stream:
                if not line.strip():
                    break
                key, _, value = line.partition(":")
                key = key.lower()
                if key == "name":
                    name = value.strip()
                elif key == "version":
                    version = value.strip()
                if name and version:
                    break
    except OSError:
        pass
    return name, version


def _standard_path_only() -> bool:
    """Whether the plain ``sys.path`` scan sees everything ``importlib.metadata`` would."""
    for finder in sys.meta_path:
        module = type(finder).__module__ if not isinstance(finder, type) else finder.__module__
        if hasattr(finder, "find_distributions") and not module.startswith(("_frozen_importlib", "importlib")):
            return False  # a custom finder contributes distributions of its own
    return True


def entry_points(groups: Iterable[str]) -> list[EntryPoint]:
    """Every entry point of ``groups`` across the installed distributions, in ``sys.path`` order."""
    wanted = frozenset(groups)
    if not _standard_path_only():
        return _from_importlib(wanted)
    seen: set[str] = set()
    result: list[EntryPoint] = []
    for entry in sys.path:
        directory = entry or "."
        if os.path.isfile(directory):  # a zip archive on the path: let the standard library read it
            return _from_importlib(wanted)
        try:
            names = sorted(os.listdir(directory))
        except OSError:
            continue
        for name in names:
            if name.endswith(".dist-info"):
                meta = "METADATA"
            elif name.endswith(".egg-info"):
                meta = "PKG-INFO"
            else:
                continue
            stem = name.rpartition(".")[0]
            key = _normalise(stem.partition("-")[0])
            if key in seen:
                continue
            seen.add(key)
            folder = os.path.join(directory, name)
            try:
                with open(os.path.join(folder, "entry_points.txt"), encoding="utf-8", errors="replace") as stream:
                    text = stream.read()
            except OSError:
                continue
            sections = _parse_sections(text, wanted)
            if not sections:
                continue
            dist, version = _headers(os.path.join(folder, meta))
            for group, pairs in sections.items():
                for ep_name, value in pairs:
                    result.append(EntryPoint(ep_name, value, group, dist or stem.partition("-")[0], version or "-"))
    return result


def _from_importlib(wanted: frozenset[str]) -> list[EntryPoint]:
    import importlib.metadata as md

    result = []
    for group in sorted(wanted):
        for ep in md.entry_points(group=group):
            dist = getattr(ep, "dist", None)
            result.append(EntryPoint(ep.name, ep.value, group,
                                     dist.metadata["Name"] if dist is not None else "-",
                                     dist.version if dist is not None else "-"))
    return result
