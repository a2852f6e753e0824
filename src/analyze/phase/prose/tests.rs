use super::*;

fn one(text: &str) -> Option<Phase> {
    stage(&[ProseLine::new(1, text)]).map(|(phase, _)| phase)
}

fn two(first: &str, second: &str) -> Vec<ProseLine> {
    vec![ProseLine::new(1, first), ProseLine::new(2, second)]
}

#[test]
fn the_reporters_words_name_the_stage() {
    assert_eq!(
        one("CUDA OOM while training Llama-2 7B"),
        Some(Phase::TrainingStep)
    );
    assert_eq!(one("Component: Training"), Some(Phase::TrainingStep));
    assert_eq!(
        one("I'm trying to fine-tune a 7B model"),
        Some(Phase::TrainingStep)
    );
    assert_eq!(one("Cannot load model on a 3060"), Some(Phase::WeightsLoad));
    assert_eq!(one("can't load models anymore"), Some(Phase::WeightsLoad));
    assert_eq!(
        one("OOM right after starting an image generation"),
        Some(Phase::Inference)
    );
    assert_eq!(
        one("it only fails with hires fix on"),
        Some(Phase::Inference)
    );
    assert_eq!(
        one("训练过程中会出现out of memory"),
        Some(Phase::TrainingStep)
    );
    assert_eq!(one("推理时显存不足"), Some(Phase::Inference));
    assert_eq!(
        one("- **Node Type:** SamplerCustomAdvanced"),
        Some(Phase::Inference)
    );
    assert_eq!(one("Will OOM during vae decoding"), Some(Phase::Inference));
    assert_eq!(
        one("The OOM happens during evaluation, not in the train loop"),
        Some(Phase::Inference)
    );
    assert_eq!(one("评估的时候显存不足"), Some(Phase::Inference));
    assert_eq!(one("no OOM during evaluation"), None);
    assert_eq!(one("评估结束后 OOM"), None);
    assert_eq!(
        one("it runs OOM in the second epoch"),
        Some(Phase::TrainingStep)
    );
    assert_eq!(one("python train.py --img 416 --epochs 300"), None);
    assert_eq!(
        one("CUDA OOM during the backward pass of a 7B model"),
        Some(Phase::TrainingStep)
    );
    assert_eq!(
        one("the server fails to start with an OOM"),
        Some(Phase::Startup)
    );
    assert_eq!(
        one("OOM while capturing CUDA graphs on an L4"),
        Some(Phase::CudaGraphCapture)
    );
    assert_eq!(
        one("loads successfully but then OOMs at generation time"),
        Some(Phase::Inference)
    );
    assert_eq!(
        one("Delayed production CUDA OOM: long-context prefill exceeds profiled peak"),
        Some(Phase::Inference)
    );
    assert_eq!(
        one("Am I essentially just training an 8bit model, hence the OOM issues?"),
        Some(Phase::TrainingStep)
    );
    assert_eq!(
        one("4-bit quantization fails with OOM due to the new weight loading system"),
        Some(Phase::WeightsLoad)
    );
    assert_eq!(
        one("Error: an unknown error was encountered while running the model"),
        Some(Phase::Inference)
    );
    let (_, why) = stage(&[ProseLine::new(3, "CUDA OOM while training Llama")]).unwrap();
    assert!(
        why.contains("line 3") && why.contains("while training"),
        "{why}"
    );
}

#[test]
fn an_apps_line_naming_the_failure_names_its_stage() {
    let forge = "Encountered Out of Memory during Sampling; Unloading all Models...    \
                     main_thread.py :: ERROR";
    // A logged line: not the reporter's words, but the app's own words for its failure.
    assert_eq!(one(forge), None);
    assert_eq!(line_stage(forge), Some(Phase::Inference));
    assert_eq!(
        line_stage("[ERROR] out of memory while training, stopping"),
        Some(Phase::TrainingStep)
    );
    // Denied, two stages, none.
    assert_eq!(line_stage("OOM after loading the model"), None);
    assert_eq!(
        line_stage("OOM while training (not during inference, not loading the model)"),
        Some(Phase::TrainingStep)
    );
    assert_eq!(line_stage("OOM while training and during inference"), None);
    assert_eq!(line_stage("Got an OOM, unloading all loaded models."), None);
}

#[test]
fn the_inner_stage_decides() {
    // An evaluation pass inside training: the evaluation ran (a forward, no backward).
    assert_eq!(
        one("exit code 137 in validation step while training"),
        Some(Phase::Inference)
    );
    assert_eq!(
        one("Out of memory after some iterations of validation"),
        Some(Phase::Inference)
    );
    assert_eq!(
        one("OOM while validating during training"),
        Some(Phase::Inference)
    );
    // A checkpoint save inside training: no stage of the list.
    let save = stage(&[ProseLine::new(
        1,
        "When saving a checkpoint during model training, an OSError is raised",
    )]);
    assert_eq!(save.as_ref().map(|(phase, _)| *phase), Some(Phase::Unknown));
    assert!(save.is_some_and(|(_, why)| why.contains("checkpoint save")));
    // A save alone (a trainer's status line) says nothing of where the run failed.
    let lines = two(
        "Saving model checkpoint to ./out/checkpoint-500",
        "the OOM happens while training on 8 GPUs",
    );
    assert_eq!(
        stage(&lines).map(|(phase, _)| phase),
        Some(Phase::TrainingStep)
    );
    // Training alone is still training.
    assert_eq!(one("OOM while training"), Some(Phase::TrainingStep));
}

#[test]
fn nouns_and_requests_name_the_stage() {
    assert_eq!(
        one("CUDA out of memory error on inference"),
        Some(Phase::Inference)
    );
    assert_eq!(
        one("when I try to make a request to API it stops working"),
        Some(Phase::Inference)
    );
    assert_eq!(
        one("We are now attempting to convert the Qwen2-72B model"),
        Some(Phase::FormatConversion)
    );
    assert_eq!(one("Converting weights to fp16"), None);
}

#[test]
fn what_was_expected_is_not_the_stage() {
    assert_eq!(
        one("Should start training without OOM, like Llama factory."),
        None
    );
}

#[test]
fn a_phrase_starts_a_word() {
    assert_eq!(one("can't you download the model locally"), None);
    assert_eq!(one("OOM when I load the model"), Some(Phase::WeightsLoad));
    assert_eq!(one("OOM (load the model first)"), Some(Phase::WeightsLoad));
    assert_eq!(one("在训练过程中"), Some(Phase::TrainingStep));
}

#[test]
fn log_lines_are_not_the_reporters_words() {
    assert_eq!(
        one("Loading model: /home/o0/ai/tabbyAPI/models/Euryale-1.3-L2-70B-4.65bpw-h6-exl2"),
        None
    );
    assert_eq!(
        one(">> Loading model from models/ldm/stable-diffusion-v1/model.ckpt"),
        None
    );
    assert_eq!(
        one("Loading checkpoint shards:   0%|          | 0/3 [00:00<?, ?it/s]"),
        None
    );
    assert_eq!(
        one("[2023-08-01 10:00:00,454]::[InvokeAI]::INFO --> Loading model sdxl"),
        None
    );
    assert_eq!(
        one("crates/llama-cpp-bindings/src/lib.rs:65: Unable to load model"),
        None
    );
}

#[test]
fn negations_and_other_moments_are_not_the_stage() {
    assert_eq!(one("总是训练结束之后OOM。 after training is done"), None);
    // … and before it.
    assert_eq!(
        one("然后训练之前就出现了问题,弹出了Out of memory on device."),
        None
    );
    assert_eq!(one("学習前にOOMになります"), None);
    assert_eq!(one("训练时出现OOM"), Some(Phase::TrainingStep));
    assert_eq!(one("there is no OOM during training"), None);
    assert_eq!(one("the OOM comes after loading the model"), None);
    assert_eq!(one("before loading the model the GPU is empty"), None);
    assert_eq!(one("the model loaded fine"), None);
    // Two stages, neither beside the out-of-memory words: nothing decides.
    let lines = two(
        "while training it uses one GPU",
        "but it is slow during inference",
    );
    assert_eq!(stage(&lines), None);
    // A stage said to work in its own clause is not the failure's (session 49).
    assert_eq!(one("while training it works on one GPU"), None);
    // A stage passed before the failure (`but then`) is not the stage.
    assert_eq!(
        one("it finishes loading the model, but then it still throws an OOM exception"),
        None
    );
    assert_eq!(
        one("loading the model works, but then OOMs during generation"),
        Some(Phase::Inference)
    );
    // The one beside them decides.
    let lines = two(
        "while training it works on one GPU",
        "I get an OOM during inference",
    );
    assert_eq!(
        stage(&lines).map(|(phase, _)| phase),
        Some(Phase::Inference)
    );
}

#[test]
fn a_model_applied_to_inputs_is_inference() {
    for text in [
        "When I use instant ID to change faces, I get CUDA out of memory",
        "OOM on the latent decoder node on every second run",
        "device-side assert with long inputs",
        "For long context, I am getting this error",
        "vLLM crashes with high concurrency",
        "OOM comes while caching latents, before the training starts",
        "When I finish the epoch and do the validation, the CUDA out of memory appeared",
        "CUDA OOM when it comes to evaluation",
        "在使用简体中文模型时，单句稍微长一点就会报错",
        "识别图片的时候显存不足",
        "高并发的时候显存溢出",
        "動画を翻訳中にエラーが出ます",
        "문서 인식 중 CUDA out of memory",
        "Ошибка при распознавании длинного аудио",
        "Sale out of memory al transcribir audios largos",
        "Dá erro ao processar vídeos longos",
    ] {
        assert_eq!(one(text), Some(Phase::Inference), "{text}");
    }
    let (_, why) =
        stage(&[ProseLine::new(4, "OOM when running the demo on a photo")]).expect("a stage");
    assert!(
        why.contains("line 4") && why.contains("running the demo"),
        "{why}"
    );
}

#[test]
fn a_model_applied_to_inputs_needs_this_failure_and_the_act() {
    for text in [
        // The verb alone names a thing or the job (a detection model, the recognition rate).
        "检测模型的显存不足",
        "识别率很低",
        "识别中文的模型",
        // Advice, a question, a negation, a general case, another's setup.
        "you should not run the demo with long inputs",
        "Does it OOM with high concurrency?",
        "no OOM with long inputs",
        "One common case is running the evaluation on a large test set",
        "For example when running the demo on 4K images it uses more memory.",
        // A result named, not the act (`识别后`, after recognizing).
        "识别后显存没有释放",
    ] {
        assert_eq!(one(text), None, "{text}");
    }
    // A training word between: the training's words decide, not the model's use.
    assert_eq!(
        one("在使用LoRA微调大模型的时候出现了显存爆炸的问题"),
        Some(Phase::TrainingStep)
    );
    // Of the host's memory, the inputs are read and batched there: the job, not the stage.
    let lines = [ProseLine::new(
        1,
        "Hello, when I was parsing the documents it got killed",
    )];
    assert!(stage_for(&lines, true).is_err());
    assert_eq!(
        stage_for(&lines, false).map(|(phase, _)| phase),
        Ok(Phase::Inference)
    );
    // Any words of an evaluation or inference too (session 18); a training's progress and
    // a load still decide.
    for text in [
        "[Bug] Getting exit code 137 in validation step while training",
        "the process is killed during inference",
    ] {
        let lines = [ProseLine::new(1, text)];
        assert!(stage_for(&lines, true).is_err(), "{text}");
        assert_eq!(
            stage_for(&lines, false).map(|(phase, _)| phase),
            Ok(Phase::Inference),
            "{text}"
        );
    }
    let lines = [ProseLine::new(1, "killed while loading the model")];
    assert_eq!(
        stage_for(&lines, true).map(|(phase, _)| phase),
        Ok(Phase::WeightsLoad)
    );
}

#[test]
fn what_the_run_could_do_before_is_no_stage() {
    assert_eq!(
        one("Two days ago I could load a model in exl2 at 36,000 tokens"),
        None
    );
    assert_eq!(
        one("Last week I was able to generate images at 1024px"),
        None
    );
    // `can` before the stage that then failed still names it.
    assert_eq!(
        one("I can run inference but then I get back a black image and this error"),
        Some(Phase::Inference)
    );
    // A stage that could not be done, with the failure: that stage (the grammar's).
    assert_eq!(
        one("I could not load the model: OOM"),
        Some(Phase::WeightsLoad)
    );
}

#[test]
fn inference_named_with_its_set_up_and_no_time_is_the_job() {
    // The bare noun on a card: the job (it also loads its model).
    assert_eq!(one("vllm 推理v2.6 在一张3090 报错显存不够"), None);
    let err = stage_for(
        &[ProseLine::new(2, "vllm 推理v2.6 在一张3090 报错显存不够")],
        false,
    )
    .expect_err("the job, no stage");
    assert!(err.is_some_and(|why| why.contains("inference job")));
    // A word of time, or no set-up: the stage.
    assert_eq!(one("在3090上推理时显存不够"), Some(Phase::Inference));
    assert_eq!(one("推理报错显存不够"), Some(Phase::Inference));
    assert_eq!(
        one("OOM during inference on an A100"),
        Some(Phase::Inference)
    );
}

#[test]
fn an_evaluation_script_run_names_inference_when_nothing_else_does() {
    let lines = two(
        "Run python eval.py --config config/cocostuff.yaml",
        "I reduced the batch size and still get the error after 13 iterations.",
    );
    assert_eq!(
        stage(&lines).map(|(phase, _)| phase),
        Some(Phase::Inference)
    );
    assert_eq!(
        one("running predict_video.py on my clips"),
        Some(Phase::Inference)
    );
    // A demo or a training pipeline's script, a pytest module: no evaluation named.
    assert_eq!(one("streamlit run web_demo.py"), None);
    assert_eq!(
        one("python pipeline/run_sft_and_eval.py --stages sft"),
        None
    );
    assert_eq!(one("pytest test_model.py"), None);
    // Of a host-memory failure, the script names the job (its data is read there too).
    let lines = [ProseLine::new(
        1,
        "When I tried run the command \"python evaluate.py -d 1\"",
    )];
    assert!(stage_for(&lines, true).is_err());
    // Other words naming a stage decide.
    let lines = two(
        "python eval.py --ckpt last.pt",
        "OOM while loading the model",
    );
    assert_eq!(
        stage(&lines).map(|(phase, _)| phase),
        Some(Phase::WeightsLoad)
    );
    // Training named with its progress is a training's.
    let lines = two("python test.py", "OOM after 100 steps of training");
    assert_ne!(
        stage(&lines).map(|(phase, _)| phase),
        Some(Phase::Inference)
    );
}

#[test]
fn every_phrase_is_marked_for_the_collector() {
    // The collector keeps only lines a marker of `parse::engine_log::prose` finds: each
    // phrase must be found, lowercase and with its first letter capitalised.
    let marked = |text: &str| crate::parse::engine_log::parse_line_scan(text).stage_words;
    for (phrase, _) in PHRASES.iter().chain(APPLY_PHRASES) {
        let mut chars = phrase.chars();
        let capital: String = chars
            .next()
            .map(|first| first.to_uppercase().chain(chars).collect())
            .unwrap_or_default();
        for text in [phrase.to_string(), capital] {
            assert!(marked(&format!("x {text} y")), "{text:?} is not marked");
        }
    }
    for sentence in [
        "this is happening only while decoding",
        "I train models on 8 GPUs but I meet",
        "then I clicked to generate another image",
        "I'm getting an error trying to load deepseek",
        "I'm getting OOMs after training for ~120+ steps",
        "and reached 22000 iterations, it reported",
        "After the first iteration it fails",
        "при обучении модели",
    ] {
        assert!(marked(sentence), "{sentence:?} is not marked");
    }
}

#[test]
fn a_hard_wrapped_sentence_is_read_across_its_lines() {
    let wrapped = ProseLine {
        before: Some("I get a CUDA out of memory error while".to_string()),
        after: Some("on a 24 GB card.".to_string()),
        ..ProseLine::new(2, "loading the model with device_map auto")
    };
    let (phase, why) = stage(&[wrapped]).unwrap();
    assert_eq!(phase, Phase::WeightsLoad);
    assert!(why.contains("line 2"), "{why}");
    let wrapped = ProseLine {
        after: Some("training a 7B model".to_string()),
        ..ProseLine::new(4, "The OOM happens during")
    };
    assert_eq!(stage(&[wrapped]).map(|(p, _)| p), Some(Phase::TrainingStep));
    // A list item below, a log line above: not the same paragraph.
    let items = ProseLine {
        before: Some("[INFO] 12:00:01 ready while".to_string()),
        after: Some("- training a 7B model".to_string()),
        ..ProseLine::new(4, "The OOM happens during")
    };
    assert_eq!(stage(&[items]), None);
    // A stage wholly on the neighbour is that line's, not this one's.
    let neighbour = ProseLine {
        before: Some("we fine-tune later".to_string()),
        ..ProseLine::new(4, "The server fails to start")
    };
    assert_eq!(stage(&[neighbour]).map(|(p, _)| p), Some(Phase::Startup));
}

#[test]
fn the_other_languages_stage_words() {
    assert_eq!(one("при обучении модели OOM"), Some(Phase::TrainingStep));
    assert_eq!(one("после обучения модели OOM"), None);
    assert_eq!(
        one("error de memoria entrenando un modelo"),
        Some(Phase::TrainingStep)
    );
    assert_eq!(one("画像生成中にメモリ不足"), Some(Phase::Inference));
    assert_eq!(one("이미지 생성 중 메모리 부족"), Some(Phase::Inference));
    // `预训练模型` is a pre-trained model, not a training.
    assert_eq!(one("加载预训练模型时显存不足"), None);
    // Advice to the reporter is not the reporter's stage.
    assert_eq!(
        one("显存太小了，请检查一下你的显卡，或者使用多卡训练呢。"),
        None
    );
    assert_eq!(one("建议用deepspeed训练时开offload"), None);
    assert_eq!(one("2. 重新训练的时候，看一下你的显存有没有被清空。"), None);
    assert_eq!(
        one("我试了一下，训练时还是显存不足"),
        Some(Phase::TrainingStep)
    );
    assert_eq!(
        one("您好，我在训练时显存不足，您可以帮忙查看下吗？"),
        Some(Phase::TrainingStep)
    );
    assert_eq!(
        one("正在加载模型，耗时需要几分钟，请稍后..."),
        Some(Phase::WeightsLoad)
    );
    assert_eq!(one("我用两张卡训练时显存不足。"), Some(Phase::TrainingStep));
    // The model's name between the verb and `模型`.
    assert_eq!(
        one("[BUG]加载qwen2.5-72b模型时内存异常增长导致OOM"),
        Some(Phase::WeightsLoad)
    );
    assert_eq!(one("加载数据集时OOM"), None);
    // Korean's completed past (`…했던`, `…갔던`) names a stage that ran before; `하던 중`
    // (while doing) is the stage running.
    assert_eq!(one("전에 학습이 잘 돌아갔던 설정인데 OOM"), None);
    assert_eq!(one("학습하던 중 메모리 부족"), Some(Phase::TrainingStep));
    // The stage went well.
    assert_eq!(one("训练时没问题，推理时显存不足"), Some(Phase::Inference));
    assert_eq!(one("다시 학습을 진행하면 문제 없이 실행됩니다"), None);
    assert_eq!(one("推理时显存不足"), Some(Phase::Inference));
}

#[test]
fn host_memory_needs_the_trainings_progress() {
    let host = |text: &str| stage_for(&[ProseLine::new(2, text)], true);
    // The training job named: the words show the job, not the stage.
    let job = host("when the training starts, the process is killed for lack of RAM");
    let note = job.expect_err("a job, not a stage").unwrap_or_default();
    assert!(
        note.contains("line 2") && note.contains("reporter's words"),
        "{note}"
    );
    assert!(host("Killed while training a 3B model").is_err());
    // Its progress, or another stage named: they decide.
    assert_eq!(
        host("the RAM fills and it is killed after 300 steps").map(|(p, _)| p),
        Ok(Phase::TrainingStep)
    );
    assert_eq!(
        host("killed in the second epoch of training").map(|(p, _)| p),
        Ok(Phase::TrainingStep)
    );
    assert_eq!(
        host("the host OOM killer fires while loading the model").map(|(p, _)| p),
        Ok(Phase::WeightsLoad)
    );
    // A GPU OOM's training words still decide.
    assert_eq!(
        one("when the training starts, it runs out of memory"),
        Some(Phase::TrainingStep)
    );
    assert!(host_training_unshown(
        true,
        Phase::TrainingStep,
        "run the train code"
    ));
    assert!(!host_training_unshown(
        true,
        Phase::TrainingStep,
        "at step 40"
    ));
    assert!(!host_training_unshown(
        false,
        Phase::TrainingStep,
        "training"
    ));
}

#[test]
fn more_stage_words() {
    assert_eq!(
        one("we hit an OOM during deferred CUDA-graph capture on 16 GPUs"),
        Some(Phase::CudaGraphCapture)
    );
    assert_eq!(
        one("the model is initialized again for each call, which runs out of memory"),
        Some(Phase::WeightsLoad)
    );
    assert_eq!(
        one("the host OOMs while sharding, a crash before training can begin."),
        Some(Phase::Startup)
    );
    assert_eq!(
        one("when the fine-tuning is about to start, it says GPU 1 is out of memory"),
        Some(Phase::Startup)
    );
    assert_eq!(one("before training starts the GPU is empty"), None);
    assert_eq!(
        one("it dies with an error at 35% of training"),
        Some(Phase::TrainingStep)
    );
    assert_eq!(one("it used 35% of the GPU"), None);
    assert_eq!(
        one("OOM when XLA compiles my train_step function"),
        Some(Phase::TrainingStep)
    );
    assert_eq!(
        one("the validation_step runs out of memory"),
        Some(Phase::Inference)
    );
    assert_eq!(one("see compile_train_step below"), None);
    assert_eq!(one("OOM with --eval_steps 200 --train_step_ratio 2"), None);
    assert_eq!(
        one("Mistral QLoRA example using 300GB of memory"),
        Some(Phase::TrainingStep)
    );
    assert_eq!(one("换成qlora就显存不足了"), Some(Phase::TrainingStep));
    assert_eq!(one("see qloradapter"), None);
    // `X的Y`: the stage words modify a noun; `的时候` is still the time of the stage.
    assert_eq!(one("运行inference的脚本就被killed了"), None);
    assert_eq!(one("训练的时候显存不足"), Some(Phase::TrainingStep));
    // Asked whether it will fail, not reported.
    assert_eq!(one("推理7B模型，一张24G的卡会OOM？"), None);
    assert_eq!(one("推理7B模型时OOM了，为什么？"), Some(Phase::Inference));
    assert_eq!(
        one("请问为什么我用batch=2进行训练会出现out of memory呢？"),
        Some(Phase::TrainingStep)
    );
    assert_eq!(
        one("The training has started, and at such an early stage it crashes"),
        Some(Phase::TrainingStep)
    );
    assert_eq!(
        one("it crashes before the training has started"),
        Some(Phase::Startup)
    );
    assert_eq!(
        one("A long request raises CUDA OutOfMemoryError"),
        Some(Phase::Inference)
    );
    assert_eq!(
        one("With Restore faces on, a batch of 8 runs out of memory"),
        Some(Phase::Inference)
    );
    assert_eq!(
        one("out of memory at the diarization step"),
        Some(Phase::Inference)
    );
}

#[test]
fn a_stage_that_could_not_be_done() {
    // The set-up named with it (two T4 cards), no word of time: the job (AUDIT.md, "the
    // job or the stage").
    assert_eq!(
        one("Cannot fine-tune a 13B model due to OOM on two T4"),
        None
    );
    assert_eq!(
        one("Cannot fine-tune a 13B model due to OOM"),
        Some(Phase::TrainingStep)
    );
    assert_eq!(
        one("unable to generate images: CUDA out of memory"),
        Some(Phase::Inference)
    );
    assert_eq!(
        one("I want to train the 3B model on a 24 GB card, but there is not enough memory"),
        Some(Phase::TrainingStep)
    );
    // With the GPU's model named and no word of time: the job (AUDIT.md, "the job or the
    // stage").
    assert_eq!(
        one("I want to train the 3B model on an RTX 3090, but there is not enough memory"),
        None
    );
    // No failure reported: a wish or a limit, not the stage that failed.
    assert_eq!(one("I want to train a model on my own data."), None);
    assert_eq!(one("we can not train on two nodes yet"), None);
}

#[test]
fn a_statement_whose_comment_names_the_failure() {
    let lines = [ProseLine {
        before: Some("model = build()".to_string()),
        after: Some("scores = trainer.validate(model)   # <= OOM here".to_string()),
        ..ProseLine::new(7, "trainer.fit(model)  # fine, during training 5 GB")
    }];
    let (phase, why) = stage(&lines).unwrap();
    assert_eq!(phase, Phase::Inference);
    assert!(why.starts_with("line 8: the reporter's code"), "{why}");
    let generate = [ProseLine::new(
        3,
        "out = model.generate(**inputs)  # CUDA out of memory",
    )];
    assert_eq!(stage(&generate).map(|(p, _)| p), Some(Phase::Inference));
    // A heading or an issue number is no statement.
    assert_eq!(
        one("## OOM during training #1234"),
        Some(Phase::TrainingStep)
    );
}

#[test]
fn a_cjk_training_word_naming_the_job_is_not_the_moment() {
    // The job: a noun after it, or a thing named (`X的训练`, `终止训练`, `学習を…`,
    // `…하는 예제`) with no time and no failure in its sentence.
    assert_eq!(one("照着教程跑了目标检测模型的训练"), None);
    assert_eq!(one("在服务器上运行训练代码时出现这个错误"), None);
    assert_eq!(one("これは学習データの一覧です"), None);
    assert_eq!(one("제가 올린 학습 예제를 봐 주세요"), None);
    assert_eq!(one("配置文件已更新 终止训练！"), None);
    assert_eq!(one("画像はキャプションなしで学習を続行します"), None);
    assert_eq!(
        one("[파인튜닝](https://x.y/z)하는 예제를 실행해 봤습니다"),
        None
    );
    // The stage succeeded (`成功`).
    assert_eq!(one("开启训练成功！"), None);
    // Bare, the reporter's own report: still read.
    assert_eq!(one("我用四张卡做SFT训练"), Some(Phase::TrainingStep));
    // The moment, or the failure in its sentence.
    assert_eq!(one("训练时显存不足"), Some(Phase::TrainingStep));
    assert_eq!(one("我在训练ResNet的时候报错"), Some(Phase::TrainingStep));
    assert_eq!(one("训练一个检测模型显存溢出"), Some(Phase::TrainingStep));
    assert_eq!(one("学習中にエラーが出ます"), Some(Phase::TrainingStep));
    // A denied place does not hide a later one in the line.
    assert_eq!(
        one("训练环境：默认环境。问题描述：训练过程中提示错误"),
        Some(Phase::TrainingStep)
    );
    // The resultative `出来`: what a training produced.
    assert_eq!(one("这样训练出来的模型太耗显存"), None);
}

#[test]
fn a_denied_failure_does_not_mark_the_sentence() {
    // `OOM 없이` (without OOM) and `without OOM` say the run went through: the sentence
    // naming the stage that failed is another.
    let lines = two(
        "while training there was no OOM",
        "it fails when I load the model",
    );
    assert_eq!(stage(&lines), None);
    let lines = two(
        "학습 목적으로 작은 모델을 돌렸더니 OOM 없이 끝났습니다",
        "베이스 모델을 로딩하는 부분에서 오류가 생깁니다",
    );
    assert_eq!(stage(&lines).map(|(p, _)| p), Some(Phase::WeightsLoad));
    assert!(!names_the_failure("it trained without oom"));
    assert!(!names_the_failure("oom 없이 실행됩니다"));
    assert!(names_the_failure("then it hit an oom"));
}

#[test]
fn a_title_of_the_training_and_the_failure_alone_is_the_stage() {
    for title in [
        "Training OOM",
        "finetuning - Out of Memory Error",
        "Fine-tuning: CUDA out of memory",
    ] {
        assert_eq!(one(title), Some(Phase::TrainingStep), "{title}");
    }
    // With a set-up or other words: the job (or another reading).
    assert_eq!(one("Training llama-7b on a T4 OOM"), None);
    assert_eq!(one("Training data out of memory"), None);
    assert_eq!(one("trainingset oom"), None);
}

#[test]
fn a_test_function_run_on_the_cpu_is_inference() {
    let words = "The error is while running the test function (below 2 lines).";
    assert_eq!(one(words), Some(Phase::Inference));
    // Of the host's memory, the words name the job (its inputs are read there too)…
    assert_eq!(
        stage_for(&[ProseLine::new(1, words)], true)
            .ok()
            .map(|(p, _)| p),
        None
    );
    // … unless the model itself runs on the CPU.
    let mut report = PhaseReport::default();
    let lines = [
        ProseLine::new(1, "I am using my CPU instead of my GPU."),
        ProseLine::new(2, words),
    ];
    fill_unknown(&mut report, &lines, true);
    assert_eq!(report.failed_in, Phase::Inference);
    let mut report = PhaseReport::default();
    fill_unknown(&mut report, &lines[1..], true);
    assert_eq!(report.failed_in, Phase::Unknown);
    assert_eq!(one("I ran the unit test function suite"), None);
}

#[test]
fn an_english_stage_word_with_a_cjk_time_word() {
    assert_eq!(
        one("모델을 training하는데 CUDA out of memory가 떠요"),
        Some(Phase::TrainingStep)
    );
    assert_eq!(one("inference时显存一直增长"), Some(Phase::Inference));
    assert_eq!(
        one("finetuning 중에 메모리 부족"),
        Some(Phase::TrainingStep)
    );
    // In the course of it (`的过程`), or of a script named for it (`train_x过程中`).
    assert_eq!(
        one("视频缩短后在train的过程仍然中断"),
        Some(Phase::TrainingStep)
    );
    assert_eq!(
        one("在执行train_video过程中抛出错误：out of memory"),
        Some(Phase::TrainingStep)
    );
    assert_eq!(one("运行trainer_x的脚本报错"), None);
    // A noun modified (`inference的脚本`), an English word after: not the moment.
    assert_eq!(one("运行inference的脚本就被killed了"), None);
    assert_eq!(one("pretraining时"), None);
}

#[test]
fn a_prediction_an_app_run_on_media_a_launch() {
    assert_eq!(
        one("the notebook failed at the prediction step"),
        Some(Phase::Inference)
    );
    assert_eq!(one("no error during prediction"), None);
    assert_eq!(
        one("I get this error when trying to interpolate a video"),
        Some(Phase::Inference)
    );
    assert_eq!(
        one("Out of memory when launching the app"),
        Some(Phase::Startup)
    );
    // A training launched: the job, not the app's start-up.
    assert_ne!(
        one("Out of memory when launching the training"),
        Some(Phase::Startup)
    );
    assert_eq!(one("you could try launching it with --lowvram"), None);
}

#[test]
fn quoted_lines_are_another_persons_words() {
    assert_eq!(one("> I get an OOM while training"), None);
}

#[test]
fn a_servers_warm_up_is_profiling() {
    for text in [
        "[Bug]: CUDA OOM during sampler warmup with DeepSeek-V3.2 on vLLM Nightly",
        "gemma-7b warmup encountered an error",
        "the server crashes during the warm-up",
    ] {
        assert_eq!(one(text), Some(Phase::Profiling), "{text}");
    }
    // The warm-up passed; advice.
    assert_eq!(
        one("CUDA OutOfMemory even after warmup phase succeeded"),
        None
    );
    assert_eq!(one("no OOM during warmup, it fails later"), None);
}

#[test]
fn a_trainings_course_without_a_count() {
    for text in [
        "OOM part way through epoch using llama3.2 vision finetuning distributed recipe",
        "It crashes halfway through the training with CUDA out of memory",
        "CUDA out of memory with training iterations",
        "However, the training was cut off halfway through, indicating CUDA out of memory",
        "the training stops after some time with an error like:",
    ] {
        assert_eq!(one(text), Some(Phase::TrainingStep), "{text}");
    }
    // No failure in the sentence, the training's end named, another subject.
    assert_eq!(one("the training was cut off halfway through"), None);
    assert_eq!(
        one("after training stops after some time I get an OOM"),
        None
    );
    assert_eq!(
        one("the download stops after some time with an error"),
        None
    );
}

#[test]
fn the_stage_in_the_sentence_naming_the_failure_wins() {
    let text = "The accuracy reaches 29% in validation. However, the training was cut off \
                    halfway through, indicating CUDA out of memory.";
    assert_eq!(one(text), Some(Phase::TrainingStep));
    // The evaluation named with the failure still decides inside a training.
    assert_eq!(
        one("During training, I get CUDA out of memory in validation."),
        Some(Phase::Inference)
    );
}

#[test]
fn inference_written_as_a_verb() {
    assert_eq!(
        one("When trying to inference one image using the default predictor, I get a cuda oom"),
        Some(Phase::Inference)
    );
    assert_eq!(
        one("Cuda out of memory while inference for Qwen3-VL-4B-Instruct"),
        Some(Phase::Inference)
    );
    // The job named by how it was run (a script), as a training's job is.
    assert_eq!(one("CUDA OOM when inference using python script"), None);
}

#[test]
fn an_act_named_as_what_failed() {
    assert_eq!(
        one("Inpainting gives Out of memory (1080 TI), without Inpainting no problems, why?"),
        Some(Phase::Inference)
    );
    assert_eq!(
        one("Upscaling crashes with CUDA out of memory"),
        Some(Phase::Inference)
    );
    // No failure, another subject.
    assert_eq!(one("Inpainting gives nice results"), None);
    assert_eq!(one("The setting gives out of memory"), None);
}

#[test]
fn chinese_start_up_placed_as_the_failures_moment() {
    for text in [
        "启动vllm server 的时候显存爆了，显卡是GTX4060ti (16G)",
        "[Bug] 从0.6.0开始，24G显存运行AWQ量化后的Qwen2.5-32B启动出现OOM",
        "服务启动时报显存不足",
    ] {
        assert_eq!(one(text), Some(Phase::Startup), "{text}");
    }
    for text in [
        "4卡T4服务器，使用vllm启动总是报错显存不够",
        "[vllm] - 一张A10，vllm api方式启动，报显存不足",
        "启动训练的时候显存爆了",
        "补充下启动命令是",
        "不启动deepspeed就不会报显存不足",
    ] {
        assert_ne!(one(text), Some(Phase::Startup), "{text}");
    }
}

#[test]
fn a_training_run_as_the_object_of_a_word_of_time() {
    for text in [
        "When I encountered the following error while performing the training, can someone \
             help me?",
        "Getting the error CUBLAS_STATUS_ALLOC_FAILED while starting epoch.",
        "OOM while running the fine-tuning on my data",
    ] {
        assert_eq!(one(text), Some(Phase::TrainingStep), "{text}");
    }
    // No word of time; advice; a question about the stage (not a request for help).
    assert_eq!(one("did it crash while running the training?"), None);
    assert_eq!(one("I am performing the training on a 3090"), None);
    assert_eq!(
        one("you should lower the batch while running training"),
        None
    );
}

#[test]
fn a_hypothetical_is_no_stage_unless_the_failure_is_reported_first() {
    assert_eq!(one("显存不足。 if during training it fails"), None);
    assert_eq!(
        one("- If during training, check if there are too many Gaussians"),
        None
    );
    assert_eq!(
        one("I get CUDA OOM if I try to train this model"),
        Some(Phase::TrainingStep)
    );
    // An experiment launched is the job, an app launched its start-up.
    assert_eq!(
        one("Cuda error occured, while launching a small-scale baseline"),
        None
    );
    assert_eq!(
        one("Out of memory when launching the server"),
        Some(Phase::Startup)
    );
}

#[test]
fn a_stage_not_reached_yet_is_no_stage() {
    assert_eq!(
        one("is the whole video stored in VRAM before the ksampler can proceed? it OOMs"),
        None
    );
    // Right before it, or another word between: as before.
    assert_eq!(one("it OOMs before ksampler runs"), None);
    assert_eq!(one("it OOMs in the ksampler"), Some(Phase::Inference));
}

#[test]
fn lora_as_a_verb_and_a_started_training() {
    assert_eq!(
        one("CUDA OOM trying to LoRA a 7B model on distributed setting"),
        Some(Phase::TrainingStep)
    );
    assert_eq!(
        one("training started but before saving the model file it show this error"),
        Some(Phase::TrainingStep)
    );
    // LoRA as a noun; a training that has not started.
    assert_ne!(
        one("I load the LoRA and get an OOM"),
        Some(Phase::TrainingStep)
    );
    assert_ne!(
        one("the OOM comes before the training started"),
        Some(Phase::TrainingStep)
    );
}

#[test]
fn how_far_the_training_got_and_others_asked_about_this_error() {
    assert_eq!(
        one("I get an error on the \"train.log\" when 35406 steps."),
        Some(Phase::TrainingStep)
    );
    assert_eq!(
        one("Anyone with this error while running training?"),
        Some(Phase::TrainingStep)
    );
    assert_eq!(
        one("when the train epoch reaches start_epoch of the SWA, I always got the error"),
        Some(Phase::TrainingStep)
    );
    assert_eq!(one("the epoch reached 10 and the loss is fine"), None);
    // A question put to another person; a count of sampling steps.
    assert_eq!(one("did you get this error while running training?"), None);
    assert_eq!(one("it fails when 30 steps of sampling run"), None);
}

#[test]
fn inference_on_a_card_with_a_count_of_inputs_is_the_stage() {
    assert_eq!(one("4090单卡推理1张都会爆显存"), Some(Phase::Inference));
    // The job on its card, the count a card's.
    assert_eq!(one("vllm 推理v2.6 在一张3090 报错显存不够"), None);
    assert_eq!(one("4090单卡推理一张3090都会爆显存"), None);
}

#[test]
fn encoding_inputs_into_vectors_is_inference() {
    assert_eq!(
        one("I am trying to encode around 100 million records using SentenceTransformer"),
        Some(Phase::Inference)
    );
    // A text's or a video's encoding.
    assert_eq!(
        one("I am trying to encode the video with ffmpeg and get an OOM"),
        None
    );
    assert_eq!(one("OOM while encoding the config"), None);
}

#[test]
fn a_training_told_in_the_past_with_the_failure() {
    assert_eq!(
        one("When I trained large-scale datasets, the GPU ran out of memory"),
        Some(Phase::TrainingStep)
    );
    // No failure in the sentence; a model described.
    assert_eq!(one("When I trained it last year it was fine."), None);
    assert_eq!(
        one("a checkpoint trained for 300 epochs gives an OOM"),
        None
    );
}

#[test]
fn others_asked_about_the_reporters_failure_in_a_demo() {
    assert_eq!(
        one("Has anyone encountered the above issue when testing the demo?"),
        Some(Phase::Inference)
    );
    assert_eq!(one("Is testing the demo supported?"), None);
}

#[test]
fn a_model_run_on_media_with_the_failure() {
    assert_eq!(
        one(
            "However, when I run DAV2 using the same image and model on Windows with \
                 ComfyUI, I encounter a torch.OutOfMemoryError."
        ),
        Some(Phase::Inference)
    );
    // No failure in the sentence; a training run on images; advice.
    assert_eq!(one("I run DAV2 on the image every day"), None);
    assert_ne!(
        one("I run training on images and get an OOM"),
        Some(Phase::Inference)
    );
    assert_eq!(
        one("you could run the code on the images with lower resolution, OOM"),
        None
    );
}

#[test]
fn a_training_that_could_not_be_done_at_a_per_step_setting() {
    assert_eq!(
        one("Post update I can't even train batch size 1 at size 768,768"),
        Some(Phase::TrainingStep)
    );
    // Without a setting or the failure: nothing said of the stage.
    assert_eq!(one("Post update I can't even train in kohya anymore"), None);
}

#[test]
fn a_run_that_went_on_for_a_while() {
    for text in [
        "I have tried it on two GPUs, but after running for a period of time, it starts to \
             report errors; the issue occurs 100% of the time.",
        "I am getting `cuda failed with error out of memory` after sometime of running",
        "after several inference,i met this error",
        "The server returns CUDA out of memory after 20 requests",
    ] {
        assert_eq!(one(text), Some(Phase::Inference), "{text}");
    }
    // A training named; no failure; advice.
    assert_ne!(
        one("after running for a while the training crashes with OOM"),
        Some(Phase::Inference)
    );
    assert_eq!(one("after running for a while it gets slow"), None);
    assert_eq!(one("after several requests it gets slow"), None);
    assert_eq!(
        one("if it fails after running for a while, lower the batch"),
        None
    );
}

#[test]
fn a_run_that_went_on_for_a_while_in_chinese() {
    assert_eq!(
        one("设置tp=4，持续运行时显存一直缓慢增长直到oom，如何排查问题？"),
        Some(Phase::Inference)
    );
    // A training named; no failure.
    assert_ne!(
        one("训练持续运行一段时间后报显存不足"),
        Some(Phase::Inference)
    );
    assert_eq!(one("运行一段时间后电脑就卡死了"), None);
    assert_eq!(
            one("显示显存不足。 然后我想使用方法加载，但是分了10000多块？并且运行一段时间后电脑就卡死了。"),
            None
        );
}

#[test]
fn the_trainings_common_misspellings() {
    assert_eq!(
        one("Hello got OOM when tryning traning SDXL lora even try dataset 512px"),
        Some(Phase::TrainingStep)
    );
    assert_eq!(
        one("I am trianing a LoRA and get OOM"),
        Some(Phase::TrainingStep)
    );
    assert_eq!(one("the trainning data is 20 images"), None);
}

#[test]
fn code_named_as_where_the_failure_came() {
    for (text, phase) in [
        (
            "Enabling the standby triggers an immediate CUDA OOM on RTX 4090 (24GB) at the \
                 FastLanguageModel.from_pretrained().",
            Phase::WeightsLoad,
        ),
        (
            "I get an out of memory error, the error location is engine.py (if not \
                 self.dont_change_device: self.module.to(self.device))",
            Phase::WeightsLoad,
        ),
        (
            "# OOM in `set_module_tensor_to_device` of my loading script",
            Phase::WeightsLoad,
        ),
    ] {
        assert_eq!(one(text), Some(phase), "{text}");
    }
    // A traceback's source line is the frames' to read; no failure named; a call no rule
    // reads; a function name that no frame rule maps.
    assert_eq!(
        stage(&two(
            "    self.module.to(self.device)",
            "torch.cuda.OutOfMemoryError: CUDA out of memory here and there"
        )),
        None
    );
    assert_eq!(
        one("I load it with AutoModel.from_pretrained() and it works"),
        None
    );
    assert_eq!(
        one("I get an OOM error when I call foo.bar_baz(x) here"),
        None
    );
    assert_eq!(one("# OOM in `my_helper_function_name` of my script"), None);
}

#[test]
fn merging_an_adapter_is_a_conversion() {
    for text in [
        "合并QLoRA权重报Cuda out of memory",
        "I get CUDA out of memory when merging the LoRA into the base model",
    ] {
        assert_eq!(one(text), Some(Phase::FormatConversion), "{text}");
    }
    assert_eq!(
        one("CUDA out of memory while training the LoRA"),
        Some(Phase::TrainingStep)
    );
}
