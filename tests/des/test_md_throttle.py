"""md's rebuild throttle (models/faults.py ``Rebuild``, sim/des/arrivals.py ``RebuildArrivals``) against its closed form.

One mirror pair (md RAID-1 over two PM1733, drive 1 failed and recovering onto its replacement), pooled flash
devices, host load open Poisson 16 KiB random reads (the replacement then receives only the rebuild's writes).

* Under load, a legacy md (before ``sync_io_depth``) issues one 128 KiB window of sync I/O and drains it before the
  next while the array is busy (md_do_sync): with 128 KiB sync I/Os exactly one is in flight, so
  rate = io / (T_read + T_write), T_read the read's time at the survivor: at every station of its path the M/G/c
  wait an arrival finds behind the host's reads (``queue_wait`` at the station's measured utilization, the host's
  service time and its squared coefficient of variation) plus its own service; T_write the cached write and its
  link transfers. The cap is raised out of the way.
* Idle: rate = min(cap, what the devices do at the rebuild's depth): the cap binds at md's default limits; with
  the cap raised, ``depth`` units of a zero-load read, link trips and cached write (``idle_rebuild_bytes_per_s``).
"""

from __future__ import annotations

from typing import Any

import pytest

from models.faults import KIB, MD_SPEED_LIMIT_MAX_KIB_S, Rebuild, md_sync_io_kib
from models.scenario import Scenario, scenario_from_data
from sim.analytic.queueing import INF, queue_wait
from sim.des.engine import simulate
from sim.plan.faults import fast_rebuild_figures
from sim.route.describe import DirectRoute, describe
from sim.route.links import us_per_byte

HOST_KIB = 16
RAISED_MAX = 10**7  # KiB/s: md's cap out of the way, so the throttle (or the devices) set the rate


def pair(rate_iops: float, rebuild: dict[str, Any], max_ios: int = 30_000) -> Scenario:
    return scenario_from_data({
        "name": "one mirror pair, drive 1 recovering",
        "device_model": "pooled",
        "topology": {"kind": "direct_nvme", "drive": "PM1733-1.92TB", "drives": 2, "adapter": "EJ1Y", "adapters": 1,
                     "layout": "raid1", "host": {"cpu_us_per_io": 0}},
        "workload": {"kind": "open", "rate_iops": rate_iops, "read_fraction": 1.0, "block_size_kib": HOST_KIB, "access": "random"},
        "faults": {"failed_drives": [1], "rebuild": rebuild},
        "run": {"seed": 3, "warmup_ios": 2_000, "max_ios": max_ios, "min_batches": 10, "target_rel_ci": 0.01},
    })


def closed_form_mbps(route: DirectRoute, io: float, util: dict[str, float]) -> float:
    """io / (T_read + T_write) for one sync I/O in flight, the waits at the measured utilizations."""
    p = route.devices.params
    host = HOST_KIB * KIB
    link, uplink = route.drive_links, route.uplinks
    assert link is not None

    def wait(name: str, servers: int, host_service: float, scv: float) -> float:
        rho = util.get(name, 0.0)
        w = queue_wait(rho * servers / host_service, host_service, scv, servers, 1.0, INF)[0]
        assert w != INF
        return w

    read_cv2 = p.service_cv ** 2 if p.law == "lognormal" else 1.0
    t_read = (wait("drive0.read_units", p.read_units, p.read_latency_us, read_cv2) + p.read_latency_us
              + wait("drive0.read_bw", 1, host * us_per_byte(p.read_channel_gbs), p.read_channel_cv ** 2)
              + io * us_per_byte(p.read_channel_gbs)
              + wait("drive0.link.to_host", 1, host * link.us_per_byte, 0.0) + io * link.us_per_byte
              + wait("adapter0.uplink.to_host", 1, host * uplink.us_per_byte, 0.0) + io * uplink.us_per_byte)
    t_write = io * (uplink.us_per_byte + link.us_per_byte) + p.write_ack_us  # the replacement sees no host I/O
    return io / (t_read + t_write)  # bytes per us = MB/s


@pytest.mark.parametrize("rate_iops", [150_000, 300_000])
def test_legacy_md_one_sync_io_in_flight_matches_its_closed_form(rate_iops: float) -> None:
    io_kib = 128  # md's whole check window: one sync I/O per look
    s = pair(rate_iops, {"md_throttle": "legacy", "io_kib": io_kib, "speed_limit_max_kib_s": RAISED_MAX})
    route = describe(s)
    assert isinstance(route, DirectRoute)
    stream = route.volume.rebuild
    assert stream is not None and stream.window_units == 1 and stream.busy_depth() == 1
    r = simulate(s)
    rb = r.rebuild
    assert rb is not None and rb.throttle == "legacy"
    expected = closed_form_mbps(route, io_kib * KIB, r.utilization)
    assert rb.rate_mbps.value == pytest.approx(expected, rel=0.10)
    assert rb.rate_mbps.value < 0.5 * rb.idle_rate_mbps  # the drain, not the devices, sets the rate
    fast = fast_rebuild_figures(s)
    assert fast is not None and fast["loaded_mbps"] == pytest.approx(rb.rate_mbps.value, rel=0.15)


def test_the_rate_falls_with_host_load_and_sync_io_depth_keeps_more_in_flight() -> None:
    rates = {}
    for throttle, load in (("legacy", 150_000), ("legacy", 300_000), ("sync_io_depth", 300_000)):
        rb = simulate(pair(load, {"md_throttle": throttle, "speed_limit_max_kib_s": RAISED_MAX}, max_ios=15_000)).rebuild
        assert rb is not None
        rates[throttle, load] = rb.rate_mbps.value
    assert rates["legacy", 300_000] < rates["legacy", 150_000]
    assert rates["sync_io_depth", 300_000] > 1.5 * rates["legacy", 300_000]  # then the survivor's read bandwidth binds


def test_idle_rate_is_the_cap_or_what_the_devices_do() -> None:
    md = describe(pair(1_000, {}))
    assert isinstance(md, DirectRoute) and md.volume.rebuild is not None
    assert md.volume.rebuild.idle_bytes_per_s == pytest.approx(MD_SPEED_LIMIT_MAX_KIB_S * KIB)  # 204.8 MB/s: the cap
    assert md.volume.rebuild.io_bytes == md_sync_io_kib("raid1") * KIB == 64 * KIB
    raised = describe(pair(1_000, {"speed_limit_max_kib_s": RAISED_MAX, "depth": 1, "io_kib": 128}))
    assert isinstance(raised, DirectRoute) and raised.volume.rebuild is not None and raised.drive_links is not None
    p, io = raised.devices.params, 128 * KIB
    unit_us = (p.read_latency_us + io * (us_per_byte(p.read_channel_gbs) + 2 * (raised.drive_links.us_per_byte
                                                                              + raised.uplinks.us_per_byte)) + p.write_ack_us)
    devices = io / unit_us * 1e6
    assert devices < min(p.read_bw_gbs, p.write_bw_gbs) * 1e9 < RAISED_MAX * KIB
    assert raised.volume.rebuild.idle_bytes_per_s == pytest.approx(devices)
    # an explicit rate runs ``depth`` units without md's throttle: at a trickle of host I/O, the idle rate
    s = pair(1_000, {"rate_mbps": 100_000, "depth": 1, "io_kib": 128}, max_ios=3_000)
    rb = simulate(s).rebuild
    assert rb is not None and rb.throttle == "none"
    assert rb.rate_mbps.value == pytest.approx(devices / 1e6, rel=0.10)


def test_md_throttle_field_default_and_sizes() -> None:
    assert Rebuild().md_throttle == "legacy" and Rebuild().sync_io_depth == 32 and Rebuild().depth == 32
    assert Rebuild().io_bytes("raid5") == 4 * KIB and Rebuild().io_bytes("raid10") == 64 * KIB
    assert Rebuild(io_kib=16).io_bytes("raid5") == 16 * KIB
    assert Rebuild(rate_mbps=50).throttle == "none"
    with pytest.raises(ValueError, match="md_throttle"):
        Rebuild.model_validate({"md_throttle": "fast"})
