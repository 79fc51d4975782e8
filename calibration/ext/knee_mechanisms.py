"""Candidate mechanisms for the knee (QD 2..32) and the tails at depth, tried on the die layout alone.

``python -m calibration.ext.knee_mechanisms [--ios N]`` runs the die model's closed loop of 4 KiB random reads (the
loop of ``calibration.ext.die_sweep``: the controller's fixed delay and host transfer, the controller's command
station, a uniformly random die of N held a lognormal tR) with one candidate mechanism added at a time, on the P3700
built from the EXT sweep's own QD1 latency (AnandTech's P4800X review tables, records ``ext.anandtech11209-p3700.*``:
77.9 us at QD1) and from its datasheet (120 us), and prints QD1 and QD16 against the measured points (QD1: 12,800
IOPS, 77.9 us mean, 96 us p99; QD16: 167,200 IOPS, 93.9 us, 163 us). Nothing is fitted: each mechanism takes its
figure from the source named below, or a bracket of values where no source gives the drive's own.

* controller cores: the controller's command processing as ``c`` cores in parallel, each command holding one core
  c / read IOPS (the same ceiling as one server at 1 / read IOPS); c = 1, 2, 4 (no public core count for the
  P3700's controller; c x 1 / 460K must stay below the 12 us fixed controller cost, so c <= 5).
* channel bus: dies share a channel; after tR the die moves the 4 KiB over its channel (one transfer at a time per
  channel) before it is free. ONFI 3.0 NV-DDR2 runs at up to 400 MT/s on an 8-bit bus: 4,096 B / 400 MB/s =
  10.24 us (ONFI 3.0 specification); the 10.24 us are carved out of tR so QD1 is unchanged. Channels: 8 (the model's
  ``device_behaviour.channels``) and 18 (a controller with 18 NAND channels, an upper bracket).
* read retry: a fraction p of reads needs a second sensing (another tR). p = 1% as a probe: the PM1733 QD1 run of
  the EXT records has p99.9 / mean = 87 / 73.6 = 1.18, which bounds p below 0.1% on those drives (a retry adds
  about 60 us, which would put p99.9 above 130 us).

What it shows (ios = 20,000, seed 1; the table is in calibration/ext/DIE_LEVEL.md, section "Knee mechanisms tried
against the EXT sweeps"): built from the measured QD1 the die model alone gives QD16 at +6% IOPS, -4% mean, +16%
p99; no candidate moves QD16 IOPS or mean by more than 2% without moving QD1 off its measured value, and read retry
at 1% puts QD1 p99 39% high. On this data-centre drive the evidence supports none of them; the knee of client
drives (fewer dies, sweeps not in the EXT records) is where they would have to be tested.
"""

from __future__ import annotations

import argparse
import math
import random
from collections.abc import Generator
from dataclasses import dataclass

import simpy

from models.catalog import lookup
from sim.route.flash import DieLayout, die_layout

MEASURED = {1: (12_800.0, 77.9, 96.0), 16: (167_200.0, 93.9, 163.0)}
"""AnandTech P4800X review tables, P3700 800 GB column (EXT records ``ext.anandtech11209-p3700.rr4k.*``)."""

ONFI3_4K_TRANSFER_US = 4096 / 400.0
"""4 KiB over an 8-bit ONFI 3.0 NV-DDR2 channel at 400 MT/s (us)."""


@dataclass(frozen=True)
class Mechanism:
    name: str
    cores: int = 1
    channels: int = 0
    transfer_us: float = 0.0
    retry: float = 0.0


CANDIDATES = (
    Mechanism("die model alone"),
    Mechanism("controller: 2 cores", cores=2),
    Mechanism("controller: 4 cores", cores=4),
    Mechanism("channel bus: 8 channels", channels=8, transfer_us=ONFI3_4K_TRANSFER_US),
    Mechanism("channel bus: 18 channels", channels=18, transfer_us=ONFI3_4K_TRANSFER_US),
    Mechanism("read retry: 1% of reads", retry=0.01),
)


def simulate(layout: DieLayout, qd: int, ios: int, m: Mechanism, seed: int = 1) -> tuple[float, float, float, float]:
    """IOPS, mean, p99, p99.9 (us) of ``ios`` reads after ``ios // 10`` warm-up at depth ``qd`` under mechanism ``m``."""
    rng = random.Random(seed)
    env = simpy.Environment()
    ctrl = simpy.Resource(env, m.cores)
    dies = [simpy.Resource(env, 1) for _ in range(layout.dies)]
    channels = [simpy.Resource(env, 1) for _ in range(m.channels)]
    per_command = m.cores * 1e3 / layout.controller_kiops
    delay = max(0.0, layout.controller_us - per_command) + layout.transfer_us
    t_read = layout.die_read_us - m.transfer_us
    sigma = math.sqrt(math.log1p(layout.die_read_cv ** 2))
    mu = math.log(t_read) - sigma * sigma / 2
    warm = ios // 10
    lat: list[float] = []
    marks: list[float] = []
    done = env.event()

    def reader() -> Generator[simpy.Event, object, None]:
        while not done.triggered:
            t0 = env.now
            yield env.timeout(delay)
            with ctrl.request() as r:
                yield r
                yield env.timeout(per_command)
            k = rng.randrange(layout.dies)
            with dies[k].request() as r:
                yield r
                hold = rng.lognormvariate(mu, sigma)
                if m.retry and rng.random() < m.retry:
                    hold += t_read
                yield env.timeout(hold)
                if channels:
                    with channels[k % len(channels)].request() as c:
                        yield c
                        yield env.timeout(m.transfer_us)
            lat.append(env.now - t0)
            if len(lat) == warm:
                marks.append(env.now)
            if len(lat) == warm + ios and not done.triggered:
                marks.append(env.now)
                done.succeed()

    for _ in range(qd):
        env.process(reader())
    env.run(until=done)
    body = sorted(lat[warm:warm + ios])
    return ios / (marks[1] - marks[0]) * 1e6, sum(body) / len(body), body[int(0.99 * len(body))], body[int(0.999 * len(body))]


def main(argv: list[str] | None = None) -> None:
    """Print the table (markdown)."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--ios", type=int, default=20_000)
    args = ap.parse_args(argv)
    spec = lookup("drives", "P3700-800GB")
    print("| built from QD1 | mechanism | QD | IOPS | vs measured | mean us | vs measured | p99 us | vs measured | p99.9 us |")
    print("|---|---|---:|---:|---:|---:|---:|---:|---:|---:|")
    for qd1 in (MEASURED[1][1], spec.read_latency_us):
        layout = die_layout(spec.model_copy(update={"read_latency_us": qd1}))
        for m in CANDIDATES:
            for qd in (1, 16):
                iops, mean, p99, p999 = simulate(layout, qd, args.ios, m)
                mi, mm, mp = MEASURED[qd]
                print(f"| {qd1:g} us | {m.name} | {qd} | {iops:,.0f} | {iops / mi - 1:+.0%} | {mean:.1f} | {mean / mm - 1:+.0%} | "
                      f"{p99:.0f} | {p99 / mp - 1:+.0%} | {p999:.0f} |")


if __name__ == "__main__":
    main()
