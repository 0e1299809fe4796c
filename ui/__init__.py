"""Streamlit helpers shared by the pages: i18n, bound controls, layout and cached wrappers."""
