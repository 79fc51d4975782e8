"""``python -m calibration.ext.die_solvers [--max-ios N] [--devices A,B] [--depths 1,2,...] [--read-fractions F,..]``:
the two solvers under ``device_model: dies`` (``--device-model pooled`` or ``auto`` for the others), device by
device and queue depth by queue depth
(``--block-kib K``: K KiB I/Os instead of 4 KiB; the tails are then the fast path's own; ``--open-loads 0.3,0.6``:
open Poisson arrivals at those shares of the fast path's Xmax instead of a closed loop).

Each point is one catalog drive (direct NVMe, one drive, no host CPU: calibration/ext/scenarios/ext_drive.yaml)
or one eXFlash DIMM (no driver-thread CPU) read by a closed loop of 4 KiB random reads at depth QD. It prints
the DES (a run that stops on an I/O count, so the table is the same on any machine) next to the fast path:
IOPS, mean latency, and p99 / p99.9 (the fast path's mean latency plus the die-level quantile estimate
``sim.analytic.dies.closed_read_quantile_us``), with the fast path's relative difference. With
``--read-fractions`` (e.g. ``0,0.67``) the loop issues 4 KiB random reads and writes in that mix instead (writes
program on the FTL's write point) and the table gives IOPS, the mean, the read and write means and the p99 and
p99.9 of all I/Os (the fast path's ``FastResult.latency_p99_us`` / ``latency_p999_us``; calibration/ext/die_solvers_writes.md).
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from models.catalog import load_catalog
from models.scenario import Scenario
from sim.analytic import evaluate
from sim.analytic.dies import closed_read_quantile_us
from sim.des.engine import simulate
from sim.route.describe import describe

DEPTHS = (1, 2, 4, 8, 16, 32, 64, 128, 256)


def scenario_for(section: str, name: str, qd: int, max_ios: int, seed: int = 1, read_fraction: float = 1.0,
                 block_kib: int = 4, device_model: str = "dies") -> Scenario:
    """One device alone under ``device_model`` (the die model unless told), random I/Os of ``block_kib`` (reads, or
    ``read_fraction`` of them) at depth ``qd``."""
    if section == "dimms":
        topology: dict[str, Any] = {"kind": "exflash", "host": {"stack": "none"}, "dimm": name, "dimms": 1, "layout": "jbod"}
    else:
        topology = {"kind": "direct_nvme", "host": {"stack": "none"}, "drive": name, "drives": 1, "adapter": "EJ1Y",
                    "adapters": 1, "layout": "jbod"}
    return Scenario.model_validate({
        "name": f"dies {name} QD{qd}", "topology": topology, "device_model": device_model,
        "workload": {"kind": "closed", "jobs": 1, "queue_depth": qd, "read_fraction": read_fraction, "block_size_kib": block_kib,
                     "access": "random"},
        "run": {"seed": seed, "max_ios": max_ios, "warmup_ios": max(1_000, max_ios // 10), "target_rel_ci": 1e-4,
                "max_wall_s": 3_600.0},
    })


@dataclass(frozen=True)
class Row:
    """One device and depth: (DES, fast) IOPS, mean, p99 and p99.9 (us)."""

    device: str
    qd: int
    des: tuple[float, float, float, float]
    fast: tuple[float, float, float, float]

    def diffs(self) -> tuple[float, float, float, float]:
        return tuple([f / d - 1.0 if d > 0 else 0.0 for f, d in zip(self.fast, self.des, strict=True)])  # type: ignore[return-value]


@dataclass(frozen=True)
class MixRow(Row):
    """One device, depth and read fraction: (DES, fast) IOPS, mean, read mean and write mean (us); ``tails``:
    (DES, fast) p99 and p99.9 of all I/Os (us)."""

    read_fraction: float = 1.0
    tails: tuple[tuple[float, float], tuple[float, float]] = ((0.0, 0.0), (0.0, 0.0))


def compare_mix(section: str, name: str, qd: int, read_fraction: float, max_ios: int, block_kib: int = 4,
                device_model: str = "dies") -> MixRow:
    """The DES and the fast path on one device, depth and random read/write mix (writes: the FTL's write point)."""
    sc = scenario_for(section, name, qd, max_ios, read_fraction=read_fraction, block_kib=block_kib, device_model=device_model)
    res = simulate(sc)
    fast = evaluate(sc)

    def value(m: Any) -> float:
        return float(m.value) if m is not None and m.value is not None else 0.0

    return MixRow(name, qd,
                  (res.iops.value, res.latency_mean_us.value, value(res.read_latency_mean_us), value(res.write_latency_mean_us)),
                  (fast.iops, fast.latency_mean_us, fast.read_latency_mean_us if read_fraction > 0 else 0.0,
                   fast.write_latency_mean_us if read_fraction < 1 else 0.0),
                  read_fraction=read_fraction,
                  tails=((value(res.latency_p99_us), value(res.latency_p999_us)),
                         (fast.latency_p99_us or 0.0, fast.latency_p999_us or 0.0)))


def compare(section: str, name: str, qd: int, max_ios: int, block_kib: int = 4, device_model: str = "dies") -> Row:
    """The DES and the fast path on one device and depth (tails: the die-level estimate for 4 KiB reads on dies,
    else the fast path's own ``latency_p99_us`` / ``latency_p999_us``)."""
    sc = scenario_for(section, name, qd, max_ios, block_kib=block_kib, device_model=device_model)
    res = simulate(sc)
    fast = evaluate(sc)
    layout = describe(sc).devices.dies  # type: ignore[union-attr]
    if block_kib == 4 and layout is not None:
        q99 = closed_read_quantile_us(layout, qd, fast.latency_mean_us, 0.99)
        q999 = closed_read_quantile_us(layout, qd, fast.latency_mean_us, 0.999)
    else:
        q99, q999 = fast.latency_p99_us or 0.0, fast.latency_p999_us or 0.0
    return Row(name, qd, (res.iops.value, res.latency_mean_us.value, res.latency_p99_us.value, res.latency_p999_us.value),
               (fast.iops, fast.latency_mean_us, q99, q999))


def open_scenario(section: str, name: str, share: float, read_fraction: float, max_ios: int,
                  device_model: str = "dies") -> Scenario:
    """One device alone, open Poisson arrivals of 4 KiB random I/Os (``read_fraction`` reads) at ``share`` of the
    fast path's Xmax for that mix."""
    closed = scenario_for(section, name, 1, max_ios, read_fraction=read_fraction, device_model=device_model)
    data: dict[str, Any] = closed.model_dump(mode="json", exclude_none=True)
    x_max = evaluate(closed).bounds.x_max_iops
    data["name"] = f"{device_model} {name} open {share:.0%}"
    data["workload"] = {"kind": "open", "rate_iops": round(share * x_max), "read_fraction": read_fraction,
                        "block_size_kib": 4, "access": "random"}
    return Scenario.model_validate(data)


def open_table(chosen: list[tuple[str, str]], shares: list[float], fractions: list[float], max_ios: int,
               device_model: str) -> int:
    """Print the open-arrivals table (DES and fast path: IOPS, mean, p99, p99.9); exit 2 on a share outside (0, 1)."""
    bad = [x for x in shares if not 0.0 < x < 1.0] + [f for f in fractions if not 0.0 <= f <= 1.0]
    if bad:
        print(f"--open-loads must be in (0, 1) and --read-fractions in 0..1, got {bad[0]}", file=sys.stderr)
        return 2
    print("| device | load | reads | IOPS DES | mean DES | mean fast | diff | p99 DES | p99 fast | diff | p99.9 DES "
          "| p99.9 fast | diff | tail method |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|")
    worst = [0.0, 0.0, 0.0]
    for section, name in chosen:
        for f in fractions:
            for share in shares:
                sc = open_scenario(section, name, share, f, max_ios, device_model)
                res = simulate(sc)
                fast = evaluate(sc)
                des = (res.latency_mean_us.value or 0.0, res.latency_p99_us.value or 0.0, res.latency_p999_us.value or 0.0)
                got = (fast.latency_mean_us, fast.latency_p99_us or 0.0, fast.latency_p999_us or 0.0)
                diffs = [g / d - 1.0 if d > 0 else 0.0 for g, d in zip(got, des, strict=True)]
                worst = [max(w, abs(v)) for w, v in zip(worst, diffs, strict=True)]
                print(f"| {name} | {share:.0%} | {f:.0%} | {res.iops.value:,.0f} | {des[0]:.1f} | {got[0]:.1f} | {diffs[0]:+.1%} | "
                      f"{des[1]:.1f} | {got[1]:.1f} | {diffs[1]:+.1%} | {des[2]:.1f} | {got[2]:.1f} | {diffs[2]:+.1%} | "
                      f"{fast.tail_method} |", flush=True)
    print(f"\nworst |diff|: mean {worst[0]:.1%}, p99 {worst[1]:.1%}, p99.9 {worst[2]:.1%}")
    return 0


def devices() -> list[tuple[str, str]]:
    cat = load_catalog()
    return [("drives", n) for n in cat.drives] + [("dimms", n) for n in cat.dimms]


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m calibration.ext.die_solvers", description=__doc__.splitlines()[0])
    ap.add_argument("--max-ios", type=int, default=20_000)
    ap.add_argument("--devices", default="", help="comma-separated catalog names (default: every drive and DIMM)")
    ap.add_argument("--depths", default=",".join(map(str, DEPTHS)))
    ap.add_argument("--read-fractions", default="",
                    help="comma-separated read fractions in 0..1 (e.g. 0,0.67): a mix table (IOPS, mean, read and write means)")
    ap.add_argument("--block-kib", type=int, default=4, help="the I/O size in KiB, 1..1024 (default 4)")
    ap.add_argument("--device-model", choices=("dies", "pooled", "auto"), default="dies",
                    help="the flash device model of both solvers (default dies)")
    ap.add_argument("--open-loads", default="",
                    help="comma-separated shares of Xmax in (0, 1) (e.g. 0.3,0.6,0.85): open Poisson arrivals instead of "
                         "a closed loop, at each read fraction (--read-fractions, default 1)")
    args = ap.parse_args(argv)
    if not 1_000 <= args.max_ios <= 5_000_000:
        print(f"--max-ios must be in 1000..5000000, got {args.max_ios}", file=sys.stderr)
        return 2
    if not 1 <= args.block_kib <= 1024:
        print(f"--block-kib must be in 1..1024, got {args.block_kib}", file=sys.stderr)
        return 2
    chosen = [d for d in devices() if not args.devices or d[1] in args.devices.split(",")]
    depths = [int(x) for x in args.depths.split(",")]
    if args.open_loads:
        return open_table(chosen, [float(x) for x in args.open_loads.split(",")],
                          [float(x) for x in (args.read_fractions or "1").split(",")], args.max_ios, args.device_model)
    if args.read_fractions:
        return mix_table(chosen, depths, [float(x) for x in args.read_fractions.split(",")], args.max_ios, args.block_kib,
                         args.device_model)
    print("| device | QD | IOPS DES | IOPS fast | diff | mean DES | mean fast | diff | p99 DES | p99 fast | diff "
          "| p99.9 DES | p99.9 fast | diff |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    worst = [0.0, 0.0, 0.0, 0.0]
    for section, name in chosen:
        for qd in depths:
            r = compare(section, name, qd, args.max_ios, args.block_kib, args.device_model)
            dd = r.diffs()
            worst = [max(w, abs(x)) for w, x in zip(worst, dd, strict=True)]
            cells = []
            for k in range(4):
                cells += [f"{r.des[k]:,.0f}" if k == 0 else f"{r.des[k]:.1f}", f"{r.fast[k]:,.0f}" if k == 0 else f"{r.fast[k]:.1f}",
                          f"{dd[k]:+.1%}"]
            print(f"| {name} | {qd} | " + " | ".join(cells) + " |", flush=True)
    print(f"\nworst |diff|: IOPS {worst[0]:.1%}, mean {worst[1]:.1%}, p99 {worst[2]:.1%}, p99.9 {worst[3]:.1%}")
    return 0


def mix_table(chosen: list[tuple[str, str]], depths: list[int], fractions: list[float], max_ios: int, block_kib: int = 4,
              device_model: str = "dies") -> int:
    """Print the mix table; exit 2 on a read fraction outside 0..1."""
    bad = [f for f in fractions if not 0.0 <= f <= 1.0]
    if bad:
        print(f"--read-fractions must be in 0..1, got {bad[0]}", file=sys.stderr)
        return 2
    print("| device | QD | reads | IOPS DES | IOPS fast | diff | mean DES | mean fast | diff | read DES | read fast "
          "| write DES | write fast | p99 DES | p99 fast | diff | p99.9 DES | p99.9 fast | diff |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    worst = [0.0, 0.0, 0.0, 0.0]
    for section, name in chosen:
        for f in fractions:
            for qd in depths:
                r = compare_mix(section, name, qd, f, max_ios, block_kib, device_model)
                dd = r.diffs()
                (d99, d999), (f99, f999) = r.tails
                t99 = f99 / d99 - 1.0 if d99 > 0 else 0.0
                t999 = f999 / d999 - 1.0 if d999 > 0 else 0.0
                worst = [max(w, abs(v)) for w, v in zip(worst, (dd[0], dd[1], t99, t999), strict=True)]
                print(f"| {name} | {qd} | {f:.0%} | {r.des[0]:,.0f} | {r.fast[0]:,.0f} | {dd[0]:+.1%} | {r.des[1]:.1f} | "
                      f"{r.fast[1]:.1f} | {dd[1]:+.1%} | {r.des[2]:.1f} | {r.fast[2]:.1f} | {r.des[3]:.1f} | {r.fast[3]:.1f} | "
                      f"{d99:.1f} | {f99:.1f} | {t99:+.1%} | {d999:.1f} | {f999:.1f} | {t999:+.1%} |", flush=True)
    print(f"\nworst |diff|: IOPS {worst[0]:.1%}, mean {worst[1]:.1%}, p99 {worst[2]:.1%}, p99.9 {worst[3]:.1%}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
