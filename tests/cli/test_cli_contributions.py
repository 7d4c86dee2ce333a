"""``tessera.cli.contributions``: what plugins may add to the command, from the command itself.

A conformance tool checks plugins' options and commands against these answers, so
they must be the command's own: the parameters a built-in command has of itself
(not those a plugin or an architecture added in this process) and the way the
command adds plugins' commands.
"""

from __future__ import annotations

import types

import click
import pytest

import tessera
from tessera.cli import commands
from tessera.cli.contributions import BUILTIN_COMMANDS, RUN_COMMANDS, add_plugin_commands, builtin_parameters
from tessera.cli.run import add_arch_flags, add_tool_options
from tessera.plugins import PluginHost


class Tool:
    """A tool plugin with a run option, a command, and a command taking a built-in name."""

    TESSERA_API_VERSION = 1

    @tessera.hookimpl
    def tessera_run_options(self):
        return [click.Option(["--tool-level"], type=int, default=0)]

    @tessera.hookimpl
    def tessera_cli_commands(self, cli):
        @cli.command("tool-report")
        def report():
            """Report what the tool saw."""

        @cli.command("run")
        def clash():
            """Take the name of a built-in command."""


def _host() -> PluginHost:
    host = PluginHost(load_entry_points=False, use_environment=False)
    host.register(Tool(), "tool")
    return host


def _names(command: str) -> list[str | None]:
    return [p.name for p in builtin_parameters(command)]


def test_builtin_parameters_leave_out_what_plugins_and_architectures_added():
    own = {name: _names(name) for name in RUN_COMMANDS}
    assert RUN_COMMANDS == ("run", "resume")
    assert {"program", "arch_name", "memory_cap", "max_steps", "engine"} <= set(own["run"])
    assert {"snapshot", "max_steps"} <= set(own["resume"]) and "arch_name" not in own["resume"]
    run, resume = (commands.load(name) for name in RUN_COMMANDS)
    flagged = types.SimpleNamespace(name="flagged", cli_flags={"no-cache": ("cache", False, "No cache")},
                                    cli_options={})
    add_tool_options([run, resume], _host())
    add_arch_flags(run, [flagged])
    try:
        assert {"tool_level", "arch_flag__no_cache"} <= {p.name for p in run.params}   # the command has them
        assert {name: _names(name) for name in RUN_COMMANDS} == own                   # its own are still these
    finally:
        add_arch_flags(run, [])
        add_tool_options([run, resume], None)
    assert "tool_level" not in {p.name for p in run.params}


def test_builtin_parameters_of_a_command_that_is_not_built_in_are_refused():
    assert BUILTIN_COMMANDS == frozenset(commands.BUILTIN_COMMANDS)
    with pytest.raises(ValueError, match="'tool-report' is not a built-in command"):
        builtin_parameters("tool-report")


def test_plugin_commands_are_added_as_the_command_adds_them(capsys):
    group = click.Group("tessera")
    add_plugin_commands(group, _host())
    assert sorted(group.commands) == ["tool-report"]
    err = capsys.readouterr().err
    assert "command 'run' clashes with an existing command; not added" in err
