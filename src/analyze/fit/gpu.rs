//! The budget from the GPUs an inventory lists: the smallest CUDA total among the devices the
//! engine would use, with notes about memory other processes already hold.

use super::{llama_cpp_fit_margin, GpuBudget};
use crate::model::machine::{Device, Inventory};
use crate::model::{Bytes, Source};

/// Which engine's budget applies, with what it needs from the detected GPUs.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Engine {
    /// vLLM over `gpus` GPUs (tensor × pipeline parallel) that may use `utilization` of their
    /// memory.
    Vllm {
        /// Tensor × pipeline parallel size.
        gpus: u64,
        /// `--gpu-memory-utilization`.
        utilization: f64,
    },
    /// llama.cpp on one GPU.
    LlamaCpp,
}

/// The budget from the detected GPUs: the smallest CUDA total among the first
/// tensor × pipeline parallel CUDA-visible devices (one for llama.cpp). A GPU that cannot be
/// read (`Err` with the reason) is a limitation, not an error: the checkpoint report is still
/// worth having.
pub fn detected_budget(
    inventory: Result<&Inventory, &str>,
    engine: Engine,
    notes: &mut Vec<String>,
) -> Option<GpuBudget> {
    let inventory = match inventory {
        Ok(inventory) => inventory,
        Err(error) => {
            notes.push(format!(
                "no GPU detected ({error}): give `--gpu NAME` or `--gpu-memory SIZE` for a verdict"
            ));
            return None;
        }
    };
    let mut devices: Vec<&Device> = inventory
        .devices
        .iter()
        .filter(|device| inventory.cuda.is_none() || device.cuda_ordinal.is_some())
        .collect();
    devices.sort_by_key(|device| (device.cuda_ordinal, device.index));
    let gpus = match engine {
        Engine::Vllm { gpus, .. } => gpus,
        Engine::LlamaCpp => 1,
    };
    let tensor_parallel = usize::try_from(gpus).unwrap_or(usize::MAX);
    let used: Vec<&Device> = devices.into_iter().take(tensor_parallel).collect();
    let Some(smallest) = used.iter().min_by_key(|device| cuda_total(device)) else {
        notes.push(
            "no CUDA-visible GPU detected: give `--gpu NAME` or `--gpu-memory SIZE` for a verdict"
                .to_string(),
        );
        return None;
    };
    if used.len() < tensor_parallel {
        notes.push(format!(
            "{gpus} GPUs asked (tensor × pipeline parallel) but only {} CUDA-visible {} detected",
            used.len(),
            if used.len() == 1 { "GPU" } else { "GPUs" }
        ));
    }
    let total = cuda_total(smallest);
    for device in &used {
        let (headroom, why) = match engine {
            Engine::Vllm { utilization, .. } => (
                (total.get() as f64 * (1.0 - utilization)) as u64,
                "vLLM refuses to start when free memory is below `--gpu-memory-utilization` × total",
            ),
            Engine::LlamaCpp => (
                llama_cpp_fit_margin(),
                "llama.cpp sizes its automatic fit from free memory, so the verdict below, made \
                 from the total, is optimistic by that much",
            ),
        };
        if device.memory.used_bytes.get() > headroom {
            notes.push(format!(
                "{} (`{}`) already has {} in use: {why}",
                gpu_name(device),
                device.uuid,
                device.memory.used_bytes
            ));
        }
    }
    let source = inventory.source.unwrap_or(Source::Nvml);
    let reserved = smallest
        .memory
        .reserved_bytes
        .map(|reserved| format!(" − driver-reserved {reserved}"))
        .unwrap_or_default();
    Some(GpuBudget {
        name: Some(smallest.name.clone()),
        total,
        source,
        basis: format!(
            "{}: {} total {}{reserved}",
            source.label(),
            cuda_gpu_name(smallest),
            smallest.memory.total_bytes
        ),
    })
}

/// What CUDA reports as a device's total: NVML total minus driver-reserved when known.
fn cuda_total(device: &Device) -> Bytes {
    device
        .memory
        .cuda_total_bytes()
        .unwrap_or(device.memory.total_bytes)
}

/// "GPU N" by CUDA ordinal; an inventory without CUDA numbering names the NVML index as such.
fn gpu_name(device: &Device) -> String {
    match device.cuda_ordinal {
        Some(ordinal) => format!("GPU {ordinal}"),
        None => format!("NVML GPU {}", device.index),
    }
}

/// "CUDA GPU N", or "NVML GPU N" without CUDA numbering.
fn cuda_gpu_name(device: &Device) -> String {
    match device.cuda_ordinal {
        Some(ordinal) => format!("CUDA GPU {ordinal}"),
        None => format!("NVML GPU {}", device.index),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::gpu::{CudaOrdinal, NvmlIndex};
    use crate::model::machine::{CudaNumbering, DeviceMemory, DeviceOrder};

    const GIB: u64 = 1 << 30;

    fn device(index: u32, ordinal: Option<u32>, name: &str, total_gib: u64) -> Device {
        Device {
            index: NvmlIndex(index),
            uuid: format!("GPU-{index}{index}{index}{index}").into(),
            name: name.to_string(),
            cuda_ordinal: ordinal.map(CudaOrdinal),
            memory: DeviceMemory {
                total_bytes: Bytes(total_gib * GIB),
                reserved_bytes: None,
                used_bytes: Bytes(0),
                free_bytes: Bytes(total_gib * GIB),
            },
            ..Device::default()
        }
    }

    /// NVML index 0 is CUDA's device 1 and the other way round (`CUDA_VISIBLE_DEVICES=1,0`).
    fn swapped(numbered: bool) -> Inventory {
        Inventory {
            source: Some(Source::Nvml),
            devices: vec![
                device(0, numbered.then_some(1), "NVIDIA H100 80GB HBM3", 80),
                device(1, numbered.then_some(0), "NVIDIA L4", 23),
            ],
            cuda: numbered.then(|| CudaNumbering {
                visible_devices: None,
                device_order: DeviceOrder::PciBusId,
                visible_count: 2,
                ordinals_certain: true,
                warnings: Vec::new(),
            }),
            ..Inventory::default()
        }
    }

    #[test]
    fn one_gpu_is_cuda_device_0_not_nvml_index_0() {
        let mut notes = Vec::new();
        let budget = detected_budget(Ok(&swapped(true)), Engine::LlamaCpp, &mut notes).unwrap();
        assert_eq!(budget.name.as_deref(), Some("NVIDIA L4"));
        assert_eq!(budget.total, Bytes(23 * GIB));
        assert_eq!(budget.basis, "NVML: CUDA GPU 0 total 23.00 GiB");
        assert!(notes.is_empty(), "{notes:?}");
    }

    #[test]
    fn without_cuda_numbering_the_nvml_index_is_named_as_such() {
        let mut notes = Vec::new();
        let engine = Engine::Vllm {
            gpus: 1,
            utilization: 0.9,
        };
        let budget = detected_budget(Ok(&swapped(false)), engine, &mut notes).unwrap();
        assert_eq!(budget.name.as_deref(), Some("NVIDIA H100 80GB HBM3"));
        assert_eq!(budget.basis, "NVML: NVML GPU 0 total 80.00 GiB");
    }

    #[test]
    fn an_unreadable_gpu_is_a_note_and_no_budget() {
        let mut notes = Vec::new();
        assert_eq!(
            detected_budget(Err("NVML is absent"), Engine::LlamaCpp, &mut notes),
            None
        );
        assert_eq!(
            notes,
            [
                "no GPU detected (NVML is absent): give `--gpu NAME` or `--gpu-memory SIZE` for a \
              verdict"
            ]
        );
    }

    #[test]
    fn fewer_gpus_than_asked_and_memory_in_use_are_noted() {
        let mut inventory = swapped(true);
        inventory.devices[0].memory.used_bytes = Bytes(40 * GIB);
        let mut notes = Vec::new();
        let engine = Engine::Vllm {
            gpus: 4,
            utilization: 0.9,
        };
        let budget = detected_budget(Ok(&inventory), engine, &mut notes).unwrap();
        assert_eq!(budget.name.as_deref(), Some("NVIDIA L4"));
        assert_eq!(notes.len(), 2, "{notes:?}");
        assert!(notes[0].starts_with("4 GPUs asked"), "{notes:?}");
        assert!(
            notes[1].starts_with("GPU 1 (`GPU-0000`) already has 40.00 GiB in use"),
            "{notes:?}"
        );
    }
}
