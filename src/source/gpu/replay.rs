//! The replay GPU source (`--gpu-from FILE`, `OOMDOC_GPU_FROM`): GPU facts recorded on
//! another machine, so every analysis runs in CI and offline.
//!
//! Accepts `nvidia-smi -q -x` XML and oomdoc's own JSON: the `oomdoc gpus --json` document,
//! an `oomdoc gpus --record` recording (the same document plus `samples`), or a `run.json`
//! (its `preflight.inventory`). `samples` maps a UUID to memory readings played one per
//! `memory()` call, holding the last; each reading is `{"used_bytes", "free_bytes",
//! "total_bytes"}` or just used bytes as an integer (free is then total − reserved − used).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::Deserialize;

use super::{GpuError, GpuSource};
use crate::model::gpu::GpuUuid;
use crate::model::machine::{Inventory, MemorySample, RecordedSample, Recording};
use crate::model::{Bytes, Source};
use crate::parse::nvidia_smi;
use crate::source::file::read_limited;

/// The largest replay file read (a recording of a long `--watch` stays far below).
const SIZE_LIMIT: u64 = 64 << 20;

/// GPU facts played back from a file.
#[derive(Debug, Clone)]
pub struct ReplayGpu {
    inventory: Inventory,
    samples: BTreeMap<String, Vec<MemorySample>>,
    played: BTreeMap<String, usize>,
}

impl ReplayGpu {
    /// Whether the file holds one moment only (an `nvidia-smi -q -x` file, or a recording
    /// without memory samples): every `memory()` call then returns the same figure, which is
    /// no timeline and no evidence of a plateau.
    pub fn is_static(&self) -> bool {
        self.samples.values().all(Vec::is_empty)
    }

    /// Reads a replay file.
    pub fn open(path: &Path) -> Result<ReplayGpu, GpuError> {
        let error = |message: String| GpuError::Replay {
            path: path.to_path_buf(),
            message,
        };
        let bytes = read_limited(path, SIZE_LIMIT + 1).map_err(|e| {
            let cause = std::error::Error::source(&e)
                .map(|source| format!(": {source}"))
                .unwrap_or_default();
            error(format!("{e}{cause}"))
        })?;
        if bytes.len() as u64 > SIZE_LIMIT {
            return Err(error(format!(
                "the file is larger than {} (not a GPU recording?)",
                Bytes(SIZE_LIMIT)
            )));
        }
        let text = String::from_utf8(bytes).map_err(|e| {
            error(format!(
                "not UTF-8 text (byte {})",
                e.utf8_error().valid_up_to()
            ))
        })?;
        ReplayGpu::from_text(&text).map_err(|message| GpuError::Replay {
            path: PathBuf::from(path),
            message,
        })
    }

    /// Reads replay text (XML or JSON); the error says what is wrong and where.
    pub fn from_text(text: &str) -> Result<ReplayGpu, String> {
        let trimmed = text.trim_start_matches('\u{feff}').trim_start();
        if trimmed.starts_with('<') {
            let inventory = nvidia_smi::parse(trimmed)
                .map_err(|error| format!("as `nvidia-smi -q -x` XML: {error}"))?;
            return Ok(ReplayGpu::new(inventory, BTreeMap::new()));
        }
        if !trimmed.starts_with('{') {
            return Err("neither `nvidia-smi -q -x` XML nor an oomdoc JSON recording".to_string());
        }
        let value: serde_json::Value = serde_json::from_str(trimmed).map_err(|error| {
            format!(
                "not valid JSON at line {}, column {}: {error}",
                error.line(),
                error.column()
            )
        })?;
        let document = if value.get("devices").is_some() {
            // Read the text again so that an error says where (line, column).
            let recording: Recording = serde_json::from_str(trimmed)
                .map_err(|error| format!("not an oomdoc GPU recording: {error}"))?;
            return ReplayGpu::from_recording(recording);
        } else if let Some(inventory) = value.pointer("/preflight/inventory") {
            inventory.clone()
        } else if let Some(inventory) = value.get("inventory") {
            inventory.clone()
        } else {
            return Err(
                "JSON without `devices`: not an `oomdoc gpus --json` document, a recording or a `run.json`".to_string(),
            );
        };
        let recording = Recording::deserialize(&document)
            .map_err(|error| format!("not an oomdoc GPU recording: {error}"))?;
        ReplayGpu::from_recording(recording)
    }

    fn from_recording(recording: Recording) -> Result<ReplayGpu, String> {
        let mut inventory = recording.inventory;
        let mut samples = BTreeMap::new();
        for (uuid, readings) in recording.samples {
            let Some(device) = inventory.devices.iter().find(|device| device.uuid == *uuid) else {
                return Err(format!(
                    "`samples` names `{uuid}`, which is not among `devices`"
                ));
            };
            let memory = device.memory;
            let played = readings
                .into_iter()
                .map(|reading| match reading {
                    RecordedSample::Full(sample) => sample,
                    RecordedSample::Used(used) => MemorySample {
                        used_bytes: Bytes(used),
                        free_bytes: memory
                            .total_bytes
                            .saturating_sub(memory.reserved_bytes.unwrap_or_default())
                            .saturating_sub(Bytes(used)),
                        total_bytes: memory.total_bytes,
                    },
                })
                .collect();
            samples.insert(uuid, played);
        }
        mark_sentinels(&mut inventory);
        // The facts were recorded elsewhere: say so, keep what the recorder said it lacked.
        if inventory.source != Some(Source::NvidiaSmi) {
            inventory.source = Some(Source::Replay);
        }
        inventory.elapsed_us = None;
        Ok(ReplayGpu::new(inventory, samples))
    }

    fn new(inventory: Inventory, samples: BTreeMap<String, Vec<MemorySample>>) -> ReplayGpu {
        ReplayGpu {
            inventory,
            samples,
            played: BTreeMap::new(),
        }
    }
}

/// `NVML_VALUE_NOT_AVAILABLE` (`u64::MAX`) written into a recording as a number: a process's
/// bytes become unavailable with the reason, as the NVML source reports them; a device memory
/// field, which has no "unavailable" form, is named under limitations.
fn mark_sentinels(inventory: &mut Inventory) {
    const SENTINEL: Bytes = Bytes(u64::MAX);
    for device in &mut inventory.devices {
        for process in &mut device.processes {
            if process.used_bytes == Some(SENTINEL) {
                process.used_bytes = None;
                process.unavailable_reason = Some(
                    "the recording holds `NVML_VALUE_NOT_AVAILABLE` (the u64::MAX sentinel) for this process"
                        .to_string(),
                );
            }
        }
        let memory = device.memory;
        for (field, value) in [
            ("total", memory.total_bytes),
            ("used", memory.used_bytes),
            ("free", memory.free_bytes),
            ("reserved", memory.reserved_bytes.unwrap_or_default()),
        ] {
            if value == SENTINEL {
                inventory.limitations.push(format!(
                    "{}: the recording holds `NVML_VALUE_NOT_AVAILABLE` (the u64::MAX sentinel) as {field} memory: not a measurement",
                    device.uuid
                ));
            }
        }
    }
}

impl GpuSource for ReplayGpu {
    fn inventory(&mut self) -> Result<Inventory, GpuError> {
        Ok(self.inventory.clone())
    }

    fn is_static(&self) -> bool {
        ReplayGpu::is_static(self)
    }

    fn memory(&mut self, uuid: &GpuUuid) -> Result<MemorySample, GpuError> {
        let uuid = uuid.as_str();
        if let Some(samples) = self.samples.get(uuid).filter(|samples| !samples.is_empty()) {
            let next = self.played.entry(uuid.to_string()).or_insert(0);
            let position = (*next).min(samples.len() - 1);
            *next = next.saturating_add(1);
            if let Some(sample) = samples.get(position) {
                return Ok(*sample);
            }
        }
        let device = self
            .inventory
            .devices
            .iter()
            .find(|device| device.uuid == *uuid)
            .ok_or_else(|| GpuError::UnknownDevice {
                uuid: uuid.to_string(),
            })?;
        Ok(MemorySample {
            used_bytes: device.memory.used_bytes,
            free_bytes: device.memory.free_bytes,
            total_bytes: device.memory.total_bytes,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const H200: &str = include_str!("../../../tests/fixtures/h200-torch2.11/nvidia-smi-q.xml");
    const UUID: &str = "GPU-e7247aa6-6306-7c70-9f9d-7e26a3a729ec";

    #[test]
    fn xml_replays() {
        let mut replay = ReplayGpu::from_text(H200).unwrap();
        let inventory = replay.inventory().unwrap();
        assert_eq!(inventory.source, Some(Source::NvidiaSmi));
        assert_eq!(inventory.devices[0].uuid, UUID);
        let sample = replay.memory(&GpuUuid::from(UUID)).unwrap();
        assert_eq!(sample.total_bytes, Bytes(143_771 << 20));
        assert!(matches!(
            replay.memory(&GpuUuid::from("GPU-nope")),
            Err(GpuError::UnknownDevice { .. })
        ));
    }

    #[test]
    fn samples_play_in_order_and_hold_the_last() {
        let json = format!(
            r#"{{"schema_version":1,"devices":[{{"index":0,"uuid":"{UUID}","pci_bus_id":"00000000:00:06.0",
            "name":"NVIDIA H200","cuda_ordinal":0,"memory":{{"total_bytes":1000,"reserved_bytes":100,"used_bytes":0,"free_bytes":900}},
            "processes":[],"mig_mode":null,"utilization_percent":null}}],"limitations":[],"source":"nvml",
            "taken_at_ms":null,"driver_version":null,"cuda_version":null,"nvml_version":null,
            "samples":{{"{UUID}":[10,{{"used_bytes":20,"free_bytes":880,"total_bytes":1000}}]}}}}"#
        );
        let mut replay = ReplayGpu::from_text(&json).unwrap();
        let used: Vec<u64> = (0..4)
            .map(|_| replay.memory(&GpuUuid::from(UUID)).unwrap().used_bytes.0)
            .collect();
        assert_eq!(used, vec![10, 20, 20, 20]);
        let mut replay = ReplayGpu::from_text(&json).unwrap();
        assert_eq!(
            replay.memory(&GpuUuid::from(UUID)).unwrap().free_bytes,
            Bytes(890)
        );
        assert_eq!(replay.inventory().unwrap().source, Some(Source::Replay));
    }

    #[test]
    fn the_u64_max_sentinel_is_unavailable_not_16_eib() {
        let json = format!(
            r#"{{"devices":[{{"index":0,"uuid":"{UUID}","pci_bus_id":"00000000:00:06.0",
            "name":"NVIDIA H200","memory":{{"total_bytes":1000,"reserved_bytes":100,"used_bytes":18446744073709551615,"free_bytes":900}},
            "processes":[{{"pid":7,"name":"python3","used_bytes":18446744073709551615}}]}}]}}"#
        );
        let inventory = ReplayGpu::from_text(&json).unwrap().inventory().unwrap();
        let process = &inventory.devices[0].processes[0];
        assert_eq!(process.used_bytes, None);
        assert!(process
            .unavailable_reason
            .as_deref()
            .unwrap()
            .contains("u64::MAX sentinel"));
        assert_eq!(
            inventory.limitations.len(),
            1,
            "{:?}",
            inventory.limitations
        );
        assert!(inventory.limitations[0].contains("as used memory"));
    }

    #[test]
    fn bad_input_says_why() {
        assert!(ReplayGpu::from_text("hello")
            .unwrap_err()
            .contains("neither"));
        assert!(ReplayGpu::from_text("{\"a\":1}")
            .unwrap_err()
            .contains("without `devices`"));
        assert!(ReplayGpu::from_text("{\"devices\":[{}]}")
            .unwrap_err()
            .starts_with("not an oomdoc GPU recording"));
        assert!(ReplayGpu::from_text("{").unwrap_err().contains("line 1"));
        assert!(ReplayGpu::from_text("<x/>")
            .unwrap_err()
            .contains("nvidia_smi_log"));
    }
}
