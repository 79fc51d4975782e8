"""The analytic fast path (sim/analytic) against queueing theory and against the DES.

* Theory, exactly: M/M/1, M/M/c (Erlang C), M/D/1 and M/G/1 (Pollaczek-Khinchine), a
  Jackson tandem, and a closed network of single-server exponential stations with a think
  time against exact MVA (the fast path's arrival-theorem skeleton is exact there).
* Properties: bounds (Xmax = 1 / Dmax, Rmin = sum of demands, N* = (Rmin + Z) / Dmax),
  Little's law for closed workloads, throughput never above Xmax, latency never below Rmin,
  monotone in the load, unstable open workloads reported as such, component names equal
  to the DES's; shared NAND dies cap a read/write mix at the harmonic mix of the read and
  write limits, and sequential writes program at the write bandwidth.
* Against the DES: every example, an eXFlash OLTP 67/33 mix and z/VM paging-style 28 KiB reads
  at half their bound, and a hypothesis-generated set of scenarios of every
  attachment kind (bench/scenario_space.py) with small run budgets: where the DES bottleneck
  is below 80% utilization, throughput and mean latency agree within 5% plus the DES's own
  95% half-width. The claim's domain leaves out what the fast path only approximates
  (``bench.scenario_space.outside_claim``: bursty arrivals, I/Os cut into more pieces than
  the volume has members, the 2-slot eXFlash write cache under heavy or sequential writes);
  bench/analytic_accuracy.py reports those too.
"""

from __future__ import annotations

import math
import re
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import HealthCheck, Phase, assume, given, settings
from hypothesis import strategies as st

from bench.scenario_space import draw_scenario, outside_claim
from models import Result, Scenario, load_scenario, scenario_from_data, with_overrides
from models.topology import DirectNvme
from sim import simulate
from sim.analytic import FastResult, evaluate
from tests.conftest import EXAMPLES, steady_examples
from tests.theory import md1_response, mg1_response, mm1_response, mmc_response, mva

CLAIM_UTILIZATION = 0.8
CLAIM_ERROR = 0.05


def generic(stations: list[dict[str, Any]], workload: dict[str, Any], host: dict[str, Any] | None = None) -> Scenario:
    topo: dict[str, Any] = {"kind": "generic", "stations": stations}
    if host:
        topo["host"] = host
    return scenario_from_data({"topology": topo, "workload": {"read_fraction": 1.0, **workload}})


# -- theory ---------------------------------------------------------------------------------------


@pytest.mark.parametrize("rho", [0.1, 0.5, 0.9, 0.99])
def test_mm1_is_exact(rho: float) -> None:
    service = 10.0
    r = evaluate(generic([{"name": "disk", "service_time_us": service}], {"kind": "open", "rate_iops": rho / service * 1e6}))
    assert r.latency_mean_us == pytest.approx(mm1_response(rho / service, service), rel=1e-9)
    assert r.iops == pytest.approx(rho / service * 1e6)
    assert r.utilization == {"disk": pytest.approx(rho)}
    assert r.bottleneck == "disk" and r.stable


@pytest.mark.parametrize(("servers", "rho"), [(2, 0.5), (8, 0.9), (64, 0.95), (200, 0.97)])
def test_mmc_is_erlang_c(servers: int, rho: float) -> None:
    service = 80.0
    lam = rho * servers / service
    r = evaluate(generic([{"name": "units", "servers": servers, "service_time_us": service}], {"kind": "open", "rate_iops": lam * 1e6}))
    assert r.latency_mean_us == pytest.approx(mmc_response(lam, service, servers), rel=1e-9)
    assert r.utilization["units"] == pytest.approx(rho)


@pytest.mark.parametrize("rho", [0.3, 0.8])
def test_md1_and_lognormal_mg1_are_pollaczek_khinchine(rho: float) -> None:
    service = 25.0
    lam = rho / service
    det = evaluate(generic([{"service_time_us": service, "distribution": "deterministic"}], {"kind": "open", "rate_iops": lam * 1e6}))
    assert det.latency_mean_us == pytest.approx(md1_response(lam, service), rel=1e-9)
    logn = evaluate(generic([{"service_time_us": service, "distribution": "lognormal", "cv": 1.7}],
                            {"kind": "open", "rate_iops": lam * 1e6}))
    assert logn.latency_mean_us == pytest.approx(mg1_response(lam, service, 1.7), rel=1e-9)


def test_jackson_tandem_is_the_sum_of_mm1_queues() -> None:
    lam = 0.02
    services = [10.0, 30.0, 5.0]
    r = evaluate(generic([{"name": f"s{i}", "service_time_us": s} for i, s in enumerate(services)], {"kind": "open", "rate_iops": lam * 1e6}))
    assert r.latency_mean_us == pytest.approx(sum(mm1_response(lam, s) for s in services), rel=1e-9)
    assert r.bottleneck == "s1"
    assert r.bounds.x_max_iops == pytest.approx(1e6 / 30.0)
    assert r.bounds.r_min_us == pytest.approx(45.0)


@pytest.mark.parametrize("population", [1, 2, 3, 5, 8, 13, 20])
def test_closed_network_matches_exact_mva(population: int) -> None:
    """Three exponential single-server stations and an exponential think time: exact MVA near the knee.

    N* = (45 + 50) / 30 = 3.2; within N*/4 .. 4 N* the fast path solves the network exactly
    (its arrival-theorem factors come from exact MVA), outside it uses Schweitzer's
    approximation, which is within 2% there.
    """
    demands = [10.0, 30.0, 5.0]
    think = 50.0
    sc = generic([{"name": f"s{i}", "service_time_us": d} for i, d in enumerate(demands)],
                 {"kind": "closed", "jobs": population, "think_time_us": think, "think_distribution": "exponential"})
    r = evaluate(sc)
    exact = mva(demands, population, think)
    knee = (sum(demands) + think) / max(demands)
    tol = 1e-4 if 0.25 * knee <= population <= 4 * knee else 0.02  # 1e-4: the root finder stops at 1e-5 N
    assert r.iops * 1e-6 == pytest.approx(exact.throughput, rel=tol)
    assert r.latency_mean_us == pytest.approx(exact.response, rel=tol)
    for name, u in zip(("s0", "s1", "s2"), exact.utilizations(demands), strict=True):
        assert r.utilization[name] == pytest.approx(u, rel=tol)


# -- properties ----------------------------------------------------------------------------------


def _check_bounds_and_little(r: FastResult, sc: Scenario) -> None:
    if sc.consolidated:
        _check_each_workload(r, sc)
        return
    wl = sc.workload
    assert r.iops <= r.bounds.x_max_iops * (1 + 1e-9)
    assert r.latency_mean_us >= r.bounds.r_min_us * (1 - 1e-9)
    assert all(0.0 <= u <= 1.0 for u in r.utilization.values())
    assert r.bottleneck in r.utilization or r.bottleneck == "edev.subchannels"
    if wl.kind == "closed":
        n = wl.jobs * wl.queue_depth
        assert r.iops * 1e-6 * (r.latency_mean_us + wl.think_time_us) == pytest.approx(n, rel=1e-3)  # Little
        assert r.bounds.n_star == pytest.approx((r.bounds.r_min_us + wl.think_time_us) * r.bounds.x_max_iops * 1e-6)
    read, write = r.read_iops, r.write_iops
    assert read + write == pytest.approx(r.iops)
    assert r.latency_mean_us == pytest.approx((read * r.read_latency_mean_us + write * r.write_latency_mean_us) / r.iops)


def _check_each_workload(r: FastResult, sc: Scenario) -> None:
    """Several workloads: each closed one obeys Little's law with its own population, the totals are the
    sums of the workloads' (conservation), every utilization is a fraction."""
    assert r.workloads is not None and list(r.workloads) == [name for name, _ in sc.named_workloads()]
    assert all(0.0 <= u <= 1.0 for u in r.utilization.values())
    assert r.iops == pytest.approx(sum(w.iops for w in r.workloads.values()))
    for name, wl in sc.named_workloads():
        w = r.workloads[name]
        if wl.kind == "closed":
            n = wl.jobs * wl.queue_depth
            assert w.iops * 1e-6 * (w.latency_mean_us + wl.think_time_us + wl.app_us_per_io) == pytest.approx(n, rel=1e-3)


@pytest.mark.parametrize("path", steady_examples(), ids=lambda p: p.stem)
def test_examples_obey_bounds_and_littles_law(path: Any) -> None:
    sc = load_scenario(path)
    _check_bounds_and_little(evaluate(sc), sc)


def test_more_load_means_more_latency_and_never_past_xmax() -> None:
    sc = load_scenario(EXAMPLES / "s1_linuxone_nvme_raid10.yaml", {"workload.think_time_us": 0})  # back to back: the array's load
    previous_x, previous_r = 0.0, 0.0
    for jobs in (1, 4, 16, 64, 256, 1024):
        r = evaluate(with_overrides(sc, {"workload.jobs": jobs}))
        assert r.iops >= previous_x * (1 - 1e-6) and r.latency_mean_us >= previous_r * (1 - 1e-6)
        assert r.iops <= r.bounds.x_max_iops * (1 + 1e-9)
        previous_x, previous_r = r.iops, r.latency_mean_us
    assert previous_x == pytest.approx(r.bounds.x_max_iops, rel=0.02)  # deep past the knee: at the bound


def test_open_rate_above_xmax_is_unstable() -> None:
    sc = load_scenario(EXAMPLES / "mm8.yaml")
    r = evaluate(with_overrides(sc, {"workload.rate_iops": 150_000}))
    assert not r.stable and math.isinf(r.latency_mean_us)
    assert r.iops == pytest.approx(r.bounds.x_max_iops)
    assert r.summary()["latency_mean_us"] is None


def test_cached_networks_give_the_same_answer() -> None:
    """A configuration evaluated again (from the compiled-network cache) at another load solves afresh."""
    from sim.analytic import clear_cache

    sc = load_scenario(EXAMPLES / "s5_fs9100_nvmefc.yaml")
    other = with_overrides(sc, {"workload.jobs": 16})
    first = evaluate(sc)
    evaluate(other)
    again = evaluate(sc)
    clear_cache()
    cold = evaluate(sc)
    assert first == again == cold
    assert evaluate(other).iops < first.iops


def test_answers_do_not_depend_on_what_was_evaluated_before() -> None:
    """Tables shared between scenarios (parameters derived from the catalog, volume-layer plans of a
    layout and mix, names) carry nothing of one scenario into another's answer."""
    from bench.scenario_space import random_scenarios
    from sim.analytic import clear_cache

    scenarios = [load_scenario(p) for p in steady_examples()] + random_scenarios(11, 20)
    first = [evaluate(sc) for sc in scenarios]
    clear_cache(everything=True)
    again = [evaluate(sc) for sc in reversed(scenarios)][::-1]
    assert again == first


@pytest.mark.parametrize("mechanism", ["fitted overlay", "user catalog"])
def test_a_changed_catalog_reaches_the_fast_path(mechanism: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A drive's write latency and a host's CPU per I/O doubled through $FLASHPLAN_FITTED or
    $FLASHPLAN_CATALOG_DIR change the next answer (nothing derived from the old catalog is reused) to
    what the same drive and CPU cost given in the scenario give; the default answer comes back after."""
    from models.catalog import fitted_path, load_catalog, read_fitted

    sc = load_scenario(EXAMPLES / "s2_ibmi_8x4_mirrored.yaml")  # write-only, ES5F drives, a Power10 host
    topo = sc.topology
    assert isinstance(topo, DirectNvme) and topo.host.model and topo.host.stack
    drive, host, stack = str(topo.drive), topo.host.model, topo.host.stack
    catalog = load_catalog()
    drive_entry = catalog.drives[drive].model_dump(mode="json", exclude_none=True)
    host_entry = catalog.hosts[host].model_dump(mode="json", exclude_none=True)
    slower = {**drive_entry, "write_latency_us": 2 * drive_entry["write_latency_us"]}
    costlier = {**host_entry, "cpu_us_per_io": {**host_entry["cpu_us_per_io"], stack: 2 * host_entry["cpu_us_per_io"][stack]}}
    before = evaluate(sc)
    inline = evaluate(with_overrides(sc, {"topology.drive": slower, "topology.host.cpu_us_per_io": costlier["cpu_us_per_io"][stack]}))
    if mechanism == "fitted overlay":
        current = fitted_path()  # keep whatever fit is in use, with the two changes on top
        values = dict(read_fitted(current).get("values", {})) if current else {}
        values[f"drives/{drive}/write_latency_us"] = slower["write_latency_us"]
        values[f"hosts/{host}/cpu_us_per_io/{stack}"] = costlier["cpu_us_per_io"][stack]
        fitted = tmp_path / "fitted.yaml"
        fitted.write_text(yaml.safe_dump({"version": 1, "values": values}))
        monkeypatch.setenv("FLASHPLAN_FITTED", str(fitted))
    else:
        (tmp_path / "drives.yaml").write_text(yaml.safe_dump({drive: slower}))
        (tmp_path / "hosts.yaml").write_text(yaml.safe_dump({host: costlier}))
        monkeypatch.setenv("FLASHPLAN_CATALOG_DIR", str(tmp_path))
    changed = evaluate(sc)
    assert changed.bounds.r_min_us > before.bounds.r_min_us and changed.cpu_us_per_io == 2 * before.cpu_us_per_io
    assert changed == inline
    monkeypatch.undo()
    assert evaluate(sc) == before


# -- against the DES --------------------------------------------------------------------------------

DES_RUN = {"run.max_ios": 60_000, "run.warmup_ios": 4_000, "run.min_batches": 10, "run.target_rel_ci": 0.02,
           "run.max_wall_s": 600}


def _agree(fast: FastResult, des: Result, tolerance: float = CLAIM_ERROR) -> list[str]:
    """Problems, if the fast path is off by more than ``tolerance`` + the DES half-width."""
    problems = []
    for key, value in (("iops", fast.iops), ("latency_mean_us", fast.latency_mean_us)):
        m = getattr(des, key)
        err = value / m.value - 1
        if not abs(err) <= tolerance + m.rel_half_width:
            problems.append(f"{key}: fast {value:,.1f} vs DES {m.value:,.1f} (±{m.rel_half_width:.1%}), error {err:+.1%}")
    return problems


# The RAID-5 rebuild example: the DES programs every 4 KiB stripe write the resync sends to the replacement drive
# (drive0.dies 55.7% busy at 500 MB/s), while the fast path's table shows drive0.dies at 0.0% although
# sim.analytic.paths.rebuild_background charges those writes to it: IOPS and mean agree, the bottleneck does not.
_REBUILD_DIES = pytest.mark.xfail(strict=True, reason="fast path: a rebuild's writes missing from the replacement's dies")


def _example_params() -> list[Any]:
    return [pytest.param(p, marks=_REBUILD_DIES) if p.stem == "faults_linuxone_raid5_rebuild" else p for p in steady_examples()]


@pytest.mark.parametrize("path", _example_params(), ids=lambda p: p.stem)
def test_examples_agree_with_the_des(path: Any) -> None:
    """Every example, saturated or not, within 5% (the saturated ones are at their bound in both)."""
    sc = with_overrides(load_scenario(path), {**DES_RUN, "run.max_ios": 200_000})
    fast, des = evaluate(sc), simulate(sc)
    assert not _agree(fast, des), _agree(fast, des)
    # the same component (instances of a symmetric component differ only by the DES's sampling noise:
    # 32 LUNs that a RAID-0 volume loads alike are 52-63% busy in a short run), or one as busy
    assert _component(fast.bottleneck) == _component(des.bottleneck) or des.utilization.get(fast.bottleneck, 0) >= 0.95 * \
        des.utilization[des.bottleneck], (fast.bottleneck, des.bottleneck)


def _component(name: str) -> str:
    """A meter name without its instance numbers: lun26.queue -> lun#.queue, dimm3.nand_dies -> dimm#.nand_dies."""
    return re.sub(r"\d+", "#", name)


def _at_half_the_bound(sc: Scenario, run: dict[str, Any]) -> Scenario:
    """``sc`` as an open workload at half its capacity bound Xmax (a moderate load), with ``run`` budgets."""
    x_max = evaluate(sc).bounds.x_max_iops
    data = sc.model_dump(mode="json", exclude_none=True)
    wl = data["workload"]
    data["workload"] = {"kind": "open", "rate_iops": round(0.5 * x_max), "read_fraction": wl["read_fraction"],
                        "block_size_kib": wl["block_size_kib"], "access": wl["access"]}
    return with_overrides(scenario_from_data(data), run)


def test_shared_nand_dies_give_the_harmonic_mix_of_read_and_write_limits() -> None:
    """eXFlash reads and programs take turns on the same dies (DeviceBehaviour.shared_dies): an OLTP
    67/33 mix is capped at 1 / (0.67 / read IOPS + 0.33 / write IOPS) per DIMM (seed 002 Table 4),
    not at the sum of the limits: the dies are busy in that proportion (up to the rounding of the die count). The bound
    is the write cache's, whose 2 slots fill about 8% below it in the fast path (a destage's wait for a die, a known gap:
    tests/analytic/test_capacity_bound.py; the DES's saturated loop runs at the harmonic rate)."""
    from models.catalog import load_catalog

    sc = with_overrides(load_scenario(EXAMPLES / "s3_exflash_4dimms.yaml"), {"workload.read_fraction": 0.67})
    spec = load_catalog().dimms["eXFlash-400GB"]
    harmonic = 1e3 / (0.67 / spec.read_kiops + 0.33 / spec.write_kiops)
    half = evaluate(with_overrides(sc, {"workload": {"kind": "open", "rate_iops": 2 * harmonic, "read_fraction": 0.67,
                                                      "block_size_kib": 4}}))
    assert half.utilization["dimm0.nand_dies"] == pytest.approx(0.5, rel=0.01)
    assert "dimm0.read_units" not in half.utilization
    fast = evaluate(sc)
    assert fast.bounds.bottleneck == "dimm0.write_cache"
    assert 0.9 * 4 * harmonic < fast.bounds.x_max_iops < 4 * harmonic


def test_sequential_writes_program_at_the_write_bandwidth() -> None:
    """``sustained_write_kiops``: random 4 KiB writes keep a drive's program units (its dies under the default
    device model; an eXFlash DIMM's shared dies) busy at the datasheet's random-write IOPS, a sequential stream only at the write
    bandwidth in 4 KiB programs (no garbage-collection copies): the same 20K writes/s load them less."""
    from models.catalog import load_catalog

    catalog = load_catalog()
    rate = 20_000.0
    workload = {"kind": "open", "rate_iops": rate, "read_fraction": 0.0, "block_size_kib": 4}
    drive = {"kind": "direct_nvme", "host": {"stack": "none"}, "drive": "ES5F", "drives": 1, "adapter": "EJ1Y", "layout": "jbod"}
    devices = (
        ({"kind": "exflash", "host": {"model": "x3850-X6"}, "dimm": "eXFlash-400GB", "dimms": 1},
         catalog.dimms["eXFlash-400GB"], "auto", "dimm0.nand_dies"),
        (drive, catalog.drives["ES5F"], "pooled", "drive0.program_units"),
        (drive, catalog.drives["ES5F"], "auto", "drive0.dies"),  # the default: the dies carry the programs
    )
    for topology, spec, device_model, programs in devices:
        sc = scenario_from_data({"topology": topology, "workload": workload, "device_model": device_model})
        for access, sustained in (("random", spec.write_kiops * 1e3), ("sequential", spec.write_bw_gbs * 1e9 / 4096)):
            busy = evaluate(with_overrides(sc, {"workload.access": access})).utilization
            assert busy[programs] == pytest.approx(rate / sustained, rel=0.02), (programs, access)


def test_exflash_oltp_mix_at_moderate_load_agrees_with_the_des() -> None:
    """4 eXFlash DIMMs, OLTP 67/33 4K random at half the shared-die bound: reads wait behind programs."""
    sc = with_overrides(load_scenario(EXAMPLES / "s3_exflash_4dimms.yaml"), {"workload.read_fraction": 0.67})
    sc = _at_half_the_bound(sc, {**DES_RUN, "run.max_ios": 80_000})
    fast, des = evaluate(sc), simulate(sc)
    assert not _agree(fast, des), _agree(fast, des)
    assert _component(des.bottleneck) == _component(fast.bottleneck) == "dimm#.nand_dies"
    assert fast.utilization["dimm0.nand_dies"] == pytest.approx(des.utilization["dimm0.nand_dies"], abs=0.03)


def test_zvm_paging_reads_at_moderate_load_agree_with_the_des() -> None:
    """z/VM paging-style 28 KiB reads: seven 4 KiB device commands one after another on a held
    subchannel (sim/route/steps.py ``_zvm``), at half the subchannels' bound."""
    sc = with_overrides(load_scenario(EXAMPLES / "s4_zvm_edev_aliases.yaml"), {"workload.read_fraction": 1.0, "workload.block_size_kib": 28})
    sc = _at_half_the_bound(sc, {**DES_RUN, "run.max_ios": 20_000, "run.warmup_ios": 2_000})
    fast, des = evaluate(sc), simulate(sc)
    assert not _agree(fast, des), _agree(fast, des)
    assert des.bottleneck == fast.bottleneck == "edev.subchannels"
    # seven commands: the zero-load latency is well above one page's (which the DES would give without pages)
    one_page = evaluate(with_overrides(sc, {"workload.block_size_kib": 4})).bounds.r_min_us
    assert fast.bounds.r_min_us > 2 * one_page


def test_mirrored_namespaces_with_a_queue_depth_limit_agree_with_the_des() -> None:
    """IBM i mirroring over namespaces of 8 slots near 80% of the slots: mirror reads take the copy
    with fewer I/Os outstanding, so each pair's slots act as one pool (``least_loaded_view``);
    the even split this replaced overstated the latency by 28% (bench/results/analytic_accuracy.md #25)."""
    sc = scenario_from_data({
        "topology": {"kind": "direct_nvme", "host": {"model": "LinuxONE-Emperor4-LPAR30"}, "drive": "ES5H", "drives": 4,
                     "adapter": "EJ1Y", "adapters": 2, "namespaces": {"per_drive": 2, "queue_depth": 8}, "layout": "ibmi_mirror"},
        "workload": {"kind": "open", "rate_iops": 450_000, "read_fraction": 0.5, "block_size_kib": 4, "access": "random"},
    })
    sc = with_overrides(sc, DES_RUN)
    fast, des = evaluate(sc), simulate(sc)
    assert des.utilization["drive0.ns0"] > 0.7  # the slots are what queues
    assert not _agree(fast, des), _agree(fast, des)
    for op in ("read", "write"):  # each op on its own, not only the mean
        key = f"{op}_latency_mean_us"
        assert getattr(fast, key) == pytest.approx(getattr(des, key).value, rel=0.15), op


def _in_claim_domain(sc: Scenario) -> bool:
    """The scenarios the 5% claim covers (bench.scenario_space.outside_claim says why not)."""
    return outside_claim(sc) is None


# no shrinking: every example runs the DES; a failure prints its scenario in full instead
@pytest.mark.slow
@settings(max_examples=40, deadline=None, derandomize=True, phases=[Phase.explicit, Phase.generate],
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])
@given(data=st.data())
def test_random_scenarios_agree_with_the_des_below_80_percent(data: st.DataObject) -> None:
    sc = draw_scenario(lambda xs: data.draw(st.sampled_from(list(xs))), lambda lo, hi: data.draw(st.floats(lo, hi)),
                       max_utilization=0.7)
    sc = with_overrides(sc, DES_RUN)
    assume(_in_claim_domain(sc))
    fast = evaluate(sc)
    des = simulate(sc)
    assume(des.utilization[des.bottleneck] < CLAIM_UTILIZATION)
    problems = _agree(fast, des)
    assert not problems, f"{sc.name}: {problems}\n{sc.model_dump(mode='json', exclude_none=True)}"


def test_the_fast_path_says_when_a_sequential_stream_dwells_on_a_parity_stripe_unit() -> None:
    """A sequential stream on RAID-5 stays on one data member for chunk / size I/Os; the fast path spreads it over
    every member, so it names the gap in its notes (the DES is then the reference; the random-access case is not noted)."""
    data = {"name": "RAID-5 stream", "topology": {
        "kind": "direct_nvme", "host": {"model": "Power10-S1024-LPAR32"}, "drive": "ES4C", "drives": 2, "adapter": "EJ1Y",
        "adapters": 1, "namespaces": {"per_drive": 2, "queue_depth": 1}, "layout": "raid5", "chunk_kib": 256},
        "workload": {"kind": "open", "rate_iops": 3000, "read_fraction": 0.7, "block_size_kib": 8, "access": "sequential"}}
    sequential = evaluate(scenario_from_data(data))
    assert any("stays on one data member" in note and "32 I/Os" in note for note in sequential.notes), sequential.notes
    data["workload"] = {**data["workload"], "access": "random"}
    assert not evaluate(scenario_from_data(data)).notes
