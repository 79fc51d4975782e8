"""``sim.analytic.classes.mixed_mva`` with each class's own service time: at a FCFS
station an arrival waits for every job ahead of it for that job's own service (the usual MVA heuristic for FCFS
stations whose classes' service times differ), not for its own.

Theory: open classes at one exponential FCFS server are an M/G/1 queue (the mixture of their services), whose wait
is Pollaczek-Khinchine's, W = sum_j lambda_j E[S_j^2] / 2 / (1 - rho) = sum_j lambda_j S_j^2 / (1 - rho), the same
for every class. With equal service times the rule is the product form's (Lazowska et al. 1984, ch. 7), so passing
the services changes nothing there.
"""

from __future__ import annotations

import pytest

from sim.analytic.classes import mixed_mva


def test_open_classes_of_different_services_wait_as_pollaczek_khinchine() -> None:
    rates = [0.05, 0.0005]  # per us: many short jobs and a few long ones (an 8 KiB and a 1 MiB transfer, say)
    services = [2.0, 133.0]
    rho = sum(lam * s for lam, s in zip(rates, services, strict=True))
    wait = sum(lam * s * s for lam, s in zip(rates, services, strict=True)) / (1.0 - rho)
    _, response, stable = mixed_mva([1], [[s] for s in services], rates, [0.0, 0.0], [0.0, 0.0],
                                    service=[[s] for s in services])
    assert stable
    for r, s in zip(response, services, strict=True):
        assert r == pytest.approx(s + wait, rel=1e-12)
    # the product form's rule makes the long job wait as if every job ahead were as long as itself
    _, product, _ = mixed_mva([1], [[s] for s in services], rates, [0.0, 0.0], [0.0, 0.0])
    assert product[1] == pytest.approx(services[1] / (1.0 - rho), rel=1e-12)
    assert product[1] - response[1] > 0.5 * (product[1] - services[1])


@pytest.mark.parametrize("rate", [0.0, 0.004])
def test_equal_services_keep_the_product_form(rate: float) -> None:
    """Two closed classes and one open class over three stations (one of two servers), every class's time per visit
    the same at a station (its demand over its visits there): the responses and throughputs of the product form."""
    servers = [1, 2, 1]
    per_visit = [5.0, 8.0, 3.0]
    visits = [[1.0, 2.0, 0.5], [3.0, 1.0, 0.0], [1.0, 1.0, 1.0]]
    demand = [[v * s for v, s in zip(row, per_visit, strict=True)] for row in visits]
    service = [[s if v > 0 else 0.0 for v, s in zip(row, per_visit, strict=True)] for row in visits]
    args = (servers, demand, [0.0, 0.0, rate], [4.0, 3.0, 0.0], [10.0, 40.0, 0.0])
    x0, r0, s0 = mixed_mva(*args)
    x1, r1, s1 = mixed_mva(*args, service=service)
    assert s0 and s1
    for a, b in zip(x0 + r0, x1 + r1, strict=True):
        assert b == pytest.approx(a, rel=1e-9)


def test_a_long_closed_job_next_to_short_ones_waits_for_their_work() -> None:
    """One station: a closed loop of short jobs (1 us) and a single long job (100 us) at Z = 0. The long job's wait is
    the short jobs' queue times 1 us (at most their population), not the queue times its own 100 us."""
    _, response, _ = mixed_mva([1], [[1.0], [100.0]], [0.0, 0.0], [8.0, 1.0], [50.0, 0.0], service=[[1.0], [100.0]])
    assert 100.0 < response[1] <= 100.0 + 8.0 * 1.0
    _, product, _ = mixed_mva([1], [[1.0], [100.0]], [0.0, 0.0], [8.0, 1.0], [50.0, 0.0])
    # the product form charges each queued short job 100 us: its wait is ~100 times the FCFS one (the queues differ a little)
    assert product[1] - 100.0 > 50.0 * (response[1] - 100.0)
