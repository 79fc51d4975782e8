"""Die-level layout of every catalog flash device: the rules of calibration/ext/DEVICE_PARAMETERS.md."""

from __future__ import annotations

import itertools

import pytest

from models.catalog import load_catalog, lookup
from models.hardware import FlashDeviceSpec
from sim.route.flash import die_layout, host_transfer_us


def _devices() -> list[tuple[str, str]]:
    cat = load_catalog()
    return [("drives", n) for n in cat.drives] + [("dimms", n) for n in cat.dimms]


@pytest.mark.parametrize(("section", "name"), _devices())
def test_die_layout_follows_the_datasheet(section: str, name: str) -> None:
    """The dies alone sustain the datasheet random-read IOPS; a closed loop of the rating queue depth Q over
    N equally likely dies keeps the B = IOPS x tR busy dies the datasheet needs (product form, each die busy
    Q / (Q + N - 1)), with no more than one die per channel over that; the QD1 latency is
    controller + tR + one 4 KiB transfer (the transfer counted once); the
    controller ceiling is the datasheet IOPS."""
    spec: FlashDeviceSpec = lookup(section, name)
    d = die_layout(spec)
    assert d.die_read_us > 0
    assert d.qd1_read_us == pytest.approx(spec.read_latency_us)
    assert d.transfer_us == pytest.approx(host_transfer_us(spec))
    assert d.dies % d.channels == 0
    assert d.die_kiops >= spec.read_kiops
    busy = spec.read_kiops * 1e3 * d.die_read_us * 1e-6
    q = d.rating_qd
    if q > busy + 1:
        def kept_busy(n: int) -> float:
            return n * q / (q + n - 1)

        assert kept_busy(d.dies) >= busy * (1 - 1e-9)
        assert kept_busy(d.dies - d.channels) < busy
    else:
        assert (d.dies - d.channels) / d.die_read_us * 1e3 < spec.read_kiops
    assert d.controller_kiops == spec.read_kiops
    assert 0 <= d.die_read_cv < 1, "a die's read time is a tight law, not an exponential"


def test_transfer_is_the_link_time_of_4k() -> None:
    """4 KiB over PCIe 4 x4 takes about 0.52 us, over PCIe 3 x4 about 1.04 us (DEVICE_PARAMETERS.md)."""
    assert host_transfer_us(lookup("drives", "PM1733-1.92TB")) == pytest.approx(0.52, abs=0.01)
    assert host_transfer_us(lookup("drives", "P3700-800GB")) == pytest.approx(1.04, abs=0.01)


@pytest.mark.parametrize(("section", "name"), [("drives", "PM1733-1.92TB"), ("drives", "P4510-4TB"),
                                               ("drives", "ES5F"), ("dimms", "eXFlash-400GB")])
def test_die_level_closed_loop_knee(section: str, name: str) -> None:
    """QD1 gives the datasheet QD1 latency; IOPS rise with depth, never past the controller ceiling,
    and approach it at depth (the knee is gradual: die collisions, not a wall); the mean rises."""
    from sim.analytic.dies import die_level_closed, die_qd1_quantile_us

    spec: FlashDeviceSpec = lookup(section, name)
    d = die_layout(spec)
    points = [die_level_closed(d, qd) for qd in (1, 2, 4, 8, 16, 32, 64, 128, 256, 1024)]
    assert points[0].mean_us == pytest.approx(spec.read_latency_us)
    ceiling = spec.read_kiops * 1e3
    # IOPS rise until the controller's ceiling holds them (reached by QD256 with the rating-depth die count)
    assert all((a.iops < b.iops or a.iops == pytest.approx(ceiling)) and a.mean_us < b.mean_us for a, b in itertools.pairwise(points))
    assert all(p.iops <= spec.read_kiops * 1e3 * (1 + 1e-9) for p in points)
    assert points[-1].iops > 0.9 * spec.read_kiops * 1e3
    # Little's law in every point
    assert all(p.iops * p.mean_us * 1e-6 == pytest.approx(p.qd) for p in points)
    # QD1 tail from a tight die law: p99 within 1.5x the mean (the pooled exponential gave about 1.9x)
    assert spec.read_latency_us < die_qd1_quantile_us(d, 0.99) < 1.5 * spec.read_latency_us
