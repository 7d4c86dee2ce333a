"""tessera.entrypoints reads what importlib.metadata reads, without importing it.

The reader exists for start-up time (docs/performance.md), so these tests hold it to
the standard library's answer on this installation and on hand-made ``sys.path``
layouts (dist-info and egg-info, duplicates, sections of other groups, comments),
and check that a plain ``tessera`` start never imports :mod:`importlib.metadata`.
"""

from __future__ import annotations

import importlib.metadata as md
import subprocess
import sys
import textwrap

import pytest

from tessera import entrypoints
from tessera.plugins import ARCHITECTURES_GROUP, ENTRY_POINT_GROUP, _import_target

GROUPS = (ENTRY_POINT_GROUP, ARCHITECTURES_GROUP)


def _standard(groups, path=None):
    dists = md.distributions(path=path) if path is not None else md.distributions()
    seen, found = set(), set()
    for dist in dists:
        key = entrypoints._normalise(dist.metadata["Name"])
        if key in seen:
            continue
        seen.add(key)
        for ep in dist.entry_points:
            if ep.group in groups:
                found.add((ep.group, ep.name, ep.value, dist.metadata["Name"], dist.version))
    return found


def _ours(groups):
    return {(e.group, e.name, e.value, e.distribution, e.version) for e in entrypoints.entry_points(groups)}


def test_same_answer_as_importlib_metadata_on_this_installation():
    ours = _ours(GROUPS)
    assert ours == _standard(GROUPS)
    assert any(group == ARCHITECTURES_GROUP and name == "rv32im" for group, name, *_ in ours)


def _dist(root, folder, meta_name, name, version, entry_text):
    d = root / folder
    d.mkdir()
    (d / meta_name).write_text(f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n\nlong description\nName: wrong\n")
    if entry_text is not None:
        (d / "entry_points.txt").write_text(textwrap.dedent(entry_text))


def test_hand_made_path(tmp_path, monkeypatch):
    first, second = tmp_path / "a", tmp_path / "b"
    first.mkdir()
    second.mkdir()
    _dist(first, "tessera_extra-1.2.dist-info", "METADATA", "tessera-extra", "1.2", """\
        # a comment
        [console_scripts]
        extra = tessera_extra.cli:main
        [tessera]
        extra = tessera_extra.plugin
        # another comment
        [tessera.architectures]
        extra-a = tessera_extra.plugin
        """)
    _dist(first, "legacy.egg-info", "PKG-INFO", "Legacy.Pkg", "0.3", "[tessera]\nlegacy=legacy_mod:plugin\n")
    _dist(first, "nothing-1.0.dist-info", "METADATA", "nothing", "1.0", None)
    # the same distribution later on the path is shadowed, as importlib.metadata does
    _dist(second, "Tessera.Extra-9.9.dist-info", "METADATA", "tessera-extra", "9.9", "[tessera]\nshadow = x\n")
    path = [str(first), str(second), str(tmp_path / "missing")]
    monkeypatch.setattr(sys, "path", path)
    ours = _ours(GROUPS)
    assert ours == _standard(GROUPS, path=path)
    assert ("tessera", "legacy", "legacy_mod:plugin", "Legacy.Pkg", "0.3") in ours
    assert not any(name == "shadow" for _g, name, *_ in ours)
    assert not any(group == "console_scripts" for group, *_ in ours)


def test_zip_on_path_falls_back_to_the_standard_library(tmp_path, monkeypatch):
    archive = tmp_path / "x.zip"
    archive.write_bytes(b"PK\x05\x06" + bytes(18))  # an empty zip archive
    calls = []
    monkeypatch.setattr(sys, "path", [str(archive), *sys.path])
    monkeypatch.setattr(entrypoints, "_from_importlib", lambda wanted: calls.append(wanted) or [])
    assert entrypoints.entry_points(GROUPS) == []
    assert calls == [frozenset(GROUPS)]


def test_import_target_follows_dotted_attributes():
    assert _import_target("os.path:join")() is __import__("os").path.join
    assert _import_target(" os : path.join [extra] ")() is __import__("os").path.join
    assert _import_target("os")() is __import__("os")
    with pytest.raises(AttributeError):
        _import_target("os:no_such_name")()


def test_start_up_does_not_import_importlib_metadata():
    code = ("import sys; from tessera.plugins import PluginHost; h = PluginHost(); "
            "assert h.found_records(); print('importlib.metadata' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"
