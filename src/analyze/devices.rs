//! Analyse devices and processes: CUDA numbering, other jobs, display servers, orphaned
//! engine workers. Pure: takes an [`Inventory`] and the environment's values, and
//! fills in `cuda_ordinal`, [`CudaNumbering`] and the flags. Formats nothing.
//!
//! The numbering follows CUDA as PyTorch mirrors it (`torch/cuda/__init__.py`,
//! `_parse_visible_devices`, `_transform_uuid_to_ordinals`, `_device_count_nvml`): UUID
//! prefixes must match exactly one device, the first entry that matches nothing ends the list,
//! and a device named twice hides every device.

use std::collections::BTreeSet;

use crate::model::gpu::CudaOrdinal;
use crate::model::machine::{
    CudaEnvironment, CudaNumbering, CudaWarning, DeviceFlag, DeviceOrder, Inventory, NumberingFrom,
    ProcessFlag, VisibleEntry, VisibleStop,
};
use crate::model::Bytes;
use crate::parse::container_env::{parse_cuda_visible_devices, parse_device_order};

/// Used memory above this with no process listed is flagged: an idle GPU shows 0 MiB used
/// under NVML v2 (`tests/fixtures/h200-torch2.11/nvidia-smi-q.xml`), and a CUDA context
/// alone takes ~500 MiB, so 1 GiB is a real allocation.
const HIDDEN_USE_THRESHOLD: Bytes = Bytes(1 << 30);

/// Listed processes may miss this much before the gap is flagged.
const UNACCOUNTED_THRESHOLD: Bytes = Bytes(2 << 30);

/// Process names of display servers and desktop shells that hold GPU memory.
const DISPLAY_SERVERS: &[&str] = &[
    "Xorg",
    "X",
    "Xwayland",
    "gnome-shell",
    "kwin_x11",
    "kwin_wayland",
    "plasmashell",
    "mutter",
    "gdm",
    "gdm-x-session",
    "sddm",
    "lightdm",
    "weston",
    "sway",
    "cinnamon",
    "compiz",
];

/// Substrings of the title or command line of inference-engine worker processes. vLLM
/// names its processes `VLLM::EngineCore`, `VLLM::Worker_TP0` (older: `VllmWorker-0`,
/// `EngineCore_0`); SGLang uses `sglang::scheduler`.
const ENGINE_WORKERS: &[&str] = &[
    "enginecore",
    "vllmworker",
    "vllm::worker",
    "sglang::scheduler",
    "sglang::detokenizer",
];

/// Parents that mean "re-parented": the original parent is gone.
const INIT_LIKE: &[&str] = &[
    "init",
    "systemd",
    "tini",
    "dumb-init",
    "docker-init",
    "catatonit",
];

/// Fills in the CUDA numbering and every flag. Idempotent: earlier results are replaced.
pub fn analyze(inventory: &mut Inventory, environment: &CudaEnvironment) {
    resolve_cuda_ordinals(inventory, environment);
    flag_devices(inventory);
}

/// The environment that numbers an inventory, and whose it is: the command line's values
/// (`visible_devices`, `device_order`) over the recording's for a replay (another machine's
/// numbering), else over this shell's. A replay that recorded none is numbered as if both
/// variables were unset.
pub fn numbering_environment(
    inventory: &Inventory,
    replayed: bool,
    shell: CudaEnvironment,
    visible_devices: Option<&str>,
    device_order: Option<&str>,
) -> (CudaEnvironment, NumberingFrom) {
    let recorded = inventory.cuda.as_ref().map(|numbering| CudaEnvironment {
        visible_devices: numbering.visible_devices.as_ref().map(|v| v.raw.clone()),
        device_order: Some(
            match numbering.device_order {
                DeviceOrder::FastestFirst => "FASTEST_FIRST",
                DeviceOrder::PciBusId => "PCI_BUS_ID",
            }
            .to_string(),
        ),
    });
    let (mut environment, from) = match (replayed, recorded) {
        (false, _) => (shell, NumberingFrom::ThisShell),
        (true, Some(recorded)) => (recorded, NumberingFrom::Recording),
        (true, None) => (CudaEnvironment::default(), NumberingFrom::NotRecorded),
    };
    if visible_devices.is_none() && device_order.is_none() {
        return (environment, from);
    }
    if let Some(value) = visible_devices {
        environment.visible_devices = Some(value.to_string());
    }
    if let Some(order) = device_order {
        environment.device_order = Some(order.to_string());
    }
    (environment, NumberingFrom::CommandLine)
}

/// Numbers an inventory for `oomdoc gpus` under the environment that applies (see
/// [`numbering_environment`]), flags its devices and records whose numbering it is; a
/// replay's processes get the note why they have no host RSS.
pub fn number_for_listing(
    inventory: &mut Inventory,
    replayed: bool,
    shell: CudaEnvironment,
    visible_devices: Option<&str>,
    device_order: Option<&str>,
) {
    let (environment, from) =
        numbering_environment(inventory, replayed, shell, visible_devices, device_order);
    analyze(inventory, &environment);
    inventory.cuda_numbering_from = Some(from);
    if replayed {
        note_replayed_processes(inventory);
    }
}

/// Says why a replayed process has no host RSS: its PID belongs to the machine that
/// recorded it, so it is never read here.
pub fn note_replayed_processes(inventory: &mut Inventory) {
    for process in inventory
        .devices
        .iter_mut()
        .flat_map(|d| d.processes.iter_mut())
    {
        if process.host_rss_bytes.is_none() && process.host_rss_unavailable_reason.is_none() {
            process.host_rss_unavailable_reason = Some(
                "not measured: a replayed PID belongs to the machine that recorded it".to_string(),
            );
        }
    }
}

/// Gives each device (and MIG instance) its CUDA ordinal and records the numbering.
pub fn resolve_cuda_ordinals(inventory: &mut Inventory, environment: &CudaEnvironment) {
    for device in &mut inventory.devices {
        device.cuda_ordinal = None;
        for instance in &mut device.mig_instances {
            instance.cuda_ordinal = None;
        }
    }
    let device_order = parse_device_order(environment.device_order.as_deref());
    let visible_devices = parse_cuda_visible_devices(environment.visible_devices.as_deref());
    let mut warnings = Vec::new();

    // CUDA's enumeration: PCI bus order for PCI_BUS_ID; FASTEST_FIRST ranks by speed and
    // breaks ties by PCI bus id, so for identical devices it is PCI order too.
    let mut enumeration: Vec<usize> = (0..inventory.devices.len()).collect();
    enumeration.sort_by_key(|&position| pci_key(&inventory.devices[position].pci_bus_id));
    let names: BTreeSet<&str> = inventory.devices.iter().map(|d| d.name.as_str()).collect();
    let ordinals_certain = device_order == DeviceOrder::PciBusId || names.len() <= 1;
    if !ordinals_certain {
        warnings.push(CudaWarning::FastestFirstMayDiffer {
            names: names.iter().map(|name| name.to_string()).collect(),
        });
    }
    let nvml_order: Vec<usize> = {
        let mut order: Vec<usize> = (0..inventory.devices.len()).collect();
        order.sort_by_key(|&position| inventory.devices[position].index);
        order
    };
    if nvml_order != enumeration {
        warnings.push(CudaWarning::NvmlOrderNotPciOrder);
    }

    let visible_count = match &visible_devices {
        None => {
            for (ordinal, &position) in enumeration.iter().enumerate() {
                inventory.devices[position].cuda_ordinal =
                    u32::try_from(ordinal).ok().map(CudaOrdinal);
            }
            u32::try_from(enumeration.len()).unwrap_or(u32::MAX)
        }
        Some(parsed) => {
            match &parsed.stopped {
                Some(VisibleStop::Empty) => warnings.push(CudaWarning::EmptyVisibleDevices),
                Some(VisibleStop::Duplicate { entry }) => {
                    warnings.push(CudaWarning::DuplicateEntry {
                        entry: entry.clone(),
                    });
                }
                Some(VisibleStop::InvalidEntry { .. }) | None => {}
            }
            // (device position, MIG instance position) chosen for each ordinal.
            let mut chosen: Vec<(usize, Option<usize>)> = Vec::new();
            let mut ignored: Vec<String> = Vec::new();
            for (number, entry) in parsed.entries.iter().enumerate() {
                match match_entry(inventory, &enumeration, entry) {
                    Ok(target) => {
                        if chosen.contains(&target) {
                            // Two spellings of one device: CUDA shows none (PyTorch mirrors it).
                            warnings.push(CudaWarning::DuplicateEntry {
                                entry: entry.to_string(),
                            });
                            chosen.clear();
                            break;
                        }
                        chosen.push(target);
                    }
                    Err(reason) => {
                        warnings.push(CudaWarning::UnmatchedEntry {
                            entry: entry.to_string(),
                            reason,
                        });
                        ignored
                            .extend(parsed.entries[number + 1..].iter().map(ToString::to_string));
                        break;
                    }
                }
            }
            ignored.extend(parsed.ignored.iter().cloned());
            if !ignored.is_empty() && !matches!(parsed.stopped, Some(VisibleStop::Duplicate { .. }))
            {
                warnings.push(CudaWarning::IgnoredEntries { entries: ignored });
            }
            for (ordinal, (device, instance)) in chosen.iter().enumerate() {
                let ordinal = u32::try_from(ordinal).ok();
                match instance {
                    Some(instance) => {
                        inventory.devices[*device].mig_instances[*instance].cuda_ordinal =
                            ordinal.map(CudaOrdinal);
                    }
                    None => inventory.devices[*device].cuda_ordinal = ordinal.map(CudaOrdinal),
                }
            }
            u32::try_from(chosen.len()).unwrap_or(u32::MAX)
        }
    };
    inventory.cuda = Some(CudaNumbering {
        visible_devices,
        device_order,
        visible_count,
        ordinals_certain,
        warnings,
    });
}

/// Which device (and MIG instance) an entry names, or why none.
fn match_entry(
    inventory: &Inventory,
    enumeration: &[usize],
    entry: &VisibleEntry,
) -> Result<(usize, Option<usize>), String> {
    match entry {
        VisibleEntry::Index(index) => enumeration
            .get(*index as usize)
            .map(|&position| (position, None))
            .ok_or_else(|| {
                let count = enumeration.len();
                let devices = if count == 1 { "device" } else { "devices" };
                format!("no device has CUDA index {index} ({count} {devices})")
            }),
        VisibleEntry::GpuUuid(prefix) => {
            let matches: Vec<usize> = inventory
                .devices
                .iter()
                .enumerate()
                .filter(|(_, device)| device.uuid.starts_with(prefix.as_str()))
                .map(|(position, _)| position)
                .collect();
            match matches.as_slice() {
                [one] => Ok((*one, None)),
                [] => Err("no device has a UUID starting with it".to_string()),
                many => Err(format!(
                    "ambiguous: the prefix matches {} devices",
                    many.len()
                )),
            }
        }
        VisibleEntry::MigUuid(text) => {
            // Legacy R450/R460 form: MIG-GPU-<gpu uuid>/<gi>/<ci>.
            if let Some(rest) = text.strip_prefix("MIG-GPU-") {
                let mut parts = rest.split('/');
                let parent = format!("GPU-{}", parts.next().unwrap_or_default());
                let gi = parts.next().and_then(|part| part.parse::<u32>().ok());
                let ci = parts.next().and_then(|part| part.parse::<u32>().ok());
                for (position, device) in inventory.devices.iter().enumerate() {
                    if device.uuid != parent {
                        continue;
                    }
                    for (number, instance) in device.mig_instances.iter().enumerate() {
                        if instance.gpu_instance_id == gi && instance.compute_instance_id == ci {
                            return Ok((position, Some(number)));
                        }
                    }
                }
                return Err("no MIG instance has this GPU UUID and instance ids".to_string());
            }
            let mut matches = Vec::new();
            for (position, device) in inventory.devices.iter().enumerate() {
                for (number, instance) in device.mig_instances.iter().enumerate() {
                    if !instance.uuid.is_empty() && instance.uuid.starts_with(text.as_str()) {
                        matches.push((position, Some(number)));
                    }
                }
            }
            match matches.as_slice() {
                [one] => Ok(*one),
                [] => Err("no MIG instance has a UUID starting with it".to_string()),
                many => Err(format!(
                    "ambiguous: the prefix matches {} MIG instances",
                    many.len()
                )),
            }
        }
    }
}

/// Sort key for a PCI bus id `DDDDDDDD:BB:DD.F` (hex); unparsable ids sort last, by text.
fn pci_key(bus_id: &str) -> (u8, [u64; 4], String) {
    let parts: Vec<&str> = bus_id.split([':', '.']).collect();
    let numbers: Vec<u64> = parts
        .iter()
        .filter_map(|part| u64::from_str_radix(part, 16).ok())
        .collect();
    match numbers.as_slice() {
        [domain, bus, device, function] if parts.len() == 4 => {
            (0, [*domain, *bus, *device, *function], String::new())
        }
        _ => (1, [0; 4], bus_id.to_lowercase()),
    }
}

/// Flags devices and processes: other users, display servers, hidden use, orphans.
pub fn flag_devices(inventory: &mut Inventory) {
    let observer = inventory.host.user_id;
    for device in &mut inventory.devices {
        device.flags.clear();
        for process in &mut device.processes {
            process.flags = process_flags(process, observer);
        }
        if device.mig_mode.as_deref() == Some("enabled") {
            device.flags.push(DeviceFlag::MigEnabled);
        }
        let visible = device.cuda_ordinal.is_some()
            || device
                .mig_instances
                .iter()
                .any(|i| i.cuda_ordinal.is_some());
        if !visible && inventory.cuda.is_some() {
            device.flags.push(DeviceFlag::NotVisibleToCuda);
        }
        let used = device.memory.used_bytes;
        if device.processes.is_empty() {
            if device.processes_unavailable_reason.is_none() && used > HIDDEN_USE_THRESHOLD {
                device
                    .flags
                    .push(DeviceFlag::UsedWithoutVisibleProcess { used_bytes: used });
            }
        } else if device.processes.iter().all(|p| p.used_bytes.is_some()) {
            let listed: Bytes = device.processes.iter().filter_map(|p| p.used_bytes).sum();
            let unaccounted = used.saturating_sub(listed);
            if unaccounted > UNACCOUNTED_THRESHOLD {
                device.flags.push(DeviceFlag::UnaccountedUsage {
                    unaccounted_bytes: unaccounted,
                });
            }
        }
    }
}

fn process_flags(
    process: &crate::model::machine::GpuProcess,
    observer: Option<u32>,
) -> Vec<ProcessFlag> {
    let mut flags = Vec::new();
    if process.in_pid_namespace == Some(false) {
        flags.push(ProcessFlag::ForeignPidNamespace);
        // The name, owner and parent of a foreign PID describe another process, if any.
        return flags;
    }
    let name = process.name.as_deref().unwrap_or_default();
    let base = name.rsplit('/').next().unwrap_or(name);
    let base = base.split_whitespace().next().unwrap_or(base);
    if DISPLAY_SERVERS.contains(&base) {
        // A display server runs as root or `gdm` anyway: "another user" adds nothing.
        flags.push(ProcessFlag::DisplayServer);
    } else if let (Some(owner), Some(observer)) = (process.user_id, observer) {
        if owner != observer {
            flags.push(ProcessFlag::OtherUser { user_id: owner });
        }
    }
    let text = format!(
        "{} {}",
        name.to_lowercase(),
        process
            .command
            .as_deref()
            .unwrap_or_default()
            .to_lowercase()
    );
    let is_engine_worker = ENGINE_WORKERS.iter().any(|marker| text.contains(marker));
    if is_engine_worker {
        let parent_is_init = process.parent_pid == Some(1)
            || process
                .parent_name
                .as_deref()
                .is_some_and(|parent| INIT_LIKE.contains(&parent));
        if parent_is_init {
            flags.push(ProcessFlag::LikelyOrphanedEngineWorker {
                parent_pid: process.parent_pid,
            });
        }
    }
    flags
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::gpu::NvmlIndex;
    use crate::model::machine::{Device, DeviceMemory, GpuProcess, MigInstance};

    /// Synthetic devices: `GPU-0000…`, `GPU-1111…`, bus ids 0x18, 0x3B, … in NVML order.
    fn inventory(names: &[&str]) -> Inventory {
        let buses = ["18", "3B", "86", "AF", "C1", "D8", "E1", "F1"];
        Inventory {
            devices: names
                .iter()
                .enumerate()
                .map(|(index, name)| Device {
                    index: NvmlIndex(index as u32),
                    uuid: format!(
                        "GPU-{index}{index}{index}{index}abcd-0000-0000-0000-00000000000{index}"
                    )
                    .into(),
                    pci_bus_id: format!("00000000:{}:00.0", buses[index]),
                    name: name.to_string(),
                    memory: DeviceMemory {
                        total_bytes: Bytes(80 << 30),
                        ..DeviceMemory::default()
                    },
                    ..Device::default()
                })
                .collect(),
            ..Inventory::default()
        }
    }

    #[test]
    fn a_listing_is_numbered_under_whose_environment_applies() {
        let shell = CudaEnvironment {
            visible_devices: Some("1".to_string()),
            device_order: None,
        };
        let mut live = inventory(&["NVIDIA H200", "NVIDIA H200"]);
        live.devices[0].processes.push(GpuProcess::default());
        number_for_listing(&mut live, false, shell.clone(), None, None);
        assert_eq!(live.cuda_numbering_from, Some(NumberingFrom::ThisShell));
        let ordinals: Vec<_> = live.devices.iter().map(|d| d.cuda_ordinal).collect();
        assert_eq!(ordinals, vec![None, Some(CudaOrdinal(0))]);
        // A live PID is left for the host to describe.
        assert_eq!(
            live.devices[0].processes[0].host_rss_unavailable_reason,
            None
        );

        // A replay that recorded no environment ignores this shell's, and its PIDs are not ours.
        let mut replayed = inventory(&["NVIDIA H200", "NVIDIA H200"]);
        replayed.devices[0].processes.push(GpuProcess::default());
        number_for_listing(&mut replayed, true, shell.clone(), None, None);
        assert_eq!(
            replayed.cuda_numbering_from,
            Some(NumberingFrom::NotRecorded)
        );
        let ordinals: Vec<_> = replayed.devices.iter().map(|d| d.cuda_ordinal).collect();
        assert_eq!(ordinals, vec![Some(CudaOrdinal(0)), Some(CudaOrdinal(1))]);
        assert!(replayed.devices[0].processes[0]
            .host_rss_unavailable_reason
            .as_deref()
            .is_some_and(|reason| reason.contains("replayed PID")));

        // The command line wins over both.
        let mut overridden = inventory(&["NVIDIA H200", "NVIDIA H200"]);
        number_for_listing(&mut overridden, true, shell, Some("1,0"), None);
        assert_eq!(
            overridden.cuda_numbering_from,
            Some(NumberingFrom::CommandLine)
        );
        let ordinals: Vec<_> = overridden.devices.iter().map(|d| d.cuda_ordinal).collect();
        assert_eq!(ordinals, vec![Some(CudaOrdinal(1)), Some(CudaOrdinal(0))]);
    }

    fn ordinals(inventory: &Inventory) -> Vec<Option<u32>> {
        inventory
            .devices
            .iter()
            .map(|d| d.cuda_ordinal.map(CudaOrdinal::get))
            .collect()
    }

    fn run(inventory: &mut Inventory, visible: Option<&str>, order: Option<&str>) {
        analyze(
            inventory,
            &CudaEnvironment {
                visible_devices: visible.map(str::to_string),
                device_order: order.map(str::to_string),
            },
        );
    }

    fn warnings(inventory: &Inventory) -> Vec<CudaWarning> {
        inventory.cuda.as_ref().unwrap().warnings.clone()
    }

    #[test]
    fn unset_shows_all_in_pci_order() {
        let mut inv = inventory(&["H200", "H200"]);
        run(&mut inv, None, None);
        assert_eq!(ordinals(&inv), vec![Some(0), Some(1)]);
        assert!(warnings(&inv).is_empty());
        assert_eq!(inv.cuda.as_ref().unwrap().visible_count, 2);
    }

    #[test]
    fn reversed_indices() {
        let mut inv = inventory(&["H200", "H200"]);
        run(&mut inv, Some("1,0"), Some("PCI_BUS_ID"));
        assert_eq!(ordinals(&inv), vec![Some(1), Some(0)]);
    }

    #[test]
    fn uuid_prefix_and_ambiguity() {
        let mut inv = inventory(&["H200", "H200", "H200"]);
        run(&mut inv, Some("GPU-2222,GPU-0000abcd"), None);
        assert_eq!(ordinals(&inv), vec![Some(1), None, Some(0)]);
        assert!(inv.devices[1].flags.contains(&DeviceFlag::NotVisibleToCuda));
        // Every synthetic UUID starts with `GPU-`: ambiguous, so nothing is visible.
        run(&mut inv, Some("GPU-"), None);
        assert_eq!(ordinals(&inv), vec![None, None, None]);
        assert_eq!(
            warnings(&inv),
            vec![CudaWarning::UnmatchedEntry {
                entry: "GPU-".to_string(),
                reason: "ambiguous: the prefix matches 3 devices".to_string()
            }]
        );
    }

    #[test]
    fn unmatched_entry_stops_the_list() {
        let mut inv = inventory(&["H200", "H200"]);
        run(&mut inv, Some("1,5,0"), None);
        assert_eq!(ordinals(&inv), vec![None, Some(0)]);
        assert_eq!(
            warnings(&inv),
            vec![
                CudaWarning::UnmatchedEntry {
                    entry: "5".to_string(),
                    reason: "no device has CUDA index 5 (2 devices)".to_string()
                },
                CudaWarning::IgnoredEntries {
                    entries: vec!["0".to_string()]
                }
            ]
        );
        run(&mut inv, Some("0,-1,1"), None);
        assert_eq!(ordinals(&inv), vec![Some(0), None]);
        assert_eq!(
            warnings(&inv),
            vec![CudaWarning::IgnoredEntries {
                entries: vec!["-1".to_string(), "1".to_string()]
            }]
        );
    }

    #[test]
    fn empty_and_duplicate_hide_everything() {
        let mut inv = inventory(&["H200", "H200"]);
        run(&mut inv, Some(""), None);
        assert_eq!(ordinals(&inv), vec![None, None]);
        assert_eq!(warnings(&inv), vec![CudaWarning::EmptyVisibleDevices]);
        run(&mut inv, Some("0,0"), None);
        assert_eq!(ordinals(&inv), vec![None, None]);
        assert_eq!(
            warnings(&inv),
            vec![CudaWarning::DuplicateEntry {
                entry: "0".to_string()
            }]
        );
        // Two spellings of one device.
        run(&mut inv, Some("GPU-0000,GPU-0000abcd"), None);
        assert_eq!(ordinals(&inv), vec![None, None]);
    }

    #[test]
    fn fastest_first_warns_when_devices_differ() {
        let mut inv = inventory(&["NVIDIA A100-SXM4-80GB", "NVIDIA H100 80GB HBM3"]);
        run(&mut inv, None, None);
        assert!(!inv.cuda.as_ref().unwrap().ordinals_certain);
        assert!(matches!(
            warnings(&inv)[0],
            CudaWarning::FastestFirstMayDiffer { .. }
        ));
        run(&mut inv, None, Some("PCI_BUS_ID"));
        assert!(inv.cuda.as_ref().unwrap().ordinals_certain);
        assert!(warnings(&inv).is_empty());
    }

    #[test]
    fn nvml_order_differs_from_pci_order() {
        let mut inv = inventory(&["H200", "H200"]);
        inv.devices[0].pci_bus_id = "00000000:F0:00.0".to_string();
        run(&mut inv, Some("0"), Some("PCI_BUS_ID"));
        // CUDA index 0 is the lower bus id, i.e. NVML index 1.
        assert_eq!(ordinals(&inv), vec![None, Some(0)]);
        assert_eq!(warnings(&inv), vec![CudaWarning::NvmlOrderNotPciOrder]);
    }

    #[test]
    fn mig_uuids() {
        let mut inv = inventory(&["H200"]);
        inv.devices[0].mig_mode = Some("enabled".to_string());
        inv.devices[0].mig_instances = vec![
            MigInstance {
                index: 0,
                uuid: "MIG-5c89852c-d268-c3f3-1b07-005d5ae1dc3f".to_string(),
                gpu_instance_id: Some(1),
                compute_instance_id: Some(0),
                ..MigInstance::default()
            },
            MigInstance {
                index: 1,
                uuid: "MIG-9d1e2a3b-0000-0000-0000-000000000000".to_string(),
                gpu_instance_id: Some(2),
                compute_instance_id: Some(0),
                ..MigInstance::default()
            },
        ];
        run(
            &mut inv,
            Some("MIG-9d1e,MIG-5c89852c-d268-c3f3-1b07-005d5ae1dc3f"),
            None,
        );
        let instances = &inv.devices[0].mig_instances;
        assert_eq!(instances[0].cuda_ordinal, Some(CudaOrdinal(1)));
        assert_eq!(instances[1].cuda_ordinal, Some(CudaOrdinal(0)));
        assert_eq!(inv.devices[0].cuda_ordinal, None);
        assert_eq!(inv.devices[0].flags, vec![DeviceFlag::MigEnabled]);
        run(
            &mut inv,
            Some("MIG-GPU-0000abcd-0000-0000-0000-000000000000/2/0"),
            None,
        );
        assert_eq!(
            inv.devices[0].mig_instances[1].cuda_ordinal,
            Some(CudaOrdinal(0))
        );
        run(&mut inv, Some("MIG-ffff"), None);
        assert!(matches!(
            warnings(&inv)[0],
            CudaWarning::UnmatchedEntry { .. }
        ));
    }

    fn process(pid: u32, name: &str) -> GpuProcess {
        GpuProcess {
            pid,
            name: Some(name.to_string()),
            used_bytes: Some(Bytes(1 << 30)),
            user_id: Some(1000),
            parent_pid: Some(4000),
            in_pid_namespace: Some(true),
            ..GpuProcess::default()
        }
    }

    #[test]
    fn process_flags() {
        let mut inv = inventory(&["H200"]);
        inv.host.user_id = Some(1000);
        let mut other = process(10, "python3");
        other.user_id = Some(0);
        let mut orphan = process(12, "VLLM::EngineCore");
        orphan.parent_pid = Some(1);
        let mut foreign = process(13, "python3");
        foreign.in_pid_namespace = Some(false);
        inv.devices[0].processes = vec![
            process(9, "python3"),
            other,
            process(11, "/usr/lib/xorg/Xorg"),
            orphan,
            process(14, "VLLM::EngineCore"),
            foreign,
        ];
        run(&mut inv, None, None);
        let flags: Vec<Vec<ProcessFlag>> = inv.devices[0]
            .processes
            .iter()
            .map(|p| p.flags.clone())
            .collect();
        assert_eq!(
            flags,
            vec![
                vec![],
                vec![ProcessFlag::OtherUser { user_id: 0 }],
                vec![ProcessFlag::DisplayServer],
                vec![ProcessFlag::LikelyOrphanedEngineWorker {
                    parent_pid: Some(1)
                }],
                vec![],
                vec![ProcessFlag::ForeignPidNamespace],
            ]
        );
    }

    #[test]
    fn hidden_and_unaccounted_use() {
        let mut inv = inventory(&["H200", "H200", "H200"]);
        inv.devices[0].memory.used_bytes = Bytes(8 << 30);
        inv.devices[1].memory.used_bytes = Bytes(8 << 30);
        inv.devices[1].processes = vec![process(9, "python3")];
        inv.devices[2].memory.used_bytes = Bytes(8 << 30);
        inv.devices[2].processes_unavailable_reason = Some("no permission".to_string());
        run(&mut inv, None, None);
        assert_eq!(
            inv.devices[0].flags,
            vec![DeviceFlag::UsedWithoutVisibleProcess {
                used_bytes: Bytes(8 << 30)
            }]
        );
        assert_eq!(
            inv.devices[1].flags,
            vec![DeviceFlag::UnaccountedUsage {
                unaccounted_bytes: Bytes(7 << 30)
            }]
        );
        assert!(inv.devices[2].flags.is_empty());
    }
}
