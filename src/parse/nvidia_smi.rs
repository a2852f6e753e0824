//! Parse `nvidia-smi -q -x` XML → [`Inventory`]. Pure: the caller reads the file.
//!
//! nvidia-smi prints memory in MiB, so bytes are MiB × 2^20 (exact to a MiB, not to a byte:
//! NVML itself gives bytes). Values nvidia-smi cannot give read `N/A`; they become `None`
//! with the reason, never zero. Reference: `tests/fixtures/h200-torch2.11/nvidia-smi-q.xml`
//! (driver 580.159.04, DTD `nvsmi_device_v13.dtd`).

use roxmltree::{Document, Node, ParsingOptions};

use crate::model::gpu::{GpuUuid, NvmlIndex};
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
    /// Elements nested deeper than nvidia-smi ever writes (checked before parsing, so a
    /// hostile file cannot exhaust the stack).
    #[error("elements nest more than {MAX_DEPTH} deep at line {line} (nvidia-smi writes about 5)")]
    TooDeep {
        /// 1-based line where the limit was passed.
        line: usize,
    },
    /// A DOCTYPE with an internal subset: entity declarations, which nvidia-smi never writes
    /// and which can expand a small file into a huge one.
    #[error(
        "the DOCTYPE at line {line} declares entities or other markup; nvidia-smi writes none"
    )]
    InternalDtd {
        /// 1-based line of the DOCTYPE.
        line: usize,
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

/// Deepest element nesting accepted: nvidia-smi nests about 5 levels.
pub const MAX_DEPTH: usize = 256;
/// Most XML nodes accepted: a real 8-GPU host with many processes has a few thousand.
const MAX_NODES: u32 = 16 << 20;

/// Parses the text of `nvidia-smi -q -x`.
pub fn parse(text: &str) -> Result<Inventory, NvidiaSmiError> {
    // See: #14. A file nested 100,000 deep overflowed the stack; one with entity
    // declarations expanded 53 KB into 50 MB.
    check_structure(text)?;
    // nvidia-smi writes `<!DOCTYPE nvidia_smi_log SYSTEM "nvsmi_device_v13.dtd">`; roxmltree
    // never fetches an external DTD, and `check_structure` refused any internal subset.
    let options = ParsingOptions {
        allow_dtd: true,
        nodes_limit: MAX_NODES,
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

/// 1-based line of a byte offset, counted on demand only: counting for every GPU made
/// parsing quadratic in the GPU count (100k GPUs took over 120 s, issue 14).
fn line_at(text: &str, offset: usize) -> usize {
    let end = offset.min(text.len());
    memchr::memchr_iter(b'\n', &text.as_bytes()[..end]).count() + 1
}

/// A cheap scan before parsing: refuses nesting deeper than [`MAX_DEPTH`] and a DOCTYPE with
/// an internal subset. Comments, CDATA and processing instructions are skipped; a `>` inside
/// an attribute value can only make the depth look larger, never smaller.
fn check_structure(text: &str) -> Result<(), NvidiaSmiError> {
    let bytes = text.as_bytes();
    let mut depth: usize = 0;
    let mut at = 0;
    while let Some(found) = memchr::memchr(b'<', &bytes[at..]) {
        let start = at + found;
        let rest = &bytes[start..];
        let skip_to = |terminator: &[u8]| -> usize {
            memchr::memmem::find(&rest[1..], terminator)
                .map_or(bytes.len(), |end| start + 1 + end + terminator.len())
        };
        if rest.starts_with(b"<!--") {
            at = skip_to(b"-->");
        } else if rest.starts_with(b"<![CDATA[") {
            at = skip_to(b"]]>");
        } else if rest.starts_with(b"<?") {
            at = skip_to(b"?>");
        } else if rest.starts_with(b"<!") {
            let end = skip_to(b">");
            if bytes[start..end].contains(&b'[') {
                return Err(NvidiaSmiError::InternalDtd {
                    line: line_at(text, start),
                });
            }
            at = end;
        } else if rest.starts_with(b"</") {
            depth = depth.saturating_sub(1);
            at = start + 2;
        } else {
            let end = skip_to(b">");
            if !bytes[..end].ends_with(b"/>") {
                depth += 1;
                if depth > MAX_DEPTH {
                    return Err(NvidiaSmiError::TooDeep {
                        line: line_at(text, start),
                    });
                }
            }
            at = end;
        }
        if at >= bytes.len() {
            break;
        }
    }
    Ok(())
}

fn parse_gpu(
    document: &Document<'_>,
    gpu: Node<'_, '_>,
    position: usize,
    limitations: &mut Vec<String>,
) -> Result<Device, NvidiaSmiError> {
    let missing = |field: &'static str| NvidiaSmiError::MissingField {
        position,
        line: u32::try_from(line_at(document.input_text(), gpu.range().start)).unwrap_or(u32::MAX),
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
        index: NvmlIndex(u32::try_from(position).unwrap_or(u32::MAX)),
        uuid: GpuUuid(uuid),
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
        assert_eq!(device.index, NvmlIndex(0));
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

    /// `count` GPUs copied from the H200 fixture, each with a distinct UUID.
    fn many_gpus(count: usize) -> String {
        let start = H200.find("<gpu ").unwrap();
        let end = H200.rfind("</gpu>").unwrap() + "</gpu>".len();
        let gpu = &H200[start..end];
        let mut text = String::with_capacity(H200.len() + count * gpu.len());
        text.push_str(&H200[..start]);
        for index in 0..count {
            text.push_str(&gpu.replace(
                "GPU-e7247aa6-6306-7c70-9f9d-7e26a3a729ec",
                &format!("GPU-{index:08}"),
            ));
        }
        text.push_str(&H200[end..]);
        text
    }

    #[test]
    fn issue_14_deep_nesting_is_refused_before_parsing() {
        // See: #14. 100,000 nested elements overflowed the stack (abort).
        let depth = 100_000;
        let text = format!(
            "<nvidia_smi_log>{}{}</nvidia_smi_log>",
            "<a>".repeat(depth),
            "</a>".repeat(depth)
        );
        let error = parse(&text).unwrap_err();
        assert!(
            matches!(error, NvidiaSmiError::TooDeep { line: 1 }),
            "{error}"
        );
        // Comments, CDATA and self-closed elements do not count as nesting.
        let flat = format!(
            "<nvidia_smi_log>{}{}<![CDATA[<a><a>]]></nvidia_smi_log>",
            "<!-- <a> -->".repeat(1000),
            "<b x=\"1\"/>".repeat(1000)
        );
        assert!(parse(&flat).is_ok());
        let nested = format!(
            "<nvidia_smi_log>{}{}</nvidia_smi_log>",
            "<a>".repeat(MAX_DEPTH - 1),
            "</a>".repeat(MAX_DEPTH - 1)
        );
        assert!(parse(&nested).is_ok());
    }

    #[test]
    fn issue_14_entity_declarations_are_refused() {
        // See: #14. 53 KB of nested entities gave 50 MB of output in 31 s.
        let mut text = String::from("<?xml version=\"1.0\"?>\n<!DOCTYPE nvidia_smi_log [\n");
        text.push_str(
            "<!ENTITY a0 \"AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA\">\n",
        );
        for level in 1..10 {
            let previous = format!("&a{};", level - 1);
            text.push_str(&format!("<!ENTITY a{level} \"{}\">\n", previous.repeat(16)));
        }
        text.push_str("]>\n");
        text.push_str(&H200[H200.find("<nvidia_smi_log>").unwrap()..].replace(
            "<product_name>NVIDIA H200</product_name>",
            "<product_name>&a9;</product_name>",
        ));
        let error = parse(&text).unwrap_err();
        assert!(
            matches!(error, NvidiaSmiError::InternalDtd { line: 2 }),
            "{error}"
        );
        // nvidia-smi's own DOCTYPE (external, no subset) still parses.
        assert!(H200.contains("<!DOCTYPE"));
        assert!(parse(H200).is_ok());
    }

    #[test]
    fn issue_14_many_gpus_parse_in_linear_time() {
        // See: #14. 100k GPUs took over 120 s: the line of every GPU was counted from the
        // start of the text. 2,000 GPUs (about 50 MB) would scan ~50 GB that way.
        let text = many_gpus(2_000);
        let started = std::time::Instant::now();
        let inventory = parse(&text).unwrap();
        assert_eq!(inventory.devices.len(), 2_000);
        assert!(
            started.elapsed() < std::time::Duration::from_secs(10),
            "{:?}",
            started.elapsed()
        );
        // The line is still named when a field is missing.
        let broken = many_gpus(3).replacen("<uuid>GPU-00000002</uuid>", "", 1);
        let error = parse(&broken).unwrap_err().to_string();
        assert!(error.starts_with("GPU #2 (line "), "{error}");
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
