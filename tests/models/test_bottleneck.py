"""The bottleneck is the most utilized component of its own utilization table (models/bottleneck.py), in the
fast path and the DES, for every example and for random scenarios; where the solvers disagree both are shown."""

from __future__ import annotations

import math
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from models import load_scenario, scenario_from_data, with_overrides
from models.bottleneck import (
    NO_BOTTLENECK,
    both_words,
    consistent_bottleneck,
    is_most_utilized,
    most_utilized,
    natural_key,
    printed,
    solvers_agree,
)
from tests.conftest import EXAMPLES, fast, steady_examples

NAMES = st.sampled_from(["drive0.dies", "drive1.dies", "drive10.dies", "drive2.controller", "host_cpu", "lun0.queue",
                         "edev.subchannels", "adapter0.uplink.to_host", "drive0.write_cache"])
TABLES = st.dictionaries(NAMES, st.floats(0.0, 1.0), min_size=1)


def _top(utilization: dict[str, float]) -> float:
    return max(printed(u) for u in utilization.values())


# -- the definition --------------------------------------------------------------------------------------------


def test_the_most_utilized_component_as_the_table_prints_it() -> None:
    table = {"drive0.controller": 0.526, "drive0.dies": 1.0, "drive0.write_cache": 0.442}
    assert most_utilized(table) == "drive0.dies"
    # 99.96% and 100% both print as 100.0%: tied; the station is named before the limit, then by natural order
    tied = {"drive0.write_cache": 1.0, "drive0.dies": 0.9996, "edev.subchannels": 1.0}
    assert most_utilized(tied, limits={"drive0.write_cache", "edev.subchannels"}) == "drive0.dies"
    assert most_utilized({"drive10.dies": 0.5, "drive2.dies": 0.5}) == "drive2.dies"
    assert most_utilized({"a": math.nan, "b": 0.1}) == "b"
    assert most_utilized({"a": 0.9, "b": 0.1}, eligible=["b", "c"]) == "b"
    assert most_utilized({}) == most_utilized({"a": 0.9}, eligible=[]) == NO_BOTTLENECK
    assert natural_key("drive2") < natural_key("drive10")


@settings(max_examples=200, deadline=None)
@given(table=TABLES, limits=st.sets(NAMES), data=st.data())
def test_the_choice_is_at_the_top_and_independent_of_the_table_order(table: dict[str, float], limits: set[str],
                                                                     data: st.DataObject) -> None:
    chosen = most_utilized(table, limits=limits)
    assert printed(table[chosen]) == _top(table) and is_most_utilized(chosen, table)
    order = data.draw(st.permutations(list(table)))
    assert most_utilized({k: table[k] for k in order}, limits=limits) == chosen
    # a result keeps a name its table has at the top (the solver's tie-break), and replaces any other
    for name in table:
        kept = consistent_bottleneck(name, table)
        assert kept == name if is_most_utilized(name, table) else kept == most_utilized(table)


def test_solvers_agree_on_symmetric_instances_and_show_both_otherwise() -> None:
    fast_table = {"adapter0.uplink.to_host": 0.656, "adapter3.uplink.to_host": 0.656, "host_cpu": 0.2}
    assert solvers_agree("adapter3.uplink.to_host", fast_table, "adapter0.uplink.to_host")
    assert both_words("adapter3.uplink.to_host", fast_table, "adapter0.uplink.to_host") == "adapter3.uplink.to_host"
    assert not solvers_agree("host_cpu", fast_table, "adapter0.uplink.to_host")
    assert both_words("host_cpu", fast_table, "adapter0.uplink.to_host") == "host_cpu (fast path: adapter0.uplink.to_host)"
    assert both_words("host_cpu", None, None) == "host_cpu"


# -- both solvers ----------------------------------------------------------------------------------------------


def _assert_at_top(utilization: dict[str, float], bottleneck: str, where: str) -> None:
    assert bottleneck in utilization, (where, bottleneck)
    assert printed(utilization[bottleneck]) == _top(utilization), (where, bottleneck, utilization[bottleneck],
                                                                   max(utilization.items(), key=lambda kv: kv[1]))


@pytest.mark.parametrize("path", steady_examples(), ids=lambda p: p.stem)
def test_the_fast_path_names_the_most_utilized_component_of_every_example(path: Any) -> None:
    from sim.analytic import evaluate

    r = evaluate(load_scenario(path))
    _assert_at_top(r.utilization, r.bottleneck, path.stem)
    for name, w in (r.workloads or {}).items():
        _assert_at_top(w.utilization, w.bottleneck, f"{path.stem}/{name}")


def test_the_fast_path_names_the_most_utilized_component_of_every_profile_interval() -> None:
    from sim.plan.profile_fast import evaluate_profile

    estimates = evaluate_profile(load_scenario(EXAMPLES / "linuxone_bdi_batch_profile.yaml")).intervals
    assert any(e.fast is not None for e in estimates)
    for e in estimates:
        if e.fast is not None:
            _assert_at_top(e.fast.utilization, e.fast.bottleneck, f"interval {e.index}")


ONE_P4510 = {"name": "one P4510, open 336K 4 KiB 71% reads",
             "topology": {"kind": "direct_nvme", "host": {"model": "LinuxONE-Emperor4-LPAR30", "stack": "linux_nvme"},
                          "drive": "P4510-4TB", "drives": 1, "adapter": "IBM-NVMe-Carrier-0448", "adapters": 1, "layout": "jbod"},
             "workload": {"kind": "open", "rate_iops": 336_000, "read_fraction": 0.71, "block_size_kib": 4, "access": "random"}}


@pytest.mark.parametrize("case", ["s2_ibmi_8x4_mirrored", "s3_exflash_4dimms", "s4_zvm_edev_aliases",
                                  "s1_linuxone_fcp_ds8950f", "one_p4510"])
def test_the_des_names_the_most_utilized_component(case: str) -> None:
    """Short runs (20,000 I/Os): dies at 100% with the controller at half (one P4510 past its capacity), shared dies,
    z/VM subchannels and write caches full behind busy dies, LUN queues full behind the host's serial section."""
    from sim import simulate

    sc = scenario_from_data(ONE_P4510) if case == "one_p4510" else load_scenario(EXAMPLES / f"{case}.yaml")
    r = simulate(with_overrides(sc, fast({"run.max_ios": 20_000})))
    _assert_at_top(r.utilization, r.bottleneck, case)
    if case == "one_p4510":
        assert r.bottleneck == "drive0.dies"


def _draw(data: st.DataObject) -> Any:
    from bench.scenario_space import draw_scenario

    return draw_scenario(lambda xs: data.draw(st.sampled_from(list(xs))), lambda lo, hi: data.draw(st.floats(lo, hi)),
                         max_utilization=1.2)


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_random_scenarios_fast_path(data: st.DataObject) -> None:
    from sim.analytic import evaluate

    sc = _draw(data)
    r = evaluate(sc)
    _assert_at_top(r.utilization, r.bottleneck, sc.name)


@settings(max_examples=4, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_random_scenarios_des(data: st.DataObject) -> None:
    from sim import simulate

    sc = with_overrides(_draw(data), fast({"run.max_ios": 8_000, "run.warmup_ios": 1_000, "run.min_batches": 5}))
    r = simulate(sc)
    if r.utilization:
        _assert_at_top(r.utilization, r.bottleneck, sc.name)
