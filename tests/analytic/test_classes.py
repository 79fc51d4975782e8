"""The multi-class fast path (sim/analytic/classes.py): reads of one workload wait for the programs of
another's writes on the same flash dies (``Dies``), and a placed workload loads only its own members."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from models.scenario import scenario_from_data
from sim.analytic import evaluate
from sim.cli.flashplan import main

S1_NVME = {"kind": "direct_nvme", "host": {"model": "LinuxONE-Emperor4-LPAR30", "stack": "linux_nvme"}, "drive": "PM1733-1.92TB",
           "drives": 4, "adapter": "IBM-NVMe-Carrier-0448", "adapters": 4, "layout": "raid10", "chunk_kib": 256}
READS = {"name": "reads", "kind": "open", "rate_iops": 20_000, "read_fraction": 1.0, "block_size_kib": 8}


def writes(rate: float, **more: Any) -> dict[str, Any]:
    return {"name": "writes", "kind": "open", "rate_iops": rate, "read_fraction": 0.0, "block_size_kib": 32, **more}


def two(write_rate: float, **more: Any) -> Any:
    return evaluate(scenario_from_data({"topology": S1_NVME, "workloads": [READS, writes(write_rate, **more)]}))


def test_reads_wait_for_the_other_workloads_programs_in_proportion_to_their_rate() -> None:
    """A read meets a die programming for the writer with probability X_w T / dies and waits E[T^2] / 2E[T]:
    the extra is linear in the writer's rate (the writer's own latency does not move with it, writes are
    acknowledged from the drive's cache), and it lands on the reads only."""
    alone = evaluate(scenario_from_data({"topology": S1_NVME, "workload": {k: v for k, v in READS.items() if k != "name"}}))
    extra = {}
    for rate in (10_000.0, 20_000.0, 40_000.0):
        r = two(rate).workloads
        assert r is not None
        extra[rate] = r["reads"].latency_mean_us - alone.latency_mean_us
        assert r["reads"].read_latency_mean_us == pytest.approx(r["reads"].latency_mean_us)
        assert r["writes"].read_latency_mean_us == 0.0
    assert extra[10_000.0] > 0
    # linear in the writer's rate, up to the (small) queueing interference of the shared links
    assert extra[20_000.0] == pytest.approx(2 * extra[10_000.0], rel=0.1)
    assert extra[40_000.0] == pytest.approx(4 * extra[10_000.0], rel=0.1)


def test_a_placed_workload_loads_only_its_members(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """The writes placed on members 0 and 1 (a RAID-10 pair on drives 0 and 1) move no bytes to drives 2 and 3,
    and twice a spread writer's to drives 0 and 1; the result carries no note about placement."""
    spread, placed = two(10_000.0), two(10_000.0, placement=[0, 1])
    assert placed.notes == () == spread.notes
    to_device = [placed.utilization[f"drive{d}.link.to_device"] for d in range(4)]
    assert to_device[2] == to_device[3] == 0.0
    assert sum(to_device) == pytest.approx(sum(spread.utilization[f"drive{d}.link.to_device"] for d in range(4)), rel=1e-9)
    assert to_device[0] == pytest.approx(2 * spread.utilization["drive0.link.to_device"], rel=1e-9)
    path = tmp_path / "placed.json"
    path.write_text(json.dumps({"topology": S1_NVME, "workloads": [READS, writes(10_000.0, placement=[0, 1])]}))
    assert main(["analyze", str(path)]) == 0
    assert "placement" not in capsys.readouterr().out


@pytest.mark.parametrize("k", [1, 2, 4, 8])
@pytest.mark.parametrize("p", [0.01, 0.15, 0.6])
def test_a_split_read_waits_for_its_slowest_device_read(k: int, p: float) -> None:
    """E[max] of k independent waits, each exponential (mean 1) with probability p: by the binomial number j
    of reads that wait, sum_j C(k, j) p^j (1 - p)^(k - j) H_j (H_j: the mean of the largest of j exponentials)."""
    from math import comb

    from sim.analytic.classes import _slowest_of

    expected = sum(comb(k, j) * p ** j * (1 - p) ** (k - j) * sum(1 / i for i in range(1, j + 1)) for j in range(1, k + 1))
    assert _slowest_of(float(k), p) == pytest.approx(expected, rel=1e-3)
    assert _slowest_of(float(k), p) <= k * p + 1e-12  # never more than the sum of the waits
