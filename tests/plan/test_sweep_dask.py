"""Sweeps on a real Dask cluster: a `dask scheduler` and two `dask worker` processes on 127.0.0.1.

The cluster is the .venv's own dask CLI on free ports (``bench.sweep.DaskCluster``), torn down
by process group when the module's tests end. The same sweep run through the cluster and in
this process must agree point by point, bit for bit (wall time aside): per-run seeds come from
SeedSequence keyed by the point, not by where or in which order it runs.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pandas as pd
import pytest

from bench.sweep import DaskCluster
from sim.cli.flashplan import main
from sim.plan.sweep import journal_path, load_sweep, run_sweep
from tests.conftest import EXAMPLES

SMALL_RUN = {"run.max_ios": 20_000, "run.warmup_ios": 2_000, "run.min_batches": 10, "run.target_rel_ci": 0.03}
ZVM_SWEEP = EXAMPLES / "sweeps" / "zvm_aliases.yaml"


@pytest.fixture(scope="module")
def cluster() -> Iterator[DaskCluster]:
    with DaskCluster(workers=2) as running:
        yield running


def comparable(frame: pd.DataFrame) -> pd.DataFrame:
    return frame.drop(columns=["wall_seconds"]).reset_index(drop=True)


def test_the_cluster_gives_the_local_rows_point_by_point(cluster: DaskCluster, tmp_path: Path) -> None:
    spec = load_sweep(ZVM_SWEEP, SMALL_RUN)
    out = tmp_path / "cluster.parquet"
    on_cluster = run_sweep(spec, out=out, scheduler=cluster.address, progress=False)
    local = run_sweep(spec, workers=1, progress=False)
    assert len(on_cluster) == 24 and (on_cluster["status"] == "ok").all()
    pd.testing.assert_frame_equal(comparable(on_cluster), comparable(local))
    pd.testing.assert_frame_equal(comparable(pd.read_parquet(out)), comparable(on_cluster), check_dtype=False)
    assert not journal_path(out).exists()
    # more aliases, more concurrent paths to the EDEV: read IOPS never fall as aliases are added
    reads = on_cluster[on_cluster["workload.read_fraction"] == 1.0]
    assert reads["iops"].is_monotonic_increasing


def test_the_cli_runs_on_the_cluster_and_resumes_there(cluster: DaskCluster, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "results.csv"
    sets = [f"--set={k}={v}" for k, v in SMALL_RUN.items()]
    args = ["sweep", str(ZVM_SWEEP), "--out", str(out), "--scheduler", cluster.address, "--no-progress", *sets]
    assert main(args) == 0
    first = capsys.readouterr().out
    assert "24 runs (24 run now, 0 reused" in " ".join(first.split())
    assert main([*args, "--resume"]) == 0
    assert "24 runs (0 run now, 24 reused" in " ".join(capsys.readouterr().out.split())
    assert len(pd.read_csv(out)) == 24
