"""The numbers of a SAN attachment (host adapters, fabric, storage server), derived once for both solvers.

From the scenario's ``San`` topology and the catalog (models/catalog/san_adapters.yaml,
storage_servers.yaml: seeds 000, 004) and parameters.yaml ``storage_server``.
"""

from __future__ import annotations

from dataclasses import dataclass

from models.catalog import lookup, parameter
from models.topology import San
from sim.route.links import us_per_byte


@dataclass(frozen=True)
class SanParameters:
    """The numbers of a SAN attachment, from the scenario and the catalog (seeds 000, 004).

    A port spends ``1 / port IOPS`` handling each I/O towards the device plus the write
    payload, and the read payload towards the host. I/Os take the ``paths`` host-port /
    front-end-port pairs round-robin. FCP limits each LUN to ``lun_queue_depth``
    outstanding I/Os; NVMe/FC gives each association its share of the queues
    (``concurrency_pools`` x ``concurrency_slots``). The write cache holds
    ``write_cache_slots`` writes of the workload's mean size.
    """

    host_ports: int
    host_port_us_per_byte: float
    host_port_handling_us: float
    front_end_ports: int
    front_end_port_us_per_byte: float
    front_end_port_handling_us: float
    paths: int
    service_cv: float
    law: str
    concurrency_pools: int
    concurrency_slots: int
    controller_cores: int
    controller_us_per_io: float
    cache_hit_latency_us: float
    backend_parallelism: int
    backend_read_latency_us: float
    backend_read_gbs: float
    destage_gbs: float
    write_cache_slots: int
    lun_bytes: int


def san_parameters(topo: San, mean_bytes: float) -> SanParameters:
    """The SAN path's numbers (shared by the DES builder and the analytic fast path); ``mean_bytes`` is the workload's mean I/O size."""
    hba = lookup("san_adapters", topo.host_adapter)
    server = lookup("storage_servers", topo.storage_server)
    cv = float(parameter("storage_server.service_cv"))
    host_ports = topo.host_adapters * hba.ports
    fcp = topo.protocol == "fcp"
    cache_gb = topo.cache.size_gb or server.cache_gb
    mean_write = max(512.0, mean_bytes)
    return SanParameters(
        host_ports=host_ports,
        host_port_us_per_byte=us_per_byte(hba.port_gbs),
        host_port_handling_us=1e3 / hba.port_kiops,
        front_end_ports=topo.front_end_ports,
        front_end_port_us_per_byte=us_per_byte(server.port_gbs),
        front_end_port_handling_us=1e3 / server.port_kiops,
        paths=max(host_ports, topo.front_end_ports),
        service_cv=cv,
        law="lognormal" if cv > 0 else "deterministic",
        concurrency_pools=topo.luns if fcp else topo.associations,
        concurrency_slots=(topo.lun_queue_depth if fcp
                           else max(1, topo.nvme_queues.count // topo.associations) * topo.nvme_queues.depth),
        controller_cores=server.controller_cores,
        controller_us_per_io=server.controller_us_per_io,
        cache_hit_latency_us=server.cache_hit_latency_us,
        backend_parallelism=server.backend_parallelism,
        backend_read_latency_us=server.backend_read_latency_us,
        backend_read_gbs=server.backend_read_gbs,
        destage_gbs=server.destage_gbs,
        write_cache_slots=max(1, min(10**9, int(cache_gb * 1e9 / mean_write))),
        lun_bytes=int(server.raw_capacity_tb * 1e12 / topo.luns),
    )

