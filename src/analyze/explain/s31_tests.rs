//! Whole-text checks of what session 31's blind batches showed missing. Every text is
//! synthetic.

use super::explain_text;
use super::whole_text::phase;
use crate::model::explain::Phase;

use super::s26_tests::NEW_OOM;

#[test]
fn a_libraries_statement_left_alone_above_the_error_names_the_weights() {
    // accelerate's `set_module_tensor_to_device`, all a paste kept of the traceback.
    let text = "new_value = value.to(device)\nRuntimeError: CUDA error: out of memory\n";
    assert_eq!(phase(text), Phase::WeightsLoad);
    let text = "    new_value = old_value.to(device)\nRuntimeError: CUDA error: out of memory\n";
    assert_eq!(phase(text), Phase::WeightsLoad);
    // Another tensor moved, named otherwise: no stage.
    let text = "x = value.to(device)\nRuntimeError: CUDA error: out of memory\n";
    assert_eq!(phase(text), Phase::Unknown);
    // A layer's parameter made as the model is built, glued to the fence that opened the paste.
    let text = format!(
        "``` self.weight = Parameter(torch.Tensor(self.output_size_per_partition, \
         self.in_features))\n  {NEW_OOM}\n```\n"
    );
    assert_eq!(phase(&text), Phase::WeightsLoad);
    // A fence with its language tag is passed over, not read as code.
    let text = format!("```python\n{NEW_OOM}\n```\n");
    assert_eq!(phase(&text), Phase::Unknown);
}

#[test]
fn a_programs_stage_line_after_a_bracketed_time_and_an_arrow() {
    let text = format!(
        "[Apr 26, 20:00:44] [0]           #> Encoding 57 passages..\n\
         PyTorch-based indexing did not succeed with error: {}\n",
        NEW_OOM.trim_start_matches("torch.OutOfMemoryError: ")
    );
    assert_eq!(phase(&text), Phase::Inference);
}

#[test]
fn embeddings_announced_then_a_kill_is_the_embedding_pass() {
    let text = "$ python ingest.py\nLoading documents from source_documents\n\
                Split into 940979 chunks of text (max. 500 tokens each)\n\
                Creating embeddings. May take some minutes...\n\
                Using embedded DuckDB with persistence: data will be stored in: db\nKilled\n";
    assert_eq!(phase(text), Phase::Inference);
    // The reporter's words naming a model applied to inputs still decide nothing for a kill.
    let text = "I ran the evaluation on 2048 sequences and got\nKilled\n";
    assert_eq!(phase(text), Phase::Unknown);
}

#[test]
fn words_introducing_the_error_inside_a_parenthesis_or_on_the_logged_line_above() {
    let text = format!(
        "  0% 0/4 [00:01<?, ?steps/s]\nFlux failed for OSB region 1 (Flux inpainting error: \
         {})\n",
        NEW_OOM.trim_start_matches("torch.OutOfMemoryError: ")
    );
    assert_eq!(phase(&text), Phase::Inference);
    let message = NEW_OOM.trim_start_matches("torch.OutOfMemoryError: ");
    let text = format!(
        "ERROR:docstrange.pipeline.nanonets_processor:Nanonets OCR extraction failed: \n\
         {message}\n"
    );
    let report = explain_text(&text).phase;
    assert_eq!(report.failed_in, Phase::Inference);
    assert!(
        report.evidence[0].contains("words around the error"),
        "{report:?}"
    );
    // A reporter's sentence above the message is theirs, read by the prose rules.
    let text = format!("Whenever I train it shows this:\n{message}\n");
    let report = explain_text(&text).phase;
    assert!(
        !report.evidence[0].contains("words around the error"),
        "{report:?}"
    );
}

#[test]
fn a_document_converted_is_no_conversion_of_weights() {
    let text = format!("I try to convert a small PDF file to markdown and it fails.\n{NEW_OOM}\n");
    assert_ne!(phase(&text), Phase::FormatConversion);
    let text = format!("I try to convert the model to GGUF and it fails.\n{NEW_OOM}\n");
    assert_eq!(phase(&text), Phase::FormatConversion);
}

#[test]
fn the_backward_and_a_chat_message_in_the_reporters_words() {
    let text = "Recompute activation seems work well while forwarding but OOM is still occurred \
                processing backward.\nHowever, when i add recompute options, OOM suddenly occurs \
                while backwarding.\n";
    assert_eq!(phase(text), Phase::TrainingStep);
    let text =
        format!("When sending a message the colab Console spits out this Error:\n{NEW_OOM}\n");
    assert_eq!(phase(&text), Phase::Inference);
}

#[test]
fn llama_cpps_tensor_placement_is_the_weights_load() {
    let text = "done_getting_tensors: tensor 'token_embd.weight' (q4_K) (and 0 others) cannot be \
                used with preferred buffer type CUDA_Host, using CPU instead\n\
                ggml_backend_cuda_buffer_type_alloc_buffer: allocating 39979.48 MiB on device 1: \
                cudaMalloc failed: out of memory\n";
    assert_eq!(phase(text), Phase::WeightsLoad);
}

#[test]
fn a_load_named_in_english_before_a_chinese_word_of_its_stage() {
    // `系统内存在Loading pipeline阶段崩了`: the host's memory broke in the Loading pipeline stage.
    let text = "尝试了最新的Edit模型，但系统内存在Loading pipeline阶段崩了\n进程killed\n";
    assert_eq!(phase(text), Phase::WeightsLoad);
    let text = format!("load model时报错\n{NEW_OOM}\n");
    assert_eq!(phase(&text), Phase::WeightsLoad);
}

#[test]
fn vllms_create_weights_statement_is_the_weights() {
    let text = format!(
        "    weight = Parameter(torch.empty(sum(output_partition_sizes), input_size_per_partition, \
         dtype=params_dtype), requires_grad=False)\n{NEW_OOM}\n"
    );
    assert_eq!(phase(&text), Phase::WeightsLoad);
}

#[test]
fn a_training_counter_reached_and_requests_served_in_the_reporters_words() {
    let text = format!(
        "everything went well at beginning, but it fails while running the 74th epoch\n{NEW_OOM}\n"
    );
    assert_eq!(phase(&text), Phase::TrainingStep);
    let text = format!("My GPU breaks while running to the 10000 steps of 100000\n{NEW_OOM}\n");
    assert_eq!(phase(&text), Phase::TrainingStep);
    // A count asked for, not reached.
    let text = format!("I set it to run the 10000 steps of warmup.\n{NEW_OOM}\n");
    assert_ne!(phase(&text), Phase::TrainingStep);
    let text = "model is ready, but while I post a request server throw an runtime error\n\
                [FT][ERROR] CUDA runtime error: out of memory\n";
    assert_eq!(phase(text), Phase::Inference);
    let text = "keeping allocat memory when handling a request so it crashed after a few request\n\
                RuntimeError: CUDA error: out of memory\n";
    assert_eq!(phase(text), Phase::Inference);
}

#[test]
fn inputs_ingested_separated_or_aligned_are_inference() {
    for words in [
        "When I ingest a collection of documents I get the OOM error.",
        "when I'm trying to separate a track, I'm getting the following output",
        "When aligning long audios I get this error",
    ] {
        let text = format!("{words}\n{NEW_OOM}\n");
        assert_eq!(phase(&text), Phase::Inference, "{words}");
    }
}

#[test]
fn gpt_fasts_cache_set_up_is_the_kv_cache() {
    let text = format!(
        "Traceback (most recent call last):\n  File \"/app/fish_speech/models/text2semantic/\
         inference.py\", line 310, in load_model\n    model.setup_caches(max_batch_size=1, \
         max_seq_len=model.config.max_seq_len)\n  File \"/app/fish_speech/models/text2semantic/\
         llama.py\", line 412, in setup_caches\n    b.attention.kv_cache = KVCache(\n{NEW_OOM}\n"
    );
    assert_eq!(phase(&text), Phase::KvCacheAlloc);
}

#[test]
fn colossal_ais_lazy_parameters_materialised_are_the_weights() {
    let text = format!(
        "Model params: 64.24 B\nTraceback (most recent call last):\n  File \"benchmark.py\", \
         line 190, in <module>\n    model = booster.boost(model)\n  File \"/env/lib/python3.10/\
         site-packages/colossalai/lazy/lazy_init.py\", line 240, in _materialize_data\n    \
         init_val = func(\n{NEW_OOM}\n"
    );
    assert_eq!(phase(&text), Phase::WeightsLoad);
}

#[test]
fn jaxs_allocator_variables_and_lightnings_form_name_the_engine() {
    use crate::model::failure::EngineName;
    let text =
        "Setting os.environ[\"XLA_PYTHON_CLIENT_MEM_FRACTION\"] = \".10\" successfully leads \
                to jax to only preallocate 10% of memory. However, with this I get OOM warnings \
                and errors.\n";
    assert_eq!(explain_text(text).engine.name, EngineName::Jax);
    let text = format!(
        "I'm using it on an 8-card A100 and get an OOM at the beginning of training.\n{NEW_OOM}\n\
         #- PyTorch Lightning Version (e.g., 1.5.0):\n"
    );
    assert_eq!(explain_text(&text).engine.name, EngineName::Lightning);
}
