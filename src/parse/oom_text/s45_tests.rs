//! Unit tests of wordings added in session 45: a GPU's memory said to be not enough with the
//! words the other way round (`cuda memory not enough`).

use super::*;

fn gpu_oom(text: &str) -> bool {
    parse_text(text).iter().any(|message| message.is_gpu_oom)
}

#[test]
fn the_gpus_memory_said_to_be_not_enough_is_a_mention() {
    for said in [
        "I use 8*RTX 3090（16G）， batchsize=256， cuda memory not enough\n",
        "When fine-tuning on a T4 the GPU memory is not enough.\n",
        "It fails because there is not enough CUDA memory for the 13B model\n",
        "Training stops: insufficient GPU memory on the 3060\n",
        "# VRAM memory was not enough when generating 1024x1024\n",
    ] {
        assert!(gpu_oom(said), "{said}");
    }
    // A condition, advice or the host's memory is not a report.
    for not_said in [
        "If the GPU memory is not enough, lower the batch size.\n",
        "To avoid insufficient GPU memory, enable gradient checkpointing.\n",
        "System memory is not enough to hold the dataset\n",
    ] {
        assert!(!gpu_oom(not_said), "{not_said}");
    }
}
