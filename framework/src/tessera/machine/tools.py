"""Tool plugins set up for a run: their option values handed to ``tessera_run_configure``.

``tessera run`` and ``tessera resume`` call :func:`configure_tools` after the program
is loaded (or the snapshot restored) and before the run starts; the conformance suite
calls it for every machine it builds, so a tool is checked doing what its options
make it do.  It is one function so that the suite configures a machine exactly as the
command line does.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from tessera.errors import PluginError, TesseraError

__all__ = ["configure_tools"]


def configure_tools(machine: Any, options: Mapping[str, Any],
                    on_error: Callable[[str, Exception], None] | None = None) -> None:
    """Call every ``tessera_run_configure`` of ``machine``'s host with ``options``, in hook order.

    ``options`` maps the parameter name of every option plugins add with
    ``tessera_run_options`` to its value; each implementation gets its own copy.
    A :class:`~tessera.errors.TesseraError` an implementation raises passes through
    unchanged (a ``ConfigError`` for a value it refuses: one line, exit status 64);
    anything else becomes a :class:`~tessera.errors.PluginError` naming the plugin.
    With ``on_error``, whatever an implementation raises goes to
    ``on_error(plugin name, exception)`` instead, and the next implementation is
    called if it returns.  A machine without a host has nothing to configure.
    """
    for impl in machine.hook_calls("tessera_run_configure"):
        try:
            impl(machine=machine, options=dict(options))
        except Exception as exc:  # a refusal passes through, a crash names its plugin
            if on_error is not None:
                on_error(impl.plugin_name, exc)
            elif isinstance(exc, TesseraError):
                raise
            else:
                raise PluginError(f"tessera_run_configure raised {type(exc).__name__}: {exc}",
                                  plugin=impl.plugin_name) from exc
