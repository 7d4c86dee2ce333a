"""Repository layout rules the test run depends on."""

from __future__ import annotations

import collections
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def test_test_module_names_are_unique_across_test_folders():
    # pytest imports test folders without packages by basename: two test_x.py in
    # different plugins would shadow each other (or fail collection).
    paths = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["pytest"]["ini_options"]["testpaths"]
    names = collections.Counter(
        p.name for folder in paths for p in (ROOT / folder).rglob("*.py")
        if p.name not in ("__init__.py", "conftest.py") and "programs" not in p.parts)
    assert [n for n, c in names.items() if c > 1] == []
