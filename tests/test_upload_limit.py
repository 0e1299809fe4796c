"""One upload limit: the app's cap (``core.csv_data.MAX_UPLOAD_MB``), Streamlit's ``server.maxUploadSize``
in both configs (what a server enforces), the bytes the parser accepts and the README's sentences.

The uploader's "Limit … per file" is checked on the page itself in tests/app/test_kernel_regression.py.
"""

from __future__ import annotations

import re
import tomllib

import pytest

from core import csv_data
from tests.conftest import ROOT


@pytest.mark.parametrize("config", [".streamlit/config.toml", "deploy/streamlit-production.toml"])
def test_the_server_configs_cap_uploads_at_the_apps_limit(config):
    settings = tomllib.loads((ROOT / config).read_text(encoding="utf-8"))
    assert settings["server"]["maxUploadSize"] == csv_data.MAX_UPLOAD_MB


def test_the_parser_accepts_exactly_what_the_uploader_lets_through():
    # Streamlit counts maxUploadSize in MiB (maxUploadSize * 1024 * 1024 bytes)
    assert csv_data.MAX_BYTES == csv_data.MAX_UPLOAD_MB * 1024 * 1024
    row = b"0.5,1.5\n"
    just_over = b"x,y\n" + row * (csv_data.MAX_BYTES // len(row) + 1)
    with pytest.raises(csv_data.CsvError) as err:
        csv_data.parse_xy_csv(just_over)
    assert err.value.code == "too_big"


def test_the_readme_states_the_same_limit():
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    serving = re.findall(r"(\d+)\s+MB\s+uploads", text)  # the production settings of `make serve`
    caps = re.findall(r"uploads of[^.]*?\((\d+) MB\)", text, flags=re.S)  # the safety caps
    assert serving
    assert caps
    assert {int(n) for n in serving + caps} == {csv_data.MAX_UPLOAD_MB}, serving + caps
