"""The built-in subcommands: where each one lives, imported only when it is used.

A command's module pulls in what the command needs (``run`` the machine model and
the loaders, ``archs`` rich tables); importing them all would make every start,
``tessera --version`` included, pay for all of them.
"""

from __future__ import annotations

import importlib
from typing import Any

#: command name -> ``module:attribute`` of its click command
BUILTIN_COMMANDS = {
    "run": "tessera.cli.run:run",
    "resume": "tessera.cli.run:resume",
    "asm": "tessera.cli.tools:asm",
    "disasm": "tessera.cli.tools:disasm",
    "plugins": "tessera.cli.info:plugins",
    "archs": "tessera.cli.info:archs",
    "demo": "tessera.cli.demo:demo",
    "new-plugin": "tessera.cli.newplugin:new_plugin",
    "bench": "tessera.cli.bench:bench",
    "semantics": "tessera.cli.semantics:semantics",
    "batch": "tessera.batch.cli:batch",
}


def load(name: str) -> Any:
    """The click command of built-in command ``name`` (imports its module)."""
    module, _, attr = BUILTIN_COMMANDS[name].partition(":")
    return getattr(importlib.import_module(module), attr)
