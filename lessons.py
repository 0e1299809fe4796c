"""The lessons of the app, in their order: the one list that the router, the home page's map,
the tests and the benchmarks read.

One slug per lesson names it in every layer (``tests/test_lessons.py`` holds the rule):

============================  ================================================
page script                   ``pages/<url-path>.py`` (the slug with hyphens)
URL path                      ``/<url-path>``
Streamlit helpers             ``ui/<slug>.py``, imported ``as lesson_ui``
figure builders               ``figures/<slug>.py``, imported ``as lesson_figures``
experiments and verdicts      ``core/lessons/<slug>.py``, imported ``as lesson``
catalogues                    ``assets/i18n/{en,zh}/<slug>.json``: keys ``<prefix>.*``, its questions
                              ``q.<prefix>_*`` and its nav title ``nav.<slug>``
URL keys of its controls      ``<prefix>_*``
============================  ================================================

Adding a page = one :class:`Lesson` in :data:`LESSONS` plus the page's own files. A leaf module:
it imports nothing of the app (``tests/test_layers.py``), so anything may read it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


class _Derived:
    """A name of a lesson's file, key or module, derived from its slug: ``pattern`` with ``{slug}``
    (``multi_head``) and ``{url}`` (the slug with hyphens, ``multi-head``) filled in; read as an
    attribute of the lesson (a ``str``)."""

    def __init__(self, pattern: str) -> None:
        self.pattern = pattern

    def __get__(self, lesson: Any, owner: type | None = None) -> Any:
        if lesson is None:  # read on the class: the descriptor itself
            return self
        return self.pattern.format(slug=lesson.slug, url=lesson.slug.replace("_", "-"))


@dataclass(frozen=True)
class Lesson:
    """One page of the app and the names of its files in every layer."""

    #: The page's name in Python modules and catalogues (``multi_head``).
    slug: str
    #: Its icon in the navigation (a Streamlit ``:material/...:`` name).
    icon: str
    #: The prefix of its i18n keys (``mh.title``) and of its controls' URL keys (``?mh_heads=4``).
    prefix: str
    #: Its controls train a model live (a Train button, minutes of CPU): load tests leave it out.
    trains: bool = False

    #: The page's URL path and the stem of its script: the slug with hyphens (``multi-head``).
    url_path = _Derived("{url}")
    #: The page script, relative to the repository root (``pages/multi-head.py``).
    script = _Derived("pages/{url}.py")
    #: The i18n key of its title in the navigation and on the home map (``nav.multi_head``).
    title_key = _Derived("nav.{slug}")
    #: The i18n key of its one-line summary on the home page's map (``home.lesson_multi_head``).
    blurb_key = _Derived("home.lesson_{slug}")
    #: Its catalogue's file name in ``assets/i18n/<lang>/`` (``multi_head.json``).
    catalogue = _Derived("{slug}.json")
    #: Its Streamlit helpers (cached calls, controls): ``ui.<slug>``.
    ui_module = _Derived("ui.{slug}")
    #: Its Plotly figure builders: ``figures.<slug>``.
    figures_module = _Derived("figures.{slug}")
    #: Its experiments and measured verdicts: ``core.lessons.<slug>``.
    core_module = _Derived("core.lessons.{slug}")


#: The start page: the map of the lesson. A page, not a lesson (no ui, figures or core module).
HOME = Lesson("home", ":material/school:", "home")

#: The lessons, in the order a class takes them (the home map and the "next lesson" links).
LESSONS: tuple[Lesson, ...] = (
    Lesson("kernel_regression", ":material/show_chart:", "kr"),
    Lesson("kernels_to_attention", ":material/compare_arrows:", "k2a"),
    Lesson("scaled_dot_product", ":material/grid_on:", "sdp"),
    Lesson("kernel_approximation", ":material/scatter_plot:", "ka"),
    Lesson("multi_head", ":material/view_module:", "mh"),
    Lesson("training", ":material/model_training:", "tr", trains=True),
    Lesson("in_context", ":material/psychology:", "ic", trains=True),
    # A new page is one line here once its files exist (tests/test_lessons.py checks them).
    Lesson("induction_heads", ":material/content_copy:", "ih", trains=True),
)

#: Every page of the app, home first: what ``app.py`` hands to ``st.navigation``.
PAGES: tuple[Lesson, ...] = (HOME, *LESSONS)


def by_url_path(url_path: str) -> Lesson:
    """The page at ``/<url_path>``.

    Raises:
        ValueError: if no page has that URL path (the known ones are listed).
    """
    for page in PAGES:
        if page.url_path == url_path:
            return page
    raise ValueError(f"no page at {url_path!r}; known: {[p.url_path for p in PAGES]}")
