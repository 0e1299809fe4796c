"""Each lesson's experiments and verdicts: one module per page, named by its slug.

``core/`` holds the math (kernels, Nadaraya-Watson, attention, multi-head, random features,
linear attention, the toy Transformer and its training loop, ...), reusable and page-agnostic. A
module here runs that math on one page's inputs and returns what the page shows: measurements in
frozen dataclasses of numpy arrays, and verdicts (i18n keys with the numbers they quote). The
module of a page is named by the page's URL slug with ``_`` for ``-``
(``/kernel-regression`` -> ``core.lessons.kernel_regression``).

The imports go one way: a lesson may import the math of ``core``, never another lesson, and no
math module imports a lesson (``tests/test_layers.py`` checks both, and that ``core`` has no import
cycle).
"""
