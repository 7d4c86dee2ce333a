"""Tensix kernel manifests: one file that names a kernel's ELFs, L1 inputs and expected outputs.

``tessera run kernel.toml`` (a program format of the plugin, see
:mod:`tessera.loaders.formats`) builds the tile of the manifest's chip, loads each
core's ELF into that core's address map, writes the inputs into L1 and, when the run
ends with every core finished, saves and checks the outputs: an output that differs
from its golden stops with :class:`~tessera.errors.CheckFailed` naming the first
differing element.  The format (docs/tensix-llk.md has the reference)::

    chip = "blackhole"                 # or "wormhole_b0" ("bh" / "wh")
    kernel = "eltwise_unary_datacopy"  # a name for reports (optional)
    [cores]                            # ELF per core, paths relative to this file
    brisc = "brisc.elf"
    trisc0 = "unpack.elf"
    trisc1 = "math.elf"
    trisc2 = "pack.elf"
    [[inputs]]
    name = "A"
    address = 0x1A000
    file = "a.npy"                     # .npy (converted to format) or raw bytes (.bin)
    format = "Float16_b"
    [[outputs]]
    name = "res"
    address = 0x1E000
    format = "Float16_b"
    count = 1024                       # elements
    file = "res.npy"                   # where to save it (optional)
    golden = "golden.npy"              # what it must equal (optional)
    atol = 0.0                         # |found - expected| <= atol + rtol * |expected|
    rtol = 0.0
"""

from __future__ import annotations

import os
import tomllib
from typing import Any

import attrs
import numpy as np

from tessera.errors import CheckFailed, ConfigError, LoadError

#: manifest chip names -> tile architecture
CHIPS = {"blackhole": "tensix-tile", "bh": "tensix-tile", "wormhole_b0": "tensix-tile-wh",
         "wormhole": "tensix-tile-wh", "wh": "tensix-tile-wh"}
#: the vendor's data-format names -> the L1 element formats of tessera_tensix.l1io
FORMATS = {"Float16_b": "bf16", "Float16": "fp16", "Float32": "fp32", "Int32": "int32", "Int8": "int8",
           "UInt8": "uint8", "UInt16": "uint16", "UInt32": "uint32", "Int16": "int16"}
CORE_NAMES = ("brisc", "trisc0", "trisc1", "trisc2", "ncrisc")


@attrs.frozen
class Tensor:
    """An input or output of a manifest."""

    name: str
    address: int
    format: str
    file: str | None = None
    count: int | None = None
    golden: str | None = None
    atol: float = 0.0
    rtol: float = 0.0


@attrs.frozen
class Manifest:
    path: str
    chip: str
    arch: str
    kernel: str
    cores: dict[str, str]
    inputs: tuple[Tensor, ...]
    outputs: tuple[Tensor, ...]
    extra: dict[str, Any] = attrs.field(factory=dict)


def claims(path: str, head: bytes) -> bool:
    """A ``.toml`` file with a ``[cores]`` table is a kernel manifest."""
    return path.endswith(".toml") and b"[cores]" in head


def parse(path: str, data: bytes) -> Manifest:
    """The manifest at ``path``; every problem is one ``LoadError`` line naming the file and key."""
    try:
        raw = tomllib.loads(data.decode("utf-8"))
    except (UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
        raise LoadError(f"{path} is not a kernel manifest: {exc}") from None
    base = os.path.dirname(os.path.abspath(path))
    chip_name = raw.get("chip")
    if chip_name not in CHIPS:
        raise LoadError(f"{path}: chip = {chip_name!r}: use one of {', '.join(sorted(CHIPS))}")
    cores = raw.get("cores")
    if not isinstance(cores, dict) or not cores:
        raise LoadError(f"{path}: [cores] must name at least one core's ELF ({', '.join(CORE_NAMES)})")
    unknown = sorted(set(cores) - set(CORE_NAMES))
    if unknown:
        raise LoadError(f"{path}: [cores] {unknown[0]!r} is not a core of a tile ({', '.join(CORE_NAMES)})")
    if "brisc" not in cores:
        raise LoadError(f"{path}: [cores] has no brisc ELF: RISCV B boots the tile")
    for core, file in cores.items():
        if not isinstance(file, str):
            raise LoadError(f"{path}: [cores] {core} must be a file name")
    return Manifest(path=path, chip="wh" if CHIPS[chip_name].endswith("-wh") else "bh", arch=CHIPS[chip_name],
                    kernel=str(raw.get("kernel", os.path.basename(path))),
                    cores={k: os.path.join(base, v) for k, v in cores.items()},
                    inputs=tuple(_tensor(path, base, "inputs", t, i) for i, t in enumerate(raw.get("inputs", []))),
                    outputs=tuple(_tensor(path, base, "outputs", t, i) for i, t in enumerate(raw.get("outputs", []))),
                    extra={k: v for k, v in raw.items() if k not in ("chip", "kernel", "cores", "inputs", "outputs")})


def _tensor(path: str, base: str, table: str, raw: Any, index: int) -> Tensor:
    where = f"{path}: [[{table}]] #{index + 1}"
    if not isinstance(raw, dict):
        raise LoadError(f"{where} must be a table")
    name = str(raw.get("name", f"{table}{index}"))
    where = f"{path}: {table[:-1]} {name!r}"
    address = raw.get("address")
    if not isinstance(address, int) or address < 0:
        raise LoadError(f"{where}: address must be a non-negative integer")
    fmt = raw.get("format")
    if fmt not in FORMATS:
        raise LoadError(f"{where}: format {fmt!r}: use one of {', '.join(FORMATS)}")
    count = raw.get("count")
    if count is None and "tiles" in raw:
        count = int(raw["tiles"]) * 1024
    if table == "outputs" and (not isinstance(count, int) or count <= 0):
        raise LoadError(f"{where}: an output needs count (elements) or tiles")
    tol: dict[str, float] = {}
    for key in ("atol", "rtol"):
        value = raw.get(key, 0.0)
        if not isinstance(value, int | float) or value < 0:
            raise LoadError(f"{where}: {key} must be a non-negative number")
        tol[key] = float(value)

    def path_of(key: str) -> str | None:
        value = raw.get(key)
        return os.path.join(base, value) if isinstance(value, str) else None
    return Tensor(name=name, address=address, format=fmt, count=count, file=path_of("file"),
                  golden=path_of("golden"), atol=tol["atol"], rtol=tol["rtol"])


def architecture(path: str, data: bytes) -> str:
    return parse(path, data).arch


def load(machine: Any, path: str, data: bytes) -> Any:
    """Place every core's ELF in its address map and the inputs in L1."""
    from tessera.loaders import LoadedProgram, load_elf, read_file

    manifest = parse(path, data)
    tile = machine.ext.get("tensix_tile")
    if tile is None:
        raise ConfigError(f"{path} is a Tensix kernel: run it on {manifest.arch} (not --arch {machine.arch.name})")
    if tile.chip != manifest.chip:
        raise ConfigError(f"{path} is a {manifest.chip.upper()} kernel; the machine is {machine.arch.name}")
    loaded = LoadedProgram(path=path, format="tensix-kernel", entry=0)
    entries: dict[str, int] = {}
    for core, elf in manifest.cores.items():
        hart = tile.harts.get(core)
        if hart is None:
            raise ConfigError(f"{path}: [cores] {core}: this tile has no {core} (--set ncrisc=true adds RISCV NC)")
        got = load_elf(machine, elf, read_file(elf, machine.budget.cap), agent=hart)
        entries[core] = got.entry
        loaded.segments.extend(got.segments)
        for name, value in got.symbols.items():
            loaded.symbols[f"{core}:{name}"] = value
    machine.symbols.update(loaded.symbols)
    for tensor in manifest.inputs:
        if tensor.file is not None:   # without one, the input is declared and L1 left as it is
            write_input(tile.core.l1, tensor)
    for core, place in (manifest.extra.get("placement") or {}).items():
        if core in tile.harts:
            init_local_image(tile, manifest, core, place)
    runtime = manifest.extra.get("runtime_args")
    if runtime is not None:
        write_runtime_args(tile.core.l1, manifest, runtime)
    host = manifest.extra.get("host")
    boot = manifest.extra.get("boot")
    if host is not None or boot is not None:
        add_host(machine, tile, manifest, host, boot, entries)
    machine.ext.declare("tensix_kernel", manifest)
    return loaded


def add_host(machine: Any, tile: Any, manifest: Manifest, host: Any, boot: Any, entries: dict[str, int]) -> None:
    """``[host]`` / ``[boot]``: the agent that plays the host's side of the vendor's test
    firmware (tessera_tensix.tile.host); ``[boot]`` gives its addresses and values."""
    from tessera_tensix.tile.host import MAILBOXES, TestHost

    if host is not None and (not isinstance(host, dict) or host.get("protocol") != "tt-llk"):
        raise LoadError(f"{manifest.path}: [host] protocol must be \"tt-llk\" (the vendor test helpers' "
                        "host protocol); leave [host] and [boot] out for kernels that end by themselves")
    boot = boot if isinstance(boot, dict) else {}
    size = tile.core.l1.size

    def address(key: str, default: int) -> int:
        value = boot.get(key, default)
        if not isinstance(value, int) or not 0 <= value <= size - 4:
            raise LoadError(f"{manifest.path}: [boot] {key} = {value!r} is not an L1 address")
        return value

    boxes = boot.get("mailboxes", [MAILBOXES, MAILBOXES + 4, MAILBOXES + 8])
    if not (isinstance(boxes, list) and len(boxes) == 3):
        raise LoadError(f"{manifest.path}: [boot] mailboxes must list the three TRISC mailboxes' addresses")
    mailboxes = tuple(address(f"mailboxes[{i}]", b) if isinstance(b, int) else address("mailboxes", -1)
                      for i, b in enumerate(boxes))
    kw: dict[str, Any] = {"mailboxes": mailboxes, "brisc_command": address("brisc_command", MAILBOXES + 12),
                          "brisc_counter": address("brisc_counter", MAILBOXES + 20)}
    for key in ("start_command", "brisc_ready", "kernel_complete"):
        if key in boot:
            if not isinstance(boot[key], int) or not 0 <= boot[key] <= 0xFFFF_FFFF:
                raise LoadError(f"{manifest.path}: [boot] {key} = {boot[key]!r} is not a 32-bit value")
            kw[key] = boot[key]
    triscs = tuple(c for c in ("trisc0", "trisc1", "trisc2") if c in manifest.cores)
    machine.add_agent(TestHost("host", tile, entries, cores=triscs, **kw))


def init_local_image(tile: Any, manifest: Manifest, core: str, place: Any) -> None:
    """The vendor's firmware copies its local-RAM data from ``.loader_init`` in L1 at start
    (crt0): as the vendor's loader does, put the ELF's ``.ldm_data`` bytes there too."""
    if not isinstance(place, dict):
        return
    keys = ("loader_init_start", "loader_init_end", "ldm_data_start", "ldm_data_end")
    if not all(isinstance(place.get(k), int) for k in keys):
        return
    start, end, data, data_end = (place[k] for k in keys)
    n = data_end - data
    if start == end or n <= 0:
        return
    if n > end - start or end > tile.core.l1.size:
        raise LoadError(f"{manifest.path}: [placement.{core}] .ldm_data ({n} bytes) does not fit its "
                        f".loader_init [{start:#x}, {end:#x}) in L1")
    image = tile.harts[core].space.read_bytes(data, n)
    tile.core.l1.write(start, np.frombuffer(image, dtype=np.uint8), who=f"{core}'s .loader_init")


def write_runtime_args(l1: Any, manifest: Manifest, runtime: Any) -> None:
    """``[runtime_args]``: the words the vendor's harness writes for the kernels (buffer
    addresses, tile sizes) at ``address``."""
    if not isinstance(runtime, dict):
        raise LoadError(f"{manifest.path}: [runtime_args] must be a table")
    address, words = runtime.get("address"), runtime.get("words", [])
    if not isinstance(address, int) or not isinstance(words, list) or not all(
            isinstance(w, int) and 0 <= w <= 0xFFFF_FFFF for w in words):
        raise LoadError(f"{manifest.path}: [runtime_args] needs address and words (32-bit values)")
    if address < 0 or address + 4 * len(words) > l1.size:
        raise LoadError(f"{manifest.path}: [runtime_args] run past L1's end")
    l1.write(address, np.asarray(words, dtype="<u4").view(np.uint8), who="runtime args")


def write_input(l1: Any, tensor: Tensor) -> None:
    from tessera_tensix.l1io import to_bf16_bits

    assert tensor.file is not None
    if tensor.file.endswith(".npy"):
        try:
            values = np.load(tensor.file, allow_pickle=False)
        except (OSError, ValueError) as exc:
            raise LoadError(f"input {tensor.name}: cannot read {tensor.file}: {exc}") from None
        fmt = FORMATS[tensor.format]
        if fmt == "bf16" and values.dtype.kind == "f":
            blob = to_bf16_bits(values).astype("<u2").tobytes()
        else:
            from tessera_tensix.l1io import FORMATS as DTYPES

            blob = np.ascontiguousarray(values).astype(DTYPES[fmt]).tobytes()
    else:
        try:
            with open(tensor.file, "rb") as fh:
                blob = fh.read()
        except OSError as exc:
            raise LoadError(f"input {tensor.name}: cannot read {tensor.file}: {exc.strerror or exc}") from None
    if tensor.address + len(blob) > l1.size:
        raise LoadError(f"input {tensor.name}: {len(blob)} bytes at {tensor.address:#x} run past L1's end "
                        f"({l1.size:#x})")
    l1.write(tensor.address, np.frombuffer(blob, dtype=np.uint8), who=f"input {tensor.name}")


def read_output(l1: Any, tensor: Tensor) -> np.ndarray:
    """The output's values (float32 for float formats, its integer type otherwise)."""
    from tessera_tensix.l1io import read_output as read

    assert tensor.count is not None
    return read(l1, tensor.address, (tensor.count,), FORMATS[tensor.format])


def finish(machine: Any, result: Any) -> None:
    """Save the outputs and compare them with their goldens (a run that ended cleanly)."""
    manifest = machine.ext.get("tensix_kernel")
    if manifest is None or result.reason != "halted":
        return
    l1 = machine.ext["tensix"].l1
    for tensor in manifest.outputs:
        got = read_output(l1, tensor)
        if tensor.file:
            try:
                np.save(tensor.file, got, allow_pickle=False)
            except OSError as exc:
                raise ConfigError(f"output {tensor.name}: cannot write {tensor.file}: {exc.strerror or exc}") from None
        if tensor.golden:
            check(tensor, got, _golden(tensor))


def _golden(tensor: Tensor) -> np.ndarray:
    assert tensor.golden is not None
    try:
        return np.load(tensor.golden, allow_pickle=False)
    except (OSError, ValueError) as exc:
        raise LoadError(f"output {tensor.name}: cannot read its golden {tensor.golden}: {exc}") from None


def check(tensor: Tensor, got: np.ndarray, want: np.ndarray) -> None:
    """CheckFailed naming the first element of ``got`` that is not within tolerance of ``want``."""
    want = np.asarray(want).reshape(-1)
    got = np.asarray(got).reshape(-1)
    if want.size != got.size:
        raise CheckFailed(f"output {tensor.name}: the golden has {want.size} elements, the output {got.size}")
    g, w = got.astype(np.float64), want.astype(np.float64)
    ok = (np.abs(g - w) <= tensor.atol + tensor.rtol * np.abs(w)) | (np.isnan(g) & np.isnan(w)) | (g == w)
    if ok.all():
        return
    bad = np.flatnonzero(~ok)
    i = int(bad[0])
    tile, within = divmod(i, 1024)
    raise CheckFailed(f"output {tensor.name} at {tensor.address:#x}: element {i} (tile {tile}, face {within // 256}, "
                      f"row {within % 256 // 16}, column {within % 16}) is {got[i].item()!r}, expected {want[i].item()!r} "
                      f"({len(bad)} of {got.size} elements differ; atol {tensor.atol}, rtol {tensor.rtol})")
