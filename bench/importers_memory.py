"""Peak memory and wall time of ``flashplan import iostat`` and ``import fio`` on large generated files.

Two inputs a real host can produce:

* an ``iostat -x -t`` log of a SAN host with thousands of device paths (``iostat_devices``):
  ``--reports`` reports of ``--devices`` devices (sd paths, each with a partition, and dm maps);
* a fio JSON result preceded by megabytes of text whose lines begin with ``{`` (``fio_with_text``):
  what ``fio ... 2>&1`` captures when a job logs errors before fio prints its JSON;
* for memory against size: a long ``iostat -x -t`` log (``--long-reports`` reports of
  ``--long-devices`` devices) and a fio result carrying a large array (``fio_with_array``, about
  ``--fio-array-mb`` MB of numbers).

Each import runs in a child process (``python -m sim.cli.flashplan import ... --json``); its peak RSS
is the child's ``ru_maxrss`` (read with ``os.wait4``, so no earlier child masks it) and its wall
time is measured around it.

    python -m bench.importers_memory [--devices 5000] [--reports 3] [--fio-mb 10] [--long-reports 2000]
                                     [--long-devices 100] [--fio-array-mb 60] [--timeout 600]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
FIO_FIXTURE = ROOT / "tests" / "fixtures" / "fio" / "randread_4k_qd8_libaio.json"

IOSTAT_HEADER = ("Device            r/s     rkB/s   rrqm/s  %rrqm r_await rareq-sz     w/s     wkB/s   wrqm/s  %wrqm w_await "
                 "wareq-sz     d/s     dkB/s   drqm/s  %drqm d_await dareq-sz     f/s f_await  aqu-sz  %util")


def _letters(i: int) -> str:
    """sd device letters as the kernel names them: a..z, aa..zz, aaa..."""
    out = ""
    i += 1
    while i:
        i, r = divmod(i - 1, 26)
        out = chr(ord("a") + r) + out
    return out


def device_names(devices: int) -> list[str]:
    """``devices`` names: sd paths with one partition each (every third), and a dm map per ten paths."""
    names: list[str] = []
    i = 0
    while len(names) < devices:
        disk = f"sd{_letters(i)}"
        names.append(disk)
        if i % 3 == 0 and len(names) < devices:
            names.append(disk + "1")
        if i % 10 == 9 and len(names) < devices:
            names.append(f"dm-{i // 10}")
        i += 1
    return names


def iostat_devices(devices: int, reports: int = 3, seconds: int = 10) -> str:
    """An ``iostat -x -t`` log of ``reports`` reports of ``devices`` devices, ``seconds`` apart."""
    names = device_names(devices)
    lines = ["Linux 6.1.0-san (host) \t11/21/26 \t_x86_64_\t(64 CPU)", ""]
    for r in range(reports):
        t = 8 * 3600 + r * seconds
        lines += [f"11/{21 + t // 86_400}/26 {t // 3600 % 24:02d}:{t // 60 % 60:02d}:{t % 60:02d}",
                  "avg-cpu:  %user   %nice %system %iowait  %steal   %idle",
                  "          26.23    0.00    1.06    0.09    0.01   72.61", "", IOSTAT_HEADER]
        for k, name in enumerate(names):
            rs, ws = 100.0 + (k * 7 + r * 13) % 50, 20.0 + (k * 3 + r) % 30
            lines.append(f"{name:<12}{rs:8.2f}{rs * 4:10.2f}    0.00   0.00    0.17     4.00{ws:8.2f}{ws * 16:10.2f}"
                         "    0.00   0.00    0.37    16.00    0.00      0.00     0.00   0.00    0.00     0.00    0.00    0.00"
                         "    0.16   1.43")
        lines += ["", ""]
    return "\n".join(lines)


def fio_with_text(megabytes: float) -> str:
    """A fio result preceded by ``megabytes`` MB of log lines that begin with ``{`` but are not its JSON."""
    line = "{io_u error on file /dev/sdb: Input/output error: read offset=3211264, buflen=4096}\n"
    count = int(megabytes * 1e6) // len(line)
    return line * count + FIO_FIXTURE.read_text()


def fio_with_array(megabytes: float) -> str:
    """A fio result with an extra array of about ``megabytes`` MB of numbers (``0.5,`` each)."""
    doc = FIO_FIXTURE.read_text().rstrip()
    return doc[:-1] + ', "samples": [' + "0.5," * int(megabytes * 1e6 / 4) + "0.5]}\n"


def run_child(argv: list[str], timeout_s: float) -> dict[str, float | int]:
    """Run ``python -m sim.cli.flashplan ARGV`` in a child: exit code, wall seconds, peak RSS (MB of 10^6 bytes)."""
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    t0 = time.perf_counter()
    proc = subprocess.Popen([sys.executable, "-m", "sim.cli.flashplan", *argv], cwd=ROOT, env=env,
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    deadline = t0 + timeout_s
    while True:
        pid, status, usage = os.wait4(proc.pid, os.WNOHANG)
        if pid:
            break
        if time.perf_counter() > deadline:
            proc.kill()
            pid, status, usage = os.wait4(proc.pid, 0)
            return {"code": -9, "wall_s": round(time.perf_counter() - t0, 2), "peak_mb": round(usage.ru_maxrss * 1024 / 1e6, 1),
                    "timed_out": 1}
        time.sleep(0.05)
    wall = time.perf_counter() - t0
    proc.returncode = os.waitstatus_to_exitcode(status)
    assert proc.stderr is not None
    proc.stderr.close()
    return {"code": proc.returncode, "wall_s": round(wall, 2), "peak_mb": round(usage.ru_maxrss * 1024 / 1e6, 1), "timed_out": 0}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--devices", type=int, default=5000, help="devices in the iostat log (default 5000)")
    parser.add_argument("--reports", type=int, default=3, help="reports in the iostat log (default 3)")
    parser.add_argument("--fio-mb", type=float, default=10.0, help="MB of text before the fio JSON (default 10)")
    parser.add_argument("--long-reports", type=int, default=2000, help="reports in the long iostat log (default 2000)")
    parser.add_argument("--long-devices", type=int, default=100, help="devices in the long iostat log (default 100)")
    parser.add_argument("--fio-array-mb", type=float, default=60.0, help="MB of numbers in the fio array (default 60)")
    parser.add_argument("--timeout", type=float, default=600.0, help="seconds before a child is stopped (default 600)")
    args = parser.parse_args(argv)
    if (not 1 <= args.devices <= 1_000_000 or not 1 <= args.reports <= 100_000 or not 0 <= args.fio_mb <= 250
            or not 0 <= args.long_reports <= 1_000_000 or not 1 <= args.long_devices <= 100_000 or not 0 <= args.fio_array_mb <= 250):
        print("--devices must be 1..1,000,000, --reports and --long-reports 1..100,000 and 0..1,000,000, --long-devices "
              "1..100,000, --fio-mb and --fio-array-mb 0..250", file=sys.stderr)
        return 2
    with tempfile.TemporaryDirectory() as tmp:
        # the inputs are written by a child, so this process stays small: a child's ru_maxrss starts from the
        # size of the process that forked it (Linux folds the pre-exec address space into it)
        env = {**os.environ, "PYTHONPATH": str(ROOT)}
        subprocess.run([sys.executable, "-c", "import sys, json; from bench.importers_memory import write_inputs; "
                        "write_inputs(sys.argv[1], **json.loads(sys.argv[2]))", tmp,
                        json.dumps({k: getattr(args, k) for k in ("devices", "reports", "fio_mb", "long_reports", "long_devices",
                                                                  "fio_array_mb")})], cwd=ROOT, env=env, check=True)
        for what, name, cmd in _cases(args):
            path = Path(tmp) / name
            row = {"input": what, "bytes": path.stat().st_size, **run_child([*cmd, str(path), "--json"], args.timeout)}
            print(json.dumps(row), flush=True)
    return 0


def _cases(args: argparse.Namespace) -> list[tuple[str, str, list[str]]]:
    """(what, file name, flashplan command) of each measured import."""
    cases = [(f"iostat {args.devices} devices x {args.reports} reports", "iostat.txt", ["import", "iostat"]),
             (f"fio with {args.fio_mb:g} MB of text before its JSON", "fio.json", ["import", "fio"])]
    if args.long_reports:
        cases.append((f"iostat {args.long_devices} devices x {args.long_reports} reports", "iostat_long.txt", ["import", "iostat"]))
    if args.fio_array_mb:
        cases.append((f"fio with a {args.fio_array_mb:g} MB array", "fio_array.json", ["import", "fio"]))
    return cases


def write_inputs(directory: str, devices: int, reports: int, fio_mb: float, long_reports: int, long_devices: int,
                 fio_array_mb: float) -> None:
    """Write the measured inputs into ``directory`` (``_cases`` names them)."""
    tmp = Path(directory)
    (tmp / "iostat.txt").write_text(iostat_devices(devices, reports))
    (tmp / "fio.json").write_text(fio_with_text(fio_mb))
    if long_reports:
        (tmp / "iostat_long.txt").write_text(iostat_devices(long_devices, long_reports, seconds=1))
    if fio_array_mb:
        (tmp / "fio_array.json").write_text(fio_with_array(fio_array_mb))


if __name__ == "__main__":
    raise SystemExit(main())
