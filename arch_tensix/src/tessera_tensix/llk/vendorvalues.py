"""Parameter values tt-llk's own tests give a kernel, for the build's defaults and its messages.

:data:`KERNEL_VALUES` holds, for kernels whose vendor test always passes a value that
differs from the harness's generic default — and whose code asserts on it
(``LLK_ASSERT``) — that value, with the test it comes from; the build uses it unless
``--param`` says otherwise.  :func:`values_used` reads (with :mod:`ast`, never running
anything) which literal values a kernel's tests in ``tests/python_tests`` pass for one
parameter — ``num_rows_to_pack=[1, 16, 50, 64]`` in a ``parametrize``, ``NUM_GUARD_TILES(0)``
— so a build that stops for a parameter with no default can say what the vendor uses.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

#: kernel -> {parameter: the value its vendor test always passes}; the comment cites the test
KERNEL_VALUES: dict[str, dict[str, object]] = {
    # python_tests/helpers/sdpa_bcast_utils.py (used by test_sdpa_bcast_col_srcb_reuse.py): SDPA_NUM_FACES = 2,
    # SDPA_FACE_R_DIM = 8, passed as NUM_FACES(2, 2, 2) and IN_FACE_DIMS(in0_face_r_dim=8, in1_face_r_dim=8);
    # sdpa_bcast_col_srcb_reuse_configure_mop asserts num_faces == 2
    "sdpa_bcast_col_srcb_reuse_test": {"num_faces": 2, "in0_face_r_dim": 8},
    # python_tests/test_sdpa_bcast_col_srca_srcb_reuse.py: NUM_FACES_HOST = 1, passed as NUM_FACES(1, 1, 1)
    "sdpa_bcast_col_srca_srcb_reuse_test": {"num_faces": 1},
}


def kernel_values(kernel: str) -> dict[str, object]:
    """The values the vendor's test of ``kernel`` always passes (empty for most kernels)."""
    return dict(KERNEL_VALUES.get(kernel, {}))


def values_used(python_tests: Path, kernel: str, name: str) -> tuple[list[object], list[str]]:
    """The literal values the tests that name ``tests/sources/<kernel>.cpp`` pass for ``name``
    (sorted, without repeats), and those tests' files (relative to ``python_tests``)."""
    pattern = re.compile(r"(?<![\w/])(?:sources/)?" + re.escape(kernel) + r"\.cpp\b")
    found: set[object] = set()
    files: list[str] = []
    try:
        paths = sorted(python_tests.glob("*.py"))
    except OSError:
        return [], []
    for path in paths:
        try:
            text = path.read_text(errors="replace")
        except OSError:
            continue
        if not pattern.search(text):
            continue
        files.append(path.name)
        try:
            tree = ast.parse(text)
        except SyntaxError:
            continue
        found |= _literals(tree, name)
    return sorted(found, key=lambda v: (str(type(v)), v)), files  # type: ignore[return-value]


def hint(python_tests: Path | None, kernel: str, name: str) -> str:
    """What tt-llk's tests of ``kernel`` pass for ``name`` (``tt-llk's tests/python_tests/test_x.py
    passes 1, 16, 50, 64``), or which tests to read, or ``""`` when none names the kernel."""
    if python_tests is None:
        return ""
    values, files = values_used(python_tests, kernel, name)
    if not files:
        return ""
    shown = "tt-llk's tests/python_tests/" + ", ".join(files[:2]) + (" ..." if len(files) > 2 else "")
    if values:
        listed = ", ".join(str(v).lower() if isinstance(v, bool) else str(v) for v in values[:8])
        return f"{shown} pass{'es' if len(files) == 1 else ''} {listed}"
    return f"see {shown}"


def _literals(tree: ast.Module, name: str) -> set[object]:
    """Values given as ``name.lower()=<literal or list of literals>`` or ``NAME(<literal>)``; a
    module-level ``CONSTANT = <literal>`` given by name counts as its literal."""
    named = {t.id: stmt.value for stmt in tree.body if isinstance(stmt, ast.Assign)
             for t in stmt.targets if isinstance(t, ast.Name)}
    out: set[object] = set()
    lower = name.lower()
    for node in ast.walk(tree):
        if isinstance(node, ast.keyword) and node.arg in (lower, name):
            out |= _constants(node.value, named)
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == name and node.args:
            out |= _constants(node.args[0], named)
    return out


def _constants(expr: ast.AST, named: dict[str, ast.expr]) -> set[object]:
    items = expr.elts if isinstance(expr, ast.List | ast.Tuple | ast.Set) else [expr]
    items = [named.get(i.id, i) if isinstance(i, ast.Name) else i for i in items]
    return {i.value for i in items if isinstance(i, ast.Constant) and isinstance(i.value, int | bool)}
