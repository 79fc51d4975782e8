"""Shared dies under the ``dies`` device model: a random read holds its die for tR and its bytes beyond the
first 4 KiB at 1 / N of the random-read bandwidth, the pooled model's rule (``FlashParameters.die_read_time_us``) on
the layout's N dies, in both solvers; drives whose dies are not shared keep tR whatever the size.

Small budgets (10,000 reads per point); the tables: ``python -m calibration.ext.die_solvers --devices eXFlash-400GB
--block-kib 8`` (calibration/ext/DIE_LEVEL.md).
"""

from __future__ import annotations

import pytest

from calibration.ext.die_solvers import compare, scenario_for
from models.catalog import lookup
from sim.analytic import evaluate
from sim.analytic.paths import DieGroups, compile_scenario
from sim.route.flash import DieLayout, FlashParameters, die_layout, flash_parameters
from sim.route.links import us_per_byte


def _exflash() -> tuple[FlashParameters, DieLayout]:
    spec = lookup("dimms", "eXFlash-400GB")
    return flash_parameters(spec, "random"), die_layout(spec)


def test_the_hold_is_the_pooled_rule_on_the_layouts_dies() -> None:
    """4 KiB: tR; every further byte at 1 / N of the random-read bandwidth, so N dies all busy deliver exactly the
    random-read bandwidth; with N = P_r and tR = the QD1 latency it is the pooled hold; a read over several pages
    splits its bytes among its dies."""
    spec = lookup("dimms", "eXFlash-400GB")
    p, d = flash_parameters(spec, "random"), die_layout(spec)
    assert p.shared_dies and d.dies == 24
    assert p.die_read_time_us(4096, d) == d.die_read_us
    assert p.die_read_time_us(4096) == p.read_latency_us  # the pooled hold is untouched
    step = p.die_read_time_us(16384, d) - p.die_read_time_us(8192, d)
    assert d.dies * 8192 / step * 1e-3 == pytest.approx(spec.random_read_bw_gbs, rel=1e-12)
    pooled_like = DieLayout(dies=p.read_units, channels=d.channels, die_read_us=p.read_latency_us,
                            die_read_cv=d.die_read_cv, transfer_us=d.transfer_us, controller_us=d.controller_us,
                            controller_kiops=d.controller_kiops, page_bytes=d.page_bytes, rating_qd=d.rating_qd)
    for size in (4096, 8192, 12288, 16384):
        assert p.die_read_time_us(size, pooled_like) == pytest.approx(p.die_read_time_us(size), rel=1e-12)
    assert d.pieces(65536) == 4
    assert p.die_read_time_us(65536, d) == pytest.approx(
        d.die_read_us + d.dies * (65536 - 4096) / 4 * us_per_byte(p.read_bw_gbs), rel=1e-12)
    # a sequential stream is striped: tR whatever the size
    seq = flash_parameters(spec, "sequential")
    assert seq.die_read_time_us(65536, d) == d.die_read_us


@pytest.mark.parametrize(("section", "name", "shared"), [("dimms", "eXFlash-400GB", True), ("drives", "P4510-4TB", False)])
def test_the_fast_paths_die_visit_is_the_hold(section: str, name: str, shared: bool) -> None:
    """The fast path's die service a + b n is the DES's hold at every size of a 4 / 8 / 16 KiB mix (the hold is
    linear from 4 KiB to a page): tR and the bytes beyond 4 KiB with shared dies, tR on a drive whose dies are
    not shared; one size: exactly its hold."""
    from models.workload import SizeWeight

    spec = lookup(section, name)
    p, d = flash_parameters(spec, "random"), die_layout(spec)
    base = scenario_for(section, name, 8, 10_000)
    mix = base.model_copy(update={"workload": base.workload.model_copy(update={"sizes": [
        SizeWeight(kib=4, weight=0.5), SizeWeight(kib=8, weight=0.3), SizeWeight(kib=16, weight=0.2)]})})
    for sc, sizes in ((mix, (4, 8, 12, 16)), (scenario_for(section, name, 8, 10_000, block_kib=8), (8,))):
        (device,) = compile_scenario(sc, finish=False).die_devices
        assert isinstance(device, DieGroups)
        for kib in sizes:
            n = kib * 1024
            expected = p.die_read_time_us(n, d) if shared else d.die_read_us
            assert device.die_us + device.die_us_per_byte * n == pytest.approx(expected, rel=1e-12)
    (device,) = compile_scenario(mix, finish=False).die_devices
    assert (device.die_us_per_byte > 0) == shared


@pytest.mark.parametrize(("kib", "qd"), [(8, 8), (8, 32), (16, 16), (16, 64)])
def test_both_solvers_agree_on_larger_shared_die_reads(kib: int, qd: int) -> None:
    """eXFlash 8 and 16 KiB random reads: IOPS and mean within 5%, p99 within 15% (the 4 KiB bounds)."""
    row = compare("dimms", "eXFlash-400GB", qd, 10_000, block_kib=kib)
    d_iops, d_mean, d_p99, _ = row.diffs()
    assert abs(d_iops) < 0.05
    assert abs(d_mean) < 0.05
    assert abs(d_p99) < 0.15


def test_larger_reads_cost_the_dies_more() -> None:
    """Before the rule an 8 KiB read held a die as long as a 4 KiB one (8K IOPS = 4K IOPS at depth, seed 002 Table 4
    has 142K vs 72K); now deep 8 and 16 KiB loops are die-bound below the N dies' all-busy rate N / hold."""
    p, d = _exflash()
    deep = {kib: evaluate(scenario_for("dimms", "eXFlash-400GB", 256, 10_000, block_kib=kib)).iops for kib in (4, 8, 16)}
    assert deep[4] == pytest.approx(d.controller_kiops * 1e3, rel=0.01)
    for kib in (8, 16):
        all_busy = d.dies / p.die_read_time_us(kib * 1024, d) * 1e6
        assert 0.8 * all_busy < deep[kib] <= all_busy * (1 + 1e-9)
    assert deep[16] < deep[8] < 0.75 * deep[4]
