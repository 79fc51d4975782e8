"""The web app's logic, page by page, through Streamlit's AppTest (no browser), plus its stores and reports.

Simulations are kept small: the "Quick" precision is patched to +-5% within 150,000
I/Os (10 s at most), and one worker process runs them. What is checked is behaviour: sizing
figures obey Little's law, the bottleneck drawn in red is the Result's, invalid input
names the field and its allowed range, the library round-trips scenarios, the planner's
ranking is by cost, the calibration page shows what the records predict.
"""

from __future__ import annotations

import json
import math
import re
import sqlite3
from itertools import pairwise
from pathlib import Path
from typing import Any

import pytest
from streamlit.testing.v1 import AppTest

from app import forms, runner
from app.library import Library, LibraryError, export_scenario, parse_scenario_file
from app.naming import scenario_name
from app.presets import preset_data
from app.sizing import curve_factors, des_scenarios, fast_curve, load_knob, price_of
from app.views.calibration import quick_chunks
from app.views.compare import price_performance_sentence
from app.views.whatif import FACTORS, coupled
from calibration.records import load_records
from models.catalog import lookup
from models.presets import PRESETS
from models.scenario import MAX_SCENARIO_BYTES, RunSettings, Scenario, ScenarioFileError, load_scenario, with_overrides
from models.topology import DirectNvme
from tests.conftest import EXAMPLES, HANG_S, ROOT

MAIN = str(ROOT / "app" / "main.py")
QUICK_LABEL = next(iter(forms.PRECISIONS))
SMALL_RUN = {"target_rel_ci": 0.05, "max_wall_s": 3_600.0, "max_ios": 150_000, "warmup_ios": 2_000}
"""Quick runs that stop on their precision or I/O budget, never on the clock, so a loaded machine cannot cut them
short (a cut-short result is not compared on price-performance)."""
TINY_CALIBRATION = {"run.max_ios": 20_000, "run.max_wall_s": 120.0, "run.target_rel_ci": 0.05, "run.warmup_ios": 1_000}
"""A quick calibration set that stops on its I/O budget: a 1 s wall limit cut runs short on a loaded machine
(the records then had no prediction, and the test failed in CI while a calibration ran beside it)."""
TIMEOUT = HANG_S


@pytest.fixture(autouse=True)
def small_runs(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """One simulation worker, a fresh library database per test, and a quick precision that stops within 2 s."""
    monkeypatch.setenv("FLASHPLAN_APP_WORKERS", "1")
    monkeypatch.setenv("FLASHPLAN_DB_URL", f"sqlite:///{tmp_path / 'library.sqlite'}")
    monkeypatch.setitem(forms.PRECISIONS, QUICK_LABEL, SMALL_RUN)


def start(page: str | None = None) -> AppTest:
    at = AppTest.from_file(MAIN, default_timeout=TIMEOUT)
    at.run()
    if page:
        at.switch_page(f"page_scripts/{page}.py").run()
    clean(at)
    return at


def page_script(code: str) -> AppTest:
    at = AppTest.from_string(code, default_timeout=TIMEOUT)
    at.run()
    clean(at)
    return at


def clean(at: AppTest) -> None:
    """No exception escaped, and main.py's catch-all did not have to show one."""
    assert not at.exception, [e.value for e in at.exception]
    assert not [e.value for e in at.error if str(e.value).startswith("Something went wrong")]


def number(text: str) -> float:
    return float(re.sub(r"[^0-9.\-]", "", str(text).split()[0]))


def metrics(at: AppTest) -> dict[str, str]:
    return {m.label: str(m.value) for m in at.metric}


def figures(at: AppTest) -> list[dict[str, Any]]:
    return [json.loads(el.proto.spec) for el in at.get("plotly_chart")]


def errors(at: AppTest) -> str:
    return "\n".join(str(e.value) for e in at.error)


# -- Size ----------------------------------------------------------------------------------------

def test_a_sizing_obeys_littles_law_and_draws_its_bottleneck_in_red() -> None:
    at = start()
    assert at.selectbox(key="size:run:run.precision").value == QUICK_LABEL
    assert any("Fast-path estimate" in c.value for c in at.caption)
    at.button(key="size:run").click()
    at.run()
    clean(at)
    shown = metrics(at)
    iops, latency_us = number(shown["IOPS"]), number(shown["Latency mean"])
    assert number(shown["Latency p99"]) >= latency_us > 0
    # closed workload with its calibrated think time Z: 256 jobs x QD 1 each in flight or thinking, so X * (R + Z) = 256
    # (Little's law over the whole loop)
    think_us = preset_data("ycsb_read_mostly")["think_time_us"]
    assert think_us > 0
    assert iops * (latency_us + think_us) / 1e6 == pytest.approx(256, rel=0.05)
    assert number(shown["Purchase cost"]) > 0 and number(shown["$ per KIOPS"]) > 0
    assert number(shown["$ per KIOPS"]) == pytest.approx(number(shown["Purchase cost"]) / (iops / 1000), rel=0.01)
    assert sum(c.value.startswith("95% CI ") for c in at.caption) >= 5

    util, curve = figures(at)
    bar = util["data"][0]
    red = [name for name, colour in zip(bar["y"], bar["marker"]["color"], strict=True) if colour == "crimson"]
    said = next(c.value for c in at.caption if "ottleneck" in c.value.split(";")[0])
    busiest_share = max(bar["x"])
    if busiest_share >= 0.8:  # near saturation: named the bottleneck, in the user's words, and drawn in red
        bottleneck = re.search(r"Bottleneck: \*\*(.+?)\*\*", said).group(1)
        assert red == [bottleneck] and "." not in bottleneck.split(":")[0]
    else:  # nothing near saturation: no bar is red and the page says the load limits it
        assert red == [] and said.startswith("No bottleneck")
    fast = next(t for t in curve["data"] if t["name"].startswith("fast path"))
    des = next(t for t in curve["data"] if t["name"].startswith("simulation"))
    assert des["x"][0] == pytest.approx(iops, rel=1e-3)
    # the fast path's throughput never falls as load rises (mean-value analysis of a closed network)
    assert all(b >= a * (1 - 1e-6) for a, b in pairwise(fast["x"]))
    assert any(d.key == "size:report" for d in at.get("download_button"))


def test_invalid_input_names_the_field_and_the_allowed_range() -> None:
    at = start()
    at.number_input(key="size:direct_nvme:topology.drives").set_value(0)
    at.run()
    clean(at)
    assert "topology.drives" in errors(at) and "Allowed: 1 .. 256" in errors(at)
    assert at.button(key="size:run").disabled
    at.number_input(key="size:direct_nvme:topology.drives").set_value(3)
    at.run()
    assert "topology.layout" in errors(at) and "raid10 needs an even number of drives >= 4, got 3" in errors(at)
    at.number_input(key="size:direct_nvme:topology.drives").set_value(4)
    at.number_input(key="size:direct_nvme:topology.namespaces.per_drive").set_value(2)
    at.run()
    assert "topology.namespaces.per_drive" in errors(at) and "at most 1 namespace," in errors(at)
    at.number_input(key="size:direct_nvme:topology.namespaces.per_drive").set_value(1)
    at.number_input(key="size:workload.closed:workload.queue_depth").set_value(0)
    at.run()
    assert "workload.queue_depth" in errors(at) and "1 .. 65,536" in errors(at)
    at.number_input(key="size:workload.closed:workload.queue_depth").set_value(1)
    at.run()
    clean(at)
    assert not at.error and not at.button(key="size:run").disabled


@pytest.mark.slow
@pytest.mark.parametrize("kind", ["san", "exflash", "zvm_edev", "direct_nvme"])
def test_every_attachment_starts_from_a_valid_configuration(kind: str) -> None:
    at = start()
    at.selectbox(key="size:top:topology.kind").set_value(kind)
    at.run()
    clean(at)
    assert not at.error, errors(at)
    draft = at.session_state["size.draft"]
    scenario = Scenario.model_validate(draft)
    assert scenario.topology.kind == kind
    assert scenario.name == scenario_name(scenario)  # the name is generated from the configuration it names
    assert at.text_input(key="size:top:name").value == scenario.name
    assert any("Fast-path estimate" in c.value for c in at.caption)
    if kind == "zvm_edev":
        at.number_input(key="size:zvm_edev:topology.aliases").set_value(3)
        at.run()
        assert at.session_state["size.draft"]["topology"]["aliases"] == 3


def test_the_name_follows_the_configuration_until_the_user_types_one() -> None:
    at = start()
    first = at.text_input(key="size:top:name").value
    assert "RAID-10" in first and "YCSB read-mostly" in first
    at.selectbox(key="size:direct_nvme:topology.layout").set_value("raid5")
    at.number_input(key="size:direct_nvme:topology.drives").set_value(8)
    at.selectbox(key="size:preset").set_value("oltp_4k_70_30")
    at.run()
    at.run()
    clean(at)
    name = at.text_input(key="size:top:name").value
    assert "8 x" in name and "RAID-5" in name and "RAID-10" not in name
    assert PRESETS["oltp_4k_70_30"].title.split(" (")[0].split(":")[0] in name and "YCSB" not in name
    workload_words = name.split(": ", 1)[1]
    at.selectbox(key="size:top:topology.kind").set_value("exflash")
    at.run()
    clean(at)
    renamed = at.text_input(key="size:top:name").value
    assert "DIMM" in renamed and renamed.endswith(workload_words)  # the workload did not change, nor does its part of the name
    assert at.session_state["size.draft"]["name"] == renamed
    at.text_input(key="size:top:name").set_value("ACME **bold** $x$ option").run()
    at.selectbox(key="size:top:topology.kind").set_value("direct_nvme")
    at.run()
    clean(at)
    assert at.text_input(key="size:top:name").value == "ACME **bold** $x$ option"  # typed: kept


def test_nvme_over_fc_switches_the_host_stack_and_adapters() -> None:
    at = start()
    at.selectbox(key="size:top:topology.kind").set_value("san")
    at.run()
    at.selectbox(key="size:san:topology.protocol").set_value("nvme_fc")
    at.run()
    clean(at)
    topo = at.session_state["size.draft"]["topology"]
    assert topo["protocol"] == "nvme_fc"
    # the host offered is one whose catalog entry has an NVMe/FC path length, and its stack follows the protocol
    assert topo["host"]["stack"] == "nvme_fc"
    assert "nvme_fc" in lookup("hosts", topo["host"]["model"]).cpu_us_per_io
    assert "nvme_fc" in lookup("san_adapters", topo["host_adapter"]).protocols
    assert not at.error, errors(at)


def test_picking_a_preset_fills_the_workload_fields() -> None:
    at = start()
    for key, preset in PRESETS.items():
        at.selectbox(key="size:preset").set_value(key)
        at.run()
        clean(at)
        assert not at.error, (key, errors(at))
        assert forms.matching_preset(at.session_state["size.draft"]["workload"]) == key
        assert at.selectbox(key="size:workload:workload.kind").value == preset.data["kind"]
    # editing a field makes it a custom workload
    at.selectbox(key="size:preset").set_value("oltp_4k_70_30")
    at.run()
    at.number_input(key="size:workload.closed:workload.jobs").set_value(8)
    at.run()
    assert at.selectbox(key="size:preset").value == forms.CUSTOM_WORKLOAD


def test_a_measured_fio_job_becomes_the_workload() -> None:
    fio = {"fio version": "fio-3.35", "jobs": [{
        "jobname": "oltp", "groupid": 0, "job options": {"rw": "randrw", "rwmixread": "70", "bs": "4k", "iodepth": "8", "numjobs": "4",
                                                          "ioengine": "libaio", "direct": "1"},
        "job_runtime": 60000,
        "read": {"io_bytes": 4096 * 700000, "bw_bytes": 4096 * 11666, "iops": 11666.0, "total_ios": 700000, "runtime": 60000,
                 "clat_ns": {"mean": 900000.0, "percentile": {"99.000000": 2000000}}, "lat_ns": {"mean": 910000.0}},
        "write": {"io_bytes": 4096 * 300000, "bw_bytes": 4096 * 5000, "iops": 5000.0, "total_ios": 300000, "runtime": 60000,
                  "clat_ns": {"mean": 100000.0, "percentile": {"99.000000": 300000}}, "lat_ns": {"mean": 110000.0}},
    }]}
    from calibration.importers import workload_data
    from calibration.importers.fio import parse_fio

    content = json.dumps(fio).encode()
    expected = workload_data(parse_fio(content, "fio.json").jobs[0].workload)
    at = start()
    uploader = next(u for u in at.get("file_uploader") if u.proto.id.endswith("size.import_file.fio"))
    uploader.upload("fio.json", content, "application/json")
    at.run()
    clean(at)
    assert not at.error, errors(at)
    assert any("fio measured 16,666 IOPS" in c.value for c in at.caption)
    at.button(key="size.import_use").click()
    at.run()
    clean(at)
    assert at.session_state["size.draft"]["workload"] == expected
    assert expected["read_fraction"] == pytest.approx(0.7) and expected["queue_depth"] == 8


IOSTAT = """Linux 6.1.0 (db01) \t11/21/26 \t_x86_64_\t(2 CPU)

Device            r/s     rkB/s   rrqm/s  %rrqm r_await rareq-sz     w/s     wkB/s   wrqm/s  %wrqm w_await wareq-sz  aqu-sz  %util
nvme0n1        900.00   3600.00     0.00   0.00    0.10     4.00  100.00    800.00     0.00   0.00    0.05     8.00    0.10   5.00

Device            r/s     rkB/s   rrqm/s  %rrqm r_await rareq-sz     w/s     wkB/s   wrqm/s  %wrqm w_await wareq-sz  aqu-sz  %util
nvme0n1      30000.00 120000.00     0.00   0.00    0.12     4.00 10000.00  80000.00     0.00   0.00    0.04     8.00    4.00  80.00

Device            r/s     rkB/s   rrqm/s  %rrqm r_await rareq-sz     w/s     wkB/s   wrqm/s  %wrqm w_await wareq-sz  aqu-sz  %util
nvme0n1      20000.00  80000.00     0.00   0.00    0.11     4.00  5000.00  40000.00     0.00   0.00    0.04     8.00    2.50  60.00
"""


def test_the_peak_of_an_iostat_log_becomes_the_workload() -> None:
    at = start()
    at.radio(key="size.import_kind").set_value("iostat")
    at.run()
    uploader = next(u for u in at.get("file_uploader") if u.proto.id.endswith("size.import_file.iostat"))
    uploader.upload("iostat.txt", IOSTAT.encode(), "text/plain")
    at.run()
    clean(at)
    assert not at.error, errors(at)
    at.button(key="size.import_use").click()
    at.run()
    clean(at)
    wl = at.session_state["size.draft"]["workload"]
    # the busiest report: 30,000 reads/s of 4 KiB and 10,000 writes/s of 8 KiB, offered as an open load
    assert wl["kind"] == "open" and wl["rate_iops"] == pytest.approx(40_000)
    assert wl["read_fraction"] == pytest.approx(0.75)
    assert sorted((s["op"], s["kib"]) for s in wl["sizes"]) == [("read", 4.0), ("write", 8.0)]
    assert not at.error, errors(at)


# -- Compare -------------------------------------------------------------------------------------

def test_compare_defaults_to_the_seeds_nvme_against_ds8950f() -> None:
    at = start("compare")
    assert at.selectbox(key="compare:source:0").value == "paper:s1_ycsb_nvme.yaml"
    assert at.selectbox(key="compare:source:1").value == "paper:s1_ycsb_fcp.yaml"
    at.button(key="compare:run").click()
    at.run()
    clean(at)
    table = at.dataframe[0].value
    assert list(table["attachment"]) == ["direct_nvme", "san"]
    assert (table["IOPS"] > 0).all()
    assert table["cost per IOPS vs #1"].iloc[0] == "baseline"
    assert any("better price-performance" in m.value for m in at.markdown)
    assert figures(at)


def test_price_performance_is_the_lower_cost_per_unit_of_throughput() -> None:
    base = {"#": 1, "name": "NVMe", "iops": 100_000.0}
    cheaper = {"#": 2, "name": "SAN", "iops": 100_000.0, "cost_per_kiops_vs_1": 0.5, "compared_cost_usd": 5_000.0,
               "compared_base_cost_usd": 10_000.0}
    assert "**#2 SAN** has **50% better price-performance** than **#1 NVMe**" in price_performance_sentence(base, cheaper, False)
    dearer = {**cheaper, "cost_per_kiops_vs_1": 25.0}
    sentence = price_performance_sentence(base, dearer, True)
    assert "**#1 NVMe** has **96% better price-performance** than **#2 SAN**" in sentence  # seed 000's "96% better"
    assert "25x lower" in sentence and "seed 000 convention" in sentence


# -- What-if -------------------------------------------------------------------------------------

def test_whatif_sweeps_on_the_fast_path_with_lines_and_a_heatmap() -> None:
    at = start("whatif")
    at.selectbox(key="whatif:source").set_value("example:s2_ibmi_8x4_mirrored.yaml")
    at.run()
    at.selectbox(key="whatif:f1").set_value("topology.namespaces.per_drive")
    at.run()
    at.text_input(key="whatif:v1:topology.namespaces.per_drive").set_value("1, 2, 4")
    at.button(key="whatif:run").click()
    at.run()
    clean(at)
    frame = at.dataframe[0].value
    assert list(frame["topology.namespaces.per_drive"]) == [1, 2, 4] and (frame["status"] == "ok").all()
    assert figures(at)[0]["data"][0]["type"] == "scatter"
    assert any(d.key == "whatif:csv" for d in at.get("download_button"))
    at.selectbox(key="whatif:f2").set_value("workload.queue_depth")
    at.run()
    at.text_input(key="whatif:v2:workload.queue_depth").set_value("1, 8")
    at.button(key="whatif:run").click()
    at.run()
    at.radio(key="whatif:style").set_value("heatmap")
    at.run()
    clean(at)
    assert len(at.dataframe[0].value) == 6
    assert figures(at)[0]["data"][0]["type"] == "heatmap"


@pytest.mark.slow
def test_whatif_simulates_each_point_with_its_interval() -> None:
    at = start("whatif")
    at.radio(key="whatif:solver").set_value("Simulation (DES, with 95% CIs)")
    at.run()
    at.selectbox(key="whatif:f1").set_value("workload.jobs")
    at.run()
    at.text_input(key="whatif:v1:workload.jobs").set_value("16, 64")
    at.button(key="whatif:run").click()
    at.run()
    clean(at)
    frame = at.dataframe[0].value
    ok = frame[frame["status"] == "ok"]
    assert len(ok) == 2
    assert ((ok["iops_ci95_lo"] <= ok["iops"]) & (ok["iops"] <= ok["iops_ci95_hi"])).all()
    assert ok["iops"].iloc[1] >= ok["iops"].iloc[0] * 0.95  # more jobs, no less throughput


def test_whatif_rejects_values_it_cannot_read() -> None:
    drives = FACTORS["topology.drives"]
    assert drives.parse("4, 8, 16") == ([4, 8, 16], None)
    assert "not a number" in (drives.parse("4, eight")[1] or "")
    assert "whole numbers" in (drives.parse("4.5")[1] or "")
    assert "twice" in (drives.parse("4, 4")[1] or "")
    assert FACTORS["workload.read_fraction"].parse("0, 70, 100")[0] == [0.0, 0.7, 1.0]
    at = start("whatif")
    at.text_input(key=f"whatif:v1:{at.selectbox(key='whatif:f1').value}").set_value("1, x")
    at.run()
    clean(at)
    assert "not a number" in errors(at)


def test_drives_outgrowing_their_adapters_add_adapters() -> None:
    base = load_scenario(EXAMPLES / "s1_linuxone_nvme_raid10.yaml")
    assert isinstance(base.topology, DirectNvme)
    assert coupled(base, {"topology.drives": 8}) == {"topology.adapters": 8}  # one drive per IBM NVMe Carrier
    assert coupled(base, {"topology.drives": 4}) == {}


# -- Plan ----------------------------------------------------------------------------------------

def plan_quickly(at: AppTest) -> None:
    """Plan with one finalist verified by a 1 s simulation; the page names the cheapest configuration."""
    at.number_input(key="plan:req:verify_top").set_value(1)
    at.number_input(key="plan:req:verify.max_wall_s").set_value(1.0)
    at.run()
    at.button(key="plan:run").click()
    at.run()
    clean(at)
    assert at.success and "Cheapest configuration" in at.success[0].value, errors(at)


@pytest.mark.slow
def test_plan_finds_the_cheapest_configuration_within_budget() -> None:
    at = start("plan")
    plan_quickly(at)
    shown = metrics(at)
    assert number(shown["Purchase cost"]) <= 60_000  # the example's budget
    assert number(shown["Usable capacity"]) >= 6
    ranked = at.dataframe[0].value
    assert list(ranked["cost $"]) == sorted(ranked["cost $"])
    assert ranked["verified"].iloc[0].startswith("DES ")  # with its validity badge
    winner = ranked["configuration"].iloc[0]
    at_bound = shown["$ per KIOPS (at its bound)"]
    at.button(key="plan:open").click()
    at.run()
    clean(at)
    assert at.title[0].value == "Size a configuration"
    draft = Scenario.model_validate(at.session_state["size.draft"])
    assert draft.topology.kind == "direct_nvme" and draft.topology.drives == int(winner.split(" x ")[0])
    # the Size page quotes the same $/KIOPS at the bound for the same configuration (one function computes both)
    estimate = next(c.value for c in at.caption if "Fast-path estimate" in c.value)
    assert f"{at_bound} per KIOPS at that bound" in estimate


@pytest.mark.slow
def test_plan_under_the_die_level_model_opens_its_winner_with_it() -> None:
    """The Plan page's "Flash device model": planned under dies, the winner is screened with the die-level p99 and opens
    in the Size page with device_model dies."""
    at = start("plan")
    assert at.selectbox(key="plan:req:device_model").value == "auto"
    at.selectbox(key="plan:req:device_model").set_value("dies")
    plan_quickly(at)
    at.button(key="plan:open").click()
    at.run()
    clean(at)
    assert Scenario.model_validate(at.session_state["size.draft"]).device_model == "dies"
    assert at.selectbox(key="size:direct_nvme:device_model").value == "dies"


def test_plan_rejects_an_empty_name() -> None:
    at = start("plan")
    at.text_input(key="plan:req:name").set_value("   ").run()
    clean(at)
    assert "give the plan a name" in errors(at)
    assert at.button(key="plan:run").disabled


def test_plan_shows_invalid_requirements_under_their_fields() -> None:
    at = start("plan")
    at.number_input(key="plan:req:usable_tb").set_value(-1.0)
    at.run()
    clean(at)
    assert "usable_tb" in errors(at) and "Allowed: > 0 and <= 100,000" in errors(at)
    assert at.button(key="plan:run").disabled


# -- Calibration ---------------------------------------------------------------------------------

@pytest.mark.slow
def test_calibration_runs_a_quick_set_and_shows_a_stored_run(tmp_path: Path) -> None:
    from calibration.report import write_results

    stored = tmp_path / "latest.json"
    script = ("from pathlib import Path\nfrom app.views import calibration\n"
              f"calibration.render(results_path=Path({str(stored)!r}), quick_run={TINY_CALIBRATION!r})")
    at = page_script(script)
    assert any("No stored calibration run" in i.value for i in at.info)
    at.selectbox(key="calibration:system").set_value("S5")
    at.button(key="calibration:run").click()
    at.run()
    clean(at)
    rows = at.session_state["calibration.quick"]["rows"]
    wanted = {r.id for r in load_records(only="S5") if r.ci}
    assert {r["id"] for r in rows} == wanted
    assert all(r["predicted"] is not None and r["error"] is None for r in rows)
    assert figures(at), "parity plot"
    records = at.dataframe[1].value
    assert set(records["record"]) == wanted

    write_results(rows, stored, {"run_at": "2026-01-01T00:00:00", "quick": True})
    at = page_script(script)
    assert "Stored run of 2026-01-01T00:00:00" in at.radio(key="calibration:shown").options[0]
    summary = at.dataframe[0].value
    assert list(summary["system"]) == ["S5"] and summary["records"].iloc[0] == len(wanted)


def test_quick_chunks_never_split_a_shared_scenario() -> None:
    records = load_records(only="S1")
    chunks = quick_chunks(records, 2)
    assert sorted(r.id for c in chunks for r in c) == sorted(r.id for r in records)
    keys = [{ref.key() for r in c for ref in r.scenarios()} for c in chunks]
    assert all(not (a & b) for i, a in enumerate(keys) for b in keys[i + 1:])


# -- Scenario library ----------------------------------------------------------------------------

def test_a_sizing_is_saved_renamed_opened_and_deleted() -> None:
    at = start()
    at.text_input(key="size:top:name").set_value("ACME option A")
    at.run()
    at.button(key="size:run").click()
    at.run()
    at.text_input(key="size:save_name").set_value("ACME option A")
    at.button(key="size:save").click()
    at.run()
    clean(at)
    assert any("Saved as 'ACME option A'" in s.value for s in at.success)

    at.switch_page("page_scripts/scenarios.py").run()
    clean(at)
    listing = at.dataframe[0].value
    assert list(listing["name"]) == ["ACME option A"] and listing["results"].iloc[0] == 1
    rename = next(t for t in at.text_input if str(t.key).startswith("library:rename:"))
    rename.set_value("ACME option B")
    at.button(key="library:rename").click()
    at.run()
    assert list(at.dataframe[0].value["name"]) == ["ACME option B"]
    at.toggle(key="library:show_result").set_value(True)
    at.run()
    clean(at)
    assert number(metrics(at)["IOPS"]) > 0  # the saved result shows without a new run

    at.button(key="library:open").click()
    at.run()
    clean(at)
    assert at.text_input(key="size:top:name").value == "ACME option B"

    at.switch_page("page_scripts/scenarios.py").run()
    at.checkbox(key=next(c.key for c in at.checkbox if str(c.key).startswith("library:sure:"))).check()
    at.run()
    at.button(key="library:delete").click()
    at.run()
    clean(at)
    assert not at.dataframe or "Nothing saved yet" in " ".join(c.value for c in at.caption)


def test_scenario_files_are_imported_safely() -> None:
    at = start("scenarios")
    upload = at.get("file_uploader")[0]
    upload.upload("mm1.yaml", (EXAMPLES / "mm1.yaml").read_bytes(), "application/x-yaml")
    at.run()
    clean(at)
    assert at.success and "valid" in at.success[0].value
    at.button(key="library:import_save").click()
    at.run()
    clean(at)
    assert list(at.dataframe[0].value["name"]) == [load_scenario(EXAMPLES / "mm1.yaml").name]

    bad = json.dumps({"topology": {"kind": "direct_nvme", "drives": 3}, "workload": {"kind": "closed", "queue_depth": 0}})
    at.get("file_uploader")[0].upload("bad.json", bad.encode(), "application/json")
    at.run()
    clean(at)
    assert "topology.layout" in errors(at) and "workload.queue_depth" in errors(at)


def test_parse_scenario_file_limits_and_round_trips() -> None:
    with pytest.raises(ScenarioFileError, match="anchors and aliases"):
        parse_scenario_file("bomb.yaml", b"a: &a [1, 2]\nb: [*a, *a]\n")
    with pytest.raises(ScenarioFileError, match="larger than"):
        parse_scenario_file("big.yaml", b"#" * (MAX_SCENARIO_BYTES + 1))
    with pytest.raises(ScenarioFileError, match="unknown format"):
        parse_scenario_file("scenario.exe", b"{}")
    with pytest.raises(ScenarioFileError, match="not UTF-8"):
        parse_scenario_file("x.yaml", b"\xff\xfe\x00")
    for path in sorted(EXAMPLES.glob("*.yaml")):
        scenario = load_scenario(path)
        for fmt, suffix in (("yaml", ".yaml"), ("json", ".json")):
            again = parse_scenario_file(f"x{suffix}", export_scenario(scenario, fmt).encode())  # type: ignore[arg-type]
            assert again == scenario, path.name


def test_library_keeps_names_unique_and_reports_stale_entries(tmp_path: Path) -> None:
    lib = Library(f"sqlite:///{tmp_path / 'lib.sqlite'}")
    scenario = load_scenario(EXAMPLES / "mm1.yaml")
    a = lib.save_scenario("option a", scenario)
    b = lib.save_scenario("option b", scenario)
    with pytest.raises(LibraryError, match="already saved"):
        lib.save_scenario("option  a", scenario)
    with pytest.raises(LibraryError, match="already saved"):
        lib.rename_scenario(b, "option a")
    assert lib.save_scenario("option a", scenario, overwrite=True) == a
    with pytest.raises(LibraryError, match="give a name"):
        lib.save_scenario("   ", scenario)
    # a saved scenario the models no longer accept is reported field by field, not with a traceback
    with sqlite3.connect(tmp_path / "lib.sqlite") as db:
        data = json.loads(db.execute("select data from scenarios where id = ?", (a,)).fetchone()[0])
        data["workload"]["queue_depth"] = 0
        db.execute("update scenarios set data = ? where id = ?", (json.dumps(data), a))
    with pytest.raises(LibraryError) as err:
        lib.get_scenario(a)
    assert err.value.problems[0][0] == "workload.queue_depth"
    lib.delete_scenario(b)
    assert [e.name for e in lib.list_scenarios()] == ["option a"]


# -- report, sizing helpers, cache ----------------------------------------------------------------

def small(path: Path, **overrides: Any) -> Scenario:
    return load_scenario(path, {**{f"run.{k}": v for k, v in SMALL_RUN.items()}, **overrides})


def test_the_html_report_carries_figures_costs_and_assumptions() -> None:
    from app.views.size import build_report

    scenario = small(EXAMPLES / "s1_linuxone_nvme_raid10.yaml", name="<script>alert(1)</script> ACME")
    result = runner.simulate_one(scenario)
    html = build_report(scenario, result)
    assert "<script>alert(1)</script>" not in html and "&lt;script&gt;alert(1)&lt;/script&gt; ACME" in html
    assert html.count('class="plotly-graph-div"') == 2
    price = price_of(scenario, result)
    assert price is not None
    assert f"${price.total_usd:,.0f}" in html
    for line in price.capex.lines:
        assert line.model in html
    assert "list price assumption" in html and "Assumptions and accuracy" in html
    assert "How close the model has been to measurements" in html
    assert f"{result.iops.ci95[0]:,.0f}" in html


def test_price_figures_follow_the_iops_interval() -> None:
    scenario = small(EXAMPLES / "s3_exflash_4dimms.yaml")
    result = runner.simulate_one(scenario)
    price = price_of(scenario, result)
    assert price is not None
    lo, hi = price.usd_per_kiops_ci95
    assert lo <= price.usd_per_kiops <= hi
    assert price.usd_per_kiops == pytest.approx(price.total_usd / (result.iops.value / 1000))
    assert price_of(small(EXAMPLES / "mm1.yaml")) is None  # a textbook queue has nothing to price


def test_results_are_cached_by_scenario() -> None:
    scenario = small(EXAMPLES / "mm1.yaml", **{"run.seed": 12345, "run.max_ios": 2_000_000, "run.max_wall_s": 30.0})
    assert runner.cached(scenario) is None
    first = runner.simulate_one(scenario)
    assert first.validity == "precise"
    assert runner.cached(scenario) == first
    assert runner.simulate_one(scenario) == first
    assert runner.cached(with_overrides(scenario, {"run.seed": 12346})) is None


def test_a_cut_short_result_is_never_cached_as_final() -> None:
    # a budget of 3,000 I/Os cannot reach +-0.1%: the engine marks the run cut short
    scenario = small(EXAMPLES / "mm1.yaml", **{"run.seed": 4242, "run.max_ios": 3_000, "run.target_rel_ci": 0.001})
    first = runner.simulate_one(scenario)
    assert first.validity == "cut_short"
    assert runner.cached(scenario) is None  # asking again runs it again (with a larger budget it can improve)
    assert runner.simulate_one(scenario).validity == "cut_short"
    assert runner.cached(scenario) is None


def test_the_latency_curve_spans_light_load_to_past_the_knee() -> None:
    closed = load_scenario(EXAMPLES / "s2_ibmi_8x4_mirrored.yaml")
    rows, base = fast_curve(closed)
    assert any(r["factor"] == 1.0 for r in rows)
    assert rows[0]["iops"] < base.iops <= max(r["iops"] for r in rows) * (1 + 1e-9)
    latencies = [r["latency_mean_us"] for r in rows]
    assert all(b >= a * (1 - 1e-6) for a, b in pairwise(latencies))
    assert load_knob(closed).paths == ("workload.jobs",)
    opened = load_scenario(EXAMPLES / "mm8.yaml")
    factors = curve_factors(opened, fast_curve(opened)[1])
    assert any(f == 1.0 for f in factors) and max(factors) * opened.workload.rate_iops < fast_curve(opened)[1].bounds.x_max_iops  # type: ignore[union-attr]
    assert [label for label, _ in des_scenarios(closed, None)] == ["jobs = 6", "jobs = 12", "jobs = 48"]


def test_allowed_ranges_read_from_the_models() -> None:
    assert forms.allowed_range(DirectNvme, "drives") == "1 .. 256"
    assert forms.allowed_range(RunSettings, "target_rel_ci") == "> 0 and < 1"
    assert forms.allowed_range(RunSettings, "max_wall_s") == "> 0 and <= 86,400"
    assert math.isfinite(float(forms.allowed_range(DirectNvme, "drives").split()[0]))


def test_the_size_form_chooses_the_flash_device_model() -> None:
    """The Size form's "Flash device model" sets the draft's device_model (auto by default: dies for drives; pooled or dies on request) for
    flash attachments; a SAN attachment carries none (its back end is the storage server's)."""
    at = start()
    assert at.selectbox(key="size:direct_nvme:device_model").value == "auto"
    at.selectbox(key="size:direct_nvme:device_model").set_value("dies")
    at.run()
    clean(at)
    assert not at.error, errors(at)
    assert Scenario.model_validate(at.session_state["size.draft"]).device_model == "dies"
    at.selectbox(key="size:top:topology.kind").set_value("san")
    at.run()
    assert "device_model" not in at.session_state["size.draft"]
    assert Scenario.model_validate(at.session_state["size.draft"]).device_model == "auto"
