"""Run one benchmark module and keep what it prints in bench/results/, for the documentation's benchmark page.

    python -m bench.record bench.run [ARGS ...]     # prints as it runs; writes bench/results/run.txt

The output is shown as the benchmark prints it and written to bench/results/<name>.txt in one step when the
benchmark succeeds; the exit code is the benchmark's (a failed run leaves the previous file in place).
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

RESULTS = Path(__file__).resolve().parent / "results"


def main(argv: list[str]) -> int:
    if not argv or not argv[0].startswith("bench."):
        print("usage: python -m bench.record bench.MODULE [ARGS ...]", file=sys.stderr)
        return 2
    module, args = argv[0], argv[1:]
    proc = subprocess.Popen([sys.executable, "-m", module, *args], stdout=subprocess.PIPE, text=True)
    assert proc.stdout is not None
    lines = []
    for line in proc.stdout:
        sys.stdout.write(line)
        sys.stdout.flush()
        lines.append(line)
    code = proc.wait()
    if code == 0:
        RESULTS.mkdir(exist_ok=True)
        target = RESULTS / f"{module.removeprefix('bench.')}.txt"
        partial = target.with_suffix(".txt.partial")
        partial.write_text("".join(lines), encoding="utf-8")
        partial.replace(target)
    return code


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
