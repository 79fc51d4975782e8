"""Where the fast path puts waiting and where it stops having a steady state: visits of a group per logical read and
write, extra waiting spread over the ops that visit the bottleneck, the group a closed loop queues at, and the rate at
which a concurrency limit whose hold grows with the load fills its slots."""

from __future__ import annotations

from sim.analytic.network import READ, WRITE, Evaluation, Group, Network
from sim.analytic.paths import Compiler


def op_visits(net: Network, g: Group) -> list[float]:
    """Visits of group ``g`` per logical read and per logical write (for placing extra waiting)."""
    out = [0.0, 0.0]  # per logical I/O, split by op
    for kind in net.kinds:
        for vprob, phases in kind.variants:
            for phase in phases:
                for count, o, n in phase:
                    for cprob, path in net.route(o, n):
                        for grp, p, _, _, _ in path.visits:
                            if grp is g:
                                out[kind.op] += kind.prob * vprob * count * cprob * p
                        for grp, p, _ in path.spans:
                            if grp is g:
                                out[kind.op] += kind.prob * vprob * count * cprob * p
    return [out[op] / net.op_prob[op] if net.op_prob[op] > 0 else 0.0 for op in (READ, WRITE)]

def spread_extra(net: Network, latency: list[float], extra: float, bottleneck: Group) -> list[float]:
    """Add ``extra`` us of mean waiting to the ops that visit the bottleneck, in proportion to their visits."""
    visits = op_visits(net, bottleneck)
    share = [net.op_prob[op] * visits[op] for op in (READ, WRITE)]
    total = share[0] + share[1]
    out = list(latency)
    for op in (READ, WRITE):
        if net.op_prob[op] > 0:
            if total > 0:
                out[op] += extra * share[op] / total / net.op_prob[op]
            else:
                out[op] += extra
    return out

def queue_of(c: Compiler, bottleneck: int) -> Group:
    """Where a closed loop's jobs queue when group ``bottleneck`` binds: the group itself, except for the dies of a
    ``dies`` device whose capacity its programs share (``Network.program_work``) while the loop writes. There reads
    go first at their die and the programs wait for an idle die holding their cache slots (``sim.des.dies``), so the
    cache fills and the writes wait for its slots: the device's write cache."""
    net = c.net
    if bottleneck in net.program_work and net.op_prob[WRITE] > 0:
        for device in c.die_devices:
            if any(g.index == bottleneck for g, _ in device.dies) and device.write_cache:
                return device.write_cache[0][0]
    return net.groups[bottleneck]

def saturation_rate(net: Network, x: float) -> tuple[float, Evaluation]:
    """The largest throughput below ``x`` (overloaded there) at which the network still has a steady state, to
    1e-6 relative by bisection, with its evaluation: where a concurrency limit whose holding time grows with the
    load fills its slots (below Xmax, which takes the zero-load holds)."""
    lo, hi = 0.0, x
    ev = net.evaluate(0.0)
    while hi - lo > 1e-6 * hi:
        mid = 0.5 * (lo + hi)
        at = net.evaluate(mid)
        if at.overloaded:
            hi = mid
        else:
            lo, ev = mid, at
    return lo, ev
