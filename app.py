"""Router of the app: page config, language switch and ``st.navigation`` over the lessons.

Run with ``make run`` (or ``streamlit run app.py``). The pages and their order come from
``lessons.py`` (one registry); each page is a thin script in ``pages/``; the math lives in
``core/``, the figures in ``figures/``.
"""

from __future__ import annotations

from pathlib import Path

import streamlit as st

import server
from lessons import HOME, PAGES
from ui import a11y, class_answers, classroom, questions, viewport
from ui.handout import begin_page, handout_button, student_link
from ui.i18n import language_switch, t
from ui.router import resolve_home_alias, routed

ROOT = Path(__file__).resolve().parent


def configure_torch_threads() -> None:
    """One torch thread for the whole server: the models are tiny, users share the cores.

    ``core.threads`` is the one place that sets torch's thread count.
    """
    from core.threads import use_one_thread  # deferred: the router itself needs no torch

    use_one_thread()


def build_pages() -> list[st.Page]:
    """The ``st.Page`` objects of ``lessons.PAGES`` (home, then the lessons), titled in the current language.

    New objects on every run, on purpose: ``st.navigation`` marks the page it returns as callable
    once and ``Page.run`` clears the mark, so pages shared between sessions race (tried: 60 of
    559 runs of a 30-student load failed with "This page cannot be called directly").
    """
    return [
        st.Page(p.script, title=t(p.title_key), icon=p.icon, url_path=p.url_path, default=p == HOME)
        for p in PAGES
    ]


def main() -> None:
    server.install()  # the speed machinery, once per process; each part switchable (server/__init__.py)
    presenting = classroom.requested()
    st.set_page_config(
        page_title="Attention = Kernel Regression",
        page_icon="🔍",
        layout="wide",
        initial_sidebar_state="collapsed" if presenting else "auto",  # a projector shows the slide
    )
    configure_torch_threads()
    st.html(ROOT / "assets" / "app.css")  # style only: sent to the event container, takes no space
    viewport.watch()  # is the screen a phone's? figures are laid out for it (hidden, no height)
    language_switch()
    classroom.present_switch()
    class_answers.class_sidebar()  # the class answers together (issue 26): nothing shows outside a class
    resolve_home_alias()
    pages = build_pages()
    page = st.navigation(pages, position="sidebar", expanded=True)
    st.sidebar.caption(t("common.sidebar_footer"))
    a11y.page_setup(page.title)  # its own title, <html lang>, skip link, contrast and focus (issue 24)
    with routed():
        questions.start_page()  # no answer from an old link; no question asked yet
        begin_page(page.url_path, page.title)  # the handout lists what this run shows
        page.run()
    next_lesson_link(pages, page)
    student_link()
    handout_button(page.url_path)


def next_lesson_link(pages: list[st.Page], current: st.Page) -> None:
    """A link to the next page of the lesson at the bottom of every page (the last one: home)."""
    index = next((i for i, p in enumerate(pages) if p.url_path == current.url_path), None)
    if index is None:
        return
    st.divider()
    if index + 1 < len(pages):
        target = pages[index + 1]
        label = t("common.next_lesson", title=target.title)
        st.page_link(target, label=label, icon=":material/arrow_forward:")
    else:
        st.page_link(pages[0], label=t("common.back_to_start"), icon=":material/restart_alt:")


if __name__ == "__main__":
    main()
