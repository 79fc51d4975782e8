"""Latency axes and verdicts as a customer reads them: ticks in us / ms on the 1-2-5 series covering the data, an
objective's label in the same words, and a verdict of a run that is not final that never reads a plain "met"."""

from __future__ import annotations

import math

from hypothesis import given
from hypothesis import strategies as st

from app.axes import log_latency_axis, log_ticks, us_words
from app.objective_charts import bound_words, verdict_words
from app.words import busiest_words


def test_latency_words_pick_the_unit_a_reader_uses() -> None:
    assert [us_words(v) for v in (0.5, 5, 850, 1000, 1500, 2000, 2.5e6)] == \
        ["0.5 us", "5 us", "850 us", "1 ms", "1.5 ms", "2 ms", "2.5 s"]
    assert bound_words("latency_p99_us", "max", 1000) == "p99 latency <= 1 ms"
    assert bound_words("mbps", "min", 500) == "MB/s >= 500"


@given(st.floats(0.5, 1e7), st.floats(1.0, 1e4))
def test_log_ticks_cover_the_data_on_the_1_2_5_series_with_units(low: float, ratio: float) -> None:
    high = low * ratio
    ticks, labels = log_ticks([low, high, None, math.nan])
    assert ticks[0] <= low and ticks[-1] >= high
    assert len(ticks) <= 10 or all(math.log10(t) == round(math.log10(t)) for t in ticks)
    for t in ticks:  # a mantissa of 1, 2 or 5: no "3 ... 9" minor labels
        mantissa = t / 10 ** math.floor(math.log10(t) + 1e-9)
        assert round(mantissa, 6) in (1.0, 2.0, 5.0)
    assert all(label.endswith((" us", " ms", " s")) for label in labels)
    axis = log_latency_axis([low, high])
    assert axis["type"] == "log" and axis["ticktext"] == labels
    assert axis["range"][0] < math.log10(low) and axis["range"][1] > math.log10(high)


def test_a_verdict_of_a_run_that_is_not_final_says_so() -> None:
    assert verdict_words("met", "precise") == "met"
    for validity in ("cut_short", "unstable", "unknown"):
        for verdict in ("met", "missed", "uncertain"):
            words = verdict_words(verdict, validity)
            assert words.startswith("not final: ") and words != "met"
    assert verdict_words("met", "cut_short") == "not final: cut short (so far: met)"


def test_the_busiest_component_is_the_bottleneck_only_near_saturation() -> None:
    assert busiest_words("adapter2.uplink.to_host", 0.29) == "NVMe adapter 3: PCIe uplink, to the host (29% busy)"
    assert busiest_words("drive0.dies", 0.93) == "drive 1: NAND dies (93% busy, the bottleneck)"
    assert busiest_words("host_cpu") == "host CPU cores"
