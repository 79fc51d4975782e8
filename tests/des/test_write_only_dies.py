"""A die-level drive that no read reaches (``DieDevice`` ``writes_only``): the link, the controller, the cache slot and
the acknowledgement are one ``WriteEntry``, and where a write costs at most one NAND operation the destage is one
``Chain`` with no event (the dies an N-server ``FifoStation``). Both give the event walk's times and draws: the
results below were recorded from the event walk (before the write-only path; 20,000 I/Os, seed 1,
``calibration.ext.write_loops``) and must come out the same; only the booked meters' sums may differ in the last bits.
"""

from __future__ import annotations

import pytest

from calibration.ext.write_loops import scenario
from sim.des.components import FifoStation
from sim.des.dies import DieArray
from sim.des.engine import Run

EVENT_WALK = {
    "8 mirrored": (1110236.2881307881, 86.0490656156384, 288.7746580620753, 315.4037855849353),
    "2 mirrored": (279773.9507039137, 343.30269565533064, 395.196273279738, 415.2313848667518),
    "8 P4510 mirrored": (446696.04072649707, 213.34598466882008, 786.7088753854496, 838.3634509521661),
    "4 RAID-0, 64 KiB sequential": (416202.53395180125, 228.68113234687917, 1423.3898903211311, 1461.4609827466097),
    "2 P4510 RAID-0, 16 KiB sequential, 2 jobs": (271343.56325651717, 29.481455494030666, 46.074256278316724,
                                                  52.44209366250726),
}
"""(IOPS, mean, p99, p99.9) of the event walk: ES5F random writes cost 1.37 operations (a write's later operations
booked when they arrive), P4510 random writes one, sequential streams under one (all booked)."""


@pytest.mark.parametrize("case", EVENT_WALK)
def test_write_only_drives_give_the_event_walks_results(case: str) -> None:
    r = Run(scenario(case, 20_000)).run()
    got = (r.iops.value, r.latency_mean_us.value, r.latency_p99_us.value, r.latency_p999_us.value)
    assert got == EVENT_WALK[case]


def test_a_write_only_drive_enters_through_its_link_and_controller_as_one_write_entry() -> None:
    """The controller is a ``WriteEntry``'s last channel station (reached ahead, after the link); the dies are N booked
    servers where no read reaches the drive, whether a write costs one operation (P4510) or more (ES5F: 1.37, its later
    operations booked by ``BookedOperations``), the addressed ``DieArray`` where reads reach it (its controller then
    entered by reads and, through ``DieWriteEntry``, by writes)."""
    def meters(case: str) -> dict[str, object]:
        run = Run(scenario(case, 2_000))
        run.run()
        return {m.name: m for m in run.model.meters}

    p4510 = meters("8 P4510 mirrored")
    controller, dies = p4510["drive0.controller"], p4510["drive0.dies"]
    assert isinstance(controller, FifoStation) and controller.booked
    assert isinstance(dies, FifoStation) and dies.capacity > 1
    es5f = meters("8 mirrored")
    controller = es5f["drive0.controller"]
    assert isinstance(controller, FifoStation) and controller.booked
    dies = es5f["drive0.dies"]
    assert isinstance(dies, FifoStation) and dies.capacity > 1
    mixed = meters("8 RAID-0, 30% reads")
    controller = mixed["drive0.controller"]  # reached by reads too: booked ahead by a write only when no read comes first
    assert isinstance(controller, FifoStation) and controller.booked and isinstance(mixed["drive0.dies"], DieArray)
