"""Names the documentation gives must exist: a ``tessera_*`` word in inline code is a
hook (modules are written with their dot: `tessera_trace.attach`), and every command of
``tessera`` (built in, or added by the plugins of this repository) has a row in the
command tables of docs/cli.md."""

from __future__ import annotations

import inspect
import re
from pathlib import Path

import click

from tessera import hookspecs
from tessera.plugins import PluginHost

ROOT = Path(__file__).resolve().parents[2]
PAGES = sorted((ROOT / "docs").glob("*.md")) + [ROOT / "README.md"]

#: ``tessera_*`` words in inline code that are not hooks, on purpose: the conformance
#: report's junit properties and the new-plugin package placeholder.
NOT_HOOKS = {"tessera_plugin", "tessera_check", "tessera_target", "tessera_NAME"}


def test_every_tessera_name_in_inline_code_is_a_hook():
    hooks = {name for name, _ in inspect.getmembers(hookspecs, inspect.isfunction)}
    unknown = sorted({f"{page.name}: {name}" for page in PAGES
                      for name in re.findall(r"`(tessera_\w+)`", page.read_text(encoding="utf-8"))
                      if name not in hooks and name not in NOT_HOOKS})
    assert unknown == [], "documented hook names that do not exist: " + ", ".join(unknown)


def test_the_command_tables_list_every_command():
    from tessera.cli.main import BUILTIN, add_plugin_commands

    group = click.Group("plugin-commands")
    add_plugin_commands(group, PluginHost(use_environment=False))
    commands = set(BUILTIN) | set(group.commands)
    text = (ROOT / "docs" / "cli.md").read_text(encoding="utf-8")
    listed = set(re.findall(r"^\| \[?`([a-z-]+)`", text, re.MULTILINE))
    missing = sorted(commands - listed)
    assert {"run", "new-plugin", "riscv-start"} <= commands
    assert missing == [], f"docs/cli.md has no table row for: {', '.join(missing)}"
