"""Fixtures shared by every test folder."""

from __future__ import annotations

import pytest


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
