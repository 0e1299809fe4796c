"""Home: what the app teaches, the map of the lesson and the kernel-regression <-> attention table."""

from __future__ import annotations

import streamlit as st

from lessons import LESSONS
from ui.i18n import t
from ui.layout import dictionary_table, page_header
from ui.sections import Section, run_sections


def formulas() -> None:
    st.latex(
        r"\hat f(x) = \sum_i \frac{K\!\left(\frac{x - x_i}{h}\right)}"
        r"{\sum_j K\!\left(\frac{x - x_j}{h}\right)}\, y_i"
    )
    st.latex(r"\mathrm{Attention}(Q, K, V) = \mathrm{softmax}\!\left(\frac{Q K^\top}{\sqrt{d_k}}\right) V")
    dictionary_table()


def lesson_map() -> None:
    for i, lesson in enumerate(LESSONS, start=1):
        st.page_link(lesson.script, label=f"{i}. {t(lesson.title_key)}")
        st.caption(t(lesson.blurb_key))


def in_class() -> None:
    st.markdown(t("home.class_body"))


def render() -> None:
    page_header("home.title", "home.intro")
    run_sections(
        "home",
        [
            Section("home.mapping_title", formulas),
            Section("home.map_title", lesson_map),
            Section("home.class_title", in_class),
        ],
    )


render()
