"""The documentation is tested: every ```python block in docs/*.md runs, and the
reference pages cover every hook and every exit code.

Each ```python block is executed on its own in a fresh namespace (blocks do not
share names), so every example must be self-contained.  A block that is meant to be
read rather than run is written as ```text, ```toml, ```sh or ```console instead.
"""

from __future__ import annotations

import inspect
import os
import re
from pathlib import Path

import pytest

from tessera import errors, hookspecs, logs, plugins

DOCS = Path(__file__).resolve().parents[2] / "docs"

#: A fenced block: the opening fence with its info string, the body, the closing fence.
_FENCE = re.compile(r"^(?P<fence>```+|~~~+)[ \t]*(?P<info>[^\n`]*)\n(?P<body>.*?)^(?P=fence)[ \t]*$",
                    re.MULTILINE | re.DOTALL)


def _doc_files() -> list[Path]:
    return sorted(DOCS.glob("*.md"))


def python_blocks(text: str) -> list[tuple[int, str]]:
    """``(line number, source)`` of every fenced block whose language is ``python``."""
    out = []
    for m in _FENCE.finditer(text):
        info = m.group("info").strip().split()
        if info and info[0].lower() in ("python", "py"):
            line = text.count("\n", 0, m.start()) + 1
            out.append((line, m.group("body")))
    return out


def _cases() -> list:
    cases = []
    for path in _doc_files():
        for index, (line, source) in enumerate(python_blocks(path.read_text(encoding="utf-8"))):
            cases.append(pytest.param(path, line, source, id=f"{path.name}-{index}-line{line}"))
    return cases


def test_docs_exist() -> None:
    names = {p.name for p in _doc_files()}
    for required in ("hooks.md", "architecture.md", "machine.md", "cli.md", "errors.md"):
        assert required in names, f"docs/{required} is missing"


def test_fence_parser() -> None:
    sample = "x\n```python\na = 1\n```\n```text\nnot run\n```\n```py\nb = 2\n```\n"
    assert python_blocks(sample) == [(2, "a = 1\n"), (8, "b = 2\n")]


@pytest.fixture
def isolated(monkeypatch: pytest.MonkeyPatch, tmp_path: Path):
    """What an example may change in the process is put back afterwards."""
    saved_env = dict(os.environ)
    saved_host = plugins._default
    # Examples that build a default PluginHost must not see the developer's selection.
    for var in ("TESSERA_DISABLE_PLUGINS", "TESSERA_PLUGINS", "TESSERA_EXTRA_PLUGINS", "TESSERA_DEBUG"):
        os.environ.pop(var, None)
    # ... nor a process-wide host an earlier test left behind (an in-process CLI run sets
    # the default host to one built with that test's plugin selection): as in a fresh
    # process, default_host() builds one from the environment
    plugins.set_default_host(None)
    monkeypatch.chdir(tmp_path)  # examples that write files write them here
    try:
        yield
    finally:
        os.environ.clear()
        os.environ.update(saved_env)
        plugins.set_default_host(saved_host)
        logs.configure(0)  # the CLI examples point the log output at click's test streams


@pytest.mark.parametrize(("path", "line", "source"), _cases())
def test_python_block_runs(path: Path, line: int, source: str, isolated: None) -> None:
    """Run one example in a fresh namespace; it fails the test if it raises."""
    # Padding puts every statement on its line of the .md file, so tracebacks point there.
    code = compile("\n" * line + source, str(path), "exec")
    namespace = {"__name__": f"docs_example_{path.stem}_{line}"}
    exec(code, namespace)  # noqa: S102 - the documentation's own examples


def _headings(text: str) -> set[str]:
    """Heading texts with inline-code backticks removed."""
    return {m.group(1).replace("`", "").strip()
            for m in re.finditer(r"^#{1,6}\s+(.+?)\s*#*\s*$", text, re.MULTILINE)}


def test_every_hookspec_has_a_heading() -> None:
    text = (DOCS / "hooks.md").read_text(encoding="utf-8")
    headings = _headings(text)
    specs = [name for name, fn in inspect.getmembers(hookspecs, inspect.isfunction)
             if name.startswith("tessera_")]
    assert specs, "no hookspecs found"
    missing = [name for name in specs if name not in headings]
    assert not missing, f"docs/hooks.md has no heading for: {', '.join(missing)}"


def test_every_hook_heading_is_a_hookspec() -> None:
    text = (DOCS / "hooks.md").read_text(encoding="utf-8")
    specs = {name for name, _ in inspect.getmembers(hookspecs, inspect.isfunction)}
    stale = [h for h in _headings(text) if h.startswith("tessera_") and h not in specs]
    assert not stale, f"docs/hooks.md documents hooks that do not exist: {', '.join(stale)}"


def _error_classes() -> list[type[errors.TesseraError]]:
    return [cls for cls in errors.all_error_classes() if cls.__module__ == errors.__name__]


def test_every_exit_code_is_documented() -> None:
    """Each error class has a table row naming it with its exit code; so do 76 and 130."""
    rows = (DOCS / "errors.md").read_text(encoding="utf-8").splitlines()
    for cls in _error_classes():
        assert any(f"`{cls.__name__}`" in row and re.search(rf"\|\s*{cls.exit_code}\s*\|", row)
                   for row in rows), f"docs/errors.md has no row for {cls.__name__} ({cls.exit_code})"
    for code in (errors.INTERNAL_ERROR_EXIT, errors.INTERRUPTED_EXIT):
        assert any(re.match(rf"\|\s*{code}\s*\|", row) for row in rows), \
            f"docs/errors.md has no row for exit status {code}"
