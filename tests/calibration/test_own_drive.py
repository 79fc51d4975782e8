"""``flashplan drive from-fio``: a drive derived from public queue-depth sweeps predicts the points it did not use.

The sweeps are committed as fio-JSON-shaped files under calibration/ext/fio_sweeps/, each with a header citing
the published table it was converted from:

* spdk661-aio: github.com/spdk/spdk issue #661, Linux AIO, 4 KiB random reads, QD 1..256, IOPS and mean latency
  (no percentiles printed). The drive is not named, which does not matter here: the drive is derived from it.
* anandtech11209-p3700: AnandTech review 11209, Intel SSD DC P3700 800GB, QD 1 and QD 16 with mean and p99.

What holds: the drive derived from the QD 1 latency and the top IOPS (QD 256) predicts QD 2..128 within 8%; the
P3700 built from its QD 1 point and the catalog's read IOPS predicts QD 16 within 6% (IOPS, mean) and 23% (p99).
What does not: from the QD 1..4 half alone the die count is barely determined (QD 4 runs at 97.9% of the
contention-free rate, where 32 and 48 dies differ by 1%), the derivation takes 48 dies where the deeper points
say about 32, and QD 32 / QD 64 come out 23% / 38% high in IOPS (strict xfails with the figures).
"""

from __future__ import annotations

import io
import json
from contextlib import redirect_stderr, redirect_stdout
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from calibration.own_drive import DriveFromFio, Point, derive, dies_reaching, held_out_check, read_points
from models.catalog import load_catalog, lookup
from models.loading import BadInput
from sim.analytic.dies import die_level_closed
from sim.cli.flashplan import main
from sim.route.flash import DieLayout

ROOT = Path(__file__).resolve().parents[2]
SWEEPS = ROOT / "calibration" / "ext" / "fio_sweeps"
AIO = sorted((SWEEPS / "spdk661-aio").glob("qd*.json"))
P3700 = sorted((SWEEPS / "anandtech11209-p3700").glob("qd*.json"))


def _points(paths: list[Path]) -> list[Point]:
    return read_points([(f"{p.parent.name}/{p.name}", p.read_bytes()) for p in paths])


def _drive(paths: list[Path], base: str, up_to: int | None) -> DriveFromFio:
    return derive(_points(paths), "Own-drive", base=lookup("drives", base), base_name=base, derive_up_to_qd=up_to)


def _errors(drive: DriveFromFio) -> dict[tuple[int, str], float]:
    out = {}
    for c in held_out_check(drive):
        assert c.point.qd is not None and c.fast_error is not None
        out[(c.point.qd, c.metric)] = c.fast_error
    return out


@pytest.fixture(scope="module")
def lower_half() -> dict[tuple[int, str], float]:
    return _errors(_drive(AIO, "P4510-4TB", up_to=4))


HALF_CASES = [
    pytest.param(8, id="qd8"),
    pytest.param(16, id="qd16"),
    pytest.param(32, id="qd32", marks=pytest.mark.xfail(strict=True, reason=(
        "QD1..4 leave the die count open (48 dies derived, the deeper points say ~32): IOPS +23.1%, mean -18.7%"))),
    pytest.param(64, id="qd64", marks=pytest.mark.xfail(strict=True, reason=(
        "QD1..4 leave the die count open (48 dies derived, the deeper points say ~32): IOPS +37.8%, mean -27.4%"))),
]


@pytest.mark.parametrize("qd", HALF_CASES)
def test_the_qd1_to_qd4_half_predicts_the_deeper_half(lower_half: dict[tuple[int, str], float], qd: int) -> None:
    """Derived from QD 1, 2, 4 only (QD 1 latency and the QD 4 IOPS), the drive predicts QD 8..64 within 15%."""
    assert abs(lower_half[(qd, "iops")]) <= 0.15, lower_half[(qd, "iops")]
    assert abs(lower_half[(qd, "latency_mean_us")]) <= 0.15, lower_half[(qd, "latency_mean_us")]


def test_the_qd1_latency_and_the_top_iops_predict_every_other_depth() -> None:
    """The 'few points' route: QD 1 latency and the QD 256 IOPS fix tR and the die count; QD 2..128 follow
    from the model's mechanism within 8% (IOPS and mean)."""
    drive = _drive(AIO, "P4510-4TB", up_to=None)
    assert [p.qd for p in drive.used] == [1, 256]
    errors = _errors(drive)
    assert sorted({qd for qd, _ in errors}) == [2, 4, 8, 16, 32, 64, 128]
    assert max(abs(e) for e in errors.values()) <= 0.08, errors


def test_the_p3700_from_its_qd1_point_predicts_qd16_with_its_p99() -> None:
    """AnandTech 11209's P3700 800GB: QD 1 measured, read IOPS from the catalog's datasheet entry; QD 16 held out
    within 15% (IOPS, mean) and 25% (p99) with the fast path and the simulation."""
    drive = _drive(P3700, "P3700-800GB", up_to=1)
    sources = {d.field: d.source for d in drive.derived}
    assert sources["read_latency_us"].startswith("anandtech11209-p3700/qd001.json")
    assert sources["read_kiops"] == "--base P3700-800GB"
    checks = held_out_check(drive, des_max_ios=20_000)
    limits = {"iops": 0.15, "latency_mean_us": 0.15, "latency_p99_us": 0.25}
    assert {c.metric for c in checks} == set(limits)
    for c in checks:
        assert c.point.qd == 16
        assert c.fast_error is not None and abs(c.fast_error) <= limits[c.metric], (c.metric, c.fast_error)
        assert c.des_error is not None and abs(c.des_error) <= limits[c.metric], (c.metric, c.des_error)


def test_the_derived_layout_rebuilds_the_measured_qd1_latency() -> None:
    """The model's QD 1 read (controller + tR + transfer) is the measured QD 1 mean: the derivation inverts it."""
    drive = _drive(AIO, "P4510-4TB", up_to=4)
    assert drive.layout.qd1_read_us == pytest.approx(59.72, abs=1e-6)
    assert drive.layout.dies % drive.layout.channels == 0


def _run(*argv: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with redirect_stdout(out), redirect_stderr(err):
        code = main(list(argv))
    return code, out.getvalue(), err.getvalue()


def test_the_written_drive_is_offered_by_the_catalog(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "drives.yaml").write_text("Mine:\n  description: kept\n  capacity_tb: 1\n  read_bw_gbs: 3\n  write_bw_gbs: 2\n"
                                          "  read_kiops: 500\n  write_kiops: 100\n  read_latency_us: 80\n  write_latency_us: 20\n")
    code, out, err = _run("drive", "from-fio", *map(str, AIO), "--name", "AIO-drive", "--base", "P4510-4TB",
                          "--out", str(tmp_path), "--json")
    assert code == 0, err
    report = json.loads(out)
    assert report["written"] == str(tmp_path / "drives.yaml")
    monkeypatch.setenv("FLASHPLAN_CATALOG_DIR", str(tmp_path))
    drives = load_catalog().drives
    assert drives["Mine"].description == "kept"
    own = drives["AIO-drive"]
    assert own.read_latency_us == pytest.approx(59.72)
    assert own.sources["read_latency_us"].endswith("mean latency of 4 KiB random reads at QD 1")
    assert own.price is None
    code, out, err = _run("catalog", "--json")
    assert code == 0 and "AIO-drive" in out, err


@pytest.mark.parametrize(("argv", "field", "words"), [
    pytest.param([str(P3700[0]), "--name", "X", "--base", "P3700-800GB"], "--name", None, id="ok-needs-nothing-more"),
    pytest.param([str(AIO[0]), "--name", "X"], "read_kiops", "one 4 KiB random-read point", id="one-point"),
    pytest.param([str(AIO[0]), str(AIO[1]), "--name", "X", "--base", "P4510-4TB"], "iops", "does not tell the die count",
                 id="no-contention-yet"),
    pytest.param([str(P3700[0]), "--name", "P3700-800GB", "--base", "P3700-800GB"], "--name", "built-in catalog drive",
                 id="name-clash"),
    pytest.param([str(AIO[0]), str(AIO[-1]), "--name", "X"], "write_latency_us", "no --base drive", id="no-write-point"),
    pytest.param([str(AIO[0]), "--name", "X", "--base", "NoSuchDrive"], "--base", "unknown drive", id="unknown-base"),
    pytest.param([str(ROOT / "examples" / "mm1.yaml"), "--name", "X"], "mm1.yaml", "no JSON object", id="not-fio-json"),
    pytest.param([str(AIO[0]), "--name", "bad name!"], "--name", "letters", id="bad-name"),
])
def test_bad_input_names_the_field_and_exits_2(argv: list[str], field: str, words: str | None) -> None:
    code, _, err = _run("drive", "from-fio", *argv)
    if words is None:
        assert code == 0, err
        return
    assert code == 2, err
    assert field in err and words in err, err
    assert "Traceback" not in err


def test_a_missing_field_is_named(tmp_path: Path) -> None:
    doc = json.loads("{" + AIO[0].read_text().split("\n{", 1)[1])
    del doc["jobs"][0]["read"]["lat_ns"]["mean"]
    bad = tmp_path / "qd1.json"
    bad.write_text(json.dumps(doc))
    code, _, err = _run("drive", "from-fio", str(bad), "--name", "X", "--base", "P4510-4TB")
    assert code == 2 and "lat_ns.mean" in err, err


def test_an_override_folder_with_a_stranger_file_is_refused(tmp_path: Path) -> None:
    (tmp_path / "notes.txt").write_text("x")
    code, _, err = _run("drive", "from-fio", str(P3700[0]), "--name", "X", "--base", "P3700-800GB", "--out", str(tmp_path))
    assert code == 2 and "--out" in err and "notes.txt" in err, err
    assert not (tmp_path / "drives.yaml").exists()


def _as_write(path: Path, tmp: Path, qd: int) -> Path:
    """A synthetic random-write point (test input only): the read job of ``path`` turned into a write job."""
    doc = json.loads("{" + path.read_text().split("\n{", 1)[1])
    job = doc["jobs"][0]
    job["job options"]["rw"] = "randwrite"
    job["job options"]["iodepth"] = str(qd)
    job["write"], job["read"] = job["read"], job["write"]
    out = tmp / f"write-qd{qd}.json"
    out.write_text(json.dumps(doc))
    return out


def test_without_a_base_the_capacity_is_asked_for_and_the_link_is_an_assumption(tmp_path: Path) -> None:
    files = [AIO[0], AIO[-1], _as_write(AIO[0], tmp_path, 1), _as_write(AIO[2], tmp_path, 4)]
    points = read_points([(p.name, p.read_bytes()) for p in files])
    with pytest.raises(BadInput) as info:
        derive(points, "X")
    assert info.value.problems[0][0] == "capacity_tb" and "--capacity-tb" in info.value.problems[0][1]
    drive = derive(points, "X", capacity_tb=1.6)
    sources = {d.field: d.source for d in drive.derived}
    assert sources["pcie_generation"] == sources["read_bw_gbs"] == "assumption"
    assert sources["write_latency_us"].startswith("write-qd1.json") and sources["write_kiops"].startswith("write-qd4.json")
    assert drive.spec.write_kiops == pytest.approx(65.549)
    assert len(drive.used) == 4 and len(drive.held_out) == 0


def test_the_report_is_byte_identical_run_to_run() -> None:
    argv = ["drive", "from-fio", *map(str, P3700), "--name", "X", "--base", "P3700-800GB", "--derive-up-to-qd", "1", "--json"]
    first, second = _run(*argv), _run(*argv)
    assert first[0] == 0 and first == second
    assert json.loads(first[1])["held_out"][0]["qd"] == 16


@settings(max_examples=60)
@given(dies=st.integers(min_value=1, max_value=400), qd=st.integers(min_value=2, max_value=256),
       t_read=st.floats(min_value=20.0, max_value=150.0))
def test_the_die_count_inverts_the_models_closed_loop(dies: int, qd: int, t_read: float) -> None:
    """IOPS the model gives with N dies at depth Q lead back to N dies, or to fewer that give the same IOPS (a loop
    that barely queues cannot tell them apart), and never to more."""
    def model(n: int) -> float:
        layout = DieLayout(dies=n, channels=1, die_read_us=t_read, die_read_cv=0.1, transfer_us=1.0, controller_us=12.0,
                           controller_kiops=1e9)
        return die_level_closed(layout, qd).iops

    iops = model(dies) * (1 - 1e-12)
    found = dies_reaching(iops, qd, t_read, 1.0, 12.0)
    assert found is not None and found <= dies
    assert model(found) >= iops
    assert found == 1 or model(found - 1) < iops
