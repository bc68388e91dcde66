"""The project's Python files pass ruff with the settings in pyproject.toml (what `make lint` runs on the tree)."""

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def _project_files() -> list[str]:
    """The Python files git tracks, so a scratch script a user leaves in the checkout does not fail the tests; the
    whole tree where there is no git checkout (an unpacked copy)."""
    listed = subprocess.run(["git", "ls-files", "*.py"], cwd=ROOT, capture_output=True, text=True, timeout=60)
    files = listed.stdout.split() if listed.returncode == 0 else []
    return files or ["."]


def test_ruff_check_passes():
    out = subprocess.run([sys.executable, "-m", "ruff", "check", "--no-cache", "--output-format", "concise",
                          *_project_files()], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stdout + out.stderr
