"""Theory checks for failure and rebuild, against today's volume layer.

* The healthy costs in ``models.faults`` are the ones ``sim.route.volume.Volume`` plans, stripe by
  stripe (same placement, same read-modify-write, same mirror balancing).
* A degraded two-copy mirror's random-read capacity halves (raid1 pair, raid10, IBM i mirroring).
* A RAID-5 small read of a lost member's chunk costs N-1 member reads; averaged over the array
  a read costs 2(N-1)/N member reads and the array's random-read capacity halves.
* Rebuild time = capacity / rate when idle; md's defaults (1,000 and 200,000 KiB/s per device,
  md(4)) bound a recovery between capacity / speed_limit_max and capacity / speed_limit_min.
* The evidence file ``calibration/faults/faults.yaml`` parses against the calibration record
  schema, and each record says how the future ``faults`` section would reproduce it.

Sources: Patterson, Gibson, Katz, "A Case for Redundant Arrays of Inexpensive Disks (RAID)",
SIGMOD 1988; md(4) in the mdadm repository; see calibration/faults/MD_DEFAULTS.md.
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from calibration.records import Record
from models.faults import (
    MD_SPEED_LIMIT_MAX_KIB_S,
    MD_SPEED_LIMIT_MIN_KIB_S,
    DataLoss,
    degraded_io_cost,
    md_rebuild_time_range_s,
    member_read_load,
    rebuild_time_s,
    rebuild_traffic,
    reconstruct_read_cost,
    saturated_read_iops,
    stripe_placement,
)
from sim.des.components import READ, WRITE
from sim.route.volume import Volume

ROOT = Path(__file__).resolve().parent.parent.parent
FAULTS_YAML = ROOT / "calibration" / "faults" / "faults.yaml"
MD_DEFAULTS = ROOT / "calibration" / "faults" / "MD_DEFAULTS.md"
CHUNK = 64 * 1024
REL = 1e-9


def _volume(layout: str, members: int, load: Counter[int] | None = None) -> Volume:
    counts = load if load is not None else Counter()
    return Volume(layout, members, CHUNK, member_bytes=1 << 40, load=lambda m: counts[m], closed_affinity=False)


def _rotation_chunks(layout: str, members: int) -> int:
    """Logical chunks in one full rotation of the layout's placement."""
    if layout in ("raid5", "raid6"):
        return members * (members - (1 if layout == "raid5" else 2))
    if layout == "raid1":
        return members
    return members  # raid10 / ibmi_mirror: pairs x 2 rounds covers each pair twice


parity_layout = st.sampled_from(["raid5", "raid6"])
mirror_layout = st.sampled_from(["raid10", "ibmi_mirror"])


@st.composite
def parity_array(draw: Any) -> tuple[str, int]:
    layout = draw(parity_layout)
    return layout, draw(st.integers(min_value=3 if layout == "raid5" else 4, max_value=16))


@st.composite
def pair_array(draw: Any) -> tuple[str, int]:
    return draw(mirror_layout), 2 * draw(st.integers(min_value=1, max_value=12))


# -- healthy costs agree with sim.route.volume ----------------------------------------------------------


@settings(max_examples=40, deadline=None)
@given(parity_array())
def test_parity_placement_matches_volume(arr: tuple[str, int]) -> None:
    """models.faults places data and parity exactly where sim.route.volume plans them (full-stripe writes)."""
    layout, m = arr
    k = 1 if layout == "raid5" else 2
    vol = _volume(layout, m)
    stripe_bytes = (m - k) * CHUNK
    for s in range(m):
        phases = vol.plan(WRITE, s * stripe_bytes, stripe_bytes, -1)
        assert len(phases) == 1, "a full-stripe write needs no pre-read"
        written = [member for member, _op, _n in phases[0]]
        parities, data = stripe_placement(layout, m, s)
        assert written == data + parities


@settings(max_examples=40, deadline=None)
@given(parity_array())
def test_healthy_parity_costs_match_volume(arr: tuple[str, int]) -> None:
    """With no member failed, reads cost 1 and small writes 2+2 (RAID-5) or 3+3 (RAID-6), as planned."""
    layout, m = arr
    vol = _volume(layout, m)
    chunks = _rotation_chunks(layout, m)
    read_load: Counter[int] = Counter()
    reads_w = writes_w = 0
    for c in range(chunks):
        (read_phase,) = vol.plan(READ, c * CHUNK, CHUNK, -1)
        read_load.update(member for member, _op, _n in read_phase)
        phases = vol.plan(WRITE, c * CHUNK, CHUNK, -1)
        reads_w += sum(1 for ph in phases for _m, op, _n in ph if op == READ)
        writes_w += sum(1 for ph in phases for _m, op, _n in ph if op == WRITE)
    cost = degraded_io_cost(layout, m)
    assert cost.reads_per_read == pytest.approx(1.0, rel=REL)
    assert cost.reads_per_write == pytest.approx(reads_w / chunks, rel=REL)
    assert cost.writes_per_write == pytest.approx(writes_w / chunks, rel=REL)
    expected = member_read_load(layout, m)
    for i in range(m):
        assert expected[i] == pytest.approx(read_load[i] / chunks, rel=REL)


@settings(max_examples=30, deadline=None)
@given(pair_array())
def test_healthy_mirror_costs_match_volume(arr: tuple[str, int]) -> None:
    """Mirrors: writes go to both copies; reads to the less-loaded copy, which splits a pair's reads evenly."""
    layout, m = arr
    outstanding: Counter[int] = Counter()
    vol = _volume(layout, m, outstanding)
    rounds = 2 * m
    writes = 0
    for c in range(rounds):
        (read_phase,) = vol.plan(READ, c * CHUNK, CHUNK, -1)
        outstanding.update(member for member, _op, _n in read_phase)  # reads stay outstanding: load builds up
        writes += sum(len(ph) for ph in vol.plan(WRITE, c * CHUNK, CHUNK, -1))
    expected = member_read_load(layout, m)
    for i in range(m):
        assert expected[i] == pytest.approx(outstanding[i] / rounds, rel=REL)
    assert degraded_io_cost(layout, m).writes_per_write == pytest.approx(writes / rounds, rel=REL)


# -- degraded mirrors -----------------------------------------------------------------------------


@settings(max_examples=60, deadline=None)
@given(pair_array(), st.data())
def test_degraded_mirror_read_capacity_halves(arr: tuple[str, int], data: st.DataObject) -> None:
    """One failed copy: its survivor carries its pair's reads alone, so the array saturates at half the reads."""
    layout, m = arr
    failed = frozenset({data.draw(st.integers(min_value=0, max_value=m - 1))})
    healthy = saturated_read_iops(layout, m, 1000.0)
    degraded = saturated_read_iops(layout, m, 1000.0, failed)
    assert healthy == pytest.approx(1000.0 * m, rel=REL)
    assert degraded == pytest.approx(healthy / 2, rel=REL)
    load = member_read_load(layout, m, failed)
    (lost,) = failed
    assert load[lost] == 0.0
    assert load[lost ^ 1] == pytest.approx(2 / m, rel=REL), "the survivor serves its pair's whole share"
    cost = degraded_io_cost(layout, m, failed)
    assert cost.reads_per_read == pytest.approx(1.0, rel=REL)
    assert cost.writes_per_write == pytest.approx(2 - 2 / m, rel=REL), "the degraded pair writes one copy"


def test_raid1_pair_degraded_read_capacity_halves() -> None:
    assert saturated_read_iops("raid1", 2, 500.0, frozenset({1})) == pytest.approx(saturated_read_iops("raid1", 2, 500.0) / 2)


@settings(max_examples=40, deadline=None)
@given(pair_array(), st.data())
def test_mirror_more_failures_in_distinct_pairs(arr: tuple[str, int], data: st.DataObject) -> None:
    """Failures in distinct pairs: capacity still halves (the busiest survivor sets it), writes fall with each."""
    layout, m = arr
    pairs = m // 2
    lost_pairs = data.draw(st.sets(st.integers(min_value=0, max_value=pairs - 1), min_size=1))
    failed = frozenset(2 * p + data.draw(st.integers(min_value=0, max_value=1)) for p in lost_pairs)
    assert saturated_read_iops(layout, m, 1.0, failed) == pytest.approx(m / 2, rel=REL)
    assert degraded_io_cost(layout, m, failed).writes_per_write == pytest.approx(2 - len(failed) / pairs, rel=REL)


def test_both_copies_lost_is_data_loss() -> None:
    with pytest.raises(DataLoss, match="pair 1"):
        member_read_load("raid10", 8, frozenset({2, 3}))
    with pytest.raises(DataLoss):
        degraded_io_cost("raid1", 2, frozenset({0, 1}))


# -- degraded parity layouts ----------------------------------------------------------------------


@settings(max_examples=60, deadline=None)
@given(st.integers(min_value=3, max_value=24), st.data())
def test_raid5_degraded_read_costs(n: int, data: st.DataObject) -> None:
    """RAID-5 with one member lost: a lost chunk costs N-1 reads; a read costs 2(N-1)/N on average;
    every survivor serves 2/N of the reads, so random-read capacity halves."""
    lost = data.draw(st.integers(min_value=0, max_value=n - 1))
    failed = frozenset({lost})
    assert reconstruct_read_cost("raid5", n, failed) == n - 1
    cost = degraded_io_cost("raid5", n, failed)
    assert cost.reads_per_read == pytest.approx(2 * (n - 1) / n, rel=REL)
    load = member_read_load("raid5", n, failed)
    assert load[lost] == 0.0
    for i in range(n):
        if i != lost:
            assert load[i] == pytest.approx(2 / n, rel=REL)
    assert saturated_read_iops("raid5", n, 1.0, failed) == pytest.approx(saturated_read_iops("raid5", n, 1.0) / 2, rel=REL)


@settings(max_examples=60, deadline=None)
@given(st.integers(min_value=3, max_value=24), st.data())
def test_raid5_degraded_small_write_costs(n: int, data: st.DataObject) -> None:
    """A lost data chunk: read the other N-2, write parity; a lost parity: write the data; else 2+2.
    Each case covers 1/N, 1/N and (N-2)/N of the small writes."""
    failed = frozenset({data.draw(st.integers(min_value=0, max_value=n - 1))})
    cost = degraded_io_cost("raid5", n, failed)
    assert cost.reads_per_write == pytest.approx((n - 2) / n + 2 * (n - 2) / n, rel=REL)
    assert cost.writes_per_write == pytest.approx(1 / n + 1 / n + 2 * (n - 2) / n, rel=REL)


@settings(max_examples=60, deadline=None)
@given(st.integers(min_value=4, max_value=20), st.data())
def test_raid6_degraded_reads(n: int, data: st.DataObject) -> None:
    """RAID-6: a lost chunk costs N-2 reads with one or two members lost; failed members serve nothing;
    the reads of survivors add up to the average cost."""
    failed = frozenset(data.draw(st.sets(st.integers(min_value=0, max_value=n - 1), min_size=1, max_size=2)))
    assert reconstruct_read_cost("raid6", n, failed) == n - 2
    load = member_read_load("raid6", n, failed)
    assert all(load[i] == 0.0 for i in failed)
    cost = degraded_io_cost("raid6", n, failed)
    assert sum(load) == pytest.approx(cost.reads_per_read, rel=REL)
    lost_share = len(failed) / n  # each member holds 1/N of the data chunks
    assert cost.reads_per_read == pytest.approx((1 - lost_share) + lost_share * (n - 2), rel=REL)
    assert saturated_read_iops("raid6", n, 1.0, failed) < saturated_read_iops("raid6", n, 1.0)


@pytest.mark.parametrize(("layout", "members", "failed"), [("raid5", 5, {0, 1}), ("raid6", 6, {0, 1, 2})])
def test_parity_beyond_tolerance_is_data_loss(layout: str, members: int, failed: set[int]) -> None:
    with pytest.raises(DataLoss):
        degraded_io_cost(layout, members, frozenset(failed))


@pytest.mark.parametrize(("args", "field"), [
    (("raid0", 4, frozenset({0})), "layout"),
    (("raid5", 2, frozenset()), "members"),
    (("raid10", 5, frozenset()), "members"),
    (("raid5", 4, frozenset({4})), "failed"),
])
def test_bad_arguments_name_the_field(args: tuple[str, int, frozenset[int]], field: str) -> None:
    with pytest.raises(ValueError, match=f"^{field}:"):
        member_read_load(*args)


# -- rebuild time ---------------------------------------------------------------------------------


@settings(max_examples=100, deadline=None)
@given(st.floats(min_value=1e6, max_value=1e15), st.floats(min_value=1e5, max_value=1e11), st.integers(min_value=2, max_value=8))
def test_rebuild_time_is_capacity_over_rate(capacity: float, rate: float, factor: int) -> None:
    t = rebuild_time_s(capacity, rate)
    assert t * rate == pytest.approx(capacity, rel=1e-12)
    assert rebuild_time_s(capacity * factor, rate) == pytest.approx(factor * t, rel=1e-12)
    assert rebuild_time_s(capacity, rate * factor) == pytest.approx(t / factor, rel=1e-12)


@settings(max_examples=60, deadline=None)
@given(st.sampled_from(["raid1", "raid10", "ibmi_mirror", "raid5", "raid6"]), st.integers(min_value=2, max_value=16), st.data())
def test_rebuild_traffic_per_rebuilt_byte(layout: str, n: int, data: st.DataObject) -> None:
    """Per byte rebuilt: the replacement writes 1; survivors read 1 (mirrors), N-1 (RAID-5), N-2 (RAID-6) in all."""
    if layout in ("raid10", "ibmi_mirror"):
        n += n % 2
    n = max(n, {"raid5": 3, "raid6": 4}.get(layout, 2))
    rebuilt = data.draw(st.integers(min_value=0, max_value=n - 1))
    traffic = rebuild_traffic(layout, n, rebuilt)
    assert traffic[rebuilt] == (0.0, 1.0)
    assert sum(w for _r, w in traffic) == 1.0
    expected_reads = {"raid5": n - 1, "raid6": n - 2}.get(layout, 1)
    assert sum(r for r, _w in traffic) == pytest.approx(expected_reads, rel=REL)
    if layout in ("raid10", "ibmi_mirror"):
        assert traffic[rebuilt ^ 1] == (1.0, 0.0), "a pair rebuilds from its own survivor"


def test_md_default_limits_bound_a_recovery() -> None:
    """A 3.84 TB member behind a 4 GB/s device: idle at 200,000 KiB/s, loaded no slower than 1,000 KiB/s."""
    member = 3.84e12
    fastest, slowest = md_rebuild_time_range_s(member, device_rate_bytes_per_s=4e9)
    assert fastest == pytest.approx(member / (200_000 * 1024))  # 18,750 s = 5.2 h
    assert slowest == pytest.approx(member / (1_000 * 1024))  # 3.75e6 s = 43 days
    assert slowest / fastest == pytest.approx(200.0)


@settings(max_examples=100, deadline=None)
@given(st.floats(min_value=1e9, max_value=1e14), st.floats(min_value=1e6, max_value=2e10),
       st.integers(min_value=1, max_value=10**6), st.integers(min_value=1, max_value=10**6))
def test_md_range_is_ordered_and_device_bound(member: float, device: float, lo: int, hi: int) -> None:
    lo, hi = min(lo, hi), max(lo, hi)
    fastest, slowest = md_rebuild_time_range_s(member, device, lo, hi)
    assert fastest <= slowest
    assert fastest >= member / device * (1 - 1e-12), "never faster than the device can copy"
    assert fastest >= member / (hi * 1024) * (1 - 1e-12), "never faster than speed_limit_max"


def test_md_range_rejects_inverted_limits() -> None:
    with pytest.raises(ValueError, match=r"^speed_limit_min_kib_s:"):
        md_rebuild_time_range_s(1e12, 1e9, speed_limit_min_kib_s=300_000, speed_limit_max_kib_s=200_000)


def test_md_defaults_documented_with_citation() -> None:
    """The constants the model uses are the ones MD_DEFAULTS.md quotes from md(4)."""
    text = MD_DEFAULTS.read_text(encoding="utf-8")
    assert MD_SPEED_LIMIT_MIN_KIB_S == 1_000 and "The default is 1000." in text
    assert MD_SPEED_LIMIT_MAX_KIB_S == 200_000 and "The default is 200,000." in text
    assert "md.4" in text and "per-device rate" in text


# -- the evidence file ----------------------------------------------------------------------------


def _records() -> list[dict[str, Any]]:
    data = yaml.safe_load(FAULTS_YAML.read_text(encoding="utf-8"))
    assert data["system"] == "FAULTS"
    return list(data["records"])


def test_fault_records_fit_the_calibration_schema() -> None:
    """Every record is a valid calibration Record once the loader knows system FAULTS and scenario_sketch.

    ``calibration.records.System`` has no FAULTS yet and ``Record`` forbids extra keys, so the check
    validates each record as system "user" without its sketch; everything else is the real schema.
    """
    records = _records()
    assert len(records) >= 4
    ids = [r["id"] for r in records]
    assert len(ids) == len(set(ids))
    for raw in records:
        assert raw["system"] == "FAULTS"
        body = {k: v for k, v in raw.items() if k != "scenario_sketch"} | {"system": "user"}
        rec = Record.model_validate(body)
        assert rec.fit is False, f"{rec.id}: evidence for a model that does not exist yet is checked, not fitted"
        assert rec.source.seed.startswith("http"), f"{rec.id}: cite a URL"
        assert rec.source.quote, f"{rec.id}: quote the printed value"


def test_fault_records_sketch_their_scenario() -> None:
    """Each record says which member fails, the layout, the rebuild setting and the host workload."""
    for raw in _records():
        sketch = raw["scenario_sketch"]
        for key in ("layout", "members", "failed", "rebuild", "workload"):
            assert key in sketch, f"{raw['id']}: scenario_sketch lacks {key}"


def test_firewood_resync_not_faster_than_md_default_cap() -> None:
    """Checked, not fitted: at md defaults a ~13 TB RAID-10 resync cannot beat capacity / speed_limit_max;
    the reported ~24 h is above that floor (17.6 h), as the defaults predict."""
    (rec,) = [r for r in _records() if r["id"] == "faults.md_raid10.i8ge_resync_default"]
    floor = rebuild_time_s(13e12, MD_SPEED_LIMIT_MAX_KIB_S * 1024)
    assert floor / 3600 == pytest.approx(17.6, abs=0.1)
    assert rec["measured"] >= floor


def test_solidigm_md_idle_rebuild_implies_raised_speed_limit() -> None:
    """Checked, not fitted: md rebuilt a 61.44 TB member in 53 h 40 min idle, 318 MB/s, which is above the
    default speed_limit_max (204.8 MB/s, 83.3 h): the study's md cannot have run at default limits, and the
    record says so (its conflict field) instead of hiding it."""
    (rec,) = [r for r in _records() if r["id"] == "faults.solidigm_xiraid.md_idle_rebuild_time"]
    assert rec["measured"] == 53 * 3600 + 40 * 60
    implied_rate = 61.44e12 / rec["measured"]
    default_floor = rebuild_time_s(61.44e12, MD_SPEED_LIMIT_MAX_KIB_S * 1024)
    assert implied_rate == pytest.approx(318e6, rel=0.01)
    assert rec["measured"] < default_floor
    assert "speed_limit_max" in rec["conflict"]
