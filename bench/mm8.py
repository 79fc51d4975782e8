"""The same M/M/8 queue (rho = 0.9) run three ways: flashplan, a textbook SimPy model, and Ciw.

Eight exponential servers with an 80 us mean service time, Poisson arrivals at
90,000 per second (0.09 per us), so rho = 0.09 * 80 / 8 = 0.9. Every engine runs
until the same number of customers has left the queue and reports customers per
wall-second and the mean response time (in us) as a sanity check against Erlang C.

``python -m bench.mm8 --ios N`` runs flashplan alone and prints one JSON line; the
benchmark starts it in a child process to measure peak memory.
"""

from __future__ import annotations

import argparse
import json
import random
import resource
import sys
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass
from typing import Any

from bench.analytic import mmc_mean_response

SERVERS = 8
SERVICE_US = 80.0
RATE_IOPS = 90_000.0
ARRIVALS_PER_US = RATE_IOPS * 1e-6
RHO = ARRIVALS_PER_US * SERVICE_US / SERVERS
ANALYTIC_MEAN_US = mmc_mean_response(SERVERS, ARRIVALS_PER_US, 1.0 / SERVICE_US)  # 150.15 us


@dataclass
class EngineRun:
    """One engine's run of the M/M/8 queue."""

    engine: str
    customers: int
    wall_s: float
    mean_response_us: float
    analytic_us: float = ANALYTIC_MEAN_US
    note: str = ""
    cpu_s: float = 0.0

    @property
    def cpu_rate(self) -> float:
        """Customers per CPU-second of this process (less sensitive to other load on the machine)."""
        return self.customers / self.cpu_s if self.cpu_s > 0 else 0.0

    @property
    def rate(self) -> float:
        """Customers (I/Os) completed per wall-clock second."""
        return self.customers / self.wall_s if self.wall_s > 0 else 0.0

    @property
    def error(self) -> float:
        """Relative deviation of the mean response time from the Erlang C value."""
        return self.mean_response_us / self.analytic_us - 1.0


def mean_response_us(rate_iops: float = RATE_IOPS) -> float:
    """Erlang C mean response time (us) of the benchmark queue at ``rate_iops`` arrivals per second."""
    return mmc_mean_response(SERVERS, rate_iops * 1e-6, 1.0 / SERVICE_US)


def sanity_tolerance(customers: int) -> float:
    """Allowed relative deviation of a mean response time from Erlang C after ``customers`` at rho = 0.9.

    About three standard errors: over 10 seeds the standard deviation of the relative
    error was 3-5% at 100,000 customers (it shrinks like 1/sqrt(customers)), so
    50/sqrt(n) gives ~16% at 100k and ~8% at 400k; never below 5%.
    """
    return max(0.05, 50.0 / customers**0.5)


def mm8_data(customers: int, seed: int = 1, rate_iops: float = RATE_IOPS) -> dict[str, Any]:
    """Raw scenario data: the generic M/M/8 queue, stopped by ``run.max_ios`` after ``customers`` completions.

    Warmup is 0 and the precision target is unreachable, so the I/O budget ends the run
    and every completion is measured, exactly like the two baselines.
    """
    return {
        "name": "bench M/M/8 at rho = 0.9",
        "topology": {
            "kind": "generic",
            "stations": [{"name": "servers", "servers": SERVERS, "service_time_us": SERVICE_US, "distribution": "exponential"}],
        },
        "workload": {"kind": "open", "rate_iops": rate_iops, "read_fraction": 1.0},
        "run": {
            "seed": seed,
            "target_rel_ci": 1e-9,
            "warmup_ios": 0,
            "max_ios": customers,
            "max_wall_s": 86_400.0,
        },
    }


def run_flashplan(customers: int, seed: int = 1, rate_iops: float = RATE_IOPS) -> EngineRun:
    """flashplan's ``simulate`` on the M/M/8 scenario; the timer covers model build and run."""
    from models import scenario_from_data
    from sim import simulate

    scenario = scenario_from_data(mm8_data(customers, seed, rate_iops))
    t0, c0 = time.perf_counter(), time.process_time()
    result = simulate(scenario)
    wall, cpu = time.perf_counter() - t0, time.process_time() - c0
    return EngineRun("flashplan", result.simulated_ios, wall, result.latency_mean_us.value, mean_response_us(rate_iops),
                     result.stop_reason, cpu)


def run_naive(customers: int, seed: int = 1, rate_iops: float = RATE_IOPS) -> EngineRun:
    """The textbook SimPy model: one process per customer, a ``simpy.Resource`` of 8 servers."""
    import simpy

    rng = random.Random(seed)
    env = simpy.Environment()
    server = simpy.Resource(env, capacity=SERVERS)
    response: list[float] = []
    service_rate = 1.0 / SERVICE_US
    arrival_rate = rate_iops * 1e-6

    def customer() -> Any:
        arrived = env.now
        with server.request() as req:
            yield req
            yield env.timeout(rng.expovariate(service_rate))
        response.append(env.now - arrived)

    def source() -> Any:
        for _ in range(customers):
            yield env.timeout(rng.expovariate(arrival_rate))
            env.process(customer())

    t0, c0 = time.perf_counter(), time.process_time()
    env.process(source())
    env.run()
    wall, cpu = time.perf_counter() - t0, time.process_time() - c0
    return EngineRun("naive SimPy", len(response), wall, sum(response) / len(response), mean_response_us(rate_iops), cpu_s=cpu)


def run_ciw(customers: int, seed: int = 1, rate_iops: float = RATE_IOPS) -> EngineRun:
    """Ciw 3.x on the same queue (time unit: us), until ``customers`` have left the system."""
    import ciw

    ciw.seed(seed)
    t0, c0 = time.perf_counter(), time.process_time()
    network = ciw.create_network(
        arrival_distributions=[ciw.dists.Exponential(rate=rate_iops * 1e-6)],
        service_distributions=[ciw.dists.Exponential(rate=1.0 / SERVICE_US)],
        number_of_servers=[SERVERS],
    )
    sim = ciw.Simulation(network)
    sim.simulate_until_max_customers(customers, method="Finish")
    wall, cpu = time.perf_counter() - t0, time.process_time() - c0
    records = sim.get_all_records()
    mean = sum(r.exit_date - r.arrival_date for r in records) / len(records)
    return EngineRun("Ciw", len(records), wall, mean, mean_response_us(rate_iops), cpu_s=cpu)


ENGINES: dict[str, Callable[..., EngineRun]] = {
    "flashplan": run_flashplan,
    "naive SimPy": run_naive,
    "Ciw": run_ciw,
}


def main(argv: list[str] | None = None) -> int:
    """Child-process entry point: run flashplan for ``--ios`` completions and print JSON."""
    parser = argparse.ArgumentParser(prog="python -m bench.mm8", description=__doc__.splitlines()[0])
    parser.add_argument("--ios", type=int, default=1_000_000, help="completions to simulate")
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args(argv)
    run = run_flashplan(args.ios, args.seed)
    out = asdict(run)
    out["self_maxrss_kib"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    print(json.dumps(out))
    return 0


if __name__ == "__main__":
    sys.exit(main())
