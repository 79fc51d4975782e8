"""The calibration's free parameters: where each lives, its starting value, bounds and meaning.

Plain data, read by the fit (calibration/fit.py) and by the scenarios' fitted workload values
(calibration/evaluate.py ``fitted_workload_value``), so neither module imports the other for it.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class FreeParameter:
    """A number the fit may move: where it lives, its starting value and bounds, and why."""

    path: str
    initial: float
    low: float
    high: float
    systems: tuple[str, ...]
    meaning: str


PARAMETERS: tuple[FreeParameter, ...] = (
    FreeParameter("workloads/s1_ycsb_think_us", 500.0, 0.0, 5000.0, ("S1",),
                  "PostgreSQL's own work per YCSB I/O (CPU, network, locks) between a thread's I/Os"),
    FreeParameter("san_adapters/FICON-Express32S/port_kiops", 300.0, 30.0, 1000.0, ("S1",),
                  "FICON Express32S channel I/O rate in FCP mode (no published figure)"),
    FreeParameter("drives/PM1733-1.92TB/write_kiops", 260.0, 60.0, 260.0, ("S1",),
                  "sustained random-write IOPS of the 1.92 TB PM1733 (the catalog's 260K is the series maximum)"),
    FreeParameter("hosts/LinuxONE-Emperor4-LPAR30/serial_us_per_io/scsi_fcp", 4.0, 0.5, 20.0, ("S1",),
                  "the Linux on Z SCSI stack's one-at-a-time section per I/O"),
    FreeParameter("hosts/FS9100-test-host/serial_us_per_io/scsi_fcp", 4.0, 0.5, 20.0, ("S5",),
                  "the FS9100 test host's SCSI stack one-at-a-time section per I/O"),
    FreeParameter("hosts/FS9100-test-host/cpu_us_per_io/scsi_fcp", 20.0, 1.0, 200.0, ("S5",),
                  "SCSI/FCP host CPU per I/O on the FS9100 test host"),
    FreeParameter("hosts/FS9100-test-host/cpu_us_per_io/nvme_fc", 10.0, 1.0, 200.0, ("S5",),
                  "NVMe/FC host CPU per I/O on the FS9100 test host"),
    FreeParameter("hosts/FS9100-test-host/off_path_fraction", 0.5, 0.0, 0.95, ("S5",),
                  "share of the FS9100 test host's stack CPU per I/O that runs beside the I/O (interrupt and clean-up work)"),
    FreeParameter("storage_servers/FS9100/cache_hit_latency_us", 20.0, 1.0, 500.0, ("S5",),
                  "FS9100 cache-hit service time beyond controller CPU"),
    FreeParameter("storage_servers/FS9100/port_kiops", 200.0, 20.0, 1000.0, ("S5",),
                  "FS9100 target port I/O rate"),
    FreeParameter("workloads/s2_rpg_write_think_us", 10.0, 0.0, 500.0, ("S2",),
                  "an RPG write job's own work between I/Os"),
    FreeParameter("workloads/s2_rpg_read_think_us", 160.0, 0.0, 2000.0, ("S2",),
                  "an RPG read job's own work between I/Os"),
    FreeParameter("parameters/device_behaviour/read_channel_cv", 1.0, 0.0, 2.0, ("S2",),
                  "variability (cv) of a read's time on a flash device's read-bandwidth channel"),
    FreeParameter("hosts/x3850-X6/cpu_us_per_io/exflash_driver", 6.0, 0.1, 40.0, ("S3",),
                  "eXFlash driver CPU per I/O"),
    FreeParameter("workloads/s3_fio_app_us", 4.0, 0.0, 30.0, ("S3",),
                  "fio's own time per I/O on the x3850 X6 (completion handling, next submission), outside the latency it reports"),
    FreeParameter("hosts/z14-M05-LPAR4/cpu_us_per_io/zvm_cp", 12.85, 0.5, 40.0, ("S4",),
                  "z/VM CP CPU per I/O (SSCH)"),
    FreeParameter("parameters/host_defaults/cpu_us_per_kib/zvm_cp", 1.6, 0.0, 10.0, ("S4",),
                  "z/VM CP CPU per KiB moved (per-page handling)"),
    FreeParameter("parameters/zvm/subchannel_turnaround_us/read", 50.0, 0.0, 1000.0, ("S4",),
                  "time a base/alias EDEV stays held after a read's device completion"),
    FreeParameter("parameters/zvm/subchannel_turnaround_us/write", 10.0, 0.0, 500.0, ("S4",),
                  "time a base/alias EDEV stays held after a write's device completion"),
)

# Systems fitted one at a time: no free parameter is shared between two systems. The read channel's
# variability belongs to every flash device but only S2's records read near a drive's bandwidth
# limit, so S2 fits it and the rest check it: fitted at 1.05, it moved no other system's prediction by more
# than 1.8% (the eXFlash queue-depth knee; S1's burst ratio 0.9%, S4 0.7%, S5 none).
BLOCKS: tuple[tuple[str, ...], ...] = (("S1",), ("S2",), ("S3",), ("S4",), ("S5",))
