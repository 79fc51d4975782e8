"""``flashplan import iostat``: the peak interval of an ``iostat -x`` log becomes a workload.

The fixtures in tests/fixtures/iostat/ are real sysstat 12.6.1 captures (``apt-get install -y
sysstat``) from the 2-vCPU development VM: vda is its virtio disk, loop0 a 256 MiB loop device
(``losetup -f --show`` on a file in /tmp). Each capture ran ten 1-second reports while fio drove
the disks: 2 s idle, 3 s of 4 KiB random reads at QD16 on a file on vda, then 3 s of 128 KiB
sequential writes to loop0 and to the file on vda at once. So every file has a 4 KiB-read peak
by IOPS and a 128 KiB-write peak by MB/s.

* iostat_x_t_vda_loop0.txt: ``iostat -x -t 1 10`` (timestamps)
* iostat_x_m_d.txt: ``iostat -x -m -d 1 10`` (MB/s columns, no CPU section)
* iostat_x_human.txt: ``iostat -x -h 1 10`` (one block per column group, k/M/G size suffixes)
* iostat_x_t_de_DE.txt: ``LC_ALL=de_DE.UTF-8 iostat -x -t 1 10`` (decimal commas, German dates)
* iostat_x_t_json.txt: ``iostat -x -t -o JSON 1 10``
* iostat_cpu_only.txt: ``iostat -c 1 2`` (no device lines: bad input)

The tests need neither fio nor iostat installed.
"""

from __future__ import annotations

import json
import math
import re
from pathlib import Path

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from pydantic import TypeAdapter

from calibration.importers import MeasurementFileError, workload_data
from calibration.importers.iostat import choose_devices, parse_iostat, parse_value
from models.scenario import load_scenario, scenario_from_data
from models.workload import ClosedWorkload, OpenWorkload, Workload
from sim import simulate
from sim.cli.flashplan import main
from tests.conftest import FAST_RUN, ROOT

FIXTURES = ROOT / "tests" / "fixtures" / "iostat"
LOADED = ["iostat_x_t_vda_loop0.txt", "iostat_x_m_d.txt", "iostat_x_human.txt", "iostat_x_t_de_DE.txt", "iostat_x_t_json.txt"]
FUZZ = settings(max_examples=150, deadline=None, derandomize=True, database=None,
                suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
WORKLOAD = TypeAdapter(Workload)


def fixture(name: str) -> bytes:
    return (FIXTURES / name).read_bytes()


def run_cli(args: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    code = main(args)
    out, err = capsys.readouterr()
    return code, out, err


def plain_reports(text: str, device: str) -> list[dict[str, float]]:
    """An independent reading of plain ``iostat -x`` text: one {column: value} per report for ``device``."""
    reports, header = [], None
    for line in text.splitlines():
        tokens = line.split()
        if tokens[:1] == ["Device"]:
            header = tokens
        elif header and tokens[:1] == [device]:
            reports.append({c: float(v.replace(",", ".")) for c, v in zip(header[1:], tokens[1:], strict=True)})
    return reports


# --------------------------------------------------------------------------------------------- real captures


@pytest.mark.parametrize("name", LOADED)
def test_peaks_find_the_random_reads_and_the_large_writes(name: str) -> None:
    report = parse_iostat(fixture(name), name)
    assert len(report.intervals) == 10 and report.skipped_first
    assert report.devices == ["vda"] and set(report.all_devices) == {"vda", "loop0"}
    assert any("left out loop0" in n for n in report.notes)
    by_iops, by_mbps = report.peak_iops, report.peak_mbps
    assert by_iops is not by_mbps
    # the QD16 4 KiB random-read phase: tens of thousands of reads, ~4 KiB each
    assert by_iops.iops > 10_000 and by_iops.read_fraction > 0.99
    assert by_iops.read_kib == pytest.approx(4.0, rel=0.05)
    # the 128 KiB sequential-write phase: mostly writes of ~128 KiB (human output keeps 1 decimal of the MB/s)
    assert by_mbps.read_fraction < 0.05 and by_mbps.write_kib == pytest.approx(128, rel=0.05)
    assert by_mbps.mbps > by_iops.mbps
    assert by_iops.iops == max(i.iops for i in report.candidates)
    assert by_mbps.mbps == max(i.mbps for i in report.candidates)
    assert by_iops.queue_size is not None and by_iops.queue_size > 1


@pytest.mark.parametrize("name", ["iostat_x_t_vda_loop0.txt", "iostat_x_t_de_DE.txt"])
def test_sums_match_an_independent_reading_of_the_columns(name: str) -> None:
    text = fixture(name).decode()
    rows = plain_reports(text, "vda")[1:]  # the first report averages since boot
    report = parse_iostat(text)
    assert report.peak_iops.iops == pytest.approx(max(r["r/s"] + r["w/s"] for r in rows))
    peak = max(rows, key=lambda r: (r["rkB/s"] + r["wkB/s"]))
    assert report.peak_mbps.mbps == pytest.approx((peak["rkB/s"] + peak["wkB/s"]) * 1024 / 1e6)
    assert report.peak_mbps.queue_size == pytest.approx(peak["aqu-sz"])
    assert report.peak_mbps.timestamp is not None and re.search(r"\d\d:\d\d:\d\d", report.peak_mbps.timestamp)


def test_megabyte_columns_convert_to_decimal_mb() -> None:
    text = fixture("iostat_x_m_d.txt").decode()
    peak = max(plain_reports(text, "vda")[1:], key=lambda r: r["rMB/s"] + r["wMB/s"])
    assert parse_iostat(text).peak_mbps.mbps == pytest.approx((peak["rMB/s"] + peak["wMB/s"]) * 2**20 / 1e6)


def test_devices_can_be_chosen_and_are_summed() -> None:
    text = fixture("iostat_x_t_vda_loop0.txt")
    loop = parse_iostat(text, devices=["loop*"])
    both = parse_iostat(text, devices=["vda", "loop0"])
    vda = parse_iostat(text)
    assert loop.devices == ["loop0"] and sorted(both.devices) == ["loop0", "vda"]
    for a, b, c in zip(both.intervals, vda.intervals, loop.intervals, strict=True):
        assert a.iops == pytest.approx(b.iops + c.iops)
        assert a.mbps == pytest.approx(b.mbps + c.mbps)
    with pytest.raises(MeasurementFileError, match="matches no device"):
        parse_iostat(text, devices=["sdz"])


def test_default_devices_leave_out_partitions_and_loop_devices_and_warn_about_stacking() -> None:
    notes: list[str] = []
    names = ["sda", "sda1", "nvme0n1", "nvme0n1p2", "dm-0", "loop3", "zram0"]
    assert choose_devices(names, None, notes) == ["sda", "nvme0n1", "dm-0"]
    assert any("sda1, nvme0n1p2, loop3, zram0" in n for n in notes)
    assert any("dm-0 sit on other block devices" in n for n in notes)
    assert choose_devices(names, ["nvme*"], []) == ["nvme0n1", "nvme0n1p2"]


def test_keep_first_makes_the_since_boot_report_a_candidate() -> None:
    text = fixture("iostat_x_t_vda_loop0.txt")
    kept = parse_iostat(text, keep_first=True)
    assert not kept.skipped_first and kept.candidates == kept.intervals
    assert len(parse_iostat(text).candidates) == len(kept.candidates) - 1


def test_values_in_every_notation() -> None:
    assert parse_value("12,50", "r/s") == 12.5
    assert parse_value("45.0%", "%util") == 45.0
    assert parse_value("3.5M", "rkB/s") == pytest.approx(3.5 * 1024)
    assert parse_value("128.0k", "wareq-sz") == 128.0
    assert parse_value("1.5G", "wMB/s") == pytest.approx(1.5 * 1024)
    with pytest.raises(ValueError):
        parse_value("1.2k", "r/s")


# --------------------------------------------------------------------------------------------- workloads


def test_open_and_closed_workloads_of_a_peak() -> None:
    report = parse_iostat(fixture("iostat_x_t_vda_loop0.txt"))
    peak = report.peak_mbps
    open_wl = peak.workload("open")
    assert isinstance(open_wl, OpenWorkload)
    assert open_wl.rate_iops == pytest.approx(peak.iops, rel=1e-6)
    assert open_wl.read_fraction == pytest.approx(peak.read_fraction, abs=1e-6)
    assert open_wl.mean_bytes() == pytest.approx(peak.mbps * 1e6 / peak.iops, rel=0.01)
    closed = peak.workload("closed", access="sequential")
    assert isinstance(closed, ClosedWorkload)
    assert peak.queue_size is not None
    assert closed.queue_depth == max(1, round(peak.queue_size)) and closed.access == "sequential"


def test_a_peak_workload_simulates() -> None:
    """The imported open workload runs in a scenario; a stable queue completes what is offered."""
    wl = parse_iostat(fixture("iostat_x_t_json.txt")).peak_iops.workload("open")
    assert isinstance(wl, OpenWorkload)
    servers = 16
    service_us = 0.6 * servers / wl.rate_iops * 1e6  # utilization 0.6
    scenario = scenario_from_data({
        "topology": {"kind": "generic", "stations": [{"name": "disk", "servers": servers, "service_time_us": service_us}]},
        "workload": workload_data(wl), "run": {"seed": 2},
    }, FAST_RUN)
    result = simulate(scenario)
    assert result.iops.value == pytest.approx(wl.rate_iops, rel=0.05)
    assert result.utilization["disk"] == pytest.approx(0.6, abs=0.05)


# --------------------------------------------------------------------------------------------- bad input and fuzzing


def test_no_device_lines_is_refused() -> None:
    with pytest.raises(MeasurementFileError, match="no device lines"):
        parse_iostat(fixture("iostat_cpu_only.txt"))


@pytest.mark.parametrize("data", [b"", b"\x00\xff\xfe", (ROOT / "tests" / "fixtures" / "fio" / "randread_4k_qd8_libaio.json").read_bytes()])
def test_other_files_are_refused(data: bytes) -> None:
    with pytest.raises(MeasurementFileError):
        parse_iostat(data)


@FUZZ
@given(st.one_of(st.binary(max_size=400), st.text(max_size=400)))
def test_arbitrary_input_raises_only_the_parsers_error(data: bytes | str) -> None:
    try:
        result = parse_iostat(data)
    except MeasurementFileError as exc:
        assert exc.problems and all(field and message for field, message in exc.problems)
    else:
        assert result.intervals and result.peak_iops.iops > 0


BASE_LINES = fixture("iostat_x_t_vda_loop0.txt").decode().splitlines()
tokens = st.sampled_from(["", "Device", "avg-cpu:", "vda", "nan", "inf", "-1", "1e400", "12,5", "3.5M", "9%", "x", "11:22:33"])


@FUZZ
@given(st.lists(st.tuples(st.integers(0, len(BASE_LINES) - 1), st.sampled_from(["drop", "dup", "cut", "token"]),
                          st.integers(0, 200), tokens), min_size=1, max_size=6))
def test_damaged_real_logs_raise_only_the_parsers_error(edits: list[tuple[int, str, int, str]]) -> None:
    lines = list(BASE_LINES)
    for index, action, position, token in edits:
        i = index % len(lines) if lines else 0
        if not lines:
            break
        if action == "drop":
            del lines[i]
        elif action == "dup":
            lines.insert(i, lines[i])
        elif action == "cut":
            lines[i] = lines[i][:position]
        else:
            words = lines[i].split() or [""]
            words[position % len(words)] = token
            lines[i] = " ".join(words)
    try:
        report = parse_iostat("\n".join(lines))
    except MeasurementFileError:
        return
    for interval in report.intervals:
        assert math.isfinite(interval.iops) and interval.iops >= 0 and math.isfinite(interval.mbps)
    try:
        wl = report.peak_iops.workload("open")
    except MeasurementFileError:
        return
    assert WORKLOAD.validate_python(wl.model_dump()) == wl


# --------------------------------------------------------------------------------------------- CLI


def test_cli_json(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run_cli(["import", "iostat", str(FIXTURES / "iostat_x_human.txt"), "--json", "--as", "closed"], capsys)
    assert code == 0, err
    doc = json.loads(out)
    assert doc["devices"] == ["vda"] and doc["reports"] == 10 and doc["skipped_first"] is True
    for key in ("iops", "mbps"):
        peak = doc["peaks"][key]
        assert peak["workload"]["kind"] == "closed"
        assert peak["workload"]["queue_depth"] == max(1, round(peak["queue_size"]))


def test_cli_out_writes_a_scenario_simulate_accepts(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    target = tmp_path / "peak.yaml"
    code, out, err = run_cli(["import", "iostat", str(FIXTURES / "iostat_x_t_de_DE.txt"), "--peak", "mbps",
                              "--access", "sequential", "--scenario", str(ROOT / "examples" / "mm8.yaml"), "--out", str(target)], capsys)
    assert code == 0, err
    assert "peak by IOPS" in out and "wrote" in out
    scenario = load_scenario(target)
    peak = parse_iostat(fixture("iostat_x_t_de_DE.txt")).peak_mbps
    assert isinstance(scenario.workload, OpenWorkload)
    assert scenario.workload.rate_iops == pytest.approx(peak.iops) and scenario.workload.access == "sequential"
    code, out, err = run_cli(["simulate", str(target), "--json", *(f"--set={k}={v}" for k, v in FAST_RUN.items())], capsys)
    assert code == 0, err
    assert json.loads(out)["iops"]["value"] == pytest.approx(peak.iops, rel=0.05)

    workload_only = tmp_path / "wl.yaml"
    code, _, err = run_cli(["import", "iostat", str(FIXTURES / "iostat_x_t_de_DE.txt"), "--out", str(workload_only)], capsys)
    assert code == 0, err
    data = yaml.safe_load(workload_only.read_text())
    assert set(data) == {"workload"}
    assert WORKLOAD.validate_python(data["workload"]).kind == "open"


def test_sweep_and_plan_accept_the_imported_load(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from models.requirements import load_requirements
    from sim.plan.sweep import load_sweep, plan_sweep

    target = tmp_path / "peak.yaml"
    code, _, err = run_cli(["import", "iostat", str(FIXTURES / "iostat_x_t_vda_loop0.txt"), "--scenario",
                            str(ROOT / "examples" / "mm8.yaml"), "--out", str(target)], capsys)
    assert code == 0, err
    rate = parse_iostat(fixture("iostat_x_t_vda_loop0.txt")).peak_iops.iops
    sweep = tmp_path / "sweep.yaml"
    sweep.write_text(yaml.safe_dump({"base": "peak.yaml", "factors": {"topology.stations.0.servers": [16, 32]}}))
    plan = plan_sweep(load_sweep(sweep))
    assert len(plan.runs) == 2 and not any(r.invalid for r in plan.runs)
    assert all(r.scenario["workload"]["rate_iops"] == pytest.approx(rate) for r in plan.runs)

    requirements = yaml.safe_load((ROOT / "examples" / "plan" / "ibmi_oltp.yaml").read_text())
    requirements["workload"] = yaml.safe_load(target.read_text())["workload"]
    req_file = tmp_path / "req.yaml"
    req_file.write_text(yaml.safe_dump(requirements))
    assert load_requirements(req_file).workload_model.kind == "open"


@pytest.mark.parametrize(("args", "message"), [
    (["iostat_cpu_only.txt"], "no device lines"),
    (["iostat_x_t_vda_loop0.txt", "--device", "sdq"], "--device"),
    (["iostat_x_t_vda_loop0.txt", "--set", "run.seed=2"], "--set"),
    (["iostat_x_t_vda_loop0.txt", "--scenario", "missing.yaml"], "no such file"),
])
def test_cli_bad_input_exits_2_and_writes_nothing(args: list[str], message: str, tmp_path: Path,
                                                  capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(FIXTURES)
    target = tmp_path / "out.yaml"
    code, _, err = run_cli(["import", "iostat", *args, "--out", str(target)], capsys)
    assert code == 2
    assert message in err and "Traceback" not in err
    assert not target.exists() and list(tmp_path.iterdir()) == []


# --------------------------------------------------------------------------------------------- scale, cut-off captures, clocks


def test_partitions_are_found_by_the_kernels_naming() -> None:
    """A disk whose name ends in a digit numbers its partitions after a ``p``: dm-12 and nvme0n12 are devices of their own."""
    notes: list[str] = []
    names = ["dm-1", "dm-12", "md1", "md12", "nvme0n1", "nvme0n12", "nvme0n1p1", "sdp", "sdp1", "sdaa", "sda", "sda12", "mmcblk0p1"]
    assert choose_devices(names, None, notes) == ["dm-1", "dm-12", "md1", "md12", "nvme0n1", "nvme0n12", "sdp", "sdaa", "sda",
                                                  "mmcblk0p1"]
    assert any(n.startswith("left out nvme0n1p1, sdp1, sda12 (") for n in notes)


def test_a_long_device_list_is_noted_briefly() -> None:
    notes: list[str] = []
    names = [f"sd{chr(97 + i // 26)}{chr(97 + i % 26)}" for i in range(300)]
    chosen = choose_devices(names + [n + "1" for n in names], None, notes)
    assert chosen == names
    assert notes == [f"left out {', '.join(n + '1' for n in names[:10])} and 290 more (loop/RAM/optical devices and partitions; "
                     "name them with --device to include)"]


def test_a_capture_cut_off_mid_report_leaves_that_report_out() -> None:
    text = fixture("iostat_x_t_vda_loop0.txt").decode()
    banner, rest = text.split("\n\n", 1)
    reports = rest.split("\n\n\n")
    # cut after the second report's CPU lines: only the since-boot report has devices
    with pytest.raises(MeasurementFileError, match="one report, iostat's first, which averages since boot"):
        parse_iostat(banner + "\n\n" + reports[0] + "\n\n\n" + reports[1].split("Device")[0])
    assert len(parse_iostat(banner + "\n\n" + reports[0], keep_first=True).candidates) == 1
    # cut inside the third report's device lines: vda's line is missing or half written
    whole = parse_iostat(banner + "\n\n" + "\n\n\n".join(reports[:3]))
    for cut in (reports[2].rsplit("\nvda", 1)[0], reports[2][:-40]):
        report = parse_iostat(banner + "\n\n" + "\n\n\n".join([*reports[:2], cut]), devices=["vda", "loop0"])
        assert len(report.intervals) == 2 and len(whole.intervals) == 3
        assert report.candidates == parse_iostat(banner + "\n\n" + "\n\n\n".join(reports[:2]), devices=["vda", "loop0"]).candidates
        assert any("report 3 (11/21/26 02:37:09), holds fewer devices or columns than the one before" in n for n in report.notes)
        alone = parse_iostat(banner + "\n\n" + "\n\n\n".join([*reports[:2], cut]))  # vda only: the last report has none of it
        assert [iv.index for iv in alone.intervals] == [0, 1]
        assert any("the last report, from line 21, holds none of the chosen devices" in n for n in alone.notes)


def _timed(stamps: list[str]) -> str:
    """A plain ``iostat -x -t -d`` log with one device and a report at each timestamp."""
    header = "Device            r/s     rkB/s     w/s     wkB/s  aqu-sz  %util"
    out = ["Linux 6.1.0 (host) \t11/21/26 \t_x86_64_\t(2 CPU)", ""]
    for i, stamp in enumerate(stamps):
        out += [stamp, header, f"sda   {100 + i:.2f}  400.00  10.00  40.00  0.50  3.00", "", ""]
    return "\n".join(out)


def test_timestamps_that_go_back_are_refused_naming_the_line() -> None:
    with pytest.raises(MeasurementFileError) as err:
        parse_iostat(_timed([f"11/21/26 10:00:{s}" for s in (20, 25, 15, 30)]), keep_first=True)
    (field, message), = err.value.problems
    assert field == "iostat output: line 13" and "'11/21/26 10:00:15' is earlier than '11/21/26 10:00:25' (line 8)" in message
    with pytest.raises(MeasurementFileError, match="line 13: timestamp"):
        parse_iostat(_timed(["10:00:20", "10:00:25", "10:00:15"]))


@pytest.mark.parametrize("stamps", [
    ["11/21/26 23:59:40", "11/21/26 23:59:50", "11/22/26 00:00:00", "11/22/26 00:00:10"],  # the date changes at midnight
    ["23:59:40", "23:59:50", "00:00:00", "00:00:10"],  # no date: a step of 10 s across midnight
    ["2026-11-21T23:59:40+0100", "2026-11-21T23:59:50+0100", "2026-11-22T00:00:00+0100", "2026-11-22T00:00:10+0100"],  # ISO
    ["11/21/2026 12:59:40 PM", "11/21/2026 12:59:50 PM", "11/21/2026 01:00:00 PM", "11/21/2026 01:00:10 PM"],  # 12-hour clock
])
def test_midnight_passing_keeps_the_sampling_interval(stamps: list[str]) -> None:
    profile = parse_iostat(_timed(stamps)).profile()
    assert [iv.duration_s for iv in profile.intervals] == [10.0] * 3
    assert [iv.label for iv in profile.intervals] == [f"report {i + 1} ({s})" for i, s in enumerate(stamps)][1:]


def test_a_step_back_of_more_than_an_hour_without_a_date_is_not_midnight() -> None:
    with pytest.raises(MeasurementFileError, match="'01:30:00' is earlier than '23:59:50'"):
        parse_iostat(_timed(["23:59:40", "23:59:50", "01:30:00"]))


def test_limits_refuse_what_the_importer_cannot_hold(monkeypatch: pytest.MonkeyPatch) -> None:
    import calibration.importers
    import calibration.importers.iostat as iostat

    text = _timed([f"10:00:{s:02d}" for s in range(0, 50, 10)])
    monkeypatch.setattr(iostat, "MAX_REPORTS", 4)
    with pytest.raises(MeasurementFileError, match="more than 4 reports; the importer holds at most 4"):
        parse_iostat(text)
    monkeypatch.setattr(iostat, "MAX_REPORTS", 5)
    assert len(parse_iostat(text).intervals) == 5
    monkeypatch.setattr(iostat, "MAX_PROFILE_INTERVALS", 3)
    with pytest.raises(MeasurementFileError, match="4 reports; a profile holds at most 3 intervals"):
        parse_iostat(text).profile()
    monkeypatch.setattr(iostat, "MAX_DEVICES", 1)
    with pytest.raises(MeasurementFileError, match="line 10: more than 1 devices"):
        parse_iostat(text.replace("\nsda ", "\nsdb ", 1).replace("\nsda ", "\nsdc ", 1))
    monkeypatch.setattr(iostat, "MAX_DEVICES", 2)
    monkeypatch.setattr(iostat, "MAX_REPORTS", 10)
    assert len(parse_iostat(fixture("iostat_x_t_json.txt")).intervals) == 10
    monkeypatch.setattr(calibration.importers, "MAX_JSON_VALUES", 100)
    with pytest.raises(MeasurementFileError, match=r"the JSON holds about [\d,]+ values .* at most 100 \(import the text output"):
        parse_iostat(fixture("iostat_x_t_json.txt"))


def test_memory_held_grows_with_reports_not_lines() -> None:
    """A report is held as a few numbers: 1,000 reports of 4 devices cost well under 1 kB each beyond the file itself."""
    import tracemalloc

    others = "".join(f"{name}   1.00  4.00  1.00  4.00  0.50  3.00\n" for name in ("sdb", "sdc", "sdd"))
    text = _timed([f"{10 + s // 3600:02d}:{s // 60 % 60:02d}:{s % 60:02d}" for s in range(1_000)]).replace("\nsda ", f"\n{others}sda ")
    data = text.encode()
    tracemalloc.start()
    try:
        report = parse_iostat(data)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert len(report.candidates) == 999 and report.devices == ["sdb", "sdc", "sdd", "sda"]
    assert peak < 1_000 * 400 + 200_000, peak


def _limit_memory() -> None:
    import resource

    resource.setrlimit(resource.RLIMIT_AS, (1 << 30, 1 << 30))


def test_a_san_host_with_thousands_of_paths_imports_under_1_gib(tmp_path: Path) -> None:
    """5,000 devices (sd paths, partitions, dm maps) in 3 reports: linear work, run in a process capped at 1 GiB."""
    import os
    import subprocess
    import sys

    from bench.importers_memory import device_names, iostat_devices

    path = tmp_path / "san.txt"
    path.write_text(iostat_devices(5_000, reports=3))
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    proc = subprocess.run([sys.executable, "-m", "sim.cli.flashplan", "import", "iostat", str(path), "--json"], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=900, preexec_fn=_limit_memory)  # a hang guard, not a speed test
    assert proc.returncode == 0, proc.stderr[-2000:]
    doc = json.loads(proc.stdout)
    names = device_names(5_000)
    assert len(doc["all_devices"]) == 5_000 and doc["devices"] == [n for n in names if not n.endswith("1") or n.startswith("dm-")]
    assert doc["reports"] == 3 and doc["peaks"]["iops"]["devices"] == doc["devices"]
