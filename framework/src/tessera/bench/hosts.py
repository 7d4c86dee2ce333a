"""Finding an architecture's plugin, and building the minimal hosts the workloads run under.

The bench measures the engine, not whatever else happens to be installed: every
machine runs under a fresh :class:`~tessera.plugins.PluginHost` holding only the
architecture's own plugin (plus, where a workload says so, the plugins it is
measuring).  That is also what a user's ``tessera run`` sees when no tool plugin
subscribes to anything.  The architecture's plugin object is taken from the
command's host, so ``--no-plugin NAME`` and ``TESSERA_DISABLE_PLUGINS`` make the
workload skip with a note instead of failing.  A workload usually measures its own
plugin's architecture (then that plugin is active, or it would not have offered
the workload); the note matters when it needs another plugin's.
"""

from __future__ import annotations

from typing import Any

from tessera.bench.model import Skip
from tessera.plugins import ACTIVE, PluginHost


def architecture_plugin(host: Any, arch_name: str, distribution: str | None = None) -> tuple[Any, str, Any]:
    """``(architecture, plugin name, plugin object)`` from the command's host, or :class:`Skip`.

    ``distribution``: the package that provides the architecture, named in the note.
    """
    found = host.architectures().get(arch_name)
    if found is None:
        why = _why_missing(host, distribution)
        raise Skip(f"architecture {arch_name!r} is not available: {why}")
    arch, plugin_name = found
    record = host.records.get(plugin_name)
    if record is None or record.status != ACTIVE or record.plugin is None:
        raise Skip(f"the plugin {plugin_name!r} providing {arch_name!r} is not active")
    return arch, plugin_name, record.plugin


def _why_missing(host: Any, dist: str | None) -> str:
    for record in host.records.values():
        if record.status != ACTIVE and dist is not None and record.distribution == dist:
            return f"plugin {record.name} is {record.status} ({record.reason})"
    if dist is None:
        return "no installed plugin provides it"
    return f"plugin not installed (pip install {dist}, or -e the repository's copy)"


def minimal_host(*plugins: tuple[Any, str]) -> PluginHost:
    """A host with exactly ``plugins`` (``(object, name)`` pairs), ignoring the environment."""
    host = PluginHost(load_entry_points=False, use_environment=False)
    for plugin, name in plugins:
        record = host.register(plugin, name)
        if record.status != ACTIVE:
            raise Skip(f"plugin {name!r} could not be registered: {record.status} ({record.reason})")
    return host


__all__ = ["architecture_plugin", "minimal_host"]
