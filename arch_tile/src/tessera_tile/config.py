"""The machine settings of the tile architecture (``--set tile.<key>=<value>``).

Every key, its default, type and documentation is in ``data/config.toml`` — one key per
[A] assumption of tile.md sections 7 and 9 — so the documentation (docs/tile.md) and
the validation come from one list.  Keys marked ``only`` name an assumption whose
alternatives are not implemented: any other value is refused with one clear line
rather than silently running the default.
"""

from __future__ import annotations

import functools
import tomllib
from collections.abc import Mapping
from importlib import resources
from typing import Any

from tessera.errors import ConfigError

PREFIX = "tile."
_SIZES = {"k": 1 << 10, "m": 1 << 20, "g": 1 << 30}


@functools.cache
def schema() -> dict[str, dict[str, Any]]:
    """``key -> {default, type, doc, spec, choices?, only?}`` from ``data/config.toml``."""
    text = resources.files("tessera_tile").joinpath("data", "config.toml").read_text(encoding="utf-8")
    return tomllib.loads(text)


def _convert(key: str, kind: str, value: Any) -> Any:
    where = f"tile setting {key}"
    if kind == "bool":
        if isinstance(value, bool):
            return value
        text = str(value).strip().lower()
        if text in ("true", "yes", "on", "1"):
            return True
        if text in ("false", "no", "off", "0"):
            return False
        raise ConfigError(f"{where} must be true or false, not {value!r}")
    if kind in ("int", "size"):
        if isinstance(value, bool):
            raise ConfigError(f"{where} must be a number, not {value!r}")
        if isinstance(value, int):
            return value
        text = str(value).strip().lower().replace("_", "")
        mult = 1
        if kind == "size" and text[-1:] in _SIZES:
            text, mult = text[:-1], _SIZES[text[-1]]
        try:
            return int(text, 0) * mult
        except ValueError:
            raise ConfigError(f"{where} must be a number{' (e.g. 64K)' if kind == 'size' else ''}, "
                              f"not {value!r}") from None
    return str(value).strip().lower() if kind == "str" else str(value).strip()


class TileConfig:
    """Validated settings: each key of the schema as an attribute (``cfg.vlen``)."""

    def __getattr__(self, name: str) -> Any:
        """Settings are set as attributes by ``__init__``; this only types them (and refuses others)."""
        raise AttributeError(f"no tile setting {name!r}")

    def __init__(self, values: Mapping[str, Any]) -> None:
        for key, value in values.items():
            setattr(self, key, value)
        self._keys = tuple(values)

    @classmethod
    def from_mapping(cls, config: Mapping[str, Any]) -> TileConfig:
        """Read the ``tile.*`` keys of a machine configuration (other keys are not ours)."""
        spec = schema()
        mine = {k[len(PREFIX):]: v for k, v in config.items() if k.startswith(PREFIX)}
        unknown = sorted(set(mine) - set(spec))
        if unknown:
            raise ConfigError(f"unknown tile setting(s): {', '.join(PREFIX + k for k in unknown)} "
                              f"(see docs/tile.md for the {len(spec)} keys)")
        values: dict[str, Any] = {}
        for key, entry in spec.items():
            kind = entry["type"]
            default = _convert(key, kind, entry["default"])
            value = _convert(key, kind, mine[key]) if key in mine else default
            if entry.get("only") and value != default:
                raise ConfigError(f"tile setting {key}={value!r}: only {default!r} is implemented "
                                  f"({entry['doc']})")
            choices = entry.get("choices")
            if choices is not None and value not in [_convert(key, kind, c) for c in choices]:
                raise ConfigError(f"tile setting {key} must be one of "
                                  f"{', '.join(str(c) for c in choices)}, not {value!r}")
            values[key] = value
        cfg = cls(values)
        cfg.validate()
        return cfg

    def validate(self) -> None:
        def need(ok: bool, message: str) -> None:
            if not ok:
                raise ConfigError(f"tile settings: {message}")

        need(self.vlen % 64 == 0 and 64 <= self.vlen <= 4096, f"vlen={self.vlen} must be a multiple "
             "of 64 between 64 and 4096")
        need(self.granule > 0 and self.granule & (self.granule - 1) == 0, "granule must be a power of two")
        need(self.row_bytes % self.granule == 0 or self.granule % self.row_bytes == 0,
             "row_bytes and granule must divide one another")
        need(self.tile_bytes % self.row_bytes == 0 and self.tile_bytes % self.granule == 0,
             "tile_bytes must be a multiple of row_bytes and granule")
        need(self.tile_bytes % (self.vlen // 8) == 0, "tile_bytes must be a multiple of vlen/8")
        need(1 <= self.num_tiles <= 256, "num_tiles must be 1..256 (8-bit register fields)")
        need(1 <= self.threads_per_pe <= 8, "threads_per_pe must be 1..8 (the t_sync mask has 8 bits)")
        need(1 <= self.pes_per_cluster <= 8, "pes_per_cluster must be 1..8 (the t_sync mask has 8 bits)")
        need(1 <= self.clusters <= 64, "clusters must be 1..64")
        need(self.shmem_bytes > 0 and self.shmem_bytes % 64 == 0, "shmem_bytes must be a positive "
             "multiple of 64")
        need(self.l2b_bytes > 0 and self.l2b_bytes % 64 == 0, "l2b_bytes must be a positive multiple of 64")
        need(self.mbar_l2b_base >= self.shmem_bytes, "mbar_l2b_base must lie above the shared memory")
        need(0 < self.num_semaphores <= 32, "num_semaphores must be 1..32 (5-bit completeobj)")
        need(0 <= self.t_wait_dont_care <= 31, "t_wait_dont_care must fit 5 bits")
        need(self.queue_depth >= 1, "queue_depth must be at least 1")
        need(self.stack_bytes >= 64 and self.stack_bytes % 16 == 0, "stack_bytes must be a multiple of 16, "
             "at least 64")
        for key in ("lat_lsu_global", "bw_lsu_global", "lat_lsu_shared", "bw_lsu_shared", "lat_tma",
                    "bw_tma", "lat_mma", "lat_alu"):
            need(getattr(self, key) >= 1, f"{key} must be at least 1")

    # ------------------------------------------------------------------ derived values
    @property
    def threads(self) -> int:
        return self.threads_per_pe * self.pes_per_cluster * self.clusters

    @property
    def granules_per_tile(self) -> int:
        return self.tile_bytes // self.granule

    @property
    def opcode_names(self) -> list[str]:
        return [o.strip() for o in self.opcodes.split(",") if o.strip()]

    def as_dict(self) -> dict[str, Any]:
        return {k: getattr(self, k) for k in self._keys}
