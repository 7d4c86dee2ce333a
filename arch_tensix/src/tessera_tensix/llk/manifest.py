"""``kernel.toml``: what a built kernel is and what running it needs (docs/tensix-llk.md).

The keys the loader reads are ``chip``, ``kernel``, ``[cores]`` (the ELF of each
core), ``[[inputs]]`` and ``[[outputs]]`` (L1 buffers: name, address, format,
tiles).  The build adds what it knows besides: ``[config]`` (what the build header
was generated from), ``[runtime_args]`` (the words to write at 0x20000 before the
TRISCs start), ``[boot]`` (the harness's mailbox and command addresses) and
``[placement.<core>]`` (entry point and where ``.ldm_data``'s image goes in L1).
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

from tessera_tensix.llk import chips
from tessera_tensix.llk.buildheader import Buffer, fields, runtime_block
from tessera_tensix.llk.kernels import Resolved

#: core -> the ELF file name the build writes for it
CORE_FILES = {"brisc": "brisc.elf", "trisc0": "unpack.elf", "trisc1": "math.elf", "trisc2": "pack.elf"}
#: keys written in hexadecimal
_HEX_KEYS = {"address", "words", "mailboxes", "brisc_command", "brisc_counter", "brisc_ready", "kernel_complete",
             "trisc_start_table", "entry"}


def render(res: Resolved, placement: dict[str, dict[str, int]], toolchain: str) -> str:
    """The manifest text of a build."""
    spec = res.spec
    chip = chips.chip(spec.chip)
    out = [f"# written by `tessera tensix build` ({toolchain}); format: docs/tensix-llk.md",
           _kv("chip", chip.name), _kv("kernel", spec.kernel), "", "[cores]"]
    out += [_kv(core, name) for core, name in CORE_FILES.items()]
    tiles: Any = res.values["TILE_CNT"]
    config: dict[str, object] = {
        "formats": spec.formats.as_dict(), "tiles": int(tiles), "dims": list(res.dims),
        "dest_acc": spec.dest_acc, "unpack_to_dest": spec.unpack_to_dest, "runtime_formats": spec.runtime_formats}
    if res.op is not None:
        config["op"] = res.op
    config["golden"] = res.golden
    config["constants"] = {k: _plain(v) for k, v in spec.constants.items()}
    config["runtime"] = {k: _plain(v) for k, v in spec.runtime.items()}
    out += ["", "[config]"] + [_kv(k, v) for k, v in config.items()]
    block = runtime_block(spec)
    words = [int.from_bytes(block[i:i + 4], "little") for i in range(0, len(block), 4)]
    out += ["", "[runtime_args]", _kv("address", chips.RUNTIME_ARGS), _kv("words", words),
            _kv("fields", [name for name, _t, _v in fields(spec)])]
    boot: dict[str, object] = {
        "mailboxes": [chips.MAILBOXES + 4 * i for i in range(3)], "kernel_complete": chips.KERNEL_COMPLETE,
        "brisc_command": chips.BRISC_COMMAND, "start_command": chip.start_command,
        "brisc_counter": chips.BRISC_COUNTER, "brisc_ready": chips.BRISC_READY}
    if chip.trisc_start_table is not None:
        boot["trisc_start_table"] = chip.trisc_start_table
    out += ["", "[boot]"] + [_kv(k, v) for k, v in boot.items()]
    for core, symbols in placement.items():
        out += ["", f"[placement.{core}]"] + [f"{k} = {_value(v, True)}" for k, v in symbols.items()]
    for table, buffers in (("inputs", res.inputs), ("outputs", res.outputs)):
        for buf in buffers:
            out += ["", f"[[{table}]]"] + [_kv(k, v) for k, v in _buffer(res, buf).items()]
    return "\n".join(out) + "\n"


def write(directory: Path, text: str) -> Path:
    path = directory / "kernel.toml"
    path.write_text(text)
    return path


def _buffer(res: Resolved, buf: Buffer) -> dict[str, object]:
    entry: dict[str, object] = {"name": buf.name, "address": buf.address, "format": buf.format, "tiles": buf.tiles,
                                "tile_bytes": buf.tile_bytes,
                                "layout": "row_major" if buf.field in res.row_major else "tiles"}
    if buf.field in res.fills:
        entry["fill"] = res.fills[buf.field]
    return entry


def _plain(value: object) -> object:
    return value if isinstance(value, bool | int | float) else str(value)


def _kv(key: str, value: object) -> str:
    return f"{key} = {_value(value, key in _HEX_KEYS)}"


def _value(value: object, hexa: bool = False) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return f"{value:#x}" if hexa else str(value)
    if isinstance(value, float):
        return repr(value) if math.isfinite(value) else ("nan" if math.isnan(value) else
                                                          ("inf" if value > 0 else "-inf"))
    if isinstance(value, str):
        return json.dumps(value)      # a JSON string is a valid TOML basic string
    if isinstance(value, list | tuple):
        return "[" + ", ".join(_value(v, hexa) for v in value) + "]"
    if isinstance(value, dict):
        return "{" + ", ".join(f"{_key(k)} = {_value(v, hexa)}" for k, v in value.items()) + "}"
    raise TypeError(f"no TOML form for {value!r}")


def _key(key: str) -> str:
    return key if key.replace("_", "").replace("-", "").isalnum() and key.isascii() else json.dumps(key)
