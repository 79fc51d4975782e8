"""The mypyc build of the DES, the fast path and the route descriptions: ``guard`` keeps a stale build out
(``COMPILED``), ``build`` compiles (``python -m sim.native.build``).

* ``build``: Compile the engine and the fast path with mypyc: ``python -m sim.native.build
  [build|rebuild|clean|status]``.
* ``guard``: The engine and the analytic fast path compiled to C with mypyc, and the guard that keeps a stale
  build out.
"""
