"""Which chips tt-llk's own tests run a kernel on, read from ``tests/python_tests``.

The vendor marks tests that a chip does not support: the ``conftest`` markers
``skip_for_wormhole``, ``skip_for_blackhole``, ``wormhole_only``, ``blackhole_only``
(``quasar_only``, ``skip_for_quasar``) on a test function or as the module's
``pytestmark``, ``pytest.mark.skipif(<chip test>)``, or a first-level ``if <chip
test>: pytest.skip(...)`` in the test's body.  :func:`chips_of` reads the test modules
(``test_*.py``, ``perf_*.py``, ``fused_*.py``: the harness's ``pytest.ini``) with
:mod:`ast` — never importing or running them — and attributes every literal
``sources/<kernel>.cpp`` to the test functions that use it (in the test itself, its
decorators, or a module-level constant or helper it names).

It only answers when the answer is certain: a kernel named anywhere that cannot be
attributed to a test function (another module, a class, a computed name) or used by
no test gets ``None`` (no verdict), and a skip whose condition is not a pure chip test
(``if chip == WORMHOLE and fmt == ...``) does not count as a chip exclusion.  So a
kernel is reported as not for a chip only when every vendor test that uses it skips
that chip; the build then stops with :class:`UnsupportedChip` (exit status 80).
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

from tessera.errors import ConfigError

#: the chips of the harness's ChipArchitecture enum, by tessera's names
ENUM = {"BLACKHOLE": "blackhole", "WORMHOLE": "wormhole_b0", "QUASAR": "quasar"}
ALL = frozenset(ENUM.values())
#: conftest markers -> the chips each one skips
MARKERS = {"skip_for_wormhole": frozenset({"wormhole_b0"}), "skip_for_blackhole": frozenset({"blackhole"}),
           "skip_for_quasar": frozenset({"quasar"}), "wormhole_only": ALL - {"wormhole_b0"},
           "blackhole_only": ALL - {"blackhole"}, "quasar_only": ALL - {"quasar"}}
_TEST_FILES = re.compile(r"^(test_|perf_|fused_).*\.py$")
_IMPORTS = re.compile(r"^\s*(?:from|import)\s+(\w+)", re.M)


@dataclass(frozen=True)
class TestUse:
    """One vendor test function that uses a kernel, and the chips it runs on."""

    file: str           # relative to tests/python_tests
    function: str
    chips: frozenset[str]
    marks: tuple[tuple[str, frozenset[str]], ...]   # each skip as written, with the chips it skips

    @property
    def where(self) -> str:
        return f"{self.file}::{self.function}"


@dataclass(frozen=True)
class Verdict:
    """The chips tt-llk's tests run ``kernel`` on, and the tests that say so."""

    kernel: str
    chips: frozenset[str]
    tests: tuple[TestUse, ...]

    def supports(self, chip: str) -> bool:
        return chip in self.chips

    def refusal(self, chip: str) -> str:
        """One line: tt-llk's tests do not run the kernel on ``chip``; which tests, how they say so."""
        others = sorted(self.chips - {"quasar"})
        marks = sorted({text for t in self.tests for text, skipped in t.marks if chip in skipped})
        files = sorted({t.file for t in self.tests})
        on = f"on {' and '.join(others)} only, not on {chip}" if others else "on no chip tessera models"
        shown = ", ".join(files[:3]) + (f" and {len(files) - 3} more" if len(files) > 3 else "")
        how = f": {', '.join(marks)}" if marks else ""
        return (f"tt-llk's own tests run {self.kernel} {on} (tests/python_tests/{shown}{how}); "
                "--force-chip builds it anyway")


class UnsupportedChip(ConfigError):
    """A kernel the vendor does not build or test for the chip asked for (exit status 80).

    A configuration error of its own so that scripts running many kernels on both chips
    can tell "not for this chip" from a build that failed (64)."""

    exit_code = 80
    kind = "unsupported chip"


def chips_of(python_tests: Path, kernel: str) -> Verdict | None:
    """The chips tt-llk's tests run ``tests/sources/<kernel>.cpp`` on, or None when that
    cannot be told for certain (see the module docstring)."""
    return _chips_of(str(python_tests), kernel)


@lru_cache(maxsize=256)
def _chips_of(root_text: str, kernel: str) -> Verdict | None:
    root = Path(root_text)
    pattern = re.compile(r"(?<![\w/])(?:sources/)?" + re.escape(kernel) + r"\.cpp\b")
    uses: list[TestUse] = []
    texts: dict[Path, str] = {}
    for path in sorted(root.rglob("*.py")):
        try:
            texts[path] = path.read_text(errors="replace")
        except OSError:
            return None
    imported = {m for text in texts.values() for m in _IMPORTS.findall(text)}
    for path, text in texts.items():
        if not pattern.search(text):
            continue
        try:
            tree = ast.parse(text)
        except SyntaxError:
            return None
        found = _strings(tree, pattern)
        if not found:
            continue
        if not _TEST_FILES.match(path.name):
            return None                          # named outside a test module: cannot be attributed
        module_uses, attributed, direct = _module(tree, pattern, str(path.relative_to(root)))
        if found - attributed:
            return None                          # a use no test function can be tied to
        if path.stem in imported and found - direct:
            return None                          # a helper or constant other modules may import and use
        uses.extend(module_uses)
    if not uses:
        return None
    chips = frozenset().union(*(u.chips for u in uses))
    return Verdict(kernel=kernel, chips=chips, tests=tuple(uses))


def _strings(node: ast.AST, pattern: re.Pattern[str]) -> set[int]:
    """ids of the string constants under ``node`` that name the kernel (docstrings left out)."""
    docstrings = {id(n.value) for n in ast.walk(node) if isinstance(n, ast.Expr) and isinstance(n.value, ast.Constant)}
    return {id(n) for n in ast.walk(node) if isinstance(n, ast.Constant) and isinstance(n.value, str)
            and id(n) not in docstrings and pattern.search(n.value)}


def _module(tree: ast.Module, pattern: re.Pattern[str], file: str) -> tuple[list[TestUse], set[int], set[int]]:
    """The test functions of one module that use the kernel, the constants they account for,
    and those of them written in a test function itself."""
    defs: dict[str, list[ast.AST]] = {}
    tests: list[ast.FunctionDef | ast.AsyncFunctionDef] = []
    module_skip: set[str] = set()
    module_marks: list[tuple[str, frozenset[str]]] = []
    for stmt in tree.body:
        if isinstance(stmt, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            defs.setdefault(stmt.name, []).append(stmt)
            if stmt.name.startswith("test") and not isinstance(stmt, ast.ClassDef):
                tests.append(stmt)
            continue
        if isinstance(stmt, ast.Assign) and any(isinstance(t, ast.Name) and t.id == "pytestmark"
                                                for t in stmt.targets):
            skip, marks = _marks(stmt.value)
            module_skip |= skip
            module_marks += [(f"pytestmark {text}", chips) for text, chips in marks]
        # any other module-level statement (assignments, loops that fill a list ...) belongs
        # to every name it mentions: a test naming one of them may use what it holds
        for mentioned in {n.id for n in ast.walk(stmt) if isinstance(n, ast.Name)}:
            defs.setdefault(mentioned, []).append(stmt)
    uses, attributed, direct = [], set(), set()
    for node in tests:
        fname = node.name
        reach = _reachable(node, defs, {id(t) for t in tests})
        found = set().union(*(_strings(n, pattern) for n in reach))
        if not found:
            continue
        attributed |= found
        direct |= _strings(node, pattern)
        skip, marks = set(module_skip), list(module_marks)
        for dec in node.decorator_list:
            s, m = _marks(dec)
            skip |= s
            marks += m
        s, m = _body_skips(node)
        skip |= s
        marks += m
        uses.append(TestUse(file=file, function=fname, chips=ALL - frozenset(skip), marks=tuple(marks)))
    return uses, attributed, direct


def _reachable(node: ast.AST, defs: dict[str, list[ast.AST]], tests: set[int]) -> list[ast.AST]:
    """``node`` and the module-level statements that define or mention the names it uses,
    transitively (other tests left out)."""
    seen, todo, out = set(), [node], []
    while todo:
        current = todo.pop()
        if id(current) in seen or (current is not node and id(current) in tests):
            continue
        seen.add(id(current))
        out.append(current)
        for n in ast.walk(current):
            if isinstance(n, ast.Name):
                todo.extend(defs.get(n.id, ()))
    return out


def _marks(expr: ast.AST) -> tuple[set[str], list[tuple[str, frozenset[str]]]]:
    """Chips a marker expression (a conftest marker, a list of them, a chip ``skipif``) skips."""
    if isinstance(expr, ast.List | ast.Tuple):
        skip: set[str] = set()
        marks: list[tuple[str, frozenset[str]]] = []
        for item in expr.elts:
            s, m = _marks(item)
            skip |= s
            marks += m
        return skip, marks
    name = expr.id if isinstance(expr, ast.Name) else expr.attr if isinstance(expr, ast.Attribute) else None
    if name in MARKERS:
        return set(MARKERS[name]), [(name, MARKERS[name])]
    if isinstance(expr, ast.Call) and _dotted(expr.func).endswith("skipif") and expr.args:
        chips = _chip_test(expr.args[0])
        if chips is not None:
            return set(chips), [(f"skipif on {'/'.join(sorted(chips))}", frozenset(chips))]
    return set(), []


def _body_skips(func: ast.FunctionDef | ast.AsyncFunctionDef) -> tuple[set[str], list[tuple[str, frozenset[str]]]]:
    """Chips skipped by a first-level ``if <chip test>: pytest.skip(...)`` of the test's body."""
    skip: set[str] = set()
    marks: list[tuple[str, frozenset[str]]] = []
    for stmt in func.body:
        if not isinstance(stmt, ast.If) or stmt.orelse:
            continue
        skips = any(isinstance(s, ast.Expr) and isinstance(s.value, ast.Call)
                    and _dotted(s.value.func) in ("pytest.skip", "skip") for s in stmt.body)
        chips = _chip_test(stmt.test) if skips else None
        if chips:
            skip |= chips
            marks.append((f"pytest.skip on {'/'.join(sorted(chips))}", frozenset(chips)))
    return skip, marks


def _chip_test(expr: ast.AST) -> set[str] | None:
    """The chips for which ``expr`` is true, when it tests nothing but the chip; else None."""
    if isinstance(expr, ast.BoolOp):
        parts = [_chip_test(v) for v in expr.values]
        if any(p is None for p in parts):
            return None
        sets = [p for p in parts if p is not None]
        return set.intersection(*sets) if isinstance(expr.op, ast.And) else set.union(*sets)
    if isinstance(expr, ast.UnaryOp) and isinstance(expr.op, ast.Not):
        inner = _chip_test(expr.operand)
        return None if inner is None else set(ALL) - inner
    if not isinstance(expr, ast.Compare) or len(expr.ops) != 1:
        return None
    left, right, op = expr.left, expr.comparators[0], expr.ops[0]
    if _is_chip(right) and not _is_chip(left):
        left, right = right, left
    if not _is_chip(left):
        return None
    values = _enum_values(right)
    if values is None:
        return None
    if isinstance(op, ast.Eq | ast.In | ast.Is):
        return values
    if isinstance(op, ast.NotEq | ast.NotIn | ast.IsNot):
        return set(ALL) - values
    return None


def _is_chip(expr: ast.AST) -> bool:
    """``get_chip_architecture()`` or ``TestConfig.CHIP_ARCH``."""
    if isinstance(expr, ast.Call) and not expr.args and _dotted(expr.func).endswith("get_chip_architecture"):
        return True
    return isinstance(expr, ast.Attribute) and expr.attr == "CHIP_ARCH"


def _enum_values(expr: ast.AST) -> set[str] | None:
    """``ChipArchitecture.X`` or a tuple/list/set of them, as chip names."""
    items = expr.elts if isinstance(expr, ast.Tuple | ast.List | ast.Set) else [expr]
    out = set()
    for item in items:
        if not (isinstance(item, ast.Attribute) and item.attr in ENUM
                and _dotted(item.value).endswith("ChipArchitecture")):
            return None
        out.add(ENUM[item.attr])
    return out


def _dotted(expr: ast.AST) -> str:
    if isinstance(expr, ast.Name):
        return expr.id
    if isinstance(expr, ast.Attribute):
        return f"{_dotted(expr.value)}.{expr.attr}"
    return ""
