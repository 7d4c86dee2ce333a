"""Library logging must not depend on the stderr that existed when it was configured."""

from __future__ import annotations

import io
import sys

import tessera.logs
from tessera.plugins import PluginHost


class NoVersion:
    pass


def test_plugin_warning_after_stderr_was_swapped_and_closed(monkeypatch, capsys):
    # The CLI configures logging; test runners and embedding applications swap
    # sys.stderr around such calls and close the temporary stream afterwards.
    temporary = io.StringIO()
    monkeypatch.setattr(sys, "stderr", temporary)
    try:
        tessera.logs.configure(0)
    finally:
        monkeypatch.undo()
        temporary.close()
    try:
        host = PluginHost(load_entry_points=False, use_environment=False)
        rec = host.register(NoVersion(), "noversion")  # logs a warning
        assert rec.status == "refused"
        assert "plugin refused" in capsys.readouterr().err
    finally:
        tessera.logs.configure(0)  # leave logging usable for later tests either way
