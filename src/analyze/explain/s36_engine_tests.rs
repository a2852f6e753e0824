//! Whole-text checks of what session 36's blind batches (forum threads, domain apps, training
//! stacks) showed missing in the engine and the host figures: short excerpts as printed, and
//! the cases each rule must leave alone.

use super::explain_text;
use super::whole_text::{engine, TORCH_OOM};
use crate::model::failure::EngineName;

#[test]
fn whisper_cpps_own_lines_make_it_another_program_on_ggml() {
    let text = "python whisper_cpp_small.py\n\
        whisper_init_from_file_with_params_no_state: loading model from 'models/ggml-small.bin'\n\
        whisper_model_load: loading model\n\
        whisper_model_load: n_vocab       = 51865\n\
        ggml_cuda_init: GGML_CUDA_FORCE_MMQ:    no\n\
        ggml_cuda_init: found 1 CUDA devices:\n\
        CUDA error: out of memory\n\
        \x20 current device: 0, in function ggml_cuda_init at whisper.cpp/ggml/src/ggml-cuda.cu:187\n";
    assert_eq!(engine(text), EngineName::Other);
    // ggml's lines alone stay llama.cpp's (weakly), and a name that only ends in the prefix
    // (`my_whisper_model_load:`) is not whisper.cpp's.
    let ggml = "ggml_cuda_init: found 1 CUDA devices:\n\
        CUDA error: out of memory\n\
        \x20 current device: 0, in function ggml_cuda_pool_malloc at ggml/src/ggml-cuda.cu:383\n";
    assert_eq!(engine(ggml), EngineName::Llamacpp);
    let user = format!("my_whisper_model_load: done\n{ggml}");
    assert_eq!(engine(&user), EngineName::Llamacpp);
}

#[test]
fn a_lightning_module_in_pasted_code_is_lightning() {
    let text = format!(
        "I am fine tuning T5 on squad and get this error for the following code\n\n\
         class SquadQAModel(pl.LightningModule):\n    def __init__(self):\n{TORCH_OOM}"
    );
    assert_eq!(engine(&text), EngineName::Lightning);
    let trainer = format!("trainer = pl.Trainer(gpus=1, max_epochs=3)\n{TORCH_OOM}");
    assert_eq!(engine(&trainer), EngineName::Lightning);
    // A class of the user's named like one, or another library's trainer, is not Lightning.
    let named = format!("class MyLightningModuleWrapper(nn.Module):\n{TORCH_OOM}");
    assert_ne!(engine(&named), EngineName::Lightning);
    let other = format!("trainer = SFTTrainer(model=model)\n{TORCH_OOM}");
    assert_ne!(engine(&other), EngineName::Lightning);
}

#[test]
fn a_module_moved_to_the_gpu_in_pasted_code_is_pytorch() {
    let text = "I see a big increase in RAM when I use model.to(device), device being a cuda:x.\n\
        Mem usage    Increment   Line Contents\n\
        2260.094 MiB 1947.422 MiB           model = model.to(device)\n\
        RuntimeError: DefaultCPUAllocator: can't allocate memory: you tried to allocate \
        1048576 bytes.\n";
    assert_eq!(engine(text), EngineName::Pytorch);
    // Coqui TTS's API object moved the same way is that app, not a PyTorch script.
    let coqui = "tts = TTS(model_name=\"tts_models/de/thorsten/tacotron2-DDC\").to(device)\n\
        RuntimeError: bad allocation\n";
    assert_ne!(engine(coqui), EngineName::Pytorch);
}

#[test]
fn diffusers_pipeline_bar_names_diffusers_over_its_text_encoders_bar() {
    let text = format!(
        "Loading pipeline components...:  20%|██        | 1/5 [00:01<00:04,  1.02s/it]\n\
         Loading checkpoint shards: 100%|██████████| 2/2 [00:02<00:00,  1.10s/it]\n\
         Loading pipeline components...: 100%|██████████| 5/5 [00:05<00:00,  1.01s/it]\n\
         {TORCH_OOM}"
    );
    assert_eq!(engine(&text), EngineName::Diffusers);
    // transformers' bar alone stays transformers'.
    let shards = format!(
        "Loading checkpoint shards: 100%|██████████| 2/2 [00:02<00:00,  1.10s/it]\n{TORCH_OOM}"
    );
    assert_eq!(engine(&shards), EngineName::Transformers);
}

#[test]
fn rays_node_figures_are_read_when_the_node_ids_are_elided() {
    let text = "ray.exceptions.OutOfMemoryError: Task was killed due to the node running low on \
        memory. Memory on the node (…) was 45.62GB / 48.00GB (0.950375), which exceeds the memory \
        usage threshold of 0.95. Ray killed this worker because it was the most recently \
        scheduled task.\n";
    let report = explain_text(text);
    assert!(!report.is_gpu_oom);
    let details = report
        .ooms
        .iter()
        .find_map(|oom| Some(&oom.details).filter(|d| d.host_usage_bytes.is_some()))
        .expect("the node's figures");
    let gib = |x: f64| (x * (1u64 << 30) as f64).round() as u64;
    assert_eq!(details.host_usage_bytes.map(|b| b.0), Some(gib(45.62)));
    assert_eq!(details.host_limit_bytes.map(|b| b.0), Some(gib(48.0)));
    // The same sentence with nothing after `was` gives no figures.
    let cut = "Task was killed due to the node running low on memory. Memory on the node (…) was\n";
    let report = explain_text(cut);
    assert!(report
        .ooms
        .iter()
        .all(|oom| oom.details.host_usage_bytes.is_none()));
}
