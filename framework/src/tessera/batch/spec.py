"""One line of a batch file: a ``tessera run`` specification, parsed and checked.

A batch file is JSON lines, one object per run (docs/batch.md has the schema).  Each
key is one option of ``tessera run`` spelt with underscores (``max_steps`` for
``--max-steps``), ``set`` is ``--set KEY=VALUE`` as an object and ``options`` the tool
plugins' options; ``id`` names the run in the results.  Everything a run needs is
checked here, before any run starts, so that a typo on line 900 stops the batch at
once in one line naming the line, not after hours of runs:

* the line's shape (JSON, an object, known keys, the type and range of each value) —
  :class:`~tessera.errors.ConfigError`, exit status 64;
* the program file (it exists and is a file) — :class:`~tessera.errors.LoadError`, 65,
  as ``tessera run`` reports a missing program;
* the architecture (named, or chosen from the ELF header as ``tessera run`` chooses),
  its settings and the tool options — the errors ``tessera run`` raises for them.

Every message starts with where the line is: ``runs.jsonl:3: unknown key 'progam' …``.
"""

from __future__ import annotations

import hashlib
import json
import math
import numbers
import os
from collections.abc import Iterable, Iterator, Mapping
from typing import Any

import attrs

from tessera.errors import ConfigError, LoadError, TesseraError
from tessera.machine.limits import MAX_COUNT

__all__ = ["KEYS", "Spec", "SpecChecker", "check_specs", "parse_line", "read_lines", "spec_hash"]

#: The keys a spec may have, each with the ``tessera run`` option it stands for.
KEYS: dict[str, str] = {
    "id": "(the run's name in the results; default: the line number)",
    "program": "PROGRAM",
    "arch": "--arch",
    "format": "--format",
    "load": "--load",
    "entry": "--entry",
    "memory_cap": "--memory-cap",
    "auto_map": "--auto-map",
    "any_elf_machine": "--any-elf-machine",
    "set": "--set KEY=VALUE",
    "max_steps": "--max-steps",
    "max_cycles": "--max-cycles",
    "max_seconds": "--max-seconds",
    "until_pc": "--until-pc",
    "until_symbol": "--until-symbol",
    "stop_on_trap": "--stop-on-trap",
    "engine": "--engine",
    "snapshot_out": "--snapshot-out",
    "options": "tool plugins' options (--trace ...)",
}

#: ``tessera run``'s default step budget (its ``--max-steps`` default).
DEFAULT_MAX_STEPS = 100_000_000
_ENGINES = ("fast", "step", "check")
_FORMATS = ("auto", "elf", "raw", "words", "asm")


@attrs.frozen
class Spec:
    """One checked run: ``payload`` is what a worker needs (plain data, picklable)."""

    id: str
    line: int
    where: str              # ``runs.jsonl:3`` or ``spec 3``: the prefix of messages about it
    hash: str               # the spec's hash: its JSON (without ``id``) and the program's bytes
    payload: dict[str, Any]


def spec_hash(given: Mapping[str, Any], program_bytes: bytes) -> str:
    """SHA-256 of the spec as given (canonical JSON, ``id`` left out) and of the program's bytes.

    A result whose hash differs from the spec's is out of date: the spec or the program
    changed, so resuming runs it again.
    """
    canonical = json.dumps({k: v for k, v in given.items() if k != "id"}, sort_keys=True,
                           separators=(",", ":"), ensure_ascii=True)
    digest = hashlib.sha256(canonical.encode("ascii"))
    digest.update(b"\0")
    digest.update(hashlib.sha256(program_bytes).digest())
    return digest.hexdigest()


# --------------------------------------------------------------------------- reading lines


def read_lines(path: str) -> Iterator[tuple[int, str]]:
    """``(line number, text)`` of every non-blank line of a batch file (:class:`LoadError` if unreadable)."""
    try:
        with open(path, encoding="utf-8") as fh:
            lines = fh.read().splitlines()
    except FileNotFoundError:
        raise LoadError(f"batch file {path} does not exist") from None
    except IsADirectoryError:
        raise LoadError(f"cannot read batch file {path}: it is a directory") from None
    except UnicodeDecodeError:
        raise LoadError(f"batch file {path} is not UTF-8 text") from None
    except OSError as exc:
        raise LoadError(f"cannot read batch file {path}: {exc.strerror or exc}") from None
    for number, text in enumerate(lines, 1):
        if text.strip():
            yield number, text


def parse_line(text: str, where: str) -> dict[str, Any]:
    """The JSON object of one line, its keys and value types checked (:class:`ConfigError`).

    A key whose value is ``null`` counts as left out (its default).
    """
    try:
        raw = json.loads(text)
    except json.JSONDecodeError as exc:
        raise ConfigError(f"{where}: not valid JSON: {exc.msg} (column {exc.colno})") from None
    if not isinstance(raw, dict):
        raise ConfigError(f"{where}: a spec is a JSON object, not {_json_type(raw)}")
    raw = {key: value for key, value in raw.items() if value is not None}  # null: the default
    unknown = [k for k in raw if k not in KEYS]
    if unknown:
        raise ConfigError(f"{where}: unknown key {unknown[0]!r}{_did_you_mean(unknown[0])} "
                          f"(keys: {', '.join(KEYS)})")
    if "program" not in raw:
        raise ConfigError(f"{where}: no 'program': every spec names the program to run")
    _check_types(raw, where)
    return raw


def _json_type(value: Any) -> str:
    return {list: "an array", str: "a string", bool: "a boolean", type(None): "null"}.get(
        type(value), "a number")


def _did_you_mean(key: str) -> str:
    import difflib  # only on the error path

    close = difflib.get_close_matches(key, list(KEYS), n=1, cutoff=0.7)
    return f" (did you mean {close[0]!r}?)" if close else ""


def _is_int(value: Any) -> bool:
    return isinstance(value, numbers.Integral) and not isinstance(value, bool)


def _address(value: Any, key: str, where: str) -> int:
    from tessera.settings import parse_int

    if isinstance(value, str):
        try:
            value = parse_int(value)
        except ValueError:
            raise ConfigError(f"{where}: {key} {value!r} is not an address (use e.g. 4096 or \"0x1000\")") from None
    if not _is_int(value) or value < 0:
        raise ConfigError(f"{where}: {key} must be an address (a whole number >= 0 or a string "
                          f"like \"0x1000\"), not {value!r}")
    return int(value)


def _check_types(raw: dict[str, Any], where: str) -> None:  # noqa: C901 - one branch per key, flat
    def fail(key: str, what: str) -> None:
        raise ConfigError(f"{where}: {key} must be {what}, not {json.dumps(raw[key])}")

    if "id" in raw and not (isinstance(raw["id"], str) and raw["id"] or _is_int(raw["id"])):
        fail("id", "a non-empty string or a whole number")
    if not isinstance(raw["program"], str) or not raw["program"]:
        fail("program", "a file name")
    for key in ("arch", "snapshot_out"):
        if raw.get(key) is not None and (not isinstance(raw[key], str) or not raw[key]):
            fail(key, "a non-empty string")
    if "format" in raw and raw["format"] not in _FORMATS:
        fail("format", "one of " + ", ".join(_FORMATS))
    if raw.get("engine") is not None and raw["engine"] not in _ENGINES:
        fail("engine", "one of " + ", ".join(_ENGINES))
    for key in ("load", "entry"):
        if raw.get(key) is not None:
            _address(raw[key], key, where)
    for pc in _listed(raw, "until_pc"):
        _address(pc, "until_pc", where)
    if not all(isinstance(n, str) and n for n in _listed(raw, "until_symbol")):
        fail("until_symbol", "a symbol or a list of symbols")
    for key in ("auto_map", "any_elf_machine", "stop_on_trap"):
        if key in raw and not isinstance(raw[key], bool):
            fail(key, "true or false")
    if raw.get("any_elf_machine") and not raw.get("arch"):
        raise ConfigError(f"{where}: any_elf_machine needs arch: it says which architecture runs the ELF")
    for key in ("max_steps", "max_cycles"):
        value = raw.get(key)
        if value is not None and (not _is_int(value) or not 0 <= value <= MAX_COUNT):
            fail(key, "a whole number in 0..2**63-1")
    seconds = raw.get("max_seconds")
    if seconds is not None and (isinstance(seconds, bool) or not isinstance(seconds, int | float)
                                or not math.isfinite(seconds) or seconds <= 0):
        fail("max_seconds", "a finite number of seconds above 0")
    if "memory_cap" in raw:
        _memory_cap(raw["memory_cap"], where)
    for key in ("set", "options"):
        if key in raw:
            if not isinstance(raw[key], dict):
                fail(key, "an object")
            for name, value in raw[key].items():
                if isinstance(value, dict) or (key == "set" and isinstance(value, list)):
                    raise ConfigError(f"{where}: {key}.{name} must be a string, number or boolean, "
                                      f"not {json.dumps(value)}")


def _listed(raw: Mapping[str, Any], key: str) -> list[Any]:
    """A key that takes one value or a list of them, as a list."""
    value = raw.get(key)
    if value is None:
        return []
    return list(value) if isinstance(value, list) else [value]


def _memory_cap(value: Any, where: str) -> int:
    from tessera.settings import parse_size

    if isinstance(value, str):
        try:
            value = parse_size(value)
        except ValueError:
            raise ConfigError(f"{where}: memory_cap {value!r} is not a size (use e.g. \"256M\")") from None
    if not _is_int(value) or value <= 0:
        raise ConfigError(f"{where}: memory_cap must be a positive number of bytes or a size like "
                          f"\"256M\", not {json.dumps(value)}")
    return int(value)


# --------------------------------------------------------------------------- checking against a host


def _settings_values(raw: Mapping[str, Any], arch: Any) -> dict[str, Any]:
    """``set`` as ``tessera run --set`` reads it: a declared key gets the JSON value (its
    declaration converts it); an undeclared key's text that looks like an integer or a
    boolean becomes one, as on the command line."""
    from tessera.settings import guess_value

    declared = getattr(arch, "settings", None)
    out: dict[str, Any] = {}
    for key, value in raw.items():
        if isinstance(value, str) and not (declared is not None and declared.declares(key)):
            value = guess_value(value)
        out[key] = value
    return out


def _absolute_paths(config: dict[str, Any], arch: Any) -> dict[str, Any]:
    """Relative values of ``path`` settings made absolute, so workers elsewhere find them."""
    declared = getattr(arch, "settings", None)
    if declared is None:
        return config
    out = dict(config)
    for key, value in config.items():
        setting = declared.get(key)
        if setting is not None and setting.kind == "path" and isinstance(value, str) and value:
            out[key] = os.path.abspath(value)
    return out


class SpecChecker:
    """Checks specs against a plugin host, as ``tessera run`` would check its options.

    Architectures and the tool plugins' options are looked up once per batch.
    """

    def __init__(self, host: Any) -> None:
        self.host = host
        self._tools: Any = None

    @property
    def tools(self) -> Any:
        if self._tools is None:
            from tessera.batch.tooloptions import ToolOptions

            self._tools = ToolOptions.of(self.host)
        return self._tools

    def check(self, raw: dict[str, Any], line: int, where: str) -> Spec:
        """A :class:`Spec` from a parsed line, or the first error with ``where`` in front."""
        try:
            return self._check(raw, line, where)
        except TesseraError as err:
            if not err.message.startswith(f"{where}: "):
                err.message = f"{where}: {err.message}"
                err.args = (err.message,)
            raise

    def _check(self, raw: dict[str, Any], line: int, where: str) -> Spec:
        from tessera.machine.machine import default_engine
        from tessera.memory import DEFAULT_MEMORY_CAP
        from tessera.session import resolve_arch
        from tessera.settings import check_config

        program = raw["program"]
        if not os.path.exists(program):
            raise LoadError(f"program {program} does not exist")
        if os.path.isdir(program):
            raise LoadError(f"program {program} is a directory")
        try:
            with open(program, "rb") as fh:
                data = fh.read()
        except OSError as exc:
            raise LoadError(f"cannot read program {program}: {exc.strerror or exc}") from None
        cap = _memory_cap(raw["memory_cap"], where) if "memory_cap" in raw else DEFAULT_MEMORY_CAP
        try:
            arch = resolve_arch(self.host, raw.get("arch"), program, cap)
        except ConfigError as err:  # said in the spec's words, not the command line's
            err.message = err.message.replace("so --arch is required", "so the spec needs 'arch'")
            raise
        config = _absolute_paths(_settings_values(raw.get("set", {}), arch), arch)
        check_config(arch, config)
        options = {str(k): v for k, v in raw.get("options", {}).items()}
        if options:  # refuses unknown options and bad values now (none given: nothing to refuse)
            self.tools.values(options)
        payload = {
            "id": str(raw.get("id", line)),
            "program": os.path.abspath(program),
            "arch": arch.name,
            "format": raw.get("format", "auto"),
            "load": _address(raw["load"], "load", where) if raw.get("load") is not None else None,
            "entry": _address(raw["entry"], "entry", where) if raw.get("entry") is not None else None,
            "memory_cap": cap,
            "auto_map": bool(raw.get("auto_map", False)),
            "any_elf_machine": bool(raw.get("any_elf_machine", False)),
            "config": config,
            "max_steps": raw.get("max_steps", DEFAULT_MAX_STEPS),
            "max_cycles": raw.get("max_cycles"),
            "max_seconds": raw.get("max_seconds"),
            "until_pc": [_address(pc, "until_pc", where) for pc in _listed(raw, "until_pc")],
            "until_symbol": [str(s) for s in _listed(raw, "until_symbol")],
            "stop_on_trap": bool(raw.get("stop_on_trap", False)),
            "engine": raw.get("engine") or default_engine(),
            "snapshot_out": os.path.abspath(raw["snapshot_out"]) if raw.get("snapshot_out") else None,
            "options": options,
        }
        payload["spec_hash"] = spec_hash(raw, data)
        return Spec(payload["id"], line, where, payload["spec_hash"], payload)


def check_specs(items: Iterable[tuple[int, str, dict[str, Any]]], host: Any) -> list[Spec]:
    """Every spec checked, ids unique: ``items`` are ``(line, where, parsed object)``."""
    checker = SpecChecker(host)
    specs: list[Spec] = []
    seen: dict[str, str] = {}
    for line, where, raw in items:
        spec = checker.check(raw, line, where)
        if spec.id in seen:
            raise ConfigError(f"{where}: id {spec.id!r} is already used by {seen[spec.id]}; ids must be unique")
        seen[spec.id] = f"line {line}" if where.endswith(f":{line}") else where
        specs.append(spec)
    return specs
