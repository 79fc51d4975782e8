"""Bad input, as a careless or hostile user gives it, through every entry point.

Every bad-input case has a hand-made file in tests/fixtures/bad/ (or is built here when it is
large: a 5,000-level nesting, a file over the size limit, odd file names) and goes through the
command it reaches: simulate, analyze, sweep, plan, qd-sweep, import fio / iostat, app (its database URL),
catalog (a catalog override) and calibrate's record loading. Each must exit 2 with a line that
names the field (or the file and line), and never print a traceback; an output file that
existed before is left untouched.

The CLI cases run in one subprocess under RLIMIT_AS = 1 GiB with a per-case alarm, so a
"billion laughs" that expanded, or a loader that recursed, would fail the case instead of the
machine. Hypothesis then throws generated documents and ``--set`` values at the loaders
(in-process: they never simulate) and checks the one contract: a Scenario, or BadInput whose
every problem names a field. Ctrl-C is sent to a real process (a sweep writing results) and
must give exit 130, one line, no traceback, and nothing half-written.
"""

from __future__ import annotations

import io
import json
import os
import resource
import signal
import subprocess
import sys
import time
from contextlib import redirect_stderr, redirect_stdout
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from models.loading import MAX_DOCUMENT_BYTES, BadInput, parse_document
from models.scenario import Scenario

ROOT = Path(__file__).resolve().parent.parent.parent
BAD = ROOT / "tests" / "fixtures" / "bad"
MM1 = str(ROOT / "examples" / "mm1.yaml")
S1 = str(ROOT / "examples" / "s1_linuxone_nvme_raid10.yaml")
PLAN = str(ROOT / "examples" / "plan" / "ibmi_oltp.yaml")
FIO_OK = str(ROOT / "tests" / "fixtures" / "fio" / "randread_4k_qd8_libaio.json")
MEMORY_LIMIT = 1 << 30
CASE_ALARM_S = 30


def _laughs_inline() -> str:
    """A billion laughs in one ``--set`` value (YAML flow style)."""
    levels = ["&a [x, x, x, x, x, x, x, x, x]"]
    for prev, name in zip("abcdefg", "bcdefgh", strict=False):
        levels.append(f"&{name} [" + ", ".join([f"*{prev}"] * 9) + "]")
    return "name=[" + ", ".join(levels) + "]"


def _generated_files(tmp: Path) -> dict[str, str]:
    """The bad files too big or too odd to keep in the repository."""
    files: dict[str, str] = {}
    deep = tmp / "deep.yaml"
    deep.write_text("name: " + "[" * 5000 + "]" * 5000 + "\n")
    files["deep_yaml"] = str(deep)
    deep_json = tmp / "deep.json"
    deep_json.write_text('{"name": ' + "[" * 100_000 + "]" * 100_000 + "}")
    files["deep_json"] = str(deep_json)
    deep_toml = tmp / "deep.toml"
    deep_toml.write_text("name = " + "[" * 5000 + "]" * 5000 + "\n")
    files["deep_toml"] = str(deep_toml)
    fio_deep = tmp / "fio_deep.json"
    fio_deep.write_text('{"fio version": "fio-3.28", "jobs": ' + "[" * 100_000 + "]" * 100_000 + "}")
    files["fio_deep"] = str(fio_deep)
    iostat = (ROOT / "tests" / "fixtures" / "iostat" / "iostat_x_t_vda_loop0.txt").read_text()
    (tmp / "iostat_backwards.txt").write_text(iostat.replace("11/21/26 02:37:10", "11/21/26 02:37:01"))
    files["iostat_backwards"] = str(tmp / "iostat_backwards.txt")
    (tmp / "iostat_boot_only.txt").write_text(iostat.split("\n\n\n")[0] + "\n\n\n11/21/26 02:37:08\navg-cpu:  %user\n")
    files["iostat_boot_only"] = str(tmp / "iostat_boot_only.txt")
    (tmp / "fio_values.json").write_text(Path(FIO_OK).read_text().rstrip()[:-1] + ', "samples": [' + "0," * 2_500_000 + "0]}")
    files["fio_values"] = str(tmp / "fio_values.json")
    (tmp / "iostat_one_line.txt").write_text("12 " * 10_000_000)  # 30 MB, no newline: ten million tokens if split
    files["iostat_one_line"] = str(tmp / "iostat_one_line.txt")
    huge = tmp / "huge.yaml"
    huge.write_text("# padding\n" * (MAX_DOCUMENT_BYTES // 10 + 10))
    files["huge"] = str(huge)
    digits = tmp / "digits.yaml"
    digits.write_text((BAD / "big_int_field.yaml").read_text().replace("123456789012345678901234567890", "9" * 5000))
    files["digits"] = str(digits)
    raw_name = os.fsencode(str(tmp)) + b"/\xff\xfe.yaml"
    with open(raw_name, "wb") as fh:
        fh.write(b"- a list, not a scenario\n")
    files["undecodable_name"] = os.fsdecode(raw_name)
    files["long_name"] = str(tmp / ("x" * 300 + ".yaml"))
    catalog = tmp / "catalog"
    catalog.mkdir()
    (catalog / "drives.yaml").write_text("EX1:\n  capacity_tb: .inf\n  capacity_tb: 3\n")
    files["catalog_dir"] = str(catalog)
    misnamed = tmp / "catalog_misnamed"
    misnamed.mkdir()
    (misnamed / "drive.yaml").write_text("{}\n")
    files["catalog_misnamed"] = str(misnamed)
    files["catalog_missing"] = str(tmp / "no-such-catalog")
    shape = tmp / "catalog_shape"
    shape.mkdir()
    (shape / "parameters.yaml").write_text("device_behaviour: 3\nhost_defaults:\n  cores: {value: 0, source: mine}\n")
    files["catalog_shape"] = str(shape)
    entry = tmp / "catalog_entry"
    entry.mkdir()
    es5f = yaml.safe_load((ROOT / "models" / "catalog" / "drives.yaml").read_text())["ES5F"]
    (entry / "drives.yaml").write_text(yaml.safe_dump({"ES5F": {**es5f, "capacity_tb": -1}}))
    files["catalog_entry"] = str(entry)
    (tmp / "loop_a.yaml").symlink_to(tmp / "loop_b.yaml")
    (tmp / "loop_b.yaml").symlink_to(tmp / "loop_a.yaml")
    files["symlink_loop"] = str(tmp / "loop_a.yaml")
    existing = tmp / "existing.yaml"
    existing.write_text("# an earlier result the user keeps\n")
    files["existing"] = str(existing)
    existing_parquet = tmp / "existing.csv"
    existing_parquet.write_text("point\n1\n")
    files["existing_csv"] = str(existing_parquet)
    return files


def _cases(f: dict[str, str]) -> list[tuple[str, list[str], dict[str, str], str]]:
    """(id, argv, extra environment, text the error must contain - the field or the file)."""
    b = lambda name: str(BAD / name)  # noqa: E731
    sim = ["simulate"]
    return [
        # files a scenario is read from
        ("billion_laughs", [*sim, b("billion_laughs.yaml")], {}, "more than 200,000 values"),
        ("deep_yaml", [*sim, f["deep_yaml"]], {}, "nested more than 64 levels"),
        ("deep_json", [*sim, f["deep_json"]], {}, "nested more than 64 levels"),
        ("deep_toml", [*sim, f["deep_toml"]], {}, "deep.toml"),
        ("duplicate_key_yaml", [*sim, b("duplicate_key.yaml")], {}, "duplicate key 'workload'"),
        ("duplicate_key_json", [*sim, b("duplicate_key.json")], {}, "duplicate key 'rate_iops'"),
        ("infinite_bound", [*sim, b("infinite_bound.yaml")], {}, "run.max_wall_s"),
        ("nan_yaml", [*sim, b("nan_value.yaml")], {}, "run.target_rel_ci"),
        ("nan_json", [*sim, b("nan_value.json")], {}, "NaN"),
        ("bool_for_number", [*sim, b("bool_for_number.yaml")], {}, "workload.rate_iops"),
        ("date_value", [*sim, b("date_value.yaml")], {}, "run.seed"),
        ("binary_value", [*sim, b("binary_value.yaml")], {}, "name"),
        ("big_int_field", [*sim, b("big_int_field.yaml")], {}, "run.seed"),
        ("thousands_of_digits", [*sim, f["digits"]], {}, "integer too large"),
        ("list_at_top", [*sim, b("list_at_top.yaml")], {}, "expected a mapping"),
        ("broken_toml", [*sim, b("broken.toml")], {}, "not valid TOML"),
        ("unknown_field", [*sim, b("unknown_field.yaml")], {}, "workload.rate_ipos"),
        ("not_utf8", [*sim, b("not_utf8.yaml")], {}, "not UTF-8"),
        ("too_large", [*sim, f["huge"]], {}, "larger than"),
        ("no_such_file", [*sim, str(BAD / "missing.yaml")], {}, "no such file"),
        ("symlink_loop", [*sim, f["symlink_loop"]], {}, "loop_a.yaml: symlink loop"),
        ("a_directory", [*sim, str(BAD)], {}, "not a file"),
        ("over_long_name", [*sim, f["long_name"]], {}, "x" * 20),
        ("undecodable_name", [*sim, f["undecodable_name"]], {}, "\\udcff\\udcfe.yaml: expected a mapping"),
        ("unknown_suffix", [*sim, b("iostat_empty.txt")], {}, "unknown format"),
        # --set values
        ("set_date", [*sim, MM1, "--set", "run.seed=2024-01-01"], {}, "run.seed"),
        ("set_binary", [*sim, MM1, "--set", "name=!!binary aGVsbG8="], {}, "name"),
        ("set_missing_path", [*sim, MM1, "--set", "topology.nope.deeper=3"], {}, "topology.nope"),
        ("set_inside_number", [*sim, MM1, "--set", "run.seed.x=3"], {}, "run.seed.x: run.seed is the value 1, not a mapping"),
        ("set_index_out_of_range", [*sim, MM1, "--set", "topology.stations.7.servers=2"], {}, "topology.stations.7"),
        ("set_inf", [*sim, MM1, "--set", "run.max_wall_s=.inf"], {}, "run.max_wall_s"),
        ("set_nan", [*sim, MM1, "--set", "workload.rate_iops=.nan"], {}, "workload.rate_iops"),
        ("set_bool", [*sim, MM1, "--set", "topology.stations.0.servers=true"], {}, "servers"),
        ("set_huge_int", [*sim, MM1, "--set", "run.seed=" + "9" * 5000], {}, "run.seed"),
        ("set_laughs", [*sim, MM1, "--set", _laughs_inline()], {}, "more than 200,000 values"),
        ("set_no_equals", [*sim, MM1, "--set", "run.seed"], {}, "dotted.path=VALUE"),
        ("set_empty_part", [*sim, MM1, "--set", "run..seed=1"], {}, "empty field name"),
        # analyze reads the same way
        ("analyze_bool", ["analyze", b("bool_for_number.yaml")], {}, "workload.rate_iops"),
        ("analyze_laughs", ["analyze", b("billion_laughs.yaml")], {}, "more than 200,000 values"),
        # sweeps
        ("sweep_nan_range", ["sweep", b("sweep_nan_range.yaml"), "--no-progress", "--out", f["existing_csv"]], {},
         "factors.workload.rate_iops.stop"),
        ("sweep_inf_step", ["sweep", b("sweep_inf_step.yaml"), "--no-progress"], {}, "factors.workload.rate_iops.step"),
        ("sweep_set_inf", ["sweep", b("sweep_inf_step.yaml"), "--no-progress", "--set", "run.max_ios=.inf"], {}, "run.max_ios"),
        ("sweep_laughs", ["sweep", b("billion_laughs.yaml"), "--no-progress"], {}, "more than 200,000 values"),
        # plan and cost
        ("plan_show_negative", ["plan", PLAN, "--show", "-1"], {}, "--show"),
        ("plan_verify_top_zero", ["plan", PLAN, "--verify-top", "0"], {}, "--verify-top"),
        ("plan_bool", ["plan", b("plan_bool.yaml")], {}, "target.iops"),
        ("plan_set_nan", ["plan", PLAN, "--set", "usable_tb=.nan"], {}, "usable_tb"),
        ("cost_perf_nan", ["cost", MM1, "--perf", "nan"], {}, "--perf"),
        # a device's queue-depth sweep
        ("qd_sweep_unknown_drive", ["qd-sweep", "NOPE"], {}, "DRIVE: unknown catalog drive or DIMM"),
        ("qd_sweep_qd_zero", ["qd-sweep", "ES5F", "--qd", "0,4"], {}, "--qd"),
        ("qd_sweep_qd_text", ["qd-sweep", "ES5F", "--qd", "9" * 5000], {}, "--qd"),
        ("qd_sweep_nan_read", ["qd-sweep", "ES5F", "--read-fraction", "nan"], {}, "--read-fraction"),
        ("qd_sweep_inf_block", ["qd-sweep", "ES5F", "--block-kib", "inf"], {}, "--block-kib"),
        # measurement files
        ("fio_not_json", ["import", "fio", b("fio_not_json.json"), "--out", f["existing"]], {}, "fio_not_json.json"),
        ("fio_not_closed", ["import", "fio", b("fio_nested.json")], {}, "fio_nested.json"),
        ("fio_deep", ["import", "fio", f["fio_deep"]], {}, "nested too deeply"),
        ("fio_not_utf8", ["import", "fio", b("not_utf8.yaml")], {}, "not UTF-8"),
        ("fio_bad_set", ["import", "fio", FIO_OK, "--scenario", MM1, "--set", "run.seed=2024-01-01", "--out", f["existing"]],
         {}, "run.seed"),
        ("fio_against_missing", ["import", "fio", FIO_OK, "--against", str(BAD / "missing_export")], {}, "no such file"),
        # fio job files
        ("export_runtime_negative", ["export", "fio", MM1, "--runtime-s", "-1"], {}, "--runtime-s"),
        ("export_set_nan", ["export", "fio", MM1, "--solver", "fast", "--set", "workload.rate_iops=.nan"], {}, "workload.rate_iops"),
        ("export_out_is_a_file", ["export", "fio", MM1, "--solver", "fast", "--out", f["existing"]], {}, "not a directory"),
        ("iostat_binary", ["import", "iostat", b("iostat_binary.txt")], {}, "iostat_binary.txt"),
        ("iostat_empty", ["import", "iostat", b("iostat_empty.txt"), "--out", f["existing"]], {}, "empty"),
        ("iostat_missing", ["import", "iostat", str(BAD / "missing.txt")], {}, "no such file"),
        ("iostat_backwards", ["import", "iostat", f["iostat_backwards"], "--profile"], {}, "iostat_backwards.txt: line 30: timestamp"),
        ("iostat_boot_only", ["import", "iostat", f["iostat_boot_only"]], {}, "averages since boot"),
        ("iostat_one_long_line", ["import", "iostat", f["iostat_one_line"]], {}, "iostat_one_line.txt: no device lines"),
        ("fio_too_many_values", ["import", "fio", f["fio_values"]], {}, "the importer holds at most 2,000,000"),
        # environment
        ("db_url_malformed", ["app"], {"FLASHPLAN_DB_URL": "postgresql://admin:hunter2@db:notaport/x"}, "FLASHPLAN_DB_URL"),
        ("catalog_override", ["catalog", "--json"], {"FLASHPLAN_CATALOG_DIR": f["catalog_dir"]}, "duplicate key 'capacity_tb'"),
        ("catalog_dir_missing", ["analyze", S1], {"FLASHPLAN_CATALOG_DIR": f["catalog_missing"]},
         "no-such-catalog: no such folder; give a folder holding one or more of drives.yaml"),
        ("catalog_file_misnamed", ["analyze", S1], {"FLASHPLAN_CATALOG_DIR": f["catalog_misnamed"]},
         "drive.yaml: not a catalog file name; expected drives.yaml"),
        ("catalog_parameters_shape", ["analyze", S1], {"FLASHPLAN_CATALOG_DIR": f["catalog_shape"]},
         "parameters.yaml: host_defaults.cores.value: Input should be greater than or equal to 1, got 0"),
        ("catalog_parameters_shape_mm1", [*sim, MM1], {"FLASHPLAN_CATALOG_DIR": f["catalog_shape"]},
         "parameters.yaml: device_behaviour: expected a mapping"),
        ("catalog_entry_names_file", ["analyze", S1], {"FLASHPLAN_CATALOG_DIR": f["catalog_entry"]},
         "catalog_entry/drives.yaml: ES5F.capacity_tb: Input should be greater than 0, got -1"),
    ]


def _drive() -> None:
    """Subprocess side: run each case's argv through ``sim.cli.flashplan.main`` in this process, report as JSON."""
    from sim.cli.flashplan import main

    cases = json.loads(sys.stdin.read())
    results = []

    def alarm(signum: int, frame: Any) -> None:
        raise TimeoutError("case took too long")

    signal.signal(signal.SIGALRM, alarm)
    for case_id, argv, env in cases:
        saved = {k: os.environ.get(k) for k in env}
        os.environ.update(env)
        err, out = io.StringIO(), io.StringIO()
        signal.alarm(CASE_ALARM_S)
        try:
            with redirect_stderr(err), redirect_stdout(out):
                try:
                    code: Any = main(argv)
                except SystemExit as exc:
                    code = exc.code
        except BaseException as exc:  # reported to the test, which fails the case
            code = f"raised {type(exc).__name__}: {exc}"
        finally:
            signal.alarm(0)
            for k, v in saved.items():
                if v is None:
                    os.environ.pop(k, None)
                else:
                    os.environ[k] = v
        results.append({"id": case_id, "code": code, "stderr": err.getvalue(), "stdout": out.getvalue()[:2000]})
    sys.stdout.write(json.dumps(results))


def _limit_memory() -> None:
    resource.setrlimit(resource.RLIMIT_AS, (MEMORY_LIMIT, MEMORY_LIMIT))


@pytest.fixture(scope="module")
def cli_outcomes(tmp_path_factory: pytest.TempPathFactory) -> tuple[dict[str, dict[str, Any]], dict[str, str], dict[str, bytes]]:
    tmp = tmp_path_factory.mktemp("bad")
    files = _generated_files(tmp)
    cases = _cases(files)
    before = {k: Path(files[k]).read_bytes() for k in ("existing", "existing_csv")}
    env = {**os.environ, "PYTHONPATH": str(ROOT), "OPENBLAS_NUM_THREADS": "1", "OMP_NUM_THREADS": "1"}
    env.pop("FLASHPLAN_DB_URL", None)
    env.pop("FLASHPLAN_CATALOG_DIR", None)
    proc = subprocess.run([sys.executable, "-c", "from tests.cli.test_bad_input import _drive; _drive()"],
                          input=json.dumps([[c[0], c[1], c[2]] for c in cases]), capture_output=True, text=True,
                          env=env, cwd=ROOT, timeout=600, preexec_fn=_limit_memory)
    assert proc.returncode == 0, proc.stderr[-3000:]
    outcomes = {r["id"]: r for r in json.loads(proc.stdout)}
    return outcomes, files, before


CASE_IDS = [c[0] for c in _cases({k: "" for k in ("deep_yaml", "deep_json", "deep_toml", "fio_deep", "huge", "digits", "undecodable_name",
                                                    "iostat_backwards", "iostat_boot_only", "fio_values", "iostat_one_line",
                                                    "long_name", "catalog_dir", "existing", "existing_csv", "catalog_misnamed",
                                                    "catalog_missing", "catalog_shape", "catalog_entry", "symlink_loop")})]


@pytest.mark.parametrize("case_id", CASE_IDS)
def test_bad_input_exits_2_naming_the_field(case_id: str, cli_outcomes: Any) -> None:
    outcomes, files, _ = cli_outcomes
    expected = next(c[3] for c in _cases(files) if c[0] == case_id)
    r = outcomes[case_id]
    assert r["code"] == 2, r
    assert "Traceback" not in r["stderr"] + r["stdout"], r
    assert expected in r["stderr"], r
    lines = r["stderr"].strip().splitlines()
    assert lines and all(": " in line for line in lines), r  # one ``field: message`` line per problem
    assert "hunter2" not in r["stderr"] + r["stdout"]  # a database password is never printed


def test_existing_output_files_are_untouched(cli_outcomes: Any) -> None:
    _, files, before = cli_outcomes
    for key, content in before.items():
        assert Path(files[key]).read_bytes() == content, key


def test_calibration_records_are_loaded_through_the_same_checks(tmp_path: Path) -> None:
    from calibration.records import load_records

    (tmp_path / "s1.yaml").write_bytes((BAD / "records_bad.yaml").read_bytes())
    with pytest.raises(BadInput) as err:
        load_records(tmp_path)
    assert any(field.startswith("s1.yaml.records.0") for field, _ in err.value.problems), err.value.problems
    (tmp_path / "s1.yaml").write_bytes((BAD / "billion_laughs.yaml").read_bytes())
    with pytest.raises(BadInput, match="more than 200,000 values"):
        load_records(tmp_path)


def test_web_app_upload_uses_the_same_loader() -> None:
    from app.library import parse_scenario_file

    for name in ("billion_laughs.yaml", "not_utf8.yaml", "duplicate_key.json", "nan_value.json", "bool_for_number.yaml"):
        with pytest.raises(BadInput) as err:
            parse_scenario_file(name, (BAD / name).read_bytes())
        assert err.value.problems and all(f and m for f, m in err.value.problems), name
    with pytest.raises(BadInput, match="larger than"):
        parse_scenario_file("big.yaml", b"#" * (MAX_DOCUMENT_BYTES + 1))


def test_database_url_is_redacted_and_a_bad_one_is_reported(tmp_path: Path) -> None:
    from app.library import Library, LibraryError, redact_url

    assert redact_url("postgresql://admin:hunter2@db:5432/x") == "postgresql://admin:***@db:5432/x"
    assert "hunter2" not in redact_url("postgresql://admin:hunter2@db:notaport/x")
    with pytest.raises(LibraryError) as err:
        Library("postgresql://admin:hunter2@db:notaport/x")
    assert err.value.problems[0][0] == "FLASHPLAN_DB_URL" and "hunter2" not in str(err.value)
    lib = Library(f"sqlite:///{tmp_path / 'lib.sqlite'}")
    assert lib.url.startswith("sqlite:///")


LIBRARY_PROCESSES = 5
"""Processes that open one new library at the same moment in the concurrency test."""
LIBRARY_ROUNDS = 8
"""New libraries they open together, one after another (each round is a fresh chance for the creation race)."""


def test_library_saves_under_concurrency_are_retried_or_reported(tmp_path: Path) -> None:
    """Several processes open one new library at the same moment, then save the same names: every open
    succeeds (no two CREATE TABLEs collide into an error), every save finishes or is reported as a
    LibraryError (no raw IntegrityError), one row per name. The processes import first and are released
    together on a line from the test, once per round, on a fresh library each round."""
    script = (
        "import sys\n"
        "from app.library import Library, LibraryError\n"
        "from models.scenario import load_scenario\n"
        f"sc = load_scenario({MM1!r})\n"
        "print('ready', flush=True)\n"
        "for url in sys.stdin:\n"
        "    try:\n"
        "        lib = Library(url.strip())\n"
        "    except LibraryError as exc:\n"
        "        print('open failed:', exc, flush=True)\n"
        "        continue\n"
        "    for i in range(10):\n"
        "        try:\n"
        "            lib.save_scenario(f'deal {i % 5}', sc, overwrite=True)\n"
        "        except LibraryError as exc:\n"
        "            print('reported:', exc, flush=True)\n"
        "    print('done', flush=True)\n"
    )
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    procs = [subprocess.Popen([sys.executable, "-c", script], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True, env=env) for _ in range(LIBRARY_PROCESSES)]
    from app.library import Library

    failures: list[str] = []
    try:
        for p in procs:
            assert p.stdout is not None
            if p.stdout.readline().strip() != "ready":
                failures.append("a process did not start")
        for round_ in range(LIBRARY_ROUNDS if not failures else 0):
            url = f"sqlite:///{tmp_path / f'lib{round_}.sqlite'}"
            for p in procs:  # every process is waiting on its stdin: they start within microseconds of each other
                assert p.stdin is not None
                p.stdin.write(url + "\n")
                p.stdin.flush()
            for p in procs:
                assert p.stdout is not None
                line = p.stdout.readline().strip()
                while line.startswith("reported:"):
                    line = p.stdout.readline().strip()
                if line != "done":
                    failures.append(f"round {round_}: {line or 'the process ended'}")
            if failures:
                break
            assert sorted(e.name for e in Library(url).list_scenarios()) == [f"deal {i}" for i in range(5)]
    finally:
        for p in procs:
            assert p.stdin is not None
            p.stdin.close()
        errors = [p.stderr.read() if p.stderr else "" for p in procs]
        for p in procs:
            p.wait(timeout=600)  # a hang guard only
    assert not failures and not any("Traceback" in e for e in errors), (failures, [e[-2000:] for e in errors])


def test_library_opened_while_another_process_creates_it_retries(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Two processes opening one new library: the second's CREATE TABLE collides with the first's and is tried again."""
    from sqlalchemy.exc import OperationalError

    from app import library as lib_mod

    real_create_all = lib_mod._Base.metadata.create_all
    calls = []

    def collide_once(engine, *args, **kwargs):  # type: ignore[no-untyped-def]
        calls.append(1)
        if len(calls) == 1:
            real_create_all(engine, *args, **kwargs)  # the other process created the tables meanwhile
            raise OperationalError("CREATE TABLE scenarios", {}, Exception("table scenarios already exists"))
        return real_create_all(engine, *args, **kwargs)

    monkeypatch.setattr(lib_mod._Base.metadata, "create_all", collide_once)
    library = lib_mod.Library(f"sqlite:///{tmp_path / 'lib.sqlite'}")
    assert len(calls) == 2
    from models.scenario import load_scenario

    library.save_scenario("deal", load_scenario(MM1))
    assert [e.name for e in library.list_scenarios()] == ["deal"]


def test_library_that_stays_locked_is_reported_not_raised(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A database that cannot be created after every retry: LibraryError naming the setting, no raw OperationalError."""
    from sqlalchemy.exc import OperationalError

    from app import library as lib_mod

    def always_locked(engine, *args, **kwargs):  # type: ignore[no-untyped-def]
        raise OperationalError("CREATE TABLE scenarios", {}, Exception("database is locked"))

    monkeypatch.setattr(lib_mod._Base.metadata, "create_all", always_locked)
    monkeypatch.setattr(lib_mod.time, "sleep", lambda _s: None)
    with pytest.raises(lib_mod.LibraryError) as info:
        lib_mod.Library(f"sqlite:///{tmp_path / 'lib.sqlite'}")
    assert "FLASHPLAN_DB_URL" in str(info.value) and "OperationalError" in str(info.value)


# --- generated documents --------------------------------------------------------------------

FIELD_NAMES = ["topology", "workload", "run", "kind", "stations", "name", "servers", "service_time_us", "rate_iops",
               "read_fraction", "seed", "max_ios", "max_wall_s", "target_rel_ci", "queue_depth", "jobs", "drives", "x"]
scalars = st.one_of(st.none(), st.booleans(), st.integers(min_value=-(2**70), max_value=2**70),
                    st.floats(allow_nan=True, allow_infinity=True), st.text(max_size=12),
                    st.sampled_from(["generic", "open", "closed", "direct_nvme", "exponential", "2024-01-01", ".inf"]))
documents = st.recursive(scalars, lambda inner: st.one_of(
    st.lists(inner, max_size=4), st.dictionaries(st.sampled_from(FIELD_NAMES), inner, max_size=5)), max_leaves=30)


def _mm1_data() -> dict[str, Any]:
    return yaml.safe_load(Path(MM1).read_text())


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(doc=st.dictionaries(st.sampled_from(FIELD_NAMES), documents, max_size=6), fmt=st.sampled_from(["yaml", "json"]))
def test_any_document_is_a_scenario_or_named_problems(doc: dict[str, Any], fmt: str) -> None:
    from sim.cli.flashplan import load_with_overrides

    text = yaml.safe_dump(doc) if fmt == "yaml" else json.dumps(doc)
    path = Path(f"/tmp/flashplan-hypothesis-{os.getpid()}.{fmt}")
    path.write_text(text)
    try:
        assert isinstance(load_with_overrides(str(path), []), Scenario)
    except BadInput as exc:
        assert exc.problems and all(field and message for field, message in exc.problems)
    finally:
        path.unlink(missing_ok=True)


@settings(max_examples=150, deadline=None)
@given(path=st.lists(st.sampled_from([*FIELD_NAMES, "0", "7", "-1", ""]), min_size=1, max_size=4),
       value=st.one_of(st.text(max_size=30), st.sampled_from(["2024-01-01", "!!binary aGk=", ".nan", "-.inf", "true", "[1, [2]]",
                                                              "{a: 1}", "&a [1]", "*a", "1e400", "9" * 400])))
def test_any_override_is_a_scenario_or_named_problems(path: list[str], value: str) -> None:
    from pydantic import ValidationError

    from models.loading import format_validation_error
    from models.scenario import parse_override, scenario_from_data

    try:
        dotted, parsed = parse_override(".".join(path) + "=" + value)
        assert isinstance(scenario_from_data(_mm1_data(), {dotted: parsed}), Scenario)
    except BadInput as exc:
        assert exc.problems and all(field and message for field, message in exc.problems)
    except ValidationError as exc:
        problems = format_validation_error(exc)
        assert problems and all(field and message for field, message in problems)


@settings(max_examples=100, deadline=None)
@given(data=st.binary(max_size=300))
def test_any_bytes_parse_or_give_one_named_problem(data: bytes) -> None:
    from models.loading import decode

    for fmt in ("yaml", "json", "toml"):
        try:
            parse_document(decode(data, "f"), fmt, "f")
        except BadInput as exc:
            assert exc.problems and all(field and message for field, message in exc.problems)


# --- Ctrl-C ---------------------------------------------------------------------------------


def test_ctrl_c_during_a_sweep_exits_130_and_leaves_nothing_half_written(tmp_path: Path) -> None:
    out = tmp_path / "results.csv"
    out.write_text("point\nearlier\n")
    sweep = tmp_path / "sweep.yaml"
    sweep.write_text(f"base: {MM1}\nset: {{run.max_ios: 40000, run.warmup_ios: 1000, run.target_rel_ci: 0.0001}}\n"
                     "factors:\n  workload.rate_iops: {start: 10000, stop: 80000, num: 400}\n")  # long enough never to finish first
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    # started as a terminal starts it: Ctrl-C not ignored (a child inherits an ignored SIGINT, and something in a
    # long pytest worker leaves it ignored: the sweep then ran to its end and exited 0)
    proc = subprocess.Popen([sys.executable, "-m", "sim.cli", "sweep", str(sweep), "--out", str(out), "--workers", "1",
                             "--no-progress"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env, cwd=ROOT,
                            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    journal = out.with_name(out.name + ".partial.jsonl")
    deadline = time.monotonic() + 600
    # interrupt once the first point is journalled (a whole line), however loaded the machine is
    while time.monotonic() < deadline and proc.poll() is None and not (journal.exists() and "\n" in journal.read_text()):
        time.sleep(0.05)
    proc.send_signal(signal.SIGINT)
    stdout, stderr = proc.communicate(timeout=600)
    assert proc.returncode == 130, (proc.returncode, stderr[-2000:])
    assert "Traceback" not in stderr + stdout
    assert "interrupted" in stderr
    assert out.read_text() == "point\nearlier\n"  # the old results stay until a finished sweep replaces them
    rows = [json.loads(line) for line in journal.read_text().splitlines()]
    assert rows and all("scenario_digest" in r for r in rows)


SWEEP_AND_PLAN_NAMES = ["base", "set", "factors", "mode", "replications", "seed", "start", "stop", "step", "num", "ratio",
                        "workload.rate_iops", "run.max_ios", "platform", "workload", "target", "iops", "usable_tb",
                        "protection", "latency_slo", "us", "statistic", "budget_usd", "verify"]
sweep_documents = st.recursive(scalars, lambda inner: st.one_of(
    st.lists(inner, max_size=4), st.dictionaries(st.sampled_from(SWEEP_AND_PLAN_NAMES), inner, max_size=5)), max_leaves=25)


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(doc=st.dictionaries(st.sampled_from(SWEEP_AND_PLAN_NAMES), sweep_documents, max_size=6))
def test_any_sweep_or_plan_document_is_read_or_named_problems(doc: dict[str, Any]) -> None:
    """The sweep and plan readers (and the sweep's expansion) end in their model or in named problems."""
    from pydantic import ValidationError

    from models.loading import format_validation_error
    from models.requirements import load_requirements
    from sim.plan.sweep import load_sweep, plan_sweep

    doc = {"base": MM1, **doc} if "base" not in doc else doc
    path = Path(f"/tmp/flashplan-hypothesis-sweep-{os.getpid()}.json")
    path.write_text(json.dumps(doc))
    try:
        try:
            plan = plan_sweep(load_sweep(path))
            assert len(plan.runs) <= 100_000
        except BadInput as exc:
            assert exc.problems and all(field and message for field, message in exc.problems)
        try:
            load_requirements(path)
        except BadInput as exc:
            assert exc.problems and all(field and message for field, message in exc.problems)
        except ValidationError as exc:
            assert all(field and message for field, message in format_validation_error(exc))
    finally:
        path.unlink(missing_ok=True)
