"""Check that a change left a plan unchanged: ``flashplan plan --json`` byte for byte, less its wall times.

``record`` runs ``flashplan plan REQUIREMENTS --json [options]`` in a child process (``--tree`` picks the
checkout whose code runs, by PYTHONPATH; default this one) and writes the plan's JSON without
``screen_wall_s`` and ``des_wall_s`` (the only fields that vary between runs: every DES run takes the
requirement's seed). ``compare`` runs it again in this checkout and exits 1 if anything else differs,
naming the first differing field.

    python -m bench.plan_identical record examples/plan/ibmi_oltp.yaml -o /tmp/before.json --tree /tmp/base -- --space wide
    python -m bench.plan_identical compare examples/plan/ibmi_oltp.yaml /tmp/before.json -- --space wide
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
VARYING = ("screen_wall_s", "des_wall_s")
"""Plan fields that are wall times (left out of the comparison)."""


def plan_json(requirements: str, options: list[str], tree: Path = ROOT) -> dict[str, Any]:
    """The plan of ``requirements`` computed by the code of ``tree``, without its wall times."""
    env = {**os.environ, "PYTHONPATH": str(tree)}
    proc = subprocess.run([sys.executable, "-m", "sim.cli.flashplan", "plan", requirements, "--json", "--quiet", *options],
                          cwd=ROOT, env=env, capture_output=True, text=True, check=False)
    if proc.returncode != 0:
        raise SystemExit(f"flashplan plan exited {proc.returncode}: {proc.stderr.strip()[-800:]}")
    data: dict[str, Any] = json.loads(proc.stdout)
    for key in VARYING:
        data.pop(key, None)
    return data


def first_difference(a: Any, b: Any, where: str = "") -> str | None:
    """The path of the first value that differs between ``a`` and ``b`` (None when they are equal)."""
    if type(a) is not type(b):
        return where or "(root)"
    if isinstance(a, dict):
        for key in sorted(set(a) | set(b)):
            if key not in a or key not in b:
                return f"{where}.{key}"
            found = first_difference(a[key], b[key], f"{where}.{key}")
            if found:
                return found
        return None
    if isinstance(a, list):
        if len(a) != len(b):
            return f"{where} (length {len(a)} against {len(b)})"
        for i, (x, y) in enumerate(zip(a, b, strict=True)):
            found = first_difference(x, y, f"{where}[{i}]")
            if found:
                return found
        return None
    return None if a == b else where


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    extra: list[str] = []
    if "--" in argv:
        cut = argv.index("--")
        argv, extra = argv[:cut], argv[cut + 1:]
    ap = argparse.ArgumentParser(prog="python -m bench.plan_identical", description=__doc__.splitlines()[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    rec = sub.add_parser("record", help="write the plan's JSON (less its wall times)")
    rec.add_argument("requirements")
    rec.add_argument("-o", "--output", required=True)
    rec.add_argument("--tree", default=str(ROOT), help="the checkout whose code plans (default: this one)")
    cmp_ = sub.add_parser("compare", help="plan again here and compare with a recorded plan")
    cmp_.add_argument("requirements")
    cmp_.add_argument("baseline")
    args = ap.parse_args(argv)
    if args.cmd == "record":
        data = plan_json(args.requirements, extra, Path(args.tree))
        Path(args.output).write_text(json.dumps(data, sort_keys=True, allow_nan=False))
        print(f"recorded {args.output}: {len(data.get('ranked', []))} ranked, {data.get('des_runs')} DES runs")
        return 0
    base = json.loads(Path(args.baseline).read_text())
    for key in VARYING:
        base.pop(key, None)
    now = plan_json(args.requirements, extra)
    diff = first_difference(base, now)
    if diff is None and json.dumps(base, sort_keys=True) == json.dumps(now, sort_keys=True):
        print(f"identical: {len(now.get('ranked', []))} ranked, {len(now.get('cheaper_rejected', []))} cheaper rejected, "
              f"{now.get('des_runs')} DES runs")
        return 0
    print(f"DIFFERENT at {diff}")
    return 1


if __name__ == "__main__":
    raise SystemExit(main())
