"""Layout check: does a direct-attached volume survive the drive failures its RAID level promises?

Members of a volume are namespaces, and member i lives on drive ``i % drives`` (see
``sim/route/volume.py``). When several namespaces of one drive sit in one redundancy group, one
drive failure takes out several members at once: RAID-5 over 8 drives x 4 namespaces
loses 4 of its 32 members and the data with them, though its capacity arithmetic (31/32
usable) looks protected. IBM i places mirror copies on different drives (or adapters) for
this reason (seed 001, "mirrored protection ... at the drive level").

``check_placement`` counts, for the layout's groups, how many whole-drive failures the
volume tolerates, compares it with what the layout promises, and gives the usable capacity
of the same layout built so that the promise holds (one member per drive in each group).
"""

from __future__ import annotations

from dataclasses import dataclass

from models.topology import DirectNvme

PROMISED_DRIVE_FAILURES = {"jbod": 0, "raid0": 0, "raid1": 1, "raid10": 1, "ibmi_mirror": 1, "raid5": 1, "raid6": 2}
"""Drive failures each layout is bought to survive (raid1: at least one; an n-way mirror survives n-1)."""

LAYOUT_WORDS = {"raid1": "RAID-1", "raid10": "RAID-10", "ibmi_mirror": "IBM i mirroring", "raid5": "RAID-5", "raid6": "RAID-6"}


@dataclass(frozen=True)
class Placement:
    """The protection a direct-attached volume delivers against whole-drive failures."""

    layout: str
    promised_drive_failures: int
    tolerated_drive_failures: int
    members_per_drive_in_group: int
    usable_tb_as_built: float
    usable_tb_protected: float
    """Usable capacity of the same layout with one member per drive in each group (the promise kept)."""

    @property
    def delivered(self) -> bool:
        return self.tolerated_drive_failures >= self.promised_drive_failures

    def warning(self) -> str:
        """A sentence for the user ("" when the protection is delivered)."""
        if self.delivered:
            return ""
        name = LAYOUT_WORDS.get(self.layout, self.layout)
        kept = "is effectively unprotected" if self.tolerated_drive_failures == 0 else \
            f"survives only {self.tolerated_drive_failures} drive failure(s)"
        return (f"{name} here is built from namespaces that share drives: {self.members_per_drive_in_group} members of one "
                f"redundancy group sit on each drive, so one drive failure takes out {self.members_per_drive_in_group} members "
                f"and the volume survives {self.tolerated_drive_failures} drive failure(s), not "
                f"{self.promised_drive_failures}. Its {self.usable_tb_as_built:,.2f} TB usable {kept}; {name} that survives "
                f"{self.promised_drive_failures} drive failure(s) (one namespace per drive in each group) gives "
                f"{self.usable_tb_protected:,.2f} TB usable.")


def _tolerated(layout: str, members: int, drives: int, per_drive: int) -> tuple[int, int]:
    """(whole-drive failures tolerated, members of one group on one drive) under the member placement i -> i % drives."""
    if layout in ("jbod", "raid0"):
        return 0, 1
    if layout in ("raid10", "ibmi_mirror"):
        pairs = [(2 * p % drives, (2 * p + 1) % drives) for p in range(members // 2)]
        same = any(a == b for a, b in pairs)
        return (0, 2) if same else (1, 1)
    if layout == "raid1":  # every member a copy: the data lives while one drive with a member survives
        used = min(drives, members)
        return used - 1, per_drive
    # raid5 / raid6: one group of every member; a drive holds per_drive of them
    parity = 1 if layout == "raid5" else 2
    return parity // per_drive, per_drive


def check_placement(topology: DirectNvme) -> Placement:
    """The protection ``topology``'s volume delivers against drive failures, and its capacity with the promise kept."""
    from models.cost import data_fraction, usable_capacity_tb

    drives = topology.drives
    per_drive = topology.namespaces.per_drive
    members = drives * per_drive
    layout = topology.layout
    tolerated, on_one_drive = _tolerated(layout, members, drives, per_drive)
    promised = PROMISED_DRIVE_FAILURES.get(layout, 0)
    as_built = usable_capacity_tb(topology)
    raw_data_tb = as_built / data_fraction(layout, members)
    protected = as_built if tolerated >= promised else raw_data_tb * data_fraction(layout, drives)
    return Placement(layout, promised, tolerated, on_one_drive, as_built, protected)
