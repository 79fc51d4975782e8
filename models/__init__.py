"""flashplan models: pydantic v2 descriptions of hardware, topology, workload, scenario and result.

Nothing here imports SimPy: a Scenario goes into ``sim.simulate`` and a Result comes back.
"""

from models.catalog import Catalog, CatalogError, load_catalog, lookup
from models.hardware import (
    DeviceBehaviour,
    FlashDeviceSpec,
    HostSpec,
    NvmeAdapterSpec,
    PcieLink,
    Price,
    SanAdapterSpec,
    StorageServerSpec,
)
from models.result import METRIC_KEYS, Metric, Result
from models.scenario import (
    RunSettings,
    Scenario,
    ScenarioFileError,
    apply_overrides,
    format_validation_error,
    load_scenario,
    parse_override,
    read_scenario_data,
    scenario_from_data,
    with_overrides,
)
from models.topology import (
    DirectNvme,
    Exflash,
    Generic,
    GenericStation,
    HostConfig,
    Namespaces,
    NvmeQueues,
    San,
    StorageCache,
    ZvmEdev,
)
from models.workload import BurstyWorkload, ClosedWorkload, OpenWorkload, SizeWeight

__all__ = [
    "METRIC_KEYS", "BurstyWorkload", "Catalog", "CatalogError", "ClosedWorkload", "DeviceBehaviour",
    "DirectNvme", "Exflash", "FlashDeviceSpec", "Generic", "GenericStation", "HostConfig", "HostSpec",
    "Metric", "Namespaces", "NvmeAdapterSpec", "NvmeQueues", "OpenWorkload", "PcieLink", "Price",
    "Result", "RunSettings", "San", "SanAdapterSpec", "Scenario", "ScenarioFileError", "SizeWeight",
    "StorageCache", "StorageServerSpec", "ZvmEdev", "apply_overrides", "format_validation_error",
    "load_catalog", "load_scenario", "lookup", "parse_override", "read_scenario_data",
    "scenario_from_data", "with_overrides",
]
