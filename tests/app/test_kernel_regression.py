"""The Kernel Regression page in AppTest: every control, the h* button, uploads, odd URLs, both languages.

Figures are read back from the Plotly JSON the page sends, and checked against independent
references where one exists (statsmodels KernelReg for the fit and for h*).
"""

from __future__ import annotations

import base64
import json
import math
import re
import warnings

import numpy as np
import pytest
from statsmodels.nonparametric.kernel_regression import KernelReg
from streamlit.runtime.media_file_manager import MediaFileManager

from core.csv_data import CsvError, parse_xy_csv
from tests.app.conftest import assert_clean, charts, open_page
from tests.app.live import live_slider
from ui.i18n import load_catalogue

PAGE = "kernel-regression"
FIGURES = ["kr_fig_fit", "kr_fig_row", "kr_fig_matrix", "kr_fig_kernels", "kr_fig_cv", "kr_fig_sweep"]


def posts_data():
    rng = np.random.default_rng(42)
    X = np.sort(rng.uniform(-3, 3, 200))
    y = np.sinc(X) + 0.1 * rng.normal(0, 1, 200)
    return X, y


def chart(at, key: str) -> dict:
    """The Plotly figure (as JSON) of the chart with this key."""
    found = [c for c in charts(at) if c.proto.id.endswith(f"-{key}")]
    assert len(found) == 1, f"{key}: {len(found)} charts"
    return json.loads(found[0].proto.spec)


def values(v) -> np.ndarray:
    """A Plotly data array, plain list or base64 typed array, as float numpy (None -> NaN)."""
    if isinstance(v, dict) and "bdata" in v:
        return np.frombuffer(base64.b64decode(v["bdata"]), dtype=np.dtype(v["dtype"])).astype(float)
    return np.array([np.nan if e is None else e for e in v], dtype=float)


def trace(fig: dict, name: str) -> dict:
    return next(tr for tr in fig["data"] if tr.get("name") == name)


def fit_trace(at) -> tuple[np.ndarray, np.ndarray]:
    tr = chart(at, "kr_fig_fit")["data"]
    line = next(t for t in tr if t.get("mode") == "lines" and t["line"]["width"] == 3)
    return values(line["x"]), values(line["y"])


def data_trace(at) -> tuple[np.ndarray, np.ndarray]:
    tr = chart(at, "kr_fig_fit")["data"][0]
    return values(tr["x"]), values(tr["y"])


def turning_points(at) -> int:
    """The wiggliness count the page prints under the fit."""
    return int(re.search(r"the fit has (\d+) local", all_text(at)).group(1))


def all_text(at) -> str:
    return "\n".join([m.value for m in at.markdown] + [c.value for c in at.caption])


@pytest.fixture(scope="module")
def statsmodels_h_star() -> float:
    x, y = posts_data()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return abs(float(KernelReg(y, x, var_type="c", reg_type="lc", bw="cv_ls", rng=0).bw[0]))


# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize(("lang", "title"), [("en", "Kernel regression"), ("zh", "核回归")])
def test_page_renders_every_figure_in_both_languages(lang, title):
    at = open_page(PAGE, lang=lang)
    assert_clean(at)
    assert title in at.title[0].value
    for key in FIGURES:
        assert chart(at, key)["data"], key
    assert not at.error
    assert len(at.latex) >= 3
    assert len(at.table) == 2  # the NW <-> attention mapping and the per-kernel h* table
    if lang == "zh":
        assert "拟合" in chart(at, "kr_fig_fit")["layout"]["title"]["text"]
        assert "留一交叉验证" in all_text(at)


def test_default_fit_is_the_posts_and_matches_statsmodels():
    at = open_page(PAGE)
    x, y = posts_data()
    dx, dy = data_trace(at)
    np.testing.assert_array_equal(dx, x)
    np.testing.assert_array_equal(dy, y)
    gx, fy = fit_trace(at)
    np.testing.assert_allclose(gx, np.linspace(-3, 3, 500))
    ref = KernelReg(y, x, var_type="c", reg_type="lc", bw=[0.3], rng=0).fit(gx)[0]
    np.testing.assert_allclose(fy, ref, atol=1e-8)


def test_page_states_the_posts_h_star_and_whether_it_agrees(statsmodels_h_star):
    at = open_page(PAGE)
    text = all_text(at)
    m = re.search(r"post's Gaussian kernel picks \*\*h\\\* = ([0-9.]+)\*\*", text)
    assert m, text
    shown = float(m.group(1))
    assert shown == pytest.approx(statsmodels_h_star, rel=0.01)
    verdict = "agrees" if 0.2 <= statsmodels_h_star <= 0.4 else "outside"
    assert verdict in text[m.start() : m.start() + 400]


def test_bandwidth_changes_the_fit():
    at = open_page(PAGE)
    _, before = fit_trace(at)
    live_slider(at, "kr_h").set_value(2.0)
    at.run()
    assert_clean(at)
    gx, after = fit_trace(at)
    x, y = posts_data()
    ref = KernelReg(y, x, var_type="c", reg_type="lc", bw=[2.0], rng=0).fit(gx)[0]
    np.testing.assert_allclose(after, ref, atol=1e-8)
    assert np.ptp(after) < 0.5 * np.ptp(before)  # flatter
    assert "h = 2" in chart(at, "kr_fig_fit")["layout"]["title"]["text"]


def test_kernel_changes_fit_shapes_and_cv():
    at = open_page(PAGE)
    _, before = fit_trace(at)
    cv_before = values(chart(at, "kr_fig_cv")["data"][0]["y"])
    tp_before = turning_points(at)
    at.selectbox(key="kr_kernel").set_value("uniform")
    at.run()
    assert_clean(at)
    _, after = fit_trace(at)
    assert not np.allclose(before, after)
    assert "Uniform" in chart(at, "kr_fig_fit")["layout"]["title"]["text"]
    shapes = chart(at, "kr_fig_kernels")["data"]
    assert [tr["line"]["width"] for tr in shapes if tr["name"].startswith("Uniform")] == [5]
    assert not np.allclose(values(chart(at, "kr_fig_cv")["data"][0]["y"]), cv_before, equal_nan=True)
    # the uniform fit is a staircase: far more turning points than the Gaussian one
    assert turning_points(at) > 3 * tp_before


# ---------------------------------------------------------------------------------------------
# the kernels added to the registry (Laplace, biweight): links, figures, CV, question, handout
# ---------------------------------------------------------------------------------------------

#: K(u) written out from the textbook formulas, independently of core.kernels.
NEW_KERNELS = {
    "laplace": lambda u: 0.5 * math.exp(-abs(u)),
    "biweight": lambda u: 15 / 16 * (1 - u * u) ** 2 if abs(u) <= 1 else 0.0,
}


def loop_fit(x, y, queries, kernel: str, h: float) -> np.ndarray:
    """Nadaraya-Watson by the formula, one query and one sample at a time (NaN: zero total weight)."""
    k = NEW_KERNELS[kernel]
    out = []
    for q in queries:
        w = [k((q - xi) / h) for xi in x]
        total = sum(w)
        out.append(sum(wi * yi for wi, yi in zip(w, y, strict=True)) / total if total > 0 else math.nan)
    return np.array(out)


def loop_loo(x, y, kernel: str, h: float) -> float:
    """CV(h) by deleting each sample and refitting it from the others (NaN if some fit is undefined)."""
    fits = [loop_fit(np.delete(x, i), np.delete(y, i), [x[i]], kernel, h)[0] for i in range(x.size)]
    return float(np.mean((y - np.array(fits)) ** 2))


@pytest.mark.parametrize("lang", ["en", "zh"])
@pytest.mark.parametrize("kernel", list(NEW_KERNELS))
def test_new_kernels_from_a_link_match_the_loop(kernel, lang):
    at = open_page(PAGE, lang=lang, params={"kr_kernel": kernel})
    assert_clean(at)
    assert at.selectbox(key="kr_kernel").value == kernel
    assert not at.error
    name = load_catalogue(lang)[f"kr.kernel_{kernel}"]
    assert name in chart(at, "kr_fig_fit")["layout"]["title"]["text"]
    x, y = posts_data()
    gx, fy = fit_trace(at)
    np.testing.assert_allclose(fy, loop_fit(x, y, gx, kernel, 0.3), rtol=0, atol=1e-10)
    # every kernel of the registry on the shapes figure, the selected one thick
    shapes = chart(at, "kr_fig_kernels")["data"]
    assert len(shapes) == 8
    assert chart(at, "kr_fig_kernels")["layout"]["legend"]["y"] < 0  # 8 names wrap: below, clear of the title
    (thick,) = [tr for tr in shapes if tr["line"]["width"] == 5]
    assert thick["name"] == name
    u = values(thick["x"])
    np.testing.assert_allclose(values(thick["y"]), [NEW_KERNELS[kernel](v) for v in u], rtol=0, atol=1e-12)
    assert any(r"e^{-|u|}" in tex.value or r"\tfrac{15}{16}" in tex.value for tex in at.latex)
    # the leave-one-out curve at a few of its bandwidths
    cv = chart(at, "kr_fig_cv")["data"][0]
    hs, cvs = values(cv["x"]), values(cv["y"])
    for i in (10, 20, 35, 50):  # biweight: undefined (NaN) at the smaller of these
        assert cvs[i] == pytest.approx(loop_loo(x, y, kernel, hs[i]), rel=1e-9, nan_ok=True)
    assert np.isfinite(cvs[35:]).all()
    assert name in chart(at, "kr_fig_cv")["layout"]["title"]["text"]


@pytest.mark.parametrize(("kernel", "outcome"), [("laplace", "rises"), ("biweight", "undefined")])
def test_new_kernels_cv_question_follows_the_loop(kernel, outcome):
    """As h -> 0 Laplace's CV climbs back (nearest neighbour, never 0/0); the compact biweight's
    becomes undefined. The right answer is decided here from the loop, then given on the page."""
    at = open_page(PAGE, params={"kr_kernel": kernel})
    assert_clean(at)
    x, y = posts_data()
    hs = values(chart(at, "kr_fig_cv")["data"][0]["x"])
    smallest = loop_loo(x, y, kernel, hs[0])
    best = min(loop_loo(x, y, kernel, h) for h in hs[hs > 0.05][::4])
    assert outcome == ("undefined" if math.isnan(smallest) else "rises" if smallest > best else "falls")
    wrong = next(c for c in ("rises", "falls", "undefined") if c != outcome)
    for choice, alerts in ((wrong, "error"), (outcome, "success")):
        at.radio(key="q_kr_cv_small_h").set_value(choice).run()
        at.button(key="q_kr_cv_small_h_check").click().run()
        assert_clean(at)
        assert getattr(at, alerts), f"{choice}: no {alerts} verdict"


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_cv_undefined_explanation_names_every_never_zero_kernel(lang):
    """The 'CV undefined' explanation names the kernels that never reach 0: Gaussian and Laplace
    (K(5) > 0, evaluated here from their formulas), not only the Gaussian; never a compact one."""
    never_zero = {"gaussian": math.exp(-12.5) / math.sqrt(2 * math.pi), "laplace": 0.5 * math.exp(-5.0)}
    assert all(k > 0 for k in never_zero.values())
    at = open_page(PAGE, lang=lang, params={"kr_kernel": "biweight"}, answered=False)
    at.radio(key="q_kr_cv_small_h").set_value("undefined").run()
    at.button(key="q_kr_cv_small_h_check").click().run()
    assert_clean(at)
    catalogue = load_catalogue(lang)
    explanation = [m.value for m in at.markdown if ":material/lightbulb:" in m.value]
    assert len(explanation) == 1, explanation
    for name in never_zero:
        assert catalogue[f"kr.kernel_{name}"] in explanation[0], name
    for name in ("uniform", "epanechnikov", "triangular", "cosine", "tricube"):
        assert catalogue[f"kr.kernel_{name}"] not in explanation[0], name


def test_new_kernel_handout_in_chinese(monkeypatch):
    """The handout of a view with the Laplace kernel: every figure, the kernel's name, the link."""
    caught = {}
    original = MediaFileManager.add_deferred

    def add_deferred(self, data_callable, mimetype, coordinates, file_name=None, **kwargs):
        caught[file_name] = data_callable
        return original(self, data_callable, mimetype, coordinates, file_name, **kwargs)

    monkeypatch.setattr(MediaFileManager, "add_deferred", add_deferred)
    at = open_page(PAGE, lang="zh", params={"kr_kernel": "laplace"})
    assert_clean(at)
    html = caught["kernel-regression-zh-handout.html"]()
    assert html.count("Plotly.newPlot(") == len(charts(at))
    assert "kr_kernel=laplace" in html
    assert load_catalogue("zh")["kr.kernel_laplace"] in html


def test_query_point_moves_the_attention_row():
    at = open_page(PAGE)
    live_slider(at, "kr_xq").set_value(-2.0)
    at.run()
    assert_clean(at)
    fig = chart(at, "kr_fig_row")
    assert "-2" in fig["layout"]["title"]["text"]
    star = next(tr for tr in fig["data"] if tr.get("marker", {}).get("symbol") == "star")
    assert values(star["x"])[0] == -2.0
    stems = fig["data"][-1]  # (0, w_i, gap) per sample; each end hovers with w_i
    weights = values(stems["y"])[1::3]
    np.testing.assert_array_equal(values(stems["customdata"])[1::3], weights)
    np.testing.assert_array_equal(values(stems["customdata"])[::3], weights)
    x, _ = posts_data()
    assert weights.sum() == pytest.approx(1.0)
    assert abs(x[np.argmax(weights)] + 2.0) < 0.1  # the biggest weight sits next to x*


@pytest.mark.parametrize(
    ("key", "value", "check"),
    [
        ("kr_n", 500, lambda x, y: x.size == 500),
        ("kr_noise", 0.0, lambda x, y: np.allclose(y, np.sinc(x))),
        ("kr_seed", 7, lambda x, y: x.size == 200 and not np.allclose(x, posts_data()[0])),
    ],
)
def test_data_controls(key, value, check):
    at = open_page(PAGE)
    widget = at.number_input(key=key) if key == "kr_seed" else at.slider(key=key)
    widget.set_value(value)
    at.run()
    assert_clean(at)
    assert check(*data_trace(at))


def test_target_control():
    at = open_page(PAGE)
    at.selectbox(key="kr_target").set_value("step")
    at.run()
    assert_clean(at)
    truth = values(trace(chart(at, "kr_fig_fit"), "true function")["y"])
    assert set(np.unique(truth)) == {-0.5, 0.5}


def test_h_star_button_sets_the_bandwidth(statsmodels_h_star):
    at = open_page(PAGE)
    assert live_slider(at, "kr_h").value == 0.3
    at.button(key="kr_use_hstar").click()
    at.run()
    assert_clean(at)
    grid = live_slider(at, "kr_h").options
    nearest = min((float(o) for o in grid), key=lambda g: abs(math.log(g / statsmodels_h_star)))
    assert live_slider(at, "kr_h").value == pytest.approx(nearest)
    assert f"h = {nearest:g}" in chart(at, "kr_fig_fit")["layout"]["title"]["text"]


def test_loop_vs_matrix_timing():
    at = open_page(PAGE)
    assert not at.metric
    at.button(key="kr_time").click()
    at.run()
    assert_clean(at)
    assert len(at.metric) == 3
    assert "ms" in at.metric[0].value
    assert "Largest difference" in all_text(at)


def test_compact_kernel_with_tiny_h_shows_where_the_fit_is_undefined():
    at = open_page(PAGE, params={"kr_h": "0.01"})
    at.selectbox(key="kr_kernel").set_value("epanechnikov")
    at.run()
    assert_clean(at)
    _, fy = fit_trace(at)
    assert np.isnan(fy).any()
    assert any("undefined" in w.value for w in at.warning)
    assert trace(chart(at, "kr_fig_fit"), "fit undefined (no sample within h)")


@pytest.mark.parametrize(
    "params",
    [
        {"kr_h": "abc"},
        {"kr_h": "-1"},
        {"kr_h": "0.33333"},
        {"kr_h": "1e400"},
        {"kr_kernel": "cauchy"},
        {"kr_target": "'; DROP TABLE"},
        {"kr_n": "999999"},
        {"kr_n": "-5"},
        {"kr_noise": "nan"},
        {"kr_seed": "-3"},
        {"kr_xq": "1e9"},
        {"kr_h_csv": "5", "kr_xq_csv": "x"},
    ],
)
def test_odd_url_values_fall_back_to_defaults(params):
    at = open_page(PAGE, params=params)
    assert_clean(at)
    assert live_slider(at, "kr_h").value == 0.3
    assert at.slider(key="kr_n").value == 200
    assert live_slider(at, "kr_xq").value == 0.5
    assert at.selectbox(key="kr_kernel").value == "gaussian"
    assert len(charts(at)) == len(FIGURES)


def test_url_values_are_applied():
    at = open_page(PAGE, params={"kr_h": "1", "kr_n": "300", "kr_xq": "-1.5"})
    assert_clean(at)
    assert live_slider(at, "kr_h").value == 1.0
    assert data_trace(at)[0].size == 300
    assert "-1.5" in chart(at, "kr_fig_row")["layout"]["title"]["text"]


# ---------------------------------------------------------------------------------------------
# uploads
# ---------------------------------------------------------------------------------------------


def test_the_uploader_says_the_apps_upload_limit():
    """Issue 22.6: the uploader's "Limit … per file" is the app's cap (tests/test_upload_limit.py
    checks the server configs and the README against the same constant)."""
    from core.csv_data import MAX_UPLOAD_MB

    at = open_page(PAGE, folded=True)
    assert at.file_uploader(key="kr_upload").proto.max_upload_size_mb == MAX_UPLOAD_MB == 2


def test_good_upload_is_fitted_with_scaled_controls():
    at = open_page(PAGE)
    rng = np.random.default_rng(0)
    x = rng.uniform(0, 600, 150)
    y = np.sin(x / 100) + rng.normal(0, 0.1, 150)
    csv = "time,value\n" + "\n".join(f"{a},{b}" for a, b in zip(x, y, strict=True))
    at.file_uploader(key="kr_upload").set_value(("mine.csv", csv.encode(), "text/csv"))
    at.run()
    assert_clean(at)
    assert any("mine.csv" in i.value for i in at.info)
    dx, _dy = data_trace(at)
    np.testing.assert_allclose(dx, np.sort(x))
    h = live_slider(at, "kr_h_csv").value
    assert 10 < h < 100  # 0.3 on [-3, 3] scaled to a spread of about 600
    assert len(charts(at)) == len(FIGURES)
    at.button(key="kr_use_hstar").click()
    at.run()
    assert_clean(at)
    assert live_slider(at, "kr_h_csv").value != h or at.button(key="kr_use_hstar").disabled


def test_a_second_file_with_another_range_resets_the_scaled_controls():
    at = open_page(PAGE)
    first = "\n".join(f"{i / 10},{i % 7}" for i in range(120)).encode()
    at.file_uploader(key="kr_upload").set_value(("a.csv", first, "text/csv"))
    at.run()
    live_slider(at, "kr_xq_csv").set_value(11.9)
    at.run()
    assert_clean(at)
    second = "\n".join(f"{-1000 + i},{i % 3}" for i in range(300)).encode()  # x in [-1000, -701]
    at.file_uploader(key="kr_upload").set_value(("b.csv", second, "text/csv"))
    at.run()
    assert_clean(at)
    assert -1000 <= live_slider(at, "kr_xq_csv").value <= -701
    assert len(charts(at)) == len(FIGURES)


@pytest.mark.parametrize(
    "content",
    [
        b"1,2\n3,4\n",  # the fewest rows allowed
        b"1,2\n1,3\n2,4\n2,5\n",  # repeated x
        "\n".join(f"{i * 1e11},{i % 5}" for i in range(50)).encode(),  # huge x
        "\n".join(f"{i * 1e-11},{i % 5}" for i in range(50)).encode(),  # tiny x
        "\n".join(f"{i},5" for i in range(30)).encode(),  # constant y
    ],
    ids=["two_rows", "repeated_x", "huge_x", "tiny_x", "constant_y"],
)
def test_unusual_but_valid_files(content):
    at = open_page(PAGE)
    at.file_uploader(key="kr_upload").set_value(("odd.csv", content, "text/csv"))
    at.run()
    assert_clean(at)
    assert not at.error
    at.button(key="kr_use_hstar").click()
    at.run()
    assert_clean(at)
    assert len(charts(at)) == len(FIGURES)


BAD_FILES = [
    ("picture.png", b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR", "not a text"),
    ("one.csv", b"x\n1\n2\n3\n", "only one column"),
    ("text.csv", b"x,y\n1,2\n3,hello\n", '"hello" is not a number'),
    ("nan.csv", b"x,y\n1,2\n3,NaN\n4,5\n", "empty or NaN"),
    ("empty.csv", b"", "it is empty"),
    ("big.csv", ("\n".join(f"{i},{i}" for i in range(2001))).encode(), "at most 2000"),
    ("flat.csv", b"1,2\n1,3\n1,4\n", "all its x values are equal"),
    ("three.csv", b"a,b,c\n1,2,3\n4,5,6\n", "3 columns"),
]


@pytest.mark.parametrize(("name", "content", "message"), BAD_FILES, ids=[b[0] for b in BAD_FILES])
def test_bad_upload_shows_an_error_and_keeps_the_builtin_data(name, content, message):
    at = open_page(PAGE)
    at.file_uploader(key="kr_upload").set_value((name, content, "text/csv"))
    at.run()
    assert_clean(at)
    errors = [e.value for e in at.error]
    assert any(message in e for e in errors), errors
    assert any(name in w.value for w in at.warning)
    np.testing.assert_array_equal(data_trace(at)[0], posts_data()[0])
    assert len(charts(at)) == len(FIGURES)


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_every_csv_refusal_has_a_message_in_both_languages(lang):
    """Each code core.csv_data can raise formats in both catalogues with the params it carries.

    (The zh page itself is exercised with a bad upload in tests/e2e: AppTest formats selectbox
    options outside the script run, in English, so it cannot interact with a zh page.)
    """
    catalogue = load_catalogue(lang)
    contents = [c for _, c, _ in BAD_FILES] + [
        b"1," + b"9" * 3_000_000,
        b"1,2\n3,4,5\n",
        b"x,y\n1,inf\n2,3\n",
    ]
    codes = set()
    for content in contents:
        try:
            parse_xy_csv(content, max_rows=2000)
        except CsvError as err:
            codes.add(err.code)
            text = catalogue[f"kr.csv_error_{err.code}"].format(**err.params)
            assert text
            assert "{" not in text
    codes.add("no_spread")  # raised by ui.kernel_regression.uploaded
    assert "kr.csv_error_no_spread" in catalogue
    assert codes >= {"not_text", "one_column", "not_number", "missing", "empty", "too_many_rows", "too_big"}


@pytest.mark.parametrize(
    ("params", "label", "shown"),
    [
        ({"kr_n": "1500"}, "Number of samples N", "200"),  # a link from before the N cap
        ({"kr_noise": "nan"}, "Noise (standard deviation)", "0.1"),
        ({"kr_seed": "-3"}, "Seed", "42"),
        ({"kr_h": "7.77"}, "Bandwidth h (log scale)", "0.3"),  # a select-slider: no option 7.77
    ],
)
def test_a_refused_link_value_is_said_once(params, label, shown):
    at = open_page(PAGE, params=params, answered=False)  # the first view: the run the link opened
    assert_clean(at)
    (raw,) = params.values()
    (warning,) = [w.value for w in at.warning]
    assert label in warning
    assert raw in warning
    assert f"shows {shown} instead" in warning
    at.run()
    assert not at.warning  # the URL now holds the value shown


def test_an_accepted_link_value_gets_no_warning():
    at = open_page(PAGE, params={"kr_n": "1000", "kr_noise": "0.5", "kr_seed": "7"})
    assert_clean(at)
    assert at.slider(key="kr_n").value == 1000
    assert not at.warning


@pytest.mark.parametrize("params", [{"q_kr_row": "34"}, {"q_kr_row": "zzz", "q_kr_cv_small_h": "rises"}])
def test_an_answer_in_an_old_link_is_ignored_and_dropped(params):
    """Answers stay in the session (issue 22.2): a link that still carries one (made before they
    left the URL) opens with the question unanswered, and the parameter leaves the address bar."""
    at = open_page(PAGE, params=params, answered=False)
    assert_clean(at)
    assert at.number_input(key="q_kr_row").value is None
    assert at.radio(key="q_kr_cv_small_h").value is None
    assert not at.warning
    assert not [k for k in at.query_params if k.startswith("q_")]
    assert at.query_params["open_kr_cv"] == "true"  # the rest of the link is kept


@pytest.mark.parametrize(("lang", "marker"), [("en", "plays the role"), ("zh", "的作用相当于")])
def test_the_inverse_temperature_sentence_names_the_right_factor(lang, marker):
    """Issue 22.6: "1/h² plays the role of 1/√d_k"; with the score -(x - x_i)²/(2h²) the factor in
    front of the squared distance is 1/(2h²). The factor the sentence names must turn a softmax of
    -distance² into the Gaussian NW weights (``core.nadaraya_watson.nw_predict``'s), here by hand."""
    from core.data import post_data
    from core.nadaraya_watson import nw_predict

    text = load_catalogue(lang)["kr.formula_body"]
    named = re.findall(r"1/\(?2?h²\)?", text.split(marker)[0])[-1]
    h = 0.3
    factor = {"1/(2h²)": 1 / (2 * h * h), "1/h²": 1 / (h * h)}[named]
    d = post_data()
    xq = np.linspace(-2, 2, 9)
    scores = -factor * (xq[:, None] - d.x[None, :]) ** 2  # (Q, N)
    weights = np.exp(scores - scores.max(axis=1, keepdims=True))
    weights /= weights.sum(axis=1, keepdims=True)
    np.testing.assert_allclose(weights @ d.y, nw_predict(d.x, d.y, xq, "gaussian", h), rtol=1e-10)


def _loo_grid_hstar(x: np.ndarray, y: np.ndarray, kernel) -> float:
    """h* by brute force: the LOO-CV error of every h of a fine log grid, each fit a dense matrix."""
    d = x[:, None] - x[None, :]  # (N, N)
    best_h, best_cv = math.nan, math.inf
    for h in np.geomspace(0.05, 1.5, 700):  # 0.5% apart
        k = kernel.fn(d / h)
        np.fill_diagonal(k, 0.0)  # leave sample i out
        den = k.sum(axis=1)
        if not (den > 0).all():
            continue
        cv = float(np.mean((y - k @ y / den) ** 2))
        if cv < best_cv:
            best_h, best_cv = h, cv
    return best_h


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_the_claims_note_names_the_kernels_whose_hstar_is_in_the_posts_range(lang):
    """The note under the claims table sorts every kernel by its own h* (brute-force LOO grid)."""
    from core.kernels import REGISTRY

    at = open_page(PAGE, lang=lang, params={"open_kr_claims": "true"}, folded=True)
    assert_clean(at)
    cat = load_catalogue(lang)
    template = re.escape(cat["kr.claim_kernels_note"])
    pattern = template.replace(r"\{inside\}", "(?P<inside>.+?)").replace(r"\{outside\}", "(?P<outside>.+?)")
    found = next(m for m in (re.fullmatch(pattern, md.value) for md in at.markdown) if m)
    sep = cat["kr.list_sep"]
    shown = {part: {s.strip() for s in found[part].split(sep)} for part in ("inside", "outside")}
    x, y = posts_data()
    for kernel in REGISTRY:
        h = _loo_grid_hstar(x, y, kernel)
        name = cat[f"kr.kernel_{kernel.name}"]
        expected, other = ("inside", "outside") if 0.2 <= h <= 0.4 else ("outside", "inside")
        assert name in shown[expected], (kernel.name, h, found[0])
        assert name not in shown[other], (kernel.name, h, found[0])
