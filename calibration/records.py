"""Calibration records: one published measurement each, with the scenario that reproduces it.

A record says where a number comes from (seed file, table or figure, row, column), which
scenario reproduces the measured setup (a scenario file plus dotted overrides, the same
format as ``examples/``), which metric of the simulated Result it is compared with, the
measured value with its unit, and a tolerance justified by the noise of the source.

Three kinds of record:

* ``value``: predicted = metric(scenario).
* ``ratio``: predicted = metric(scenario) / metric(baseline); relative claims such as
  "up to 16% more" are ratios between two scenarios. With ``alternatives`` the record is
  "up to": the predicted value is the largest ratio over the listed scenario pairs.
* ``bound``: a qualitative claim; the record holds when the predicted value (or ratio, with
  a baseline) is at least (``at_least``) or at most (``at_most``) the measured bound.

Where two sources give contradicting values for one quantity, both records are kept, each
says in ``conflict`` how they disagree, and ``conflicts_with`` names the other: no model can
meet both, so a record outside its tolerance whose contradicting record holds is reported as
settled by that conflict, not as a model miss (``calibration.evaluate.settle_conflicts``).

A record that no mechanism grounded in a source meets, and that no parameter may be fitted to,
is declared a ``known_gap``: the mechanism hypotheses tried, each with the figure it gave, the
data that would settle it, and the date declared. It is still run, reported and plotted; it
is counted apart and does not fail ``flashplan calibrate`` (``--strict`` counts it). A known gap
found within tolerance is reported, so a stale declaration is removed.

Records live in ``calibration/data/*.yaml`` (one file per system) and refer to scenario
files in ``calibration/scenarios/`` by name; the EXT system's records (published queue-depth sweeps) live in
``calibration/ext/ext.yaml`` (``calibration.ext.records``). Nothing here runs a simulation.
"""

from __future__ import annotations

import datetime as dt
from functools import cached_property
from pathlib import Path
from typing import Any, Literal

from pydantic import Field, model_validator

from models.common import StrictModel, field_problem
from models.loading import read_document, validate

CALIBRATION_DIR = Path(__file__).resolve().parent
DATA_DIR = CALIBRATION_DIR / "data"
SCENARIO_DIR = CALIBRATION_DIR / "scenarios"

System = Literal["S1", "S2", "S3", "S4", "S5", "user"]
SYSTEMS: tuple[str, ...] = ("S1", "S2", "S3", "S4", "S5")
SYSTEM_NAMES = {
    "S1": "LinuxONE: direct NVMe RAID-10 vs DS8950F over FCP (seed 000)",
    "S2": "IBM i on Power10: NVMe namespaces and mirroring (seed 001)",
    "S3": "Lenovo eXFlash memory-channel DIMMs (seed 002)",
    "S4": "z/VM NVMe EDEVs with HyperPAV aliases (seed 003)",
    "S5": "FS9100: SCSI vs NVMe/FC (seed 004)",
    "EXT": "public queue-depth sweeps of NVMe drives, under the die-level device model (calibration/ext)",
    "user": "user-imported measurements",
}
EXT_SYSTEM = "EXT"
"""Published fio-style queue-depth sweeps of catalog drives: the records live in calibration/ext/ext.yaml
(``calibration.ext.records``: the record format with the test conditions, and the device model they run under)."""
GATE_SYSTEMS: tuple[str, ...] = (*SYSTEMS, EXT_SYSTEM)
"""The systems ``flashplan calibrate`` runs: the seeds' S1-S5 (calibration/data) and EXT (calibration/ext)."""


class Source(StrictModel):
    """Where the measured value is printed."""

    seed: str = Field(description="seed file name, e.g. 001_e64ce6f66bff4c7a.txt, or the user's file")
    where: str = Field(description="table, figure or section")
    row: str | None = None
    column: str | None = None
    quote: str | None = Field(default=None, description="the words of the source, when the value is stated in text")


class ScenarioRef(StrictModel):
    """A scenario: a file in calibration/scenarios/ (or a path) plus dotted overrides."""

    file: str
    set: dict[str, Any] = Field(default_factory=dict)

    def path(self, base: Path = SCENARIO_DIR) -> Path:
        p = Path(self.file)
        return p if p.is_absolute() else base / p

    def key(self) -> str:
        """A stable identity, so records that share a scenario simulate it once."""
        items = ",".join(f"{k}={self.set[k]!r}" for k in sorted(self.set))
        return f"{self.file}|{items}"


class Pair(StrictModel):
    """One scenario pair of an "up to" ratio record."""

    scenario: ScenarioRef
    baseline: ScenarioRef
    label: str = ""


class Tolerance(StrictModel):
    """How far the prediction may be from the measured value, and why that far."""

    rel: float | None = Field(default=None, gt=0, le=1, description="relative, e.g. 0.15 for +-15%")
    abs: float | None = Field(default=None, gt=0, description="absolute, in the record's unit (busy % points)")
    why: str

    @model_validator(mode="after")
    def _one(self) -> Tolerance:
        if (self.rel is None) == (self.abs is None):
            raise field_problem("tolerance", "give exactly one of rel (fraction) or abs (points)")
        return self

    def allows(self, measured: float, predicted: float) -> bool:
        if self.rel is not None:
            return abs(predicted - measured) <= self.rel * abs(measured)
        assert self.abs is not None
        return abs(predicted - measured) <= self.abs


class Hypothesis(StrictModel):
    """One mechanism tried on a known gap and what it gave."""

    mechanism: str = Field(min_length=1, description="what was tried, in the storage engineer's words")
    figure: str = Field(min_length=1, description="what it gave for the record, with the number and how it was obtained")


class KnownGap(StrictModel):
    """A record outside its tolerance that no grounded mechanism meets, declared with its evidence."""

    hypotheses: list[Hypothesis] = Field(min_length=1, description="mechanisms tried, each with the figure it gave")
    missing_data: str = Field(min_length=1, description="what published data would settle it")
    declared: str = Field(pattern=r"^\d{4}-\d{2}-\d{2}$", description="date declared, YYYY-MM-DD (quoted in YAML)")

    @model_validator(mode="after")
    def _real_date(self) -> KnownGap:
        try:
            dt.date.fromisoformat(self.declared)
        except ValueError:
            raise field_problem("declared", f"not a calendar date: {self.declared!r}") from None
        return self


class Record(StrictModel):
    """One measured value from the seeds (or a user's own benchmark) and how to predict it."""

    id: str = Field(pattern=r"^[A-Za-z0-9_.:-]+$")
    system: System
    source: Source
    kind: Literal["value", "ratio", "bound"] = "value"
    scenario: ScenarioRef | None = None
    baseline: ScenarioRef | None = None
    alternatives: list[Pair] = Field(default_factory=list)
    metric: str = Field(description="a Result metric key, busy:<component glob>, util:<glob>, cpu_cores or price_performance")
    measured: float
    unit: str
    tolerance: Tolerance | None = None
    at_least: bool = False
    at_most: bool = False
    fit: bool = Field(default=True, description="False keeps the record out of the parameter fit (a check only)")
    ci: bool = Field(default=False, description="part of the quick subset that make test runs")
    conflict: str | None = Field(default=None, description="how this value disagrees with another source, and what we do")
    conflicts_with: list[str] = Field(
        default_factory=list,
        description="ids of records that give the same quantity from a source this one contradicts; the record is "
                    "settled (not a model miss) when the prediction holds for one of them")
    note: str | None = None
    known_gap: KnownGap | None = Field(
        default=None, description="declared when no grounded mechanism meets the record: it then does not fail the gate")

    @model_validator(mode="after")
    def _consistent(self) -> Record:
        if self.alternatives:
            if self.kind == "value" or self.scenario is not None or self.baseline is not None:
                raise field_problem("alternatives", "alternatives are for ratio/bound records and replace scenario/baseline")
        elif self.scenario is None:
            raise field_problem("scenario", "a record needs a scenario (or alternatives)")
        elif self.kind == "ratio" and self.baseline is None:
            raise field_problem("baseline", "a ratio record needs a baseline scenario")
        if self.kind == "bound":
            if self.at_least == self.at_most:
                raise field_problem("at_least", "a bound record sets exactly one of at_least / at_most")
        elif self.tolerance is None:
            raise field_problem("tolerance", f"a {self.kind} record needs a tolerance")
        if self.conflicts_with and not self.conflict:
            raise field_problem("conflict", "a record with conflicts_with says in conflict how the sources disagree")
        return self

    @cached_property
    def pairs(self) -> list[Pair]:
        """The scenario pairs of a ratio record or bound-on-a-ratio (one unless "up to")."""
        if self.alternatives:
            return self.alternatives
        if self.scenario is None or self.baseline is None:
            return []
        return [Pair(scenario=self.scenario, baseline=self.baseline)]

    def scenarios(self) -> list[ScenarioRef]:
        """Every scenario this record needs simulated."""
        if not self.pairs:
            assert self.scenario is not None
            return [self.scenario]
        return [s for p in self.pairs for s in (p.scenario, p.baseline)]

    def holds(self, predicted: float) -> bool:
        """Whether the prediction is within the record's tolerance (or satisfies its bound)."""
        if self.kind == "bound":
            return predicted >= self.measured if self.at_least else predicted <= self.measured
        assert self.tolerance is not None
        return self.tolerance.allows(self.measured, predicted)


class RecordFile(StrictModel):
    """A file of records for one system."""

    system: System
    description: str = ""
    records: list[Record]


def load_records(directory: Path = DATA_DIR, only: str | None = None) -> list[Record]:
    """Every record in ``directory``, optionally only one system's; ids must be unique."""
    records: list[Record] = []
    for path in sorted(directory.glob("*.yaml")):
        rf = validate(RecordFile, read_document(path), prefix=path.name)
        records.extend(rf.records)
    seen: set[str] = set()
    for r in records:
        if r.id in seen:
            raise ValueError(f"duplicate calibration record id {r.id!r}")
        seen.add(r.id)
    by_id = {r.id: r for r in records}
    for r in records:
        for other in r.conflicts_with:
            if other not in by_id or other == r.id:
                raise ValueError(f"record {r.id!r}: conflicts_with names {other!r}, which is not another record")
            if by_id[other].system != r.system:
                raise ValueError(f"record {r.id!r}: conflicts_with names {other!r} of another system")
    if only is not None:
        records = [r for r in records if r.system == only]
    return records
