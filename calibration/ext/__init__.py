"""EXT: public queue-depth sweeps of NVMe drives, a system of the calibration gate under the die-level device model.

Published fio-style sweeps (IOPS, mean and p99 latency per queue depth) check the die-level device
model. The records live here (``ext.yaml``, scenarios in
``scenarios/``), apart from the seeds' ``calibration/data``: ``flashplan calibrate --only EXT`` (and the
full ``flashplan calibrate``) runs them under the device model the file names (``dies``;
``calibration.ext.records.gate_records``), and ``python -m calibration.ext.check`` prints the
measured-vs-predicted sweep table (``BEFORE.md``: the pooled model before the die level).
``DEVICE_PARAMETERS.md`` holds the published die counts, channels and NAND timings.
"""
