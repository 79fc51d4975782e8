"""flashplan benchmarks: engine throughput against naive SimPy and Ciw, S1 wall time, peak memory.

``python -m bench.run`` (``make bench``) prints one table; ``--quick`` shrinks every row.
"""
