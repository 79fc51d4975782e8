"""``flashplan export fio`` and ``import fio --against``: the job files reproduce each workload (the fio importer
reads the same workload back from fio's own results), fio accepts every exported file, and the comparison sets
each job's measurements beside the prediction it was exported with."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from calibration.fio_loop import ExportOptions, Forecast, des_forecast, fast_forecast, fio_jobs, target
from calibration.importers.fio import histogram_percentile_ns, parse_fio, workload_from_options
from models.scenario import scenario_from_data
from models.workload import ClosedWorkload, OpenWorkload
from sim.cli.flashplan import main
from tests.conftest import EXAMPLES, fast

FIO = shutil.which("fio")
needs_fio = pytest.mark.skipif(FIO is None, reason="Debian's fio is not installed (make fio installs it)")

RAID10 = {"kind": "direct_nvme", "drives": 4, "layout": "raid10"}

TWO: dict[str, Any] = {
    "name": "two workloads",
    "topology": RAID10,
    "workloads": [
        {"name": "oltp", "kind": "closed", "jobs": 2, "queue_depth": 4, "read_fraction": 0.7, "block_size_kib": 4},
        {"name": "logger", "kind": "open", "rate_iops": 400, "read_fraction": 0.0, "block_size_kib": 8},
    ],
}

PROFILE: dict[str, Any] = {
    "name": "profile",
    "topology": RAID10,
    "workload": {"kind": "profile", "read_fraction": 1.0, "block_size_kib": 4, "warmup_s": 0.2, "intervals": [
        {"duration_s": 0.6, "rate_iops": 500, "label": "quiet"},
        {"duration_s": 0.6, "queue_depth": 4, "read_fraction": 0.5, "label": "busy"},
    ]},
}


def sections(text: str) -> dict[str, dict[str, str]]:
    """A job file's sections: name -> {option: value} (a flag option has the value '')."""
    out: dict[str, dict[str, str]] = {}
    current: dict[str, str] = {}
    for line in text.splitlines():
        if not line or line.startswith(";"):
            continue
        if m := re.fullmatch(r"\[(.+)\]", line):
            current = out.setdefault(m.group(1), {})
        else:
            key, _, value = line.partition("=")
            current[key] = value
    return out


def export(data: dict[str, Any], **options: Any) -> tuple[dict[str, dict[str, str]], dict[str, Any]]:
    scenario = scenario_from_data(data)
    done = fio_jobs(fast_forecast(scenario, "test"), ExportOptions(**options))
    return sections(done.job_file), done.manifest


# ---------------------------------------------------------------------------------------------- the job file


def test_closed_and_open_workloads_become_concurrent_groups() -> None:
    jobs, manifest = export(TWO, runtime_s=30, ramp_s=2)
    g, oltp, logger = jobs["global"], jobs["oltp"], jobs["logger"]
    assert g["ioengine"] == "libaio" and g["direct"] == "1" and g["randrepeat"] == "0" and g["time_based"] == "1"
    assert g["percentile_list"] == "50:95:99:99.9" and g["lat_percentiles"] == "1"
    assert (oltp["rw"], oltp["rwmixread"], oltp["bs"], oltp["numjobs"], oltp["iodepth"]) == ("randrw", "70", "4096", "2", "4")
    assert (logger["rw"], logger["rate_iops"], logger["rate_process"]) == ("randwrite", "400", "poisson")
    assert int(logger["iodepth"]) >= 16
    # concurrent: no stonewall, each its own reporting group, the same measured window
    assert "stonewall" not in logger and "new_group" in logger
    assert oltp["runtime"] == logger["runtime"] == "30" and oltp["ramp_time"] == logger["ramp_time"] == "2"
    assert oltp["filename"] == logger["filename"] == "/dev/md/REPLACE_ME"
    assert [j["name"] for j in manifest["jobs"]] == ["oltp", "logger"]
    assert manifest["jobs"][0]["predicted"]["iops"]["value"] > 0


def test_an_open_mix_is_rated_per_direction_and_split_over_jobs() -> None:
    data = {"topology": RAID10, "workload": {"kind": "open", "rate_iops": 250_000, "read_fraction": 0.7,
                                             "sizes": [{"kib": 4, "weight": 3}, {"kib": 64, "weight": 1}]}}
    jobs, _ = export(data, iops_per_job=100_000, engine="io_uring")
    main_job = jobs["main"]
    assert jobs["global"]["ioengine"] == "io_uring"
    assert main_job["numjobs"] == "3"
    reads, writes = (int(x) for x in main_job["rate_iops"].split(","))
    # 3 jobs x (reads + writes) is the offered rate, at the mix's read share
    assert 3 * (reads + writes) == pytest.approx(250_000, rel=1e-4)
    assert reads / (reads + writes) == pytest.approx(0.7, abs=1e-4)
    assert main_job["bssplit"] == "4096/75:65536/25"


def test_think_time_with_depth_becomes_one_job_per_slot() -> None:
    data = {"topology": RAID10, "workload": {"kind": "closed", "jobs": 3, "queue_depth": 4, "think_time_us": 250,
                                             "read_fraction": 1, "access": "sequential"}}
    jobs, manifest = export(data)
    main_job = jobs["main"]
    assert (main_job["numjobs"], main_job["iodepth"], main_job["thinktime"]) == ("12", "1", "250us")
    assert main_job["rw"] == "read" and main_job["offset_increment"] == "8%"
    assert any("each I/O slot a job" in n for n in manifest["jobs"][0]["notes"])


def test_a_profile_is_one_job_per_interval_in_turn() -> None:
    jobs, manifest = export(PROFILE)
    first, second = jobs["main.i0"], jobs["main.i1"]
    assert first["runtime"] == "600ms" and first["ramp_time"] == "200ms" and first["rate_iops"] == "500"
    assert "stonewall" in second and "ramp_time" not in second
    assert (second["numjobs"], second["iodepth"], second["rwmixread"]) == ("1", "4", "50")
    assert [(j["interval"], j["label"]) for j in manifest["jobs"]] == [(0, "quiet"), (1, "busy")]


def test_a_profile_beside_a_steady_workload_starts_each_interval_at_its_time() -> None:
    data = {**PROFILE, "workload": None, "workloads": [
        {**PROFILE["workload"], "name": "batch"},
        {"name": "ycsb", "kind": "closed", "jobs": 4, "queue_depth": 1, "think_time_us": 500},
    ]}
    del data["workload"]
    jobs, _ = export(data)
    assert "stonewall" not in jobs["batch.i1"] and jobs["batch.i1"]["startdelay"] == "800ms"
    # the steady workload runs through the warm-up and the whole profile
    assert jobs["ycsb"]["ramp_time"] == "200ms" and jobs["ycsb"]["runtime"] == "1200ms"


def test_targets_are_placeholders_for_the_volume_or_each_member() -> None:
    jbod = scenario_from_data({"topology": {**RAID10, "layout": "jbod", "drives": 3}, "workload": {"kind": "closed"}})
    assert target(jbod, "main", None)[0] == "/dev/REPLACE_ME_0:/dev/REPLACE_ME_1:/dev/REPLACE_ME_2"
    assert target(jbod, "w", [2])[0] == "/dev/REPLACE_ME_2"
    raid = scenario_from_data({"topology": RAID10, "workload": {"kind": "closed"}})
    assert target(raid, "hot", [0, 1, 2, 3])[0] == "/dev/md/REPLACE_ME_hot"
    san = scenario_from_data({"topology": {"kind": "san", "layout": "jbod", "luns": 2}, "workload": {"kind": "closed"}})
    assert target(san, "main", None)[0] == "/dev/mapper/REPLACE_ME_0:/dev/mapper/REPLACE_ME_1"


def test_bad_input_exits_2_naming_the_field(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["export", "fio", str(EXAMPLES / "consolidation_oltp_batch_backup.yaml"), "--solver", "fast",
                 "--set", "workloads.1.off_rate_iops=100"]) == 2
    assert "workloads.1.off_rate_iops" in capsys.readouterr().err
    assert main(["export", "fio", str(EXAMPLES / "mm1.yaml"), "--solver", "fast", "--runtime-s", "-1"]) == 2
    assert "--runtime-s" in capsys.readouterr().err
    (tmp_path / "manifest.json").write_text('{"format": "something else"}')
    (tmp_path / "r.json").write_text((Path(__file__).parent.parent / "fixtures" / "fio" / "randread_4k_qd8_libaio.json").read_text())
    assert main(["import", "fio", str(tmp_path / "r.json"), "--against", str(tmp_path)]) == 2
    assert "not a manifest written by `flashplan export fio`" in capsys.readouterr().err


# ---------------------------------------------------------------------------------------------- fio accepts them


def parse_only(job_file: Path) -> None:
    assert FIO is not None
    done = subprocess.run([FIO, "--parse-only", str(job_file)], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, f"fio --parse-only {job_file}: {done.stdout}{done.stderr}"


def examples() -> list[Any]:
    """examples/*.yaml; the fast path of a profile among several workloads (one multi-class network per interval)
    takes tens of seconds on the shared machine: marked slow."""
    return [pytest.param(p, id=p.stem, marks=[pytest.mark.slow] if p.stem == "linuxone_bdi_batch_and_ycsb" else [])
            for p in sorted(EXAMPLES.glob("*.yaml"))]


@needs_fio
@pytest.mark.parametrize("example", examples())
def test_fio_parses_the_jobs_of_every_example(example: Path, tmp_path: Path) -> None:
    assert main(["export", "fio", str(example), "--solver", "fast", "--out", str(tmp_path / "x")]) == 0
    parse_only(tmp_path / "x" / "jobs.fio")
    manifest = json.loads((tmp_path / "x" / "manifest.json").read_text())
    assert manifest["jobs"] and all(j["idle"] or j["predicted"]["iops"]["value"] for j in manifest["jobs"])


PLAN_BUDGET = ["--solver", "fast", "--verify-top", "1", "--set", "verify.max_ios=2000", "--set", "verify.warmup_ios=200"]
NARROW_GRID = {
    # the consolidation screen runs the multi-class fast path on every candidate of the grid (minutes): one of them
    "linuxone_consolidation": ["--set", "candidates.include_san=false", "--set", "candidates.devices=[PM1733-1.92TB]",
                               "--set", "candidates.device_counts=[4]", "--set", "candidates.layouts=[raid10]"],
}


@needs_fio
@pytest.mark.slow
@pytest.mark.parametrize("plan", sorted((EXAMPLES / "plan").glob("*.*")), ids=lambda p: p.stem)
def test_fio_parses_the_jobs_of_every_plan_example(plan: Path, tmp_path: Path) -> None:
    extra = NARROW_GRID.get(plan.stem, [])
    assert main(["export", "fio", str(plan), *PLAN_BUDGET, *extra, "--out", str(tmp_path / "x")]) == 0
    parse_only(tmp_path / "x" / "jobs.fio")
    assert "the plan's winner" in json.loads((tmp_path / "x" / "manifest.json").read_text())["source"]


# ---------------------------------------------------------------------------------------------- the round trip


def run_fio(directory: Path, tmp_path: Path) -> Path:
    """Run an export's jobs against a temporary file (the test fills the placeholders); fio's JSON results."""
    assert FIO is not None
    data = tmp_path / "data.bin"
    text = (directory / "jobs.fio").read_text()
    text = re.sub(r"^filename=.*REPLACE_ME.*$", f"filename={data}\nsize=16m", text, flags=re.MULTILINE)
    (directory / "jobs.fio").write_text(text)
    results = tmp_path / "results.json"
    done = subprocess.run([FIO, "--output-format=json+", f"--output={results}", str(directory / "jobs.fio")],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stdout + done.stderr
    return results


def export_dir(data: dict[str, Any], tmp_path: Path, *extra: str) -> Path:
    source = tmp_path / "scenario.json"
    source.write_text(json.dumps(data))
    sets = [f"--set={k}={v}" for k, v in fast().items()]
    assert main(["export", "fio", str(source), *sets, "--out", str(tmp_path / "export"), *extra]) == 0
    return tmp_path / "export"


@needs_fio
@pytest.mark.slow
def test_round_trip_two_workloads(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    directory = export_dir(TWO, tmp_path, "--runtime-s", "1.5", "--ramp-s", "0.2")
    results = run_fio(directory, tmp_path)
    # fio ran the workloads the scenario describes: its importer reads them back from fio's own results
    jobs = {j.name: j for j in parse_fio(results.read_bytes()).jobs}
    oltp, logger = jobs["oltp"].workload, jobs["logger"].workload
    assert isinstance(oltp, ClosedWorkload) and (oltp.jobs, oltp.queue_depth, oltp.read_fraction, oltp.block_size_kib) == (2, 4, 0.7, 4)
    assert isinstance(logger, OpenWorkload) and logger.rate_iops == 400 and logger.read_fraction == 0
    capsys.readouterr()
    assert main(["import", "fio", str(results), "--against", str(directory), "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    manifest = json.loads((directory / "manifest.json").read_text())
    assert [c["job"] for c in doc["jobs"]] == ["oltp", "logger"]
    for c, exported in zip(doc["jobs"], manifest["jobs"], strict=True):
        rows = {r["metric"]: r for r in c["rows"]}
        assert {"iops", "latency_mean_us", "latency_p50_us"} <= set(rows)
        iops = rows["iops"]
        # each row holds the prediction the job was exported with, and its error against the measurement
        assert iops["predicted"] == exported["predicted"]["iops"]
        assert iops["rel_error"] == pytest.approx((iops["predicted"]["value"] - iops["measured"]) / iops["measured"])
    # an open job offers its rate whatever the file under it (a Poisson stream: within 30% in 1.5 s)
    logger_iops = next(r for r in doc["jobs"][1]["rows"] if r["metric"] == "iops")["measured"]
    assert logger_iops == pytest.approx(400, rel=0.3)
    # the read/write mix's percentiles come from fio's merged histograms, in fio's own method
    raw = json.loads(results.read_text())
    entry = next(j for j in raw["jobs"] if j["jobname"] == "logger")["write"]["lat_ns"]
    bins = {float(k): v for k, v in entry["bins"].items()}
    assert histogram_percentile_ns(bins, 50.0) == entry["percentile"]["50.000000"]


@needs_fio
@pytest.mark.slow
def test_round_trip_profile_against_the_scenario(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    directory = export_dir(PROFILE, tmp_path)
    results = run_fio(directory, tmp_path)
    source = tmp_path / "scenario.json"
    capsys.readouterr()
    # against the scenario file: predicted again (same seed: the same figures as the export's)
    sets = [f"--set={k}={v}" for k, v in fast().items()]
    assert main(["import", "fio", str(results), "--against", str(source), *sets, "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert [(c["job"], c["interval"]) for c in doc["jobs"]] == [("main.i0", 0), ("main.i1", 1)]
    manifest = json.loads((directory / "manifest.json").read_text())
    for c, exported in zip(doc["jobs"], manifest["jobs"], strict=True):
        assert {r["metric"]: r["predicted"] for r in c["rows"]}["iops"] == exported["predicted"]["iops"]
    assert main(["import", "fio", str(results), "--against", str(directory)]) == 0
    out = capsys.readouterr().out
    assert "fio job 'main.i1' (group 1): workload main, interval 1 (busy)" in out


@pytest.mark.slow
def test_des_forecast_of_a_profile_has_one_job_per_interval() -> None:
    from sim.des.engine import simulate

    scenario = scenario_from_data(PROFILE, fast())
    forecast: Forecast = des_forecast(scenario, simulate(scenario))
    assert sorted(forecast.jobs) == [("main", 0), ("main", 1)]
    assert forecast.warmup_s == 0.2 and forecast.seed == scenario.run.seed
    assert all(f["iops"].ci95 is None or f["iops"].ci95[0] <= f["iops"].value <= f["iops"].ci95[1]
               for f in forecast.jobs.values())


def test_a_jbod_spreads_each_io_over_its_devices_at_random() -> None:
    jobs, _ = export({"topology": {**RAID10, "layout": "jbod", "drives": 2}, "workload": {"kind": "closed"}})
    assert jobs["main"]["filename"] == "/dev/REPLACE_ME_0:/dev/REPLACE_ME_1"
    assert jobs["main"]["file_service_type"] == "random"


# ---------------------------------------------------------------------------------------------- options read back


def read_back(data: dict[str, Any]) -> tuple[Any, dict[str, str]]:
    """The workload fio's importer reads from the exported job's options (global and job section merged)."""
    scenario = scenario_from_data({"topology": RAID10, "workload": data})
    forecast = Forecast(scenario, "fast", None, "test", 0.0, "no warm-up", {})
    jobs = sections(fio_jobs(forecast).job_file)
    options = {**jobs["global"], **jobs["main"]}
    workload, _ = workload_from_options(options, int(options["numjobs"]))
    return workload, options


mixes = st.builds(lambda pct, kib, seq: {"read_fraction": pct / 100, "block_size_kib": kib,
                                         "access": "sequential" if seq else "random"},
                  st.integers(0, 100), st.sampled_from([0.5, 4, 8, 64, 256]), st.booleans())


@given(mix=mixes, jobs=st.integers(1, 64), depth=st.integers(1, 64), think=st.one_of(st.just(0), st.integers(1, 5000)))
def test_a_closed_loop_is_read_back_from_its_job_options(mix: dict[str, Any], jobs: int, depth: int, think: int) -> None:
    wl, _ = read_back({"kind": "closed", "jobs": jobs, "queue_depth": depth, "think_time_us": think, **mix})
    assert isinstance(wl, ClosedWorkload)
    assert (wl.read_fraction, wl.block_size_kib, wl.access) == (mix["read_fraction"], mix["block_size_kib"], mix["access"])
    assert wl.think_time_us == think
    # the same I/O slots; a think time holds each slot on its own (one job per slot)
    assert wl.jobs * wl.queue_depth == jobs * depth
    assert (wl.jobs, wl.queue_depth) == ((jobs, depth) if not think else (jobs * depth, 1))


@given(mix=mixes, rate=st.floats(1, 2e6), per_job=st.sampled_from([50_000, 100_000]))
def test_an_open_rate_is_read_back_from_its_job_options(mix: dict[str, Any], rate: float, per_job: int) -> None:
    scenario = scenario_from_data({"topology": RAID10, "workload": {"kind": "open", "rate_iops": rate, **mix}})
    forecast = Forecast(scenario, "fast", None, "test", 0.0, "no warm-up", {})
    jobs = sections(fio_jobs(forecast, ExportOptions(iops_per_job=per_job)).job_file)
    options = {**jobs["global"], **jobs["main"]}
    n = int(options["numjobs"])
    wl, _ = workload_from_options(options, n)
    assert isinstance(wl, OpenWorkload) and options["rate_process"] == "poisson"
    assert rate / n <= per_job * (1 + 1e-9)
    # fio takes whole IOPS per direction and job: the total is off by at most half an I/O per second and job
    # in the direction with the smaller share
    share = min(mix["read_fraction"], 1 - mix["read_fraction"]) or 1.0
    assert abs(wl.rate_iops - rate) <= n * (0.5 / share + 1e-6)
    assert wl.read_fraction == mix["read_fraction"]
