"""``flashplan import fio``: fio results become workloads, calibration records and comparisons.

The fixtures in tests/fixtures/fio/ are real fio 3.33 results, made on the 2-vCPU development
VM (Debian 12, ext4 on a virtio disk) with ``apt-get install -y fio``, a 512 MiB test file
``/tmp/flashplan-fixtures/fio.dat``, ``--direct=1`` and 2-3 s per job:

* randread_4k_qd8_libaio.json: ``fio --name=randread-qd8 --ioengine=libaio --rw=randread --bs=4k
  --iodepth=8 --runtime=3 --time_based --lat_percentiles=1 --output-format=json``
* randrw_bssplit_psync_numjobs2_group.json: ``--name=oltp-mix --ioengine=psync --rw=randrw
  --rwmixread=70 --bssplit=4k/50:8k/30:64k/20 --iodepth=4 --numjobs=2 --group_reporting --thinktime=100``
* randwrite_rate_numjobs2.json: ``--name=paced-writes --ioengine=libaio --rw=randwrite --bs=8k
  --iodepth=4 --numjobs=2 --rate_iops=1500`` (no group_reporting: two job entries)
* jobfile_two_groups.json: a job file with a [global] section (filename, size, direct=1, libaio,
  runtime=3, time_based), ``[seq-read-128k] rw=read bs=128k iodepth=8`` and, after ``stonewall``,
  ``[rand-mixed-split] rw=randrw rwmixread=50 bs=4k,16k iodepth=2``
* seqwrite_64k_jsonplus.json: ``--name=seqwrite --rw=write --bs=64k --iodepth=4 --output-format=json+``
* normal_and_json_output.json: ``--rw=randread --bs=16k --iodepth=2 --output-format=normal,json``
  (fio's text report around the JSON)
* group_reporting_mixed_jobs.json: a job file with ``group_reporting``, ``[readers] rw=randread bs=4k
  numjobs=3`` and ``[writer] rw=randwrite bs=8k`` in one group (fio prints one job's options)
* randtrim_loop.json: ``fio --name=trim --filename=/dev/loop0 --rw=randtrim --bs=64k`` on a loop device

Truncated and non-fio inputs are derived here from those files (and from a real ``iostat -o JSON``
capture). The tests need neither fio nor iostat installed.
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from pydantic import TypeAdapter

from calibration.importers import MeasurementFileError
from calibration.importers.fio import (
    PERCENTILE_TOLERANCE_FLOOR,
    THROUGHPUT_TOLERANCE_FLOOR,
    parse_bssplit,
    parse_fio,
    parse_size,
    parse_time_us,
    workload_from_options,
)
from calibration.measured import compare_fio, tolerance_for
from calibration.records import RecordFile, load_records
from models.scenario import load_scenario
from models.workload import ClosedWorkload, OpenWorkload, Workload
from sim.cli.flashplan import main
from tests.conftest import ROOT

FIXTURES = ROOT / "tests" / "fixtures" / "fio"
IOSTAT_JSON = ROOT / "tests" / "fixtures" / "iostat" / "iostat_x_t_json.txt"
MEASURED = ROOT / "examples" / "measured"
GOOD = ["randread_4k_qd8_libaio.json", "randrw_bssplit_psync_numjobs2_group.json", "randwrite_rate_numjobs2.json",
        "jobfile_two_groups.json", "seqwrite_64k_jsonplus.json", "normal_and_json_output.json"]
FUZZ = settings(max_examples=150, deadline=None, derandomize=True, database=None,
                suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
WORKLOAD = TypeAdapter(Workload)
QUICK = {"run.max_ios": 40_000, "run.warmup_ios": 2_000, "run.min_batches": 10, "run.target_rel_ci": 0.03}


def fixture(name: str) -> bytes:
    return (FIXTURES / name).read_bytes()


def raw_json(name: str) -> dict[str, Any]:
    text = fixture(name).decode()
    return json.loads(text[text.index("{"):text.rindex("}") + 1]) if not text.startswith("{") else json.loads(text)


def run_cli(args: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    code = main(args)
    out, err = capsys.readouterr()
    return code, out, err


# --------------------------------------------------------------------------------------------- option syntax


def test_sizes_follow_fio_kb_base_rules() -> None:
    # fio HOWTO, kb_base: the default 1024 is "compatibility mode" (k/K/kB powers of 2, KiB powers of 10)
    assert parse_size("4k") == parse_size("4K") == parse_size("4kb") == 4096
    assert parse_size("4KiB") == 4000
    assert parse_size("1m") == 1 << 20
    assert parse_size("512") == 512
    assert parse_size("4k", kb_base=1000) == 4000 and parse_size("4KiB", kb_base=1000) == 4096
    with pytest.raises(ValueError):
        parse_size("four")


def test_bssplit_blank_entries_share_the_rest() -> None:
    assert parse_bssplit("4k/50:8k:16k") == [(4096, 50.0), (8192, 25.0), (16384, 25.0)]
    assert parse_bssplit("4k/100:8k/0") == [(4096, 100.0)]
    with pytest.raises(ValueError):
        parse_bssplit("4k/70:8k/40")


def test_thinktime_is_microseconds_unless_a_unit_is_given() -> None:
    assert parse_time_us("100") == 100
    assert parse_time_us("2ms") == 2000
    assert parse_time_us("1s") == 1e6


def test_options_map_to_a_closed_workload() -> None:
    wl, notes = workload_from_options({"rw": "randrw", "rwmixwrite": "30", "bs": "8k,64k", "iodepth": "16",
                                       "ioengine": "io_uring", "direct": "1"}, processes=4)
    assert isinstance(wl, ClosedWorkload)
    assert (wl.jobs, wl.queue_depth, wl.read_fraction, wl.access) == (4, 16, 0.7, "random")
    assert wl.size_table("read") == [(8192, 1.0)] and wl.size_table("write") == [(65536, 1.0)]
    assert notes == []


def test_thinktime_caps_the_queue_depth_at_thinktime_blocks() -> None:
    wl, notes = workload_from_options({"rw": "read", "iodepth": "32", "ioengine": "libaio", "direct": "1",
                                       "thinktime": "1ms", "thinktime_blocks": "4"})
    assert isinstance(wl, ClosedWorkload)
    assert (wl.queue_depth, wl.think_time_us, wl.access) == (4, 1000.0, "sequential")
    assert any("caps the queue depth at 4" in n for n in notes)


def test_a_mixed_rate_limit_is_set_by_the_direction_that_reaches_its_cap_first() -> None:
    # 70% reads, each direction capped at 1000 IOPS: reads hit the cap at 1000 / 0.7 I/Os in all
    wl, _ = workload_from_options({"rw": "randrw", "rwmixread": "70", "rate_iops": "1000", "direct": "1"}, processes=2)
    assert isinstance(wl, OpenWorkload)
    assert wl.rate_iops == pytest.approx(2 * 1000 / 0.7)


@pytest.mark.parametrize("rw", ["randsomething", "trim", "randtrim", "trimwrite"])
def test_unknown_or_trim_rw_modes_are_refused(rw: str) -> None:
    with pytest.raises(MeasurementFileError, match="rw"):
        workload_from_options({"rw": rw})


# --------------------------------------------------------------------------------------------- real results


def test_single_job_randread_qd8() -> None:
    doc = raw_json("randread_4k_qd8_libaio.json")
    (job,) = parse_fio(fixture("randread_4k_qd8_libaio.json")).jobs
    wl = job.workload
    assert isinstance(wl, ClosedWorkload)
    assert (wl.jobs, wl.queue_depth, wl.read_fraction, wl.block_size_kib, wl.access) == (1, 8, 1.0, 4.0, "random")
    read = doc["jobs"][0]["read"]
    m = job.measured
    assert m["iops"] == pytest.approx(read["iops"])
    assert m["mbps"] == pytest.approx(read["bw_bytes"] / 1e6)
    assert m["latency_mean_us"] == pytest.approx(read["lat_ns"]["mean"] / 1000)
    # --lat_percentiles=1: total-latency percentiles are taken as printed
    assert m["latency_p99_us"] == pytest.approx(read["lat_ns"]["percentile"]["99.000000"] / 1000)
    assert m["latency_p50_us"] <= m["latency_p95_us"] <= m["latency_p99_us"] <= m["latency_p999_us"]
    # Little's law holds in fio's own numbers: 8 slots kept busy = IOPS x mean latency
    assert m["iops"] * m["latency_mean_us"] / 1e6 == pytest.approx(8, rel=0.05)
    assert "write_iops" not in m and job.notes == ()


def test_group_reporting_numjobs_psync_thinktime_bssplit() -> None:
    (job,) = parse_fio(fixture("randrw_bssplit_psync_numjobs2_group.json")).jobs
    wl = job.workload
    assert isinstance(wl, ClosedWorkload)
    assert job.processes == 2
    assert (wl.jobs, wl.queue_depth, wl.think_time_us, wl.read_fraction) == (2, 1, 100.0, 0.7)
    assert wl.sizes is not None
    assert [(s.kib, s.weight, s.op) for s in wl.sizes] == [(4.0, 50.0, "any"), (8.0, 30.0, "any"), (64.0, 20.0, "any")]
    assert any("psync is synchronous" in n for n in job.notes)
    m = job.measured
    assert m["iops"] == pytest.approx(m["read_iops"] + m["write_iops"])
    # flashplan percentiles cover all I/Os; fio's are per direction, so a mix has none
    assert not any(k.startswith("latency_p") for k in m)
    # measured read share follows rwmixread
    assert m["read_iops"] / m["iops"] == pytest.approx(0.7, abs=0.03)


def test_job_entries_without_group_reporting_are_summed() -> None:
    doc = raw_json("randwrite_rate_numjobs2.json")
    (job,) = parse_fio(fixture("randwrite_rate_numjobs2.json")).jobs
    assert len(doc["jobs"]) == 2 and job.processes == 2
    assert isinstance(job.workload, OpenWorkload)
    assert job.workload.rate_iops == pytest.approx(2 * 1500)
    assert job.workload.read_fraction == 0.0
    writes = [j["write"] for j in doc["jobs"]]
    assert job.measured["iops"] == pytest.approx(sum(w["iops"] for w in writes))
    n = [w["lat_ns"]["N"] for w in writes]
    mean = sum(w["lat_ns"]["mean"] * k for w, k in zip(writes, n, strict=True)) / sum(n) / 1000
    assert job.measured["latency_mean_us"] == pytest.approx(mean)
    # fio held the rate it was asked for
    assert job.measured["iops"] == pytest.approx(3000, rel=0.05)


def test_job_file_groups_and_global_options() -> None:
    result = parse_fio(fixture("jobfile_two_groups.json"))
    seq, mixed = result.jobs
    assert (seq.name, seq.group, mixed.name, mixed.group) == ("seq-read-128k", 0, "rand-mixed-split", 1)
    # direct=1 and ioengine=libaio came from the [global] section
    assert seq.options["direct"] == "1" and seq.options["ioengine"] == "libaio"
    assert isinstance(seq.workload, ClosedWorkload)
    assert (seq.workload.access, seq.workload.block_size_kib, seq.workload.queue_depth) == ("sequential", 128.0, 8)
    assert mixed.workload.size_table("read") == [(4096, 1.0)] and mixed.workload.size_table("write") == [(16384, 1.0)]
    assert mixed.workload.read_fraction == 0.5
    assert result.select("1") == [mixed] and result.select("seq-read-128k") == [seq]
    with pytest.raises(MeasurementFileError, match="no job group named"):
        result.select("nope")


def test_json_plus_and_text_around_the_json() -> None:
    (seq,) = parse_fio(fixture("seqwrite_64k_jsonplus.json")).jobs
    assert (seq.workload.read_fraction, seq.workload.block_size_kib, seq.workload.access) == (0.0, 64.0, "sequential")
    assert seq.measured["mbps"] == pytest.approx(seq.measured["iops"] * 65536 / 1e6, rel=1e-3)
    # no --lat_percentiles: clat percentiles shifted by the mean submission latency, with a note
    assert any("clat" in n for n in seq.notes)
    (rr,) = parse_fio(fixture("normal_and_json_output.json")).jobs
    assert rr.workload.block_size_kib == 16.0 and rr.measured["iops"] > 0


def test_clat_percentiles_are_shifted_by_mean_slat() -> None:
    doc = raw_json("seqwrite_64k_jsonplus.json")
    w = doc["jobs"][0]["write"]
    (job,) = parse_fio(fixture("seqwrite_64k_jsonplus.json")).jobs
    expected = (w["clat_ns"]["percentile"]["50.000000"] + w["slat_ns"]["mean"]) / 1000
    assert job.measured["latency_p50_us"] == pytest.approx(expected)


# --------------------------------------------------------------------------------------------- bad input


def test_group_reporting_over_different_jobs_is_refused() -> None:
    with pytest.raises(MeasurementFileError, match="group_reporting"):
        parse_fio(fixture("group_reporting_mixed_jobs.json"))


def test_trim_result_is_refused() -> None:
    with pytest.raises(MeasurementFileError, match="trims are not modelled"):
        parse_fio(fixture("randtrim_loop.json"))


@pytest.mark.parametrize("keep", [0.01, 0.5, 0.999])
def test_truncated_result_is_refused(keep: float) -> None:
    data = fixture("randread_4k_qd8_libaio.json")
    with pytest.raises(MeasurementFileError, match="truncated"):
        parse_fio(data[: int(len(data) * keep)])


def test_non_fio_json_is_refused() -> None:
    with pytest.raises(MeasurementFileError, match="not a fio result"):
        parse_fio(IOSTAT_JSON.read_bytes())


def test_unknown_rw_mode_in_a_result_is_refused() -> None:
    doc = raw_json("randread_4k_qd8_libaio.json")
    doc["jobs"][0]["job options"]["rw"] = "randsomething"
    with pytest.raises(MeasurementFileError, match="unknown rw mode 'randsomething'"):
        parse_fio(json.dumps(doc))


@pytest.mark.parametrize("data", [b"", b"   \n", b"\xff\xfe\x00garbage", "[1, 2, 3]", '{"fio version": "fio-3.33"}'])
def test_empty_binary_and_shapeless_inputs_are_refused(data: bytes | str) -> None:
    with pytest.raises(MeasurementFileError):
        parse_fio(data)


# --------------------------------------------------------------------------------------------- fuzzing


@FUZZ
@given(st.one_of(st.binary(max_size=400), st.text(max_size=400)))
def test_arbitrary_input_raises_only_the_parsers_error(data: bytes | str) -> None:
    try:
        result = parse_fio(data)
    except MeasurementFileError as exc:
        assert exc.problems and all(field and message for field, message in exc.problems)
    else:
        assert result.jobs


def _paths(node: Any, prefix: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    out = [prefix]
    if isinstance(node, dict):
        for k, v in node.items():
            out.extend(_paths(v, (*prefix, k)))
    elif isinstance(node, list):
        for i, v in enumerate(node):
            out.extend(_paths(v, (*prefix, i)))
    return out


BASE_DOC = raw_json("randwrite_rate_numjobs2.json")
BASE_PATHS = [p for p in _paths(BASE_DOC) if p]
json_values = st.recursive(
    st.none() | st.booleans() | st.integers(-10**6, 10**12) | st.floats(allow_nan=True) | st.text(max_size=12),
    lambda children: st.lists(children, max_size=3) | st.dictionaries(st.text(max_size=6), children, max_size=3),
    max_leaves=6,
)


@FUZZ
@given(st.lists(st.tuples(st.sampled_from(BASE_PATHS), st.one_of(st.just("<delete>"), json_values)), min_size=1, max_size=4))
def test_damaged_real_results_raise_only_the_parsers_error(edits: list[tuple[tuple[Any, ...], Any]]) -> None:
    doc = json.loads(json.dumps(BASE_DOC))
    for path, value in edits:
        node = doc
        try:
            for part in path[:-1]:
                node = node[part]
            if value == "<delete>":
                del node[path[-1]]
            else:
                node[path[-1]] = value
        except (KeyError, IndexError, TypeError):
            continue  # an earlier edit removed this path
    try:
        result = parse_fio(json.dumps(doc))
    except MeasurementFileError:
        return
    for job in result.jobs:
        assert all(math.isfinite(v) and v >= 0 for v in job.measured.values())


@FUZZ
@given(st.integers(min_value=0, max_value=len(fixture("jobfile_two_groups.json"))))
def test_results_cut_anywhere_raise_only_the_parsers_error(cut: int) -> None:
    data = fixture("jobfile_two_groups.json")[:cut]
    try:
        parse_fio(data)
    except MeasurementFileError:
        assert cut < len(fixture("jobfile_two_groups.json").rstrip())


option_text = st.one_of(st.text(max_size=10), st.sampled_from(["4k", "8k,64k", "4k/50:8k", "1ms", "0", "-1", "99999999", ",", "/", ":"]))


@FUZZ
@given(st.dictionaries(st.sampled_from(["rw", "rwmixread", "rwmixwrite", "bs", "bssplit", "bsrange", "iodepth", "ioengine",
                                        "direct", "thinktime", "thinktime_blocks", "rate_iops", "rate", "kb_base"]),
                       option_text, max_size=6),
       st.integers(min_value=1, max_value=64))
def test_any_option_values_give_a_workload_or_the_parsers_error(options: dict[str, str], processes: int) -> None:
    try:
        wl, _ = workload_from_options(options, processes, {"read": 4096.0, "write": 8192.0})
    except MeasurementFileError:
        return
    assert WORKLOAD.validate_python(wl.model_dump()) == wl


# --------------------------------------------------------------------------------------------- records, files, CLI


def test_tolerance_comes_from_fio_sample_spread_with_a_floor() -> None:
    (job,) = parse_fio(fixture("randread_4k_qd8_libaio.json")).jobs
    cv = job.iops_sample_cv
    assert cv is not None and job.iops_samples >= 2
    rel, why = tolerance_for(job, "iops")
    assert rel == pytest.approx(max(THROUGHPUT_TOLERANCE_FLOOR, round(cv, 4)))
    assert "per-interval IOPS samples" in why
    assert tolerance_for(job, "latency_p99_us")[0] >= PERCENTILE_TOLERANCE_FLOOR
    assert tolerance_for(job, "iops", rel=0.05) == (0.05, "set by the user (--tolerance)")


def test_out_and_records_round_trip(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    workload_file = tmp_path / "wl.yaml"
    code, _, err = run_cli(["import", "fio", str(FIXTURES / "randrw_bssplit_psync_numjobs2_group.json"), "--out", str(workload_file)], capsys)
    assert code == 0, err
    (job,) = parse_fio(fixture("randrw_bssplit_psync_numjobs2_group.json")).jobs
    assert WORKLOAD.validate_python(yaml.safe_load(workload_file.read_text())["workload"]) == job.workload

    scenario_file, records_dir = tmp_path / "scenario.yaml", tmp_path / "records"
    records_dir.mkdir()
    code, _, err = run_cli(["import", "fio", str(FIXTURES / "randrw_bssplit_psync_numjobs2_group.json"),
                            "--scenario", str(ROOT / "examples" / "mm8.yaml"), "--set", "run.seed=5",
                            "--out", str(scenario_file), "--records", str(records_dir / "fio.yaml")], capsys)
    assert code == 0, err
    scenario = load_scenario(scenario_file)
    assert scenario.workload == job.workload and scenario.run.seed == 5
    assert scenario.topology.kind == "generic"  # the rest of mm8.yaml is kept
    records = load_records(records_dir)
    assert RecordFile.model_validate(yaml.safe_load((records_dir / "fio.yaml").read_text())).system == "user"
    assert {r.metric for r in records} == set(job.measured)
    for r in records:
        assert r.system == "user" and r.measured == pytest.approx(job.measured[r.metric])
        assert r.scenario is not None and r.scenario.path(records_dir).resolve() == (ROOT / "examples" / "mm8.yaml").resolve()
        assert r.scenario.set["run.seed"] == 5
        assert r.tolerance is not None and r.tolerance.why


def test_compare_against_a_scenario_with_a_known_answer() -> None:
    """8 slots on 8 deterministic 100 us servers never queue: predicted IOPS = 8 / 100 us exactly."""
    (job,) = parse_fio(fixture("randread_4k_qd8_libaio.json")).jobs
    scenario = {"topology": {"kind": "generic", "stations": [{"name": "disk", "servers": 8, "service_time_us": 100,
                                                              "distribution": "deterministic"}]},
                "workload": {"kind": "open", "rate_iops": 1}, "run": {"seed": 3}}
    outcomes = {o.record.metric: o for o in compare_fio([job], scenario, overrides=QUICK)}
    assert set(outcomes) == set(job.measured)
    iops = outcomes["iops"]
    assert iops.error is None and iops.predicted == pytest.approx(80_000, rel=0.02)
    assert iops.rel_error == pytest.approx(iops.predicted / job.measured["iops"] - 1)
    tolerance = iops.record.tolerance
    assert tolerance is not None and tolerance.rel is not None
    assert iops.within == (abs(iops.rel_error) <= tolerance.rel)
    assert outcomes["latency_p50_us"].predicted == pytest.approx(100, rel=0.02)


def test_cli_compare_on_the_measured_example(capsys: pytest.CaptureFixture[str]) -> None:
    sets = [f"--set={k}={v}" for k, v in QUICK.items()]
    code, out, err = run_cli(["import", "fio", str(MEASURED / "vda_randread_4k_qd4_qd16.json"), "--scenario",
                              str(MEASURED / "vda_virtio_generic.yaml"), "--compare", "--json", *sets], capsys)
    assert code == 0, err
    doc = json.loads(out)
    assert [j["name"] for j in doc["jobs"]] == ["vda-qd4", "vda-qd16"]
    for j in doc["jobs"]:
        rows = {c["metric"]: c for c in j["comparison"]}
        assert set(rows) == set(j["measured"])
        for row in rows.values():
            assert row["error"] is None and row["predicted"] > 0
            assert row["rel_error"] == pytest.approx(row["predicted"] / row["measured"] - 1)
    # more slots, more IOPS: the model orders the two runs as the disk did
    qd4, qd16 = ({c["metric"]: c for c in j["comparison"]} for j in doc["jobs"])
    assert qd16["iops"]["predicted"] > qd4["iops"]["predicted"]


def test_cli_human_output(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run_cli(["import", "fio", str(FIXTURES / "jobfile_two_groups.json")], capsys)
    assert code == 0
    assert "fio job 'seq-read-128k' (group 0)" in out and "fio job 'rand-mixed-split' (group 1)" in out
    assert "closed, 1 job(s) x QD 8, 100% reads, 128 KiB, sequential" in out


@pytest.mark.parametrize(("args", "field"), [
    (["tests/fixtures/fio/randtrim_loop.json"], "trims are not modelled"),
    (["tests/fixtures/fio/group_reporting_mixed_jobs.json"], "group_reporting"),
    (["tests/fixtures/iostat/iostat_x_t_json.txt"], "not a fio result"),
    (["tests/fixtures/fio/missing.json"], "no such file"),
    (["tests/fixtures/fio/jobfile_two_groups.json"], "--out: the result holds 2 job groups"),
    (["tests/fixtures/fio/randread_4k_qd8_libaio.json", "--compare"], "--scenario"),
    (["tests/fixtures/fio/randread_4k_qd8_libaio.json", "--scenario", "examples/mm1.yaml", "--set", "workload.queue_depth=-1"],
     "workload.queue_depth"),
    (["tests/fixtures/fio/randread_4k_qd8_libaio.json", "--tolerance", "2"], "--tolerance"),
])
def test_bad_input_exits_2_and_writes_nothing(args: list[str], field: str, tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                             monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(ROOT)
    out_file, records_file = tmp_path / "out.yaml", tmp_path / "records.yaml"
    extra = ["--out", str(out_file)] + (["--records", str(records_file)] if "--scenario" in args else [])
    code, _, err = run_cli(["import", "fio", *args, *extra], capsys)
    assert code == 2
    assert field in err and "Traceback" not in err
    assert not out_file.exists() and not records_file.exists()
    assert list(tmp_path.iterdir()) == []


# --------------------------------------------------------------------------------------------- text before the JSON, size limits


def test_text_before_the_json_is_skipped_in_one_reading() -> None:
    """Log lines that open with ``{`` before the JSON (fio ... 2>&1): the result is the one without them, and the
    document is found from its ``{ "fio version"`` line, whatever text comes before or after it."""
    clean = parse_fio(fixture("randread_4k_qd8_libaio.json"))
    noise = "{io_u error on file /dev/sdb: Input/output error: read offset=3211264, buflen=4096}\n" * 2_000
    for data in (noise + fixture("randread_4k_qd8_libaio.json").decode(),
                 noise + fixture("randread_4k_qd8_libaio.json").decode() + "\n{trailing text}\n",
                 "fio-3.33\n" + json.dumps(raw_json("randread_4k_qd8_libaio.json"), indent=None)):
        result = parse_fio(data)
        assert [j.measured for j in result.jobs] == [j.measured for j in clean.jobs]
        assert [j.workload for j in result.jobs] == [j.workload for j in clean.jobs]


def test_text_without_a_json_object_is_refused_once() -> None:
    with pytest.raises(MeasurementFileError, match="not valid JSON"):
        parse_fio("{not json\n" * 50_000)
    with pytest.raises(MeasurementFileError, match=r"no JSON object in the file \(no line starts with '\{'\)"):
        parse_fio("fio: job startup failed\n" * 1_000)


def test_a_document_too_large_to_hold_is_refused_before_it_is_built(monkeypatch: pytest.MonkeyPatch) -> None:
    import calibration.importers
    import calibration.importers.fio as fio

    doc = raw_json("randread_4k_qd8_libaio.json")
    doc["jobs"][0]["junk"] = [0] * 5_000
    monkeypatch.setattr(calibration.importers, "MAX_JSON_VALUES", 4_000)
    for text in (json.dumps(doc), "fio: warning\n" + json.dumps(doc, indent=1)):
        with pytest.raises(MeasurementFileError, match=r"the JSON holds about [\d,]+ values \([\d,]+ characters\); the importer "
                                                       r"holds at most 4,000"):
            parse_fio(text)
    monkeypatch.setattr(fio, "MAX_FIO_BYTES", 1_000)
    with pytest.raises(MeasurementFileError, match=r"file is [\d,]+ bytes; the fio importer reads at most 1,000"):
        parse_fio(fixture("randread_4k_qd8_libaio.json"))


def _limit_memory() -> None:
    import resource

    resource.setrlimit(resource.RLIMIT_AS, (1 << 30, 1 << 30))


@pytest.mark.parametrize(("extra", "code", "message"), [
    (0, 0, ""),  # 10 MB of log lines before the JSON: found in one reading
    (2_100_000, 2, "the JSON holds about 2,100,"),  # an array past what the importer holds: refused unbuilt
])
def test_large_files_import_or_are_refused_under_1_gib(extra: int, code: int, message: str, tmp_path: Path) -> None:
    import os
    import subprocess
    import sys

    from bench.importers_memory import fio_with_text

    path = tmp_path / "fio.json"
    if extra:
        path.write_text(json.dumps(raw_json("randread_4k_qd8_libaio.json"))[:-1] + ', "samples": [' + "0.5," * extra + "0.5]}")
    else:
        path.write_text(fio_with_text(10.0))
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    proc = subprocess.run([sys.executable, "-m", "sim.cli.flashplan", "import", "fio", str(path), "--json"], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=900, preexec_fn=_limit_memory)  # a hang guard, not a speed test
    assert proc.returncode == code, proc.stderr[-2000:]
    assert message in proc.stderr and "Traceback" not in proc.stderr
    if code == 0:
        assert json.loads(proc.stdout)["jobs"][0]["name"] == "randread-qd8"
