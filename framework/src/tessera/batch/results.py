"""The results file: one JSON line per finished run, written as each finishes, and resumed.

Each result is written as one line and flushed at once, so a batch killed at any
moment (Ctrl-C, ``kill -9``, a lost machine) keeps every run that finished.  Running
the same batch again reads the file first: a run whose ``id`` is there with the same
``spec_hash`` is done and skipped; one whose spec (or program) changed since is run
again, and its old line dropped.  The one thing a kill can leave behind — a last line
cut short — is dropped too.  When lines must go, the file is rewritten whole beside
the old one and renamed over it, so even a kill during that leaves a valid file.

A line that is not a result anywhere but at the end means the file is not a results
file (a wrong ``-o``): the batch refuses to touch it.
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Iterable
from typing import IO, Any

import attrs

from tessera.errors import ConfigError, LoadError

__all__ = ["ResultsFile", "read_results"]


@attrs.define
class _Existing:
    """What a results file held: the kept lines by id, and what had to go."""

    lines: dict[str, str] = attrs.Factory(dict)
    hashes: dict[str, str] = attrs.Factory(dict)
    truncated: bool = False          # a last line cut short (a killed write)
    needs_rewrite: bool = False


def _read_existing(path: str) -> _Existing:
    found = _Existing()
    try:
        with open(path, "rb") as fh:
            data = fh.read()
    except FileNotFoundError:
        return found
    except OSError as exc:
        raise ConfigError(f"cannot read results file {path}: {exc.strerror or exc}") from None
    pieces = data.split(b"\n")
    tail = pieces.pop()  # b"" when the file ends with a newline
    for number, piece in enumerate(pieces, 1):
        if not piece.strip():
            found.needs_rewrite = True
            continue
        record = _parse(piece)
        if record is None:
            raise ConfigError(f"{path}:{number}: not a result line of tessera batch; refusing to "
                              "overwrite the file (choose another output file)")
        _keep(found, record, piece)
    if tail.strip():
        record = _parse(tail)
        if record is None:
            found.truncated = True  # the line a kill cut short: that run is done again
        else:
            _keep(found, record, tail)
        found.needs_rewrite = True
    return found


def _parse(piece: bytes) -> dict[str, Any] | None:
    try:
        record = json.loads(piece)
    except (json.JSONDecodeError, UnicodeDecodeError):
        return None
    if not isinstance(record, dict) or not isinstance(record.get("id"), str) \
            or not isinstance(record.get("spec_hash"), str):
        return None
    return record


def _keep(found: _Existing, record: dict[str, Any], piece: bytes) -> None:
    if record["id"] in found.lines:  # a later line for the same id replaces it
        found.needs_rewrite = True
    found.lines[record["id"]] = piece.decode("utf-8")
    found.hashes[record["id"]] = record["spec_hash"]


class ResultsFile:
    """Where results go: a file that is resumed, or ``-`` (standard output, nothing resumed)."""

    def __init__(self, path: str) -> None:
        self.path = path
        self.done: dict[str, dict[str, Any]] = {}   # id -> its result, for the specs still current
        self.stale: list[str] = []                   # ids whose recorded spec_hash differs
        self.truncated = False
        self._fh: IO[str] | None = None

    @property
    def to_stdout(self) -> bool:
        return self.path == "-"

    def open(self, current: dict[str, str]) -> None:
        """Read what is done (``current`` maps every spec's id to its hash), drop what is out of
        date or cut short, and open the file for appending."""
        if self.to_stdout:
            self._fh = sys.stdout
            return
        if os.path.isdir(self.path):
            raise ConfigError(f"cannot write results to {self.path}: it is a directory")
        found = _read_existing(self.path)
        self.truncated = found.truncated
        for ident, recorded in list(found.hashes.items()):
            if ident not in current:
                continue  # a run of another batch (or of lines since removed): kept as it is
            if recorded == current[ident]:
                self.done[ident] = json.loads(found.lines[ident])
            else:
                self.stale.append(ident)
                del found.lines[ident]
                found.needs_rewrite = True
        try:
            if found.needs_rewrite:
                self._rewrite(found.lines.values())
            self._fh = open(self.path, "a", encoding="utf-8")  # closed by close()
        except OSError as exc:
            raise ConfigError(f"cannot write results file {self.path}: {exc.strerror or exc}") from None

    def _rewrite(self, lines: Iterable[str]) -> None:
        tmp = f"{self.path}.tmp{os.getpid()}"
        with open(tmp, "w", encoding="utf-8") as fh:
            for line in lines:
                fh.write(line + "\n")
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, self.path)

    def write(self, result: dict[str, Any]) -> None:
        """Append one result line and flush it, so a kill loses no finished run."""
        assert self._fh is not None, "open() first"
        self._fh.write(json.dumps(result, ensure_ascii=False) + "\n")
        self._fh.flush()

    def close(self) -> None:
        if self._fh is not None and not self.to_stdout:
            self._fh.close()
        self._fh = None


def read_results(path: str) -> dict[str, dict[str, Any]]:
    """The results of a results file by id (the last line of an id wins; a cut-short last
    line is left out).  :class:`LoadError` if the file cannot be read."""
    if not os.path.exists(path):
        raise LoadError(f"results file {path} does not exist")
    try:
        found = _read_existing(path)
    except ConfigError as exc:
        raise LoadError(exc.message) from None
    return {ident: json.loads(line) for ident, line in found.lines.items()}
