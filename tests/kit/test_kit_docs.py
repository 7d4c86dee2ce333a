"""docs/writing-plugins.md: every hook is shown, every link resolves, the steps match the kit.

Its ```python blocks are run by tests/docs/test_docs.py like every other page's.
"""

from __future__ import annotations

import inspect
import re
from pathlib import Path

from tessera import hookspecs
from tessera.cli.newplugin import KINDS

ROOT = Path(__file__).resolve().parents[2]
DOCS = ROOT / "docs"
PAGE = DOCS / "writing-plugins.md"


def _anchor(heading: str) -> str:
    """GitHub's anchor for a heading: lowercase, punctuation dropped, spaces to '-'."""
    text = heading.strip().lower().replace("`", "")
    text = re.sub(r"[^\w\- ]", "", text)
    return text.replace(" ", "-")


def _anchors(path: Path) -> set[str]:
    text = re.sub(r"^```.*?^```", "", path.read_text(encoding="utf-8"), flags=re.MULTILINE | re.DOTALL)
    return {_anchor(m.group(1)) for m in re.finditer(r"^#{1,6}\s+(.+?)\s*$", text, re.MULTILINE)}


def _links(text: str) -> list[str]:
    return re.findall(r"\]\(([^)\s]+)\)", text)


def test_every_hookspec_is_shown_with_a_link_to_its_example():
    text = PAGE.read_text(encoding="utf-8")
    specs = [name for name, _ in inspect.getmembers(hookspecs, inspect.isfunction)
             if name.startswith("tessera_")]
    missing = [name for name in specs if f"(hooks.md#{name})" not in text]
    assert not missing, f"docs/writing-plugins.md does not link the example of: {', '.join(missing)}"
    hook_anchors = _anchors(DOCS / "hooks.md")
    assert all(name in hook_anchors for name in specs)


def test_every_link_resolves():
    text = PAGE.read_text(encoding="utf-8")
    broken = []
    for link in _links(text):
        if link.startswith(("http://", "https://", "mailto:")):
            continue
        target, _, anchor = link.partition("#")
        path = PAGE if not target else (PAGE.parent / target).resolve()
        if not path.exists():
            broken.append(f"{link} (no such file)")
        elif anchor and path.suffix == ".md" and anchor not in _anchors(path):
            broken.append(f"{link} (no such heading)")
    assert not broken, "broken links in docs/writing-plugins.md: " + ", ".join(broken)


def test_it_walks_through_the_whole_kit():
    text = PAGE.read_text(encoding="utf-8")
    for needle in ["tessera new-plugin NAME [--kind arch|tool] [--dir PATH]", "pip install -e",
                   "tessera plugins", "tessera demo --arch mini", "Encoding(", "Field(", "def build(machine)",
                   "Example", "tessera_conformance_cases", "TESSERA_CONFORMANCE", "capabilities",
                   "xfail", "modifies_state", "pytest --pyargs tessera_conformance --tessera-plugin mini",
                   "tox -e conformance", "twine upload"]:
        assert needle in text, needle
    for kind in KINDS:
        assert f"--kind {kind}" in text
