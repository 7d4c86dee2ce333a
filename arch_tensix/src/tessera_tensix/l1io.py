"""L1 contents from and to numpy files, for direct mode (``--l1``, ``--l1-out``).

``--l1 ADDR=FILE.npy`` copies the array's bytes (little-endian, C order) into L1 at
byte offset ``ADDR`` before the run; ``--l1 ADDR:FORMAT=FILE.npy`` converts first
(``bf16``: floats rounded to nearest even BF16; ``fp16``/``fp32``/``int8``/``uint8``/
``int16``/``uint16``/``int32``/``uint32``: numpy's conversion).  ``--l1-out
ADDR:SHAPE:FORMAT=FILE.npy`` saves L1 at ``ADDR`` read as ``SHAPE`` (``32x32``) values
of ``FORMAT`` when the run ends (``bf16`` is widened to float32 in the file).  Both
take several entries, separated by commas or by repeating the option.  Bad entries
are configuration errors naming the entry.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from tessera.errors import ConfigError
from tessera.settings import parse_int

#: FORMAT -> numpy dtype of the bytes in L1
FORMATS: dict[str, np.dtype[Any]] = {"bf16": np.dtype("<u2"), "fp16": np.dtype("<f2"), "fp32": np.dtype("<f4"),
           "int8": np.dtype("i1"), "uint8": np.dtype("u1"), "int16": np.dtype("<i2"),
           "uint16": np.dtype("<u2"), "int32": np.dtype("<i4"), "uint32": np.dtype("<u4")}


def to_bf16_bits(values: np.ndarray) -> np.ndarray:
    """float values -> BF16 bit patterns (uint16), rounded to nearest even; NaN stays NaN."""
    bits = np.asarray(values, dtype=np.float32).view(np.uint32).astype(np.uint64)
    rounded = (bits + 0x7FFF + ((bits >> 16) & 1)) >> 16
    nan = np.isnan(np.asarray(values, dtype=np.float32))
    return np.where(nan, (bits >> 16) | 0x40, rounded).astype(np.uint16)


def from_bf16_bits(bits: np.ndarray) -> np.ndarray:
    return (np.asarray(bits, dtype=np.uint32) << 16).view(np.float32)


def _entries(text: str | None, option: str) -> list[tuple[str, str]]:
    out = []
    for entry in (text or "").split(","):
        entry = entry.strip()
        if not entry:
            continue
        spec, sep, path = entry.partition("=")
        if not sep or not spec or not path:
            raise ConfigError(f"{option} {entry!r}: expected {'ADDR[:FORMAT]' if option == '--l1' else 'ADDR:SHAPE:FORMAT'}=FILE.npy")
        out.append((spec, path))
    return out


def _address(text: str, entry: str, option: str) -> int:
    try:
        return parse_int(text)
    except ValueError:
        raise ConfigError(f"{option} {entry!r}: {text!r} is not an address") from None


def _format(name: str, entry: str, option: str) -> np.dtype[Any]:
    if name not in FORMATS:
        raise ConfigError(f"{option} {entry!r}: unknown format {name!r} (use {', '.join(FORMATS)})")
    return FORMATS[name]


def load_inputs(l1: Any, text: str | None) -> None:
    """Apply every ``--l1`` entry to ``l1`` (a :class:`tessera_tensix.l1.L1`)."""
    for spec, path in _entries(text, "--l1"):
        entry = f"{spec}={path}"
        addr_text, _, fmt = spec.partition(":")
        address = _address(addr_text, entry, "--l1")
        if fmt:
            _format(fmt, entry, "--l1")
        try:
            data = np.load(path, allow_pickle=False)
        except (OSError, ValueError) as exc:
            raise ConfigError(f"--l1 {entry!r}: cannot read {path}: {exc}") from None
        if fmt:
            dtype = _format(fmt, entry, "--l1")
            if fmt == "bf16":
                data = to_bf16_bits(data) if data.dtype.kind == "f" else data.astype(np.uint16)
            else:
                data = data.astype(dtype)
        array = np.ascontiguousarray(data)
        raw = array.astype(array.dtype.newbyteorder("<"), copy=False).tobytes()
        if address < 0 or address + len(raw) > l1.size:
            raise ConfigError(f"--l1 {entry!r}: {len(raw)} bytes at {address:#x} do not fit in "
                              f"L1 ({l1.size:#x} bytes)")
        l1.write(address, raw, "--l1")


def parse_outputs(text: str | None, size: int | None = None) -> list[tuple[int, tuple[int, ...], str, str]]:
    """The ``--l1-out`` entries as ``(address, shape, format, path)``, checked against an
    L1 of ``size`` bytes when given (the board checks them before the run)."""
    out = []
    for spec, path in _entries(text, "--l1-out"):
        entry = f"{spec}={path}"
        parts = spec.split(":")
        if len(parts) != 3:
            raise ConfigError(f"--l1-out {entry!r}: expected ADDR:SHAPE:FORMAT=FILE.npy")
        address = _address(parts[0], entry, "--l1-out")
        try:
            shape = tuple(int(n) for n in parts[1].lower().split("x"))
        except ValueError:
            raise ConfigError(f"--l1-out {entry!r}: shape {parts[1]!r} is not like 32x32") from None
        if not shape or any(n <= 0 for n in shape):
            raise ConfigError(f"--l1-out {entry!r}: shape {parts[1]!r} must be positive")
        dtype = _format(parts[2], entry, "--l1-out")
        nbytes = int(np.prod(shape)) * dtype.itemsize
        if size is not None and (address < 0 or address + nbytes > size):
            raise ConfigError(f"--l1-out {entry!r}: {nbytes} bytes at {address:#x} do not fit in L1 "
                              f"({size:#x} bytes)")
        out.append((address, shape, parts[2], path))
    return out


def read_output(l1: Any, address: int, shape: tuple[int, ...], fmt: str) -> np.ndarray:
    dtype = FORMATS[fmt]
    count = int(np.prod(shape))
    if address < 0 or address + count * dtype.itemsize > l1.size:
        raise ConfigError(f"--l1-out: {count} {fmt} values at {address:#x} do not fit in L1")
    raw = l1.bytes[address:address + count * dtype.itemsize].copy().view(dtype).reshape(shape)
    return from_bf16_bits(raw) if fmt == "bf16" else raw.astype(dtype.newbyteorder("="))


def save_outputs(l1: Any, text: str | None) -> None:
    for address, shape, fmt, path in parse_outputs(text):
        data = read_output(l1, address, shape, fmt)
        try:
            np.save(path, data, allow_pickle=False)
        except OSError as exc:
            raise ConfigError(f"cannot write L1 to {path}: {exc.strerror or exc}") from None
