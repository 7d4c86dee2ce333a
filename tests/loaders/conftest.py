"""Fixtures for the loader tests: the toy architecture, machines and program files."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
if str(HERE) not in sys.path:  # elfgen / toyprog, shared with tests/cli
    sys.path.insert(0, str(HERE))

from tessera.machine import Machine  # noqa: E402
from tessera.plugins import PluginHost  # noqa: E402
from tessera_toyarch import TOY  # noqa: E402


@pytest.fixture(autouse=True)
def _clean_plugin_env(monkeypatch):
    for name in list(os.environ):
        if name.startswith("TESSERA_"):
            monkeypatch.delenv(name)


@pytest.fixture
def toy():
    return TOY


@pytest.fixture
def host():
    """The installed test architecture alone (whatever else the dev install has)."""
    return PluginHost(only=["toy"], use_environment=False)


@pytest.fixture
def machine():
    """A fresh toy machine (no plugins): RAM 0..0x10000, ROM 0x20000..0x21000, two cores."""
    return Machine(TOY)
