"""The catalog: every entry validates, every number cites its source, seed tables are transcribed exactly."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
import yaml

from models import catalog as catalog_module
from models.catalog import CATALOG_DIR, OVERRIDE_FILES, SECTIONS, CatalogError, load_catalog, lookup, parameter
from models.catalog_parameters import EngineParameters, override_problems

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


# --- a user's catalog folder ($FLASHPLAN_CATALOG_DIR) ----------------------------------------------

S1 = Path(__file__).resolve().parent.parent.parent / "examples" / "s1_linuxone_nvme_raid10.yaml"


@pytest.fixture
def user_catalog(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """An empty folder that $FLASHPLAN_CATALOG_DIR points at (each test writes its files)."""
    folder = tmp_path / "mycatalog"
    folder.mkdir()
    monkeypatch.setenv("FLASHPLAN_CATALOG_DIR", str(folder))
    return folder


def _catalog_problems() -> list[tuple[str, str]]:
    with pytest.raises(CatalogError) as err:
        load_catalog()
    return err.value.problems


def test_the_built_in_parameters_fit_the_model_overrides_are_checked_against() -> None:
    raw = yaml.safe_load((CATALOG_DIR / "parameters.yaml").read_text())
    assert EngineParameters.model_validate(raw).device_behaviour.service_cv.value == raw["device_behaviour"]["service_cv"]["value"]
    assert override_problems(raw) == []  # the whole built-in file is a valid override of itself


def test_a_parameter_override_changes_that_parameter_and_keeps_the_rest_of_its_section(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """parameters.yaml is merged key by key: one parameter of host_defaults set, every other one kept."""
    before = {path: parameter(path) for path in ("host_defaults.cores", "host_defaults.cpu_us_per_io.linux_nvme",
                                                 "host_defaults.cpu_us_per_kib.zvm_cp", "device_behaviour.service_cv")}
    (tmp_path / "parameters.yaml").write_text(
        "host_defaults:\n  cores:\n    value: 8\n    source: our standard LPAR\n"
        "  cpu_us_per_kib:\n    linux_nvme: {value: 0.25, source: measured}\n")
    monkeypatch.setenv("FLASHPLAN_CATALOG_DIR", str(tmp_path))
    assert before["host_defaults.cores"] != 8 and parameter("host_defaults.cores") == 8
    assert parameter("host_defaults.cpu_us_per_kib.linux_nvme") == 0.25
    for path in ("host_defaults.cpu_us_per_io.linux_nvme", "host_defaults.cpu_us_per_kib.zvm_cp", "device_behaviour.service_cv"):
        assert parameter(path) == before[path], path  # the section's other keys, and other sections, stay


@pytest.mark.parametrize(("text", "field", "message"), [
    ("device_behaviour: 3\n", "device_behaviour", "expected a mapping of service_cv, "),
    ("device_behaviour:\n  service_cv: {value: 9, source: guess}\n", "device_behaviour.service_cv.value",
     "less than or equal to 5, got 9"),
    ("device_behaviour:\n  channels: {value: 2.5, source: guess}\n", "device_behaviour.channels.value", "integer"),
    ("device_behaviour:\n  channels: {value: 100000, source: guess}\n", "device_behaviour.channels.value",
     "less than or equal to 1024, got 100000"),
    ("device_behaviour:\n  service_cv: 0.5\n", "device_behaviour.service_cv", "valid dictionary"),
    ("device_behaviour:\n  service_cv: {value: 0.5}\n", "device_behaviour.service_cv.source", "Field required"),
    ("device_behaviour:\n  service_cv: {value: true, source: guess}\n", "device_behaviour.service_cv.value", "True"),
    ("device_behavior:\n  service_cv: {value: 0.5, source: guess}\n", "device_behavior", "unknown parameter"),
    ("host_defaults:\n  cpu_us_per_io:\n    linux_nvm: {value: 3, source: x}\n", "host_defaults.cpu_us_per_io.linux_nvm",
     "known here: linux_nvme, "),
    ("host_defaults:\n  cores: {value: -2, source: x}\n", "host_defaults.cores.value", "greater than or equal to 1, got -2"),
])
def test_a_parameter_override_of_the_wrong_shape_names_the_file_field_range_and_value(
        user_catalog: Path, text: str, field: str, message: str) -> None:
    (user_catalog / "parameters.yaml").write_text(text)
    problems = _catalog_problems()
    where = f"{user_catalog / 'parameters.yaml'}: {field}"
    assert any(f == where and message in m for f, m in problems), problems


def test_an_entry_override_that_fails_its_schema_names_the_file_not_the_scenario_field(user_catalog: Path) -> None:
    """A bad drive in the user's drives.yaml: the error names that file and the entry's field, also when a
    scenario's validation is what first looks the catalog up (not ``topology.host``)."""
    entry = yaml.safe_load((CATALOG_DIR / "drives.yaml").read_text())["ES5F"]
    (user_catalog / "drives.yaml").write_text(yaml.safe_dump({"ES5F": {**entry, "capacity_tb": -1}}))
    from models.scenario import load_scenario

    with pytest.raises(CatalogError) as err:
        load_scenario(S1)
    assert err.value.problems == [(f"{user_catalog / 'drives.yaml'}: ES5F.capacity_tb", "Input should be greater than 0, got -1")]


def test_a_partial_entry_override_says_entries_are_replaced_whole(user_catalog: Path) -> None:
    (user_catalog / "drives.yaml").write_text("ES5F:\n  price: {usd: 900, kind: user, as_of: 2026-11, source: my quote}\n")
    problems = _catalog_problems()
    assert problems[0] == (f"{user_catalog / 'drives.yaml'}: ES5F",
                           "an entry replaces the built-in ES5F whole: copy it from models/catalog/drives.yaml and change what differs")
    assert (f"{user_catalog / 'drives.yaml'}: ES5F.capacity_tb", "Field required") in problems


def test_a_missing_override_folder_is_an_error(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("FLASHPLAN_CATALOG_DIR", str(tmp_path / "no-such-folder"))
    [(field, message)] = _catalog_problems()
    assert field == f"FLASHPLAN_CATALOG_DIR {tmp_path / 'no-such-folder'}"
    assert message.startswith("no such folder") and "drives.yaml" in message and "parameters.yaml" in message


def test_an_override_folder_that_is_a_file_or_a_symlink_loop_is_an_error(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "drives.yaml").write_text("{}\n")
    monkeypatch.setenv("FLASHPLAN_CATALOG_DIR", str(tmp_path / "drives.yaml"))
    assert _catalog_problems()[0][1].startswith("not a folder")
    (tmp_path / "a").symlink_to(tmp_path / "b")
    (tmp_path / "b").symlink_to(tmp_path / "a")
    monkeypatch.setenv("FLASHPLAN_CATALOG_DIR", str(tmp_path / "a"))
    assert _catalog_problems()[0][1].startswith("symlink loop")


def test_an_empty_override_folder_is_an_error(user_catalog: Path) -> None:
    (user_catalog / ".keep").write_text("")  # hidden files are not catalog files, nor errors
    [(field, message)] = _catalog_problems()
    assert field == f"FLASHPLAN_CATALOG_DIR {user_catalog}" and message.startswith("the folder is empty")
    assert all(name in message for name in OVERRIDE_FILES)


@pytest.mark.parametrize("name", ["drive.yaml", "drives.yml", "Drives.yaml", "notes.txt", "fitted.yaml"])
def test_a_misnamed_file_in_the_override_folder_is_an_error_naming_the_expected_names(user_catalog: Path, name: str) -> None:
    entry = yaml.safe_load((CATALOG_DIR / "drives.yaml").read_text())["ES5F"]
    (user_catalog / name).write_text(yaml.safe_dump({"ES5F": {**entry, "price": {**entry["price"], "usd": 1.0}}}))
    (user_catalog / "parameters.yaml").write_text("{}\n")  # a valid file beside it does not hide the misnamed one
    [(field, message)] = _catalog_problems()
    assert field == f"FLASHPLAN_CATALOG_DIR {user_catalog}: {name}"
    assert "drives.yaml, dimms.yaml" in message and "parameters.yaml" in message
    if name == "fitted.yaml":
        assert "FLASHPLAN_FITTED" in message


def test_the_generic_x86_linux_host_costs_what_its_source_measured() -> None:
    """x86-Linux-server's NVMe path length is one core's time over the published per-core libaio rate (608K
    4 KiB random reads per second, interrupt-driven), and a scenario on it runs the Linux NVMe stack."""
    host = lookup("hosts", "x86-Linux-server")
    assert host.cpu_us_per_io["linux_nvme"] == pytest.approx(1e6 / 608_000, abs=0.005)
    assert "608K IOPS on one core" in host.sources["cpu_us_per_io.linux_nvme"]
    assert host.cores == parameter("host_defaults.cores") and "ASSUMPTION" in host.sources["cores"]
    from models.topology import HostConfig
    from sim.route.host import DEFAULT_STACK, resolve_host

    resolved = resolve_host(HostConfig(model="x86-Linux-server"), DEFAULT_STACK["direct_nvme"])
    assert resolved.cpu_us_per_io == host.cpu_us_per_io["linux_nvme"] and resolved.cores == host.cores
