"""Die-level device mechanism, simulated alone, against its MVA preview.

``python -m calibration.ext.die_sweep`` runs a small SimPy closed loop per device and queue depth:
each 4 KiB random read takes the controller's fixed delay (less its per-command service) and the
host-link transfer, passes the controller's command-rate station (1 / datasheet IOPS, FIFO), then
waits FIFO for a uniformly random die of N and holds it a lognormal tR (cv ``die_read_cv``). It
prints IOPS, mean, p99 and p99.9 next to ``sim.analytic.dies.die_level_closed`` (IOPS, mean) and
``die_level_quantile_us`` (p99, p99.9). Device only: no host stack, no write cache, no programs.
"""

from __future__ import annotations

import math
import random
from collections.abc import Generator

import simpy

from models.catalog import lookup
from sim.analytic.dies import die_level_closed, die_level_quantile_us
from sim.route.flash import DieLayout, die_layout

DEVICES = [("drives", "PM1733-1.92TB"), ("drives", "P4510-4TB"), ("drives", "ES5F"), ("dimms", "eXFlash-400GB")]
DEPTHS = [1, 2, 4, 8, 16, 32, 64, 128, 256]


def simulate(layout: DieLayout, qd: int, ios: int, seed: int = 1) -> tuple[float, float, float, float]:
    """IOPS, mean, p99, p99.9 (us) of ``ios`` completed reads (after ``ios // 10`` warm-up) at depth ``qd``."""
    rng = random.Random(seed)
    env = simpy.Environment()
    ctrl = simpy.Resource(env, 1)
    dies = [simpy.Resource(env, 1) for _ in range(layout.dies)]
    ctrl_s = 1e3 / layout.controller_kiops
    delay = max(0.0, layout.controller_us - ctrl_s) + layout.transfer_us
    sigma = math.sqrt(math.log1p(layout.die_read_cv ** 2))
    mu = math.log(layout.die_read_us) - sigma * sigma / 2
    warm = ios // 10
    lat: list[float] = []
    start_end: list[float] = []
    done = env.event()

    def reader() -> Generator[simpy.Event, object, None]:
        while not done.triggered:
            t0 = env.now
            yield env.timeout(delay)
            with ctrl.request() as r:
                yield r
                yield env.timeout(ctrl_s)
            with dies[rng.randrange(layout.dies)].request() as r:
                yield r
                yield env.timeout(rng.lognormvariate(mu, sigma))
            lat.append(env.now - t0)
            if len(lat) == warm:
                start_end.append(env.now)
            if len(lat) == warm + ios and not done.triggered:
                start_end.append(env.now)
                done.succeed()

    for _ in range(qd):
        env.process(reader())
    env.run(until=done)
    body = sorted(lat[warm:warm + ios])
    iops = ios / (start_end[1] - start_end[0]) * 1e6
    return iops, sum(body) / len(body), body[int(0.99 * len(body))], body[int(0.999 * len(body))]


def main(ios: int = 20000) -> None:
    """Print the sweep table (markdown)."""
    print("| device | QD | IOPS sim | IOPS MVA | diff | mean sim | mean MVA | diff | p99 sim | p99 est | diff | p99.9 sim | p99.9 est | diff |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    for section, name in DEVICES:
        layout = die_layout(lookup(section, name))
        for qd in DEPTHS:
            iops, mean, p99, p999 = simulate(layout, qd, ios)
            mva = die_level_closed(layout, qd)
            e99, e999 = die_level_quantile_us(layout, qd, 0.99), die_level_quantile_us(layout, qd, 0.999)
            print(f"| {name} | {qd} | {iops:,.0f} | {mva.iops:,.0f} | {mva.iops / iops - 1:+.1%} | {mean:.1f} | "
                  f"{mva.mean_us:.1f} | {mva.mean_us / mean - 1:+.1%} | {p99:.1f} | {e99:.1f} | {e99 / p99 - 1:+.1%} | "
                  f"{p999:.1f} | {e999:.1f} | {e999 / p999 - 1:+.1%} |")


if __name__ == "__main__":
    main()
