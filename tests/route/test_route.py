"""The route description (sim/route/): one per attachment, the parts DESIGN.md section 3 names, the
numbers derived from the catalog once, and both solvers reporting exactly the parts it describes."""

from __future__ import annotations

from pathlib import Path

import pytest

from models.catalog import load_catalog, parameter
from models.hardware import PcieLink
from models.scenario import load_scenario, with_overrides
from models.workload import ProfileWorkload
from sim.analytic import evaluate
from sim.des.engine import simulate
from sim.plan.profile_fast import interval_scenario
from sim.route import steps as st
from sim.route.describe import (
    DirectRoute,
    ExflashRoute,
    GenericRoute,
    SanRoute,
    ZvmRoute,
    describe,
    meter_names,
)
from sim.route.elements import instance_of
from sim.route.host import DEFAULT_STACK
from sim.route.volume import Volume

ROOT = Path(__file__).resolve().parent.parent.parent
EXAMPLES = ROOT / "examples"
SCENARIOS = [*sorted(EXAMPLES.glob("*.yaml")), *sorted((ROOT / "calibration" / "scenarios").glob("*.yaml"))]


def _route(name: str, overrides: dict[str, object] | None = None):  # type: ignore[no-untyped-def]
    return describe(load_scenario(EXAMPLES / name, overrides))


def test_ibmi_mirrored_namespaces_are_disk_arms_behind_shared_jbof_uplinks() -> None:
    """S2 (seed 001): 8 drives x 4 namespaces = 32 disk arms of queue depth 32, each 200 GB; two EJ1Y
    adapters, each a PCIe Gen4 x16 uplink shared by its drives; every drive has its NVMe queues."""
    route = _route("s2_ibmi_8x4_mirrored.yaml")
    assert isinstance(route, DirectRoute)
    assert route.volume.layout == "ibmi_mirror" and route.volume.members == 32
    assert route.volume.member_bytes == 200 * 10**9
    assert len(route.namespaces.names) == 32 and route.namespaces.slots == 32
    assert route.namespaces.names[:3] == ("drive0.ns0", "drive1.ns0", "drive2.ns0")
    assert len(route.devices.names) == 8 and len(route.nvme_queues.names) == 8
    assert route.uplinks.names == ("adapter0.uplink", "adapter1.uplink")
    assert route.uplinks.gbs == PcieLink(generation=4, lanes=16).gbs
    assert route.mirror_pairs
    assert route.host.stack == "ibmi_nvme"


def test_mirror_copies_sit_on_different_drives_and_adapters() -> None:
    """Planar protection (seed 001): the two copies of a mirrored pair (members 2p, 2p+1) never share a
    drive or an adapter, as the description's member maps place them for both solvers."""
    route = _route("s2_ibmi_8x4_mirrored.yaml")
    assert isinstance(route, DirectRoute)
    for p in range(route.volume.members // 2):
        a, b = 2 * p, 2 * p + 1
        assert instance_of(route.devices.of, a) != instance_of(route.devices.of, b)
        assert instance_of(route.uplinks.of, a) != instance_of(route.uplinks.of, b)


def test_san_fcp_limits_each_lun_nvme_fc_shares_queues_per_association() -> None:
    """FCP: one queue of ``lun_queue_depth`` per LUN; NVMe/FC: each association gets its share of the
    NVMe queues (count / associations x depth) and LUN m uses association m mod associations."""
    fcp = _route("s1_linuxone_fcp_ds8950f.yaml")
    assert isinstance(fcp, SanRoute)
    assert fcp.limits.names == ("lun0.queue", "lun1.queue", "lun2.queue", "lun3.queue") and fcp.limits.slots == 32
    assert fcp.host.stack == "scsi_fcp" and fcp.read_hit_ratio == 0.5 and fcp.write_back
    nvme = _route("s5_fs9100_nvmefc.yaml")
    assert isinstance(nvme, SanRoute)
    assert len(nvme.limits.names) == 4 and nvme.limits.slots == 64 // 4 * 128
    assert [instance_of(nvme.limits.of, m) for m in range(6)] == [0, 1, 2, 3, 0, 1]
    # I/Os take the host-port / front-end-port pairs in turn
    assert nvme.host_ports.paths == max(len(nvme.host_ports.names), len(nvme.front_end_ports.names))


def test_san_write_cache_holds_writes_of_the_mean_size() -> None:
    sc = load_scenario(EXAMPLES / "s1_linuxone_fcp_ds8950f.yaml")
    route = describe(sc)
    assert isinstance(route, SanRoute)
    cache_gb = sc.topology.cache.size_gb or load_catalog().section("storage_servers")["DS8950F"].cache_gb  # type: ignore[union-attr]
    assert route.write_cache.slots == int(cache_gb * 1e9 / max(512.0, sc.workload.mean_bytes()))


def test_exflash_driver_threads_serve_one_dimm_with_max_occupancy_else_two() -> None:
    """Seed 002: max-occupancy gives each DIMM its own driver thread; otherwise a thread serves two."""
    own = _route("s3_exflash_4dimms.yaml")
    assert isinstance(own, ExflashRoute)
    assert len(own.threads.names) == 4 and own.threads.slots == 1
    shared = _route("s3_exflash_4dimms.yaml", {"topology.max_occupancy": False})
    assert isinstance(shared, ExflashRoute)
    assert len(shared.threads.names) == 2
    assert [instance_of(shared.threads.of, m) for m in range(4)] == [0, 0, 1, 1]
    assert own.devices.params.shared_dies  # eXFlash: reads and programs share the NAND dies


def test_zvm_bases_aliases_and_channel_program_come_from_the_scenario_and_parameters() -> None:
    route = _route("s4_zvm_edev_aliases.yaml")
    assert isinstance(route, ZvmRoute)
    assert (route.bases, route.aliases) == (1, 11)
    assert route.command_bytes == int(parameter("zvm.command_bytes"))
    assert route.turnaround_us == (float(parameter("zvm.subchannel_turnaround_us.read")),
                                   float(parameter("zvm.subchannel_turnaround_us.write")))
    assert route.host.stack == "zvm_cp"
    # the drive's link is the slower of its own PCIe link and the adapter's slot
    catalog = load_catalog()
    drive = catalog.section("drives")["P4510-4TB"]
    own = PcieLink(generation=drive.pcie_generation, lanes=drive.pcie_lanes).gbs
    assert route.links.gbs == min(own, catalog.section("adapters")["IBM-Adapter-for-NVMe"].uplink.gbs)


def test_generic_route_is_the_station_chain_of_the_file() -> None:
    route = describe(load_scenario(EXAMPLES / "measured" / "vda_virtio_generic.yaml"))
    assert isinstance(route, GenericRoute)
    (vda,) = route.stations
    assert vda.names == ("vda",) and vda.servers == 9
    assert vda.law.mean_us == 96.08 and vda.law.law == "lognormal" and vda.law.scv == pytest.approx(0.91**2)
    assert not route.host.costs_cpu  # stack "none"


def test_flash_parameters_honour_the_datasheet() -> None:
    """Little's law at the knee: read units = read IOPS x QD1 latency; programs give the datasheet write IOPS."""
    sc = load_scenario(EXAMPLES / "s2_ibmi_8x4_mirrored.yaml")
    route = describe(sc)
    assert isinstance(route, DirectRoute)
    spec = load_catalog().section("drives")["ES5F"]
    p = route.devices.params
    assert p.read_units == max(1, round(spec.read_kiops * 1e3 * spec.read_latency_us * 1e-6))
    assert p.program_units / (p.program_time_us * 1e-6) == pytest.approx(spec.write_kiops * 1e3, rel=1e-12)


def test_capacity_follows_the_layout() -> None:
    """Mirrors keep half the members' bytes, RAID-5 all but one member's, JBOD and RAID-0 all."""
    for layout, data in (("raid10", 0.5), ("raid0", 1.0), ("raid5", 31 / 32)):
        route = _route("s2_ibmi_8x4_mirrored.yaml", {"topology.layout": layout})
        v = route.volume
        volume = Volume(v.layout, v.members, v.chunk_bytes, v.member_bytes, lambda m: 0, False)
        assert volume.capacity == pytest.approx(data * v.members * v.member_bytes)


def test_each_attachment_defaults_to_its_host_stack() -> None:
    for name, key in (("s1_linuxone_nvme_raid10.yaml", "direct_nvme"), ("s5_fs9100_scsi.yaml", "san.fcp"),
                      ("s5_fs9100_nvmefc.yaml", "san.nvme_fc"), ("s3_exflash_4dimms.yaml", "exflash"),
                      ("s4_zvm_edev_aliases.yaml", "zvm_edev")):
        route = _route(name, {"topology.host.stack": None})
        assert route.host.stack == DEFAULT_STACK[key], name


def test_describing_again_derives_nothing_anew() -> None:
    """The catalog-derived numbers are derived once per catalog: a second description shares them."""
    sc = load_scenario(EXAMPLES / "s2_ibmi_8x4_mirrored.yaml")
    first, second = describe(sc), describe(sc)
    assert isinstance(first, DirectRoute) and isinstance(second, DirectRoute)
    assert first.devices.params is second.devices.params and first.host is second.host


@pytest.mark.parametrize("path", SCENARIOS, ids=lambda p: p.stem)
def test_both_solvers_report_exactly_the_described_components(path: Path) -> None:
    """Every DES meter and every fast-path utilization is a component of the description, and back."""
    sc = with_overrides(load_scenario(path), {"run.max_ios": 500, "run.warmup_ios": 100})
    described = meter_names(describe(sc))
    assert len(set(described)) == len(described)
    assert set(simulate(sc).utilization) == set(described)
    where = sc.profile_index()
    if where is not None:  # the fast path takes a profile (alone or among workloads) interval by interval
        profile = sc.all_workloads()[where]
        assert isinstance(profile, ProfileWorkload)
        sc = interval_scenario(sc, profile, 0)
    assert set(evaluate(sc).utilization) == set(described)


# -- the hop order (sim/route/steps.py): written once, read by both solvers ------------------------

def _kinds(steps: tuple[st.Step, ...]) -> list[str]:
    """Each step as a short word (Cross with its direction, Device with its op, Pages with its inner steps)."""
    out: list[str] = []
    for s in steps:
        if isinstance(s, st.Cross):
            out.append(f"cross:{s.bank.names[0]}:{'host' if s.toward == st.TO_HOST else 'device'}")
        elif isinstance(s, st.Device):
            out.append(("read" if s.op == st.READ else "write") + {st.WHOLE: "", st.MEDIA: ":media", st.CHANNEL: ":channel"}[s.part])
        elif isinstance(s, st.Pages):
            out.append("pages[" + ",".join(_kinds(s.steps)) + "]")
        elif isinstance(s, (st.Acquire, st.Release)):
            out.append(f"{type(s).__name__.lower()}:{getattr(s.bank, 'names', (getattr(s.bank, 'name', ''),))[0]}")
        else:
            out.append(type(s).__name__.lower())
    return out


def test_direct_nvme_steps_follow_design_section_3() -> None:
    """Submit, the disk arm (namespace) and the NVMe queue, device, drive link then the shared adapter
    uplink towards the host (a write crosses them the other way before the device), release, complete."""
    lay = st.layout(_route("s2_ibmi_8x4_mirrored.yaml"))
    assert _kinds(lay.steps[(st.READ, False)]) == [
        "submit", "acquire:drive0.ns0", "acquire:drive0.nvme_queues", "read", "cross:drive0.link:host",
        "cross:adapter0.uplink:host", "release:drive0.nvme_queues", "release:drive0.ns0", "complete"]
    assert _kinds(lay.steps[(st.WRITE, False)])[3:6] == ["cross:adapter0.uplink:device", "cross:drive0.link:device", "write"]
    mirrored = [s for s in lay.steps[(st.READ, False)] if isinstance(s, st.Acquire) and s.least_of == 2]
    assert [s.bank for s in mirrored] == [lay.load]  # mirror reads: the less-loaded copy
    assert lay.load is not None and lay.load.names[0] == "drive0.ns0"


def test_san_steps_cross_both_ports_and_the_fabric_each_way() -> None:
    """LUN queue, submit, host port, fabric, front-end port, controller, then a cache hit or the back end
    (reads) or the write-back cache destaged behind (writes), and back the same way."""
    lay = st.layout(_route("s1_linuxone_fcp_ds8950f.yaml"))
    hit, miss, write = (_kinds(lay.steps[k]) for k in ((st.READ, True), (st.READ, False), (st.WRITE, False)))
    outward = ["acquire:lun0.queue", "submit", "cross:hba0.port0:device", "wait", "cross:server.port0:device", "serve"]
    back = ["cross:server.port0:host", "wait", "cross:hba0.port0:host", "release:lun0.queue", "complete"]
    assert hit == [*outward, "wait", *back]
    assert miss == [*outward, "serve", "transfer", *back]
    assert write == [*outward, "acquire:server.write_cache", "wait", "releasebehind", *back]
    assert lay.hit_draw is not None and lay.hit_draw.ratio == describe(
        load_scenario(EXAMPLES / "s1_linuxone_fcp_ds8950f.yaml")).read_hit_ratio  # type: ignore[union-attr]
    through = st.layout(_route("s1_linuxone_fcp_ds8950f.yaml", {"topology.cache.write_back": False}))
    assert _kinds(through.steps[(st.WRITE, False)])[6] == "transfer"  # write-through: straight to destage


def test_exflash_driver_thread_runs_submit_and_completion_around_the_memory_channel() -> None:
    lay = st.layout(_route("s3_exflash_4dimms.yaml"))
    read = _kinds(lay.steps[(st.READ, False)])
    assert read[:3] == ["acquire:driver_thread0", "submit", "release:driver_thread0"]
    assert read[3:5] == ["read", "cross:dimm0.memory_channel:host"]
    assert read[5:] == ["acquire:driver_thread0", "complete", "release:driver_thread0"]
    assert _kinds(lay.steps[(st.WRITE, False)])[3:5] == ["cross:dimm0.memory_channel:device", "write"]


def test_zvm_runs_one_device_command_per_page_with_the_subchannel_held() -> None:
    """A read SSCH: one media read (die wait, read unit) per page, then its block of pages leaves back to back
    through the read channel and the drive link; a write SSCH: each page across the link into the write cache."""
    route = _route("s4_zvm_edev_aliases.yaml", {"device_model": "pooled"})
    assert isinstance(route, ZvmRoute)
    lay = st.layout(route)
    read = _kinds(lay.steps[(st.READ, False)])
    assert read[:2] == ["submit", "acquire:edev.subchannels"]
    assert read[2:5] == ["pages[read:media]", "read:channel", "cross:drive0.link:host"]
    assert read[-2:] == ["release:edev.subchannels", "complete"]
    assert _kinds(lay.steps[(st.WRITE, False)])[2] == "pages[cross:drive0.link:device,write]"
    dies = st.layout(_route("s4_zvm_edev_aliases.yaml", {"device_model": "dies"}))
    assert _kinds(dies.steps[(st.READ, False)])[2] == "pages[read,cross:drive0.link:host]"  # a die read stays whole
    pages = [s for s in lay.steps[(st.WRITE, False)] if isinstance(s, st.Pages)]
    assert pages[0].page_bytes == route.command_bytes
    assert ("wait" in read) == (route.turnaround_us[st.READ] > 0)  # CP's turnaround, subchannel held


def test_generic_chain_is_submit_stations_complete_and_has_no_volume_layer() -> None:
    route = _route("mm8.yaml")
    assert isinstance(route, GenericRoute)
    lay = st.layout(route)
    assert _kinds(lay.steps[(st.READ, False)]) == ["submit", *["serve"] * len(route.stations), "complete"]
    assert not lay.uses_volume


@pytest.mark.parametrize("path", SCENARIOS, ids=lambda p: p.stem)
def test_every_element_a_step_uses_is_created_by_both_solvers(path: Path) -> None:
    """Each solver creates the layout's elements in its own order (random streams, tie-breaks), but
    both create every element a step names, and nothing more than the description has."""
    lay = st.layout(describe(load_scenario(path)))
    des = {id(b) for item in lay.des_order for b in (item.banks if isinstance(item, st.PerInstance) else (item,))
           if b is not None}
    net = {id(e) for e in lay.network_order}

    def used(steps: tuple[st.Step, ...]) -> set[int]:
        out: set[int] = set()
        for s in steps:
            if isinstance(s, (st.Acquire, st.Release, st.Cross, st.Device, st.Serve)):
                out.add(id(s.bank))
            elif isinstance(s, st.ReleaseBehind):
                out |= {id(s.bank)} | used(s.steps)
            elif isinstance(s, st.Transfer):
                out.add(id(s.channel))
            elif isinstance(s, st.Wait):
                out.add(id(s.delay))
            elif isinstance(s, st.Pages):
                out |= used(s.steps)
        return out

    needed = set().union(*[used(steps) for steps in lay.steps.values()])
    assert needed <= des
    assert {n for n in needed if n not in {id(d) for d in _delays(lay)}} <= net
    assert net <= des


def _delays(lay: st.RouteLayout) -> list[st.Delay]:
    return [e for e in lay.des_order if isinstance(e, st.Delay)]
