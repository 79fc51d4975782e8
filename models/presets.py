"""Workload presets: the I/O patterns the seeds measured, ready to drop into a scenario or a plan.

Each preset is a validated ``Workload`` (closed, open or bursty) with the seed that
describes it and what had to be assumed. The planner (sim/plan/planner.py) keeps a preset's
mix (read fraction, sizes, access, burstiness) and replaces its arrival process by the
target rate; the web app offers the same presets for a simulation.

    from models.presets import PRESETS, preset_workload
    workload = preset_workload("ycsb_read_mostly")
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from pydantic import TypeAdapter, ValidationError

from models.workload import BurstyWorkload, ClosedWorkload, OpenWorkload, ProfileWorkload, Workload

AnyWorkload = ClosedWorkload | OpenWorkload | BurstyWorkload | ProfileWorkload
_WORKLOAD = TypeAdapter(Workload)


@dataclass(frozen=True)
class WorkloadPreset:
    """A named workload with its source: ``source`` cites the seed, ``assumptions`` what it does not say."""

    key: str
    title: str
    source: str
    assumptions: str
    data: dict[str, Any]

    @property
    def workload(self) -> AnyWorkload:
        """A fresh validated workload model (callers may change it freely)."""
        workload: AnyWorkload = _WORKLOAD.validate_python(self.data)
        return workload


OLTP_4K_70_30 = WorkloadPreset(
    key="oltp_4k_70_30",
    title="OLTP, 4 KiB random, 70% read / 30% write",
    source="seed 004 (FS9100 SCSI vs NVMe/FC, 'Typical 70% READ workload'): 'IO size 4KB @70% Read / 30% Write', "
           "32 devices with total QD=32; seed 002 Figure 12 runs the same OLTP pattern at 67/33",
    assumptions="random access; one outstanding I/O on each of 32 devices (QD 32 in all)",
    data={"kind": "closed", "jobs": 32, "queue_depth": 1, "read_fraction": 0.7, "block_size_kib": 4, "access": "random"},
)
"""OLTP 4K 70/30 - seed 004 (FS9100 slides: 4 KB, 70% read / 30% write, total QD 32)."""

YCSB_READ_ONLY = WorkloadPreset(
    key="ycsb_read_only",
    title="YCSB read-only on PostgreSQL (256 threads)",
    source="seed 000 section 3.4: 'Number of users (= threads) fixed to 256', 'Experiment 1: Read-Only (95% read)'",
    assumptions="I/O read fraction taken from the experiment's label (95%); 8 KiB random I/O = the PostgreSQL page "
                "(the paper gives the 64 KB record size, not the I/O size), as in examples/s1_*.yaml",
    data={"kind": "closed", "jobs": 256, "queue_depth": 1, "read_fraction": 0.95, "block_size_kib": 8, "access": "random"},
)
"""YCSB read-only - seed 000 section 3.4 (256 threads, 'Read-Only (95% read)')."""

YCSB_READ_MOSTLY = WorkloadPreset(
    key="ycsb_read_mostly",
    title="YCSB read-mostly on PostgreSQL (256 threads)",
    source="seed 000 section 3.4: 'Experiment 2: Read-Mostly workload (95% read, 5% update)'; section 4.1.1: 'The "
           "overall read/write rates are 90% read and 10% write'",
    assumptions="I/O read fraction 90% (the measured overall I/O mix, not the 95/5 transaction mix); 8 KiB random I/O "
                "(PostgreSQL page)",
    data={"kind": "closed", "jobs": 256, "queue_depth": 1, "read_fraction": 0.9, "block_size_kib": 8, "access": "random"},
)
"""YCSB read-mostly - seed 000 sections 3.4 and 4.1.1 (256 threads, 90% read / 10% write I/O)."""

YCSB_UPDATE_HEAVY = WorkloadPreset(
    key="ycsb_update_heavy",
    title="YCSB update-heavy on PostgreSQL (256 threads)",
    source="seed 000 section 3.4: 'Experiment 3: Update-Heavy workload (50% read, 50% update)'",
    assumptions="I/O read fraction set to the 50/50 transaction mix, an upper bound on the write share (section 4.1.1 "
                "reports 90/10 overall I/O across the three experiments); 8 KiB random I/O (PostgreSQL page)",
    data={"kind": "closed", "jobs": 256, "queue_depth": 1, "read_fraction": 0.5, "block_size_kib": 8, "access": "random"},
)
"""YCSB update-heavy - seed 000 section 3.4 (256 threads, 50% read / 50% update)."""

DB2_BDI_BURSTY = WorkloadPreset(
    key="db2_bdi_bursty",
    title="Db2 Warehouse BDI: write bursts up to 3.3 GB/s, low read rate",
    source="seed 000 section 4.1.1: BDI I/O 'shows burstiness with high write rates up to 3.3 GB/s for a short period "
           "of time and low read rates'; section 3.5: 6 parallel users, average record 6 KB",
    assumptions="32 KiB transfers, Db2's page size for column-organized tables (Db2 11.1 'Table page sizes': 32 KB "
                "recommended for them; the seed's 6 KB is the record size); bursts of 3.3 GB/s / 32 KiB = 100,708 IOPS "
                "lasting 200 ms on average, one every 2 s (exponential on/off); 2,000 IOPS between bursts; 20% reads "
                "overall. Only the 3.3 GB/s burst rate and the write-heavy bursts are from the seed",
    data={"kind": "bursty", "on_rate_iops": 100708.0, "off_rate_iops": 2000.0, "mean_on_ms": 200.0, "mean_off_ms": 1800.0,
          "read_fraction": 0.2, "block_size_kib": 32, "access": "sequential"},
)
"""Db2 BDI bursty - seed 000 section 4.1.1 (write bursts up to 3.3 GB/s, low read rates)."""

IO3390 = WorkloadPreset(
    key="io3390",
    title="z/VM IO3390 minidisk writes (20 CMS guests, no think time)",
    source="seed 003 'Minidisk I/O Workload': 'IO3390 reads or writes eight FB-512 blocks per I/O' (4 KiB), 'no delay "
           "between I/Os', 20 IO3390 workers (Table 1 notes); Table 2's first arc is 100% writes",
    assumptions="random block addresses on the minidisk",
    data={"kind": "closed", "jobs": 20, "queue_depth": 1, "read_fraction": 0.0, "block_size_kib": 4, "access": "random"},
)
"""IO3390 - seed 003 (eight FB-512 blocks per I/O, 20 guests, no delay, 100% writes arc)."""

VIRSTOR_PAGING = WorkloadPreset(
    key="virstor_paging",
    title="z/VM CP paging under VIRSTOR (page-read and page-write channel programs)",
    source="seed 003 Table 3 (run PG05903C): paging SSCH 20,878 reads/s with 7 pages per read SSCH and 1,960 writes/s "
           "with 80 pages per write SSCH; total paging SSCH rate 22,838/s",
    assumptions="each SSCH is one I/O of its pages (7 x 4 KiB = 28 KiB reads, 80 x 4 KiB = 320 KiB writes); read "
                "fraction 20,878 / 22,838 = 0.914; Poisson arrivals at the measured SSCH rate; sequential access "
                "(block paging moves runs of contiguous page slots), as in calibration/scenarios/s4_paging.yaml",
    data={"kind": "open", "rate_iops": 22838.0, "read_fraction": 0.914, "access": "sequential",
          "sizes": [{"kib": 28, "op": "read"}, {"kib": 320, "op": "write"}]},
)
"""VIRSTOR paging - seed 003 Table 3 (20,878 read SSCH/s x 7 pages, 1,960 write SSCH/s x 80 pages)."""

IBMI_RPG_WRITE = WorkloadPreset(
    key="ibmi_rpg_write",
    title="IBM i RPG write-file (WF): 24 jobs writing 24 files",
    source="seed 001 'NVMe Stress Tests', Fichier d'écriture (WF): 'Programmes RPG qui écrivent dans 24 fichiers en "
           "même temps ... en 24 tâches', FRCRATIO(1000)",
    assumptions="4 KiB writes with 4 outstanding per job, as in examples/s2_ibmi_8x4_mirrored.yaml; random at the "
                "drives (single-level storage spreads the files' pages over every disk arm and the jobs interleave: on 2 "
                "ES5F the seed's jobs stall at the drives' rated random-write IOPS)",
    data={"kind": "closed", "jobs": 24, "queue_depth": 4, "read_fraction": 0.0, "block_size_kib": 4, "access": "random"},
)
"""IBM i RPG write - seed 001 NVMe stress tests (WF: 24 RPG jobs writing 24 files)."""

IBMI_RPG_READ = WorkloadPreset(
    key="ibmi_rpg_read",
    title="IBM i RPG read-file (RF): 24 jobs reading the files sequentially",
    source="seed 001 'NVMe Stress Tests', Readfile (RF): 'Programmes RPG qui lisent séquentiellement les fichiers ... "
           "en 24 tâches', SEQONLY(*YES 2000)",
    assumptions="64 KiB sequential reads (2,000 blocked records of 75 packed digits = 38 bytes each, about 76 KB, "
                "rounded to 64 KiB); 4 outstanding per job",
    data={"kind": "closed", "jobs": 24, "queue_depth": 4, "read_fraction": 1.0, "block_size_kib": 64, "access": "sequential"},
)
"""IBM i RPG read - seed 001 NVMe stress tests (RF: 24 RPG jobs, SEQONLY(*YES 2000))."""

PRESETS: dict[str, WorkloadPreset] = {
    p.key: p
    for p in (OLTP_4K_70_30, YCSB_READ_ONLY, YCSB_READ_MOSTLY, YCSB_UPDATE_HEAVY, DB2_BDI_BURSTY, IO3390,
              VIRSTOR_PAGING, IBMI_RPG_WRITE, IBMI_RPG_READ)
}
"""Every preset by key."""


def preset_workload(key: str) -> AnyWorkload:
    """The workload of preset ``key``; KeyError lists the known keys."""
    if key not in PRESETS:
        raise KeyError(f"unknown workload preset {key!r}; known presets: {', '.join(PRESETS)}")
    return PRESETS[key].workload


def matching_preset(workload: Any) -> str | None:
    """The key of the preset this workload is exactly (after validation), if any."""
    try:
        model = _WORKLOAD.validate_python(workload)
    except ValidationError:
        return None
    return next((key for key, p in PRESETS.items() if p.workload == model), None)
