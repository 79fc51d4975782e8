"""The work the web app sends to its worker processes: plain functions of JSON text, returning JSON text.

Kept apart from Streamlit (a worker imports only this module and the engine), so a worker
starts fast and prints nothing; app/runner.py submits them to the pool and caches what
they return.
"""

from __future__ import annotations

import json

from models.scenario import Scenario


def warm() -> str:
    """Worker: import the engine and the fast path, so the first sizing does not wait for a cold worker."""
    import sim.analytic
    import sim.des.engine  # noqa: F401

    return "ok"


def simulate_json(scenario_json: str) -> str:
    """Worker: simulate a scenario given as JSON, return the Result as JSON."""
    from sim.plan.capacity_check import simulate_checked

    return simulate_checked(Scenario.model_validate_json(scenario_json)).model_dump_json()


def sweep_point_json(base_json: str, factors_json: str) -> str:
    """Worker: one point of a what-if sweep (``sim.plan.sweep.sweep_frame`` with one value per factor) as JSON records.

    The sweep derives each run's seed from the base seed and the point's factor values, so a
    point run on its own gets the seed it would get in the whole grid. Each row carries its
    ``validity`` (precise / cut_short, from the stop reason when the sweep does not give it).
    """
    from app.validity import validity_of_stop
    from sim.plan.sweep import sweep_frame

    frame = sweep_frame(Scenario.model_validate_json(base_json), json.loads(factors_json), workers=1)
    if "validity" not in frame.columns:  # sim.plan.sweep rows carry the stop reason; precise = precision reached
        frame["validity"] = [validity_of_stop(r) if st == "ok" else None for r, st in zip(frame["stop_reason"], frame["status"], strict=True)]
    return str(frame.to_json(orient="records"))


def calibration_json(record_ids_json: str, run_json: str) -> str:
    """Worker: evaluate the named calibration records (``calibration.evaluate``) and return their rows as JSON."""
    from calibration.evaluate import evaluate
    from calibration.records import load_records

    wanted = set(json.loads(record_ids_json))
    records = [r for r in load_records() if r.id in wanted]
    outcomes = evaluate(records, run=json.loads(run_json), workers=1)
    return json.dumps([o.as_dict() for o in outcomes])


def plan_json(requirements_json: str, verify_top: int) -> str:
    """Worker: run the planner; the PlanResult as JSON, or ``{"problems": [...]}`` when nothing meets the requirements."""
    from models.requirements import Requirements
    from sim.plan.planner import NoFeasiblePlan, plan

    req = Requirements.model_validate_json(requirements_json)
    try:
        return json.dumps(plan(req, verify_top=verify_top).as_dict(), default=str)
    except NoFeasiblePlan as exc:
        return json.dumps({"problems": exc.problems})


def qd_point_json(device: str, qd: int, read_fraction: float, block_size_kib: float, max_ios: int,
                  device_model: str = "auto") -> str:
    """Worker: one queue depth of a device's DES queue-depth sweep (``sim.plan.qd_sweep``) as a one-row JSON list.

    The row carries ``status`` and ``validity``, so the runner caches it only when it is precise; the
    sweep derives the point's seed from its queue depth, so a point run alone matches the whole sweep's.
    """
    from sim.plan.qd_sweep import qd_sweep

    (point,) = qd_sweep(device, [qd], solver="des", read_fraction=read_fraction, block_size_kib=block_size_kib,
                        max_ios=max_ios, device_model=device_model)
    return json.dumps([{"status": "ok", **point.as_dict()}])


def growth_json(scenario_json: str, slo_p99_us: float, verify: bool) -> str:
    """Worker: the growth query (``sim.plan.growth.breaking_point``) as ``Growth.as_dict()`` JSON."""
    from sim.plan.growth import breaking_point

    growth = breaking_point(Scenario.model_validate_json(scenario_json), slo_p99_us, verify=verify, des_steps=2)
    return json.dumps(growth.as_dict(), allow_nan=False)
