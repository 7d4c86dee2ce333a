"""The core's layer order, checked: a unit imports only units of lower layers.

A *unit* is a subpackage of ``tessera`` (``tessera.engine``, ``tessera.isa``, ...) or one
of its top-level modules (``tessera.errors``, ``tessera.plugins``, ...); ``tessera``
itself is the package's ``__init__``.  :data:`LAYERS` places every unit in a layer,
bottom first, and a module may import a module of another unit only if that unit's
layer is strictly lower.  Every import statement counts, wherever it is: at module
level, inside a function (a lazy import is still a dependency, just a later one) or
under ``if TYPE_CHECKING`` (a type is a dependency too).  The only way past a rule is
an entry in :data:`EXCEPTIONS`, one importing module and one imported module with the
reason it is allowed; an entry that no longer matches an import fails the test too, so
the list cannot rot.  Imports written as strings (``importlib.import_module``) are not
seen.  docs/architecture.md ("Layers") shows the same table.
"""

from __future__ import annotations

import ast
import re
import textwrap
from pathlib import Path

import attrs

import tessera

CORE = Path(tessera.__file__).parent
DOC = Path(__file__).resolve().parents[2] / "docs" / "architecture.md"

#: The core's layers, bottom first: ``(name, units)``.  A unit may import the units of
#: the layers before its own, never its own layer's other units or a later layer's.
LAYERS: list[tuple[str, frozenset[str]]] = [
    # Nothing of Tessera: the error hierarchy and its exit statuses, the version and
    # plugin-API numbers, and the small types two layers that must not know each
    # other both name (Endian for isa and memory; HookCall made by plugins, called by
    # engine and machine).  Everything may use them.
    ("foundation", frozenset({"types", "errors", "version"})),
    # Services with no model of a machine: the control-flow signals semantic functions
    # raise (Halt, Trap, WaitFor), settings of architectures and boards, logging,
    # progress bars, reading entry points, the generic state-to-text renderer, and the
    # package's __init__ (the version only, so ``import tessera`` stays cheap).
    ("services", frozenset({"tessera", "control", "settings", "logs", "progress", "entrypoints",
                            "dumptext"})),
    # The three models the engine combines, each ignorant of the others: an
    # architecture as data (isa: description, decoder, encoder, assembler), memory as
    # regions in address spaces, sync objects agents wait on.  isa must not need memory
    # (Endian comes from types); memory must not need the engine (its decode caches
    # are the engine's, seen through the CodeCache protocol).
    ("models", frozenset({"isa", "memory", "sync"})),
    # The contract semantic functions are written against: no_inline and the rules the
    # fast engine relies on.  Plugins import it, the engine reads its marker.
    # protocols: the typing.Protocol classes of what hooks receive (a machine, an agent,
    # an instruction, an architecture, the host).  They name the models' types (Trap,
    # AddressSpace, Encoding), so they sit above them, and below the engine and the
    # machine, which name their callers through them (the machine's HostLike).
    ("semantics", frozenset({"semantics", "protocols"})),
    # Running instructions: agents, the decode-cache fill, blocks and their
    # translation.  It calls plugins through HookCall lists handed down by the
    # machine, so it never imports the plugin host.
    ("engine", frozenset({"engine"})),
    # A machine: agents, address spaces and sync objects scheduled together, its clock,
    # limits and snapshots.  It builds on the engine and receives resolved hook lists
    # from the host above it (Machine.hook_calls).
    ("machine", frozenset({"machine"})),
    # Putting programs (ELF, raw, words, assembly) into a machine's memory: loaders take
    # a machine and the isa's assembler.
    ("loaders", frozenset({"loaders"})),
    # The hook specifications name the types of every layer below in their signatures.
    ("hookspecs", frozenset({"hookspecs"})),
    # The plugin host: discovery, loading and calling plugins by the hookspecs; it
    # resolves the hook lists the machine and the engine call.
    ("plugins", frozenset({"plugins"})),
    # Glue a front end uses: pick an architecture (by name through a host, or from an
    # ELF), load a program, render state.
    ("session", frozenset({"session"})),
    # Benchmarks: run workloads on machines under minimal hosts and report.
    ("bench", frozenset({"bench"})),
    # Batch runs: many ``tessera run`` specifications on local processes or a Dask
    # cluster.  Workers build machines and load programs like a front end (session).
    ("batch", frozenset({"batch"})),
    # The command line presents everything, the bench and batch runs included.
    ("cli", frozenset({"cli"})),
]

#: ``(importing module, imported module) -> why`` this upward import is allowed.
EXCEPTIONS: dict[tuple[str, str], str] = {
    ("tessera.machine.snapshot", "tessera.plugins"):
        "Machine.restore(data) without a host checks the snapshot against every installed "
        "plugin: snapshot.Registry builds that host on demand (lazily, so only a restore "
        "pays for it).  Removing it means every caller passes a host, an API change.",
    ("tessera.semantics", "tessera.engine.inline"):
        "inline_report() answers with the engine's own inlining checks, imported only when "
        "asked (tessera semantics); the rules and no_inline, which plugins and the engine "
        "import, need nothing above them.",
}

#: Top-level packages of plugin distributions: the core names none of them (it knows
#: no architecture and no tool).
PLUGIN_PACKAGE = re.compile(r"tessera_\w+")


@attrs.frozen
class Import:
    """One imported module, as one statement of ``importer`` names it."""

    importer: str
    target: str
    line: int
    lazy: bool  # inside a function (or a class body): imported when that code runs


def unit_of(module: str, package: str = "tessera") -> str | None:
    """The unit of a core module (``tessera.engine.cpu`` → ``engine``), ``None`` outside."""
    if module == package:
        return package
    if module.startswith(package + "."):
        return module.split(".")[1]
    return None


def module_names(root: Path, package: str) -> dict[str, Path]:
    """Every module of the package rooted at ``root``: dotted name → file."""
    out = {}
    for path in sorted(root.rglob("*.py")):
        parts = [package, *path.relative_to(root).with_suffix("").parts]
        if parts[-1] == "__init__":
            parts.pop()
        out[".".join(parts)] = path
    return out


def _targets(node: ast.Import | ast.ImportFrom, module: str, is_package: bool,
             known: set[str]) -> list[str]:
    """The modules one import statement imports (a ``from`` import of a submodule names it)."""
    if isinstance(node, ast.Import):
        return [alias.name for alias in node.names]
    if node.level:
        base = module.split(".") if is_package else module.split(".")[:-1]
        base = base[:len(base) - (node.level - 1)]
        source = ".".join(base + ([node.module] if node.module else []))
    else:
        source = node.module or ""
    found = [f"{source}.{alias.name}" for alias in node.names if f"{source}.{alias.name}" in known]
    if len(found) < len(node.names):
        found.insert(0, source)  # some names are attributes of ``source`` itself
    return found


def imports_of(module: str, source: str, *, is_package: bool, known: set[str]) -> list[Import]:
    """Every import in ``source`` (module ``module``), at any depth, with its line."""
    found: list[Import] = []

    def visit(node: ast.AST, lazy: bool) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.Import | ast.ImportFrom):
                for target in _targets(child, module, is_package, known):
                    found.append(Import(module, target, child.lineno, lazy))
            inner = lazy or isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda
                                       | ast.ClassDef)
            visit(child, inner)

    visit(ast.parse(source), False)
    return found


def import_graph(root: Path, package: str = "tessera") -> list[Import]:
    """The imports of every module of the package at ``root``."""
    modules = module_names(root, package)
    known = set(modules)
    out = []
    for name, path in modules.items():
        out += imports_of(name, path.read_text(encoding="utf-8"),
                          is_package=path.name == "__init__.py", known=known)
    return out


def violations(imports: list[Import], layers: list[tuple[str, frozenset[str]]],
               exceptions: dict[tuple[str, str], str], package: str = "tessera") -> list[str]:
    """What breaks the layer order: upward or sideways imports, plugin packages, an
    unplaced unit, a unit placed twice, and exceptions that match no import."""
    rank: dict[str, int] = {}
    problems = []
    for i, (layer, units) in enumerate(layers):
        for unit in sorted(units):
            if unit in rank:
                problems.append(f"unit {unit} is placed in two layers ({layers[rank[unit]][0]} and {layer})")
            rank[unit] = i
    used: set[tuple[str, str]] = set()
    unplaced: set[str] = set()
    for imp in imports:
        src = unit_of(imp.importer, package)
        if src is None:
            continue
        dst = unit_of(imp.target, package)
        where = f"{imp.importer}:{imp.line}{' (lazy)' if imp.lazy else ''}"
        if dst is None:
            if not PLUGIN_PACKAGE.fullmatch(imp.target.split(".")[0]):
                continue  # the standard library or a third-party package
            if (imp.importer, imp.target) in exceptions:
                used.add((imp.importer, imp.target))
                continue
            problems.append(f"{where} imports {imp.target}: the core imports no plugin package")
            continue
        for unit in (src, dst):
            if unit not in rank and unit not in unplaced:
                unplaced.add(unit)
                problems.append(f"unit {unit} is in no layer: place it in LAYERS (and docs/architecture.md)")
        if src == dst or src not in rank or dst not in rank or rank[dst] < rank[src]:
            continue
        if (imp.importer, imp.target) in exceptions:
            used.add((imp.importer, imp.target))
            continue
        direction = "its own layer's" if rank[dst] == rank[src] else "a higher layer's"
        problems.append(f"{where} imports {imp.target}: {src} ({layers[rank[src]][0]}) may not "
                        f"import {direction} {dst} ({layers[rank[dst]][0]})")
    for pair in sorted(set(exceptions) - used):
        problems.append(f"exception {pair[0]} -> {pair[1]} matches no import any more: remove it")
    return problems


# --------------------------------------------------------------------------- the real core


def test_the_core_keeps_its_layer_order() -> None:
    problems = violations(import_graph(CORE), LAYERS, EXCEPTIONS)
    assert problems == [], "\n".join(problems)


def test_every_unit_of_the_core_is_placed() -> None:
    units = {unit_of(name) for name in module_names(CORE, "tessera")}
    placed = set().union(*(units for _, units in LAYERS))
    assert units == placed


def test_the_fixed_upward_imports_stay_gone() -> None:
    """The three crossings issue 14 removed, named so a regression reads plainly."""
    edges = {(unit_of(i.importer), unit_of(i.target)) for i in import_graph(CORE)}
    assert ("isa", "memory") not in edges         # Endian lives in tessera.types
    assert ("engine", "plugins") not in edges     # hook lists arrive as HookCall
    assert ("memory", "engine") not in edges      # DecodeCache lives in tessera.engine


def test_docs_show_the_same_layers() -> None:
    """docs/architecture.md's layer table: one row per layer, bottom first, naming its units."""
    text = DOC.read_text(encoding="utf-8")
    assert "tests/core/test_layering.py" in text
    section = text.split("## Layers", 1)[1].split("\n## ", 1)[0]
    rows = [line for line in section.splitlines() if re.match(r"\| *\d+\. ", line)]
    assert len(rows) == len(LAYERS)
    for row, (layer, units) in zip(rows, LAYERS, strict=True):
        assert layer in row.split("|")[1], row
        named = {unit_of(name) for name in re.findall(r"`(tessera[\w.]*)`", row)}
        assert units <= named, (layer, row)


# --------------------------------------------------------------------------- the checker

TOY_LAYERS = [("low", frozenset({"errors"})), ("middle", frozenset({"memory"})),
              ("high", frozenset({"engine", "tools"})), ("top", frozenset({"cli"}))]


def _graph(tmp_path: Path, files: dict[str, str]) -> list[Import]:
    root = tmp_path / "pkg"
    for name, source in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(source), encoding="utf-8")
    return import_graph(root, "pkg")


def _toy(tmp_path: Path, space: str) -> list[Import]:
    return _graph(tmp_path, {
        "__init__.py": "",
        "errors.py": "",
        "memory/__init__.py": "from pkg.memory.space import Space\n",
        "memory/space.py": space,
        "engine/__init__.py": "",
        "engine/cpu.py": "from pkg.memory import space\nfrom ..errors import Oops\n",
        "cli/main.py": "import pkg.engine.cpu\n",
    })


def test_a_downward_graph_passes(tmp_path: Path) -> None:
    graph = _toy(tmp_path, "from pkg.errors import Oops\nclass Space: ...\n")
    assert ("pkg.engine.cpu", "pkg.errors") in {(i.importer, i.target) for i in graph}  # relative
    assert violations(graph, TOY_LAYERS, {}, "pkg") == []


def test_an_upward_import_fails_wherever_it_is(tmp_path: Path) -> None:
    top = _toy(tmp_path / "a", "from pkg.engine import cpu\n")
    assert violations(top, TOY_LAYERS, {}, "pkg") == [
        "pkg.memory.space:1 imports pkg.engine.cpu: memory (middle) may not import a higher "
        "layer's engine (high)"]
    lazy = _toy(tmp_path / "b", """
        class Space:
            def fill(self):
                from .. import engine
                return engine
        """)
    assert violations(lazy, TOY_LAYERS, {}, "pkg") == [
        "pkg.memory.space:4 (lazy) imports pkg.engine: memory (middle) may not import a higher "
        "layer's engine (high)"]
    typing_only = _toy(tmp_path / "c", """
        from typing import TYPE_CHECKING
        if TYPE_CHECKING:
            import pkg.cli.main
        """)
    assert [p.split(":")[0] for p in violations(typing_only, TOY_LAYERS, {}, "pkg")] == ["pkg.memory.space"]


def test_same_layer_units_may_not_import_each_other(tmp_path: Path) -> None:
    graph = _toy(tmp_path, "")
    graph.append(Import("pkg.engine.cpu", "pkg.tools.probe", 9, False))
    assert violations(graph, TOY_LAYERS, {}, "pkg") == [
        "pkg.engine.cpu:9 imports pkg.tools.probe: engine (high) may not import its own layer's "
        "tools (high)"]


def test_an_exception_allows_one_import_and_must_stay_used(tmp_path: Path) -> None:
    graph = _toy(tmp_path, "def later():\n    from pkg.engine import cpu\n")
    allowed = {("pkg.memory.space", "pkg.engine.cpu"): "a reason"}
    assert violations(graph, TOY_LAYERS, allowed, "pkg") == []
    clean = _toy(tmp_path / "clean", "")
    assert violations(clean, TOY_LAYERS, allowed, "pkg") == [
        "exception pkg.memory.space -> pkg.engine.cpu matches no import any more: remove it"]


def test_plugin_packages_and_unplaced_units_fail(tmp_path: Path) -> None:
    graph = _toy(tmp_path, "import numpy\nimport tessera_riscv.hart\n")
    graph += _graph(tmp_path / "more", {"loaders/elf.py": "from pkg.errors import Oops\n"})
    assert violations(graph, TOY_LAYERS, {}, "pkg") == [
        "pkg.memory.space:2 imports tessera_riscv.hart: the core imports no plugin package",
        "unit loaders is in no layer: place it in LAYERS (and docs/architecture.md)"]
    twice = [*TOY_LAYERS, ("top", frozenset({"memory"}))]
    assert "unit memory is placed in two layers (middle and top)" in violations([], twice, {}, "pkg")
