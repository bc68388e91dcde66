"""requirements.lock is requirements.txt resolved, pinned and hashed (`make lock`) for the image's Python.

A dependency added to or narrowed in requirements.txt without regenerating the lock fails here, before the
image build would install something else than the list says.
"""

from __future__ import annotations

import re
from pathlib import Path

from packaging.requirements import Requirement
from packaging.utils import canonicalize_name
from packaging.version import Version

ROOT = Path(__file__).resolve().parent.parent


def requirement_lines(path: Path) -> list[str]:
    """The requirement lines of a pip requirements file: comments, blanks and options left out, continuations
    joined."""
    text = path.read_text(encoding="utf-8").replace("\\\n", " ")
    lines = [re.sub(r"(^|\s)#.*$", "", line).strip() for line in text.splitlines()]
    return [line for line in lines if line and not line.startswith("-")]


def locked() -> dict[str, tuple[Version, list[str]]]:
    """{canonical name: (pinned version, hashes)} of requirements.lock; every line must be an exact pin."""
    out = {}
    for line in requirement_lines(ROOT / "requirements.lock"):
        spec, *options = line.split(" --hash=")
        req = Requirement(spec.strip())
        pins = [s for s in req.specifier if s.operator == "=="]
        assert len(pins) == 1 and len(req.specifier) == 1, f"not an exact pin in requirements.lock: {line}"
        out[canonicalize_name(req.name)] = (Version(pins[0].version), [o.strip() for o in options])
    return out


def test_every_runtime_requirement_is_locked_at_a_version_it_allows():
    lock = locked()
    wanted = [Requirement(line) for line in requirement_lines(ROOT / "requirements.txt")]
    assert wanted, "requirements.txt names no package"
    missing = [str(r) for r in wanted if canonicalize_name(r.name) not in lock]
    assert not missing, f"not in requirements.lock (run 'make lock'): {missing}"
    outside = [f"{r} (locked {lock[canonicalize_name(r.name)][0]})" for r in wanted
               if not r.specifier.contains(lock[canonicalize_name(r.name)][0], prereleases=True)]
    assert not outside, f"requirements.lock pins a version requirements.txt rules out (run 'make lock'): {outside}"


def test_every_locked_package_carries_sha256_hashes():
    lock = locked()
    assert lock
    for name, (_, hashes) in lock.items():
        assert hashes, f"{name} has no hash in requirements.lock"
        assert all(re.fullmatch(r"sha256:[0-9a-f]{64}", h) for h in hashes), (name, hashes)


def test_the_lock_targets_the_image_python_and_the_image_installs_it_with_hashes():
    dockerfile = (ROOT / "Dockerfile").read_text(encoding="utf-8")
    image = re.search(r"^FROM\s+python:(\d+)\.(\d+)", dockerfile, re.MULTILINE)
    assert image, "the Dockerfile's base image is not python:X.Y"
    header = (ROOT / "requirements.lock").read_text(encoding="utf-8")[:1000]
    assert f"--python-version {image.group(1)}.{image.group(2)} " in header, header
    assert "--generate-hashes" in header
    assert re.search(r"pip install [^\n]*--require-hashes -r requirements\.lock", dockerfile)
    assert "COPY requirements.lock" in dockerfile
    makefile = (ROOT / "Makefile").read_text(encoding="utf-8")
    assert f"LOCK_PYTHON ?= {image.group(1)}.{image.group(2)}\n" in makefile
