"""Home: what the app teaches, the map of the lesson and the kernel-regression <-> attention table."""

from __future__ import annotations

import streamlit as st

from ui.i18n import t
from ui.layout import dictionary_table, page_header
from ui.sections import Section, heading, run_sections

LESSONS = [
    ("pages/kernel-regression.py", "nav.kernel_regression", "home.lesson_kernel_regression"),
    ("pages/kernels-to-attention.py", "nav.kernels_to_attention", "home.lesson_kernels_to_attention"),
    ("pages/scaled-dot-product.py", "nav.scaled_dot_product", "home.lesson_scaled_dot_product"),
    ("pages/kernel-approximation.py", "nav.kernel_approximation", "home.lesson_kernel_approximation"),
    ("pages/multi-head.py", "nav.multi_head", "home.lesson_multi_head"),
    ("pages/training.py", "nav.training", "home.lesson_training"),
    ("pages/in-context.py", "nav.in_context", "home.lesson_in_context"),
    ("pages/induction-heads.py", "nav.induction_heads", "home.lesson_induction_heads"),
]


def formulas() -> None:
    st.latex(
        r"\hat f(x) = \sum_i \frac{K\!\left(\frac{x - x_i}{h}\right)}"
        r"{\sum_j K\!\left(\frac{x - x_j}{h}\right)}\, y_i"
    )
    st.latex(r"\mathrm{Attention}(Q, K, V) = \mathrm{softmax}\!\left(\frac{Q K^\top}{\sqrt{d_k}}\right) V")
    heading("home.mapping_title")
    dictionary_table()


def lesson_map() -> None:
    heading("home.map_title")
    for i, (script, title_key, blurb_key) in enumerate(LESSONS, start=1):
        st.page_link(script, label=f"{i}. {t(title_key)}")
        st.caption(t(blurb_key))


def in_class() -> None:
    heading("home.class_title")
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
