"""The Makefile's first install works for a newcomer (issue 22, item 10), checked without installing.

* Which Python makes ``.venv``: the first of python3.11, python3.12, python3.13, python3 on PATH that
  is >= 3.11, and a clear message (no venv) when none is. The stand-in interpreters run the very
  check the Makefile passes them on this machine's Python, with ``sys.version_info`` set to their
  version; PATH holds them and the two tools the Makefile calls (grep, uname), nothing else.
* torch's CPU build: on Linux x86_64/aarch64 the pinned torch is installed first from PyTorch's
  CPU index when it answers, and the rest after it; when it does not answer, or that install
  fails, pip installs everything from the default index, and make still succeeds. ``.venv``'s
  python is a stand-in that logs each pip call (and runs the reachability probe for real); the
  index is a local HTTP server or a closed port.
"""

from __future__ import annotations

import http.server
import os
import re
import shutil
import socket
import stat
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.conftest import ROOT

MAKE = shutil.which("make")
TORCH_PIN = re.search(r"^torch==\S+", (ROOT / "requirements.txt").read_text(), re.M).group(0)


def _make(*args: str, path: str | None = None, timeout: float = 60) -> subprocess.CompletedProcess:
    assert MAKE, "make is missing (it runs `make test` in CI)"
    env = {**os.environ}
    env.pop("PYTHON", None)  # an inherited PYTHON would pick the interpreter for us
    if path is not None:
        env["PATH"] = path
    return subprocess.run(
        [MAKE, "--no-print-directory", *args],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=timeout,
    )


def _script(path: Path, text: str) -> Path:
    path.write_text(text)
    path.chmod(path.stat().st_mode | stat.S_IXUSR)
    return path


def _python(folder: Path, name: str, version: tuple[int, int]) -> Path:
    """A stand-in ``name`` on PATH: runs ``-c CODE`` on this machine's Python, as Python ``version``."""
    fake = f"import sys; sys.version_info = {(*version, 0, 'final', 0)!r}; exec(sys.argv[1])"
    return _script(
        folder / name, f'#!/bin/sh\n[ "$1" = -c ] && exec {sys.executable} -c "{fake}" "$2"\nexit 3\n'
    )


@pytest.fixture
def bare_path(tmp_path: Path) -> Path:
    """A folder for PATH with grep and uname only (the Makefile's other tools); no Python."""
    folder = tmp_path / "bin"
    folder.mkdir()
    for tool in ("grep", "uname"):
        (folder / tool).symlink_to(shutil.which(tool))
    return folder


def _chosen(tmp_path: Path, path: Path) -> str:
    """The interpreter `make` would create .venv with (a dry run)."""
    venv = tmp_path / "venv"
    result = _make("-n", f"VENV={venv}", f"{venv}/bin/activate", path=str(path))
    assert result.returncode == 0, result.stderr
    (line,) = [x for x in result.stdout.splitlines() if x.endswith(f" -m venv {venv}")]
    return line.split()[0]


@pytest.mark.parametrize(
    ("on_path", "chosen"),
    [
        ({"python3.11": (3, 11), "python3.12": (3, 12), "python3": (3, 12)}, "python3.11"),
        ({"python3.12": (3, 12), "python3": (3, 12)}, "python3.12"),  # Ubuntu 24.04
        ({"python3.13": (3, 13), "python3": (3, 10)}, "python3.13"),
        ({"python3": (3, 13)}, "python3"),  # Debian 13, Homebrew
        ({"python3": (3, 14)}, "python3"),
    ],
)
def test_the_first_python_new_enough_makes_the_venv(tmp_path, bare_path, on_path, chosen):
    for name, version in on_path.items():
        _python(bare_path, name, version)
    assert _chosen(tmp_path, bare_path) == str(bare_path / chosen)


def test_without_a_python_new_enough_make_says_so(tmp_path, bare_path):
    _python(bare_path, "python3", (3, 10))
    venv = tmp_path / "venv"
    result = _make(f"VENV={venv}", f"{venv}/bin/activate", path=str(bare_path))
    assert result.returncode != 0
    assert "No Python >= 3.11 on PATH (tried python3.11 python3.12 python3.13 python3)" in result.stderr
    assert "PYTHON=/path/to/python3.x" in result.stderr
    assert not venv.exists()


def test_a_python_named_too_old_is_refused(tmp_path, bare_path):
    old = _python(bare_path, "python3.10", (3, 10))
    venv = tmp_path / "venv"
    result = _make(f"VENV={venv}", f"PYTHON={old}", f"{venv}/bin/activate", path=str(bare_path))
    assert result.returncode != 0
    assert f"{old} is not a Python >= 3.11" in result.stderr
    assert not venv.exists()


# ---------------------------------------------------------------- torch from the CPU index


@pytest.fixture
def venv(tmp_path: Path) -> Path:
    """A .venv whose python logs every pip call to ``pip.log`` and fails those in ``fail-if``."""
    root = tmp_path / "venv"
    (root / "bin").mkdir(parents=True)
    (root / "bin" / "activate").touch()
    log, fail = root / "pip.log", root / "fail-if"
    _script(
        root / "bin" / "python",
        f"""#!/bin/sh
if [ "$1" = -c ]; then exec {sys.executable} "$@"; fi
echo "$*" >> {log}
if [ -f {fail} ] && echo "$*" | grep -q -e "$(cat {fail})"; then exit 1; fi
""",
    )
    return root


def _pip_calls(venv: Path) -> list[str]:
    log = venv / "pip.log"
    return log.read_text().splitlines() if log.exists() else []


@pytest.fixture(scope="module")
def index_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """A local HTTP server that answers like an index with a ``torch/`` page."""
    root = tmp_path_factory.mktemp("index")
    (root / "whl" / "cpu" / "torch").mkdir(parents=True)
    (root / "whl" / "cpu" / "torch" / "index.html").write_text("<html><body></body></html>")

    class Quiet(http.server.SimpleHTTPRequestHandler):
        def __init__(self, *args, **kwargs):
            super().__init__(*args, directory=str(root), **kwargs)

        def log_message(self, *args):
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Quiet)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}/whl/cpu"
    server.shutdown()
    server.server_close()


def _closed_port_url() -> str:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    return f"http://127.0.0.1:{port}/whl/cpu"  # nothing listens there now


def _install(
    venv: Path, index: str, host: str = "Linux/x86_64", dev: bool = False
) -> subprocess.CompletedProcess:
    os_name, arch = host.split("/")
    stamp = venv / (".dev-installed" if dev else ".runtime-installed")
    args = (f"VENV={venv}", f"TORCH_INDEX={index}", f"HOST_OS={os_name}", f"HOST_ARCH={arch}", str(stamp))
    result = _make(*args)
    assert result.returncode == 0, result.stdout + result.stderr
    assert stamp.exists()
    return result


@pytest.mark.parametrize("host", ["Linux/x86_64", "Linux/aarch64"])
@pytest.mark.parametrize("dev", [False, True], ids=["run", "test"])
def test_linux_takes_torch_from_the_cpu_index_first(venv, index_url, host, dev):
    _install(venv, index_url, host, dev)
    requirements = "requirements-dev.txt" if dev else "requirements.txt"
    assert _pip_calls(venv) == [
        f"-m pip install --quiet --index-url {index_url} {TORCH_PIN}",
        f"-m pip install --quiet -r {requirements}",
    ]


def test_an_unreachable_index_falls_back_quietly(venv):
    result = _install(venv, _closed_port_url())
    assert _pip_calls(venv) == ["-m pip install --quiet -r requirements.txt"]
    assert "not reachable: torch comes from pip's default index" in result.stdout
    assert "Error" not in result.stdout + result.stderr


def test_a_failed_cpu_install_falls_back(venv, index_url):
    (venv / "fail-if").write_text("--index-url")
    result = _install(venv, index_url)
    assert _pip_calls(venv) == [
        f"-m pip install --quiet --index-url {index_url} {TORCH_PIN}",
        "-m pip install --quiet -r requirements.txt",
    ]
    assert "it comes from pip's default index" in result.stdout


@pytest.mark.parametrize("host", ["Darwin/arm64", "Darwin/x86_64", "Linux/armv7l"])
def test_elsewhere_pypi_is_asked_alone(venv, index_url, host):
    # PyPI's macOS torch is the CPU build; PyTorch's CPU index has no 32-bit ARM build.
    _install(venv, index_url, host)
    assert _pip_calls(venv) == ["-m pip install --quiet -r requirements.txt"]
