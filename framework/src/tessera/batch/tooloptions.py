"""A spec's ``options``: the ``tessera run`` options tool plugins add, read as the command reads them.

Tool plugins give ``tessera run`` options through ``tessera_run_options`` (the trace
plugin's ``--trace``, ``--trace-out`` …) and receive their values in
``tessera_run_configure``.  A spec names them by option (``"trace-out"``, ``"--trace-out"``)
or parameter name (``"trace_out"``); their values are parsed by the options' own click
types, with every option a spec leaves out at its default, so a tool sees in a batch run
exactly what it sees in ``tessera run``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import click

from tessera.errors import ConfigError, PluginError

__all__ = ["ToolOptions"]


class ToolOptions:
    """The tool options of one plugin host, by parameter name."""

    def __init__(self, options: list[click.Option]) -> None:
        self.options = {opt.name: opt for opt in options if opt.name}
        self._command = click.Command("run", params=list(self.options.values()))

    @classmethod
    def of(cls, host: Any) -> ToolOptions:
        """The options ``host``'s plugins add to ``tessera run`` (a plugin whose hook fails
        adds none, as the command skips it)."""
        from tessera.plugins import call_impl

        found: list[click.Option] = []
        names: set[str] = set()
        for impl in host.impls("tessera_run_options") if host is not None else ():
            try:
                got = call_impl(impl) or []
            except Exception:  # noqa: BLE001 - the command skips such a plugin too (and says so)
                continue
            for opt in got:
                if isinstance(opt, click.Option) and opt.name and opt.name not in names:
                    names.add(opt.name)
                    found.append(opt)
        return cls(found)

    def find(self, key: str) -> click.Option | None:
        """The option ``key`` names: its parameter name, or one of its option strings with or
        without the dashes."""
        if key in self.options:
            return self.options[key]
        wanted = {key, f"--{key}", f"-{key}"}
        for opt in self.options.values():
            if wanted & {*opt.opts, *opt.secondary_opts}:
                return opt
        return None

    def argv(self, given: Mapping[str, Any]) -> list[str]:
        """The command-line words ``given`` stands for (:class:`ConfigError` for an unknown key)."""
        words: list[str] = []
        for key, value in given.items():
            opt = self.find(key)
            if opt is None:
                known = ", ".join(o.opts[0] for o in self.options.values()) or "none installed"
                raise ConfigError(f"options: unknown tool option {key!r} (the tool plugins' options: {known})")
            if opt.is_flag and not opt.secondary_opts and opt.flag_value is True:
                if not isinstance(value, bool):
                    raise ConfigError(f"options: {key} is a flag: give true or false, not {value!r}")
                words += [opt.opts[0]] if value else []
                continue
            if opt.is_flag and isinstance(value, bool):  # an --on/--off pair
                words.append(opt.opts[0] if value else (opt.secondary_opts or opt.opts)[0])
                continue
            for item in value if isinstance(value, list) else [value]:
                text = ("true" if item else "false") if isinstance(item, bool) else str(item)
                words += [opt.opts[0], text]
        return words

    def values(self, given: Mapping[str, Any]) -> dict[str, Any]:
        """Every tool option's value, ``given`` parsed by the options' types and the rest at
        their defaults: what ``tessera_run_configure`` receives."""
        argv = self.argv(given)
        try:
            with self._command.make_context("tessera run", argv) as ctx:
                return dict(ctx.params)
        except click.ClickException as exc:
            raise ConfigError(f"options: {exc.format_message()}") from None
        except Exception as exc:  # re-raised: a plugin's option type that crashes is its bug
            raise PluginError(f"a tool option's type raised {type(exc).__name__}: {exc}") from exc
