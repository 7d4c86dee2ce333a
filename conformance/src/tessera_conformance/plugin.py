"""The pytest plugin (entry point ``pytest11: tessera``): options, collection, parametrisation, report.

Run the suite with ``pytest --pyargs tessera_conformance`` (or ``tessera conformance``).
The checks live in the ``check_*.py`` modules of this package; they are collected
whatever the project's ``python_files`` setting says.  Every check is a test function
taking one *target* argument (``plugin_target``, ``arch_target``, ``row_target``,
``example_target``, ``case_target``, ``program_target``, ``tool_target`` or ``effect_target``);
:func:`pytest_generate_tests` parametrises it over what discovery found, with ids
``plugin:arch:item`` and a strict ``xfail`` mark wherever the plugin declared an
expected failure.  Nothing happens in a pytest run that collects none of these
checks, so having the distribution installed costs other test suites nothing.

At the end :func:`pytest_terminal_summary` prints one block per plugin: passed,
expected failures with their reasons, checks that do not apply (with why), and
failures with their first line.  ``--junitxml`` works as usual; each test case carries
the properties ``tessera_plugin``, ``tessera_check`` and ``tessera_target``.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

import attrs
import pytest

if TYPE_CHECKING:  # pragma: no cover
    from tessera_conformance.discovery import Subject, Suite

PACKAGE_DIR = Path(__file__).resolve().parent
SUITE_KEY = pytest.StashKey["Suite"]()
ARGNAMES = ("plugin_target", "arch_target", "row_target", "example_target", "case_target",
            "program_target", "tool_target", "effect_target")

DEFAULTS = {"budget": 10_000, "examples": 20, "programs": 40}
DEEP = {"budget": 1_000_000, "examples": 200, "programs": 2_000}


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("tessera", "Tessera conformance suite (pytest --pyargs tessera_conformance)")
    group.addoption("--tessera-plugin", action="append", default=[], metavar="NAME",
                    help="check only this plugin (repeatable); default: every installed plugin")
    group.addoption("--tessera-deep", action="store_true", default=False,
                    help="deep mode: 10^6 random words per architecture, more examples and programs")
    group.addoption("--tessera-budget", type=int, default=None, metavar="N",
                    help="random words decoded per architecture (default 10,000; deep 1,000,000)")
    group.addoption("--tessera-examples", type=int, default=None, metavar="N",
                    help="hypothesis examples per encoding row in round-trip (default 20; deep 200)")
    group.addoption("--tessera-programs", type=int, default=None, metavar="N",
                    help="random programs run per architecture (default 40; deep 2,000)")
    group.addoption("--tessera-tool-option", action="append", default=[], metavar="NAME=VALUE",
                    help="a value for a plugin's `tessera run` option in every run the suite makes "
                         "(repeatable; NAME as in `--fi-at` or `fi_at`; a flag alone or NAME=false)")


def pytest_configure(config: pytest.Config) -> None:
    """Refuse a ``--tessera-tool-option`` that names no plugin option, before anything runs."""
    if config.getoption("--tessera-tool-option", None):
        get_suite(config)


def get_suite(config: pytest.Config) -> Suite:
    """The session's :class:`~tessera_conformance.discovery.Suite` (discovered on first use)."""
    suite = config.stash.get(SUITE_KEY, None)
    if suite is None:
        from tessera_conformance.discovery import Suite

        deep = bool(config.getoption("--tessera-deep"))
        base = DEEP if deep else DEFAULTS

        def pick(name: str) -> int:
            value = config.getoption(f"--tessera-{name}")
            return int(value) if value is not None else base[name]

        from tessera_conformance.tooloptions import OptionError

        try:
            suite = Suite(selected=config.getoption("--tessera-plugin") or (), budget=pick("budget"),
                          examples=pick("examples"), programs=pick("programs"), deep=deep,
                          tool_options=config.getoption("--tessera-tool-option") or ())
        except OptionError as exc:
            raise pytest.UsageError(str(exc)) from None
        config.stash[SUITE_KEY] = suite
    return suite


def pytest_collect_file(file_path: Path, parent: pytest.Collector) -> pytest.Module | None:
    """Collect this package's ``check_*.py`` modules whatever ``python_files`` says."""
    if (file_path.suffix == ".py" and file_path.name.startswith("check_")
            and file_path.resolve().parent == PACKAGE_DIR
            and not parent.session.isinitpath(file_path)):  # named on the command line: pytest does it
        return pytest.Module.from_parent(parent, path=file_path)
    return None


@pytest.fixture(scope="session")
def conformance_suite(request: pytest.FixtureRequest) -> Suite:
    """What discovery found, and the runs the checks share."""
    return get_suite(request.config)


# --------------------------------------------------------------------------- targets


@attrs.frozen(eq=False)
class Target:
    """One thing a check is applied to: a plugin, an architecture, a row, a program …"""

    check: str
    subject: Subject
    arch: Any = None
    item: str | None = None
    payload: Any = None

    @property
    def id(self) -> str:
        parts = [self.subject.name]
        if self.arch is not None:
            parts.append(self.arch.name)
        if self.item is not None:
            parts.append(self.item)
        return ":".join(parts)


def check_name(function: Any) -> str:
    return function.__name__.removeprefix("test_").replace("_", "-")


def _plugins(suite: Suite, check: str) -> list[Target]:
    out = []
    for s in suite.subjects.values():
        rec = s.record
        if check == "load":
            out.append(Target(check, s))
        elif check == "api-version":
            if rec is not None and not rec.reason.startswith("import failed"):
                out.append(Target(check, s))
        elif check == "declarations":
            if s.plugin is not None:
                out.append(Target(check, s))
        elif s.active:
            out.append(Target(check, s))
    return out


def _archs(suite: Suite, check: str) -> list[Target]:
    return [Target(check, s, a) for s, a in suite.arch_subjects()]


def _rows(suite: Suite, check: str) -> list[Target]:
    return [Target(check, s, a, f"{i}-{enc.mnemonic}", enc)
            for s, a in suite.arch_subjects() for i, enc in enumerate(a.encodings)]


def _examples(suite: Suite, check: str) -> list[Target]:
    return [Target(check, s, a, p.name, p) for s, a in suite.arch_subjects()
            for p in suite.programs(a) if p.kind == "example"]


def _cases(suite: Suite, check: str) -> list[Target]:
    out = []
    for _owner, arch in suite.all_arches():
        for p in suite.programs(arch):
            provider = suite.subjects.get(p.provider)
            if p.kind == "case" and provider is not None:
                out.append(Target(check, provider, arch, p.name, p))
    return out


def _effects(suite: Suite, check: str) -> list[Target]:
    """The cases marked ``changes`` or ``transparent``, checked for their supplier as ``cases`` are."""
    return [t for t in _cases(suite, check) if t.payload.problem is None and t.payload.effect is not None]


def _programs(suite: Suite, check: str) -> list[Target]:
    return [Target(check, s, a, p.name, p) for s, a in suite.arch_subjects()
            for p in suite.runnable_programs(a)]


def _tools(suite: Suite, check: str) -> list[Target]:
    out = []
    for s in suite.subjects.values():
        if not (s.active and s.tool_hooks):
            continue
        if check == "tool-determinism" and not s.modifies_state:
            continue  # transparency covers it: equal to the reference run is reproducible
        own = {a.name for a in s.archs}
        for _owner, arch in suite.all_arches():
            if arch.name in own:
                continue
            for p in suite.runnable_programs(arch):
                if p.provider != s.name:  # its own cases run with it anyway (determinism checks them)
                    out.append(Target(check, s, arch, p.name, p))
    return out


GENERATORS = {"plugin_target": _plugins, "arch_target": _archs, "row_target": _rows,
              "example_target": _examples, "case_target": _cases, "program_target": _programs,
              "tool_target": _tools, "effect_target": _effects}


def _marks(target: Target) -> list[Any]:
    reason = None
    if target.check == "cases" and target.payload is not None and target.payload.xfail:
        reason = f"case declares: {target.payload.xfail}"
    arch = target.arch.name if target.arch is not None else None
    declared = target.subject.expected_failure(target.check, arch, target.item)
    if declared is not None:
        reason = f"declared by {target.subject.name}: {declared}"
    return [pytest.mark.xfail(reason=reason, strict=True)] if reason else []


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    names = [n for n in ARGNAMES if n in metafunc.fixturenames]
    if not names:
        return
    argname = names[0]
    suite = get_suite(metafunc.config)
    check = check_name(metafunc.function)
    suite.generated_checks.add(check)
    targets = GENERATORS[argname](suite, check)
    params = [pytest.param(t, id=t.id, marks=_marks(t)) for t in targets]
    if not params:
        what = "plugin" if argname == "plugin_target" else "architecture, program or tool plugin"
        params = [pytest.param(None, id="none",
                               marks=pytest.mark.skip(reason=f"no {what} to apply {check} to"))]
    metafunc.parametrize(argname, params)


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    for item in items:
        callspec = getattr(item, "callspec", None)
        if callspec is None:
            continue
        for name in ARGNAMES:
            target = callspec.params.get(name)
            if isinstance(target, Target):
                item.user_properties.extend([("tessera_plugin", target.subject.name),
                                             ("tessera_check", target.check),
                                             ("tessera_target", target.id)])
                break


# --------------------------------------------------------------------------- report


def _first_line(report: pytest.TestReport) -> str:
    crash = getattr(report.longrepr, "reprcrash", None)
    text = crash.message if crash is not None else str(report.longrepr)
    lines = [ln.strip() for ln in text.splitlines() if ln.strip()]
    line = lines[0] if lines else "failed"
    return line if len(line) <= 200 else line[:197] + "..."


def _skip_reason(report: pytest.TestReport) -> str:
    longrepr = report.longrepr
    if isinstance(longrepr, tuple) and len(longrepr) == 3:
        return str(longrepr[2]).removeprefix("Skipped: ")
    return str(longrepr)


def pytest_terminal_summary(terminalreporter: Any, exitstatus: int, config: pytest.Config) -> None:
    suite = config.stash.get(SUITE_KEY, None)
    if suite is None:
        return
    per: dict[str, dict[str, list[str]]] = {}
    for reports in terminalreporter.stats.values():
        for rep in reports:
            props = dict(getattr(rep, "user_properties", ()) or ())
            plugin = props.get("tessera_plugin")
            if plugin is None or not isinstance(rep, pytest.TestReport):
                continue
            entry = per.setdefault(plugin, {"passed": [], "xfail": [], "n/a": [], "failed": []})
            label = f"{props.get('tessera_check')} {props.get('tessera_target')}"
            if hasattr(rep, "wasxfail") and rep.skipped:
                entry["xfail"].append(f"{label}: {rep.wasxfail}")
            elif rep.failed:
                where = "" if rep.when == "call" else f" (in {rep.when})"
                entry["failed"].append(f"{label}{where}: {_first_line(rep)}")
            elif rep.skipped:
                entry["n/a"].append(f"{label}: {_skip_reason(rep)}")
            elif rep.passed and rep.when == "call":
                entry["passed"].append(label)
    tr = terminalreporter
    tr.write_sep("=", "Tessera conformance")
    for name in suite.subjects:
        subject = suite.subjects[name]
        entry = per.get(name, {"passed": [], "xfail": [], "n/a": [], "failed": []})
        failed = entry["failed"]
        verdict = "FAILED" if failed else "ok"
        archs = ", ".join(a.name for a in subject.archs)
        kind = f"architectures {archs}" if archs else ("tool hooks " + ", ".join(subject.tool_hooks)
                                                       if subject.tool_hooks else "no run hooks")
        tr.write_line(f"{subject.describe()}: {verdict} — {len(entry['passed'])} passed, "
                      f"{len(entry['xfail'])} expected failures, {len(entry['n/a'])} not applicable, "
                      f"{len(failed)} failed  [{kind}]", red=bool(failed), green=not failed)
        for line in entry["xfail"]:
            tr.write_line(f"    xfail  {line}")
        for line in entry["n/a"]:
            tr.write_line(f"    n/a    {line}")
        for line in failed:
            tr.write_line(f"    FAIL   {line}", red=True)
    for name, why in sorted(suite.disabled.items()):
        tr.write_line(f"{name}: not checked ({why})")
    if suite.selected:
        tr.write_line(f"(narrowed with --tessera-plugin to: {', '.join(suite.selected)})")
    if suite.tool_options.given:
        tr.write_line(f"(tool options in every run: {suite.tool_options.describe(suite.tool_options.values)})")
