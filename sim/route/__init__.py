"""Route descriptions: one plain, typed description of each attachment's I/O path, read by both solvers.

A Scenario (models/) becomes one description (``describe``): the stations, pools, links, delays,
flash devices and volume split of its route, with every number derived from the scenario and the
catalog in one place. The DES (sim/des/model.py) turns it into SimPy components, the analytic fast path
(sim/analytic/paths.py) into its queueing network. Nothing here imports SimPy.

Modules, one per concept: ``elements`` (the parts a route is made of), ``describe`` (the
description of each attachment, the one dispatch on topology kind), ``steps`` (the hop order of every
device I/O, written once per attachment and interpreted by both solvers), ``host`` (host CPU and its
stack defaults), ``flash`` (a flash device's mechanism from its datasheet), ``san`` (SAN path
numbers), ``links`` (link bandwidths), ``derived`` (the per-catalog memo of derived numbers).
"""
