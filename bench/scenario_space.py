"""A space of realistic scenarios for checking the analytic fast path against the DES.

``draw_scenario(pick, uniform)`` builds raw scenario data from two choice functions, so the
same space is sampled by a seeded ``random.Random`` (bench/analytic_accuracy.py) and by
hypothesis (tests/analytic/test_analytic.py: ``data.draw(st.sampled_from(...))``). Every attachment
kind is covered with catalog hardware, every layout, closed / open / bursty workloads,
read / write mixes, sizes and access patterns. Open and bursty rates are set as a fraction
of the path's capacity bound (Xmax from the fast path), so most points are stable.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Sequence
from typing import Any, TypeVar

from models.catalog import load_catalog
from models.scenario import Scenario, scenario_from_data

T = TypeVar("T")
Pick = Callable[[Sequence[Any]], Any]
Uniform = Callable[[float, float], float]

KINDS = ("generic", "direct_nvme", "san", "exflash", "zvm_edev")


def _direct(pick: Pick) -> dict[str, Any]:
    cat = load_catalog()
    drive = pick(sorted(cat.drives))
    spec = cat.drives[drive]
    layout = pick(("jbod", "raid0", "raid1", "raid10", "raid5", "raid6", "ibmi_mirror"))
    adapter = pick(("EJ1Y", "EJ1X", "IBM-NVMe-Carrier-0448"))
    max_per_adapter = cat.adapters[adapter].max_drives
    drives = pick((1, 2, 3, 4, 6, 8))
    if layout == "raid10":
        drives = max(4, drives + drives % 2)
    elif layout in ("raid1", "ibmi_mirror"):
        drives = max(2, drives)
    per_drive = pick((1, 1, 2, 4)) if spec.max_namespaces >= 4 else 1
    if layout == "raid5" and drives * per_drive < 3:
        drives = 3
    if layout == "raid6" and drives * per_drive < 4:
        drives = 4
    if layout == "ibmi_mirror" and (drives * per_drive) % 2:
        drives += 1
    adapters = -(-drives // max_per_adapter)
    adapters = max(adapters, pick((1, 2)) if drives >= 2 else 1)
    namespaces: dict[str, Any] = {"per_drive": per_drive}
    if pick((False, False, True)):
        namespaces["queue_depth"] = pick((1, 2, 4, 8, 32))
    return {"kind": "direct_nvme", "host": {"model": pick(("LinuxONE-Emperor4-LPAR30", "Power10-S1024-LPAR32"))},
            "drive": drive, "drives": drives, "adapter": adapter, "adapters": adapters, "layout": layout,
            "namespaces": namespaces, "chunk_kib": pick((64, 256, 1024))}


def _san(pick: Pick, uniform: Uniform) -> dict[str, Any]:
    server = pick(("DS8950F", "FS9100"))
    protocol = pick(("fcp", "nvme_fc"))
    adapter = "FICON-Express32S" if protocol == "fcp" and pick((True, False)) else "FC-HBA-32G"
    return {"kind": "san", "host": {"model": "FS9100-test-host" if adapter == "FC-HBA-32G" else "LinuxONE-Emperor4-LPAR30"},
            "protocol": protocol, "host_adapter": adapter, "host_adapters": pick((1, 2)), "luns": pick((1, 4, 8, 32)),
            "lun_queue_depth": pick((1, 4, 32)), "associations": pick((1, 2, 4)), "storage_server": server,
            "front_end_ports": pick((1, 2, 4)), "layout": pick(("raid0", "jbod")),
            "cache": {"read_hit_ratio": round(uniform(0.0, 1.0), 2), "write_back": pick((True, True, False))}}


def _exflash(pick: Pick) -> dict[str, Any]:
    return {"kind": "exflash", "host": {"model": "x3850-X6"}, "dimms": pick((1, 2, 3, 4, 8)),
            "max_occupancy": pick((True, False)), "layout": pick(("jbod", "raid0"))}


def _zvm(pick: Pick) -> dict[str, Any]:
    return {"kind": "zvm_edev", "host": {"model": "z14-M05-LPAR4"}, "drives": pick((1, 2)),
            "base_devices": pick((1, 2, 4)), "aliases": pick((0, 1, 3, 7, 11))}


def _generic(pick: Pick, uniform: Uniform) -> dict[str, Any]:
    stations = []
    for i in range(pick((1, 2, 3))):
        law = pick(("exponential", "deterministic", "lognormal"))
        st: dict[str, Any] = {"name": f"s{i}", "servers": pick((1, 1, 2, 4, 8)), "service_time_us": round(uniform(5.0, 100.0), 1),
                              "distribution": law}
        if law == "lognormal":
            st["cv"] = round(uniform(0.2, 1.5), 2)
        stations.append(st)
    topo: dict[str, Any] = {"kind": "generic", "stations": stations}
    if pick((False, False, True)):
        topo["host"] = {"cores": pick((1, 2, 4)), "cpu_us_per_io": round(uniform(1.0, 10.0), 1)}
    return topo


def _mix(pick: Pick, uniform: Uniform) -> dict[str, Any]:
    mix: dict[str, Any] = {"read_fraction": pick((0.0, 0.3, 0.5, 0.7, 0.9, 1.0)), "access": pick(("random", "random", "sequential"))}
    if pick((True, True, True, False)):
        mix["block_size_kib"] = pick((4, 4, 8, 16, 64, 128, 256))
    else:
        mix["sizes"] = [{"kib": 4, "weight": 3}, {"kib": pick((16, 64, 256)), "weight": 1}]
    return mix


def draw_topology(pick: Pick, uniform: Uniform, kind: str | None = None) -> dict[str, Any]:
    kind = kind or pick(KINDS)
    if kind == "direct_nvme":
        return _direct(pick)
    if kind == "san":
        return _san(pick, uniform)
    if kind == "exflash":
        return _exflash(pick)
    if kind == "zvm_edev":
        return _zvm(pick)
    return _generic(pick, uniform)


def draw_scenario(pick: Pick, uniform: Uniform, kind: str | None = None, max_utilization: float = 0.75) -> Scenario:
    """A validated scenario: topology, mix and a workload at a random share of the capacity bound."""
    from sim.analytic import evaluate

    data: dict[str, Any] = {"name": "", "topology": draw_topology(pick, uniform, kind), "workload": {"kind": "closed"}}
    mix = _mix(pick, uniform)
    data["workload"] = {"kind": "closed", "jobs": 1, **mix}
    probe = evaluate(scenario_from_data(data))
    x_max = probe.bounds.x_max_iops
    wkind = pick(("closed", "closed", "open", "open", "bursty"))
    share = round(uniform(0.1, max_utilization), 3)
    if wkind == "open":
        data["workload"] = {"kind": "open", "rate_iops": max(1.0, round(share * x_max, 1)), **mix}
    elif wkind == "bursty":
        on = round(uniform(0.5, 20.0), 2)
        off = round(on * uniform(1.0, 4.0), 2)
        mean = share * x_max
        on_rate = min(0.95 * x_max, mean * (on + off) / on * uniform(0.7, 1.0))
        off_rate = max(0.0, (mean * (on + off) - on_rate * on) / off)
        data["workload"] = {"kind": "bursty", "on_rate_iops": round(on_rate, 1), "off_rate_iops": round(off_rate, 1),
                            "mean_on_ms": on, "mean_off_ms": off, **mix}
    else:
        # a population around the knee N* = (Rmin + Z) / Dmax, with think time now and then
        think = pick((0.0, 0.0, round(uniform(10.0, 500.0), 1)))
        n_star = (probe.bounds.r_min_us + think) * x_max * 1e-6
        population = max(1, round(n_star * uniform(0.1, 1.6)))
        qd = pick((1, 1, 2, 4, 8))
        jobs = max(1, round(population / qd))
        data["workload"] = {"kind": "closed", "jobs": jobs, "queue_depth": qd, "think_time_us": think,
                            "think_distribution": pick(("deterministic", "exponential")), **mix}
    data["name"] = f"{data['topology']['kind']} {data['workload']['kind']}"
    return scenario_from_data(data)


def random_scenarios(seed: int, count: int, kinds: Sequence[str] = KINDS) -> list[Scenario]:
    """``count`` scenarios from a seeded generator, cycling through ``kinds``."""
    rng = random.Random(seed)
    out = []
    for i in range(count):
        out.append(draw_scenario(lambda xs: xs[rng.randrange(len(xs))], rng.uniform, kinds[i % len(kinds)]))
    return out


def outside_claim(scenario: Scenario) -> str | None:
    """Why the fast path's 5% claim does not cover ``scenario`` (None when it does).

    The claim (DES bottleneck below 80% utilization) leaves out what the fast path only
    approximates: bursty arrivals (open regimes blended by a relaxation time), unstable
    open loads, I/Os cut into more pieces than the volume has members (pieces on one member
    run one after another), an open sequential stream that changes stripe unit every few
    I/Os (the pinned / spread blend), a sequential stream dwelling on a RAID-5/6 stripe unit (spread
    evenly by the fast path, which says so in its notes), and sequential streams that drift over a stripe of eXFlash
    DIMMs (streams that meet on a DIMM block each other's writes in its 2-slot write cache).
    """
    from sim.analytic import evaluate
    from sim.analytic.paths import compile_scenario

    wl = scenario.workload
    if wl.kind == "bursty":
        return "bursty arrivals"
    fast = evaluate(scenario)
    if not fast.stable:
        return "unstable"
    compiled = compile_scenario(scenario)
    if compiled.width > compiled.members:
        return "more pieces than members"
    topo = scenario.topology
    striped = getattr(topo, "layout", "jbod") in ("raid0", "raid10", "ibmi_mirror")
    if wl.kind == "open" and wl.access == "sequential" and striped and getattr(topo, "chunk_kib", 0) * 1024 / wl.mean_bytes() < 8:
        return "open sequential stream changing stripe unit every few I/Os"
    if any("fast path spreads the stream" in note for note in fast.notes):
        return "sequential stream dwelling on a parity layout's stripe unit (the fast path says so in its notes)"
    if scenario.topology.kind == "exflash" and wl.read_fraction < 1 and wl.access == "sequential" \
            and getattr(scenario.topology, "layout", "jbod") != "jbod":
        return "sequential streams over eXFlash write caches"
    return None
