"""Check that a refactoring changed no result: the DES byte for byte, the fast path to 1e-9.

For every example (examples/*.yaml, examples/measured/*.yaml) and calibration scenario
(calibration/scenarios/*.yaml), plus variants that reach the mechanisms a file alone does not
(a read/write mix, RAID-5, sequential access, a SAN write-through cache, eXFlash with one
write-cache slot ...), it runs:

* the DES under the file's seed with ``run.max_ios`` = ``--max-ios`` (warm-up capped at a fifth of
  it, no wall budget), and keeps ``Result.summary()`` as canonical JSON (wall time is not in it);
* the analytic fast path (``sim.analytic.evaluate``), keeping every FastResult field.

``record`` writes these to a JSON file; with ``--rev REV`` it first checks REV out with
``git worktree add`` into a temporary directory and runs itself there (PYTHONPATH pointing at that
checkout, so the old code produces the baseline). ``compare`` recomputes them in the working tree and
prints one row per case; it exits 1 on any difference (DES summary not byte-identical, a fast-path
number off by more than 1e-9 relative, a different bottleneck or utilization key).

    python -m bench.check_identical record --rev main -o /tmp/base.json
    python -m bench.check_identical compare /tmp/base.json
    python -m bench.check_identical compare --quick /tmp/base.json   # the DES on the QUICK cases only
"""

from __future__ import annotations

import argparse
import json
import math
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
REL_TOL = 1e-9

VARIANTS: dict[str, dict[str, Any]] = {
    "": {},
    "mix": {"workload.read_fraction": 0.7},
    "writes": {"workload.read_fraction": 0.0},
    "seq": {"workload.access": "sequential"},
}
"""Overrides applied to every file for the fast path (cheap), by name ("" = the file as written)."""

EXTRA: dict[str, tuple[str, dict[str, Any]]] = {
    "nvme_raid5_mix": ("examples/s1_linuxone_nvme_raid10.yaml",
                       {"topology.layout": "raid5", "workload.read_fraction": 0.7}),
    "nvme_raid0_seq_open": ("examples/s1_linuxone_nvme_raid10.yaml",
                            {"topology.layout": "raid0", "workload.access": "sequential"}),
    "nvme_raid1_mix": ("examples/s1_linuxone_nvme_raid10.yaml",
                       {"topology.layout": "raid1", "workload.read_fraction": 0.5}),
    "ibmi_mix": ("examples/s2_ibmi_8x4_mirrored.yaml", {"workload.read_fraction": 0.6}),
    "fcp_write_through_mix": ("examples/s1_linuxone_fcp_ds8950f.yaml",
                              {"topology.cache.write_back": False, "workload.read_fraction": 0.5}),
    "nvmefc_mix": ("examples/s5_fs9100_nvmefc.yaml", {"workload.read_fraction": 0.5}),
    "exflash_mix": ("examples/s3_exflash_4dimms.yaml", {"workload.read_fraction": 0.67}),
    "zvm_mix_no_alias": ("examples/s4_zvm_edev_aliases.yaml",
                         {"topology.aliases": 0, "workload.read_fraction": 0.5}),
}
"""Named (file, overrides) cases run on both solvers."""

QUICK = ("examples/mm1.yaml", "examples/s2_ibmi_8x4_mirrored.yaml", "examples/s3_exflash_4dimms.yaml",
         "examples/s4_zvm_edev_aliases.yaml", "examples/s5_fs9100_scsi.yaml", "nvme_raid5_mix", "exflash_mix")
"""The cases the pytest subset runs through the DES (every case still goes through the fast path)."""


def scenario_files() -> list[str]:
    out = []
    for pattern in ("examples/*.yaml", "examples/measured/*.yaml", "calibration/scenarios/*.yaml"):
        out.extend(sorted(str(p.relative_to(ROOT)) for p in ROOT.glob(pattern)))
    return out


def cases() -> list[tuple[str, str, dict[str, Any]]]:
    """(case name, scenario file, overrides) for every case, files first."""
    out: list[tuple[str, str, dict[str, Any]]] = [(f, f, {}) for f in scenario_files()]
    out.extend((name, f, dict(ov)) for name, (f, ov) in EXTRA.items())
    return out


def _load(path: str, overrides: dict[str, Any]) -> Any:
    from models.scenario import load_scenario

    return load_scenario(ROOT / path, overrides or None)


def des_summary(path: str, overrides: dict[str, Any], max_ios: int) -> str:
    """Canonical JSON of the DES result of one case under a fixed I/O budget."""
    from models.scenario import with_overrides
    from sim import simulate  # the same name in every layout (record --rev runs this file in old trees)

    sc = _load(path, overrides)
    warmup = min(sc.run.warmup_ios, max_ios // 5)
    sc = with_overrides(sc, {"run.max_ios": max_ios, "run.warmup_ios": warmup, "run.max_wall_s": 86_400.0})
    summary = simulate(sc).summary()
    summary.pop("wall_seconds", None)
    return json.dumps(summary, sort_keys=True, allow_nan=True)


def fast_fields(path: str, overrides: dict[str, Any]) -> dict[str, Any] | str:
    """Every field of the fast path's result for one case (or the error it raised)."""
    from sim.analytic import evaluate

    try:
        sc = _load(path, overrides)
        r = evaluate(sc)
    except Exception as exc:  # a variant the model rejects is recorded as such
        return f"error: {type(exc).__name__}: {exc}"
    data: dict[str, Any] = _plain(r)
    return data


def _plain(value: Any) -> Any:
    if hasattr(value, "model_dump"):
        return _plain(value.model_dump(mode="python"))
    if hasattr(value, "__dataclass_fields__"):
        # a one-workload FastResult has no per-workload section (``workloads`` None): left out, as before it existed
        return {k: _plain(getattr(value, k)) for k in value.__dataclass_fields__
                if not (k == "workloads" and getattr(value, k) is None)}
    if isinstance(value, dict):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    if isinstance(value, float) and not math.isfinite(value):
        return repr(value)
    return value


def record(max_ios: int, quick: bool) -> dict[str, Any]:
    """Run every case in this checkout."""
    from models.scenario import with_overrides  # noqa: F401 - fail early when the checkout is broken

    out: dict[str, Any] = {"max_ios": max_ios, "des": {}, "fast": {}}
    for name, path, overrides in cases():
        for vname, vov in VARIANTS.items():
            key = name if not vname else f"{name}+{vname}"
            out["fast"][key] = fast_fields(path, {**overrides, **vov})
        if quick and name not in QUICK:
            continue
        out["des"][name] = des_summary(path, overrides, max_ios)
    return out


def record_rev(rev: str, max_ios: int, quick: bool) -> dict[str, Any]:
    """``record`` run in a temporary worktree of ``rev`` (with this script copied in)."""
    tmp = Path(tempfile.mkdtemp(prefix="check_identical_"))
    tree = tmp / "tree"
    subprocess.run(["git", "-C", str(ROOT), "worktree", "add", "--detach", str(tree), rev], check=True,
                   capture_output=True)
    try:
        (tree / "bench").mkdir(exist_ok=True)
        (tree / "bench" / "check_identical.py").write_text(Path(__file__).read_text())
        out_file = tmp / "out.json"
        env = dict(os.environ, PYTHONPATH=str(tree), FLASHPLAN_INTERPRETED="1")
        args = [sys.executable, "-m", "bench.check_identical", "record", "-o", str(out_file), "--max-ios", str(max_ios)]
        if quick:
            args.append("--quick")
        subprocess.run(args, cwd=tree, env=env, check=True)
        data: dict[str, Any] = json.loads(out_file.read_text())
        data["rev"] = subprocess.run(["git", "-C", str(tree), "rev-parse", "--short", "HEAD"], check=True,
                                     capture_output=True, text=True).stdout.strip()
        return data
    finally:
        subprocess.run(["git", "-C", str(ROOT), "worktree", "remove", "--force", str(tree)], check=False,
                       capture_output=True)


def _close(a: Any, b: Any, where: str, diffs: list[str]) -> None:
    if isinstance(a, dict) and isinstance(b, dict):
        if list(a) != list(b):
            diffs.append(f"{where}: keys {sorted(set(a) ^ set(b)) or 'in another order'}")
        for k in a:
            if k in b:
                _close(a[k], b[k], f"{where}.{k}", diffs)
        return
    if isinstance(a, list) and isinstance(b, list) and len(a) == len(b):
        for i, (x, y) in enumerate(zip(a, b, strict=True)):
            _close(x, y, f"{where}[{i}]", diffs)
        return
    if isinstance(a, (int, float)) and isinstance(b, (int, float)) and not isinstance(a, bool):
        if a == b or abs(a - b) <= REL_TOL * max(abs(a), abs(b)):
            return
        diffs.append(f"{where}: {a!r} -> {b!r}")
        return
    if a != b:
        diffs.append(f"{where}: {a!r} -> {b!r}")


def compare(baseline: dict[str, Any], current: dict[str, Any]) -> int:
    """Print a table of every case; the number of cases that differ."""
    bad = 0
    print(f"{'case':58s} {'solver':6s} result")
    for name, old in baseline["des"].items():
        new = current["des"].get(name)
        ok = new == old
        bad += not ok
        print(f"{name:58s} {'des':6s} {'identical' if ok else 'DIFFERS'}")
        if not ok and new is not None:
            diffs: list[str] = []
            _close(json.loads(old), json.loads(new), "summary", diffs)
            for d in diffs[:5]:
                print(f"    {d}")
    for name, old in baseline["fast"].items():
        new = current["fast"].get(name)
        diffs = []
        _close(old, new, "fast", diffs)
        bad += bool(diffs)
        print(f"{name:58s} {'fast':6s} {'within 1e-9' if not diffs else 'DIFFERS'}")
        for d in diffs[:5]:
            print(f"    {d}")
    return bad


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    rec = sub.add_parser("record", help="write the results of a revision (default: this checkout)")
    rec.add_argument("-o", "--output", required=True)
    rec.add_argument("--rev", help="git revision to record (checked out in a temporary worktree)")
    cmp_ = sub.add_parser("compare", help="compare this checkout against a recorded baseline")
    cmp_.add_argument("baseline")
    for p in (rec, cmp_):
        p.add_argument("--max-ios", type=int, default=20_000)
        p.add_argument("--quick", action="store_true", help="DES on the QUICK cases only")
    args = ap.parse_args(argv)
    t0 = time.perf_counter()
    if args.cmd == "record":
        data = record_rev(args.rev, args.max_ios, args.quick) if args.rev else record(args.max_ios, args.quick)
        Path(args.output).write_text(json.dumps(data, indent=1, sort_keys=False) + "\n")
        print(f"recorded {len(data['des'])} DES and {len(data['fast'])} fast-path cases in "
              f"{time.perf_counter() - t0:.0f} s -> {args.output}")
        return 0
    baseline = json.loads(Path(args.baseline).read_text())
    current = record(baseline["max_ios"], args.quick)
    if args.quick:
        baseline = dict(baseline, des={k: v for k, v in baseline["des"].items() if k in QUICK})
    bad = compare(baseline, current)
    print(f"{'all identical' if not bad else f'{bad} case(s) differ'} "
          f"(baseline {baseline.get('rev', '?')}, {time.perf_counter() - t0:.0f} s)")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
