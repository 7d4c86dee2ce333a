"""A batch file's lines: parsed and checked before anything runs, each problem one line naming it.

The shape of a line (JSON, an object, known keys, value types and ranges) is a
configuration error (64); a missing program file a load error (65), as for ``tessera
run``; the architecture, its settings and tool options are checked as ``tessera run``
checks them, with the line in front of the message.
"""

from __future__ import annotations

import json
import os

import pytest

from tessera.batch import KEYS, load_specs
from tessera.batch.spec import spec_hash
from tessera.errors import ConfigError, LoadError

from .conftest import batch_lines, write_batch


def test_every_line_becomes_a_spec_with_what_tessera_run_would_use(programs, toy_host):
    specs = load_specs(write_batch(programs / "runs.jsonl", batch_lines()), toy_host)
    by_id = {s.id: s for s in specs}
    assert list(by_id) == ["sum-1", "sum-2", "sum-step", "spin", "spin-cycles", "fault", "dead", "stop",
                           "words", "10"]                       # the default id is the line number
    spin = by_id["spin"].payload
    assert spin["program"] == str(programs / "spin.s")          # absolute: workers may run elsewhere
    assert (spin["arch"], spin["max_steps"], spin["max_cycles"], spin["config"]) == ("toy", 500, None,
                                                                                     {"cores": 1})
    assert by_id["sum-1"].payload["max_steps"] == 100_000_000   # tessera run's default budget
    assert by_id["10"].payload["until_pc"] == [8]                # "0x8" read as an address
    assert by_id["stop"].payload["until_symbol"] == ["loop"]     # one value or a list
    assert by_id["sum-step"].payload["engine"] == "step"
    assert by_id["10"].where.endswith("runs.jsonl:10")


def test_null_is_the_default(programs, toy_host):
    given = {"program": "sum.s", "arch": "toy", "max_steps": None, "id": None, "engine": None, "format": None}
    spec = load_specs([given], toy_host)[0]
    assert (spec.id, spec.payload["max_steps"], spec.payload["format"]) == ("1", 100_000_000, "auto")
    assert spec.hash == load_specs([{"program": "sum.s", "arch": "toy"}], toy_host)[0].hash


def test_blank_lines_count_for_line_numbers(programs, toy_host):
    path = programs / "runs.jsonl"
    path.write_text('\n{"program": "sum.s", "arch": "toy"}\n\n{"program": "sum.s", "arch": "toy"}\n')
    assert [s.id for s in load_specs(path, toy_host)] == ["2", "4"]


def test_the_hash_follows_the_spec_and_the_program_but_not_the_id(programs, toy_host):
    base = {"program": "sum.s", "arch": "toy", "set": {"cores": 1}}
    first = load_specs([dict(base, id="a")], toy_host)[0].hash
    assert load_specs([dict(base, id="b")], toy_host)[0].hash == first
    assert load_specs([dict(base, max_steps=10)], toy_host)[0].hash != first
    (programs / "sum.s").write_text((programs / "sum.s").read_text() + "        nop\n")
    assert load_specs([dict(base, id="a")], toy_host)[0].hash != first
    assert spec_hash({"a": 1, "b": 2}, b"x") == spec_hash({"b": 2, "a": 1, "id": "z"}, b"x")


@pytest.mark.parametrize(("line", "cls", "words"), [
    ('{"program": "sum.s", "arch": "toy"', ConfigError, "not valid JSON"),
    ('["sum.s"]', ConfigError, "a spec is a JSON object, not an array"),
    ('{"progam": "sum.s", "arch": "toy"}', ConfigError, "unknown key 'progam' (did you mean 'program'?)"),
    ('{"arch": "toy"}', ConfigError, "no 'program'"),
    ('{"program": "missing.s", "arch": "toy"}', LoadError, "program missing.s does not exist"),
    ('{"program": ".", "arch": "toy"}', LoadError, "is a directory"),
    ('{"program": "sum.s", "arch": "toyy"}', ConfigError, "unknown architecture 'toyy' (known: toy)"),
    ('{"program": "sum.s"}', ConfigError, "so the spec needs 'arch'"),
    ('{"program": "sum.s", "arch": "toy", "set": {"cores": 99}}', ConfigError, "cores=99 is out of range"),
    ('{"program": "sum.s", "arch": "toy", "set": {"corse": 1}}', ConfigError, "unknown toy setting(s): corse"),
    ('{"program": "sum.s", "arch": "toy", "set": {"cores": [1]}}', ConfigError, "set.cores must be"),
    ('{"program": "sum.s", "arch": "toy", "max_steps": -1}', ConfigError, "max_steps must be a whole number"),
    ('{"program": "sum.s", "arch": "toy", "max_steps": true}', ConfigError, "max_steps must be"),
    ('{"program": "sum.s", "arch": "toy", "max_seconds": 0}', ConfigError, "max_seconds must be a finite"),
    ('{"program": "sum.s", "arch": "toy", "load": "nowhere"}', ConfigError, "load 'nowhere' is not an address"),
    ('{"program": "sum.s", "arch": "toy", "memory_cap": "lots"}', ConfigError, "memory_cap 'lots' is not a size"),
    ('{"program": "sum.s", "arch": "toy", "engine": "turbo"}', ConfigError, "engine must be one of fast, step"),
    ('{"program": "sum.s", "any_elf_machine": true}', ConfigError, "any_elf_machine needs arch"),
    ('{"program": "sum.s", "arch": "toy", "options": {"trace": "text"}}', ConfigError,
     "unknown tool option 'trace'"),
    ('{"id": "", "program": "sum.s", "arch": "toy"}', ConfigError, "id must be a non-empty string"),
    ('{"id": "1", "program": "sum.s", "arch": "toy"}', ConfigError, "id '1' is already used by line 1"),
])
def test_a_bad_line_is_one_error_naming_it(programs, toy_host, line, cls, words):
    path = programs / "runs.jsonl"
    path.write_text('{"program": "sum.s", "arch": "toy"}\n\n' + line + "\n")
    with pytest.raises(cls) as info:
        load_specs(str(path), toy_host)
    err = info.value
    assert type(err) is cls and err.exit_code == (64 if cls is ConfigError else 65)
    text = str(err)
    assert len(text.splitlines()) == 1
    assert f"{path}:3: " in text and words in text, text


def test_specs_given_as_dicts_are_named_by_position(programs, toy_host):
    with pytest.raises(ConfigError, match=r"spec 2: unknown key 'max_step'"):
        load_specs([{"program": "sum.s", "arch": "toy"}, {"program": "sum.s", "max_step": 1}], toy_host)
    with pytest.raises(ConfigError, match=r"spec 1: a spec is a dict, not str"):
        load_specs(["sum.s"], toy_host)  # type: ignore[list-item]


def test_a_missing_or_unreadable_batch_file_is_a_load_error(programs, toy_host):
    with pytest.raises(LoadError, match="batch file nope.jsonl does not exist"):
        load_specs("nope.jsonl", toy_host)
    (programs / "bin.jsonl").write_bytes(b"\xff\xfe{}\n")
    with pytest.raises(LoadError, match="is not UTF-8 text"):
        load_specs(str(programs / "bin.jsonl"), toy_host)


def test_the_keys_are_tessera_runs_options():
    from tessera.cli.run import run

    options = {o for p in run.params for o in getattr(p, "opts", [])}
    for key, option in KEYS.items():
        if option.startswith("--"):
            assert option.split()[0] in options, key
            assert option.split()[0] == "--" + key.replace("_", "-") or key == "set"
    # every run option a spec can mean has a key; the rest are outputs the batch replaces
    not_keys = {"--dump-state", "--dump-out", "--progress", "--help"}
    assert {o for o in options if o.startswith("--")} - not_keys - {"--no-progress"} == \
        {v.split()[0] for v in KEYS.values() if v.startswith("--")}


def test_settings_of_an_architecture_without_declarations_are_read_like_set(programs, toy_host):
    import attrs

    from tessera.batch.spec import _settings_values
    from tessera_toyarch.isa import TOY

    bare = attrs.evolve(TOY, settings=None)
    assert _settings_values({"a": "0x10", "b": "off", "c": "text", "d": 3}, bare) == \
        {"a": 16, "b": False, "c": "text", "d": 3}
    assert _settings_values({"cores": "2"}, TOY) == {"cores": "2"}  # declared: its kind converts it
    spec = load_specs([{"program": "sum.s", "arch": "toy", "set": {"cores": "2", "echo": "off"}}], toy_host)[0]
    assert json.loads(json.dumps(spec.payload))["config"] == {"cores": "2", "echo": "off"}
    assert os.path.isabs(spec.payload["program"])
