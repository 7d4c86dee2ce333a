"""Which plugins a worker loads: the plugin selection of a host, as plain data.

A plugin host cannot travel to another process (it holds imported modules), so the
batch sends workers a :class:`HostRecipe` — load the installed entry points or not, the
plugins disabled, the allow-list, the plugin modules registered by name — and each
worker process builds its host from it once.  The recipe is resolved where the batch
starts, environment variables included (``TESSERA_DISABLE_PLUGINS``, ``TESSERA_PLUGINS``,
``TESSERA_EXTRA_PLUGINS``), so a Dask worker on another machine, whose environment
may differ, runs with the same plugins.
"""

from __future__ import annotations

import sys
import types
from typing import Any

import attrs

from tessera.errors import ConfigError

__all__ = ["HostRecipe"]

#: The distribution of a plugin that is a module named on the command line, and of one
#: registered in-process (``PluginHost.register``).
_MODULE, _REGISTERED = "(module)", "(registered)"


@attrs.frozen
class HostRecipe:
    """How to build a :class:`~tessera.plugins.PluginHost` in a worker (hashable, picklable)."""

    entry_points: bool = True
    disabled: tuple[str, ...] = ()
    only: tuple[str, ...] | None = None
    modules: tuple[str, ...] = ()   # ``name=module.path[:attr]``

    def build(self) -> Any:
        """The host this recipe describes (the worker's environment is not read)."""
        from tessera.plugins import PluginHost

        return PluginHost(disabled=self.disabled, only=self.only, extra_modules=self.modules,
                          load_entry_points=self.entry_points, use_environment=False)

    @classmethod
    def from_host(cls, host: Any) -> HostRecipe:
        """The recipe of an existing host: its selection and the modules registered in it.

        A plugin registered as an object (not a module or a class) cannot be rebuilt
        elsewhere: a :class:`ConfigError` says to register its module instead.
        """
        modules: list[str] = []
        entry_points = False
        for record in host.found_records():
            if record.distribution not in (_MODULE, _REGISTERED):
                entry_points = True
                continue
            if record.status == "pending":  # a module named but not imported yet: the object
                host.record(record.name)      # it holds says how to import it again
            if record.status in ("refused", "failed"):
                continue
            if record.name in host.disabled:
                continue
            modules.append(f"{record.name}={_target(record)}")
        only = tuple(sorted(host.only)) if host.only else None
        return cls(entry_points, tuple(sorted(host.disabled)), only, tuple(modules))


def _target(record: Any) -> str:
    """``module.path[:attr]`` that imports the plugin of ``record`` again."""
    plugin = record.plugin
    if isinstance(plugin, types.ModuleType):
        return plugin.__name__
    if isinstance(plugin, type):
        return f"{plugin.__module__}:{plugin.__qualname__}"
    module = sys.modules.get(str(record.module))
    for attr, value in vars(module).items() if module is not None else ():
        if value is plugin:  # an object a module defines (``name=module:attr``)
            return f"{record.module}:{attr}"
    raise ConfigError(f"plugin {record.name} is an object registered in this process, which worker "
                      "processes cannot build again: register its module (or class) instead")
