"""Shared set-up of the wheel's tests (scripts/python.sh runs them in a fresh virtual environment
holding only the built wheel, pytest and pandas, with no Rust toolchain on PATH).

PREFIX_EXEC_ROOT: the source tree (for the bundled example and ../shared/data/released-runs);
PREFIX_EXEC_CLI: the native binary, when built, for byte-identity with it.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import List

import pytest

ROOT = Path(os.environ.get("PREFIX_EXEC_ROOT", Path(__file__).resolve().parents[2]))
EXAMPLE = ROOT / "static" / "examples" / "synthetic-grid.jsonl"
RELEASED = ROOT.parent / "shared" / "data" / "released-runs"
# The console script installed with the wheel, beside the venv's python.
PREFIX_EXEC = str(Path(sys.executable).parent / "prefix-exec")


def run(args: List[str], **kw) -> subprocess.CompletedProcess:
    """Runs a command, capturing its output as bytes."""
    return subprocess.run(args, capture_output=True, timeout=600, **kw)


def wheel_cli(*args: str, **kw) -> subprocess.CompletedProcess:
    return run([PREFIX_EXEC, *args], **kw)


@pytest.fixture(scope="session")
def native_cli() -> str:
    """The native Rust binary, or skip."""
    cli = os.environ.get("PREFIX_EXEC_CLI", str(ROOT / "target" / "debug" / "prefix-exec"))
    if not os.access(cli, os.X_OK):
        pytest.skip(f"the native binary {cli} is not built")
    return cli


@pytest.fixture(scope="session")
def released() -> Path:
    """The shared released runs, or skip (a fresh clone without shared/)."""
    if not RELEASED.is_dir():
        pytest.skip(f"shared data not found at {RELEASED}")
    return RELEASED
