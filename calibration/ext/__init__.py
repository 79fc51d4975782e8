"""EXT: public queue-depth sweeps of NVMe drives, kept apart from the calibration gate.

Issue 18 asks for a calibration system of published fio-style sweeps (IOPS, mean and p99 latency per
queue depth) that checks a die-level device model. Today's pooled device model is expected to miss
them, so the records live here (``ext.yaml``, scenarios in ``scenarios/``) where
``calibration.records.load_records`` does not look; ``python -m calibration.ext.check`` prints the
measured-vs-predicted table (``BEFORE.md``). Move them into ``calibration/data`` once the die-level
model lands. ``DEVICE_PARAMETERS.md`` holds the published die counts, channels and NAND timings.
"""
