"""The ``tessera conformance`` command (a Tessera plugin: entry point ``tessera: conformance``).

It runs the suite in this process with ``pytest --pyargs tessera_conformance``.  The
tessera command's plugin selection (``--no-plugin``, ``--only-plugin``,
``--plugin-module``) is handed on through the ``TESSERA_*`` environment variables,
which the suite's plugin host reads.
"""

from __future__ import annotations

import os
from typing import Any

import click

import tessera

TESSERA_API_VERSION = 1


def _selection(host: Any) -> dict[str, str]:
    """The environment that makes the suite's host choose what ``host`` chose."""
    env: dict[str, str] = {}
    disabled = sorted(getattr(host, "disabled", ()) or ())
    if disabled:
        env["TESSERA_DISABLE_PLUGINS"] = ",".join(disabled)
    only = getattr(host, "only", None)
    if only:
        env["TESSERA_PLUGINS"] = ",".join(sorted(only))
    modules = [f"{rec.name}={rec.plugin.__name__}" for rec in host.records.values()
               if rec.distribution == "(module)" and rec.plugin is not None
               and getattr(rec.plugin, "__spec__", None) is not None]
    if modules:
        env["TESSERA_EXTRA_PLUGINS"] = ",".join(modules)
    return env


@click.command("conformance", context_settings={"ignore_unknown_options": True})
@click.option("--plugin", "plugins", multiple=True, metavar="NAME",
              help="Check only this plugin (repeatable); default: every installed plugin.")
@click.option("--deep", is_flag=True, help="Deep mode: 10^6 random words per architecture and more.")
@click.option("--budget", type=int, metavar="N", help="Random words per architecture (default 10,000).")
@click.option("--tool-option", "tool_options", multiple=True, metavar="NAME=VALUE",
              help="A value for a plugin's `tessera run` option in every run (repeatable).")
@click.option("--junitxml", metavar="FILE", help="Also write a JUnit XML report to FILE.")
@click.argument("pytest_args", nargs=-1, type=click.UNPROCESSED)
@click.pass_obj
def conformance(obj: Any, plugins: tuple[str, ...], deep: bool, budget: int | None,
                tool_options: tuple[str, ...], junitxml: str | None, pytest_args: tuple[str, ...]) -> int:
    """Check installed plugins against the plugin contract (pytest --pyargs tessera_conformance).

    Extra arguments go to pytest (e.g. -q, -x, -k round-trip).  Exit status: pytest's
    (0 all passed, 1 some check failed).
    """
    from tessera_conformance import pytest_args as make_args
    from tessera_conformance import run_suite

    extra = list(pytest_args)
    if junitxml:
        extra += [f"--junitxml={junitxml}"]
    args = make_args(plugins=plugins, deep=deep, budget=budget, tool_options=tool_options, extra=extra)
    saved = dict(os.environ)
    try:
        if obj is not None and getattr(obj, "host", None) is not None:
            os.environ.update(_selection(obj.host))
        return run_suite(args)
    finally:
        os.environ.clear()
        os.environ.update(saved)


@tessera.hookimpl
def tessera_cli_commands(cli: Any) -> None:
    cli.add_command(conformance)
