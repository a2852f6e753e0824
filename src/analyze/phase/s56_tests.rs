//! Session 56: the stages the first reading of the session's blind batches missed (a chained
//! handler's traceback, web front ends' request frames, a mesh extracted, a validation begun,
//! two ordinals of a step) and words that named a stage wrongly (a data set loaded or converted,
//! two stages offered as one).

use super::s42_tests::MESSAGE;
use crate::analyze::explain::explain_text;
use crate::model::explain::Phase;

fn phase(text: &str) -> Phase {
    explain_text(text).phase.failed_in
}

const KILLED: &str = "Killed";

#[test]
fn a_chained_handlers_traceback_shows_where_the_error_was_caught() {
    let own = "Traceback (most recent call last):\n  \
        File \"/x/modeling_chatglm.py\", line 273, in forward\n    \
        attention_scores = attention_scores * self.coeff\n";
    let handler = "Traceback (most recent call last):\n  \
        File \"/env/site-packages/starlette/responses.py\", line 246, in stream_response\n    \
        async for chunk in self.body_iterator:\n  \
        File \"/env/site-packages/anyio/to_thread.py\", line 56, in run_sync\n    \
        return await get_async_backend().run_sync_in_worker_thread(\n\
        RuntimeError: generator raised StopIteration\n";
    let text = format!(
        "{own}{MESSAGE}\n\nDuring handling of the above exception, another exception \
         occurred:\n\n{handler}"
    );
    assert_eq!(phase(&text), Phase::Inference);
    // Without the chaining line, a traceback further down is another failure's.
    let apart = format!("{own}{MESSAGE}\n\n{handler}");
    assert_eq!(phase(&apart), Phase::Unknown);
}

#[test]
fn a_web_front_ends_request_frames_are_inference_unless_a_load_runs_inside() {
    let gradio = "Traceback (most recent call last):\n  \
        File \"/env/site-packages/gradio/routes.py\", line 437, in run_predict\n    \
        output = await app.get_blocks().process_api(\n  \
        File \"/env/site-packages/gradio/blocks.py\", line 1352, in process_api\n    \
        result = await self.call_function(\n  \
        File \"/env/site-packages/gradio/blocks.py\", line 1077, in call_function\n    \
        prediction = await anyio.to_thread.run_sync(\n";
    assert_eq!(phase(&format!("{gradio}{MESSAGE}\n")), Phase::Inference);
    let load = "  File \"/app/webui.py\", line 80, in switch_model\n    \
        model = AutoModelForCausalLM.from_pretrained(path, device_map=\"cuda\")\n  \
        File \"/env/site-packages/transformers/modeling_utils.py\", line 3500, in \
        from_pretrained\n    model = cls(config, *model_args, **model_kwargs)\n";
    assert_eq!(
        phase(&format!("{gradio}{load}{MESSAGE}\n")),
        Phase::WeightsLoad
    );
}

#[test]
fn a_surface_extracted_from_a_trained_model_is_inference() {
    let text = format!(
        "Done with loading the checkpoint.\nExtracting surface at resolution 520 764 1028\n  \
         0%|          | 0/270 [00:00<?, ?it/s]\n{MESSAGE}\n"
    );
    assert_eq!(phase(&text), Phase::Inference);
}

#[test]
fn a_validation_begun_after_the_epoch_is_where_it_failed() {
    let text = format!(
        "When training with the fold5 config, when the first epoch of training is finished and \
         validation starts, the progress bar reports an error after reaching 11%.\n\n{MESSAGE}\n"
    );
    assert_eq!(phase(&text), Phase::Inference);
}

#[test]
fn two_stages_offered_as_one_decide_nothing_on_their_line() {
    let text = "2. CUDA out of memory when training/validating :\n";
    assert_eq!(phase(text), Phase::Unknown);
    let one = "CUDA out of memory during validation\n";
    assert_eq!(phase(one), Phase::Inference);
}

#[test]
fn two_ordinals_of_a_step_show_the_trainings_progress() {
    let text = format!(
        "I tried training on the S3DIS dataset and usually get an error after the 2nd or 3rd \
         step.\n\n{MESSAGE}\n"
    );
    assert_eq!(phase(&text), Phase::TrainingStep);
    let bare = format!(
        "During 2nd step, incremental training, I am getting error like this:\n\n{MESSAGE}\n"
    );
    assert_eq!(phase(&bare), Phase::TrainingStep);
}

#[test]
fn a_data_set_loaded_or_converted_is_not_the_weights() {
    let loaded = format!(
        "The process seems to have crashed when loading `harmonix` dataset:\n\
         loading harmonix dataset ...\n{KILLED}\n"
    );
    assert_ne!(phase(&loaded), Phase::WeightsLoad);
    let converted = format!(
        "After downloading the data, and trying to convert the raw data into ogb data format, \
         Zsh kill the process with the following error message:\n{KILLED}\n"
    );
    assert_ne!(phase(&converted), Phase::FormatConversion);
    assert_ne!(phase(&converted), Phase::Inference);
    // A user's documents converted by an app are its model at work on them.
    let documents = format!(
        "I get an error when converting multiple pdf files in one directory\n\n{MESSAGE}\n"
    );
    assert_eq!(phase(&documents), Phase::Inference);
    // The weights loaded or converted are still those stages.
    let model = format!("It fails when loading the model:\n\n{MESSAGE}\n");
    assert_eq!(phase(&model), Phase::WeightsLoad);
    let weights = format!("It fails when trying to convert the weights to fp16.\n\n{MESSAGE}\n");
    assert_eq!(phase(&weights), Phase::FormatConversion);
}
