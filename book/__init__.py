"""The book's tooling: the code that turns ``lessons/`` into tests and into a site.

Nothing here is part of ``tensor`` or ``minifx``, and neither imports it. A
reader of the library can skip this folder; it is how the book keeps its
promises: every python block of a lesson runs and prints what the page says,
and every figure is drawn from the code at build time.

- ``lesson_blocks``: a lesson's python / output / figure / stepper blocks,
  parsed and run (from a scratch directory; a block that writes into the
  checkout fails). Shared by the root ``conftest.py``, which runs the lessons
  as tests, and by the site build.
- ``mkdocs_hooks``: the site build (``mkdocs.yml``'s ``hooks:``): runs each
  page, draws its figures and steppers, counts included source lines, draws
  the layers of the imports.
- ``stepper_view``: a recorded pass as HTML, one step at a time.
- ``import_graph``: the imports of ``minifx`` and ``tensor``, read with
  ``ast``; the architecture test and the drawing of the layers use it.

Their tests are in ``tests/book`` (and the browser's in ``tests/site``).
"""
