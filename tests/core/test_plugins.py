"""Hooks woven into execution, lifecycle hooks, and the plugin host's bookkeeping."""

from __future__ import annotations

import collections
import textwrap

import pytest

import tessera
from tessera.errors import ConfigError, Deadlock, PluginError
from tessera.isa import Encoding, Instruction
from tessera.plugins import PluginHost

from .conftest import TOY, Plugin, encode, make_host, new_machine, prog, sum_loop

N = 10
EXPECTED_MNEMONICS = {"li": 2, "add": N, "addi": N, "bne": N, "halt": 1}


class Instrument(Plugin):
    """Counts before/after calls per mnemonic."""

    def __init__(self, before=True, after=True):
        self.want_before, self.want_after = before, after
        self.before = collections.Counter()
        self.after = collections.Counter()
        self.agents = set()

    @tessera.hookimpl
    def tessera_execute_instrument(self, machine, arch, ins):
        def before(agent, ins):
            self.before[ins.mnemonic] += 1
            self.agents.add(agent.name)

        def after(agent, ins):
            self.after[ins.mnemonic] += 1

        return (before if self.want_before else None, after if self.want_after else None)


def test_before_and_after_fire_once_per_executed_instruction():
    inst = Instrument()
    m = new_machine(prog(*sum_loop(N)), cores=1, plugins=(inst,))
    r = m.run()
    assert r.exit_code == sum(range(N + 1))  # behaviour unchanged
    assert inst.before == EXPECTED_MNEMONICS
    assert sum(inst.before.values()) == m.cpus[0].instret
    # halt ends the agent inside its semantics: there is no "after" for it
    assert inst.after == {k: v for k, v in EXPECTED_MNEMONICS.items() if k != "halt"}


def test_instrumentation_sees_both_cores_through_shared_entries():
    inst = Instrument(after=False)
    m = new_machine(prog(*sum_loop(N)), cores=2, plugins=(inst,))
    m.run()
    assert inst.before == {k: 2 * v for k, v in EXPECTED_MNEMONICS.items()}
    assert inst.agents == {"core0", "core1"}
    assert not inst.after


def test_no_implementation_no_weaving():
    class Declines(Plugin):
        calls = 0

        @tessera.hookimpl
        def tessera_execute_instrument(self, ins):
            Declines.calls += 1
            return None

    for plugins in ((), (Declines(),)):
        m = new_machine(prog(*sum_loop(N)), cores=1, plugins=plugins)
        m.run()
        cache = m.space.decode_cache("toy")
        assert all(ins.run is ins.encoding.semantics.resolve() for ins in cache.values())
    assert Declines.calls == 6  # once per cache fill, not per execution


def test_hook_implementations_may_take_a_subset_of_the_arguments():
    seen = []

    class Few(Plugin):
        @tessera.hookimpl
        def tessera_execute_instrument(self, ins):
            return (lambda agent, ins: seen.append(ins.mnemonic)), None

        @tessera.hookimpl
        def tessera_decode(self, word):
            return None

        @tessera.hookimpl
        def tessera_sync_event(self, event):
            seen.append(event.kind)

        @tessera.hookimpl
        def tessera_trap(self, trap):
            seen.append(trap.name)

    m = new_machine(prog(("sem.post", dict(sem=0)), ("sem.wait", dict(sem=0)), 0xFFFF_FFFF), cores=1,
                    plugins=(Few(),))
    with pytest.raises(tessera.errors.UnhandledTrap):
        m.run()
    assert seen == ["sem.post", "post", "sem.wait", "acquire", ".illegal", "illegal instruction"]


def test_after_callback_can_redirect():
    class SkipNext(Plugin):
        @tessera.hookimpl
        def tessera_execute_instrument(self, ins):
            if ins.mnemonic != "addi":
                return None

            def after(agent, ins):
                assert agent.next_pc == ins.next
                agent.next_pc = ins.next + 4  # jump over the following instruction

            return None, after

    code = prog(("li", dict(rd=1, limm=0)), ("addi", dict(rd=1, rs1=1, imm=1)),
                ("li", dict(rd=1, limm=99)), ("halt", dict(rd=1)))
    assert new_machine(code, cores=1).run().exit_code == 99
    m = new_machine(code, cores=1, plugins=(SkipNext(),))
    assert m.run().exit_code == 1
    assert m.cpus[0].instret == 3


def test_before_callback_returning_an_int_skips_the_instruction():
    class Skip(Plugin):
        @tessera.hookimpl
        def tessera_execute_instrument(self, ins):
            if ins.mnemonic == "li" and ins.limm == 99:
                return (lambda agent, ins: ins.next), None
            return None

    code = prog(("li", dict(rd=1, limm=7)), ("li", dict(rd=1, limm=99)), ("halt", dict(rd=1)))
    m = new_machine(code, cores=1, plugins=(Skip(),))
    assert m.run().exit_code == 7


def test_before_callback_may_change_state():
    class Poke(Plugin):
        @tessera.hookimpl
        def tessera_execute_instrument(self, ins):
            if ins.mnemonic != "halt":
                return None

            def before(agent, ins):
                agent.r[ins.rd] = 1234

            return before, None

    assert new_machine(prog(("halt", dict(rd=3))), cores=1, plugins=(Poke(),)).run().exit_code == 1234


@pytest.mark.parametrize("where", ["before", "after"])
def test_raising_callback_is_a_plugin_error_naming_the_plugin(where):
    class Buggy(Plugin):
        @tessera.hookimpl
        def tessera_execute_instrument(self, ins):
            def cb(agent, ins):
                if ins.mnemonic == "add":
                    raise ValueError("oops")

            return (cb, None) if where == "before" else (None, cb)

    m = new_machine(prog(*sum_loop(N)), cores=1, plugins=(("buggy", Buggy()),))
    with pytest.raises(PluginError) as info:
        m.run()
    err = info.value
    assert err.plugin == "buggy" and err.agent == "core0" and err.pc == 8
    assert f"{where} callback raised ValueError: oops" in str(err)
    assert err.exit_code == 72


def test_raising_instrument_hook_is_a_plugin_error():
    class Buggy(Plugin):
        @tessera.hookimpl
        def tessera_execute_instrument(self, ins):
            raise RuntimeError("no")

    with pytest.raises(PluginError, match="tessera_execute_instrument raised") as info:
        new_machine(prog(*sum_loop(N)), cores=1, plugins=(("bad", Buggy()),)).run()
    assert info.value.plugin == "bad" and info.value.pc == 0


MAGIC = 0xFFFF_FFF0


def magic_semantics(agent, ins):
    agent.r[1] = 42


class Extension(Plugin):
    def __init__(self):
        self.words = []

    @tessera.hookimpl
    def tessera_decode(self, machine, arch, word, address):
        self.words.append(word)
        if word != MAGIC:
            return None
        enc = Encoding("magic", MAGIC, 0xFFFF_FFFF, "", magic_semantics)
        return Instruction(enc, word, address, 4, {})


def test_decode_hook_claims_a_word():
    ext = Extension()
    m = new_machine(prog(MAGIC, ("halt", dict(rd=1))), cores=1, plugins=(ext,))
    assert m.run().exit_code == 42
    assert ext.words == [MAGIC, encode("halt", rd=1)]  # one call per cache fill
    assert m.space.decode_cache("toy")[0].mnemonic == "magic"
    # without the extension the word is illegal
    with pytest.raises(tessera.errors.UnhandledTrap):
        new_machine(prog(MAGIC, ("halt", dict(rd=1))), cores=1).run()


def test_raising_decode_hook_names_the_plugin():
    class Bad(Plugin):
        @tessera.hookimpl
        def tessera_decode(self, word, address):
            raise KeyError(word)

    with pytest.raises(PluginError, match="tessera_decode raised KeyError") as info:
        new_machine(prog(("halt", dict(rd=0))), cores=1, plugins=(("dec", Bad()),)).run()
    assert info.value.plugin == "dec" and info.value.pc == 0
    assert info.value.word == encode("halt", rd=0)


class TenCycles:
    def __init__(self):
        self.priced = []

    def cycles(self, ins):
        self.priced.append(ins.mnemonic)
        return 10

    def now(self, machine):
        return sum(a.cycles for a in machine.agents)


def test_timing_model_hook_prices_instructions():
    model = TenCycles()

    class Timing(Plugin):
        @tessera.hookimpl
        def tessera_timing_model(self, machine, arch):
            return model

    m = new_machine(prog(*sum_loop(N)), cores=2, plugins=(Timing(),))
    r = m.run()
    steps = sum(EXPECTED_MNEMONICS.values())
    assert [c.cycles for c in m.cpus] == [10 * steps, 10 * steps]
    assert m.timing is model
    assert r.cycles == m.clock == 20 * steps  # the model's clock, not the default max
    assert sorted(model.priced) == sorted(["li", "li", "add", "addi", "bne", "halt"])


def test_max_cycles_uses_the_models_prices():
    model = TenCycles()

    class Timing(Plugin):
        @tessera.hookimpl
        def tessera_timing_model(self):
            return model

    m = new_machine(prog(("nop", {}), ("jmp", dict(joff=-4))), cores=1, plugins=(Timing(),))
    m.run(max_cycles=95, raise_on_budget=False)
    assert m.cpus[0].cycles == 100 and m.cpus[0].instret == 10


class SyncLog(Plugin):
    def __init__(self):
        self.events = []

    @tessera.hookimpl
    def tessera_sync_event(self, machine, event):
        self.events.append((event.kind, event.obj, event.agent))


def test_sync_events_are_observed():
    log = SyncLog()
    code = prog(("cid", dict(rd=1)),
                ("bne", dict(rd=1, rs1=0, boff=16)),
                ("sem.wait", dict(sem=0)),       # core0 waits first
                ("halt", dict(rd=0)),
                ("nop", {}),
                ("sem.post", dict(sem=0)),       # core1 posts
                ("halt", dict(rd=0)))
    m = new_machine(code, plugins=(log,), quantum=1)
    m.run()
    assert [e for e in log.events if e[1] == "sem0"] == [
        ("wait", "sem0", "core0"),
        ("post", "sem0", "core1"),
        ("wake", "sem0", "core0"),
        ("acquire", "sem0", "core0"),
    ]
    assert ("wait", "dma.q", "dma") in log.events  # the idle engine parks on its inbox


def test_raising_sync_listener_is_a_plugin_error():
    class Bad(Plugin):
        @tessera.hookimpl
        def tessera_sync_event(self, event):
            raise RuntimeError("x")

    with pytest.raises(PluginError, match="tessera_sync_event") as info:
        new_machine(prog(("sem.post", dict(sem=0)), ("halt", dict(rd=0))), cores=1,
                    plugins=(("syncbug", Bad()),)).run()
    assert info.value.plugin == "syncbug" and info.value.agent == "core0"


class Lifecycle(Plugin):
    def __init__(self):
        self.calls = []

    @tessera.hookimpl
    def tessera_machine_ready(self, machine):
        self.calls.append(("ready", machine.total_steps))

    @tessera.hookimpl
    def tessera_run_finished(self, machine, result):
        self.calls.append(("finished", result.reason, result.steps))


def test_machine_ready_once_and_run_finished_per_run():
    life = Lifecycle()
    m = new_machine(prog(*sum_loop(N)), cores=1, plugins=(life,))
    assert life.calls == []
    m.run(max_steps=5, raise_on_budget=False)
    with pytest.raises(tessera.errors.BudgetExceeded):
        m.run(max_steps=5)
    m.run()
    steps = sum(EXPECTED_MNEMONICS.values())
    assert life.calls == [("ready", 0), ("finished", "budget", 5), ("finished", "budget", 5),
                          ("finished", "halted", steps - 10)]


def test_run_finished_fires_when_a_run_ends_in_an_error():
    # hookspecs: "A call to Machine.run ended (halt, stop condition, budget or error)"
    life = Lifecycle()
    m = new_machine(prog(("sem.wait", dict(sem=0))), cores=1, plugins=(life,))
    with pytest.raises(Deadlock):
        m.run()
    assert [c[0] for c in life.calls] == ["ready", "finished"]


def test_raising_lifecycle_hook_names_the_plugin():
    class Bad(Plugin):
        @tessera.hookimpl
        def tessera_machine_ready(self):
            raise RuntimeError("not ready")

    with pytest.raises(PluginError, match="tessera_machine_ready raised RuntimeError") as info:
        new_machine(prog(("halt", dict(rd=0))), plugins=(("late", Bad()),)).run()
    assert info.value.plugin == "late"


def test_a_lifecycle_hook_reporting_a_user_error_passes_it_on_unchanged():
    # a plugin that finds the user's input bad (its kernel, a file) raises a TesseraError:
    # the user gets that error and its exit status, not a plugin failure
    class Picky(Plugin):
        @tessera.hookimpl
        def tessera_machine_ready(self):
            raise ConfigError("label x: no such thread")

    with pytest.raises(ConfigError, match="label x: no such thread") as info:
        new_machine(prog(("halt", dict(rd=0))), plugins=(("picky", Picky()),)).run()
    assert not isinstance(info.value, PluginError) and info.value.exit_code == 64


# --------------------------------------------------------------------------- the host


class ReadyProbe:
    """No TESSERA_API_VERSION unless a subclass adds one."""

    called = False

    @tessera.hookimpl
    def tessera_machine_ready(self, machine):
        type(self).called = True


def test_plugins_without_a_supported_api_version_are_refused():
    class V99(ReadyProbe):
        TESSERA_API_VERSION = 99

    host = PluginHost(load_entry_points=False, use_environment=False)
    rec = host.register(ReadyProbe(), "noversion")
    assert rec.status == "refused" and "does not declare TESSERA_API_VERSION" in rec.reason
    rec = host.register(V99(), "future")
    assert rec.status == "refused" and "targets plugin API 99" in rec.reason and "supports 1" in rec.reason
    assert rec.api_version == 99
    new_machine(prog(("halt", dict(rd=0))), host=host).run()
    assert not ReadyProbe.called and not V99.called
    assert host.impls("tessera_machine_ready") == []


def test_unknown_hook_is_refused():
    class Bogus(Plugin):
        @tessera.hookimpl
        def tessera_bogus(self):
            pass

        @tessera.hookimpl
        def tessera_machine_ready(self, machine):
            raise AssertionError("must not be registered")

    host = PluginHost(load_entry_points=False, use_environment=False)
    rec = host.register(Bogus(), "bogus")
    assert rec.status == "refused" and "tessera_bogus" in rec.reason
    assert host.pm.get_plugin("bogus") is None
    new_machine(prog(("halt", dict(rd=0))), host=host).run()


def test_hook_with_arguments_not_in_the_spec_is_refused():
    class WrongArgs(Plugin):
        @tessera.hookimpl
        def tessera_machine_ready(self, machine, flavour):
            pass

    rec = PluginHost(load_entry_points=False, use_environment=False).register(WrongArgs(), "wrong")
    assert rec.status == "refused" and "invalid hooks" in rec.reason


def test_failing_architecture_plugin_is_isolated():
    class Boom(Plugin):
        @tessera.hookimpl
        def tessera_architectures(self):
            raise RuntimeError("kaboom")

    class Good(Plugin):
        @tessera.hookimpl
        def tessera_architectures(self):
            return [TOY]

    host = make_host(("boom", Boom()), ("good", Good()))
    archs = host.architectures()
    assert list(archs) == ["toy"] and archs["toy"] == (TOY, "good")
    assert host.records["boom"].status == "failed" and "kaboom" in host.records["boom"].reason
    assert host.records["good"].status == "active"
    assert host.architecture("toy") is TOY and host.plugin_of("toy") == "good"
    with pytest.raises(tessera.errors.ConfigError, match="unknown architecture 'nope' \\(known: toy\\)"):
        host.architecture("nope")


def test_plugin_returning_a_non_architecture_fails():
    class Junk(Plugin):
        @tessera.hookimpl
        def tessera_architectures(self):
            return ["toy"]

    host = make_host(("junk", Junk()))
    assert host.architectures() == {}
    assert host.records["junk"].status == "failed" and "not an Architecture" in host.records["junk"].reason


def test_two_plugins_providing_one_architecture_is_an_error_naming_both():
    class A(Plugin):
        @tessera.hookimpl
        def tessera_architectures(self):
            return [TOY]

    host = make_host(("first", A()), ("second", A()))
    with pytest.raises(PluginError) as info:
        host.architectures()
    assert "first" in str(info.value) and "second" in str(info.value)


def test_installed_toy_plugin_is_found_through_entry_points(monkeypatch):
    for var in ("TESSERA_DISABLE_PLUGINS", "TESSERA_PLUGINS", "TESSERA_EXTRA_PLUGINS"):
        monkeypatch.delenv(var, raising=False)
    host = PluginHost()
    rec = host.records["toy"]
    assert rec.status == "active" and rec.distribution == "tessera-toyarch"
    assert rec.hooks == ["tessera_architectures", "tessera_conformance_cases"] and rec.api_version == 1
    assert host.architecture("toy") is TOY


@pytest.mark.parametrize("kw,env,status", [
    ({"disabled": ["toy"]}, {}, "disabled"),
    ({"only": ["other"]}, {}, "disabled"),
    ({"only": ["toy"]}, {}, "active"),
    ({}, {"TESSERA_DISABLE_PLUGINS": "x, toy"}, "disabled"),
    ({}, {"TESSERA_PLUGINS": "toy"}, "active"),
    ({}, {"TESSERA_PLUGINS": "something,else"}, "disabled"),
    ({"only": ["toy"]}, {"TESSERA_DISABLE_PLUGINS": "toy"}, "disabled"),
])
def test_disable_and_allow_lists(monkeypatch, kw, env, status):
    for var in ("TESSERA_DISABLE_PLUGINS", "TESSERA_PLUGINS", "TESSERA_EXTRA_PLUGINS"):
        monkeypatch.delenv(var, raising=False)
    for k, v in env.items():
        monkeypatch.setenv(k, v)
    host = PluginHost(**kw)
    rec = host.records["toy"]
    assert rec.status == status
    if status == "disabled":
        assert rec.reason in ("disabled by user", "not in the allow-list")
        assert "toy" not in host.architectures()
    else:
        assert "toy" in host.architectures()


def test_environment_is_ignored_when_asked(monkeypatch):
    monkeypatch.setenv("TESSERA_DISABLE_PLUGINS", "toy")
    assert PluginHost(use_environment=False).records["toy"].status == "active"


def _write_module(tmp_path, monkeypatch, name, body):
    (tmp_path / f"{name}.py").write_text(textwrap.dedent(body))
    monkeypatch.syspath_prepend(str(tmp_path))


def test_extra_plugin_module_from_the_environment(tmp_path, monkeypatch):
    mod = f"tessera_extra_{tmp_path.name.replace('-', '_')}"
    _write_module(tmp_path, monkeypatch, mod, """
        import tessera

        TESSERA_API_VERSION = 1
        READY = []

        @tessera.hookimpl
        def tessera_machine_ready(machine):
            READY.append(machine)
    """)
    monkeypatch.delenv("TESSERA_DISABLE_PLUGINS", raising=False)
    monkeypatch.delenv("TESSERA_PLUGINS", raising=False)
    monkeypatch.setenv("TESSERA_EXTRA_PLUGINS", f"extra={mod}")
    host = PluginHost(load_entry_points=False)
    rec = host.records["extra"]
    assert rec.status == "active" and rec.distribution == "(module)"
    assert rec.hooks == ["tessera_machine_ready"]
    m = new_machine(prog(("halt", dict(rd=0))), host=host)
    m.run()
    import importlib

    assert importlib.import_module(mod).READY == [m]


def test_extra_plugin_module_attribute_and_failures(tmp_path, monkeypatch):
    mod = f"tessera_attr_{tmp_path.name.replace('-', '_')}"
    _write_module(tmp_path, monkeypatch, mod, """
        import tessera

        class Thing:
            TESSERA_API_VERSION = 1

            @tessera.hookimpl
            def tessera_architectures(self):
                return []

        plugin = Thing()
    """)
    host = PluginHost(load_entry_points=False, use_environment=False,
                      extra_modules=[f"thing={mod}:plugin", "missing=no_such_module_xyz", "off=" + mod],
                      disabled=["off"])
    assert host.records["thing"].status == "active"
    assert host.records["missing"].status == "failed"
    assert "import failed: ModuleNotFoundError" in host.records["missing"].reason
    assert host.records["off"].status == "disabled"


def test_failing_plugin_is_skipped_by_isolated_calls():
    class Boom(Plugin):
        @tessera.hookimpl
        def tessera_conformance_cases(self, arch):
            raise RuntimeError("bad case")

    class Fine(Plugin):
        @tessera.hookimpl
        def tessera_conformance_cases(self, arch):
            return [{"name": "x"}]

    host = make_host(("boom", Boom()), ("fine", Fine()))
    assert host.call_each("tessera_conformance_cases", arch=TOY) == [("fine", [{"name": "x"}])]
    assert host.records["boom"].status == "failed"
    assert host.call_each("tessera_conformance_cases", arch=TOY) == [("fine", [{"name": "x"}])]
    with pytest.raises(PluginError):
        make_host(("boom", Boom())).call_each("tessera_conformance_cases", isolate=False, arch=TOY)


# -- misbehaving hook results are blamed on the plugin that returned them ----------------

def test_instrument_hook_returning_a_non_pair_names_its_plugin():
    class WrongShape(Plugin):
        @tessera.hookimpl
        def tessera_execute_instrument(self, ins):
            return "not a pair"

    with pytest.raises(PluginError, match="returned str; it must return None or a") as info:
        new_machine(prog(*sum_loop(N)), cores=1, plugins=(("shape", WrongShape()),)).run()
    assert info.value.plugin == "shape"


class BrokenTiming:
    def __init__(self, fail_in):
        self.fail_in = fail_in

    def cycles(self, ins):
        if self.fail_in == "cycles":
            raise ZeroDivisionError("bad price")
        return 1

    def now(self, machine):
        if self.fail_in == "now":
            raise KeyError("no clock")
        return 0


@pytest.mark.parametrize("where, message", [("cycles", "failed to price"),
                                            ("now", "failed to read the clock")])
def test_a_raising_timing_model_names_the_timing_plugin(where, message):
    class Timing(Plugin):
        @tessera.hookimpl
        def tessera_timing_model(self, machine, arch):
            return BrokenTiming(where)

    m = new_machine(prog(*sum_loop(N)), cores=1, plugins=(("clocky", Timing()),))
    assert m.timing_plugin == "clocky"
    with pytest.raises(PluginError, match=message) as info:
        m.run()
    assert info.value.plugin == "clocky"


def test_memory_regions_hook_returning_a_non_region_names_its_plugin():
    class Regions(Plugin):
        @tessera.hookimpl
        def tessera_memory_regions(self, machine, space):
            return [("ram", 0x40000, 16)]

    with pytest.raises(PluginError, match="returned tuple, not a region") as info:
        new_machine(b"", cores=1, plugins=(("regions", Regions()),))
    assert info.value.plugin == "regions"


# -- lazy loading: metadata first, a plugin's module when it is needed ---------------------

def test_every_installed_plugin_declares_exactly_the_architectures_it_provides():
    host = PluginHost(use_environment=False)
    declared = host.declared_architectures()
    provided = {name: plugin for name, (_arch, plugin) in host.architectures().items()}
    assert "toy" in declared
    for name, plugin in provided.items():  # `--arch NAME` must not need every plugin imported
        assert declared.get(name) == plugin, f"{plugin} provides {name!r} without declaring it"
    for name, plugin in declared.items():
        if host.records[plugin].status == "active":
            assert provided.get(name) == plugin, f"{plugin} declares {name!r} but does not provide it"


def test_looking_up_an_architecture_imports_only_the_plugin_that_declares_it(tmp_path):
    import subprocess
    import sys

    script = ("import sys\nfrom tessera.plugins import PluginHost\n"
              "host = PluginHost(use_environment=False)\n"
              "assert host.architecture('toy').name == 'toy' and host.plugin_of('toy') == 'toy'\n"
              "print(sorted({m.split('.')[0] for m in sys.modules if m.startswith('tessera_')}))\n")
    proc = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, cwd=tmp_path,
                          timeout=60)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "['tessera_toyarch']"


def test_no_pending_plugin_is_visible_through_records():
    host = PluginHost(use_environment=False)
    assert host.architecture("toy") is TOY
    statuses = {rec.status for rec in host.records.values()}
    assert "pending" not in statuses and "active" in statuses
    assert host.records["toy"].hooks == ["tessera_architectures", "tessera_conformance_cases"]


def test_hooks_are_called_in_the_same_order_whatever_was_imported_first():
    eager = PluginHost(use_environment=False)
    eager.load_all()
    lazy = PluginHost(use_environment=False)
    lazy.architecture("toy")  # toy is imported (and registered) before the others
    for hook in ("tessera_conformance_cases", "tessera_run_finished", "tessera_architectures"):
        assert [i.plugin_name for i in lazy.impls(hook)] == [i.plugin_name for i in eager.impls(hook)]
    names = [n for n, rec in eager.records.items() if "tessera_conformance_cases" in rec.hooks]
    assert [i.plugin_name for i in eager.impls("tessera_conformance_cases")] == names[::-1]


def test_a_lookup_reports_a_broken_plugin_it_did_not_need_once_a_hook_runs(monkeypatch, capsys):
    class Boom(Plugin):
        @tessera.hookimpl
        def tessera_architectures(self):
            raise RuntimeError("kaboom")

    host = make_host(("boom", Boom()), ("good", _Good()))
    assert host.architecture("toy") is TOY  # nobody declares toy here: both are asked
    assert host.records["boom"].status == "failed"
    err = capsys.readouterr().err
    assert err.count("kaboom") == 1  # reported once, not again on the next call
    host.call_each("tessera_conformance_cases", arch=TOY)
    assert "kaboom" not in capsys.readouterr().err


class _Good(Plugin):
    @tessera.hookimpl
    def tessera_architectures(self):
        return [TOY]


def test_unknown_selection_names_what_matches_no_plugin(monkeypatch):
    monkeypatch.setenv("TESSERA_PLUGINS", "toy,ghost")
    monkeypatch.setenv("TESSERA_DISABLE_PLUGINS", "spectre")
    host = PluginHost(disabled=["phantom", "toy"])
    assert host.unknown_selection() == [("disabled", "phantom"), ("TESSERA_DISABLE_PLUGINS", "spectre"),
                                        ("TESSERA_PLUGINS", "ghost")]
    assert "toy" in host.known_plugins()
    # an explicit allow-list replaces TESSERA_PLUGINS, whose names then do not matter
    assert PluginHost(only=["toy"]).unknown_selection() == [("TESSERA_DISABLE_PLUGINS", "spectre")]


def test_a_disabled_plugin_that_declares_the_architecture_is_named():
    host = PluginHost(use_environment=False, disabled=["toy"])
    with pytest.raises(tessera.errors.ConfigError,
                       match="unknown architecture 'toy' .*; plugin toy provides it but is disabled by user"):
        host.architecture("toy")


@pytest.mark.parametrize("kind, declared", [("arch", {"zorkle": "tessera_zorkle.plugin"}), ("tool", None)])
def test_generated_plugins_declare_their_architectures_like_the_bundled_ones(tmp_path, kind, declared):
    import tomllib

    from tessera.cli.newplugin import generate

    package = generate("zorkle", kind, tmp_path, check_installed=False)
    project = tomllib.loads((package / "pyproject.toml").read_text())["project"]
    assert "zorkle" in project["entry-points"]["tessera"]
    assert project["entry-points"].get("tessera.architectures") == declared
    plugin_py = next(package.glob("src/*/plugin.py")).read_text()
    if kind == "arch":  # the architecture is imported inside the hooks, not with the module
        assert ".isa import ARCH" not in plugin_py.split("@tessera.hookimpl")[0]
