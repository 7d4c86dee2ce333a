"""Tessera's conformance suite: a pytest plugin that checks every installed Tessera plugin.

Run it with ``pytest --pyargs tessera_conformance`` (or ``tessera conformance``,
``python -m tessera_conformance``); ``--tessera-plugin NAME`` narrows it to one
plugin.  ``docs/conformance.md`` describes the checks, the case format a plugin
supplies through ``tessera_conformance_cases`` and how a plugin declares expected
failures (``TESSERA_CONFORMANCE``).

PYTEST_DONT_REWRITE: pytest rewrites the asserts of every module of a distribution
with a ``pytest11`` entry point, this package included, and warns about a module that
was imported before it started.  ``tessera conformance`` and ``python -m
tessera_conformance`` import this package (nothing else of it) before they start
pytest in-process; the marker tells pytest this module has no asserts to rewrite.
Its submodules — the checks — are imported by pytest and rewritten as usual, so
nothing here imports them eagerly.
"""

from typing import Any

__version__ = "0.1.0"


def __getattr__(name: str) -> Any:
    if name == "CHECKS":  # lazily: importing the checks' modules early would keep pytest from rewriting them
        from tessera_conformance.discovery import CHECKS

        return CHECKS
    raise AttributeError(f"module 'tessera_conformance' has no attribute {name!r}")

__all__ = ["CHECKS", "__version__", "pytest_args", "run_suite"]


def pytest_args(*, plugins=(), deep=False, budget=None, tool_options=(), extra=()):
    """The pytest command line (without ``pytest``) that runs the suite."""
    args = ["--pyargs", "tessera_conformance"]
    for name in plugins:
        args += ["--tessera-plugin", name]
    for pair in tool_options:
        args += ["--tessera-tool-option", pair]
    if deep:
        args.append("--tessera-deep")
    if budget is not None:
        args += ["--tessera-budget", str(budget)]
    return args + list(extra)


def run_suite(args):
    """Run pytest with ``args`` in this process; returns pytest's exit status."""
    import os

    import pytest

    plugins = []
    if os.environ.get("PYTEST_DISABLE_PLUGIN_AUTOLOAD"):  # the pytest11 entry point is not loaded then
        from tessera_conformance import plugin

        plugins.append(plugin)
    return int(pytest.main(list(args), plugins=plugins))
