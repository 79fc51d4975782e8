"""``bench.events``: the default device model's column beside pooled, and instructions per I/O."""

from __future__ import annotations

import json

import pytest


def test_table_gives_pooled_beside_the_default_model(capsys: pytest.CaptureFixture[str]) -> None:
    """Each scenario runs under its own device model and under pooled: a die-level drive example's two event counts
    differ, a route without drives (eXFlash DIMMs: pooled under auto) gives the same count twice; ``--no-pooled``
    leaves the columns out."""
    from bench.events import main as events_main

    args = ["--ios", "300", "--only", "s1_linuxone_nvme_raid10", "s3_exflash_4dimms", "--json"]
    assert events_main(args) == 0
    doc = json.loads(capsys.readouterr().out)
    own = {r["name"]: r["events_per_io"] for r in doc["runs"]}
    pooled = {name: r["events_per_io"] for name, r in doc["pooled"].items()}
    assert own["s3_exflash_4dimms"] == pooled["s3_exflash_4dimms"]
    assert own["s1_linuxone_nvme_raid10"] != pooled["s1_linuxone_nvme_raid10"]
    assert events_main([*args[:-1], "--markdown"]) == 0
    out = capsys.readouterr().out
    assert "| events per I/O | events per I/O, pooled |" in out
    assert events_main([*args[:-1], "--markdown", "--no-pooled"]) == 0
    assert "pooled |" not in capsys.readouterr().out


def test_instructions_columns_and_ratio(monkeypatch: pytest.MonkeyPatch) -> None:
    """``count_instructions`` fills the chosen scenarios' instructions per I/O under both models (valgrind stubbed
    here: the figures themselves are ``bench.instructions``) and the table prints their ratio."""
    import bench.instructions as cost
    from bench.events import EventRun, EventTable, count_instructions, format_markdown

    figures = {"default": 120_000.0, "pooled": 100_000.0}
    monkeypatch.setattr(cost, "instructions_per_io", lambda path, ios, model: figures[model])
    run = EventRun("s2_ibmi_8x4_mirrored", "example", 1000, 5000, 1.0)
    other = EventRun("s5_fs9100_scsi", "example", 1000, 5000, 1.0)
    table = EventTable([run, other], EventRun("mm8", "example", 1000, 2000, 0.5), "interpreted", 1000, 1000)
    count_instructions(table, ["s2_ibmi"], 1000)
    assert table.instructions == {"s2_ibmi_8x4_mirrored": figures}
    rows = format_markdown(table).splitlines()
    s2 = next(r for r in rows if r.startswith("| s2_ibmi_8x4_mirrored |"))
    s5 = next(r for r in rows if r.startswith("| s5_fs9100_scsi |"))
    assert "120,000 | 100,000 | 1.200x" in s2 and "1.200x" not in s5
