"""Large RAM is a private anonymous mapping: untouched pages cost no host memory, even
when a snapshot reads all of them (a shared mapping would allocate every page read)."""

from __future__ import annotations

import subprocess
import sys
import textwrap

import pytest

from tessera.memory.regions import LAZY_RAM_THRESHOLD, RAM

SCRIPT = textwrap.dedent("""
    import pickle, resource
    from tessera.memory.regions import RAM
    def peak():
        return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss // 1024  # KiB -> MiB (Linux)
    ram = RAM("dram", 0, 512 << 20)
    ram.write_bytes(0, bytes(range(256)) * 4096)    # touch 1 MiB
    before = peak()
    blob = pickle.dumps(ram)                         # the snapshot scans all 512 MiB
    again = pickle.loads(blob)
    assert again.read_bytes(0, 256) == bytes(range(256))
    print(before, peak(), len(blob))
""")


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="ru_maxrss is in KiB on Linux only")
def test_a_snapshot_of_mostly_untouched_ram_stays_small_in_host_memory():
    out = subprocess.run([sys.executable, "-c", SCRIPT], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    before, after, size = map(int, out.stdout.split())
    assert after - before < 50, f"peak RSS grew {after - before} MiB while snapshotting"
    assert size < 2 << 20  # only the touched 64 KiB chunks are kept


def test_small_ram_is_a_bytearray_and_large_ram_a_mapping():
    assert isinstance(RAM("a", 0, 4096).data, bytearray)
    big = RAM("b", 0, LAZY_RAM_THRESHOLD)
    assert not isinstance(big.data, bytearray)
    big.write_bytes(8, b"\x01\x02")
    assert big.read_bytes(7, 4) == b"\x00\x01\x02\x00"
