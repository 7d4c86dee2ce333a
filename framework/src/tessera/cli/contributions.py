"""What plugins may add to the ``tessera`` command, for tools that check plugins.

Plugins add commands (``tessera_cli_commands``) and options of ``tessera run`` and
``tessera resume`` (``tessera_run_options``); the command refuses a command that
takes an existing name and an option that clashes with an existing one.  A tool
that checks plugins before users meet them (the conformance suite) needs the same
answers as the command, from the command itself — not from a copy of its option
list that would drift: that is this module.
"""

from __future__ import annotations

import click

from tessera.cli import commands
from tessera.cli.main import BUILTIN as BUILTIN_COMMANDS
from tessera.cli.main import RUN_COMMANDS, add_plugin_commands

__all__ = ["BUILTIN_COMMANDS", "RUN_COMMANDS", "add_plugin_commands", "builtin_parameters"]


def builtin_parameters(command: str) -> list[click.Parameter]:
    """The parameters built-in command ``command`` has of its own: what an option a
    plugin adds to it must not clash with (by parameter name or option string).

    Options plugins or architectures added to it in this process are not included.
    """
    from tessera.cli.run import ARCH_FLAG_PREFIX, TOOL_OPTION_MARK

    if command not in BUILTIN_COMMANDS:
        raise ValueError(f"{command!r} is not a built-in command (built-in: {', '.join(sorted(BUILTIN_COMMANDS))})")
    return [p for p in commands.load(command).params
            if not getattr(p, TOOL_OPTION_MARK, False) and not (p.name or "").startswith(ARCH_FLAG_PREFIX)]
