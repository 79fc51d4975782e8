"""The queue-depth sweep of one device: sim.plan.qd_sweep, its published points, chart, CLI and page.

What is checked is behaviour: a closed loop at the device obeys Little's law (IOPS x mean = QD) on
both solvers, the fast path's throughput never falls as the queue deepens, each DES row carries
the engine's validity (a budget-ended run is cut short, a run that reaches its interval precise)
and is the same on a second run, the published EXT points are the records of that device and mix
a single-device sweep reproduces, a point that is not precise is drawn hollow, the command's JSON
is strict and bad input exits 2 naming the option, and the Calibration page draws the sweep.
"""

from __future__ import annotations

import json
import math
from itertools import pairwise
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st
from streamlit.testing.v1 import AppTest

from app.charts import qd_sweep_chart
from calibration.ext.published import published_points
from calibration.ext.records import EXT_FILE, load_ext_records
from models.catalog import load_catalog
from models.loading import BadInput
from sim.cli.flashplan import main
from sim.plan.qd_sweep import DEFAULT_DEPTHS, device_scenario, qd_sweep

DEVICES = [*load_catalog().drives, *load_catalog().dimms]
SMALL_DES = {"max_ios": 4_000}
APP_TIMEOUT = 600
MVA_DIP = 1e-3
"""How far the fast path's throughput may fall from one queue depth to the next deeper one (see the test)."""


def _strict(text: str) -> Any:
    def refuse(name: str) -> None:
        raise AssertionError(f"non-strict JSON constant {name}")

    return json.loads(text, parse_constant=refuse)


# -- the sweep -------------------------------------------------------------------------------------

@pytest.mark.parametrize("device", DEVICES)
def test_fast_path_throughput_never_falls_with_depth_and_obeys_littles_law(device: str) -> None:
    points = qd_sweep(device)
    assert [p.qd for p in points] == list(DEFAULT_DEPTHS)
    for a, b in pairwise(points):
        # approximate MVA may dip a hair at the bound: ECTB at QD 256 is 0.035% below QD 128 (read bandwidth
        # saturated, both within 0.1% of Xmax); exact MVA never falls
        assert b.iops >= a.iops * (1 - MVA_DIP), (device, a.qd, b.qd)
    for p in points:
        # a closed loop of qd I/Os with no think time at the device: N = X R
        assert p.iops * p.latency_mean_us * 1e-6 == pytest.approx(p.qd, rel=0.01), (device, p.qd)
        assert p.validity == "precise" and p.solver == "fast"
        assert p.latency_p99_us is None or p.latency_p99_us >= p.latency_mean_us


def test_fast_path_mixed_reads_and_writes_obey_littles_law_too() -> None:
    for p in qd_sweep("PM1733-1.92TB", [1, 8, 64], read_fraction=0.7, block_size_kib=8):
        assert p.iops * p.latency_mean_us * 1e-6 == pytest.approx(p.qd, rel=0.01)


DRIVES = list(load_catalog().drives)


@settings(max_examples=25, deadline=None)
@given(device=st.sampled_from(DRIVES), read_fraction=st.floats(0.0, 1.0), block_size_kib=st.sampled_from([0.5, 1, 2, 4]),
       depths=st.lists(st.integers(1, 1024), min_size=1, max_size=8, unique=True))
def test_any_small_block_drive_sweep_is_sorted_and_obeys_littles_law(
        device: str, read_fraction: float, block_size_kib: float, depths: list[int]) -> None:
    """NVMe drives at any mix of small random I/O and any depths (throughput against depth: the tests above on the
    doubling grid, the xfail cases below between its points; the eXFlash DIMMs' infinite latency: below too)."""
    points = qd_sweep(device, depths, read_fraction=read_fraction, block_size_kib=block_size_kib)
    assert [p.qd for p in points] == sorted(depths)
    for p in points:
        assert p.iops * p.latency_mean_us * 1e-6 == pytest.approx(p.qd, rel=0.01)


# Where the pooled fast path's throughput falls as the queue deepens, the DES's rises (100,000 I/Os, 95% CIs):
# P3700 65% read 256 KiB QD 14 -> 15: fast 16,372 -> 16,036, DES 16,386 -> 16,591; P4510 16 KiB reads QD 32 -> 64:
# fast 182,791 -> 181,966, DES 183,550 -> 184,687; CM6-R 4 KiB reads QD 128 -> 144 (just past the knee, off the
# doubling grid): fast 1,400,000 -> 1,386,761, DES at 144 1,401,897 (1,396,440 .. 1,407,354). Strict: a fix turns
# these red, so the marker gets removed. These are the pooled model's: under the default device model the drives have
# their dies, whose fast path does not dip at the three drive cases (the test after). The eXFlash DIMM (10% reads,
# 4 KiB, QD 3 -> 4), which stays pooled under the default, no longer dips: its bound counts the 2-slot write cache
# where its slots fill at the load.
_DIP = pytest.mark.xfail(strict=True, reason="pooled fast-path throughput falls with depth here while the DES's rises (see above)")
DRIVE_DIPS = [("P3700-800GB", 0.65, 256, [14, 15]), ("P4510-4TB", 1.0, 16, [32, 64]), ("CM6-R-1.92TB", 1.0, 4, [128, 144])]
FAST_PATH_DIPS = [("eXFlash-400GB", 0.1, 4, [3, 4]), *(pytest.param(*case, marks=_DIP) for case in DRIVE_DIPS)]


@pytest.mark.parametrize(("device", "read_fraction", "block_size_kib", "depths"), FAST_PATH_DIPS)
def test_pooled_fast_path_throughput_does_not_fall_where_the_des_rises(
        device: str, read_fraction: float, block_size_kib: float, depths: list[int]) -> None:
    low, high = qd_sweep(device, depths, read_fraction=read_fraction, block_size_kib=block_size_kib, device_model="pooled")
    assert high.iops >= low.iops * (1 - MVA_DIP)


@pytest.mark.parametrize(("device", "read_fraction", "block_size_kib", "depths"),
                         DRIVE_DIPS)
def test_fast_path_throughput_does_not_fall_where_the_des_rises(device: str, read_fraction: float, block_size_kib: float,
                                                               depths: list[int]) -> None:
    """The default device model (a drive's addressed dies) at the pooled model's dips: the throughput rises with depth."""
    low, high = qd_sweep(device, depths, read_fraction=read_fraction, block_size_kib=block_size_kib)
    assert high.iops >= low.iops * (1 - MVA_DIP)


def test_fast_path_exflash_write_latency_at_qd3_is_finite() -> None:
    """A stable closed loop of writes on an eXFlash DIMM has a finite mean latency (the DES gives 68 us at 43,954 IOPS
    at QD 3)."""
    (point,) = qd_sweep("eXFlash-400GB", [3], read_fraction=0.0, block_size_kib=0.5)
    assert math.isfinite(point.latency_mean_us)


def test_des_rows_obey_littles_law_carry_their_intervals_and_repeat_exactly() -> None:
    points = qd_sweep("P3700-800GB", [1, 16, 128], solver="des", **SMALL_DES)
    for p in points:
        assert p.iops * p.latency_mean_us * 1e-6 == pytest.approx(p.qd, rel=0.02)
        assert p.tail == "measured" and p.solver == "des"
        assert p.latency_p50_us is not None and p.latency_p99_us is not None and p.latency_p999_us is not None
        assert p.latency_p50_us <= p.latency_p99_us <= p.latency_p999_us
        lo, hi = p.ci95["iops"]
        assert lo <= p.iops <= hi
    assert [p.as_dict() for p in qd_sweep("P3700-800GB", [1, 16, 128], solver="des", **SMALL_DES)] == \
        [p.as_dict() for p in points]


def test_des_validity_is_the_engines_cut_short_on_the_budget_precise_on_the_interval() -> None:
    from sim.des.engine import simulate

    short = qd_sweep("ES5F", [4], solver="des", max_ios=2_000, target_rel_ci=0.001)
    assert [p.validity for p in short] == ["cut_short"] and "max_ios" in short[0].note
    loose = qd_sweep("ES5F", [4], solver="des", max_ios=200_000, target_rel_ci=0.2)
    assert [p.validity for p in loose] == ["precise"] and "precision" in loose[0].note
    # the same scenario simulated directly ends the same way
    direct = simulate(device_scenario("ES5F", 4, run={"max_ios": 2_000, "warmup_ios": 400, "target_rel_ci": 0.001}))
    assert direct.validity == "cut_short"


@pytest.mark.parametrize(("kwargs", "field"), [
    ({"device": "NOPE"}, "drive"),
    ({"depths": [0, 4]}, "qd"),
    ({"depths": [4, 4]}, "qd"),
    ({"depths": []}, "qd"),
    ({"solver": "exact"}, "solver"),
    ({"read_fraction": 1.5}, "read_fraction"),
    ({"block_size_kib": 0}, "block_size_kib"),
    ({"max_ios": 10}, "max_ios"),
])
def test_bad_arguments_name_their_field(kwargs: dict[str, Any], field: str) -> None:
    args: dict[str, Any] = {"device": "ES5F", **kwargs}
    with pytest.raises(BadInput) as exc:
        qd_sweep(args.pop("device"), **args)
    assert [f for f, _ in exc.value.problems] == [field]


# -- published points ------------------------------------------------------------------------------

def test_published_points_are_the_devices_records_at_that_mix() -> None:
    records = {r.id: r for r in load_ext_records()}
    p3700 = published_points("P3700-800GB")
    assert "ext.anandtech-p3700.rr4k.qd1.iops" in {p.record for p in p3700}
    for p in p3700:
        r = records[p.record]
        assert (p.qd, p.metric, p.value) == (r.conditions.total_qd, r.metric, r.measured)
        assert r.conditions.read_fraction == 1.0 and r.conditions.block_size_kib == 4
    assert published_points("P3700-800GB", read_fraction=0.5) == []


def test_published_points_keep_only_setups_a_single_device_sweep_reproduces(tmp_path: Path) -> None:
    """Several drives count only at QD 1 (one I/O in flight: one member serves it); another drive never."""
    base = next(r for r in load_ext_records() if r.id == "ext.anandtech-p3700.rr4k.qd8.iops")
    assert base.scenario is not None

    def record(rid: str, qd: int, drives: int, drive: str = "P3700-800GB") -> dict[str, Any]:
        data = base.model_dump(mode="json", exclude_none=True)
        data["id"] = rid
        data["conditions"]["total_qd"] = qd
        data["scenario"]["set"] = {**data["scenario"]["set"], "topology.drive": drive, "topology.drives": drives,
                                   "workload.queue_depth": qd, "topology.layout": "raid0" if drives > 1 else "jbod"}
        return data

    rows = [record("one.qd8", 8, 1), record("two.qd1", 1, 2), record("two.qd8", 8, 2), record("other.qd8", 8, 1, "ES5F")]
    path = tmp_path / "ext.yaml"
    path.write_text(yaml.safe_dump({"system": "EXT", "records": rows}), encoding="utf-8")
    assert [p.record for p in published_points("P3700-800GB", path=path)] == ["two.qd1", "one.qd8"]
    assert [p.record for p in published_points("ES5F", path=path)] == ["other.qd8"]
    assert EXT_FILE.exists()


# -- the chart -------------------------------------------------------------------------------------

def test_chart_draws_points_that_are_not_precise_hollow_and_leaves_out_an_unstable_latency() -> None:
    rows = [p.as_dict() for p in qd_sweep("P3700-800GB", [1, 8], solver="des", max_ios=2_000, target_rel_ci=0.001)]
    assert {r["validity"] for r in rows} == {"cut_short"}
    unstable = {**rows[-1], "qd": 16, "validity": "unstable"}
    published = [p.as_dict() for p in published_points("P3700-800GB")]
    fig = qd_sweep_chart([*rows, unstable], published, title="P3700")
    assert "not final" in fig.layout.title.text
    iops = next(t for t in fig.data if t.name == "IOPS")
    assert list(iops.marker.symbol) == ["circle-open", "circle-open", "x-open"]
    mean = next(t for t in fig.data if t.name == "mean")
    assert mean.y[-1] is None and all(v is not None for v in mean.y[:-1])
    stars = [t for t in fig.data if t.name == "published IOPS"]
    assert stars and sorted(stars[0].x) == sorted(p["qd"] for p in published if p["metric"] == "iops")
    assert fig.layout.xaxis.type == "log" and list(fig.layout.xaxis.tickvals) == [1, 8, 16]


def test_chart_of_a_precise_fast_sweep_has_filled_markers_and_dashed_tail_estimates() -> None:
    fig = qd_sweep_chart([p.as_dict() for p in qd_sweep("ES5F")])
    assert "not final" not in fig.layout.title.text
    assert set(next(t for t in fig.data if t.name == "IOPS").marker.symbol) == {"circle"}
    assert all(t.line.dash == "dash" for t in fig.data if "estimate" in (t.name or ""))


# -- the command -----------------------------------------------------------------------------------

def test_cli_json_is_strict_and_holds_the_rows_and_published_points(capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["qd-sweep", "P3700-800GB", "--qd", "1..16", "--json"])
    out, err = capsys.readouterr()
    assert code == 0, err
    data = _strict(out)
    assert [p["qd"] for p in data["points"]] == [1, 2, 4, 8, 16]
    assert all(p["validity"] == "precise" and p["latency_p50_us"] is None for p in data["points"])
    assert {p["record"] for p in data["published"]} >= {"ext.anandtech-p3700.rr4k.qd1.iops"}
    code = main(["qd-sweep", "eXFlash-400GB", "--qd", "1,32", "--solver", "des", "--max-ios", "2000", "--json"])
    out, err = capsys.readouterr()
    assert code == 0, err
    rows = _strict(out)["points"]
    assert [r["validity"] for r in rows] == ["cut_short", "cut_short"]
    assert all(math.isfinite(r["latency_p999_us"]) for r in rows)


def test_cli_table_marks_rows_that_are_not_final(capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["qd-sweep", "ES5F", "--qd", "2", "--solver", "des", "--max-ios", "2000"])
    out, _ = capsys.readouterr()
    assert code == 0 and "CUT SHORT" in out and "not final" in out


@pytest.mark.parametrize(("args", "field"), [
    (["NOPE"], "DRIVE: unknown catalog drive or DIMM 'NOPE'"),
    (["ES5F", "--qd", "0,4"], "--qd: "),
    (["ES5F", "--qd", "1,x"], "--qd: "),
    (["ES5F", "--solver", "exact"], "--solver: "),
    (["ES5F", "--read-fraction", "nan"], "--read-fraction: "),
    (["ES5F", "--block-kib", "-4"], "--block-kib: "),
    (["ES5F", "--solver", "des", "--max-ios", "5"], "--max-ios: "),
])
def test_cli_bad_input_exits_2_naming_the_option(args: list[str], field: str, capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["qd-sweep", *args])
    out, err = capsys.readouterr()
    assert code == 2 and out == ""
    assert err.startswith(field) and "Traceback" not in err


# -- the web page ----------------------------------------------------------------------------------

@pytest.fixture
def one_worker(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("FLASHPLAN_APP_WORKERS", "1")
    monkeypatch.setenv("FLASHPLAN_DB_URL", f"sqlite:///{tmp_path / 'library.sqlite'}")


def _figures(at: AppTest) -> list[dict[str, Any]]:
    return [json.loads(el.proto.spec) for el in at.get("plotly_chart")]


@pytest.mark.usefixtures("one_worker")
def test_calibration_page_draws_a_devices_sweep_with_its_published_points() -> None:
    at = AppTest.from_string("from app.views import qd_sweep\nqd_sweep.render_section()", default_timeout=APP_TIMEOUT)
    at.run()
    assert not at.exception
    (fig,) = _figures(at)
    names = [t.get("name") for t in fig["data"]]
    assert "IOPS" in names and "published IOPS" in names
    table = at.dataframe[0].value
    assert list(table["QD"]) == list(DEFAULT_DEPTHS)
    assert all(table["result"] == "✓ precise")

    at.selectbox(key="qdsweep:device").set_value("ES5F").run()
    assert not at.exception
    (fig,) = _figures(at)
    assert not any(str(t.get("name", "")).startswith("published") for t in fig["data"])
    assert any("No published queue-depth measurement" in c.value for c in at.caption)

    at.radio(key="qdsweep:solver").set_value(at.radio(key="qdsweep:solver").options[1]).run()
    assert not _figures(at), "the simulation waits for its button"
    at.select_slider(key="qdsweep:budget").set_value(10_000)
    at.button(key="qdsweep:run").click().run()
    assert not at.exception, [e.value for e in at.exception]
    (fig,) = _figures(at)
    table = at.dataframe[0].value
    assert list(table["QD"]) == list(DEFAULT_DEPTHS)
    for _, row in table.iterrows():
        assert row["IOPS"] * row["mean us"] * 1e-6 == pytest.approx(row["QD"], rel=0.02)
    marked = {r["QD"] for _, r in table.iterrows() if r["result"] != "✓ precise"}
    iops = next(t for t in fig["data"] if t.get("name") == "IOPS")
    hollow = {qd for qd, s in zip(iops["x"], iops["marker"]["symbol"], strict=True) if s != "circle"}
    assert hollow == marked
    assert bool(marked) == any("not final answers" in w.value for w in at.warning)


@pytest.mark.usefixtures("one_worker")
def test_the_sweep_page_offers_the_die_level_device_model() -> None:
    """The default (auto) gives a drive its dies; under pooled the fast sweep's tails are the pooled devices' law, under
    dies the die-level estimate, so the table changes and the chart's title names the model."""
    at = AppTest.from_string("from app.views import qd_sweep\nqd_sweep.render_section()", default_timeout=APP_TIMEOUT)
    at.run()
    assert at.radio(key="qdsweep:model").value == "auto"
    default = at.dataframe[0].value
    at.radio(key="qdsweep:model").set_value("pooled").run()
    pooled = at.dataframe[0].value
    assert list(default["p99 us"]) != list(pooled["p99 us"])
    at.radio(key="qdsweep:model").set_value("dies").run()
    assert not at.exception, [e.value for e in at.exception]
    (fig,) = _figures(at)
    assert "dies device model" in fig["layout"]["title"]["text"]
    dies = at.dataframe[0].value
    assert list(dies["QD"]) == list(DEFAULT_DEPTHS)
    assert list(dies["p99 us"]) != list(pooled["p99 us"])
    for _, row in dies.iterrows():  # Little's law holds under either model
        assert row["IOPS"] * row["mean us"] * 1e-6 == pytest.approx(row["QD"], rel=0.02)


def test_a_fast_point_without_a_finite_latency_is_not_shown_as_valid() -> None:
    """Whether or not the fast path's eXFlash write case above is fixed: a point with no finite mean latency is
    ``unknown`` (hollow, not final) and its latency is left off the chart; the JSON holds null, not Infinity."""
    points = qd_sweep("eXFlash-400GB", [1, 2, 3, 4], read_fraction=0.0, block_size_kib=0.5)
    for p in points:
        assert math.isfinite(p.latency_mean_us) or (p.validity == "unknown" and "simulation" in p.note)
    fig = qd_sweep_chart([p.as_dict() for p in points])
    mean = next(t for t in fig.data if t.name == "mean")
    assert all(y is None or math.isfinite(y) for y in mean.y)
    if any(p.validity != "precise" for p in points):
        assert "not final" in fig.layout.title.text
