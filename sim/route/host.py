"""The host's CPU as both solvers use it: cores, path length per I/O and per KiB, the serial section.

Numbers: the scenario's ``host`` overrides, else the catalog host (models/catalog/hosts.yaml),
else parameters.yaml ``host_defaults`` (seeds 002, 003, 004). The stack an attachment uses when
the scenario names none is ``DEFAULT_STACK`` (the one place that default lives).
"""

from __future__ import annotations

from dataclasses import dataclass

from models.catalog import lookup, parameter
from models.hardware import HostSpec
from models.topology import HostConfig

DEFAULT_STACK = {
    "generic": "none",
    "direct_nvme": "linux_nvme",
    "san.fcp": "scsi_fcp",
    "san.nvme_fc": "nvme_fc",
    "exflash": "exflash_driver",
    "zvm_edev": "zvm_cp",
}
"""Host stack of each attachment (SAN: per protocol) when the scenario's ``host.stack`` is not set."""

IBMI_STACK = "ibmi_nvme"
"""IBM i's direct-NVMe stack (the planner's power10_ibmi platform; the web app offers it beside Linux's)."""


def stack_choices(kind: str) -> tuple[str, ...]:
    """The stacks an attachment kind can run, its default (``DEFAULT_STACK``) first."""
    if kind == "san":
        return DEFAULT_STACK["san.fcp"], DEFAULT_STACK["san.nvme_fc"]
    if kind == "direct_nvme":
        return DEFAULT_STACK[kind], IBMI_STACK
    return (DEFAULT_STACK[kind],)


@dataclass
class ResolvedHost:
    """A host's CPU as the engine uses it.

    ``cpu_us_per_io`` is charged per device I/O, ``cpu_us_per_kib`` per KiB it moves (z/VM CP
    handles every 4 KiB page of a paging I/O, seed 003 Table 3), and ``serial_us_per_io`` is a
    section of the stack that one I/O at a time can run (the SCSI midlayer's host lock: the SCSI
    stack "hits a hockey stick" with CPU to spare, seed 004).
    """

    cores: int
    stack: str
    cpu_us_per_io: float
    submit_fraction: float
    cpu_us_per_kib: float = 0.0
    serial_us_per_io: float = 0.0
    off_path_fraction: float = 0.0
    """Share of the path length that runs beside the I/O, not in its way (``HostSpec.off_path_fraction``)."""

    def on_path(self, submit: bool) -> tuple[float, float]:
        """(us per I/O, us per KiB) of CPU the I/O waits for before it is issued (``submit``) or after it completes."""
        share = (1.0 - self.off_path_fraction) * (self.submit_fraction if submit else 1.0 - self.submit_fraction)
        return self.cpu_us_per_io * share, self.cpu_us_per_kib * share

    def off_path(self) -> tuple[float, float]:
        """(us per I/O, us per KiB) of CPU that runs beside the I/O after it completes."""
        return self.cpu_us_per_io * self.off_path_fraction, self.cpu_us_per_kib * self.off_path_fraction

    def charges(self) -> HostCharges | None:
        """What a device I/O charges the host CPU, as both solvers read it (None: the CPU costs nothing)."""
        if not self.costs_cpu:
            return None
        return HostCharges(self.cores, Charge.of(*self.on_path(submit=True)), Charge.of(*self.on_path(submit=False)),
                           Charge.of(*self.off_path()), self.serial_us_per_io)

    @property
    def costs_cpu(self) -> bool:
        """Whether the host CPU is a station at all (a stack with a path length per I/O or per KiB)."""
        return self.cpu_us_per_io > 0 or self.cpu_us_per_kib > 0


@dataclass(frozen=True)
class Charge:
    """CPU time of one device I/O: ``us`` plus ``us_per_byte`` times the bytes it moves."""

    us: float
    us_per_byte: float

    @staticmethod
    def of(us: float, us_per_kib: float) -> Charge | None:
        """The charge of ``us`` per I/O and ``us_per_kib`` per KiB (None when both are nothing)."""
        if us <= 0 and us_per_kib <= 0:
            return None
        return Charge(us, us_per_kib / 1024.0)


@dataclass(frozen=True)
class HostCharges:
    """The host CPU element: ``cores`` cores; a device I/O's ``submit`` charge (then the stack's serial
    section of ``serial_us``, one I/O at a time, when positive) before it is issued, its ``complete``
    charge after it completes, and the ``beside`` charge that runs on another core after it completes,
    overlapping the next I/O (off-path work). Both solvers implement this element: the DES as
    ``sim.des.model.Builder.cpu``, the fast path as ``sim.analytic.paths.Cpu``."""

    cores: int
    submit: Charge | None
    complete: Charge | None
    beside: Charge | None
    serial_us: float

    @property
    def submits(self) -> bool:
        """Whether a device I/O's submit takes the CPU or the serial section at all."""
        return self.submit is not None or self.serial_us > 0

    @property
    def completes(self) -> bool:
        """Whether a device I/O's completion takes the CPU at all (on its path or beside it)."""
        return self.complete is not None or self.beside is not None


def resolve_host(config: HostConfig, default_stack: str) -> ResolvedHost:
    """Cores and path length of the host: scenario overrides > catalog host > parameters.yaml defaults."""
    stack = config.stack or default_stack
    spec: HostSpec | None = lookup("hosts", config.model) if config.model else None
    cores = config.cores or (spec.cores if spec else (1 if stack == "none" else int(parameter("host_defaults.cores"))))
    if config.cpu_us_per_io is not None:
        cpu = config.cpu_us_per_io
    elif spec is not None and stack in spec.cpu_us_per_io:
        cpu = spec.cpu_us_per_io[stack]  # type: ignore[index]
    else:
        cpu = float(parameter(f"host_defaults.cpu_us_per_io.{stack}"))
    if config.submit_fraction is not None:
        frac = config.submit_fraction
    elif spec is not None:
        frac = spec.submit_fraction
    else:
        frac = float(parameter("host_defaults.submit_fraction"))
    per_kib = float(parameter(f"host_defaults.cpu_us_per_kib.{stack}", 0.0))
    if spec is not None and stack in spec.serial_us_per_io:
        serial = spec.serial_us_per_io[stack]  # type: ignore[index]
    else:
        serial = float(parameter(f"host_defaults.serial_us_per_io.{stack}", 0.0))
    return ResolvedHost(cores=cores, stack=stack, cpu_us_per_io=cpu, submit_fraction=frac,
                        cpu_us_per_kib=per_kib, serial_us_per_io=serial,
                        off_path_fraction=(config.off_path_fraction if config.off_path_fraction is not None
                                           else spec.off_path_fraction if spec is not None else 0.0))
