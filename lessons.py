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

    @property
    def url_path(self) -> str:
        """The page's URL path and the stem of its script: the slug with hyphens (``multi-head``)."""
        return self.slug.replace("_", "-")

    @property
    def script(self) -> str:
        """The page script, relative to the repository root (``pages/multi-head.py``)."""
        return f"pages/{self.url_path}.py"

    @property
    def title_key(self) -> str:
        """The i18n key of its title in the navigation and on the home map (``nav.multi_head``)."""
        return f"nav.{self.slug}"

    @property
    def blurb_key(self) -> str:
        """The i18n key of its one-line summary on the home page's map (``home.lesson_multi_head``)."""
        return f"home.lesson_{self.slug}"

    @property
    def catalogue(self) -> str:
        """Its catalogue's file name in ``assets/i18n/<lang>/`` (``multi_head.json``)."""
        return f"{self.slug}.json"

    @property
    def ui_module(self) -> str:
        """Its Streamlit helpers (cached calls, controls): ``ui.<slug>``."""
        return f"ui.{self.slug}"

    @property
    def figures_module(self) -> str:
        """Its Plotly figure builders: ``figures.<slug>``."""
        return f"figures.{self.slug}"

    @property
    def core_module(self) -> str:
        """Its experiments and measured verdicts: ``core.lessons.<slug>``."""
        return f"core.lessons.{self.slug}"


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
