//! Parse `CUDA_VISIBLE_DEVICES`, `CUDA_DEVICE_ORDER`, `NVIDIA_VISIBLE_DEVICES` and container
//! evidence. Pure: `source/` reads the environment and the files, this module only
//! interprets the text it is given.
//!
//! `CUDA_VISIBLE_DEVICES` follows the rules CUDA applies, as PyTorch mirrors them in
//! `torch/cuda/__init__.py` (`_parse_visible_devices`, `_transform_uuid_to_ordinals`,
//! `_device_count_nvml`, PyTorch 2.x): the first entry decides the kind (`GPU-…` UUIDs,
//! `MIG-…` UUIDs, or integers read like `strtoul`, so `1gpu2` is `1`); a negative or
//! non-numeric entry ends the list; a repeated entry hides every GPU; an empty value hides
//! every GPU; unset shows all.

use crate::model::machine::{
    Container, ContainerKind, DeviceOrder, NvidiaVisibleDevices, VisibleDevices, VisibleEntry,
    VisibleStop,
};

/// Parses `CUDA_VISIBLE_DEVICES`; `None` (unset) means every device is visible.
pub fn parse_cuda_visible_devices(value: Option<&str>) -> Option<VisibleDevices> {
    let raw = value?;
    let mut parsed = VisibleDevices {
        raw: raw.to_string(),
        entries: Vec::new(),
        ignored: Vec::new(),
        stopped: None,
    };
    if raw.is_empty() {
        parsed.stopped = Some(VisibleStop::Empty);
        return Some(parsed);
    }
    let elements: Vec<&str> = raw.split(',').collect();
    let prefix = if raw.starts_with("GPU-") {
        Some("GPU-")
    } else if raw.starts_with("MIG-") {
        Some("MIG-")
    } else {
        None
    };
    for (position, element) in elements.iter().enumerate() {
        let entry = match prefix {
            Some(prefix) if element.starts_with(prefix) => {
                if prefix == "GPU-" {
                    Some(VisibleEntry::GpuUuid((*element).to_string()))
                } else {
                    Some(VisibleEntry::MigUuid((*element).to_string()))
                }
            }
            Some(_) => None,
            None => strtoul(element.trim()).map(VisibleEntry::Index),
        };
        let Some(entry) = entry else {
            parsed.ignored = elements[position..].iter().map(|e| e.to_string()).collect();
            parsed.stopped = Some(VisibleStop::InvalidEntry {
                entry: (*element).to_string(),
            });
            break;
        };
        if parsed.entries.contains(&entry) {
            parsed.ignored = parsed.entries.iter().map(ToString::to_string).collect();
            parsed
                .ignored
                .extend(elements[position..].iter().map(|e| e.to_string()));
            parsed.entries.clear();
            parsed.stopped = Some(VisibleStop::Duplicate {
                entry: (*element).to_string(),
            });
            break;
        }
        parsed.entries.push(entry);
    }
    Some(parsed)
}

/// The leading integer of `text` the way C's `strtoul` reads it (`1gpu2` → 1); `None` for a
/// negative number or no digits (PyTorch `_strtoul` returns -1 for both).
fn strtoul(text: &str) -> Option<u32> {
    let unsigned = text.strip_prefix('+').unwrap_or(text);
    let digits: &str = {
        let end = unsigned
            .find(|c: char| !c.is_ascii_digit())
            .unwrap_or(unsigned.len());
        &unsigned[..end]
    };
    if digits.is_empty() {
        return None;
    }
    // A number too large for u32 cannot name a device; treat it as one past any device.
    Some(digits.parse::<u32>().unwrap_or(u32::MAX))
}

/// Parses `CUDA_DEVICE_ORDER`: unset or any value other than `PCI_BUS_ID` is the default
/// `FASTEST_FIRST` (the CUDA runtime ignores unknown values).
pub fn parse_device_order(value: Option<&str>) -> DeviceOrder {
    match value.map(str::trim) {
        Some("PCI_BUS_ID") => DeviceOrder::PciBusId,
        _ => DeviceOrder::FastestFirst,
    }
}

/// Parses `NVIDIA_VISIBLE_DEVICES`; `None` when unset.
pub fn parse_nvidia_visible_devices(value: Option<&str>) -> Option<NvidiaVisibleDevices> {
    let value = value?.trim();
    Some(match value {
        "all" => NvidiaVisibleDevices::All,
        "none" => NvidiaVisibleDevices::None,
        "void" | "" => NvidiaVisibleDevices::Void,
        list => NvidiaVisibleDevices::List(
            list.split(',')
                .map(|entry| entry.trim().to_string())
                .filter(|entry| !entry.is_empty())
                .collect(),
        ),
    })
}

/// What `source/` found on disk that tells whether we run in a container.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ContainerEvidence {
    /// `/.dockerenv` exists.
    pub dockerenv: bool,
    /// `/run/.containerenv` exists.
    pub containerenv: bool,
    /// Text of `/proc/1/cgroup`, when readable.
    pub init_cgroup: Option<String>,
}

/// Decides from the evidence whether we run in a container. The marker files win over
/// cgroup text; cgroup v2 hosts often show only `0::/`, which proves nothing.
pub fn detect_container(evidence: &ContainerEvidence) -> Option<Container> {
    if evidence.dockerenv {
        return Some(Container {
            kind: ContainerKind::Docker,
            evidence: "`/.dockerenv` exists".to_string(),
        });
    }
    if evidence.containerenv {
        return Some(Container {
            kind: ContainerKind::Podman,
            evidence: "`/run/.containerenv` exists".to_string(),
        });
    }
    let cgroup = evidence.init_cgroup.as_deref()?;
    const MARKERS: &[(&str, ContainerKind)] = &[
        ("kubepods", ContainerKind::Kubernetes),
        ("libpod", ContainerKind::Podman),
        ("docker", ContainerKind::Docker),
        ("containerd", ContainerKind::Containerd),
        ("lxc", ContainerKind::Lxc),
    ];
    for line in cgroup.lines() {
        for (marker, kind) in MARKERS {
            if line.contains(marker) {
                return Some(Container {
                    kind: *kind,
                    evidence: format!("`/proc/1/cgroup` has `{}`", line.trim()),
                });
            }
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entries(value: &str) -> Vec<VisibleEntry> {
        parse_cuda_visible_devices(Some(value))
            .map(|parsed| parsed.entries)
            .unwrap_or_default()
    }

    #[test]
    fn unset_means_all_and_empty_means_none() {
        assert_eq!(parse_cuda_visible_devices(None), None);
        let empty = parse_cuda_visible_devices(Some("")).unwrap();
        assert!(empty.entries.is_empty());
        assert_eq!(empty.stopped, Some(VisibleStop::Empty));
    }

    #[test]
    fn indices_keep_their_order() {
        use VisibleEntry::Index;
        assert_eq!(entries("0"), vec![Index(0)]);
        assert_eq!(entries("1,0"), vec![Index(1), Index(0)]);
        assert_eq!(entries(" 2, 3"), vec![Index(2), Index(3)]);
        // strtoul reads the leading digits: `1gpu2,2ampere` is `1,2`.
        assert_eq!(entries("1gpu2,2ampere"), vec![Index(1), Index(2)]);
    }

    #[test]
    fn invalid_entry_stops_parsing() {
        let parsed = parse_cuda_visible_devices(Some("0,2,-1,1")).unwrap();
        assert_eq!(
            parsed.entries,
            vec![VisibleEntry::Index(0), VisibleEntry::Index(2)]
        );
        assert_eq!(parsed.ignored, vec!["-1", "1"]);
        assert_eq!(
            parsed.stopped,
            Some(VisibleStop::InvalidEntry {
                entry: "-1".to_string()
            })
        );
        assert_eq!(entries("gpu0"), vec![]);
        // Mixing kinds: a UUID after an index ends the list.
        assert_eq!(entries("0,GPU-abc"), vec![VisibleEntry::Index(0)]);
        assert_eq!(
            entries("GPU-abc,1"),
            vec![VisibleEntry::GpuUuid("GPU-abc".to_string())]
        );
    }

    #[test]
    fn duplicate_hides_every_gpu() {
        let parsed = parse_cuda_visible_devices(Some("0,1,0")).unwrap();
        assert!(parsed.entries.is_empty());
        assert_eq!(
            parsed.stopped,
            Some(VisibleStop::Duplicate {
                entry: "0".to_string()
            })
        );
        assert!(entries("GPU-a,GPU-a").is_empty());
    }

    #[test]
    fn uuids_and_mig() {
        assert_eq!(
            entries("GPU-e7247aa6,GPU-4823"),
            vec![
                VisibleEntry::GpuUuid("GPU-e7247aa6".to_string()),
                VisibleEntry::GpuUuid("GPU-4823".to_string())
            ]
        );
        assert_eq!(
            entries("MIG-5c89852c-d268-c3f3-1b07-005d5ae1dc3f"),
            vec![VisibleEntry::MigUuid(
                "MIG-5c89852c-d268-c3f3-1b07-005d5ae1dc3f".to_string()
            )]
        );
        assert_eq!(
            entries("MIG-GPU-e7247aa6-6306-7c70-9f9d-7e26a3a729ec/1/0"),
            vec![VisibleEntry::MigUuid(
                "MIG-GPU-e7247aa6-6306-7c70-9f9d-7e26a3a729ec/1/0".to_string()
            )]
        );
    }

    #[test]
    fn device_order() {
        assert_eq!(parse_device_order(None), DeviceOrder::FastestFirst);
        assert_eq!(
            parse_device_order(Some("PCI_BUS_ID")),
            DeviceOrder::PciBusId
        );
        assert_eq!(
            parse_device_order(Some("FASTEST_FIRST")),
            DeviceOrder::FastestFirst
        );
        assert_eq!(parse_device_order(Some("pci")), DeviceOrder::FastestFirst);
    }

    #[test]
    fn nvidia_visible_devices() {
        assert_eq!(parse_nvidia_visible_devices(None), None);
        assert_eq!(
            parse_nvidia_visible_devices(Some("all")),
            Some(NvidiaVisibleDevices::All)
        );
        assert_eq!(
            parse_nvidia_visible_devices(Some("none")),
            Some(NvidiaVisibleDevices::None)
        );
        assert_eq!(
            parse_nvidia_visible_devices(Some("void")),
            Some(NvidiaVisibleDevices::Void)
        );
        assert_eq!(
            parse_nvidia_visible_devices(Some("")),
            Some(NvidiaVisibleDevices::Void)
        );
        assert_eq!(
            parse_nvidia_visible_devices(Some("0,GPU-fef8089b")),
            Some(NvidiaVisibleDevices::List(vec![
                "0".to_string(),
                "GPU-fef8089b".to_string()
            ]))
        );
    }

    #[test]
    fn container_detection() {
        let none = ContainerEvidence::default();
        assert_eq!(detect_container(&none), None);
        let docker = ContainerEvidence {
            dockerenv: true,
            ..ContainerEvidence::default()
        };
        assert_eq!(
            detect_container(&docker).unwrap().kind,
            ContainerKind::Docker
        );
        let podman = ContainerEvidence {
            containerenv: true,
            ..ContainerEvidence::default()
        };
        assert_eq!(
            detect_container(&podman).unwrap().kind,
            ContainerKind::Podman
        );
        let pod = ContainerEvidence {
            init_cgroup: Some(
                "12:memory:/kubepods/besteffort/pod1234/abcd\n0::/kubepods/besteffort\n"
                    .to_string(),
            ),
            ..ContainerEvidence::default()
        };
        let found = detect_container(&pod).unwrap();
        assert_eq!(found.kind, ContainerKind::Kubernetes);
        assert!(found.evidence.contains("kubepods"));
        let host_v2 = ContainerEvidence {
            init_cgroup: Some("0::/init.scope\n".to_string()),
            ..ContainerEvidence::default()
        };
        assert_eq!(detect_container(&host_v2), None);
    }
}
