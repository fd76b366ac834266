"""Shared fixtures: paths to the repository's configs and a scratch directory."""
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
CONFIGS = ROOT / "configs"


@pytest.fixture
def configs_dir() -> Path:
    return CONFIGS


@pytest.fixture
def repo_root() -> Path:
    return ROOT
