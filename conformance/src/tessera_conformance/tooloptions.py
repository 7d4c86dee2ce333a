"""Tool options under the suite: the values ``tessera_run_configure`` receives in its runs.

``tessera run`` hands every plugin's ``tessera_run_configure(machine, options)`` the values
of the options plugins add with ``tessera_run_options`` — the defaults of those the user
did not give — after loading the program and before the run.  The suite does the same,
with the same function (:func:`tessera.machine.configure_tools`), for every machine it
builds for a program (and again after a snapshot is restored, as ``tessera resume``
does), so a tool whose behaviour depends on its options — a fault
injector that injects only with ``--fi-at N`` — is checked doing what its options make
it do.  The values are, each overriding the one before:

1. the options' defaults (what ``tessera run`` passes when they are not given);
2. ``--tessera-tool-option NAME=VALUE`` on the suite's command line (every run);
3. a conformance case's ``tool_options`` (the runs of that case only).

Values are converted exactly as the ``tessera`` command line converts them (the
option's click type and callback), so ``"3"`` and ``3`` both reach the plugin as ``3``.
An option is named by its parameter name (``fi_at``) or an option string (``--fi-at``,
``fi-at``).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

import click

TRUE = frozenset({"1", "true", "yes", "on", "t", "y"})
FALSE = frozenset({"0", "false", "no", "off", "f", "n"})


class OptionError(ValueError):
    """A tool option that names nothing, or a value its option refuses (the message says which)."""


class ToolOptions:
    """The ``tessera run`` options every plugin contributes, and the session's values."""

    def __init__(self) -> None:
        self.options: dict[str, click.Option] = {}  # parameter name -> option
        self.owner: dict[str, str] = {}             # parameter name -> plugin
        self.given: list[str] = []                  # --tessera-tool-option NAME=VALUE, as given
        self.values: dict[str, Any] = {}            # parameter name -> session value
        self._command = click.Command("run")

    # ------------------------------------------------------------------ collecting

    def collect(self, answers: Iterable[tuple[str, Any]],
                builtin: Mapping[str, Iterable[click.Parameter]] | Iterable[click.Parameter] = ()
                ) -> dict[str, list[str]]:
        """Take each plugin's ``tessera_run_options`` answer; ``{plugin: problems}`` for bad ones.

        ``builtin`` holds the commands' own parameters, by command name (``run``,
        ``resume``: :func:`tessera.cli.contributions.builtin_parameters`), or those of
        ``run`` alone.  The problems are what the ``tessera`` command would refuse or
        ignore: an answer that is not a list of ``click.Option``, and an option whose
        name or option strings clash with a built-in option of one of those commands
        or an earlier plugin's.
        """
        problems: dict[str, list[str]] = {}
        own = builtin if isinstance(builtin, Mapping) else {"run": builtin}
        taken: dict[str, str] = {}
        strings: dict[str, str] = {}
        for command, params in own.items():
            for p in params:
                if p.name:
                    taken.setdefault(p.name, f"tessera {command}")
                for s in getattr(p, "opts", []):
                    strings.setdefault(s, f"tessera {command}")
        for plugin, got in answers:
            if got is None:
                continue
            if not isinstance(got, list | tuple):
                problems.setdefault(plugin, []).append(
                    f"tessera_run_options returned {type(got).__name__}, not a list of click.Option")
                continue
            for opt in got:
                if not isinstance(opt, click.Option):
                    problems.setdefault(plugin, []).append(
                        f"tessera_run_options returned {type(opt).__name__}, not a click.Option "
                        "(the tessera command ignores it)")
                    continue
                clash = taken.get(opt.name or "") or next((strings[s] for s in opt.opts if s in strings), None)
                if clash is not None:
                    problems.setdefault(plugin, []).append(
                        f"option {opt.opts[0]} clashes with an option of {clash} (the tessera command "
                        "does not add it)")
                    continue
                assert opt.name is not None  # click gives every option a parameter name
                self.options[opt.name] = opt
                self.owner[opt.name] = plugin
                taken[opt.name] = f"plugin {plugin}"
                strings.update({s: f"plugin {plugin}" for s in opt.opts})
        self._command = click.Command("run", params=list(self.options.values()))
        self.values = self._parse([])
        return problems

    def drop(self, plugins: Iterable[str]) -> None:
        """Forget the options of ``plugins`` (they failed while being discovered)."""
        gone = set(plugins)
        for name in [n for n, p in self.owner.items() if p in gone]:
            del self.options[name], self.owner[name]
            self.values.pop(name, None)
        self._command = click.Command("run", params=list(self.options.values()))

    # ------------------------------------------------------------------ naming and values

    def find(self, key: str) -> str | None:
        """The parameter name ``key`` means (``fi_at``, ``--fi-at``, ``fi-at``), if any."""
        if key in self.options:
            return key
        wanted = {key, f"--{key}", f"-{key}"}
        for name, opt in self.options.items():
            if wanted & set(opt.opts) or wanted & set(opt.secondary_opts):
                return name
        return None

    def known(self) -> str:
        return ", ".join(f"{opt.opts[0]} ({self.owner[name]})" for name, opt in self.options.items()) or "none"

    def _parse(self, argv: list[str]) -> dict[str, Any]:
        try:
            with self._command.make_context("tessera run", list(argv), resilient_parsing=False) as ctx:
                return dict(ctx.params)
        except click.ClickException as exc:
            raise OptionError(exc.format_message()) from None

    def apply(self, pairs: Iterable[str]) -> None:
        """Set the session's values from ``--tessera-tool-option NAME=VALUE`` pairs (in order)."""
        argv: list[str] = []
        for pair in pairs:
            key, eq, value = pair.partition("=")
            name = self.find(key.strip())
            if name is None:
                raise OptionError(f"--tessera-tool-option {pair}: no plugin has an option {key.strip()!r} "
                                  f"(options of tessera run from plugins: {self.known()})")
            argv += self._argv(self.options[name], value if eq else None, pair)
            self.given.append(pair)
        self.values = self._parse(argv)

    @staticmethod
    def _argv(opt: click.Option, value: str | None, pair: str) -> list[str]:
        if opt.is_flag:
            word = "true" if value is None else value.strip().lower()
            if word not in TRUE | FALSE:
                raise OptionError(f"--tessera-tool-option {pair}: {opt.opts[0]} is a flag: give NAME, "
                                  "NAME=true or NAME=false")
            if word in TRUE:
                return [opt.opts[0]]
            return [opt.secondary_opts[0]] if opt.secondary_opts else []
        if value is None:
            raise OptionError(f"--tessera-tool-option {pair}: {opt.opts[0]} takes a value: NAME=VALUE")
        return [opt.opts[0], value]

    def resolve(self, raw: Mapping[str, Any], plugins: Iterable[str]) -> dict[str, Any]:
        """A case's ``tool_options`` as ``{parameter name: value}``, converted like the command line.

        Only options of ``plugins`` (the plugins taking part in the case's runs) may be named.
        """
        allowed = set(plugins)
        out: dict[str, Any] = {}
        ctx = click.Context(self._command, info_name="tessera run")
        for key, value in raw.items():
            name = self.find(str(key))
            if name is None:
                raise OptionError(f"tool option {key!r}: no plugin has it (options of tessera run from "
                                  f"plugins: {self.known()})")
            if self.owner[name] not in allowed:
                raise OptionError(f"tool option {key!r} belongs to plugin {self.owner[name]}, which takes no "
                                  f"part in this case's runs (only {', '.join(sorted(allowed))} do)")
            opt = self.options[name]
            if opt.multiple and isinstance(value, str | bytes):
                value = (value,)
            try:
                out[name] = opt.process_value(ctx, value)
            except click.ClickException as exc:
                raise OptionError(f"tool option {key!r}: {exc.format_message()}") from None
        return out

    def defaults(self, names: Iterable[str] | None = None) -> dict[str, Any]:
        """The options' defaults (what ``tessera run`` passes for an option not given), of
        ``names`` (parameter names) or of every option."""
        every = self._parse([]) if self.options else {}
        return every if names is None else {name: every.get(name) for name in names}

    def values_for(self, overrides: Mapping[str, Any] | None = None) -> dict[str, Any]:
        """What ``tessera_run_configure`` receives: the session's values, then ``overrides``."""
        return {**self.values, **(overrides or {})}

    def describe(self, values: Mapping[str, Any], plugins: Iterable[str] | None = None) -> str:
        """``--fi-at 3 --trace text``: the values that differ from the options' defaults."""
        wanted = None if plugins is None else set(plugins)
        defaults = self._parse([]) if self.options else {}
        words = []
        for name, value in values.items():
            opt = self.options.get(name)
            if opt is None or value == defaults.get(name) or (wanted is not None and self.owner[name] not in wanted):
                continue
            if opt.is_flag:
                words.append(opt.opts[0] if value else (opt.secondary_opts or [f"no {opt.opts[0]}"])[0])
            elif opt.multiple:
                words.extend(f"{opt.opts[0]} {v}" for v in value)
            else:
                words.append(f"{opt.opts[0]} {value}")
        return " ".join(words)

