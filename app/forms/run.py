"""The Size form's run section: precision (the CI target and the time budget) and the seed."""

from __future__ import annotations

from streamlit.delta_generator import DeltaGenerator

from app.forms.draft import CUSTOM_PRECISION, PRECISIONS
from app.forms.fields import FormBase
from models.scenario import RunSettings


class RunSection(FormBase):
    """The precision and seed widgets."""

    def run_settings(self, where: DeltaGenerator) -> None:
        self.scope = "run"
        run = self.data.setdefault("run", {})
        labels = [*PRECISIONS, CUSTOM_PRECISION]
        matching = next((k for k, v in PRECISIONS.items() if all(run.get(f) == x for f, x in v.items())), CUSTOM_PRECISION)
        c1, c2 = where.columns([3, 1])
        choice = self.select(c1, "run.precision", "Precision", labels, default=matching, write=False,
                             help="The run stops when the 95% confidence interval of IOPS and latency is this tight, or at the time budget.")
        self.number(c2, "run.seed", "Seed", RunSettings, "seed", default=1, integer=True,
                    help="The same seed gives the same result.")
        if choice == CUSTOM_PRECISION:
            c1, c2, c3 = where.columns(3)
            self.number(c1, "run.target_rel_ci", "Target ± (fraction)", RunSettings, "target_rel_ci", default=0.02,
                        integer=False, step=0.01, fmt="%.3f")
            self.number(c2, "run.max_ios", "Budget (I/Os)", RunSettings, "max_ios", default=3_000_000, integer=True, step=100_000)
            self.number(c3, "run.max_wall_s", "Budget (seconds)", RunSettings, "max_wall_s", default=20.0, integer=False)
        else:
            run.update(PRECISIONS[choice])
