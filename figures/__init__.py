"""Pure Plotly figure builders: arrays in, ``go.Figure`` out. No Streamlit, no math."""
