"""The analytic fast path against the DES: every example and a seeded random set, as a report table.

``python -m bench.analytic_accuracy [--quick] [--seed S] [--count N] [--out PATH]`` simulates
each scenario with the DES (to a 1% relative 95% half-width, or 2% with ``--quick``, within
a budget), evaluates it with the fast path, and writes a Markdown table of throughput and
mean-latency errors with the DES bottleneck and its utilization. A row is *within the
claim* when the DES bottleneck is below 80% utilization and the arrivals are not bursty;
the claim is that the fast path is then within 5% of the DES on both (allowing for the DES's
own 95% interval). Every row whose error exceeds 5% is flagged with the reasons that apply
(the known approximations listed in sim/analytic/__init__.py).
"""

from __future__ import annotations

import argparse
import math
import time
from dataclasses import dataclass
from pathlib import Path

from models import Result, Scenario, load_scenario, with_overrides
from models.topology import DirectNvme, Exflash, San, Topology, ZvmEdev
from models.workload import BurstyWorkload, ClosedWorkload, OpenWorkload, Workload
from sim.analytic import FastResult, evaluate

ROOT = Path(__file__).resolve().parent.parent
EXAMPLES = ROOT / "examples"
DEFAULT_OUT = ROOT / "bench" / "results" / "analytic_accuracy.md"
CLAIM_UTILIZATION = 0.8
CLAIM_ERROR = 0.05

FULL_RUN = {"run.target_rel_ci": 0.01, "run.max_ios": 2_000_000, "run.max_wall_s": 15.0, "run.warmup_ios": 5_000}
QUICK_RUN = {"run.target_rel_ci": 0.02, "run.max_ios": 300_000, "run.max_wall_s": 5.0, "run.warmup_ios": 3_000}


def _topology_reasons(topo: Topology, wl: Workload, des: Result) -> list[str]:
    """The approximations the attachment and its volume layout bring (``Case.reasons``)."""
    out = []
    layout = "jbod" if isinstance(topo, ZvmEdev) else getattr(topo, "layout", "")
    members = {DirectNvme: lambda t: t.drives * t.namespaces.per_drive, San: lambda t: t.luns,
               Exflash: lambda t: t.dimms, ZvmEdev: lambda t: t.base_devices}
    if isinstance(wl, ClosedWorkload) and layout == "jbod":
        m = next((f(topo) for cls, f in members.items() if isinstance(topo, cls)), 1)
        if wl.jobs % m:
            out.append(f"closed JBOD: {wl.jobs} jobs on {m} members (members keep unequal job counts; "
                       "the fast path shares throughput in proportion to jobs)")
    if layout in ("raid1", "raid10", "ibmi_mirror") and wl.read_fraction > 0:
        if isinstance(topo, DirectNvme) and layout != "raid1":
            out.append("mirror reads go to the less-loaded copy in the DES; the fast path pools the pair's namespace slots")
        else:
            out.append("mirror reads go to the less-loaded copy in the DES; the fast path splits them evenly")
    if layout in ("raid5", "raid6") and wl.read_fraction < 1:
        out.append("RAID-5/6 read-modify-write as sampled stripe offsets, phases as expected maxima of normals")
    if isinstance(topo, Exflash) and wl.read_fraction < 1:
        out.append("eXFlash write cache of few slots emptied by one destage channel (geometric-tail approximation)")
        dies = max((u for name, u in des.utilization.items() if name.endswith(".nand_dies")), default=0.0)
        if wl.read_fraction > 0 and dies > 0.7:
            out.append(f"NAND dies shared by reads and programs {dies:.0%} busy: taken as FCFS M/G/c with open arrivals, "
                       "while the 2-slot write cache holds programs back in the DES (reads and destages wait less there)")
    if isinstance(topo, ZvmEdev) and topo.base_devices > 1 and topo.aliases > 0:
        out.append("z/VM bases and aliases pooled as one set of subchannels")
    return out


@dataclass
class Row:
    """One scenario: DES and fast-path figures, errors, and why the fast path is off where it is."""

    label: str
    scenario: Scenario
    fast: FastResult
    des: Result
    wall_s: float

    @property
    def err_iops(self) -> float:
        return self.fast.iops / self.des.iops.value - 1.0 if self.des.iops.value else math.nan

    @property
    def err_latency(self) -> float:
        d = self.des.latency_mean_us.value
        return self.fast.latency_mean_us / d - 1.0 if d and math.isfinite(self.fast.latency_mean_us) else math.nan

    @property
    def des_utilization(self) -> float:
        return self.des.utilization.get(self.des.bottleneck, 0.0)

    @property
    def outside(self) -> str | None:
        """Why the claim does not cover this scenario (bench.scenario_space.outside_claim), or None."""
        from bench.scenario_space import outside_claim

        if self.des_utilization >= CLAIM_UTILIZATION:
            return f"DES bottleneck at {self.des_utilization:.0%}"
        return outside_claim(self.scenario)

    @property
    def in_claim(self) -> bool:
        return self.outside is None

    def within(self, tolerance: float = CLAIM_ERROR) -> bool:
        """Both errors within ``tolerance`` plus the DES's own relative 95% half-width."""
        ok = True
        for err, metric in ((self.err_iops, self.des.iops), (self.err_latency, self.des.latency_mean_us)):
            ok &= math.isfinite(err) and abs(err) <= tolerance + metric.rel_half_width
        return ok

    def reasons(self) -> list[str]:
        """The approximations that apply to this scenario (the likely causes of an error)."""
        sc, fast, des = self.scenario, self.fast, self.des
        out = []
        if self.des_utilization >= CLAIM_UTILIZATION:
            out.append(f"DES bottleneck {des.bottleneck} at {self.des_utilization:.0%} (outside the < 80% claim)")
        wl = sc.workload
        if isinstance(wl, BurstyWorkload):
            out.append("bursty on/off arrivals: open regimes blended by the bottleneck's relaxation time (approximate; "
                       "the DES needs many on/off cycles too)")
        if not fast.stable:
            out.append("offered rate above Xmax: the fast path reports it unstable")
        if max(des.iops.rel_half_width, des.latency_mean_us.rel_half_width) > 0.02:
            out.append(f"wide DES interval (±{max(des.iops.rel_half_width, des.latency_mean_us.rel_half_width):.1%}: "
                       f"{des.stop_reason})")
        out += _topology_reasons(sc.topology, wl, des)
        if isinstance(wl, ClosedWorkload) and wl.jobs * wl.queue_depth <= 8:
            out.append("small closed population (approximate MVA outside product form)")
        return out


def compare(scenario: Scenario, run: dict[str, float], label: str = "") -> Row:
    """Simulate ``scenario`` with the run overrides and evaluate it with the fast path."""
    sc = with_overrides(scenario, run)
    from sim.des.engine import simulate

    t = time.perf_counter()
    des = simulate(sc)
    wall = time.perf_counter() - t
    return Row(label=label or sc.name, scenario=sc, fast=evaluate(sc), des=des, wall_s=wall)


def scenarios(seed: int, count: int) -> list[tuple[str, Scenario]]:
    """Every example, then ``count`` seeded random scenarios cycling through the attachment kinds."""
    from bench.scenario_space import random_scenarios

    out = [(p.name, sc) for p in sorted(EXAMPLES.glob("*.yaml")) if (sc := load_scenario(p)).workload.kind != "profile"]
    out += [(f"random {seed}/{i}: {sc.name}", sc) for i, sc in enumerate(random_scenarios(seed, count))]
    return out


def _pct(x: float) -> str:
    return f"{x:+.1%}" if math.isfinite(x) else "-"


def _num(x: float) -> str:
    if not math.isfinite(x):
        return "unbounded"
    return f"{x:,.0f}" if abs(x) >= 100 else f"{x:.1f}"


def describe(sc: Scenario) -> str:
    """One line: the hardware and the workload."""
    t = sc.topology
    wl = sc.workload
    if isinstance(t, DirectNvme):
        hw = f"{t.drives}x {t.drive_name} {t.layout}, {t.namespaces.per_drive} ns/drive" + (
            f" qd {t.namespaces.queue_depth}" if t.namespaces.queue_depth else "")
    elif isinstance(t, San):
        hw = f"{t.storage_server} {t.protocol} {t.luns} LUNs, {t.front_end_ports} ports, hit {t.cache.read_hit_ratio:g}"
    elif isinstance(t, Exflash):
        hw = f"{t.dimms} eXFlash DIMMs {t.layout}" + ("" if t.max_occupancy else ", 2 DIMMs/thread")
    elif isinstance(t, ZvmEdev):
        hw = f"z/VM {t.base_devices} base + {t.aliases} aliases on {t.drives} drive(s)"
    else:
        hw = " + ".join(f"{s.servers}x{s.service_time_us:g}us {s.distribution[:4]}" for s in t.stations)
    size = "mix" if wl.sizes else f"{wl.block_size_kib:g}K"
    mix = f"{wl.read_fraction:.0%} read {size} {wl.access[:3]}"
    if isinstance(wl, ClosedWorkload):
        load = f"closed {wl.jobs}x{wl.queue_depth}" + (f" Z={wl.think_time_us:g}us" if wl.think_time_us else "")
    elif isinstance(wl, BurstyWorkload):
        load = f"bursty {wl.on_rate_iops:,.0f}/{wl.off_rate_iops:,.0f} IOPS {wl.mean_on_ms:g}/{wl.mean_off_ms:g} ms"
    elif isinstance(wl, OpenWorkload):
        load = f"open {wl.rate_iops:,.0f} IOPS"
    else:
        load = f"profile of {len(wl.intervals)} intervals"
    return f"{hw}; {mix}; {load}"


def markdown(rows: list[Row], seed: int, count: int, run: dict[str, float], wall_s: float) -> str:
    """The report: summary, then one table row per scenario, then the flagged rows with reasons."""
    claim = [r for r in rows if r.in_claim]
    good = [r for r in claim if r.within()]
    worst_x = max((abs(r.err_iops) for r in claim if math.isfinite(r.err_iops)), default=math.nan)
    worst_r = max((abs(r.err_latency) for r in claim if math.isfinite(r.err_latency)), default=math.nan)
    flagged = [r for r in rows if not r.within()]
    lines = [
        "# Analytic fast path vs DES",
        "",
        f"Generated by `python -m bench.analytic_accuracy --seed {seed} --count {count}` in {wall_s:.0f} s: "
        f"{len(rows)} scenarios (every example and {count} seeded random ones), DES run settings {run}.",
        "",
        f"**Within the claim** (DES bottleneck < {CLAIM_UTILIZATION:.0%}, in the claimed domain): {len(claim)} scenarios, "
        f"{len(good)} within {CLAIM_ERROR:.0%} (+ the DES 95% half-width) on both throughput and mean latency; "
        f"largest errors there: throughput {worst_x:.1%}, latency {worst_r:.1%}.",
        f"**Outside the claim**: {len(rows) - len(claim)} scenarios (bottleneck >= {CLAIM_UTILIZATION:.0%} or outside the "
        f"domain, reason in the last column), "
        f"{sum(1 for r in rows if not r.in_claim and r.within())} of them within {CLAIM_ERROR:.0%} anyway.",
        "",
        "| # | scenario | DES IOPS (±95%) | fast IOPS | err | DES mean us (±95%) | fast mean us | err | "
        "DES bottleneck (util) | fast bottleneck | flag |",
        "|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for i, r in enumerate(rows):
        outside = r.outside
        flag = ("" if r.within() else "**>5%**") if outside is None else f"outside: {outside}" + ("" if r.within() else ", >5%")
        lines.append(
            f"| {i} | {r.label}: {describe(r.scenario)} | {_num(r.des.iops.value)} (±{r.des.iops.rel_half_width:.1%}) | "
            f"{_num(r.fast.iops)} | {_pct(r.err_iops)} | {_num(r.des.latency_mean_us.value)} "
            f"(±{r.des.latency_mean_us.rel_half_width:.1%}) | {_num(r.fast.latency_mean_us)} | {_pct(r.err_latency)} | "
            f"{r.des.bottleneck} ({r.des_utilization:.0%}) | {r.fast.bottleneck} | {flag} |")
    lines += ["", "## Where the fast path is more than 5% off, and why", ""]
    if not flagged:
        lines.append("Nowhere.")
    for r in flagged:
        i = rows.index(r)
        why = "; ".join(r.reasons()) or "no listed approximation applies"
        lines.append(f"* #{i} {r.label} (throughput {_pct(r.err_iops)}, latency {_pct(r.err_latency)}"
                     f"{', within the claim' if r.in_claim else ''}): {why}.")
    return "\n".join(lines) + "\n"


def main() -> None:
    parser = argparse.ArgumentParser(description="Fast path vs DES on every example and a seeded random set.")
    parser.add_argument("--seed", type=int, default=2026)
    parser.add_argument("--count", type=int, default=None, help="random scenarios (default 60, 20 with --quick)")
    parser.add_argument("--quick", action="store_true", help="2%% DES precision, smaller budgets, 20 random scenarios")
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT, help=f"report path (default {DEFAULT_OUT.relative_to(ROOT)})")
    args = parser.parse_args()
    count = args.count if args.count is not None else (20 if args.quick else 60)
    run = QUICK_RUN if args.quick else FULL_RUN
    t0 = time.perf_counter()
    rows = []
    for label, sc in scenarios(args.seed, count):
        row = compare(sc, run, label)
        rows.append(row)
        mark = "ok " if row.within() else ("BAD" if row.in_claim else "out")
        print(f"{mark} {len(rows) - 1:3d} X {_pct(row.err_iops):>7} R {_pct(row.err_latency):>7} "
              f"util {row.des_utilization:4.0%} {row.wall_s:5.1f}s  {label}", flush=True)
    text = markdown(rows, args.seed, count, run, time.perf_counter() - t0)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    tmp = args.out.with_suffix(".tmp")
    tmp.write_text(text, encoding="utf-8")
    tmp.replace(args.out)
    claim = [r for r in rows if r.in_claim]
    print(f"{sum(r.within() for r in claim)}/{len(claim)} scenarios within the claim are within 5%; "
          f"{sum(not r.within() for r in rows)} flagged; report: {args.out}")


if __name__ == "__main__":
    main()
