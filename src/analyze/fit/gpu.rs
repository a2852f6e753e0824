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
    devices.sort_by_key(|device| device.cuda_ordinal.unwrap_or(device.index));
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
                "GPU {} (`{}`) already has {} in use: {why}",
                device.cuda_ordinal.unwrap_or(device.index),
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
            "{}: CUDA GPU {} total {}{reserved}",
            source.label(),
            smallest.cuda_ordinal.unwrap_or(smallest.index),
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
