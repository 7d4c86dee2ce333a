"""The machine settings of the tile architecture (``--set tile.<key>=<value>``).

Every key, its default, type, range and documentation is in ``data/config.toml`` — one
key per [A] assumption of tile.md sections 7 and 9 — so the documentation
(docs/tile.md), the declaration the core checks (:func:`tile_settings`, declared by the
extension) and :class:`TileConfig` come from one list.  Keys marked ``only`` name an
assumption whose alternatives are not implemented: any other value is refused with one
clear line rather than silently running the default.
"""

from __future__ import annotations

import functools
import tomllib
from collections.abc import Mapping
from importlib import resources
from typing import Any

from tessera.errors import ConfigError
from tessera.settings import Setting, Settings

PREFIX = "tile."
#: config.toml type -> setting kind (``bits`` names a bit range, e.g. ``27:23``: text).
_KINDS = {"int": "int", "size": "size", "bool": "bool", "str": "str", "path": "path", "bits": "str"}


@functools.cache
def schema() -> dict[str, dict[str, Any]]:
    """``key -> {default, type, doc, spec, min?, max?, note?, choices?, only?}`` from ``data/config.toml``."""
    text = resources.files("tessera_tile").joinpath("data", "config.toml").read_text(encoding="utf-8")
    return tomllib.loads(text)


def _setting(key: str, entry: Mapping[str, Any]) -> Setting:
    kind = _KINDS[entry["type"]]
    default = entry["default"]
    choices = tuple(entry.get("choices", ()))
    if entry.get("only"):
        choices = (default,)
    if kind == "bool" and isinstance(default, str):
        default = default.lower() == "true"
    if choices:  # a bool marked only stays a bool: (False,) matches "false", 0 and False
        kind = "choice"
    return Setting(PREFIX + key, kind, default, min=entry.get("min"), max=entry.get("max"),
                   choices=choices, help=f"{entry['doc']} [{entry['spec']}]", note=entry.get("note", ""))


@functools.cache
def tile_settings() -> Settings:
    """The ``tile.*`` settings, as the tile extension declares them (label ``tile``)."""
    return Settings(tuple(_setting(key, entry) for key, entry in schema().items()), label="tile")


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
        declared = tile_settings()
        given = declared.check({k: v for k, v in config.items() if str(k).startswith(PREFIX)})
        values = {s.name[len(PREFIX):]: given.get(s.name, s.default) for s in declared.items}
        cfg = cls(values)
        cfg.validate()
        return cfg

    def validate(self) -> None:
        """What the declared ranges cannot say: multiples, powers of two, relations between keys."""
        def need(ok: bool, message: str) -> None:
            if not ok:
                raise ConfigError(f"tile settings: {message}")

        need(self.vlen % 64 == 0, f"vlen={self.vlen} must be a multiple of 64 between 64 and 4096")
        need(self.granule & (self.granule - 1) == 0, "granule must be a power of two")
        need(self.row_bytes % self.granule == 0 or self.granule % self.row_bytes == 0,
             "row_bytes and granule must divide one another")
        need(self.tile_bytes % self.row_bytes == 0 and self.tile_bytes % self.granule == 0,
             "tile_bytes must be a multiple of row_bytes and granule")
        need(self.tile_bytes % (self.vlen // 8) == 0, "tile_bytes must be a multiple of vlen/8")
        need(self.shmem_bytes % 64 == 0, "shmem_bytes must be a positive multiple of 64")
        need(self.l2b_bytes % 64 == 0, "l2b_bytes must be a positive multiple of 64")
        need(self.mbar_l2b_base >= self.shmem_bytes, "mbar_l2b_base must lie above the shared memory")
        need(self.stack_bytes % 16 == 0, "stack_bytes must be a multiple of 16, at least 64")

    # ------------------------------------------------------------------ derived values
    @property
    def threads(self) -> int:
        return self.threads_per_pe * self.pes_per_cluster * self.clusters

    @property
    def granules_per_tile(self) -> int:
        return self.tile_bytes // self.granule

    @property
    def opcode_names(self) -> list[str]:
        return [o.strip().lower() for o in self.opcodes.split(",") if o.strip()]

    def as_dict(self) -> dict[str, Any]:
        return {k: getattr(self, k) for k in self._keys}
