"""Tessera's conformance suite: a pytest plugin that checks every installed Tessera plugin.

Run it with ``pytest --pyargs tessera_conformance`` (or ``tessera conformance``,
``python -m tessera_conformance``); ``--tessera-plugin NAME`` narrows it to one
plugin.  ``docs/conformance.md`` describes the checks, the case format a plugin
supplies through ``tessera_conformance_cases`` and how a plugin declares expected
failures (``TESSERA_CONFORMANCE``).
"""

from tessera_conformance.discovery import CHECKS

__version__ = "0.1.0"

__all__ = ["CHECKS", "__version__", "pytest_args", "run_suite"]


def pytest_args(*, plugins=(), deep=False, budget=None, extra=()):
    """The pytest command line (without ``pytest``) that runs the suite."""
    args = ["--pyargs", "tessera_conformance"]
    for name in plugins:
        args += ["--tessera-plugin", name]
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
