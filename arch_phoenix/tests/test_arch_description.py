"""The architecture record as users see it: registration, caches, flags, comments."""

from __future__ import annotations

from tessera.plugins import PluginHost


def test_phoenix_registers_with_cache_geometry_and_run_flags():
    host = PluginHost(load_entry_points=False, use_environment=False)
    record = host.load_module("phoenix=tessera_phoenix.plugin")
    assert record.status == "active" and record.api_version == 1
    arch = host.architecture("phoenix")
    assert (arch.word_bits, arch.endian, arch.reset_pc) == (48, "little", 0xFFFD0000)
    caches = {c.name: c for c in arch.caches}
    assert (caches["L1I"].size, caches["L1I"].ways, caches["L1I"].line, caches["L1I"].sets) == (
        32 * 1024, 4, 32, 256)
    assert (caches["L1D"].size, caches["L1D"].sets) == (64 * 1024, 512)
    assert arch.cli_flags["no-pma"][:2] == ("pma", False)
    assert arch.comment_chars == ";"  # '#' marks immediates in rfPhoenix assembly


def test_settings_are_type_checked():
    import numpy as np
    import pytest

    from tessera.errors import ConfigError
    from tessera_phoenix.config import PhoenixConfig

    cfg = PhoenixConfig.from_machine({"lanes": np.int64(4), "pma": 0, "lenient": 1, "irq": ""})
    assert (cfg.lanes, cfg.pma, cfg.lenient) == (4, False, True) and type(cfg.lanes) is int
    assert PhoenixConfig.from_machine({"dram": "1M"}).dram == 1 << 20  # the one size syntax
    for bad in ({"threads": "abc"}, {"threads": True}, {"dram": "1G"}, {"pma": "maybe"},
                {"lenient": 2}, {"irq": 5}, {"hartid": -1}, {"hartid": 1 << 28},
                {"reset_cr0": 0x1_0000}, {"reset_cr0": -1}):
        with pytest.raises(ConfigError):
            PhoenixConfig.from_machine(bad)
