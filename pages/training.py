"""Placeholder: this page is being written (see the issue tracker)."""

import streamlit as st

from ui.layout import page_header

page_header("nav.training")
st.info("🚧")
