"""A rebuild's rate under host load on the fast path: md's throttle as a closed form.

md_do_sync (drivers/md/md.c) issues a window of sync I/O and, while the array serves host I/O and the
rebuild runs above ``speed_limit_min``, waits for every sync I/O in flight to finish before it issues the
next ("legacy"; with the 2025 ``sync_io_depth`` patch, once ``sync_io_depth`` are in flight):
``RebuildStream.busy_depth`` units B leave together and the next batch waits for the last. So

    rate = B x io / T_batch,   T_batch = T_read + T_write

with T_read the batch's reads at the busiest source drive: at each station of the read path (the device's
read servers or its controller and dies, its read channel, its PCIe link and the adapter uplink towards the
host) the wait an arrival finds (``queue_wait``: M/G/c at the station's utilization in the fast path's
rebuilding state, with the host's I/O size; a closed workload never has more than its jobs ahead), its own
service, and the B - 1 units ahead of the last on the station that serialises them most; T_write the
replacement's cached write (its acknowledgement) and the link transfers towards it, with their waits. The
rate stays between md's floor (``speed_limit_min``: below it md does not hold back) and the idle rate
(``RebuildStream.idle_bytes_per_s``). Waits are means: a batch that ends with the slowest of many parallel
reads (RAID-5: a window of 32 stripes reads every survivor, 288 reads on ten drives) takes longer than this, so
the fast path is optimistic there (calibration/faults/check.py prints both solvers). The rebuilding state itself charges the rebuild at its idle rate
(``rebuild_background``), so the stations it shares look busier than at the loaded rate: a bias towards a
slower rebuild, small where host I/O dominates those stations.
"""

from __future__ import annotations

import math

from models.faults import rebuild_sources, volume_rebuild_sources
from sim.analytic.queueing import INF, queue_wait
from sim.route.describe import AnyRoute, DirectRoute
from sim.route.elements import RebuildStream, instance_of
from sim.route.flash import FIRST_READ_BYTES
from sim.route.links import us_per_byte

Station = tuple[str, int, int, float, float]
"""(meter name, servers an arrival queues for, servers a batch spreads over, the rebuild unit's service there (us),
a host I/O's service there (us))."""


def _read_stations(route: DirectRoute, m: int, io: float, host_bytes: float) -> list[Station]:
    p, d = route.devices.params, route.devices.dies
    drive = route.devices.names[instance_of(route.devices.of, m)]
    if d is not None:  # addressed dies: a read waits for its own die (one server at the dies' utilization)
        out: list[Station] = [(f"{drive}.controller", 1, 1, d.controller_service_us, d.controller_service_us),
                              (f"{drive}.dies", 1, d.dies, d.controller_delay_us + d.die_read_us + d.transfer_us, d.die_read_us),
                              (f"{drive}.read_bw", 1, 1, max(0.0, io - FIRST_READ_BYTES) * us_per_byte(p.read_bw_gbs),
                               max(0.0, host_bytes - FIRST_READ_BYTES) * us_per_byte(p.read_bw_gbs))]
    else:
        out = [(f"{drive}.read_units", p.read_units, p.read_units, p.read_latency_us, p.read_latency_us),
               (f"{drive}.read_bw", 1, 1, io * us_per_byte(p.read_channel_gbs), host_bytes * us_per_byte(p.read_channel_gbs))]
    for bank in (route.drive_links, route.uplinks):
        if bank is not None:
            out.append((f"{bank.names[instance_of(bank.of, m)]}.to_host", 1, 1, io * bank.us_per_byte, host_bytes * bank.us_per_byte))
    return out


def _write_stations(route: DirectRoute, m: int, io: float, host_bytes: float) -> list[Station]:
    out: list[Station] = []
    for bank in (route.uplinks, route.drive_links):
        if bank is not None:
            out.append((f"{bank.names[instance_of(bank.of, m)]}.to_device", 1, 1, io * bank.us_per_byte, host_bytes * bank.us_per_byte))
    return out


def _path_us(stations: list[Station], util: dict[str, float], batch: int, population: float) -> float:
    """A batch of ``batch`` units through ``stations``: the wait an arrival finds at each (M/G/c at the station's
    utilization, the host's I/O size; never more than ``population`` jobs ahead), own service, and the units
    ahead of the last where they serialise most. INF when a station is saturated by an open load."""
    total = extra = 0.0
    for name, servers, spread, own, host in stations:
        rho = min(max(util.get(name, 0.0), 0.0), 0.999999)
        if rho > 0.0 and host > 0.0:
            wait = queue_wait(rho * servers / host, host, 1.0, servers, 1.0, population)[0]
            if wait == INF:
                return INF
            total += wait
        total += own
        extra = max(extra, own * (math.ceil(batch / spread) - 1))
    return total + extra


def batch_time_us(route: DirectRoute, stream: RebuildStream, util: dict[str, float], host_bytes: float,
                  population: float = INF) -> float:
    """T_batch of the module docstring: the slowest rebuilt member's batch (its busiest source, then its write)."""
    v, io, batch = route.volume, float(stream.io_bytes), stream.busy_depth()
    worst = 0.0
    for k, r in enumerate(stream.rebuilt):
        if stream.volumes:  # within the workloads' volumes that hold it
            sources = {m for vol in stream.volumes[k] for s in range(len(vol))
                       for m in volume_rebuild_sources(v.layout, v.failed, r, s, vol)}
        else:
            sources = {m for s in range(v.members) for m in rebuild_sources(v.layout, v.members, v.failed, r, s)}
        read = max(_path_us(_read_stations(route, m, io, host_bytes), util, batch, population) for m in sources)
        write = _path_us(_write_stations(route, r, io, host_bytes), util, batch, population) + route.devices.params.write_ack_us
        worst = max(worst, read + write)
    return worst


def loaded_rebuild_rate(route: AnyRoute, utilization: dict[str, float], host_bytes: float, population: float = INF) -> float:
    """The rebuild's rate (bytes written per second in all) while the stations are as busy as ``utilization``
    (the fast path's rebuilding state: host I/O and the rebuild's own share) with at most ``population`` host
    I/Os in flight (a closed workload's jobs x depth): B x io / T_batch, kept between min(floor, idle rate)
    and the idle rate. 0 without a rebuild."""
    stream = route.volume.rebuild
    if stream is None or not isinstance(route, DirectRoute):
        return 0.0
    idle = stream.idle_bytes_per_s
    t = batch_time_us(route, stream, utilization, host_bytes, population)
    throttled = 0.0 if t == INF else stream.busy_depth() * stream.io_bytes / t * 1e6
    return min(idle, max(throttled, min(stream.floor_bytes_per_s, idle)))
