"""The math of the app: numpy and torch only, never Streamlit or Plotly.

One concept per module here (kernels, Nadaraya-Watson, attention, multi-head, random features,
linear attention, the toy Transformer and its training, ...); each page's experiments and verdicts
in ``core/lessons/<slug>.py``, which import the math and never the reverse.

Shape legend used in every docstring: B batch, H heads, L queries, S keys, D key/query dim,
Dv value dim, N samples, Q query points. Attention weights are always ``(..., L, S)`` with rows =
queries; Nadaraya-Watson weights too (``(Q, N)``, rows = query points).
"""
