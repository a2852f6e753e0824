//! Session 40 (f4): a ggml buffer named after a device with spaces (Vulkan's `NVIDIA GeForce GT
//! 730`), ggml's scheduler re-reserving the graph it computes, Isaac Sim's simulation view.

use crate::analyze::explain::explain_text;
use crate::model::explain::Phase;

fn phase(text: &str) -> Phase {
    explain_text(text).phase.failed_in
}

const VK_FAILURE: &str = "ggml_gallocr_reserve_n: reallocating NVIDIA GeForce GT 730 buffer from \
size 0.00 MiB to 565.06 MiB\nggml_vulkan: Device memory allocation of size 592512000 failed.\n\
ggml_vulkan: vk::Device::allocateMemory: ErrorOutOfDeviceMemory\n\
ggml_gallocr_reserve_n: failed to allocate NVIDIA GeForce GT 730 buffer of size 592512000\n";

#[test]
fn a_gallocr_reservation_of_a_device_named_with_spaces_is_the_compute_buffer_reservation() {
    assert_eq!(phase(VK_FAILURE), Phase::Profiling);
    // Without the reservation's line the Vulkan failure alone shows no stage.
    let alone = "ggml_vulkan: Device memory allocation of size 592512000 failed.\n\
                 ggml_vulkan: vk::Device::allocateMemory: ErrorOutOfDeviceMemory\n";
    assert_eq!(phase(alone), Phase::Unknown);
}

#[test]
fn the_schedulers_rereservation_of_a_graph_being_computed_is_inference() {
    let rereserved = format!(
        "ggml_backend_sched_alloc_splits: failed to allocate graph, reserving \
         (backend_ids_changed = 1)\n{VK_FAILURE}"
    );
    assert_eq!(phase(&rereserved), Phase::Inference);
    // Another failure to allocate a graph (llama.cpp's own context words) is no such line.
    let other = format!("llama_init_from_model: failed to allocate graph\n{VK_FAILURE}");
    assert_eq!(phase(&other), Phase::Profiling);
}

const PHYSX: &str = "PxgCudaDeviceMemoryAllocator fail to allocate memory 71303168 bytes!! \
Result = 2\n";

#[test]
fn isaac_sims_failed_simulation_view_is_start_up() {
    assert_eq!(
        phase(&format!(
            "# raise Exception(\"Failed to create simulation view backend\")\n\n{PHYSX}"
        )),
        Phase::Startup
    );
    assert_eq!(
        phase(&format!(
            "{PHYSX}Exception: Failed to create simulation view backend\n"
        )),
        Phase::Startup
    );
    // A sentence that only mentions the view decides nothing.
    assert_eq!(
        phase(&format!(
            "I wonder why it failed to create simulation view backend here\n{PHYSX}"
        )),
        Phase::Unknown
    );
}
