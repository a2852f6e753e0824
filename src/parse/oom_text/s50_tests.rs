//! Unit tests of wordings added in session 50: PyTorch's `Allocation on device` named by a
//! reporter as the error, marked or capitalised.

use super::*;
use crate::model::failure::OomMessage;

fn first(text: &str) -> Option<OomMessage> {
    parse_text(text).into_iter().next()
}

fn gpu(text: &str) -> bool {
    first(text).is_some_and(|message| message.is_gpu_oom)
}

#[test]
fn allocation_on_device_named_as_the_error() {
    for line in [
        "Hi, getting **CLIPTextEncode Allocation on device** after update comfyui\n",
        "it will then throw an Allocation on Device exception\n",
        "KSampler Allocation on device error again\n",
        "the node fails with `Allocation on device`\n",
    ] {
        assert!(gpu(line), "{line}");
    }
    // The words in other senses are no error.
    for line in [
        "the memory allocation on device 0 was slow\n",
        "Allocation on device memory is done by cudaMalloc\n",
        "Allocation on Device memory is explained in the guide\n",
    ] {
        assert!(!gpu(line), "{line}");
    }
}
