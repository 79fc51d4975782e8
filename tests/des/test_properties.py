"""Properties every run must have, for random scenarios (hypothesis).

* Little's law: mean I/Os outstanding = IOPS x mean latency (open and closed, generic
  and direct NVMe).
* Conservation: every issued I/O has completed or is still in flight; measured I/Os
  are a subset of completed ones; a closed workload never has more than jobs x QD out.
* Meters: every utilization and busy fraction lies in [0, 1], utilization <= busy
  (mean units in use / capacity cannot exceed the fraction of time any unit is in use),
  and both dicts name the same components.
* Closed throughput does not fall when the queue depth doubles.
* RAID-1 write IOPS <= RAID-0 write IOPS on the same drives (write-only, saturating).

Budgets are small (max_ios 20,000, warm-up 1,000, min_batches 5) and hypothesis is
derandomized with no example database, so the suite is repeatable and writes nothing.
"""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from models import Result, Scenario, lookup, scenario_from_data
from sim import simulate

SETTINGS = settings(max_examples=12, deadline=None, derandomize=True, database=None,
                    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
LAYOUTS = ("jbod", "raid0", "raid1", "raid10", "raid5", "raid6", "ibmi_mirror")
DRIVE, ADAPTER = "ES5F", "EJ1Y"


def small_run(seed: int, **kw: Any) -> dict[str, Any]:
    run = {"seed": seed, "warmup_ios": 1_000, "max_ios": 20_000, "min_batches": 5, "target_rel_ci": 0.02, "max_wall_s": 120}
    run.update(kw)
    return run


seeds = st.integers(min_value=0, max_value=2**32 - 1)
read_fractions = st.sampled_from([0.0, 0.3, 0.7, 1.0])


# -- scenario strategies -------------------------------------------------------------------------

@st.composite
def generic_topologies(draw: st.DrawFn) -> tuple[dict[str, Any], float]:
    """A tandem of 1-3 generic stations (optionally behind a host that costs CPU); returns (topology, capacity IOPS)."""
    stations = []
    for i in range(draw(st.integers(1, 3))):
        law = draw(st.sampled_from(["exponential", "deterministic", "lognormal"]))
        station: dict[str, Any] = {
            "name": f"st{i}",
            "servers": draw(st.integers(1, 4)),
            "service_time_us": draw(st.sampled_from([2.0, 5.0, 10.0, 25.0, 80.0])),
            "distribution": law,
        }
        if law == "lognormal":
            station["cv"] = draw(st.sampled_from([0.3, 0.7, 1.2]))
        stations.append(station)
    capacity = min(s["servers"] / s["service_time_us"] for s in stations)  # per us
    topo: dict[str, Any] = {"kind": "generic", "stations": stations}
    if draw(st.booleans()):
        cores, cpu = draw(st.integers(1, 4)), draw(st.sampled_from([1.0, 4.0]))
        topo["host"] = {"cores": cores, "cpu_us_per_io": cpu}
        capacity = min(capacity, cores / cpu)
    return topo, capacity * 1e6


def closed_workloads(max_jobs: int = 8, max_qd: int = 8) -> st.SearchStrategy[dict[str, Any]]:
    return st.fixed_dictionaries({
        "kind": st.just("closed"),
        "jobs": st.integers(1, max_jobs),
        "queue_depth": st.integers(1, max_qd),
        "think_time_us": st.sampled_from([0.0, 0.0, 20.0, 200.0]),
        "think_distribution": st.sampled_from(["deterministic", "exponential"]),
        "read_fraction": read_fractions,
    })


@st.composite
def generic_scenarios(draw: st.DrawFn, kinds: tuple[str, ...] = ("open", "closed", "bursty")) -> Scenario:
    """Generic scenarios whose open / bursty load stays below 80% of the bottleneck's capacity."""
    topo, capacity = draw(generic_topologies())
    kind = draw(st.sampled_from(kinds))
    workload: dict[str, Any]
    if kind == "closed":
        workload = draw(closed_workloads())
    elif kind == "open":
        workload = {"kind": "open", "rate_iops": draw(st.sampled_from([0.1, 0.4, 0.6, 0.8])) * capacity}
    else:
        on = draw(st.sampled_from([0.6, 0.9])) * capacity
        workload = {"kind": "bursty", "on_rate_iops": on, "off_rate_iops": on * draw(st.sampled_from([0.0, 0.5])),
                    "mean_on_ms": draw(st.sampled_from([0.2, 1.0])), "mean_off_ms": draw(st.sampled_from([0.2, 1.0]))}
    workload["read_fraction"] = draw(read_fractions)
    return scenario_from_data({"topology": topo, "workload": workload, "run": small_run(draw(seeds))})


@st.composite
def direct_topologies(draw: st.DrawFn) -> dict[str, Any]:
    """A valid direct-NVMe topology of ES5F drives behind EJ1Y adapters, any layout."""
    layout = draw(st.sampled_from(LAYOUTS))
    if layout == "raid10":
        drives = draw(st.sampled_from([4, 6, 8]))
    elif layout == "raid1":
        drives = draw(st.integers(2, 4))  # every member takes every write: keep the fan-out (and run time) small
    elif layout == "ibmi_mirror":
        drives = draw(st.integers(2, 8))
    else:
        drives = draw(st.integers(1, 8))
    per_drive = draw(st.sampled_from([1, 2, 4]))
    members = drives * per_drive
    if layout == "ibmi_mirror" and members % 2:
        per_drive = 2
    if layout == "raid5" and members < 3:
        drives = 3
    if layout == "raid6" and members < 4:
        drives = 4
    topo: dict[str, Any] = {
        "kind": "direct_nvme", "drive": DRIVE, "drives": drives, "adapter": ADAPTER, "adapters": draw(st.sampled_from([1, 2])),
        "layout": layout, "namespaces": {"per_drive": per_drive, "queue_depth": draw(st.sampled_from([1, 4, 32]))},
        "chunk_kib": draw(st.sampled_from([64, 256])),
    }
    return topo


@st.composite
def direct_scenarios(draw: st.DrawFn, kinds: tuple[str, ...] = ("open", "closed", "bursty")) -> Scenario:
    topo = draw(direct_topologies())
    kind = draw(st.sampled_from(kinds))
    workload: dict[str, Any]
    if kind == "closed":
        workload = draw(closed_workloads(max_jobs=16, max_qd=32))
    elif kind == "open":
        workload = {"kind": "open", "rate_iops": draw(st.sampled_from([20_000.0, 100_000.0, 300_000.0]))}
    else:
        workload = {"kind": "bursty", "on_rate_iops": draw(st.sampled_from([100_000.0, 400_000.0])), "off_rate_iops": 10_000.0,
                    "mean_on_ms": 0.5, "mean_off_ms": 1.0}
    workload["read_fraction"] = draw(read_fractions)
    workload["block_size_kib"] = draw(st.sampled_from([4, 16, 128]))
    workload["access"] = draw(st.sampled_from(["random", "random", "sequential"]))
    return scenario_from_data({"topology": topo, "workload": workload, "run": small_run(draw(seeds))})


@st.composite
def other_scenarios(draw: st.DrawFn) -> Scenario:
    """SAN (FCP and NVMe/FC), eXFlash and z/VM EDEV scenarios built on the catalog defaults."""
    topo = draw(st.sampled_from([
        {"kind": "san", "protocol": "fcp", "luns": 4},
        {"kind": "san", "protocol": "nvme_fc", "host_adapter": "FC-HBA-32G", "storage_server": "FS9100"},
        {"kind": "exflash", "dimms": 4, "max_occupancy": False},
        {"kind": "exflash", "dimms": 2},
        {"kind": "zvm_edev", "base_devices": 2, "aliases": 3},
        {"kind": "zvm_edev", "base_devices": 1, "aliases": 0},
    ]))
    if draw(st.booleans()):
        workload = draw(closed_workloads(max_jobs=8, max_qd=8))
    else:
        workload = {"kind": "open", "rate_iops": draw(st.sampled_from([5_000.0, 30_000.0])), "read_fraction": draw(read_fractions)}
    return scenario_from_data({"topology": topo, "workload": workload, "run": small_run(draw(seeds))})


any_scenario = st.one_of(generic_scenarios(), direct_scenarios(), other_scenarios())


# -- checks ----------------------------------------------------------------------------------------

def check_conservation(r: Result) -> None:
    assert r.issued_ios == r.simulated_ios + r.in_flight_ios, (r.issued_ios, r.simulated_ios, r.in_flight_ios)
    assert r.in_flight_ios >= 0
    assert 0 < r.measured_ios <= r.simulated_ios
    wl = r.scenario.workload
    if wl.kind == "closed":
        # (the completion that stops the run is not reissued, so fewer may be out at the end)
        assert r.in_flight_ios <= wl.jobs * wl.queue_depth
    assert r.read_iops.value + r.write_iops.value == pytest.approx(r.iops.value, rel=1e-9)


def check_meters(r: Result) -> None:
    assert r.utilization.keys() == r.busy.keys()
    assert r.bottleneck == "none" or r.bottleneck in r.utilization
    for name, u in r.utilization.items():
        b = r.busy[name]
        assert 0.0 <= u <= 1.0, (name, u)
        assert 0.0 <= b <= 1.0, (name, b)
        assert u <= b + 1e-9, f"{name}: utilization {u} > busy {b}"


def check_little(r: Result) -> None:
    """L = X * R within 2%, or within the combined 95% intervals of the three estimates."""
    x, lat, big_l = r.iops, r.latency_mean_us, r.mean_outstanding_ios
    xr = x.value * lat.value * 1e-6
    gap = abs(big_l.value - xr)
    combined = big_l.half_width + xr * (x.rel_half_width + lat.rel_half_width)
    assert gap <= max(0.02 * xr, combined), (
        f"Little's law: L = {big_l.value:.4f} (±{big_l.half_width:.4f}) but X*R = {xr:.4f} "
        f"(X = {x.value:.1f} ±{x.half_width:.1f}, R = {lat.value:.3f} ±{lat.half_width:.3f} us)"
    )


# -- properties ------------------------------------------------------------------------------------

@pytest.mark.slow
@settings(SETTINGS, max_examples=40)
@given(generic_scenarios())
def test_little_law_generic(sc: Scenario) -> None:
    check_little(simulate(sc))


@SETTINGS
@given(direct_scenarios(kinds=("closed",)))
def test_little_law_direct_nvme_closed(sc: Scenario) -> None:
    check_little(simulate(sc))


@settings(SETTINGS, max_examples=40)
@given(generic_scenarios())
def test_conservation_generic(sc: Scenario) -> None:
    check_conservation(simulate(sc))


@pytest.mark.slow
@settings(SETTINGS, max_examples=15)
@given(direct_scenarios())
def test_conservation_direct_nvme(sc: Scenario) -> None:
    check_conservation(simulate(sc))


@SETTINGS
@given(any_scenario)
def test_meters_in_unit_interval(sc: Scenario) -> None:
    r = simulate(sc)
    check_meters(r)
    check_conservation(r)


@settings(SETTINGS, max_examples=40)
@given(generic_topologies(), closed_workloads(max_jobs=4, max_qd=8), seeds)
def test_closed_throughput_monotone_in_queue_depth_generic(topo: tuple[dict[str, Any], float], wl: dict[str, Any], seed: int) -> None:
    check_qd_monotone({"topology": topo[0], "workload": wl, "run": small_run(seed)})


@pytest.mark.slow
@SETTINGS
@given(direct_topologies(), closed_workloads(max_jobs=8, max_qd=16), st.sampled_from([4, 64]), seeds)
def test_closed_throughput_monotone_in_queue_depth_direct_nvme(topo: dict[str, Any], wl: dict[str, Any], kib: int, seed: int) -> None:
    wl = {**wl, "block_size_kib": kib}
    check_qd_monotone({"topology": topo, "workload": wl, "run": small_run(seed)})


def check_qd_monotone(data: dict[str, Any]) -> None:
    """Throughput at QD 2q is not below throughput at QD q (up to the 95% intervals)."""
    q = data["workload"]["queue_depth"]
    low = simulate(scenario_from_data(data))
    high = simulate(scenario_from_data(data, {"workload.queue_depth": 2 * q}))
    assert high.iops.ci95[1] >= low.iops.ci95[0], (
        f"throughput fell with queue depth: QD {q}: {low.iops.value:.0f} {low.iops.ci95}, "
        f"QD {2 * q}: {high.iops.value:.0f} {high.iops.ci95}"
    )


@settings(SETTINGS, max_examples=6)
@given(
    st.sampled_from([2, 3, 4]),
    st.sampled_from([1, 2]),
    st.sampled_from([4, 64]),
    seeds,
)
def test_raid1_writes_no_faster_than_raid0(drives: int, per_drive: int, kib: int, seed: int) -> None:
    """Write-only closed load that saturates the drives: mirroring writes every copy, so RAID-1 write IOPS <= RAID-0."""
    spec = lookup("drives", DRIVE)
    data = {
        "topology": {"kind": "direct_nvme", "drive": DRIVE, "drives": drives, "adapter": ADAPTER, "layout": "raid0",
                     "namespaces": {"per_drive": per_drive}},
        "workload": {"kind": "closed", "jobs": 16, "queue_depth": 16, "read_fraction": 0.0, "block_size_kib": kib},
        # the drives' write caches must fill before the measurement: that is the saturated state
        "run": small_run(seed, warmup_ios=10_000, max_ios=20_000),
    }
    raid0 = simulate(scenario_from_data(data))
    raid1 = simulate(scenario_from_data(data, {"topology.layout": "raid1"}))
    assert raid0.read_iops.value == 0 and raid1.read_iops.value == 0
    assert raid1.write_iops.value <= raid0.write_iops.value, (raid1.write_iops, raid0.write_iops)
    # every member of a RAID-1 holds a copy: each drive takes per_drive writes per logical write
    sustained = min(spec.write_kiops * 1e3, spec.write_bw_gbs * 1e9 / (kib * 1024))
    assert raid1.write_iops.value <= sustained / per_drive * 1.03
