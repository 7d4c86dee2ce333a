"""The plugin host: discovery, API-version checks, enable/disable, failure isolation.

Plugins are found through the ``tessera`` entry-point group, and finding them reads
metadata only: a plugin's module is imported the first time something needs it, so
``tessera --version`` imports no plugin and ``tessera run --arch rv32im`` does not
build the other architectures.  What needs a plugin:

* an architecture it provides (:meth:`PluginHost.architecture`).  Architecture
  plugins name their architectures in a second entry-point group,
  ``tessera.architectures`` (``rv32im = "tessera_riscv.plugin"``: architecture = the
  plugin's module, as its ``tessera`` entry point names it), so a
  lookup imports only the plugin that declares the name (a name nobody declares is
  looked up among all plugins, so undeclared architectures still work, just later);
* any hook call (:meth:`impls`, :meth:`call_each`, :meth:`first`), the full list of
  architectures, or the full picture (:attr:`records`): these import every plugin.

Each plugin is loaded in isolation: an import error, a missing or unsupported
``TESSERA_API_VERSION``, or a hook implementation that does not match the hookspecs
marks *that* plugin refused or failed (with the reason) and the rest carry on.
Users choose what loads with ``--no-plugin NAME`` / ``TESSERA_DISABLE_PLUGINS`` and
the allow-list ``--only-plugin NAME`` / ``TESSERA_PLUGINS``; ``TESSERA_EXTRA_PLUGINS``
(and ``--plugin-module``) registers modules that are not installed as distributions.
"""

from __future__ import annotations

import importlib
import os
from collections.abc import Callable, Iterable
from typing import Any

import attrs
import pluggy

from tessera import entrypoints, hookspecs
from tessera.errors import ConfigError, PluginError, TesseraError
from tessera.logs import get_logger
from tessera.types import HookCall
from tessera.version import PLUGIN_API_VERSION, SUPPORTED_API_VERSIONS

log = get_logger("tessera.plugins")

ENTRY_POINT_GROUP = "tessera"
#: ``architecture name = "plugin module"``: which plugin to import for ``--arch NAME``
ARCHITECTURES_GROUP = "tessera.architectures"

ACTIVE, DISABLED, REFUSED, FAILED = "active", "disabled", "refused", "failed"
#: found and allowed, not imported yet (never seen through :attr:`PluginHost.records`)
PENDING = "pending"


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


#: The plugin attribute naming which ELF files its architectures run (see
#: :meth:`PluginHost.elf_candidates`): ``{architecture: e_machine}`` or
#: ``{architecture: (e_machine, extensions its build attributes must name)}``.
ELF_DECLARATION = "TESSERA_ELF_MACHINES"


def _elf_declaration(plugin: Any) -> dict[str, tuple[int, frozenset[str]]] | None:
    """A plugin's ``TESSERA_ELF_MACHINES`` read into ``{architecture: (machine, extensions)}``;
    ``None`` when it declares nothing usable (then all its architectures are built to see)."""
    declared = getattr(plugin, ELF_DECLARATION, None)
    if not isinstance(declared, dict):
        return None
    out: dict[str, tuple[int, frozenset[str]]] = {}
    for name, value in declared.items():
        machine, extensions = (value, ()) if isinstance(value, int) else (
            value if isinstance(value, tuple) and len(value) == 2 else (None, ()))
        if not isinstance(name, str) or not isinstance(machine, int) \
                or not isinstance(extensions, tuple | list | set | frozenset) \
                or not all(isinstance(e, str) for e in extensions):
            return None
        out[name] = (machine, frozenset(extensions))
    return out


def _import_target(target: str) -> Callable[[], Any]:
    """A loader for ``module.path[:attr]``."""
    modname, _, attr = target.partition(":")
    modname, attr = modname.strip(), attr.partition("[")[0].strip()  # "[extras]" name no object

    def load() -> Any:
        plugin = importlib.import_module(modname)
        for part in attr.split(".") if attr else ():
            plugin = getattr(plugin, part)
        return plugin

    return load


class PluginHost:
    """A pluggy ``PluginManager`` for project ``tessera`` plus the bookkeeping around it.

    ``PluginHost()`` reads the environment and the entry points (importing nothing);
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
        self._records: dict[str, PluginRecord] = {}
        self._loaders: dict[str, Callable[[], Any]] = {}    # pending plugin -> its import
        self._declared: dict[str, set[str]] = {}            # plugin -> architectures it declares
        self._provided: dict[str, list[Any]] = {}           # plugin -> architectures it returned
        self._registered: list[str] = []                    # in pluggy's registration order
        self._architectures: dict[str, tuple[Any, str]] | None = None
        self._tool_settings: list[tuple[str, Any]] | None = None
        self._unreported: list[PluginRecord] = []           # failed or refused, not logged yet
        #: ``(where, name)`` of every name in the selection: ``where`` is ``"disabled"`` /
        #: ``"only"`` for the arguments, or the environment variable it came from
        self.selection: list[tuple[str, str]] = [("disabled", n) for n in disabled]
        self.disabled = set(disabled)
        only_list = list(only) if only is not None else []
        self.selection += [("only", n) for n in only_list]
        if use_environment:
            env_disabled = _split_env("TESSERA_DISABLE_PLUGINS")
            self.disabled |= set(env_disabled)
            self.selection += [("TESSERA_DISABLE_PLUGINS", n) for n in env_disabled]
            if only is None:  # an explicit allow-list (--only-plugin) replaces the environment's
                env_only = _split_env("TESSERA_PLUGINS")
                only_list += env_only
                self.selection += [("TESSERA_PLUGINS", n) for n in env_only]
            extra_modules = [*extra_modules, *_split_env("TESSERA_EXTRA_PLUGINS")]
        self.only = set(only_list) or None
        if load_entry_points:
            self.load_entry_points()
        for spec in extra_modules:
            self._add_module(spec)

    # ------------------------------------------------------------------ finding

    def _allowed(self, name: str) -> str:
        if name in self.disabled:
            return "disabled by user"
        if self.only is not None and name not in self.only:
            return "not in the allow-list"
        return ""

    def load_entry_points(self) -> None:
        """Record every plugin of the ``tessera`` entry-point group (metadata only: no import)."""
        found = entrypoints.entry_points((ENTRY_POINT_GROUP, ARCHITECTURES_GROUP))
        plugins = sorted((ep for ep in found if ep.group == ENTRY_POINT_GROUP), key=lambda e: e.name)
        for ep in plugins:
            record = PluginRecord(name=ep.name, distribution=ep.distribution, version=ep.version, module=ep.module)
            if ep.name in self._records:
                record.status, record.reason = REFUSED, f"name also used by {self._records[ep.name].distribution}"
                self._records[f"{ep.name}@{record.distribution}"] = record
                continue
            self._records[ep.name] = record
            why = self._allowed(ep.name)
            if why:
                record.status, record.reason = DISABLED, why
                continue
            record.status = PENDING
            self._loaders[ep.name] = _import_target(ep.value.strip())
        by_module = {r.module: r.name for r in self._records.values() if r.module}
        for ep in found:
            if ep.group != ARCHITECTURES_GROUP:
                continue
            value = ep.value.strip()  # the plugin's module (or, accepted too, its name)
            plugin = by_module.get(value.partition(":")[0], value)
            self._declared.setdefault(plugin, set()).add(ep.name)

    def _add_module(self, spec: str) -> PluginRecord:
        """Record ``module.path`` or ``name=module.path[:attr]`` as a plugin, imported when needed."""
        name, _, target = spec.partition("=") if "=" in spec else (spec, "", spec)
        record = PluginRecord(name=name, distribution="(module)", module=target.partition(":")[0])
        self._records[name] = record
        self._loaders.pop(name, None)
        if name in self.disabled:  # named explicitly, so the allow-list does not apply
            record.status, record.reason = DISABLED, "disabled by user"
            return record
        record.status = PENDING
        self._loaders[name] = _import_target(target)
        return record

    def load_module(self, spec: str) -> PluginRecord:
        """Register ``module.path`` or ``name=module.path[:attr]`` as a plugin, now."""
        record = self._add_module(spec)
        self._load(record.name)
        self.report_failures()
        return record

    def unknown_selection(self) -> list[tuple[str, str]]:
        """The ``(where, name)`` pairs of :attr:`selection` that name no plugin (a typo)."""
        known = {r.name for r in self._records.values()}
        return [(where, name) for where, name in self.selection if name not in known]

    def record(self, name: str) -> PluginRecord | None:
        """The record of plugin ``name`` (imported now if it was pending), or ``None``.

        Unlike :attr:`records` this imports only that plugin (snapshot restore checks
        the plugins a file names this way)."""
        record = self._records.get(name)
        if record is not None and record.status == PENDING:
            self._load(name)
            self._keep_order()
        return record

    def found_records(self) -> list[PluginRecord]:
        """Every record as it stands, importing nothing (``pending`` ones not imported yet)."""
        return list(self._records.values())

    def known_plugins(self) -> list[str]:
        """The names of every plugin found, whatever its state (for messages)."""
        return sorted({r.name for r in self._records.values()})

    # ------------------------------------------------------------------ loading

    @property
    def records(self) -> dict[str, PluginRecord]:
        """Every plugin by name, each imported: the full picture (``tessera plugins``)."""
        self.load_all()
        return self._records

    def load_all(self) -> None:
        """Import every plugin not imported yet (a failure is logged and recorded)."""
        self._load_all()
        self.report_failures()

    def _load_all(self) -> None:
        if not self._loaders:
            return
        for name in [n for n in self._records if n in self._loaders]:
            self._load(name)
        self._keep_order()

    def _load(self, name: str) -> PluginRecord:
        """Import one pending plugin and register it; the record says how it went."""
        record = self._records[name]
        loader = self._loaders.pop(name, None)
        if loader is None:
            return record
        try:
            plugin = loader()
        except Exception as exc:  # noqa: BLE001 - any import failure is the plugin's
            record.status, record.reason = FAILED, f"import failed: {type(exc).__name__}: {exc}"
            self._unreported.append(record)
            return record
        self._register(plugin, record)
        if record.status == REFUSED:
            self._unreported.append(record)
        return record

    def report_failures(self) -> None:
        """Log, once each, the plugins that failed or were refused since the last report.

        Reports wait until a hook is called or the plugins are listed: when the command
        fails *because of* such a plugin (``--arch`` of a plugin that cannot be imported),
        its error names the plugin and the warning would only repeat it.
        """
        pending, self._unreported = self._unreported, []
        for record in pending:
            if record.status == FAILED:
                log.warning("plugin failed", plugin=record.name, reason=record.reason)
            elif record.status == REFUSED:
                log.warning("plugin refused", plugin=record.name, reason=record.reason)

    def _keep_order(self) -> None:
        """Hooks are called in one order however plugins were imported: the records' order.

        pluggy calls implementations in reverse registration order; a plugin imported
        early for its architecture would otherwise change the order of every hook.
        """
        canonical = [n for n in self._records if n in self._registered]
        if canonical == self._registered:
            return
        for name in self._registered:
            self.pm.unregister(name=name)
        for name in canonical:
            self.pm.register(self._records[name].plugin, name=name)
        self._registered = canonical

    def register(self, plugin: Any, name: str, *, distribution: str = "(registered)",
                 version: str = "-") -> PluginRecord:
        """Register an in-process plugin object (tests, embedding applications)."""
        module = plugin.__name__ if isinstance(plugin, type(attrs)) else type(plugin).__module__
        if isinstance(plugin, type):
            module = plugin.__module__
        record = PluginRecord(name=name, distribution=distribution, version=version, module=module)
        self._loaders.pop(name, None)
        self._records[name] = record
        self._register(plugin, record)
        if record.status == REFUSED:
            self._unreported.append(record)
        self.report_failures()
        return record

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
            return record
        try:
            self.pm.register(plugin, name=record.name)
        except (pluggy.PluginValidationError, ValueError) as exc:
            record.status, record.reason = REFUSED, f"invalid hooks: {exc}"
            return record
        unknown = [impl.function.__name__ for _hook, impls in self._unknown_hooks() for impl in impls
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
        self._registered.append(record.name)
        self._architectures = None
        self._tool_settings = None
        return record

    def _unknown_hooks(self) -> list[tuple[str, list[Any]]]:
        out = []
        for name in dir(self.pm.hook):
            caller = getattr(self.pm.hook, name)
            if isinstance(caller, pluggy.HookCaller) and caller.spec is None:
                out.append((name, caller.get_hookimpls()))
        return out

    def fail(self, name: str, reason: str) -> None:
        """Mark a plugin failed and unregister it so later calls skip it."""
        rec = self._records.get(name)
        if rec is not None:
            rec.status, rec.reason = FAILED, reason
        self._loaders.pop(name, None)
        if self.pm.get_plugin(name) is not None:
            self.pm.unregister(name=name)
        if name in self._registered:
            self._registered.remove(name)
        self._provided.pop(name, None)
        self._architectures = None
        self._tool_settings = None

    # ------------------------------------------------------------------ calling

    def impls(self, hook: str) -> list[Any]:
        """The hook implementations of ``hook`` in call order (empty = nobody listens)."""
        self._load_all()
        return list(reversed(getattr(self.pm.hook, hook).get_hookimpls()))

    def hook_calls(self, hook: str) -> list[HookCall]:
        """:meth:`impls` resolved into callables, for the layers below the host.

        The machine and the engine call plugins through these (keyword arguments,
        each implementation given just the ones it declares, as :func:`call_impl`
        does) without importing this module.
        """
        return [HookCall(impl.plugin_name, impl.function, impl.argnames) for impl in self.impls(hook)]

    def call_each(self, hook: str, *, isolate: bool = True, **kwargs: Any) -> list[tuple[str, Any]]:
        """Call every implementation of ``hook`` separately: ``[(plugin, result), ...]``.

        With ``isolate`` a raising plugin is marked failed, logged and skipped;
        without, a :class:`PluginError` naming it is raised — unless what it raised is
        a :class:`~tessera.errors.TesseraError` (a plugin telling the user of a bad
        input, e.g. a file it cannot write), which propagates unchanged.
        """
        out = []
        impls = self.impls(hook)
        self.report_failures()
        for impl in impls:
            try:
                out.append((impl.plugin_name, call_impl(impl, **kwargs)))
            except PluginError:
                raise
            except Exception as exc:
                if not isolate and isinstance(exc, TesseraError):
                    raise  # the plugin reports the user's error (a bad file, a bad kernel): as is
                reason = f"{hook} raised {type(exc).__name__}: {exc}"
                if not isolate:
                    raise PluginError(reason, plugin=impl.plugin_name) from exc
                log.warning("plugin hook failed", plugin=impl.plugin_name, hook=hook, error=str(exc))
                self.fail(impl.plugin_name, reason)
        return out

    def first(self, hook: str, **kwargs: Any) -> tuple[str, Any] | None:
        """The first non-``None`` result of ``hook`` (for firstresult hooks), with its plugin.

        A plugin raising a :class:`~tessera.errors.TesseraError` (telling the user of a bad
        input: a setting out of range) propagates it unchanged; anything else is a
        :class:`PluginError` naming the plugin."""
        impls = self.impls(hook)
        self.report_failures()
        for impl in impls:
            try:
                res = call_impl(impl, **kwargs)
            except TesseraError:
                raise  # the plugin reports the user's error (a bad setting), or is a PluginError: as is
            except Exception as exc:
                raise PluginError(f"{hook} raised {type(exc).__name__}: {exc}",
                                  plugin=impl.plugin_name) from exc
            if res is not None:
                return impl.plugin_name, res
        return None

    def tool_settings(self) -> list[tuple[str, Any]]:
        """``[(plugin, Settings), ...]``: the configuration keys tool plugins declare
        (``tessera_tool_settings``), asked once and kept until a plugin is registered or
        removed.  A plugin returning something that is not a ``Settings`` is a
        :class:`PluginError` naming it."""
        if self._tool_settings is None:
            from tessera.settings import Settings

            found = []
            for plugin, got in self.call_each("tessera_tool_settings", isolate=False):
                if got is None:
                    continue
                if not isinstance(got, Settings):
                    raise PluginError(f"tessera_tool_settings returned {type(got).__name__}, not a "
                                      "tessera.settings.Settings", plugin=plugin)
                found.append((plugin, got))
            self._tool_settings = found
        return list(self._tool_settings)

    # ------------------------------------------------------------------ registry

    def _provided_by(self, plugin: str) -> list[Any]:
        """The architectures ``plugin`` returns from ``tessera_architectures`` (asked once).

        A raising or ill-typed answer marks the plugin failed (reported like an import
        failure) and counts as no architectures.
        """
        if plugin in self._provided:
            return self._provided[plugin]
        from tessera.isa.description import Architecture

        found: list[Any] = []
        for impl in self.pm.hook.tessera_architectures.get_hookimpls():
            if impl.plugin_name != plugin:
                continue
            try:
                got = call_impl(impl)
            except PluginError:
                raise
            except Exception as exc:  # noqa: BLE001
                return self._discovery_failed(plugin, f"tessera_architectures raised "
                                                      f"{type(exc).__name__}: {exc}")
            for arch in got or []:
                if not isinstance(arch, Architecture):
                    return self._discovery_failed(plugin, f"tessera_architectures returned "
                                                          f"{type(arch).__name__}, not an Architecture")
                found.append(arch)
        self._provided[plugin] = found
        return found

    def _discovery_failed(self, plugin: str, reason: str) -> list[Any]:
        self.fail(plugin, reason)
        self._unreported.append(self._records[plugin])
        return []

    def _all_architectures(self) -> dict[str, tuple[Any, str]]:
        if self._architectures is None:
            self._load_all()
            found: dict[str, tuple[Any, str]] = {}
            for name in list(reversed(self._registered)):  # the order hooks are called in
                for arch in self._provided_by(name):
                    if arch.name in found and found[arch.name][1] != name:
                        raise PluginError(
                            f"architecture {arch.name!r} is provided by both "
                            f"{found[arch.name][1]} and {name}", plugin=name)
                    found[arch.name] = (arch, name)
            self._architectures = found
        return self._architectures

    def architectures(self) -> dict[str, tuple[Any, str]]:
        """``{name: (Architecture, plugin name)}`` from every active plugin (imports them all)."""
        found = self._all_architectures()
        self.report_failures()
        return found

    def elf_candidates(self, machine: int, extensions: frozenset[str]) -> list[Any]:
        """The architectures that may run an ELF for ``e_machine`` ``machine`` whose build
        attributes name ``extensions``, building as few architectures as it can.

        Choosing an architecture from an ELF (``tessera run prog.elf``) should not build
        every installed one: their tables take most of a short run's time.  A plugin
        whose ``TESSERA_ELF_MACHINES`` lists the ELF machine (and extensions) of each of
        its architectures that runs ELF files is built only if one of them is for
        ``machine`` and needs no extension ``extensions`` lacks; its architectures that
        are not listed run no ELF files.  A plugin without the declaration has all its
        architectures built.  Every plugin is imported.  Each architecture built is
        checked against its plugin's declaration: one that disagrees is a
        :class:`PluginError`, since a wrong declaration could choose another architecture.
        """
        self._load_all()
        if self._architectures is not None:  # built already: nothing to save
            found = [arch for arch, _plugin in self._architectures.values()]
        else:
            found = []
            for plugin in list(reversed(self._registered)):  # the order hooks are called in
                declared = _elf_declaration(self._records[plugin].plugin)
                if declared is None:
                    found += self._provided_by(plugin)
                elif any(m == machine and ext <= extensions for m, ext in declared.values()):
                    built = self._provided_by(plugin)
                    _check_elf_declaration(plugin, declared, built)
                    found += [a for a in built if a.name in declared]
        self.report_failures()
        return found

    def _lookup(self, name: str) -> tuple[Any, str] | None:
        """``(Architecture, plugin)`` for ``name``, importing only the plugins that declare it.

        A name no plugin declares (a plugin without ``tessera.architectures`` metadata, a
        ``--plugin-module``, a registered object, or a typo) is looked up among all of them.
        """
        if self._architectures is not None:
            return self._architectures.get(name)
        hits: list[tuple[Any, str]] = []
        troubled: list[PluginRecord] = []
        for plugin in [p for p in self._records if name in self._declared.get(p, ())]:
            record = self._records[plugin]
            if record.status == PENDING:
                self._load(plugin)
            if record.status == ACTIVE:
                hits += [(arch, plugin) for arch in self._provided_by(plugin)
                         if arch.name == name]
            if record.status in (FAILED, REFUSED):
                troubled.append(record)
        if len(hits) > 1:
            raise PluginError(f"architecture {name!r} is provided by both {hits[0][1]} and "
                              f"{hits[1][1]}", plugin=hits[1][1])
        if not hits:  # the plugin that declares it is broken (say so), or nobody declares it
            return None if troubled else self._all_architectures().get(name)
        self.report_failures()  # found, but say what went wrong on the way
        return hits[0]

    def _unknown(self, name: str) -> TesseraError:
        """Why ``name`` is not available: a broken or disabled plugin that provides it, or a typo."""
        records = list(self._records.values())
        declaring = [r for r in records if name in self._declared.get(r.name, ())]
        for r in declaring:
            if r.status in (FAILED, REFUSED):
                what = "failed to load" if r.status == FAILED else "was refused"
                self._unreported = [u for u in self._unreported if u is not r]  # said here
                return PluginError(f"architecture {name!r} is provided by plugin {r.name}, which "
                                   f"{what}: {r.reason}", plugin=r.name)
        known = ", ".join(sorted(self._all_architectures())) or "none installed"
        unknown = f"unknown architecture {name!r} (known: {known})"
        for r in declaring:
            if r.status == DISABLED:
                return ConfigError(f"{unknown}; plugin {r.name} provides it but is {r.reason}")
        # a broken plugin that declares nothing might have provided it: worth a hint
        broken = [r for r in records if r.name not in self._declared and r.status in (FAILED, REFUSED)]
        if broken:
            r = broken[0]
            what = "failed to load" if r.status == FAILED else "was refused"
            self._unreported = [u for u in self._unreported if u is not r]  # said here
            return ConfigError(f"{unknown}; plugin {r.name}, which may provide it, {what}: {r.reason}")
        return ConfigError(unknown)

    def architecture(self, name: str) -> Any:
        """The architecture called ``name``; :class:`ConfigError` listing the known ones, or a
        :class:`PluginError` when the plugin that provides it failed to load."""
        found = self._lookup(name)
        if found is None:
            raise self._unknown(name)
        return found[0]

    def plugin_of(self, arch_name: str) -> str | None:
        found = self._lookup(arch_name)
        return found[1] if found else None

    def declared_architectures(self) -> dict[str, str]:
        """``{architecture: plugin}`` as the ``tessera.architectures`` metadata declares it."""
        return {arch: plugin for plugin, names in self._declared.items() for arch in names}


def _check_elf_declaration(plugin: str, declared: dict[str, tuple[int, frozenset[str]]],
                           built: list[Any]) -> None:
    """Refuse a ``TESSERA_ELF_MACHINES`` that disagrees with the architectures it describes."""

    def words(elf: tuple[int, frozenset[str]] | None) -> str:
        if elf is None:
            return "no ELF files"
        return f"ELF machine {elf[0]:#x}" + (f" with {', '.join(sorted(elf[1]))}" if elf[1] else "")

    for arch in built:
        says = (arch.elf_machine, frozenset(arch.elf_extensions)) if arch.elf_machine else None
        if declared.get(arch.name) != says:
            raise PluginError(f"{ELF_DECLARATION} says architecture {arch.name!r} runs "
                              f"{words(declared.get(arch.name))}, but its description says "
                              f"{words(says)}", plugin=plugin)


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


__all__ = ["PluginHost", "PluginRecord", "default_host", "set_default_host", "call_impl", "PLUGIN_API_VERSION",
           "ENTRY_POINT_GROUP", "ARCHITECTURES_GROUP", "ACTIVE", "DISABLED", "REFUSED", "FAILED"]
