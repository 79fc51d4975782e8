"""The storage mechanisms of DESIGN.md section 4 behave as the evidence says they do.

Each test builds a small scenario through the public API and checks a direction or a
limit that follows from the mechanism (not a calibrated number: that is the calibration's job).
"""

from __future__ import annotations

from typing import Any

import pytest

from models import Result, scenario_from_data
from sim import simulate
from tests.conftest import fast

RUN = {"max_ios": 40_000, "warmup_ios": 3_000, "min_batches": 10, "target_rel_ci": 0.02, "seed": 3}


def run(topology: dict[str, Any], workload: dict[str, Any], device_model: str = "auto", **overrides: Any) -> Result:
    data = {"topology": topology, "workload": workload, "run": dict(RUN), "device_model": device_model}
    return simulate(scenario_from_data(data, overrides))


MODELS = ("pooled", "auto")
"""The flash device models a drive mechanism is checked under: pooled units, and the default (a drive's addressed
dies, sim/route/flash.py ``uses_die_layout``)."""


def direct(**kw: Any) -> dict[str, Any]:
    topo = {"kind": "direct_nvme", "drive": "ES5F", "drives": 4, "adapter": "EJ1Y", "layout": "raid10"}
    topo.update(kw)
    return topo


def closed(jobs: int, qd: int = 1, read_fraction: float = 1.0, kib: float = 4, **kw: Any) -> dict[str, Any]:
    return {"kind": "closed", "jobs": jobs, "queue_depth": qd, "read_fraction": read_fraction, "block_size_kib": kib, **kw}


@pytest.mark.parametrize("model", MODELS)
def test_drive_qd1_latency_and_iops_ceiling_follow_the_datasheet(model: str) -> None:
    """QD1 sees the datasheet latency, deep queues the datasheet IOPS: pooled, P_r = read IOPS x QD1 latency read
    units; under dies, the controller's command-rate ceiling (the datasheet IOPS) in front of the dies."""
    topo = direct(drives=1, layout="jbod", namespaces={"per_drive": 1, "queue_depth": 4096}, host={"stack": "none"})
    qd1 = run(topo, closed(1), model)
    assert qd1.read_latency_mean_us.value == pytest.approx(80, rel=0.05)  # ES5F QD1 read latency, seed 001
    deep = run(topo, closed(1, qd=1024), model)
    assert deep.iops.value == pytest.approx(1_600_000, rel=0.05)  # ES5F read IOPS, seed 001
    assert deep.bottleneck == {"pooled": "drive0.read_units", "auto": "drive0.controller"}[model]


def test_writes_are_acknowledged_from_the_drive_cache() -> None:
    topo = direct(drives=1, layout="jbod", host={"stack": "none"})
    writes = run(topo, closed(1, read_fraction=0.0))
    assert writes.write_latency_mean_us.value == pytest.approx(15, rel=0.1)  # ES5F write latency, seed 001
    reads = run(topo, closed(1))
    assert writes.latency_mean_us.value < reads.latency_mean_us.value / 3


@pytest.mark.parametrize("model", MODELS)
def test_sustained_writes_are_limited_by_nand_programs(model: str) -> None:
    topo = direct(drives=1, layout="jbod", host={"stack": "none"}, namespaces={"per_drive": 1, "queue_depth": 4096})
    res = run(topo, closed(1, qd=512, read_fraction=0.0), model)
    assert res.iops.value == pytest.approx(280_000, rel=0.05)  # ES5F write IOPS, seed 001
    assert res.utilization[{"pooled": "drive0.program_units", "auto": "drive0.dies"}[model]] > 0.97


@pytest.mark.slow
def test_bandwidth_cap_for_large_reads() -> None:
    topo = direct(drives=1, layout="jbod", host={"stack": "none"}, namespaces={"per_drive": 1, "queue_depth": 256})
    res = run(topo, closed(1, qd=64, kib=1024, access="sequential"))
    assert res.mbps.value == pytest.approx(7_000, rel=0.05)  # ES5F read bandwidth 7.0 GB/s, seed 001
    assert res.bottleneck == "drive0.read_bw"


@pytest.mark.slow
def test_jbof_uplink_is_shared_by_its_drives() -> None:
    """Eight 7 GB/s drives behind one Gen4 x16 EJ1Y (31.5 GB/s) are uplink-bound (seed 001 Power10 slides)."""
    topo = direct(drives=8, layout="raid0", host={"stack": "none"}, namespaces={"per_drive": 1, "queue_depth": 256})
    res = run(topo, closed(8, qd=32, kib=1024, access="sequential"))
    assert res.bottleneck == "adapter0.uplink.to_host"
    assert res.mbps.value == pytest.approx(16 * 1.969 * 1000 * 1.048576, rel=0.05)  # MiB transfers, MB/s reported
    two = run({**topo, "adapters": 2}, closed(8, qd=32, kib=1024, access="sequential"))
    assert two.mbps.value > 1.6 * res.mbps.value


@pytest.mark.slow
def test_mirrored_writes_go_to_both_copies() -> None:
    topo = direct(drives=4, host={"stack": "none"}, namespaces={"per_drive": 1, "queue_depth": 4096})
    r0 = run({**topo, "layout": "raid0"}, closed(4, qd=256, read_fraction=0.0))
    r10 = run(topo, closed(4, qd=256, read_fraction=0.0))
    assert r10.iops.value == pytest.approx(r0.iops.value / 2, rel=0.06)
    reads0 = run({**topo, "layout": "raid0"}, closed(4, qd=256))
    reads10 = run(topo, closed(4, qd=256))
    assert reads10.iops.value == pytest.approx(reads0.iops.value, rel=0.06)


@pytest.mark.slow
@pytest.mark.parametrize("model", MODELS)
def test_raid5_small_writes_pay_read_modify_write(model: str) -> None:
    from models.catalog import lookup
    from sim.route.flash import die_layout, flash_parameters, program_operations

    topo = direct(drives=4, host={"stack": "none"}, namespaces={"per_drive": 1, "queue_depth": 4096})
    r5 = run({**topo, "layout": "raid5"}, closed(1, read_fraction=0.0), model)
    r10 = run(topo, closed(1, read_fraction=0.0), model)
    # at light load a RAID-5 small write first reads old data and parity (in parallel, 80 us each)
    # before the cached writes; the slower of two variable reads takes a little longer than one
    assert 15 <= r10.write_latency_mean_us.value <= 15 * 1.3  # the slower of the two mirror copies
    assert 80 <= r5.write_latency_mean_us.value - r10.write_latency_mean_us.value <= 80 * 1.3
    # at saturation RAID-6 programs three pages per small write, RAID-5 and RAID-10 two; pooled, the old-data and
    # parity reads take read units of their own, under dies they take die time too: each read tR on one of N dies
    # beside the write's N / (write IOPS) of program work
    sat = closed(4, qd=256, read_fraction=0.0)
    five, six, ten = (run({**topo, "layout": lay}, sat, model).iops.value for lay in ("raid5", "raid6", "raid10"))
    assert six == pytest.approx(five * 2 / 3, rel=0.06)
    spec = lookup("drives", "ES5F")
    dies = die_layout(spec)
    ops = program_operations(flash_parameters(spec, "random"), dies)
    program = ops.per_write * ops.operation_us / dies.dies  # die time per write, us: 1 / 280K IOPS
    read = dies.die_read_us / dies.dies if model == "auto" else 0.0
    assert five == pytest.approx(ten * program / (program + read), rel=0.06)


@pytest.mark.slow
def test_more_namespaces_lower_the_busy_of_each_disk_arm() -> None:
    """IBM i: one namespace = one disk arm with its own queue; more arms share the same load (seed 001)."""
    base = direct(drives=2, layout="ibmi_mirror", host={"model": "Power10-S1024-LPAR32", "stack": "ibmi_nvme"})
    busy = []
    for ns in (1, 4, 16):
        res = run({**base, "namespaces": {"per_drive": ns, "queue_depth": 1}}, closed(32, read_fraction=0.0))
        arms = [v for k, v in res.busy.items() if ".ns" in k]
        busy.append(max(arms))
    assert busy[0] > busy[1] > busy[2]


@pytest.mark.slow
def test_zvm_base_runs_one_io_and_aliases_add_paths() -> None:
    """A base EDEV runs one I/O at a time; each HyperPAV alias adds a path until the drive saturates (seed 003)."""
    topo = {"kind": "zvm_edev", "host": {"model": "z14-M05-LPAR4"}, "drive": "P4510-4TB", "base_devices": 1}
    iops = []
    for aliases in (0, 1, 3, 7):
        res = run({**topo, "aliases": aliases}, closed(20, read_fraction=1.0))
        assert res.mean_outstanding_ios.value == pytest.approx(20, rel=0.01)
        assert res.utilization["edev.subchannels"] > 0.95
        iops.append(res.iops.value)
    assert iops[0] * 1.8 < iops[1] < iops[2] < iops[3]
    no_alias = run({**topo, "aliases": 0}, closed(20, read_fraction=1.0))
    assert no_alias.bottleneck == "edev.subchannels"
    # CP CPU per I/O = per-SSCH path length + per-KiB page handling (seed 003 Tables 1 and 3)
    from models.topology import HostConfig
    from sim.route.host import resolve_host

    host = resolve_host(HostConfig(model="z14-M05-LPAR4"), "zvm_cp")
    assert host.cpu_us_per_kib > 0
    expected = host.cpu_us_per_io + host.cpu_us_per_kib * 4  # 4 KiB per I/O
    assert no_alias.cpu_us_per_io.value == pytest.approx(expected, rel=0.01)


def test_think_time_lets_the_write_cache_drain() -> None:
    """eXFlash WriteNow: with one cache slot, back-to-back writes wait for the previous destage;
    writes separated by more think time than a destage takes find the cache empty (seed 002, Figure 11)."""
    dimm = {"kind": "exflash", "host": {"model": "x3850-X6"}, "dimm": {
        "description": "test DIMM", "interface": "memory_channel", "pcie_generation": None, "pcie_lanes": None,
        "memory_channel_gbs": 12.8, "capacity_tb": 0.4, "read_bw_gbs": 0.9, "write_bw_gbs": 0.4, "read_kiops": 142,
        "write_kiops": 44, "read_latency_us": 119, "write_latency_us": 18.8,
        "behaviour": {"write_cache_slots": 1, "write_ack_us": 5.35, "program_time_us": 22, "shared_dies": True}}}
    busy = run(dimm, closed(1, read_fraction=0.0))
    paused = run(dimm, closed(1, read_fraction=0.0, think_time_us=30))
    assert paused.write_latency_mean_us.value < 0.6 * busy.write_latency_mean_us.value
    assert paused.iops.value < busy.iops.value


def test_san_cache_hits_are_faster_than_backend_reads() -> None:
    topo = {"kind": "san", "host": {"model": "LinuxONE-Emperor4-LPAR30"}, "luns": 4, "storage_server": "DS8950F"}
    hits = run({**topo, "cache": {"read_hit_ratio": 1.0}}, closed(8))
    misses = run({**topo, "cache": {"read_hit_ratio": 0.0}}, closed(8))
    assert hits.latency_mean_us.value < misses.latency_mean_us.value
    assert misses.utilization["server.backend"] > 0 and hits.utilization["server.backend"] == 0


def test_write_back_cache_absorbs_a_burst_that_write_through_cannot() -> None:
    """Seed 000: the storage server's cache buffers BDI write bursts; without write-back the burst waits on destage."""
    topo = {"kind": "san", "host": {"model": "LinuxONE-Emperor4-LPAR30"}, "luns": 4, "storage_server": "DS8950F"}
    burst = {"kind": "bursty", "on_rate_iops": 60_000, "off_rate_iops": 2_000, "mean_on_ms": 5, "mean_off_ms": 45,
             "read_fraction": 0.0, "block_size_kib": 256}
    wb = run({**topo, "cache": {"write_back": True}}, burst)
    wt = run({**topo, "cache": {"write_back": False}}, burst)
    assert wb.write_latency_mean_us.value < wt.write_latency_mean_us.value


def test_host_cpu_limits_iops_when_the_stack_is_expensive() -> None:
    topo = {"kind": "generic", "host": {"cores": 2, "cpu_us_per_io": 20}, "stations": [{"servers": 64, "service_time_us": 50}]}
    res = run(topo, closed(64))
    assert res.iops.value == pytest.approx(2 / 20e-6, rel=0.03)
    assert res.bottleneck == "host_cpu" and res.cpu_us_per_io.value == pytest.approx(20, rel=0.01)


def test_bursty_open_workload_mean_rate() -> None:
    topo = {"kind": "generic", "stations": [{"servers": 4, "service_time_us": 10}]}
    wl = {"kind": "bursty", "on_rate_iops": 200_000, "off_rate_iops": 20_000, "mean_on_ms": 1, "mean_off_ms": 3}
    res = simulate(scenario_from_data({"topology": topo, "workload": wl}, fast({"run.max_ios": 200_000})))
    assert res.iops.value == pytest.approx((200_000 * 1 + 20_000 * 3) / 4, rel=0.1)


def test_overload_is_reported_not_hidden() -> None:
    topo = {"kind": "generic", "stations": [{"servers": 1, "service_time_us": 10}]}
    res = simulate(scenario_from_data({"topology": topo, "workload": {"kind": "open", "rate_iops": 150_000}},
                                      fast({"run.max_ios": 50_000})))
    assert res.iops.value == pytest.approx(100_000, rel=0.03)  # the server's capacity, not the offered load
    assert res.utilization["device"] > 0.99
    assert res.validity == "unstable"
    # the backlog grows at the offered rate less the capacity for as long as the run lasts
    assert res.issued_ios - res.simulated_ios == res.in_flight_ios
    assert res.in_flight_ios == pytest.approx((150_000 - 100_000) * res.simulated_seconds, rel=0.1)


EXFLASH = {"kind": "exflash", "host": {"model": "x3850-X6", "stack": "none"}, "dimm": "eXFlash-400GB", "dimms": 1, "layout": "jbod"}


def test_exflash_dies_alone_set_the_random_write_limit() -> None:
    """Shared dies are the DIMM's whole write path: deep 4 KiB random writes reach the datasheet's
    44K IOPS (seed 002 Table 4) with the dies saturated, not a tandem of channels below it."""
    res = run(EXFLASH, closed(1, qd=32, read_fraction=0.0))
    assert res.iops.value == pytest.approx(44_000, rel=0.03)
    assert res.utilization["dimm0.nand_dies"] > 0.97


def test_exflash_random_read_die_time_grows_with_the_transfer() -> None:
    """A random read holds its die for the array read plus its transfer: 16 KiB reads meet the random-read
    bandwidth, and 8 KiB reads fall between half the 4 KiB rate and the 16 KiB rate doubled."""
    iops = {kib: run(EXFLASH, closed(1, qd=64, kib=kib)).iops.value for kib in (4, 8, 16)}
    assert iops[16] * 16 * 1024 == pytest.approx(0.688e9, rel=0.05)  # catalog random-read bandwidth
    assert iops[4] / 2 < iops[8] < 2 * iops[16]


def test_application_time_per_io_stays_out_of_the_latency() -> None:
    """``app_us_per_io`` (fio's own work) lengthens each job's cycle but not the latency it measures:
    throughput follows N / (app + R) by Little's law."""
    plain = run(EXFLASH, closed(1))
    app = run(EXFLASH, closed(1, app_us_per_io=40.0))
    assert app.read_latency_mean_us.value == pytest.approx(plain.read_latency_mean_us.value, rel=0.03)
    assert app.iops.value == pytest.approx(1e6 / (40.0 + app.latency_mean_us.value), rel=0.03)


def test_scattered_writes_stall_at_the_random_write_rating_sequential_ones_do_not() -> None:
    """IBM i mirrored writes on 2 ES5F (seed 001): scattered 4 KiB writes stop at the rated 280K per
    drive and their response time rises; a sequential stream programs at the write bandwidth."""
    topo = direct(drives=2, layout="ibmi_mirror", namespaces={"per_drive": 16, "size_gb": 200}, host={"stack": "none"})
    scattered = run(topo, closed(24, read_fraction=0.0, access="random"))
    streamed = run(topo, closed(24, read_fraction=0.0, access="sequential"))
    # every logical write is one write on each drive of the mirrored pair
    assert scattered.write_iops.value == pytest.approx(280_000, rel=0.05)
    assert streamed.write_iops.value > 1.2 * scattered.write_iops.value
    assert scattered.write_latency_mean_us.value > 1.2 * streamed.write_latency_mean_us.value


def test_exflash_reads_wait_for_a_program_on_their_die() -> None:
    """A 67/33 QD1 mix (seed 002 Table 5: 101.2 us, reads alone 119, writes alone 18.8): each read
    whose die is programming an earlier write waits for the program, so the mix's reads are slower
    than reads alone by about (programs in flight / dies) x the rest of a program; pure reads and
    pure writes never meet a program on a die they need."""
    from models.catalog import lookup
    from sim.route.flash import flash_parameters

    p = flash_parameters(lookup("dimms", "eXFlash-400GB"), "random")
    reads = run(EXFLASH, closed(1))
    mix = run(EXFLASH, closed(1, read_fraction=0.67))
    program_us = p.die_program_time_us(4096)
    writes_per_us = mix.write_iops.value * 1e-6
    # residual program time seen by a read that hits one, M/G/1 style: E[T^2] / (2 E[T])
    residual_us = program_us * (1 + p.service_cv**2) / 2
    expected_wait = writes_per_us * program_us / p.read_units * residual_us
    extra = mix.read_latency_mean_us.value - reads.read_latency_mean_us.value
    assert 0.8 * expected_wait < extra < 1.6 * expected_wait
    assert mix.latency_mean_us.value > 0.67 * reads.read_latency_mean_us.value + 0.33 * mix.write_latency_mean_us.value + 0.5 * expected_wait


def test_cpu_work_beside_the_io_keeps_cores_busy_without_adding_latency() -> None:
    """``off_path_fraction`` (seed 004: SCSI and NVMe/FC at the same latency with half the CPU): that share
    of the path length still counts in CPU per I/O and still saturates the cores, but no I/O waits for it."""
    def host(off: float) -> dict[str, Any]:
        return {"kind": "generic", "host": {"cores": 4, "cpu_us_per_io": 40, "off_path_fraction": off},
                "stations": [{"servers": 64, "service_time_us": 100}]}
    inline, beside = run(host(0.0), closed(2)), run(host(0.75), closed(2))
    assert beside.latency_mean_us.value == pytest.approx(inline.latency_mean_us.value - 30, rel=0.03)
    assert beside.cpu_us_per_io.value == pytest.approx(40, rel=0.01) == inline.cpu_us_per_io.value
    saturated = run(host(0.75), closed(64))
    assert saturated.iops.value == pytest.approx(4 / 40e-6, rel=0.03)
    assert saturated.bottleneck == "host_cpu"


@pytest.mark.parametrize("model", MODELS)
def test_nvme_reads_wait_behind_programs_in_a_mix(model: str) -> None:
    """A conventional drive's reads meet programs too (seed 003 Table 3, CP paging on one P4510: 1.28 ms per
    SSCH): with writes in the mix a read waits, on average, the share of program units (under dies: of dies)
    busy programming x the rest of a program operation, E[T^2] / 2E[T]; reads alone never wait."""
    from models.catalog import lookup
    from sim.route.flash import die_layout, flash_parameters, program_operations

    spec = lookup("drives", "ES5F")
    p = flash_parameters(spec, "random")
    topo = direct(drives=1, layout="jbod", host={"stack": "none"})
    alone = run(topo, {"kind": "open", "rate_iops": 70_000, "read_fraction": 1.0, "block_size_kib": 4}, model)
    mix = run(topo, {"kind": "open", "rate_iops": 200_000, "read_fraction": 0.65, "block_size_kib": 4}, model)
    if model == "pooled":
        programming, program_us = mix.utilization["drive0.program_units"], p.program_time_us
    else:  # the dies' busy share less the reads' (130K reads/s x tR over N dies); an operation is tPROG
        d = die_layout(spec)
        programming = mix.utilization["drive0.dies"] - 200_000 * 0.65 * d.die_read_us / d.dies / 1e6
        program_us = program_operations(p, d).operation_us
    expected_wait = programming * program_us * (1 + p.service_cv**2) / 2
    extra = mix.read_latency_mean_us.value - alone.read_latency_mean_us.value
    assert programming > 0.2
    assert extra == pytest.approx(expected_wait, rel=0.2)


def test_ibmi_mirror_reads_share_both_copies_md_prefers_the_first() -> None:
    """IBM i reads the copy with the faster expected response, ties alternating; Linux md's
    read_balance gives ties to the first copy (sim/route/volume.py ``_less_loaded``)."""
    topo = direct(drives=4, host={"stack": "none"}, namespaces={"per_drive": 1, "queue_depth": 4096})

    def copy_busy(layout: str) -> tuple[float, float]:
        res = run({**topo, "layout": layout}, closed(1))  # one read at a time: every choice is a tie
        # pairs are members (0, 1) and (2, 3); member m lives on drive m
        return res.busy["drive0.ns0"] + res.busy["drive2.ns0"], res.busy["drive1.ns0"] + res.busy["drive3.ns0"]

    first, second = copy_busy("ibmi_mirror")
    assert first == pytest.approx(second, rel=0.1)
    first, second = copy_busy("raid10")
    assert second < 0.05 * first


def test_sequential_streams_start_aligned_so_chunk_sized_reads_stay_whole() -> None:
    """Streams start on 1 MiB boundaries: 128 KiB sequential reads never cross a 256 KiB chunk in
    the DES's volume mapping, and the fast path's plan agrees; random 4 KiB-aligned ones often do."""
    from sim.analytic.paths import access_grid, volume_plan, workload_mix
    from sim.des.components import READ
    from sim.des.engine import STREAMS_SPREAD, stream_spacing
    from sim.route.volume import Volume

    chunk, size, members = 256 << 10, 128 << 10, 32
    volume = Volume("ibmi_mirror", members, chunk, 200 * 10**9, lambda m: 0, False)
    spacing = stream_spacing(volume.capacity)
    for stream in range(STREAMS_SPREAD):
        offset = stream * spacing
        for _ in range(20):
            (pieces,) = volume.plan(READ, offset, size, -1)
            assert len(pieces) == 1
            offset += size
    wl = scenario_from_data({"topology": direct(), "workload": closed(1, kib=128, access="sequential")}).workload
    grid = access_grid(workload_mix(wl), sequential=True)
    assert volume_plan("ibmi_mirror", members, chunk, READ, size, grid) == ((1.0, (((1, READ, float(size)),),)),)
    random_plan = volume_plan("ibmi_mirror", members, chunk, READ, size, access_grid(workload_mix(wl), sequential=False))
    split = sum(p for p, phases in random_plan if sum(c for c, _, _ in phases[0]) == 2)
    assert split == pytest.approx(31 / 64)


def test_a_read_channel_whose_time_varies_queues_as_pollaczek_khinchine_says() -> None:
    """device_behaviour.read_channel_cv: 128 KiB reads on one drive's read channel at 70% of its bandwidth.
    From a fixed transfer time (M/D/1) to an exponential-like one (cv 1) the wait there doubles:
    P-K's extra rho S / (2 (1 - rho)); the fast path reads the same parameter and agrees with the DES."""
    from models.catalog import lookup
    from sim.analytic import evaluate

    # a x16 link behind the channel, so the link's own queue (it meets the channel's varied spacing) stays small
    spec = {**lookup("drives", "ES5F").model_dump(), "pcie_lanes": 16}
    size = 128 * 1024
    transfer_us = size / (spec["read_bw_gbs"] * 1e3)  # us on the read channel
    rho = 0.7
    rate = rho / transfer_us * 1e6

    def scenario(cv: float) -> Any:
        drive = {**spec, "behaviour": {**spec.get("behaviour", {}), "read_channel_cv": cv}}
        topo = direct(drive=drive, drives=1, layout="jbod", namespaces={"per_drive": 1, "queue_depth": 4096}, host={"stack": "none"})
        wl = {"kind": "open", "rate_iops": rate, "read_fraction": 1.0, "block_size_kib": 128}
        # pooled: the channel alone carries the bytes (under dies a 128 KiB read is also 8 pages on 8 dies, fork/join)
        return scenario_from_data({"topology": topo, "workload": wl, "run": {**RUN, "max_ios": 120_000, "target_rel_ci": 0.01},
                                   "device_model": "pooled"})

    fixed, varied = simulate(scenario(0.0)), simulate(scenario(1.0))
    extra = varied.read_latency_mean_us.value - fixed.read_latency_mean_us.value
    assert extra == pytest.approx(rho * transfer_us / (2 * (1 - rho)), rel=0.15)
    assert evaluate(scenario(1.0)).read_latency_mean_us == pytest.approx(varied.read_latency_mean_us.value, rel=0.05)
