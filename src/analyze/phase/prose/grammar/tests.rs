use super::*;

fn phases(text: &str) -> Vec<Phase> {
    hits(&text.to_lowercase())
        .into_iter()
        .map(|(_, _, phase)| phase)
        .collect()
}

#[test]
fn a_stage_verb_in_a_clause_that_places_the_failure() {
    use Phase::*;
    assert_eq!(
        phases("I'm getting OOMs after training for ~120+ steps, any ideas?"),
        [Phase::TrainingStep]
    );
    assert_eq!(
        phases("then I clicked to generate another image but an error happened"),
        [Inference]
    );
    assert_eq!(
        phases("I'm getting an error trying to load deepseek using GPUs"),
        [WeightsLoad]
    );
    assert_eq!(
        phases("I train models on 8 GPUs but I meet"),
        [Phase::TrainingStep]
    );
    assert_eq!(phases("the OOM comes when I train"), [TrainingStep]);
    // A title that drops the subject.
    assert_eq!(phases("RuntimeError when finetune"), [TrainingStep]);
    assert_eq!(phases("OOM error when generate"), [Inference]);
    assert!(phases("it fails when train.py starts").is_empty());
    assert_eq!(phases("it crashes while I was generating"), [Inference]);
    assert_eq!(
        phases("and reached 22000 iterations, it reported cuda out of memory"),
        [Phase::TrainingStep]
    );
    assert_eq!(
        phases("when I trained to 2000 iterations, OOM happened"),
        vec![Phase::TrainingStep]
    );
    assert_eq!(
        phases("it trained up to 3 epochs and then it ran out of memory"),
        vec![Phase::TrainingStep]
    );
    // A model described, not how far the run got.
    assert!(phases("using a checkpoint trained for 300 epochs as the base").is_empty());
    assert_eq!(phases("it dies after 2-3 steps"), [TrainingStep]);
    assert_eq!(
        phases("After the first iteration it prints"),
        [Phase::TrainingStep]
    );
    assert_eq!(phases("OOM at epoch 3"), [TrainingStep]);
    // A count glued to its unit, in a sentence that reports the failure.
    assert_eq!(
        phases("가끔 1epoch이 돌아가고, 가끔 CUDA out of memory 에러가 뜹니다"),
        [Phase::TrainingStep]
    );
    assert!(phases("we set 3epochs for the run").is_empty());
    assert_eq!(phases("在第3个epoch时报错OOM"), [TrainingStep]);
    assert!(phases("第3个问题报错").is_empty());
    assert!(phases("see model_1epoch.pt, it fails").is_empty());
}

#[test]
fn a_model_applied_to_inputs_is_inference() {
    use Phase::*;
    assert_eq!(
        phases("I can't inpaint anymore because of CUDA out of memory"),
        [Inference]
    );
    assert_eq!(phases("OOM while embedding 2M sentences"), [Inference]);
    assert_eq!(
        phases("it crashes when tracking objects in a 4K video"),
        [Inference]
    );
    assert_eq!(phases("the OOM comes when I detect faces"), [Inference]);
    assert_eq!(
        phases("CUDA error while processing the video frames"),
        [Inference]
    );
    assert_eq!(phases("OOM when trying to parse the PDFs"), [Inference]);
    assert_eq!(
        phases("OOM while super-resolving a 1080p clip"),
        [Inference]
    );
    // Processing and parsing need inputs as their object.
    assert!(phases("OOM while processing the dataset").is_empty());
    assert!(phases("it fails while parsing the config").is_empty());
    assert!(phases("Exception during processing !!!").is_empty());
    // The machine or the failure as the object: the reporter's debugging.
    assert!(phases("when trying to detect the GPU it fails with OOM").is_empty());
    assert!(phases("I was tracking the memory when it OOMed").is_empty());
    // Advice, a question, a negation, a general case.
    assert!(phases("you should try to embed fewer sentences at once").is_empty());
    assert!(phases("how do I detect objects on two GPUs?").is_empty());
    assert!(phases("I don't detect anything, it just OOMs").is_empty());
    assert!(phases("One common case is processing the images with a large batch").is_empty());
    // A test or an encoding is no model at work by itself.
    assert!(phases("when I test it with a smaller batch it still OOMs").is_empty());
    assert!(phases("OOM when encoding the video with ffmpeg").is_empty());
}

#[test]
fn the_act_of_applying_a_model_in_a_sentence_that_reports_the_failure() {
    use Phase::*;
    assert_eq!(
        phases("Transcribing a 2-hour file with large-v3 gives an OOM"),
        [Inference]
    );
    assert_eq!(
        phases("I use whisper to transcribe long audio and it crashes"),
        [Inference]
    );
    assert_eq!(
        phases("CUDA OOM translating documents with NLLB"),
        [Inference]
    );
    // Without the failure in its sentence, a reply's advice or a noun is no evidence.
    assert!(phases("To generate larger images you will need more memory").is_empty());
    assert!(phases("Device-side assertion tracking was not enabled by user.").is_empty());
    assert!(phases("Transcribing long files works on the CPU.").is_empty());
    // Another stage in the sentence: its own words decide.
    assert_eq!(
        phases("OOM when loading the model for transcribing"),
        [WeightsLoad]
    );
    // A script's name, a setting.
    assert!(phases("generate.py fails with OOM").is_empty());
}

#[test]
fn advice_questions_negations_and_passed_stages_are_not_read() {
    assert!(phases("you should try to load the model in 8 bits").is_empty());
    assert!(phases("if you train with a smaller batch it fits").is_empty());
    assert!(phases("how do I load the model on two GPUs?").is_empty());
    assert!(phases("when I train it works fine").is_empty());
    assert!(phases("I don't train, I only generate").is_empty());
    assert!(phases("I trained the model and loaded it").is_empty());
    assert!(phases("trying to load the dataset").is_empty());
    assert!(phases("it fills the RAM during the loading process").is_empty());
    assert!(phases("after 20 steps of sampling").is_empty());
    assert!(phases("1. Generate one image and wait").is_empty());
    assert!(phases("Currently, we train the model on 8 GPUs.").is_empty());
    assert!(phases("Steps to reproduce").is_empty());
    assert!(phases("when I set the sampling steps to 50").is_empty());
    assert!(phases(
        "when I finetune this model using x4 A100s with the same config, there isn't any \
             problem"
    )
    .is_empty());
    assert_eq!(
        phases("when I train it works fine, but at step 3 of the eval it OOMs").len(),
        0
    );
}

#[test]
fn the_reporters_own_condition_with_its_outcome_is_a_report() {
    // `If I …` opening the sentence, the failure named after the stage, nothing modal: what
    // happens to the reporter under that condition.
    let read = phases(
        "If I try to use a batch size like 16 it starts training and after 10 iterations \
         it throws a Cuda oom error.",
    );
    assert!(!read.is_empty() && read.iter().all(|phase| *phase == Phase::TrainingStep));
    // A hypothetical, a question, a negation, someone else's condition: still not read.
    assert!(phases("If I train on two cards, would it still run out of memory?").is_empty());
    assert!(phases("If we train it in 8 bits it won't run out of memory.").is_empty());
    assert!(phases("if you train with a bigger batch it throws a CUDA oom error").is_empty());
    assert!(phases("If I train with batch 16 it works fine.").is_empty());
}
