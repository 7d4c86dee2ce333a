"""Plugins use only the core's public API, and docs/api.md says exactly what that is.

The public API is the modules docs/api.md lists and, in each, the names of its
``__all__``.  Every source file of the plugins in this repository (``arch_*/src``,
``plugins/*/src``, ``conformance/src``, ``tests/toyarch/src``, and the sources the
``tessera new-plugin`` templates generate) is parsed, never imported, and each of
these is a violation reported as ``file:line``:

* ``from M import n`` / ``import M`` where ``M`` is a core module docs/api.md does not
  list (``tessera.engine.blocks``), or ``n`` is not in ``M.__all__`` (a submodule
  ``n`` of ``M`` must itself be listed);
* ``tessera.x`` through a name bound to a core module (``import tessera``) where ``x``
  is neither in that module's ``__all__`` nor a listed submodule;
* ``obj._name`` (or ``getattr(obj, "_name")``) where ``_name`` is an underscore
  attribute the core defines (``_take_trap``, ``_caches``, ``_filler``) and the
  plugin's own package does not: a plugin reaching into a core object.

:data:`KNOWN_EXCEPTIONS` would list uses still waiting for a public seam, each with the
reason; it is empty, as every plugin here now uses the public API only.  An entry that
no longer matches a violation fails the test too, so the list shows exactly what remains.
"""

from __future__ import annotations

import ast
import functools
import importlib
import importlib.util
import re
from collections.abc import Iterable, Iterator
from pathlib import Path

import attrs
import pytest

import tessera
from tessera.cli.newplugin import KINDS, render, substitutions, template_files

ROOT = Path(__file__).resolve().parents[2]
API_PAGE = ROOT / "docs" / "api.md"
CORE = Path(tessera.__file__).parent

#: ``(file relative to the repository, what it uses) -> why`` this use is allowed for now.
KNOWN_EXCEPTIONS: dict[tuple[str, str], str] = {}


# --------------------------------------------------------------------------- the public API

def documented_api(text: str) -> dict[str, list[str]]:
    """``module -> names`` from docs/api.md: ``## `module` `` headings, then ``| `name` |`` rows."""
    api: dict[str, list[str]] = {}
    current: list[str] | None = None
    for line in text.splitlines():
        heading = re.match(r"^##\s+`(tessera(?:\.\w+)*)`\s*$", line)
        if heading:
            current = api.setdefault(heading.group(1), [])
        elif line.startswith("#"):
            current = None
        elif current is not None:
            row = re.match(r"^\|\s*`(\w+)`\s*\|", line)
            if row:
                current.append(row.group(1))
    return api


@pytest.fixture(scope="module")
def api() -> dict[str, list[str]]:
    return documented_api(API_PAGE.read_text(encoding="utf-8"))


@functools.cache
def _is_module(name: str) -> bool:
    try:
        return importlib.util.find_spec(name) is not None
    except (ImportError, ValueError):
        return False


@functools.cache
def _exports(module: str) -> frozenset[str]:
    return frozenset(getattr(importlib.import_module(module), "__all__", ()))


# --------------------------------------------------------------------------- one parsed file

_ATTRIBUTE_FUNCTIONS = frozenset({"getattr", "setattr", "hasattr", "delattr"})


def _private(name: str) -> bool:
    return name.startswith("_") and not (name.startswith("__") and name.endswith("__"))


class Source:
    """One parsed file, walked once: its imports, attribute uses, and the underscore
    attributes it defines (methods, class attributes, ``self._x = ...`` / ``cls._x = ...``,
    ``__slots__`` entries)."""

    def __init__(self, tree: ast.AST, name: str) -> None:
        self.name = name
        self.imports: list[ast.Import | ast.ImportFrom] = []
        self.attributes: list[ast.Attribute] = []
        self.named: list[tuple[ast.Call, str]] = []  # getattr(obj, "name") and friends
        self.defines: set[str] = set()
        for node in ast.walk(tree):
            if isinstance(node, ast.Attribute):
                self.attributes.append(node)
                if isinstance(node.ctx, ast.Store) and isinstance(node.value, ast.Name) \
                        and node.value.id in ("self", "cls"):
                    self.defines.add(node.attr)
            elif isinstance(node, ast.Import | ast.ImportFrom):
                self.imports.append(node)
            elif isinstance(node, ast.Call):
                if isinstance(node.func, ast.Name) and node.func.id in _ATTRIBUTE_FUNCTIONS \
                        and len(node.args) >= 2 and isinstance(node.args[1], ast.Constant) \
                        and isinstance(node.args[1].value, str):
                    self.named.append((node, node.args[1].value))
            elif isinstance(node, ast.ClassDef):
                self._class_body(node)
        self.defines = {n for n in self.defines if _private(n)}

    def _class_body(self, node: ast.ClassDef) -> None:
        for item in node.body:
            if isinstance(item, ast.FunctionDef | ast.AsyncFunctionDef):
                self.defines.add(item.name)
            targets = (item.targets if isinstance(item, ast.Assign) else
                       [item.target] if isinstance(item, ast.AnnAssign) else [])
            for target in targets:
                if isinstance(target, ast.Name):
                    self.defines.add(target.id)
                    if target.id == "__slots__" and isinstance(item.value, ast.Tuple | ast.List):
                        self.defines.update(e.value for e in item.value.elts
                                            if isinstance(e, ast.Constant) and isinstance(e.value, str))

    @classmethod
    def read(cls, path: Path, name: str) -> Source:
        return cls(ast.parse(path.read_text(encoding="utf-8"), filename=str(path)), name)


def _defined(sources: Iterable[Source]) -> set[str]:
    return set().union(*(s.defines for s in sources))


CORE_PRIVATE = frozenset(_defined(Source.read(p, p.name) for p in sorted(CORE.rglob("*.py"))))


# --------------------------------------------------------------------------- the check

@attrs.frozen
class Violation:
    file: str
    line: int
    used: str  # ``tessera.engine.capture.Capture``, ``tessera.engine.blocks``, ``._caches``
    why: str

    def __str__(self) -> str:
        return f"{self.file}:{self.line}: {self.used} ({self.why})"


def _core(module: str) -> bool:
    return module == "tessera" or module.startswith("tessera.")


class Checker:
    """Finds the violations of one source file against ``api``; ``private`` is what the
    plugin's own package defines (its underscore attributes are not the core's)."""

    def __init__(self, api: dict[str, list[str]], private: set[str]) -> None:
        self.api = api
        self.private = private

    def check(self, source: Source) -> list[Violation]:
        found: list[Violation] = []
        modules: dict[str, str] = {}  # local name -> core module it is bound to

        def report(node: ast.AST, used: str, why: str) -> None:
            found.append(Violation(source.name, getattr(node, "lineno", 0), used, why))

        def module_ok(node: ast.AST, module: str) -> bool:
            if module not in self.api:
                report(node, module, "a core module docs/api.md does not list")
                return False
            return True

        def name_ok(node: ast.AST, module: str, name: str) -> str | None:
            """Check ``module.name``; the core module it names, if it is one."""
            if _is_module(f"{module}.{name}"):
                sub = f"{module}.{name}"
                return sub if module_ok(node, sub) else None
            if name.startswith("_") or name not in _exports(module):
                report(node, f"{module}.{name}", f"not in the __all__ of {module}")
            return None

        for node in source.imports:
            if isinstance(node, ast.ImportFrom):
                if node.level or not node.module or not _core(node.module):
                    continue
                if node.module not in self.api:
                    for alias in node.names:
                        report(node, f"{node.module}.{alias.name}",
                               f"imported from {node.module}, a core module docs/api.md does not list")
                    continue
                for alias in node.names:
                    if alias.name == "*":
                        continue
                    sub = name_ok(node, node.module, alias.name)
                    if sub is not None:
                        modules[alias.asname or alias.name] = sub
            else:
                for alias in node.names:
                    if _core(alias.name) and module_ok(node, alias.name):
                        if alias.asname:
                            modules[alias.asname] = alias.name
                        else:
                            modules.setdefault("tessera", "tessera")
        for node in source.attributes:
            chain = self._module_chain(node, modules) if modules else None
            if chain is not None:
                name_ok(node, *chain)
            elif self._reaches_in(node.attr):
                report(node, f".{node.attr}", "an underscore attribute of a core object")
        for call, name in source.named:
            if self._reaches_in(name):
                report(call, f".{name}", "an underscore attribute of a core object")
        return found

    def _reaches_in(self, attr: str) -> bool:
        return attr in CORE_PRIVATE and attr not in self.private

    def _module_chain(self, node: ast.Attribute, modules: dict[str, str]) -> tuple[str, str] | None:
        """``(module, attr)`` when ``node`` is ``attr`` of a core module (``tessera.isa.Field``)."""
        parts = [node.attr]
        value = node.value
        while isinstance(value, ast.Attribute):
            parts.append(value.attr)
            value = value.value
        if not isinstance(value, ast.Name) or value.id not in modules:
            return None
        module = modules[value.id]
        for part in reversed(parts[1:]):  # tessera.isa.Field: walk down to the module that holds Field
            if not _is_module(f"{module}.{part}"):
                return None  # an attribute of a name, reported where that name is read
            module = f"{module}.{part}"
        return module, node.attr


# --------------------------------------------------------------------------- the plugins

def plugin_roots() -> list[Path]:
    roots = [*sorted(ROOT.glob("arch_*/src")), *sorted(ROOT.glob("plugins/*/src")),
             ROOT / "conformance" / "src", ROOT / "tests" / "toyarch" / "src"]
    return [r for r in roots if r.is_dir()]


def _sources(root: Path) -> list[Path]:
    return sorted(p for p in root.rglob("*.py") if "__pycache__" not in p.parts)


def repository_violations(api: dict[str, list[str]]) -> Iterator[Violation]:
    for root in plugin_roots():
        sources = [Source.read(p, p.relative_to(ROOT).as_posix()) for p in _sources(root)]
        checker = Checker(api, _defined(sources))
        for source in sources:
            yield from checker.check(source)


def template_violations(api: dict[str, list[str]]) -> Iterator[Violation]:
    for kind in KINDS:
        values = substitutions("api-check", kind)
        sources = [Source(ast.parse(render(node.read_text(encoding="utf-8"), values)),
                          f"templates/{kind}/{'/'.join(parts)}")
                   for parts, node in template_files(kind)
                   if parts[0] == "src" and parts[-1].endswith(".py.tmpl")]
        checker = Checker(api, _defined(sources))
        for source in sources:
            yield from checker.check(source)


# --------------------------------------------------------------------------- tests

def test_docs_list_each_module_and_exactly_its_all(api):
    assert len(api) >= 10, f"docs/api.md lists too few modules to be read right: {sorted(api)}"
    problems = []
    for module, names in api.items():
        try:
            exports = _exports(module)
        except ImportError as exc:
            problems.append(f"{module}: cannot be imported ({exc})")
            continue
        if not exports:
            problems.append(f"{module}: has no __all__")
        missing = [n for n in sorted(exports) if n not in names]
        extra = [n for n in names if n not in exports]
        duplicated = sorted({n for n in names if names.count(n) > 1})
        if missing:
            problems.append(f"{module}: __all__ names not in docs/api.md: {', '.join(missing)}")
        if extra:
            problems.append(f"{module}: docs/api.md lists names not in its __all__: {', '.join(extra)}")
        if duplicated:
            problems.append(f"{module}: listed twice: {', '.join(duplicated)}")
        mod = importlib.import_module(module)
        absent = [n for n in sorted(exports) if not hasattr(mod, n)]
        if absent:
            problems.append(f"{module}: __all__ names that do not exist: {', '.join(absent)}")
    assert not problems, "\n".join(problems)


def test_plugins_in_this_repository_use_only_the_public_api(api):
    roots = plugin_roots()
    assert len(roots) >= 7, f"expected every plugin's sources, found {roots}"
    seen: set[tuple[str, str]] = set()
    problems = []
    for v in repository_violations(api):
        key = (v.file, v.used)
        if key in KNOWN_EXCEPTIONS:
            seen.add(key)
        else:
            problems.append(str(v))
    assert not problems, "plugins use the core's internals:\n" + "\n".join(problems)
    stale = [f"{file}: {used}" for file, used in KNOWN_EXCEPTIONS if (file, used) not in seen]
    assert not stale, "known exceptions that no longer happen (remove them):\n" + "\n".join(stale)


def test_generated_plugins_use_only_the_public_api(api):
    problems = [str(v) for v in template_violations(api)]
    assert not problems, "the new-plugin templates use the core's internals:\n" + "\n".join(problems)


def test_known_exceptions_give_a_reason():
    assert all(why.strip() for why in KNOWN_EXCEPTIONS.values())


_SAMPLE = '''
import tessera
import tessera.engine.capture
from tessera.engine.blocks import hot_threshold
from tessera.errors import ConfigError, _private_helper
from tessera.isa import Field, description
from tessera import isa as core_isa, plugins

tessera.hookimpl
tessera.machine.Machine
tessera.plugins._default
core_isa.Encoding
core_isa.Nonsense
plugins.PluginHost


class Thread:
    def __init__(self):
        self._mine = 1

    def go(self, cpu, space, trap):
        cpu._take_trap(trap)
        getattr(space, "_caches")
        return self._mine + self.__class__.__name__.count("x")
'''


def test_the_check_finds_each_kind_of_violation(api):
    source = Source(ast.parse(_SAMPLE), "sample.py")
    checker = Checker(api, source.defines)
    found = sorted((v.line, v.used) for v in checker.check(source))
    line = {text: n for n, text in enumerate(_SAMPLE.splitlines(), start=1)}
    assert found == sorted([
        (line["import tessera.engine.capture"], "tessera.engine.capture"),
        (line["from tessera.engine.blocks import hot_threshold"], "tessera.engine.blocks.hot_threshold"),
        (line["from tessera.errors import ConfigError, _private_helper"], "tessera.errors._private_helper"),
        (line["from tessera.isa import Field, description"], "tessera.isa.description"),
        (line["tessera.plugins._default"], "tessera.plugins._default"),
        (line["core_isa.Nonsense"], "tessera.isa.Nonsense"),
        (line["        cpu._take_trap(trap)"], "._take_trap"),
        (line['        getattr(space, "_caches")'], "._caches"),
    ]), found
    assert "_take_trap" in CORE_PRIVATE and "_caches" in CORE_PRIVATE and "_filler" in CORE_PRIVATE


def test_a_violation_reads_as_file_and_line():
    v = Violation("arch_x/src/x/view.py", 12, "._caches", "an underscore attribute of a core object")
    assert str(v) == "arch_x/src/x/view.py:12: ._caches (an underscore attribute of a core object)"
