"""The catalog: every entry validates, every number cites its source, seed tables are transcribed exactly."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
import yaml

from models import catalog as catalog_module
from models.catalog import CATALOG_DIR, SECTIONS, load_catalog, lookup, parameter

# seed 001, table "Unités NVMe supportées par IBM i en natif":
# (TB, read GB/s, write GB/s, read kIOPS, write kIOPS, read us, write us)
IBM_I_TABLE = {
    "ES5B": (0.8, 6.4, 1.3, 800, 140, 80, 15),
    "ES5D": (1.6, 7.0, 2.5, 1300, 260, 80, 15),
    "ES5F": (3.2, 7.0, 4.1, 1600, 280, 80, 15),
    "ES5H": (6.4, 7.0, 4.1, 1600, 280, 80, 15),
    "EC5W": (6.4, 7.2, 3.8, 1500, 250, 80, 20),
    "ES4C": (1.6, 7.3, 3.1, 1740, 320, 138, 215),
    "ES4E": (3.2, 7.4, 6.0, 1700, 280, 134, 114),
    "ES4G": (6.4, 6.4, 4.6, 1380, 390, 152, 107),
    "ECTB": (15.3, 2.2, 5.6, 1500, 300, 67, 15),
}


def _raw_entries() -> list[tuple[str, str, dict]]:
    out = []
    for section in SECTIONS:
        data = yaml.safe_load((CATALOG_DIR / f"{section}.yaml").read_text())
        out.extend((section, name, entry) for name, entry in data.items())
    return out


@pytest.mark.parametrize(("section", "name", "entry"), _raw_entries(), ids=lambda v: v if isinstance(v, str) else "")
def test_every_number_cites_a_source(section: str, name: str, entry: dict) -> None:
    sources = entry.get("sources", {})
    for field, value in entry.items():
        if isinstance(value, bool):
            continue
        if isinstance(value, int | float):
            assert sources.get(field), f"{section}.{name}.{field} has no source"
        if field == "cpu_us_per_io":
            for stack in value:
                assert sources.get(f"cpu_us_per_io.{stack}"), f"{section}.{name}.cpu_us_per_io.{stack} has no source"
        if field == "behaviour":
            for key in value:
                assert sources.get(f"behaviour.{key}") or sources.get("behaviour"), f"{section}.{name}.behaviour.{key} has no source"


@pytest.mark.parametrize(("section", "name", "entry"), _raw_entries(), ids=lambda v: v if isinstance(v, str) else "")
def test_prices_are_marked_and_dated(section: str, name: str, entry: dict) -> None:
    if section == "hosts":
        return
    price = entry.get("price")
    assert price, f"{section}.{name} has no price"
    assert price["kind"] in ("list_price_assumption", "quoted")
    assert len(str(price["as_of"])) >= 7 and price["source"]


def test_ibm_i_table_is_transcribed_exactly() -> None:
    cat = load_catalog()
    for name, (tb, rbw, wbw, rk, wk, rl, wl) in IBM_I_TABLE.items():
        d = cat.drives[name]
        assert (d.capacity_tb, d.read_bw_gbs, d.write_bw_gbs, d.read_kiops, d.write_kiops, d.read_latency_us, d.write_latency_us) == (
            tb, rbw, wbw, rk, wk, rl, wl
        ), name


def test_seed_devices_present() -> None:
    cat = load_catalog()
    assert {"PM1733-1.92TB", "P4510-4TB", "CM6-R-1.92TB"} <= set(cat.drives)
    assert cat.drives["ECTB"].max_namespaces == 64  # seed 001
    assert cat.dimms["eXFlash-400GB"].read_kiops == 142  # seed 002 Table 4
    assert (cat.adapters["EJ1Y"].max_drives, cat.adapters["EJ1X"].max_drives) == (8, 4)  # seed 001
    assert cat.adapters["EJ1Y"].uplink.gbs == pytest.approx(16 * 1.969)
    assert cat.storage_servers["DS8950F"].cache_gb == 3840  # seed 000 section 4.1.1
    assert {"FICON-Express32S", "FC-HBA-32G"} <= set(cat.san_adapters)
    assert {"DS8950F", "FS9100"} <= set(cat.storage_servers)


def test_parameters_carry_sources() -> None:
    params = load_catalog().parameters

    def walk(node: dict, path: str) -> None:
        if "value" in node:
            assert node.get("source"), path
            return
        for key, child in node.items():
            walk(child, f"{path}.{key}")

    walk(params, "parameters")
    assert parameter("host_defaults.cpu_us_per_io.zvm_cp") == 13.0


def test_user_catalog_overrides_prices(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    entry = yaml.safe_load((CATALOG_DIR / "drives.yaml").read_text())["ES5F"]
    entry["price"] = {"usd": 1234.0, "kind": "user", "as_of": "2026-11", "source": "my quote"}
    (tmp_path / "drives.yaml").write_text(yaml.safe_dump({"ES5F": entry}))
    monkeypatch.setenv("FLASHPLAN_CATALOG_DIR", str(tmp_path))
    assert lookup("drives", "ES5F").price.usd == 1234.0
    assert "ES5D" in load_catalog().drives  # built-in entries remain
    monkeypatch.delenv("FLASHPLAN_CATALOG_DIR")
    assert lookup("drives", "ES5F").price.usd != 1234.0
    assert os.environ.get("FLASHPLAN_CATALOG_DIR") is None
    catalog_module._load.cache_clear()


def test_unknown_model_lists_known_names() -> None:
    with pytest.raises(KeyError, match=r"known drives: .*ES5F"):
        lookup("drives", "nope")
