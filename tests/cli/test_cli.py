"""The flashplan command: every example simulates, bad input exits 2 with field-named messages."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from sim.cli.flashplan import main
from tests.conftest import EXAMPLES, FAST_RUN, steady_examples

REQUIRED_METRICS = (
    "iops", "read_iops", "write_iops", "mbps", "latency_mean_us", "latency_p50_us", "latency_p95_us",
    "latency_p99_us", "read_latency_mean_us", "write_latency_mean_us", "cpu_us_per_io",
)
FAST_SETS = [f"--set={k}={v}" for k, v in FAST_RUN.items()]


def run_cli(args: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    code = main(args)
    out, err = capsys.readouterr()
    return code, out, err


@pytest.mark.parametrize("example", steady_examples(), ids=lambda p: p.stem)
def test_every_example_simulates_to_json(example: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run_cli(["simulate", str(example), "--json", *FAST_SETS], capsys)
    assert code == 0, err
    document = json.loads(out)
    # a scenario with faults reports each state (healthy, degraded, rebuilding) with the usual metrics
    for data in document["states"].values() if "states" in document else [document]:
        _check_simulation_json(data)


def _check_simulation_json(data: dict[str, Any]) -> None:
    for key in REQUIRED_METRICS:
        value, (lo, hi) = data[key]["value"], data[key]["ci95"]
        assert lo <= value <= hi, key
    assert data["iops"]["value"] > 0
    assert data["latency_mean_us"]["value"] > 0
    assert data["bottleneck"] in data["utilization"]
    assert all(0.0 <= u <= 1.0 for u in data["utilization"].values())
    assert data["stop_reason"]
    assert data["simulated_ios"] >= 1_000
    assert data["seed"] == 1


def test_human_output_is_a_table(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run_cli(["simulate", str(EXAMPLES / "mm1.yaml"), *FAST_SETS], capsys)
    assert code == 0
    assert "latency p99" in out and "95% CI" in out and "bottleneck: server" in out


def test_overrides_change_the_run(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run_cli(["simulate", str(EXAMPLES / "mm1.yaml"), "--json", *FAST_SETS,
                            "--set", "workload.rate_iops=50000", "--set", "topology.stations.0.service_time_us=5"], capsys)
    assert code == 0
    data = json.loads(out)
    assert data["scenario"]["workload"]["rate_iops"] == 50000
    assert data["utilization"]["server"] == pytest.approx(0.25, abs=0.02)


def test_toml_and_json_scenarios(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    toml_file = tmp_path / "q.toml"
    toml_file.write_text(
        '[topology]\nkind = "generic"\n[[topology.stations]]\nservers = 2\nservice_time_us = 10\n'
        '[workload]\nkind = "open"\nrate_iops = 100000\n[run]\nmax_ios = 20000\nwarmup_ios = 1000\nmin_batches = 5\n'
    )
    json_file = tmp_path / "q.json"
    json_file.write_text(json.dumps({
        "topology": {"kind": "generic", "stations": [{"servers": 2, "service_time_us": 10}]},
        "workload": {"kind": "open", "rate_iops": 100000},
        "run": {"max_ios": 20000, "warmup_ios": 1000, "min_batches": 5},
    }))
    for f in (toml_file, json_file):
        code, out, err = run_cli(["simulate", str(f), "--json"], capsys)
        assert code == 0, err
        assert json.loads(out)["utilization"]["device"] == pytest.approx(0.5, abs=0.03)


def test_schema_and_catalog(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run_cli(["schema"], capsys)
    assert code == 0
    schema = json.loads(out)
    assert {"topology", "workload", "run"} <= set(schema["properties"])
    code, out, _ = run_cli(["catalog", "--json"], capsys)
    assert code == 0
    cat = json.loads(out)
    assert cat["drives"]["ES5F"]["read_kiops"] == 1600
    code, out, _ = run_cli(["catalog"], capsys)
    assert code == 0 and "ECTB" in out and "EJ1Y" in out


def _write(tmp_path: Path, text: str, name: str = "s.yaml") -> str:
    p = tmp_path / name
    p.write_text(text)
    return str(p)


DIRECT = """
topology:
  kind: direct_nvme
  drive: {drive}
  drives: {drives}
  adapter: {adapter}
  adapters: 1
  layout: {layout}
  namespaces: {{per_drive: {ns}}}
workload:
  kind: closed
  jobs: 4
  queue_depth: {qd}
"""


def direct(**kw: object) -> str:
    values = {"drive": "ES5F", "drives": 4, "adapter": "EJ1Y", "layout": "raid10", "ns": 1, "qd": 4}
    values.update(kw)
    return DIRECT.format(**values)


BAD_INPUTS = {
    "raid10_odd_drives": (direct(drives=3), "topology.layout: raid10 needs an even number of drives >= 4, got 3"),
    "unknown_drive": (direct(drive="XYZ123"), "topology.drive: unknown catalog model 'XYZ123'"),
    "unknown_adapter": (direct(adapter="EJ9Z"), "topology.adapter: unknown catalog model 'EJ9Z'"),
    "too_many_drives_for_jbof": (direct(drives=10, adapter="EJ1X", layout="raid0"), "topology.drives: 10 drives on 1 EJ1X adapter(s)"),
    "too_many_namespaces": (direct(ns=65, drive="ECTB"), "topology.namespaces.per_drive: ECTB supports at most 64 namespaces, got 65"),
    "negative_queue_depth": (direct(qd=-4), "workload.queue_depth: Input should be greater than or equal to 1"),
    "unknown_key": (direct() + "bogus: 1\n", "bogus: unknown field"),
    "unknown_nested_key": (direct().replace("adapters: 1", "adapters: 1\n  colour: blue"), "topology.colour: unknown field"),
    "unknown_kind": (direct().replace("kind: direct_nvme", "kind: floppy"), "topology: unknown kind 'floppy'"),
    "yaml_syntax": ("topology: [kind: generic\n", "not valid YAML"),
    "not_a_mapping": ("- 1\n- 2\n", "expected a mapping at the top level"),
}


@pytest.mark.parametrize("name", sorted(BAD_INPUTS))
def test_bad_input_exits_2_with_field_messages(name: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    text, expected = BAD_INPUTS[name]
    code, out, err = run_cli(["simulate", _write(tmp_path, text)], capsys)
    assert code == 2
    assert expected in err, err
    assert "Traceback" not in err and out == ""


def test_missing_file(capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = run_cli(["simulate", "/nonexistent/scenario.yaml"], capsys)
    assert code == 2
    assert "/nonexistent/scenario.yaml: no such file" in err


def test_unknown_suffix(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = run_cli(["simulate", _write(tmp_path, "x", "s.txt")], capsys)
    assert code == 2 and "unknown format '.txt'" in err


def test_bad_overrides(capsys: pytest.CaptureFixture[str]) -> None:
    mm1 = str(EXAMPLES / "mm1.yaml")
    code, _, err = run_cli(["simulate", mm1, "--set", "topology.stations.5.servers=2"], capsys)
    assert code == 2 and "topology.stations.5: list index must be 0..0" in err
    code, _, err = run_cli(["simulate", mm1, "--set", "noequals"], capsys)
    assert code == 2 and "dotted.path=VALUE" in err
    code, _, err = run_cli(["simulate", mm1, "--set", "workload.read_fraction=1.5", "--set", "run.seed=-1"], capsys)
    assert code == 2
    assert "workload.read_fraction: Input should be less than or equal to 1, got 1.5" in err
    assert "run.seed: Input should be greater than or equal to 0, got -1" in err


def test_console_script_exit_code() -> None:
    """The installed entry point returns 2 on bad input, with no traceback."""
    proc = subprocess.run([sys.executable, "-m", "sim.cli", "simulate", "missing.yaml"], capture_output=True, text=True, check=False)
    assert proc.returncode == 2
    assert "missing.yaml: no such file" in proc.stderr and "Traceback" not in proc.stderr


def _strict_json(text: str) -> dict:
    """Parse JSON as RFC 8259 has it: NaN and Infinity are errors."""
    def refuse(name: str) -> None:
        raise ValueError(f"{name} in strict JSON")

    return json.loads(text, parse_constant=refuse)


def test_overload_is_reported_unstable_first_with_exit_3(capsys: pytest.CaptureFixture[str]) -> None:
    """M/M/1 offered 120% of its capacity: the utilization law names the station; exit 3, printed first."""
    over = [str(EXAMPLES / "mm1.yaml"), *FAST_SETS, "--set", "workload.rate_iops=120000"]
    code, out, _ = run_cli(["simulate", *over], capsys)
    assert code == 3
    first = out.strip().splitlines()[0]
    assert first.startswith("UNSTABLE") and "server" in first, first
    offered_pct = float(re.search(r"\((\d+)% of its capacity\)", first).group(1))  # type: ignore[union-attr]
    assert offered_pct == pytest.approx(120, abs=3)
    code, out, _ = run_cli(["simulate", *over, "--json"], capsys)
    data = _strict_json(out)
    assert code == 3 and data["validity"] == "unstable" and "server" in data["validity_note"]
    assert data["bottleneck"] == "server"


def test_load_below_capacity_is_not_unstable(capsys: pytest.CaptureFixture[str]) -> None:
    """The same queue at rho = 0.9 (examples/mm1.yaml): stable, whatever the budget."""
    code, out, _ = run_cli(["simulate", str(EXAMPLES / "mm1.yaml"), *FAST_SETS, "--json"], capsys)
    data = _strict_json(out)
    assert code == 0 and data["validity"] in ("precise", "cut_short")
    assert data["utilization"]["server"] == pytest.approx(0.9, abs=0.03)


def test_closed_workload_is_never_unstable(capsys: pytest.CaptureFixture[str]) -> None:
    """64 I/Os in flight on M/M/1's station: saturated (utilization ~1) but bounded, so not unstable."""
    code, out, _ = run_cli(["simulate", str(EXAMPLES / "mm1.yaml"), *FAST_SETS, "--json",
                            "--set", "workload={kind: closed, jobs: 64, queue_depth: 1, read_fraction: 1.0}"], capsys)
    data = _strict_json(out)
    assert code == 0 and data["validity"] != "unstable"
    assert data["utilization"]["server"] > 0.99


def test_tiny_budget_gives_strict_json_and_an_honest_stop_reason(capsys: pytest.CaptureFixture[str]) -> None:
    """max_ios=100 is spent inside the 5,000-I/O warm-up: exactly 100 I/Os run, nothing is measured,
    every metric is null with a reason (no NaN in the JSON)."""
    code, out, _ = run_cli(["simulate", str(EXAMPLES / "mm1.yaml"), "--json", "--set", "run.max_ios=100"], capsys)
    data = _strict_json(out)
    assert code == 0
    assert data["simulated_ios"] == 100 and data["measured_ios"] == 0
    assert "100 I/Os simulated" in data["stop_reason"]
    assert data["validity"] == "cut_short" and "warm-up" in data["validity_note"]
    assert data["iops"] == {"value": None, "ci95": None, "ci95_note": "nothing was measured"}


def test_io_budget_stops_inside_a_batch(capsys: pytest.CaptureFixture[str]) -> None:
    """The I/O budget holds to the completion, not to the next batch boundary (batches of 5,000)."""
    code, out, _ = run_cli(["simulate", str(EXAMPLES / "mm1.yaml"), "--json", "--set", "run.max_ios=12345",
                            "--set", "run.warmup_ios=1000", "--set", "run.batch_ios=5000", "--set", "run.min_batches=5"], capsys)
    data = _strict_json(out)
    assert code == 0 and data["simulated_ios"] == 12345
    assert data["measured_ios"] == 10_000  # two whole batches; the unfinished third is not measured


def test_wall_budget_holds_in_the_warm_up(capsys: pytest.CaptureFixture[str]) -> None:
    """A warm-up of 10^9 I/Os with a 0.3 s wall budget stops within the budget, not after the warm-up."""
    code, out, _ = run_cli(["simulate", str(EXAMPLES / "mm1.yaml"), "--json", "--set", "run.warmup_ios=1000000000",
                            "--set", "run.max_ios=10000000000", "--set", "run.max_wall_s=0.3"], capsys)
    data = _strict_json(out)
    assert code == 0 and data["validity"] == "cut_short"
    assert data["stop_reason"].startswith("budget: max_wall_s=0.3 s reached after")
    assert 0 < data["simulated_ios"] < 5_000_000


def test_every_json_output_is_strict(capsys: pytest.CaptureFixture[str]) -> None:
    """analyze, import and catalog --json parse under RFC 8259 (no NaN, no Infinity), an unstable
    analysis (exit 3) included."""
    fixtures = Path(__file__).resolve().parent.parent / "fixtures"
    for args, expected in ((["analyze", str(EXAMPLES / "mm1.yaml"), "--json"], 0),
                           (["analyze", str(EXAMPLES / "mm1.yaml"), "--json", "--set", "workload.rate_iops=150000"], 3),
                           (["import", "iostat", str(fixtures / "iostat" / "iostat_x_t_vda_loop0.txt"), "--json"], 0),
                           (["import", "fio", str(fixtures / "fio" / "randread_4k_qd8_libaio.json"), "--json"], 0),
                           (["export", "fio", str(EXAMPLES / "mm1.yaml"), "--solver", "fast", "--json"], 0),
                           (["catalog", "--json"], 0)):
        code, out, err = run_cli(args, capsys)
        assert code == expected, (args, err)
        _strict_json(out)


def test_raid_over_namespaces_of_one_drive_warns_on_stderr(capsys: pytest.CaptureFixture[str]) -> None:
    """RAID-5 over 4 namespaces per drive puts 4 members of the group on each drive: one drive failure
    loses the volume, so simulate warns (stderr, the JSON stays clean); the mirrored example does not."""
    example = str(EXAMPLES / "s2_ibmi_8x4_mirrored.yaml")
    code, out, err = run_cli(["simulate", example, "--json", *FAST_SETS, "--set", "topology.layout=raid5"], capsys)
    assert code == 0 and json.loads(out)["scenario"]["topology"]["layout"] == "raid5"
    assert "warning: RAID-5 here is built from namespaces that share drives" in " ".join(err.split())
    assert "survives 0 drive failure(s), not 1" in " ".join(err.split())
    code, out, err = run_cli(["simulate", example, "--json", *FAST_SETS], capsys)
    assert code == 0 and "warning" not in err


def test_analyze_says_unstable_first_and_exits_3(capsys: pytest.CaptureFixture[str]) -> None:
    """An open load above Xmax: the fast path's first line says so, as simulate's does, and the exit code is 3."""
    code, out, _ = run_cli(["analyze", str(EXAMPLES / "mm1.yaml"), "--set", "workload.rate_iops=500000"], capsys)
    assert code == 3
    assert out.lstrip().startswith("UNSTABLE: the offered rate exceeds Xmax")
    code, out, _ = run_cli(["analyze", str(EXAMPLES / "mm1.yaml"), "--json", "--set", "workload.rate_iops=500000"], capsys)
    assert code == 3 and json.loads(out)["fast"]["stable"] is False
    code, _, _ = run_cli(["analyze", str(EXAMPLES / "mm1.yaml")], capsys)
    assert code == 0


def test_the_output_names_the_flash_device_model(capsys: pytest.CaptureFixture[str]) -> None:
    """simulate and analyze say which device model the figures rest on: by default a drive's addressed dies and an
    eXFlash DIMM's pooled units, what ``device_model`` forces otherwise, and nothing where there is no flash."""
    short = ["--set", "run.max_ios=3000", "--set", "run.warmup_ios=500"]
    code, out, _ = run_cli(["simulate", str(EXAMPLES / "s1_linuxone_nvme_raid10.yaml"), *short], capsys)
    assert code == 0 and "flash device model: addressed NAND dies behind a controller (the default;" in out
    code, out, _ = run_cli(["analyze", str(EXAMPLES / "s1_linuxone_nvme_raid10.yaml"), "--set", "device_model=pooled"], capsys)
    assert code == 0 and "flash device model: pooled units (device_model: pooled;" in out
    code, out, _ = run_cli(["analyze", str(EXAMPLES / "s3_exflash_4dimms.yaml")], capsys)
    assert code == 0 and "flash device model: pooled units (the default;" in out
    code, out, _ = run_cli(["analyze", str(EXAMPLES / "mm1.yaml")], capsys)
    assert code == 0 and "flash device model" not in out
