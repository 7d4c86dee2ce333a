"""What a run produced, as the campaign compares it with the golden run's.

* :func:`outputs` — the campaign's outputs of a finished run, as a dict of JSON values:
  ``stdout``, ``exit`` (the status ``tessera run`` gives), ``memory:SPEC`` (the bytes of
  a range, hex), ``structure:NAME`` (a digest of a fault target's entries), ``checker``
  (what the campaign's function returned);
* :func:`state_digest` — the whole architectural state (every fault target but the
  instruction word at decode; RAM by its non-zero 64 KiB chunks), for *latent* faults:
  outputs equal, state not;
* :func:`convergence_digest` — everything a run's future depends on that the machine
  shows: :func:`state_digest`, the machine's ``state()`` (every agent's PC, registers,
  status and counters, the sync objects, the clock and step count), the scheduler's
  position and the extensions' ``state_bytes()``; equal at a checkpoint, two runs go on
  identically;
* :func:`register_digest` — the processors' registers only, cheap enough to take at
  every checkpoint of a run: where a fault's effect first shows (``diverged_at``).
"""

from __future__ import annotations

import hashlib
import importlib
import json
from collections.abc import Mapping
from typing import Any

import numpy as np

from tessera.errors import ConfigError
from tessera.settings import parse_int
from tessera_faults.campaign.config import OutputSpec
from tessera_faults.targets import Target, targets_of

__all__ = ["checker_function", "convergence_digest", "memory_ranges", "outputs", "register_digest",
           "state_digest"]

_CHUNK = 1 << 16
_REGISTER_KINDS = ("register", "csr", "lanes")


def memory_ranges(machine: Any, specs: tuple[str, ...]) -> list[tuple[str, int, int]]:
    """``(spec, address, size)`` of every ``[outputs] memory`` range: ``START:+SIZE`` or
    ``START:END``, each a number or a symbol (``result``, ``buf+16``)."""
    out = []
    for spec in specs:
        start_text, colon, end_text = spec.partition(":")
        if not colon:
            raise ConfigError(f"outputs.memory {spec!r}: write START:+SIZE or START:END")
        start = _address(machine, start_text, spec)
        end = start + _address(machine, end_text[1:], spec) if end_text.strip().startswith("+") \
            else _address(machine, end_text, spec)
        if end <= start or end - start > 1 << 26:
            raise ConfigError(f"outputs.memory {spec!r}: the range is empty or longer than 64 MiB")
        out.append((spec, start, end - start))
    return out


def _address(machine: Any, text: str, spec: str) -> int:
    text = text.strip()
    try:
        return parse_int(text)
    except ValueError:
        pass
    name, plus, offset = text.partition("+")
    try:
        return int(machine.symbols[name.strip()]) + (parse_int(offset) if plus else 0)
    except (KeyError, ValueError):
        raise ConfigError(f"outputs.memory {spec!r}: {text!r} is not an address or a symbol of the program") from None


def checker_function(name: str) -> Any:
    """The ``module:function`` of ``[outputs] checker``."""
    module, _, attr = name.partition(":")
    try:
        fn = getattr(importlib.import_module(module), attr)
    except (ImportError, AttributeError) as exc:
        raise ConfigError(f"outputs.checker {name!r} cannot be imported: {exc}") from None
    if not callable(fn):
        raise ConfigError(f"outputs.checker {name!r} is not a function")
    return fn


def _values_digest(target: Target) -> str:
    values = target.snapshot()
    return hashlib.blake2b(repr(values).encode(), digest_size=16).hexdigest()


def outputs(machine: Any, spec: OutputSpec, stdout: str, exit_status: int,
            targets: Mapping[str, Target] | None = None, *, golden: bool = False) -> dict[str, Any]:
    """The campaign's outputs of a run that ended (see the module doc).  A checker that raises
    is a :class:`ConfigError` on the ``golden`` run, and an output unlike the golden's
    (so an ``sdc``) on a run with a fault."""
    out: dict[str, Any] = {}
    if spec.stdout:
        out["stdout"] = stdout
    if spec.exit:
        out["exit"] = exit_status
    for name, address, size in memory_ranges(machine, spec.memory):
        out[f"memory:{name}"] = bytes(machine.space.read_bytes(address, size)).hex()
    if spec.structures:
        targets = targets_of(machine) if targets is None else targets
        for name in spec.structures:
            target = targets.get(name)
            if target is None:
                raise ConfigError(f"outputs.structures: unknown target {name!r} "
                                  f"(see tessera faults targets --arch {machine.arch.name})")
            out[f"structure:{name}"] = _values_digest(target)
    if spec.checker:
        try:
            value = checker_function(spec.checker)(machine)
        except ConfigError:
            raise
        except Exception as exc:  # noqa: BLE001 - the user's checker on a machine a fault may have wrecked
            if golden:
                raise ConfigError(f"outputs.checker {spec.checker} raised {type(exc).__name__} on the golden "
                                  f"run: {exc}") from None
            value = f"the checker raised {type(exc).__name__}: {exc}"  # an output unlike the golden's
        try:
            out["checker"] = json.loads(json.dumps(value))
        except (TypeError, ValueError):
            raise ConfigError(f"outputs.checker {spec.checker}: returned {type(value).__name__}, "
                              "which is not JSON data") from None
    return out


def _memory_digest(machine: Any, target: Target, h: Any) -> None:
    """Feed ``h`` the non-zero 64 KiB chunks of a RAM target (with their offsets): a mostly
    empty 256 MiB RAM costs one vectorised scan of its storage, not a hash of every byte."""
    parts = target.name.split(".")  # mem.REGION, or mem.SPACE.REGION (a space name may hold dots)
    space = machine.spaces[".".join(parts[1:-1])] if len(parts) > 2 else machine.space
    base, size = target.base or 0, target.entries
    region = space.region_at(base)
    storage = getattr(region, "data", None)
    if storage is not None and region.start == base and len(storage) == size:
        data = np.frombuffer(storage, dtype=np.uint8)  # no copy: the region's own buffer
    else:
        data = np.frombuffer(bytes(space.read_bytes(base, size)), dtype=np.uint8)
    whole = size - size % _CHUNK
    if whole:
        for chunk in np.flatnonzero(data[:whole].reshape(-1, _CHUNK).any(axis=1)):
            h.update(int(chunk * _CHUNK).to_bytes(8, "little"))
            h.update(data[chunk * _CHUNK:(chunk + 1) * _CHUNK].tobytes())
    if whole < size and data[whole:].any():
        h.update(int(whole).to_bytes(8, "little"))
        h.update(data[whole:].tobytes())


def state_digest(machine: Any, targets: Mapping[str, Target] | None = None) -> str:
    """A digest of every fault target's contents (see the module doc)."""
    targets = targets_of(machine) if targets is None else targets
    h = hashlib.blake2b(digest_size=16)
    for name in sorted(targets):
        target = targets[name]
        if target.kind == "decode":
            continue
        h.update(name.encode() + b"\0")
        if target.kind == "memory":
            _memory_digest(machine, target, h)
        else:
            h.update(repr(target.snapshot()).encode())
    return h.hexdigest()


def register_digest(machine: Any) -> str:
    """A digest of the processors' registers, CSRs and lanes (cheap: see the module doc)."""
    targets = targets_of(machine)
    h = hashlib.blake2b(digest_size=16)
    for name in sorted(targets):
        target = targets[name]
        if target.kind in _REGISTER_KINDS:
            h.update(name.encode() + b"\0" + repr(target.snapshot()).encode())
    return h.hexdigest()


def convergence_digest(machine: Any, targets: Mapping[str, Target] | None = None) -> str:
    """A digest of the whole machine (see the module doc): the golden run's at a checkpoint
    equal to an injected run's there means the fault is gone and the rest is the golden run."""
    h = hashlib.blake2b(digest_size=16)
    state = machine.state()
    scheduler = getattr(machine, "scheduler", None)
    state["scheduler"] = [getattr(scheduler, "turn", None), getattr(scheduler, "left", None)]
    h.update(json.dumps(state, sort_keys=True, default=repr).encode())
    for name in sorted(machine.ext):
        state_bytes = getattr(machine.ext[name], "state_bytes", None)
        if callable(state_bytes):
            h.update(name.encode() + b"\0" + state_bytes())
    h.update(state_digest(machine, targets).encode())
    return h.hexdigest()
