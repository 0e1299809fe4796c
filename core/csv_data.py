"""Read a user's CSV of two numeric columns (x, y) into arrays, refusing bad files with a reason.

Accepted: UTF-8 text (a BOM is fine), comma-, semicolon- or tab-separated, exactly two columns, an
optional header row, at least 2 and at most ``max_rows`` data rows, every cell a finite number.
Anything else raises :class:`CsvError`, a ``ValueError`` whose ``code`` and ``params`` let the UI
show a translated message (``kr.csv_error_<code>``) while the English text stays in ``str(err)``.
"""

from __future__ import annotations

import io

import numpy as np
import pandas as pd

#: Largest number of data rows accepted by default.
MAX_ROWS = 20_000
#: Largest upload, in megabytes as Streamlit counts them (MiB): the one truth for the page's
#: uploader (``max_upload_size``), ``server.maxUploadSize`` in .streamlit/config.toml and
#: deploy/streamlit-production.toml, and the README (tests/test_upload_limit.py checks all four).
MAX_UPLOAD_MB = 2
#: Largest file accepted, in bytes (20,000 rows of two long numbers fit in well under 1 MB).
MAX_BYTES = MAX_UPLOAD_MB * 1024 * 1024
#: Separators tried, in order, on the first line.
SEPARATORS = (",", ";", "\t")


class CsvError(ValueError):
    """A CSV file that cannot be used; ``code`` names the problem, ``params`` fill its message."""

    def __init__(self, code: str, message: str, **params: object) -> None:
        super().__init__(message)
        self.code = code
        self.params = params


def _to_number(cell: str) -> float | None:
    try:
        return float(cell)
    except ValueError:
        return None


def parse_xy_csv(
    data: bytes | str, *, max_rows: int = MAX_ROWS, max_bytes: int = MAX_BYTES
) -> tuple[np.ndarray, np.ndarray]:
    """Parse CSV content into (x, y), sorted by x.

    Args:
        data: the file's bytes (as uploaded) or its text.
        max_rows: largest number of data rows accepted.
        max_bytes: largest size accepted, in bytes.

    Returns:
        x (N,), y (N,) float64, sorted by x (ties keep file order), 2 <= N <= max_rows.

    Raises:
        CsvError (a ValueError), with ``code``: ``too_big``, ``not_text``, ``empty``, ``one_column``,
        ``ragged`` (rows with different numbers of columns), ``columns`` (not exactly 2),
        ``not_number`` (a cell that is text), ``missing`` (an empty or NaN cell), ``not_finite``
        (inf), ``too_few_rows`` or ``too_many_rows``.
    """
    if isinstance(data, bytes | bytearray):
        if len(data) > max_bytes:
            raise CsvError("too_big", f"the file is too big: {len(data)} bytes (at most {max_bytes})",
                           size=len(data), max=max_bytes)  # fmt: skip
        if b"\x00" in data:
            raise CsvError("not_text", "this is not a text (CSV) file")
        try:
            text = bytes(data).decode("utf-8-sig")
        except UnicodeDecodeError as err:
            raise CsvError("not_text", "this is not a text (CSV) file: it is not UTF-8") from err
    elif isinstance(data, str):
        text = data.removeprefix("\ufeff")
        if len(text.encode("utf-8")) > max_bytes:
            raise CsvError("too_big", f"the file is too big (at most {max_bytes} bytes)",
                           size=len(text.encode("utf-8")), max=max_bytes)  # fmt: skip
    else:
        raise CsvError("not_text", f"expected bytes or text, got {type(data).__name__}")

    lines = [line for line in text.splitlines() if line.strip()]
    if not lines:
        raise CsvError("empty", "the file is empty")
    sep = next((s for s in SEPARATORS if s in lines[0]), None)
    if sep is None:
        raise CsvError("one_column", "only one column found: expected two columns x, y separated by commas")
    try:
        frame = pd.read_csv(
            io.StringIO("\n".join(lines)),
            sep=sep,
            header=None,
            dtype=str,
            keep_default_na=False,
            skipinitialspace=True,
        )
    except pd.errors.ParserError as err:
        raise CsvError("ragged", f"the rows do not all have the same number of columns ({err})") from err
    if frame.shape[1] != 2:
        raise CsvError("columns", f"expected exactly 2 columns (x, y), found {frame.shape[1]}",
                       found=frame.shape[1])  # fmt: skip

    cells = frame.to_numpy(dtype=str)  # (rows, 2)
    first = [_to_number(c.strip()) for c in cells[0]]
    has_header = all(v is None for v in first) and any(c.strip() for c in cells[0])
    body = cells[1:] if has_header else cells
    offset = 2 if has_header else 1  # row number (1-based, blank lines skipped) of body row 0
    n = body.shape[0]
    if n > max_rows:
        raise CsvError("too_many_rows", f"too many rows: {n} (at most {max_rows})", rows=n, max=max_rows)
    if n < 2:
        raise CsvError("too_few_rows", f"at least 2 data rows are needed, found {n}", rows=n)
    values = np.empty(body.shape, dtype=float)
    for (i, j), cell in np.ndenumerate(body):
        cell = cell.strip()
        line = i + offset
        if cell == "" or cell.lower() in {"nan", "na", "n/a", "null", "none"}:
            raise CsvError("missing", f"row {line}, column {j + 1}: missing value", row=line, column=j + 1)
        v = _to_number(cell)
        if v is None:
            raise CsvError("not_number", f"row {line}, column {j + 1}: {cell[:30]!r} is not a number",
                           row=line, column=j + 1, cell=cell[:30])  # fmt: skip
        if not np.isfinite(v):
            raise CsvError("not_finite", f"row {line}, column {j + 1}: {cell[:30]!r} is not finite",
                           row=line, column=j + 1, cell=cell[:30])  # fmt: skip
        values[i, j] = v
    order = np.argsort(values[:, 0], kind="stable")
    return values[order, 0].copy(), values[order, 1].copy()
