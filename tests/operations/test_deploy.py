"""deploy/: the systemd unit and the Dockerfile, checked as far as this machine allows (no Docker daemon)."""

import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
DOCKERFILE = ROOT / "deploy" / "Dockerfile"
UNIT = ROOT / "deploy" / "content-review.service"


@pytest.mark.skipif(shutil.which("systemd-analyze") is None, reason="systemd-analyze is not installed")
def test_the_systemd_unit_verifies(tmp_path):
    """systemd-analyze verify, with the unit's paths pointed at this checkout and interpreter."""
    text = UNIT.read_text().replace("/opt/content-review/.venv/bin/python", sys.executable)
    unit = tmp_path / "content-review.service"
    unit.write_text(text.replace("/opt/content-review", str(ROOT)))
    done = subprocess.run(["systemd-analyze", "verify", str(unit)], capture_output=True, text=True, timeout=60)
    assert (done.returncode, done.stderr) == (0, ""), done.stderr
    assert re.search(r"^ExecStart=\S+/python app.py$", UNIT.read_text(), re.M)  # serving.py's graceful stop


def test_the_dockerfile_passes_hadolint():
    done = subprocess.run(
        [Path(sys.executable).with_name("hadolint"), str(DOCKERFILE)], capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 0, done.stdout + done.stderr


def _copied():
    """Source paths of the Dockerfile's COPY lines that read the build context."""
    paths = []
    for line in DOCKERFILE.read_text().splitlines():
        if line.startswith("COPY ") and "--from=" not in line:
            paths += [part.rstrip("/") for part in line.split()[1:-1]]
    return paths


def test_the_image_runs_from_exactly_what_the_dockerfile_copies(tmp_path):
    """The same steps as the image without Docker: only the copied files, a fresh instance, /healthz."""
    for path in _copied():
        source = ROOT / path
        (shutil.copytree if source.is_dir() else shutil.copy2)(source, tmp_path / path)
    script = (
        "from app import create_app; app = create_app({'WEBHOOK_SENDER_ENABLED': False, "
        "'TEAM_MESSAGES_ENABLED': False, 'CHAT_CARDS_ENABLED': False}, serve=True); "
        "print(app.test_client().get('/healthz').status_code, app.test_client().get('/login').status_code)"
    )
    env = {
        "PATH": "/usr/bin:/bin",
        "REVIEW_INSTANCE_PATH": str(tmp_path / "state" / "instance"),
        "REVIEW_UPLOADS_PATH": str(tmp_path / "state" / "uploads"),
    }
    done = subprocess.run(
        [sys.executable, "-I", "-c", f"import sys; sys.path.insert(0, '.'); {script}"],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.stdout.split() == ["200", "200"], done.stderr[-2000:]
    packages = {path.parent.name for path in ROOT.glob("*/__init__.py") if path.parent.name not in ("tests", "bench")}
    assert packages <= set(_copied()), "a package is missing from the Dockerfile's COPY lines"
