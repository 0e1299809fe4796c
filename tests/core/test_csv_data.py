"""The CSV reader: good files in several dialects, and every kind of bad file refused with a code."""

from __future__ import annotations

import numpy as np
import pytest

from core.csv_data import MAX_ROWS, CsvError, parse_xy_csv


@pytest.mark.parametrize(
    "content",
    [
        b"x,y\n3,30\n1,10\n2,20\n",
        b"3,30\n1,10\n2,20\n",
        "x;y\n3;30\n1;10\n2;20",
        "x\ty\n3\t30\n1\t10\n2\t20\n",
        "\ufeffx, y\n 3, 30\n1,10\n\n2,20\n".encode(),
        b"\r\n".join([b"time,value", b"3.0,3e1", b"1,10.0", b"2,20"]),
    ],
)
def test_good_files_sorted_by_x(content):
    x, y = parse_xy_csv(content)
    assert x.dtype == y.dtype == np.float64
    np.testing.assert_array_equal(x, [1.0, 2.0, 3.0])
    np.testing.assert_array_equal(y, [10.0, 20.0, 30.0])


def test_negative_and_scientific_numbers():
    x, y = parse_xy_csv("-1.5e-3,-2\n+4,1E2\n")
    np.testing.assert_array_equal(x, [-1.5e-3, 4.0])
    np.testing.assert_array_equal(y, [-2.0, 100.0])


def test_max_rows_is_inclusive():
    rows = "\n".join(f"{i},{i * i}" for i in range(50))
    x, _ = parse_xy_csv(rows, max_rows=50)
    assert x.size == 50
    with pytest.raises(CsvError) as err:
        parse_xy_csv(rows, max_rows=49)
    assert err.value.code == "too_many_rows"
    assert err.value.params == {"rows": 50, "max": 49}


def test_default_cap():
    rows = "\n".join(f"{i},1" for i in range(MAX_ROWS + 1))
    with pytest.raises(CsvError, match="too many rows") as err:
        parse_xy_csv(rows)
    assert err.value.code == "too_many_rows"


@pytest.mark.parametrize(
    ("content", "code"),
    [
        (b"", "empty"),
        (b"\n \n", "empty"),
        (b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR", "not_text"),
        (b"\xff\xfe\xfa1,2\n", "not_text"),
        (b"x\n1\n2\n3\n", "one_column"),
        (b"x,y,z\n1,2,3\n4,5,6\n", "columns"),
        (b"1,2\n3,4,5\n", "ragged"),
        (b"x,y\n1,2\n3,abc\n", "not_number"),
        (b"x,y\n1,2\n3,\n", "missing"),
        (b"x,y\n1,2\nNaN,4\n", "missing"),
        (b"x,y\n1,2\n3,inf\n", "not_finite"),
        (b"x,y\n1,2\n", "too_few_rows"),
        (b"x,y\n", "too_few_rows"),
        (b"1," + b"9" * 3_000_000, "too_big"),
    ],
)
def test_bad_files(content, code):
    with pytest.raises(ValueError, match=r".") as err:  # CsvError is a ValueError
        parse_xy_csv(content)
    assert isinstance(err.value, CsvError)
    assert err.value.code == code
    assert str(err.value)


def test_error_positions():
    with pytest.raises(CsvError) as err:
        parse_xy_csv("x,y\n1,2\n3,4\n5,oops\n")
    assert err.value.params == {"row": 4, "column": 2, "cell": "oops"}


def test_not_bytes_or_text():
    with pytest.raises(CsvError) as err:
        parse_xy_csv(12345)  # type: ignore[arg-type]
    assert err.value.code == "not_text"
