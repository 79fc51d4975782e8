"""Die-level reads booked ahead (``sim.des.dies.DieArray.read_at``): a read booked on a die before it arrives there
leaves the die idle until it arrives, and a program the write point puts on that die meanwhile runs first, the read
waiting behind it, as when the read arrives by an event."""

from __future__ import annotations

import pytest

from sim.des.components import Job, schedule
from sim.des.dies import DieArray
from sim.des.environment import Environment
from sim.route.flash import DieLayout

TR = 10.0
"""The die read time (us)."""


def _array(env: Environment, dies: int = 1) -> DieArray:
    layout = DieLayout(dies=dies, channels=1, die_read_us=TR, die_read_cv=0.0, transfer_us=0.0, controller_us=0.0,
                       controller_kiops=1000.0, page_bytes=16384, rating_qd=1)
    return DieArray(env, "drive0.dies", layout, lambda job: TR, lambda: 0.0, random=True)


def _job(done: dict[str, float], name: str, env: Environment) -> Job:
    job = Job()
    job.size = 4096
    job.route = (lambda j: done.__setitem__(name, env.now),)
    job.step = -1
    return job


def test_a_read_booked_ahead_starts_at_its_arrival_and_the_die_is_busy_only_then() -> None:
    env = Environment()
    dies = _array(env)
    done: dict[str, float] = {}
    dies.read_at(_job(done, "read", env), 5.0)
    env.run(until=8.0)
    assert dies.unit_time() == pytest.approx(3.0)  # busy from its arrival at 5, not from the booking at 0
    env.run(until=30.0)
    assert done == {"read": 5.0 + TR}
    assert dies.unit_time() == pytest.approx(TR)


def test_a_program_on_the_die_before_the_booked_read_arrives_runs_first() -> None:
    """The die is idle at 1 (the read arrives at 5): the write point puts a program of 100 us there, and the read
    reaches a busy die and waits for the program, 101 + 10; its booked end at 15 is taken back."""
    env = Environment()
    dies = _array(env)
    done: dict[str, float] = {}
    program = dies.program(lambda job: 100.0)
    dies.read_at(_job(done, "read", env), 5.0)
    schedule(env, 1.0, None, lambda ev: program(_job(done, "program", env)))
    env.run(until=200.0)
    assert done == {"program": 101.0, "read": 101.0 + TR}
    assert dies.unit_time() == pytest.approx(100.0 + TR)


def test_a_program_arriving_after_the_booked_read_goes_to_another_die() -> None:
    """Two dies, the read booked on die 0 at 5: a program at 6 finds die 0 busy and takes die 1; both run at once."""
    env = Environment()
    dies = _array(env, dies=2)
    done: dict[str, float] = {}
    program = dies.program(lambda job: 100.0)
    dies.read_at(_job(done, "read", env), 5.0)
    schedule(env, 6.0, None, lambda ev: program(_job(done, "program", env)))
    env.run(until=200.0)
    assert done == {"read": 5.0 + TR, "program": 106.0}
