"""Fixtures shared by every test folder."""

from __future__ import annotations

import os

import pytest

# Translate blocks at the second visit of a PC (the default waits for 16), so that the
# short loops of the tests run through the fast engine's blocks, not only its stepping.
os.environ.setdefault("TESSERA_BLOCK_HOT", "2")


@pytest.fixture
def write(tmp_path):
    """``write(name, bytes_or_text) -> path`` in the test's temporary directory."""

    def _write(name: str, content: bytes | str) -> str:
        path = tmp_path / name
        if isinstance(content, str):
            path.write_text(content)
        else:
            path.write_bytes(content)
        return str(path)

    return _write
