"""Classroom load: simulated students moving controls over Streamlit's own websocket protocol.

* ``client.py``: a small Streamlit websocket client (BackMsg out, ForwardMsg in) that opens a page,
  moves one slider or select-slider to a fresh random value and times the rerun up to
  ``script_finished``. No Locust, no gevent: usable from any process.
* ``locustfile.py``: the Locust ``User`` (a student) built on that client.
* ``server.py``: ``streamlit run app.py`` on a free loopback port, the server's process tree and
  its memory (no Locust either).
* ``run.py``: ``run_load(...) -> LoadResult`` and the command line behind
  ``python -m benchmarks load``. It imports Locust, which monkey-patches the standard library with
  gevent: run it in a process of its own (``python -m benchmarks.load`` does).
"""
