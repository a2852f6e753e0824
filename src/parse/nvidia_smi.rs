//! Parse `nvidia-smi -q -x` XML → [`Inventory`] (R9). Pure: the caller reads the file.
//!
//! nvidia-smi prints memory in MiB, so bytes are MiB × 2^20 (exact to a MiB, not to a byte:
//! NVML itself gives bytes). Values nvidia-smi cannot give read `N/A`; they become `None`
//! with the reason, never zero. Reference: `tests/fixtures/h200-torch2.11/nvidia-smi-q.xml`
//! (driver 580.159.04, DTD `nvsmi_device_v13.dtd`).

use roxmltree::{Document, Node, ParsingOptions};

use crate::model::machine::Device;
use crate::model::machine::{DeviceMemory, GpuProcess, Inventory, MigInstance};
use crate::model::{Bytes, Source};

/// Why an `nvidia-smi -q -x` document could not be read.
#[derive(Debug, thiserror::Error)]
pub enum NvidiaSmiError {
    /// Not well-formed XML.
    #[error("not well-formed XML at line {line}, column {column}: {message}")]
    Xml {
        /// 1-based line.
        line: u32,
        /// 1-based column.
        column: u32,
        /// The XML parser's message.
        message: String,
    },
    /// Well-formed, but not `nvidia-smi -q -x` output.
    #[error("the root element is `<{found}>`, not `<nvidia_smi_log>`")]
    NotNvidiaSmi {
        /// The root element found.
        found: String,
    },
    /// A GPU lacks a field oomdoc needs.
    #[error("GPU #{position} (line {line}) has no `<{field}>`")]
    MissingField {
        /// 0-based position of the `<gpu>` element.
        position: usize,
        /// Line of the `<gpu>` element.
        line: u32,
        /// The missing element.
        field: &'static str,
    },
    /// A size that is neither `N/A` nor `<number> MiB`.
    #[error("GPU #{position}: `<{field}>` holds `{value}`, not a size like `143771 MiB`")]
    BadSize {
        /// 0-based position of the `<gpu>` element.
        position: usize,
        /// The element.
        field: String,
        /// The text found.
        value: String,
    },
}

/// Parses the text of `nvidia-smi -q -x`.
pub fn parse(text: &str) -> Result<Inventory, NvidiaSmiError> {
    // nvidia-smi writes `<!DOCTYPE nvidia_smi_log SYSTEM "nvsmi_device_v13.dtd">`; roxmltree
    // never fetches an external DTD and bounds entity expansion, so allowing it is safe.
    let options = ParsingOptions {
        allow_dtd: true,
        ..ParsingOptions::default()
    };
    let document = Document::parse_with_options(text, options).map_err(|error| {
        let position = error.pos();
        if matches!(
            error,
            roxmltree::Error::UnexpectedEndOfStream | roxmltree::Error::UnclosedRootNode
        ) {
            // roxmltree places this error at 1:1; the file ends at its last line.
            let (line, column) = if text.is_empty() || text.ends_with('\n') {
                (text.lines().count() + 1, 1)
            } else {
                let last = text.lines().last().map_or(0, |last| last.chars().count());
                (text.lines().count(), last + 1)
            };
            return NvidiaSmiError::Xml {
                line: u32::try_from(line).unwrap_or(u32::MAX),
                column: u32::try_from(column).unwrap_or(u32::MAX),
                message: "the file ends inside an element (truncated?)".to_string(),
            };
        }
        NvidiaSmiError::Xml {
            line: position.row,
            column: position.col,
            message: error.to_string(),
        }
    })?;
    let root = document.root_element();
    if root.tag_name().name() != "nvidia_smi_log" {
        return Err(NvidiaSmiError::NotNvidiaSmi {
            found: root.tag_name().name().to_string(),
        });
    }
    let mut inventory = Inventory {
        source: Some(Source::NvidiaSmi),
        driver_version: child_text(root, "driver_version"),
        cuda_version: child_text(root, "cuda_version"),
        ..Inventory::default()
    };
    for (position, gpu) in root
        .children()
        .filter(|node| node.has_tag_name("gpu"))
        .enumerate()
    {
        let device = parse_gpu(&document, gpu, position, &mut inventory.limitations)?;
        inventory.devices.push(device);
    }
    Ok(inventory)
}

fn parse_gpu(
    document: &Document<'_>,
    gpu: Node<'_, '_>,
    position: usize,
    limitations: &mut Vec<String>,
) -> Result<Device, NvidiaSmiError> {
    let line = document.text_pos_at(gpu.range().start).row;
    let missing = |field: &'static str| NvidiaSmiError::MissingField {
        position,
        line,
        field,
    };
    let uuid = child_text(gpu, "uuid").ok_or_else(|| missing("uuid"))?;
    let pci_bus_id = path_text(gpu, &["pci", "pci_bus_id"])
        .or_else(|| gpu.attribute("id").map(str::to_string))
        .ok_or_else(|| missing("pci_bus_id"))?;
    let name = child_text(gpu, "product_name").ok_or_else(|| missing("product_name"))?;
    let memory_node = child(gpu, "fb_memory_usage").ok_or_else(|| missing("fb_memory_usage"))?;
    let memory = parse_memory(memory_node, position)?.ok_or_else(|| missing("total"))?;
    for field in ["used", "free"] {
        if size(memory_node, field, position)?.is_none() {
            limitations.push(format!(
                "{uuid}: nvidia-smi gives no {field} memory (`{}`): shown as 0",
                child_text(memory_node, field).unwrap_or_else(|| "missing".to_string())
            ));
        }
    }
    if memory.reserved_bytes.is_none() {
        limitations.push(format!(
            "{uuid}: nvidia-smi gives no driver-reserved memory (driver older than R510?)"
        ));
    }
    let mig_mode = path_text(gpu, &["mig_mode", "current_mig"]).map(|mode| mode.to_lowercase());
    let utilization_percent = path_text(gpu, &["utilization", "gpu_util"])
        .and_then(|text| text.trim_end_matches('%').trim().parse().ok());
    let mut mig_instances = Vec::new();
    if let Some(mig_devices) = child(gpu, "mig_devices") {
        for mig in mig_devices
            .children()
            .filter(|node| node.has_tag_name("mig_device"))
        {
            mig_instances.push(parse_mig(mig, position)?);
        }
    }
    let mut processes = Vec::new();
    if let Some(list) = child(gpu, "processes") {
        for info in list
            .children()
            .filter(|node| node.has_tag_name("process_info"))
        {
            if let Some(process) = parse_process(info, position)? {
                processes.push(process);
            }
        }
    }
    Ok(Device {
        // nvidia-smi lists GPUs in its own index order and prints no index in the XML.
        index: u32::try_from(position).unwrap_or(u32::MAX),
        uuid,
        pci_bus_id,
        name,
        cuda_ordinal: None,
        memory,
        processes,
        mig_mode,
        utilization_percent,
        mig_instances,
        compute_capability: None,
        processes_unavailable_reason: None,
        flags: Vec::new(),
    })
}

fn parse_memory(
    node: Node<'_, '_>,
    position: usize,
) -> Result<Option<DeviceMemory>, NvidiaSmiError> {
    let Some(total_bytes) = size(node, "total", position)? else {
        return Ok(None);
    };
    Ok(Some(DeviceMemory {
        total_bytes,
        reserved_bytes: size(node, "reserved", position)?,
        used_bytes: size(node, "used", position)?.unwrap_or_default(),
        free_bytes: size(node, "free", position)?.unwrap_or_default(),
    }))
}

fn parse_mig(mig: Node<'_, '_>, position: usize) -> Result<MigInstance, NvidiaSmiError> {
    let number = |name: &str| child_text(mig, name).and_then(|text| text.parse().ok());
    let memory = match child(mig, "fb_memory_usage") {
        Some(node) => parse_memory(node, position)?,
        None => None,
    };
    Ok(MigInstance {
        index: number("index").unwrap_or_default(),
        uuid: child_text(mig, "uuid").unwrap_or_default(),
        name: None,
        gpu_instance_id: number("gpu_instance_id"),
        compute_instance_id: number("compute_instance_id"),
        memory,
        cuda_ordinal: None,
    })
}

fn parse_process(
    info: Node<'_, '_>,
    position: usize,
) -> Result<Option<GpuProcess>, NvidiaSmiError> {
    let Some(pid) = child_text(info, "pid").and_then(|text| text.parse::<u32>().ok()) else {
        return Ok(None);
    };
    let used_text = child_text(info, "used_memory");
    let used_bytes = size(info, "used_memory", position)?;
    let unavailable_reason = match (&used_bytes, used_text.as_deref()) {
        (Some(_), _) => None,
        (None, Some(text)) => Some(format!("nvidia-smi printed `{text}`")),
        (None, None) => Some("nvidia-smi printed no `used_memory`".to_string()),
    };
    let id = |name: &str| child_text(info, name).and_then(|text| text.parse::<u32>().ok());
    Ok(Some(GpuProcess {
        pid,
        name: child_text(info, "process_name"),
        used_bytes,
        unavailable_reason,
        process_type: child_text(info, "type").map(|kind| process_type(&kind)),
        gpu_instance_id: id("gpu_instance_id"),
        compute_instance_id: id("compute_instance_id"),
        ..GpuProcess::default()
    }))
}

/// nvidia-smi's `C`, `G`, `C+G` (and `M`, `M+C` for MPS) in words.
fn process_type(kind: &str) -> String {
    match kind {
        "C" => "compute".to_string(),
        "G" => "graphics".to_string(),
        "C+G" => "compute+graphics".to_string(),
        "M" => "mps".to_string(),
        "M+C" => "mps+compute".to_string(),
        other => other.to_lowercase(),
    }
}

/// A size child: `None` for a missing element or `N/A`; bytes for `<n> MiB` (or KiB/GiB/B).
fn size(node: Node<'_, '_>, name: &str, position: usize) -> Result<Option<Bytes>, NvidiaSmiError> {
    let Some(text) = child_text(node, name) else {
        return Ok(None);
    };
    if text == "N/A" || text.starts_with("[") {
        // `[N/A]`, `[Insufficient Permissions]`, `[Not Supported]`
        return Ok(None);
    }
    let bad = || NvidiaSmiError::BadSize {
        position,
        field: name.to_string(),
        value: text.clone(),
    };
    let (number, unit) = text.split_once(' ').ok_or_else(bad)?;
    let number: u64 = number.parse().map_err(|_| bad())?;
    let multiplier: u64 = match unit.trim() {
        "MiB" => 1 << 20,
        "KiB" => 1 << 10,
        "GiB" => 1 << 30,
        "B" => 1,
        _ => return Err(bad()),
    };
    Ok(Some(Bytes(number.saturating_mul(multiplier))))
}

fn child<'a, 'input>(node: Node<'a, 'input>, name: &str) -> Option<Node<'a, 'input>> {
    node.children()
        .find(|candidate| candidate.has_tag_name(name))
}

/// Trimmed text of a child element; `None` when absent or empty (`N/A` is kept: callers decide).
fn child_text(node: Node<'_, '_>, name: &str) -> Option<String> {
    child(node, name)
        .and_then(|found| found.text())
        .map(str::trim)
        .filter(|text| !text.is_empty())
        .map(str::to_string)
}

fn path_text(node: Node<'_, '_>, path: &[&str]) -> Option<String> {
    let (last, parents) = path.split_last()?;
    let mut current = node;
    for name in parents {
        current = child(current, name)?;
    }
    child_text(current, last).filter(|text| text != "N/A")
}

#[cfg(test)]
mod tests {
    use super::*;

    const H200: &str = include_str!("../../tests/fixtures/h200-torch2.11/nvidia-smi-q.xml");

    #[test]
    fn unavailable_used_memory_is_a_limitation_not_a_silent_zero() {
        let text = H200.replace("<used>0 MiB</used>", "<used>N/A</used>");
        let inventory = parse(&text).unwrap();
        assert!(
            inventory
                .limitations
                .iter()
                .any(|l| l.ends_with("nvidia-smi gives no used memory (`N/A`): shown as 0")),
            "{:?}",
            inventory.limitations
        );
    }

    #[test]
    fn truncated_xml_names_where_it_ends() {
        let cut = &H200[..H200.find("<fb_memory_usage>").unwrap_or(0)];
        let lines = cut.lines().count();
        let error = parse(cut).unwrap_err().to_string();
        assert!(
            error.starts_with(&format!("not well-formed XML at line {lines}, column ")),
            "{error}"
        );
        assert!(error.ends_with("truncated?)"), "{error}");
        let error = parse("<nvidia_smi_log>\n").unwrap_err().to_string();
        assert!(error.contains("at line 2, column 1"), "{error}");
    }

    #[test]
    fn h200_is_parsed_exactly() {
        let inventory = parse(H200).unwrap();
        assert_eq!(inventory.source, Some(Source::NvidiaSmi));
        assert_eq!(inventory.driver_version.as_deref(), Some("580.159.04"));
        assert_eq!(inventory.cuda_version.as_deref(), Some("13.0"));
        assert_eq!(inventory.devices.len(), 1);
        let device = &inventory.devices[0];
        assert_eq!(device.index, 0);
        assert_eq!(device.uuid, "GPU-e7247aa6-6306-7c70-9f9d-7e26a3a729ec");
        assert_eq!(device.pci_bus_id, "00000000:00:06.0");
        assert_eq!(device.name, "NVIDIA H200");
        assert_eq!(device.mig_mode.as_deref(), Some("disabled"));
        assert_eq!(device.utilization_percent, Some(0));
        assert_eq!(
            device.memory,
            DeviceMemory {
                total_bytes: Bytes(143_771 << 20),
                reserved_bytes: Some(Bytes(616 << 20)),
                used_bytes: Bytes(0),
                free_bytes: Bytes(143_156 << 20),
            }
        );
        assert!(device.processes.is_empty());
        assert!(device.mig_instances.is_empty());
        assert!(inventory.limitations.is_empty());
    }

    #[test]
    fn processes_and_not_available() {
        let xml = r#"<?xml version="1.0" ?>
<nvidia_smi_log><driver_version>535.104.05</driver_version><cuda_version>12.2</cuda_version>
<gpu id="00000000:3B:00.0"><product_name>NVIDIA A100-SXM4-80GB</product_name>
<uuid>GPU-aaaa</uuid><pci><pci_bus_id>00000000:3B:00.0</pci_bus_id></pci>
<fb_memory_usage><total>81920 MiB</total><used>1024 MiB</used><free>80896 MiB</free></fb_memory_usage>
<processes>
<process_info><gpu_instance_id>N/A</gpu_instance_id><compute_instance_id>N/A</compute_instance_id>
<pid>4242</pid><type>C</type><process_name>python3</process_name><used_memory>1000 MiB</used_memory></process_info>
<process_info><pid>17</pid><type>G</type><process_name>/usr/lib/xorg/Xorg</process_name><used_memory>N/A</used_memory></process_info>
</processes></gpu></nvidia_smi_log>"#;
        let inventory = parse(xml).unwrap();
        let device = &inventory.devices[0];
        assert_eq!(device.memory.reserved_bytes, None);
        assert_eq!(inventory.limitations.len(), 1);
        assert_eq!(device.processes.len(), 2);
        assert_eq!(device.processes[0].used_bytes, Some(Bytes(1000 << 20)));
        assert_eq!(device.processes[0].process_type.as_deref(), Some("compute"));
        assert_eq!(device.processes[0].gpu_instance_id, None);
        assert_eq!(device.processes[1].used_bytes, None);
        assert_eq!(
            device.processes[1].unavailable_reason.as_deref(),
            Some("nvidia-smi printed `N/A`")
        );
        assert_eq!(
            device.processes[1].process_type.as_deref(),
            Some("graphics")
        );
    }

    #[test]
    fn errors_say_where() {
        let error = parse("<nvidia_smi_log><gpu>").unwrap_err();
        assert!(
            matches!(error, NvidiaSmiError::Xml { line: 1, .. }),
            "{error}"
        );
        let error = parse("<html/>").unwrap_err();
        assert_eq!(
            error.to_string(),
            "the root element is `<html>`, not `<nvidia_smi_log>`"
        );
        let error =
            parse("<nvidia_smi_log>\n<gpu><product_name>X</product_name></gpu></nvidia_smi_log>")
                .unwrap_err();
        assert_eq!(error.to_string(), "GPU #0 (line 2) has no `<uuid>`");
        let error = parse(
            "<nvidia_smi_log><gpu id=\"0\"><uuid>GPU-1</uuid><product_name>X</product_name>\
             <fb_memory_usage><total>lots</total></fb_memory_usage></gpu></nvidia_smi_log>",
        )
        .unwrap_err();
        assert_eq!(
            error.to_string(),
            "GPU #0: `<total>` holds `lots`, not a size like `143771 MiB`"
        );
    }
}
