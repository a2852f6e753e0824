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

#[test]
fn round_three_wordings() {
    for line in [
        "I am using Nvidia with 8GB VRAM, I get CUDA Out Of Memory\n",
        "[Bug] OOM-ing with Gemma 3N but not Gemma 3\n",
        "Large values cannot be checked because I get `ggml-cuda.cu:5048: out of memory`.\n",
        "# Using 4 V100-16, and set batchsize=1, torch.cuda.OutOfMemoryError:\n",
        "RuntimeError: Unable to find a valid cuDNN algorithm to run convolution\n",
        "ggml_metal_add_buffer: buffer 'data' size 18300780544 is larger than buffer maximum \
         of 17179869184\n",
    ] {
        assert!(gpu(line), "{line}");
    }
    let metal = first(
        "ggml_metal_add_buffer: buffer 'data' size 18300780544 is larger than buffer maximum of \
         17179869184\n",
    )
    .expect("a message");
    assert_eq!(
        metal.figures.tried_to_allocate_bytes,
        Some(crate::model::bytes::Bytes(18_300_780_544))
    );
    // A container's kill told as an error code: the host's.
    let killed = first("with CPU (64GB ram)  container exits with error code 137\n").expect("kill");
    assert!(!killed.is_gpu_oom);
    assert_eq!(killed.details.exit_code, Some(137));
    for line in [
        "Out Of Memory Solutions for CUDA\n",
        "main.cpp:12: out of memory\n",
        "how to catch torch.cuda.OutOfMemoryError:\n",
        "I think torch.OutOfMemoryError: is raised\n",
    ] {
        assert!(!gpu(line), "{line}");
    }
}
