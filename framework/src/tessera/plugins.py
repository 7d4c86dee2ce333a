"""The plugin host: discovery, API-version checks, enable/disable, failure isolation.

Plugins are found through the ``tessera`` entry-point group.  Each one is loaded in
isolation: an import error, a missing or unsupported ``TESSERA_API_VERSION``, or a
hook implementation that does not match the hookspecs marks *that* plugin refused or
failed (with the reason) and the rest carry on.  Users choose what loads with
``--no-plugin NAME`` / ``TESSERA_DISABLE_PLUGINS`` and the allow-list
``--only-plugin NAME`` / ``TESSERA_PLUGINS``; ``TESSERA_EXTRA_PLUGINS`` (and
``--plugin-module``) registers modules that are not installed as distributions.
"""

from __future__ import annotations

import importlib
import importlib.metadata as md
import os
from collections.abc import Iterable
from typing import Any

import attrs
import pluggy
import structlog

from tessera import hookspecs
from tessera.errors import ConfigError, PluginError
from tessera.version import PLUGIN_API_VERSION, SUPPORTED_API_VERSIONS

log = structlog.get_logger("tessera.plugins")

ENTRY_POINT_GROUP = "tessera"

ACTIVE, DISABLED, REFUSED, FAILED = "active", "disabled", "refused", "failed"


@attrs.define
class PluginRecord:
    """What ``tessera plugins`` shows about one plugin."""

    name: str
    distribution: str = "-"
    version: str = "-"
    api_version: Any = None
    status: str = ACTIVE
    reason: str = ""
    hooks: list[str] = attrs.field(factory=list)
    plugin: Any = attrs.field(default=None, repr=False)
    #: The plugin's module path (``tessera_riscv.plugin``), known before it is imported:
    #: snapshots allow classes from the top-level packages of active plugins only.
    module: str = ""


def call_impl(impl: Any, **kwargs: Any) -> Any:
    """Call one hook implementation with just the arguments it declares.

    pluggy lets an implementation accept a subset of a hook's arguments; every place
    that calls implementations one by one (to isolate or name a failing plugin) goes
    through here.
    """
    return impl.function(*[kwargs[name] for name in impl.argnames])


def _split_env(name: str) -> list[str]:
    return [p.strip() for p in os.environ.get(name, "").split(",") if p.strip()]


def _declared_api(plugin: Any) -> Any:
    return getattr(plugin, "TESSERA_API_VERSION", None)


class PluginHost:
    """A pluggy ``PluginManager`` for project ``tessera`` plus the bookkeeping around it.

    ``PluginHost()`` reads the environment and loads entry points;
    ``PluginHost(load_entry_points=False)`` starts empty (tests register plugins by hand).
    """

    def __init__(
        self,
        *,
        disabled: Iterable[str] = (),
        only: Iterable[str] | None = None,
        extra_modules: Iterable[str] = (),
        load_entry_points: bool = True,
        use_environment: bool = True,
    ) -> None:
        self.pm = pluggy.PluginManager("tessera")
        self.pm.add_hookspecs(hookspecs)
        self.records: dict[str, PluginRecord] = {}
        self.disabled = set(disabled)
        only_list = list(only) if only is not None else []
        if use_environment:
            self.disabled |= set(_split_env("TESSERA_DISABLE_PLUGINS"))
            if only is None:  # an explicit allow-list (--only-plugin) replaces the environment's
                only_list += _split_env("TESSERA_PLUGINS")
            extra_modules = [*extra_modules, *_split_env("TESSERA_EXTRA_PLUGINS")]
        self.only = set(only_list) or None
        self._architectures: dict[str, tuple[Any, str]] | None = None
        if load_entry_points:
            self.load_entry_points()
        for spec in extra_modules:
            self.load_module(spec)

    # ------------------------------------------------------------------ loading

    def _allowed(self, name: str) -> str:
        if name in self.disabled:
            return "disabled by user"
        if self.only is not None and name not in self.only:
            return "not in the allow-list"
        return ""

    def load_entry_points(self) -> None:
        """Import and register every plugin of the ``tessera`` entry-point group."""
        for ep in sorted(md.entry_points(group=ENTRY_POINT_GROUP), key=lambda e: e.name):
            dist = getattr(ep, "dist", None)
            record = PluginRecord(
                name=ep.name,
                distribution=dist.metadata["Name"] if dist is not None else "-",
                version=dist.version if dist is not None else "-",
                module=ep.value.partition(":")[0].strip(),
            )
            if ep.name in self.records:
                record.status, record.reason = REFUSED, f"name also used by {self.records[ep.name].distribution}"
                self.records[f"{ep.name}@{record.distribution}"] = record
                continue
            self.records[ep.name] = record
            why = self._allowed(ep.name)
            if why:
                record.status, record.reason = DISABLED, why
                continue
            try:
                plugin = ep.load()
            except Exception as exc:  # noqa: BLE001 - any import failure is the plugin's
                record.status, record.reason = FAILED, f"import failed: {type(exc).__name__}: {exc}"
                log.warning("plugin failed to import", plugin=ep.name, error=str(exc))
                continue
            self._register(plugin, record)

    def load_module(self, spec: str) -> PluginRecord:
        """Register ``module.path`` or ``name=module.path[:attr]`` as a plugin."""
        name, _, target = spec.partition("=") if "=" in spec else (spec, "", spec)
        modname, _, attr = target.partition(":")
        record = PluginRecord(name=name, distribution="(module)", module=modname)
        self.records[name] = record
        if name in self.disabled:  # named explicitly, so the allow-list does not apply
            record.status, record.reason = DISABLED, "disabled by user"
            return record
        try:
            plugin = importlib.import_module(modname)
            if attr:
                plugin = getattr(plugin, attr)
        except Exception as exc:  # noqa: BLE001
            record.status, record.reason = FAILED, f"import failed: {type(exc).__name__}: {exc}"
            return record
        return self._register(plugin, record)

    def register(self, plugin: Any, name: str, *, distribution: str = "(registered)",
                 version: str = "-") -> PluginRecord:
        """Register an in-process plugin object (tests, embedding applications)."""
        module = plugin.__name__ if isinstance(plugin, type(attrs)) else type(plugin).__module__
        if isinstance(plugin, type):
            module = plugin.__module__
        record = PluginRecord(name=name, distribution=distribution, version=version, module=module)
        self.records[name] = record
        return self._register(plugin, record)

    def _register(self, plugin: Any, record: PluginRecord) -> PluginRecord:
        api = _declared_api(plugin)
        record.api_version = api
        if api is None:
            record.status, record.reason = REFUSED, "does not declare TESSERA_API_VERSION"
        elif api not in SUPPORTED_API_VERSIONS:
            record.status = REFUSED
            record.reason = (f"targets plugin API {api}; this Tessera supports "
                             f"{', '.join(map(str, sorted(SUPPORTED_API_VERSIONS)))}")
        if record.status == REFUSED:
            log.warning("plugin refused", plugin=record.name, reason=record.reason)
            return record
        try:
            self.pm.register(plugin, name=record.name)
        except (pluggy.PluginValidationError, ValueError) as exc:
            record.status, record.reason = REFUSED, f"invalid hooks: {exc}"
            return record
        unknown = [impl.function.__name__ for h, impls in self._pending() for impl in impls
                   if impl.plugin_name == record.name]
        if unknown:
            self.pm.unregister(name=record.name)
            record.status, record.reason = REFUSED, f"implements unknown hook(s): {', '.join(unknown)}"
            return record
        record.plugin = plugin
        record.status = ACTIVE
        record.hooks = sorted(
            caller.name for caller in self.pm.get_hookcallers(plugin) or []
        )
        self._architectures = None
        return record

    def _pending(self) -> list[tuple[str, list[Any]]]:
        out = []
        for name in dir(self.pm.hook):
            caller = getattr(self.pm.hook, name)
            if isinstance(caller, pluggy.HookCaller) and caller.spec is None:
                out.append((name, caller.get_hookimpls()))
        return out

    def fail(self, name: str, reason: str) -> None:
        """Mark a plugin failed and unregister it so later calls skip it."""
        rec = self.records.get(name)
        if rec is not None:
            rec.status, rec.reason = FAILED, reason
        if self.pm.get_plugin(name) is not None:
            self.pm.unregister(name=name)
        self._architectures = None

    # ------------------------------------------------------------------ calling

    def impls(self, hook: str) -> list[Any]:
        """The hook implementations of ``hook`` in call order (empty = nobody listens)."""
        return list(reversed(getattr(self.pm.hook, hook).get_hookimpls()))

    def call_each(self, hook: str, *, isolate: bool = True, **kwargs: Any) -> list[tuple[str, Any]]:
        """Call every implementation of ``hook`` separately: ``[(plugin, result), ...]``.

        With ``isolate`` a raising plugin is marked failed, logged and skipped;
        without, a :class:`PluginError` naming it is raised.
        """
        out = []
        for impl in self.impls(hook):
            try:
                out.append((impl.plugin_name, call_impl(impl, **kwargs)))
            except PluginError:
                raise
            except Exception as exc:  # noqa: BLE001
                reason = f"{hook} raised {type(exc).__name__}: {exc}"
                if not isolate:
                    raise PluginError(reason, plugin=impl.plugin_name) from exc
                log.warning("plugin hook failed", plugin=impl.plugin_name, hook=hook, error=str(exc))
                self.fail(impl.plugin_name, reason)
        return out

    def first(self, hook: str, **kwargs: Any) -> tuple[str, Any] | None:
        """The first non-``None`` result of ``hook`` (for firstresult hooks), with its plugin."""
        for impl in self.impls(hook):
            try:
                res = call_impl(impl, **kwargs)
            except Exception as exc:  # noqa: BLE001
                raise PluginError(f"{hook} raised {type(exc).__name__}: {exc}",
                                  plugin=impl.plugin_name) from exc
            if res is not None:
                return impl.plugin_name, res
        return None

    # ------------------------------------------------------------------ registry

    def architectures(self) -> dict[str, tuple[Any, str]]:
        """``{name: (Architecture, plugin name)}`` from every active plugin."""
        if self._architectures is None:
            from tessera.isa.description import Architecture

            found: dict[str, tuple[Any, str]] = {}
            for plugin, archs in self.call_each("tessera_architectures"):
                for arch in archs or []:
                    if not isinstance(arch, Architecture):
                        self.fail(plugin, f"tessera_architectures returned {type(arch).__name__}, "
                                          "not an Architecture")
                        break
                    if arch.name in found and found[arch.name][1] != plugin:
                        raise PluginError(
                            f"architecture {arch.name!r} is provided by both "
                            f"{found[arch.name][1]} and {plugin}", plugin=plugin)
                    found[arch.name] = (arch, plugin)
            self._architectures = found
        return self._architectures

    def architecture(self, name: str) -> Any:
        """The architecture called ``name``; :class:`ConfigError` listing the known ones."""
        archs = self.architectures()
        if name not in archs:
            known = ", ".join(sorted(archs)) or "none installed"
            raise ConfigError(f"unknown architecture {name!r} (known: {known})")
        return archs[name][0]

    def plugin_of(self, arch_name: str) -> str | None:
        entry = self.architectures().get(arch_name)
        return entry[1] if entry else None


_default: PluginHost | None = None


def default_host() -> PluginHost:
    """The process-wide host (entry points + environment), created on first use."""
    global _default
    if _default is None:
        _default = PluginHost()
    return _default


def set_default_host(host: PluginHost | None) -> None:
    global _default
    _default = host


__all__ = ["PluginHost", "PluginRecord", "default_host", "set_default_host", "PLUGIN_API_VERSION",
           "ENTRY_POINT_GROUP"]
