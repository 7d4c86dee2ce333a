"""Finding what to check: every plugin of the ``tessera`` entry-point group, isolated.

The suite builds one :class:`~tessera.plugins.PluginHost` the way the ``tessera``
command does (entry points plus ``TESSERA_EXTRA_PLUGINS``, ``TESSERA_DISABLE_PLUGINS``
and ``TESSERA_PLUGINS`` from the environment).  Each plugin becomes a
:class:`Subject`: its host record, the architectures it provides, its declarations
(``TESSERA_CONFORMANCE``) and anything wrong found while discovering it.  Nothing
here raises because of a plugin: a plugin that fails to import, is refused, raises in
a discovery hook or returns nonsense gets its problem recorded and shows up as a
failing ``load`` check; the others are checked as usual.

The architectures are collected by calling ``tessera_architectures`` plugin by plugin
(not :meth:`PluginHost.architectures`, which gives up on the first clash), so two
plugins providing one architecture name fail *both* by name and their other
architectures are still checked.  Each architecture's checks run on a host holding
only its own plugin (plus the probes the checks register), so one plugin cannot
disturb the checks of another; tool plugins are then checked against every
architecture's reference programs.
"""

from __future__ import annotations

import fnmatch
from collections.abc import Iterable, Mapping
from typing import Any

import attrs

from tessera.isa import Architecture
from tessera.plugins import ACTIVE, DISABLED, FAILED, PluginHost, PluginRecord, call_impl
from tessera_conformance.programs import Program, from_example, parse_case
from tessera_conformance.tooloptions import OptionError, ToolOptions

#: Hooks that only describe a plugin; every other hook takes part in runs ("tool" hooks).
DISCOVERY_HOOKS = frozenset({"tessera_architectures", "tessera_cli_commands", "tessera_conformance_cases"})

#: Every check of the suite, by the name used in test ids and in ``TESSERA_CONFORMANCE``.
CHECKS = {
    # every plugin
    "load": "the plugin imports, is accepted by the host and its discovery hooks work",
    "api-version": "the plugin declares a TESSERA_API_VERSION this Tessera supports",
    "declarations": "TESSERA_CONFORMANCE is well formed and every expected failure matches a check",
    "hooks": "hook implementations validate against the hookspecs; CLI commands are well formed",
    # every architecture
    "architecture": "the description builds a decoder and a machine; every row has semantics",
    "round-trip": "each encoding row: encode -> decode -> disassemble -> assemble gives the word back",
    "control-flags": "in an architecture declaring its control flags, every row's flags agree with "
                     "what its semantic functions may return",
    "random-words": "random words decode to an instruction, the illegal form or DecodeError, nothing else",
    "random-programs": "random programs end in a result or a Tessera error, never a crash, and keep "
                       "registers within their width",
    "examples": "each bundled example runs and passes its check",
    "cases": "each conformance case gives the expected final state or output",
    "determinism": "running a program twice gives the same state hash and instruction trace",
    "snapshot": "snapshot mid-run + restore + continue equals the uninterrupted run",
    "engine-equivalence": "the fast and step engines give the same outcome, state and retirements",
    "register-width": "after every instruction, every register holds a value within its declared width",
    "budget": "step, cycle and time budgets stop runs exactly; the machine can continue",
    "memory-fault": "faulting accesses carry the address and the agent",
    "execute-hooks": "execute callbacks fire once per instruction; unsubscribed ones never",
    "memory-hooks": "memory watches fire once per data access, with the agent; unwatched ranges never",
    "timing": "timing gives positive cycle counts; the clock advances",
    "deadlock": "a machine whose agents all wait reports a deadlock naming each of them",
    # tool plugins (hooks that take part in runs)
    "transparency": "enabling the plugin leaves every reference program's architectural result unchanged",
    "tool-determinism": "a plugin declaring modifies_state changes results reproducibly, without crashing",
    "tool-effect": "a case marked 'changes' ends differently with its tool options than without them, "
                   "one marked 'transparent' identically, on the step and the fast engine",
}

DECLARATION_KEYS = frozenset({"xfail", "modifies_state", "settings"})


@attrs.define(eq=False)
class Subject:
    """One plugin under test."""

    name: str
    record: PluginRecord | None
    archs: list[Architecture] = attrs.field(factory=list)
    problems: list[str] = attrs.field(factory=list)
    xfail: dict[str, str] = attrs.field(factory=dict)
    modifies_state: str | None = None
    #: machine-configuration keys (the tool's own, ``tessera_tool_settings``) set on every
    #: machine the transparency check builds with the tool: a cycle model chosen
    settings: dict[str, Any] = attrs.field(factory=dict)
    declaration_problems: list[str] = attrs.field(factory=list)
    used_patterns: set[str] = attrs.field(factory=set)

    @property
    def plugin(self) -> Any:
        return self.record.plugin if self.record is not None else None

    @property
    def status(self) -> str:
        return self.record.status if self.record is not None else FAILED

    @property
    def active(self) -> bool:
        return self.record is not None and self.record.status == ACTIVE and not self.problems

    @property
    def hooks(self) -> list[str]:
        return list(self.record.hooks) if self.record is not None else []

    @property
    def tool_hooks(self) -> list[str]:
        return [h for h in self.hooks if h not in DISCOVERY_HOOKS]

    def describe(self) -> str:
        rec = self.record
        if rec is None:
            return self.name
        version = f" {rec.version}" if rec.version not in ("-", "") else ""
        api = f", API {rec.api_version}" if rec.api_version is not None else ""
        return f"{self.name} ({rec.distribution}{version}{api})"

    def expected_failure(self, check: str, arch: str | None = None, item: str | None = None) -> str | None:
        """The declared reason ``check`` is expected to fail here, if any."""
        candidates = [check]
        if arch is not None:
            candidates.append(f"{check}:{arch}")
            if item is not None:
                candidates.append(f"{check}:{arch}:{item}")
        for pattern, reason in self.xfail.items():
            if any(fnmatch.fnmatchcase(c, pattern) for c in candidates):
                self.used_patterns.add(pattern)
                return reason
        return None


def parse_declarations(subject: Subject) -> None:
    """Read ``TESSERA_CONFORMANCE`` from the plugin object (module or instance)."""
    raw = getattr(subject.plugin, "TESSERA_CONFORMANCE", None)
    if raw is None:
        return
    problems = subject.declaration_problems
    if not isinstance(raw, Mapping):
        problems.append(f"TESSERA_CONFORMANCE must be a dict, not {type(raw).__name__}")
        return
    unknown = sorted(set(raw) - DECLARATION_KEYS)
    if unknown:
        problems.append(f"TESSERA_CONFORMANCE has unknown key(s) {', '.join(map(str, unknown))} "
                        f"(known: {', '.join(sorted(DECLARATION_KEYS))})")
    xfail = raw.get("xfail") or {}
    if not isinstance(xfail, Mapping):
        problems.append("TESSERA_CONFORMANCE['xfail'] must map check patterns to reasons")
        xfail = {}
    for pattern, reason in xfail.items():
        if not isinstance(pattern, str) or not isinstance(reason, str) or not reason.strip():
            problems.append(f"expected failure {pattern!r}: the pattern and its reason must be "
                            "non-empty strings")
            continue
        check = pattern.split(":", 1)[0]
        if not any(fnmatch.fnmatchcase(name, check) for name in CHECKS):
            problems.append(f"expected failure {pattern!r} names no check (checks: {', '.join(CHECKS)})")
            continue
        subject.xfail[pattern] = reason
    settings = raw.get("settings") or {}
    if not isinstance(settings, Mapping) or not all(isinstance(k, str) for k in settings):
        problems.append("TESSERA_CONFORMANCE['settings'] must map configuration keys to values")
    else:
        subject.settings = dict(settings)
    modifies = raw.get("modifies_state")
    if modifies not in (None, False):
        if not isinstance(modifies, str) or not modifies.strip():
            problems.append("TESSERA_CONFORMANCE['modifies_state'] must be the reason (a string) "
                            "the plugin changes architectural results")
        else:
            subject.modifies_state = modifies


class Suite:
    """Everything discovered for one pytest session, and the runs the checks share."""

    def __init__(self, *, selected: Iterable[str] = (), budget: int = 10_000, examples: int = 20,
                 programs: int = 40, deep: bool = False, tool_options: Iterable[str] = ()) -> None:
        """Discover every plugin; ``tool_options`` are ``NAME=VALUE`` pairs for the plugins'
        ``tessera run`` options (:class:`OptionError` when one names nothing or is refused)."""
        self.selected = list(dict.fromkeys(selected))
        self.budget = budget
        self.examples = examples
        self.random_programs = programs
        self.deep = deep
        self.host = PluginHost()
        self.subjects: dict[str, Subject] = {}
        self.all_subjects: dict[str, Subject] = {}
        self.disabled: dict[str, str] = {}
        self.arch_plugin: dict[str, str] = {}  # architecture name -> plugin
        self.arch_programs: dict[str, list[Program]] = {}
        self.generated_checks: set[str] = set()
        self.cache: dict[Any, Any] = {}
        self.tool_options = ToolOptions()
        self._option_pairs = list(tool_options)
        self._discover()

    # ------------------------------------------------------------------ discovery

    def _discover(self) -> None:
        """Ask every plugin what it provides, note what is wrong, keep the selected ones."""
        host = self.host
        for name, rec in host.records.items():
            if rec.status == DISABLED:
                self.disabled[name] = rec.reason
                continue
            self.subjects[name] = Subject(name, rec)
        self._note_providers(self._collect_architectures())
        self._collect_run_options()
        for subject in self.subjects.values():
            if subject.record is not None and subject.record.status == FAILED:
                subject.archs = []  # failed while discovering: nothing of it is used
            if subject.plugin is not None:
                parse_declarations(subject)
        for subject in list(self.subjects.values()):
            if not subject.active:
                continue
            for arch in subject.archs:
                self.arch_programs[arch.name] = self._programs(subject, arch)
        self.all_subjects = dict(self.subjects)
        if self.selected:
            self.subjects = {name: self._selected(name) for name in self.selected}

    def _collect_architectures(self) -> dict[str, list[tuple[str, Architecture]]]:
        """``arch name → [(plugin, arch)]`` from every ``tessera_architectures``; bad answers fail the plugin."""
        found: dict[str, list[tuple[str, Architecture]]] = {}
        for plugin, archs in self._call_each("tessera_architectures"):
            subject = self.subjects[plugin]
            if archs is None:
                continue
            if not isinstance(archs, list | tuple):
                self.host.fail(plugin, f"tessera_architectures returned {type(archs).__name__}, not a list")
                continue
            bad = [a for a in archs if not isinstance(a, Architecture)]
            if bad:
                self.host.fail(plugin, f"tessera_architectures returned {type(bad[0]).__name__}, "
                                       "not an Architecture")
                continue
            for arch in archs:
                found.setdefault(arch.name, []).append((plugin, arch))
                subject.archs.append(arch)
        return found

    def _note_providers(self, found: dict[str, list[tuple[str, Architecture]]]) -> None:
        """An architecture returned twice, or by two plugins, is a problem of each plugin concerned."""
        for arch_name, providers in found.items():
            plugins = sorted({p for p, _ in providers})
            if len(providers) > len(plugins):
                for p in plugins:
                    if sum(1 for q, _ in providers if q == p) > 1:
                        self.subjects[p].problems.append(
                            f"tessera_architectures returns architecture {arch_name!r} more than once")
            if len(plugins) > 1:
                for p in plugins:
                    self.subjects[p].problems.append(
                        f"architecture {arch_name!r} is provided by {' and '.join(plugins)} "
                        "(the tessera command refuses to run with both; disable one)")
            self.arch_plugin.setdefault(arch_name, providers[0][0])

    def _selected(self, name: str) -> Subject:
        """The subject ``--plugin name`` picks; one carrying the reason when there is none."""
        if name in self.subjects:
            return self.subjects[name]
        known = ", ".join(sorted(self.subjects)) or "none"
        why = self.disabled.get(name)
        missing = Subject(name, None)
        missing.problems.append(f"plugin {name} is {why}" if why else
                                f"no plugin named {name!r} is installed (plugins: {known})")
        return missing

    def _collect_run_options(self) -> None:
        """The ``tessera run`` options of every plugin (see :mod:`tessera_conformance.tooloptions`)."""
        from tessera.cli.contributions import RUN_COMMANDS, builtin_parameters

        answers = self._call_each("tessera_run_options")
        builtin = {command: builtin_parameters(command) for command in RUN_COMMANDS}
        for plugin, problems in self.tool_options.collect(answers, builtin).items():
            self.subjects[plugin].problems.extend(problems)
        self.tool_options.drop(name for name, rec in self.host.records.items() if rec.status == FAILED)
        self.tool_options.apply(self._option_pairs)

    def options_for(self, program: Program) -> dict[str, Any]:
        """What ``tessera_run_configure`` receives in the runs of ``program``."""
        return self.tool_options.values_for(program.run_options)

    def _call_each(self, hook: str, **kwargs: Any) -> list[tuple[str, Any]]:
        """Like ``host.call_each``, but any exception (a ``PluginError`` too) fails only its plugin."""
        out = []
        for impl in self.host.impls(hook):
            try:
                out.append((impl.plugin_name, call_impl(impl, **kwargs)))
            except Exception as exc:  # noqa: BLE001 - whatever a plugin raises is its failure
                self.host.fail(impl.plugin_name, f"{hook} raised {type(exc).__name__}: {exc}")
        return out

    def _programs(self, subject: Subject, arch: Architecture) -> list[Program]:
        programs = [from_example(ex, arch, subject.name) for ex in arch.examples]
        names = {p.name for p in programs}
        for plugin, cases in self._call_each("tessera_conformance_cases", arch=arch):
            if cases is None:
                continue
            if not isinstance(cases, list | tuple):
                self.host.fail(plugin, f"tessera_conformance_cases returned {type(cases).__name__}, "
                                       "not a list")
                continue
            for index, raw in enumerate(cases):
                prog = parse_case(raw, arch, plugin, index)
                if prog.problem is None and prog.name in names:
                    prog.problem = (f"conformance case {prog.name!r} from plugin {plugin}: another "
                                    f"program of {arch.name} already has that name")
                if prog.problem is None and prog.tool_options:
                    try:
                        prog.run_options = self.tool_options.resolve(prog.tool_options,
                                                                     {subject.name, plugin})
                    except OptionError as exc:
                        prog.problem = f"conformance case {prog.name!r} from plugin {plugin}: {exc}"
                names.add(prog.name)
                programs.append(prog)
        for plugin in {p.provider for p in programs}:  # a provider that failed later is dropped
            rec = self.host.records.get(plugin)
            if rec is not None and rec.status == FAILED:
                programs = [p for p in programs if p.provider != plugin]
        return programs

    # ------------------------------------------------------------------ what to check

    def arch_subjects(self) -> list[tuple[Subject, Architecture]]:
        return [(s, a) for s in self.subjects.values() if s.active for a in s.archs]

    def programs(self, arch: Architecture) -> list[Program]:
        return self.arch_programs.get(arch.name, [])

    def runnable_programs(self, arch: Architecture) -> list[Program]:
        return [p for p in self.programs(arch) if p.problem is None]

    def all_arches(self) -> list[tuple[str, Architecture]]:
        """Every architecture of every sound plugin, selected or not (tool checks use them all)."""
        return [(s.name, a) for s in self.all_subjects.values() if s.active for a in s.archs]

    def host_for(self, *plugins: str, extra: Iterable[tuple[str, Any]] = ()) -> PluginHost:
        """A host holding only ``plugins`` (by name, as discovered) and the ``extra`` probes."""
        host = PluginHost(load_entry_points=False, use_environment=False)
        for name in dict.fromkeys(plugins):
            rec = self.host.records[name]
            got = host.register(rec.plugin, name, distribution=rec.distribution, version=rec.version)
            if got.status != ACTIVE:  # pragma: no cover - it was accepted by the main host
                raise RuntimeError(f"plugin {name} cannot be registered again: {got.reason}")
        for name, probe in extra:
            got = host.register(probe, name, distribution="tessera-conformance")
            if got.status != ACTIVE:  # pragma: no cover - the suite's own probes
                raise RuntimeError(f"conformance probe {name} refused: {got.reason}")
        return host

