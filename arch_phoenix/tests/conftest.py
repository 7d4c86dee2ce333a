"""Test settings for this plugin's tests."""

from __future__ import annotations

import os

# Translate blocks at the second visit of a PC (the default waits for 16), so that the
# short loops of the tests run through the fast engine's blocks, not only its stepping.
os.environ.setdefault("TESSERA_BLOCK_HOT", "2")
