//! Tests of the cause rules: one OOM message and its context in, the cause and its evidence
//! out.

use super::*;

use crate::model::failure::{OomFigures, OtherProcess};

const GIB: u64 = 1 << 30;

fn gib_f(value: f64) -> Option<Bytes> {
    Some(Bytes::from_gib_f64(value))
}

fn message(kind: OomKind, figures: OomFigures) -> OomMessage {
    OomMessage {
        kind,
        is_gpu_oom: true,
        engine_hint: None,
        figures,
        line: 1,
        stream: None,
        exception: Some("torch.OutOfMemoryError".to_string()),
        text: "CUDA out of memory.".to_string(),
        end_line: 1,
        details: Default::default(),
        t_ms: None,
    }
}

/// The cause for one message, with the engine and phase given.
fn cause_of(failure: &OomMessage, engine: EngineName, phase: Phase) -> Cause {
    cause_in(failure, engine, phase, &EngineMemory::default())
}

/// The cause for one message, with the engine, phase and the engine's own memory figures.
fn cause_in(
    failure: &OomMessage,
    engine: EngineName,
    phase: Phase,
    memory: &EngineMemory,
) -> Cause {
    let engine = EngineInfo {
        name: engine,
        version: None,
        generation: None,
        evidence_line: None,
    };
    let phase = PhaseReport {
        failed_in: phase,
        last_completed: None,
        server_was_ready: None,
        prompt_can_be_cause: None,
        evidence: Vec::new(),
    };
    let versions = BTreeMap::new();
    let inputs = VerdictInputs {
        failure: Some(failure),
        messages: std::slice::from_ref(failure),
        engine: &engine,
        config: &EngineConfig::default(),
        model: None,
        memory,
        versions: &versions,
        phase: &phase,
        timeline: &[],
        shutdown_line: None,
        holders_said: None,
        capacity_said: None,
    };
    decide(&inputs).cause
}

fn pytorch(tried: f64, total: f64, free: f64, allocated: f64, unallocated: f64) -> OomMessage {
    message(
        OomKind::PytorchTotalCapacity,
        OomFigures {
            tried_to_allocate_bytes: gib_f(tried),
            total_capacity_bytes: gib_f(total),
            free_bytes: gib_f(free),
            allocated_by_pytorch_bytes: gib_f(allocated),
            reserved_unallocated_bytes: gib_f(unallocated),
            ..Default::default()
        },
    )
}

#[test]
fn a_start_that_filled_the_card_itself_is_not_another_process() {
    // TGI shard start: 15.37 GiB of 15.77 GiB allocated by this process, 13.62 MiB free.
    let failure = pytorch(0.125, 15.77, 0.0133, 15.37, 0.03);
    let cause = cause_of(&failure, EngineName::Tgi, Phase::Startup);
    assert_eq!(cause, Cause::CapacityExhausted);
    // Nothing held by this process and nothing free: the card was taken before it started.
    let failure = pytorch(0.125, 15.77, 0.0133, 0.0, 0.0);
    let cause = cause_of(&failure, EngineName::Tgi, Phase::Startup);
    assert!(matches!(
        cause,
        Cause::FreeMemoryBelowRequested | Cause::OtherProcessesHoldMemory
    ));
}

#[test]
fn a_little_cache_on_a_full_card_is_capacity_not_fragmentation() {
    // 1.5 GiB cached of a 24 GiB card, 2 GiB asked, 0.3 GiB free.
    let failure = pytorch(2.0, 24.0, 0.3, 22.0, 1.5);
    let cause = cause_of(&failure, EngineName::Pytorch, Phase::TrainingStep);
    assert_eq!(cause, Cause::TrainingMemory);
    // A training step at ~98 % of the card with a cache just above the request.
    let failure = pytorch(1.0, 139.8, 0.68, 137.26, 1.13);
    let cause = cause_of(&failure, EngineName::Pytorch, Phase::TrainingStep);
    assert_eq!(cause, Cause::TrainingMemory);
}

#[test]
fn a_large_cache_against_the_request_is_fragmentation() {
    let failure = pytorch(2.0, 24.0, 0.1, 3.9, 20.0);
    let cause = cause_of(&failure, EngineName::Pytorch, Phase::TrainingStep);
    assert_eq!(cause, Cause::FragmentationPlausible);
}

#[test]
fn engines_with_a_kv_pool_are_never_led_by_fragmentation() {
    let failure = pytorch(2.0, 24.0, 0.1, 3.9, 20.0);
    for engine in [EngineName::Vllm, EngineName::Sglang] {
        let cause = cause_of(&failure, engine, Phase::Inference);
        assert_eq!(cause, Cause::InferenceLoad, "{engine:?}");
    }
}

#[test]
fn a_process_holding_little_of_a_full_card_points_at_other_processes() {
    let mut failure = pytorch(0.5, 24.0, 0.0, 1.5, 0.2);
    failure.figures.process_in_use_bytes = gib_f(2.0);
    let cause = cause_of(&failure, EngineName::Pytorch, Phase::TrainingStep);
    assert_eq!(cause, Cause::OtherProcessesHoldMemory);
    // Only PyTorch's reserve known (PyTorch ≤ 2.0): 9.8 GiB of an 80 GiB card, 0 free.
    let failure = message(
        OomKind::PytorchReservedInTotal,
        OomFigures {
            tried_to_allocate_bytes: gib_f(0.09),
            total_capacity_bytes: gib_f(79.35),
            free_bytes: gib_f(0.03),
            allocated_by_pytorch_bytes: gib_f(9.78),
            reserved_total_bytes: gib_f(9.8),
            ..Default::default()
        },
    );
    let cause = cause_of(&failure, EngineName::Deepspeed, Phase::TrainingStep);
    assert_eq!(cause, Cause::OtherProcessesHoldMemory);
    // A card this process filled itself is not.
    let mut failure = pytorch(0.22, 15.58, 0.07, 13.64, 0.07);
    failure.figures.process_in_use_bytes = gib_f(13.94);
    let cause = cause_of(&failure, EngineName::Sglang, Phase::Inference);
    assert_ne!(cause, Cause::OtherProcessesHoldMemory);
}

#[test]
fn free_within_a_few_mib_of_the_request_is_not_room() {
    // SGLang on a 4090: 20.00 MiB asked, 20.38 MiB free, PID 5403 holds 21.69 GiB.
    let mut failure = pytorch(20.0 / 1024.0, 23.53, 20.38 / 1024.0, 1.34, 0.09);
    failure.figures.process_in_use_bytes = gib_f(1.81);
    failure.figures.other_processes = vec![OtherProcess {
        pid: 5403,
        in_use_bytes: gib_f(21.69),
    }];
    let cause = cause_of(&failure, EngineName::Sglang, Phase::Unknown);
    assert_eq!(cause, Cause::OtherProcessesHoldMemory);
}

#[test]
fn nvml_not_available_for_this_process_is_no_figure() {
    let mut failure = pytorch(0.02, 24.0, 0.0, 23.01, 0.12);
    failure.figures.process_in_use_bytes = Some(OomFigures::NVML_NOT_AVAILABLE);
    let cause = cause_of(&failure, EngineName::Transformers, Phase::Unknown);
    assert_eq!(cause, Cause::CapacityExhausted);
    let lines = crate::analyze::accounting::lines(Some(&failure), &Default::default());
    assert!(
        lines.iter().all(|line| line.bytes.get() < 1 << 60),
        "{lines:?}"
    );
}

#[test]
fn its_own_process_line_inside_a_container_is_not_another_process() {
    let mut failure = pytorch(0.0625, 14.74, 0.037, 14.36, 0.0);
    failure.figures.reserved_unallocated_bytes = None;
    failure.figures.other_processes = vec![OtherProcess {
        pid: 207160,
        in_use_bytes: gib_f(14.70),
    }];
    let cause = cause_of(&failure, EngineName::Exllamav2, Phase::KvCacheAlloc);
    assert_ne!(cause, Cause::OtherProcessesHoldMemory);
}

#[test]
fn exabytes_are_an_overflow_and_a_bit_over_the_card_is_not() {
    // A wrapped size of ~16 EiB (issue text: 17179869183.95 GiB) and one of 127 TiB.
    let failure = pytorch(1.0e9, 23.65, 18.8, 3.15, 0.1);
    let cause = cause_of(&failure, EngineName::Pytorch, Phase::TrainingStep);
    assert_eq!(cause, Cause::SizeOverflow);
    let failure = message(
        OomKind::OtherGpuOom,
        OomFigures {
            tried_to_allocate_bytes: gib_f(131_064.9),
            ..Default::default()
        },
    );
    let cause = cause_of(&failure, EngineName::Tensorflow, Phase::Unknown);
    assert_eq!(cause, Cause::SizeOverflow);
    // 16 GiB asked of a 15.24 GiB card: too large, but a real allocation.
    let failure = pytorch(16.0, 15.24, 15.09, 0.0, 0.0);
    let cause = cause_of(&failure, EngineName::Pytorch, Phase::Unknown);
    assert_eq!(cause, Cause::RequestLargerThanGpu);
    let absurd = message(OomKind::PytorchAbsurdSize, OomFigures::default());
    assert_eq!(
        cause_of(&absurd, EngineName::Pytorch, Phase::Unknown),
        Cause::SizeOverflow
    );
    assert!(Bytes(GIB) < OVERFLOW_BYTES);
}

#[test]
fn a_request_beyond_any_card_is_larger_than_the_gpu_without_its_total() {
    // 1,000 GiB asked, the card's total not printed: no GPU has that much.
    let failure = message(
        OomKind::PytorchTotalCapacity,
        OomFigures {
            tried_to_allocate_bytes: gib_f(1_000.0),
            ..Default::default()
        },
    );
    let cause = cause_of(&failure, EngineName::Pytorch, Phase::Inference);
    assert_eq!(cause, Cause::RequestLargerThanGpu);
    // 100 GiB without a total: a card of 141 GB could hold it, the rules below decide.
    let failure = message(
        OomKind::PytorchTotalCapacity,
        OomFigures {
            tried_to_allocate_bytes: gib_f(100.0),
            ..Default::default()
        },
    );
    let cause = cause_of(&failure, EngineName::Pytorch, Phase::Inference);
    assert_ne!(cause, Cause::RequestLargerThanGpu);
}

#[test]
fn jax_failing_to_preallocate_is_memory_held_elsewhere() {
    let mut failure = message(OomKind::XlaResourceExhausted, OomFigures::default());
    failure.text = "RESOURCE_EXHAUSTED: : CUDA_ERROR_OUT_OF_MEMORY: out of memory === Source Location Trace: === external/xla+/xla/stream_executor/cuda/cuda_status.cc:45".to_string();
    let cause = cause_of(&failure, EngineName::Jax, Phase::Unknown);
    assert_eq!(cause, Cause::FreeMemoryBelowRequested);
    failure.text =
        "RESOURCE_EXHAUSTED: Out of memory while trying to allocate 4770354232 bytes.".to_string();
    let cause = cause_of(&failure, EngineName::Jax, Phase::Unknown);
    assert_ne!(cause, Cause::FreeMemoryBelowRequested);
}

/// JAX's pool that backed off, then a jitted computation's request: a start failure unless
/// steps were logged before it (then the program outgrew its pool).
#[test]
fn jax_oom_after_work_is_no_start_failure() {
    let mut backoff = message(OomKind::XlaResourceExhausted, OomFigures::default());
    backoff.text = "Failed to allocate device memory of 30.00GiB: RESOURCE_EXHAUSTED".to_string();
    backoff.details.requested_memory_bytes = Some(Bytes(30 * GIB));
    let mut late = message(OomKind::XlaResourceExhausted, OomFigures::default());
    late.line = 40;
    late.text = "RESOURCE_EXHAUSTED: Out of memory while trying to allocate 123 bytes.".to_string();
    let engine = EngineInfo {
        name: EngineName::Jax,
        version: None,
        generation: None,
        evidence_line: None,
    };
    let step = TimelineEvent {
        kind: EventKind::TrainingStep,
        phase: Phase::TrainingStep,
        line: 20,
        timestamp: None,
        seconds_since_start: None,
        stream: None,
        figures: Default::default(),
        count: 1,
        last_line: None,
        text: "step 10 loss 2.1".to_string(),
        t_ms: None,
    };
    let phase = PhaseReport {
        failed_in: Phase::Unknown,
        last_completed: None,
        server_was_ready: None,
        prompt_can_be_cause: None,
        evidence: Vec::new(),
    };
    let versions = BTreeMap::new();
    let memory = EngineMemory::default();
    let config = EngineConfig::default();
    let cause_with = |failure: &OomMessage, messages: &[OomMessage], timeline: &[TimelineEvent]| {
        decide(&VerdictInputs {
            failure: Some(failure),
            messages,
            engine: &engine,
            config: &config,
            model: None,
            memory: &memory,
            versions: &versions,
            phase: &phase,
            timeline,
            shutdown_line: None,
            holders_said: None,
            capacity_said: None,
        })
        .cause
    };
    let both = [backoff.clone(), late.clone()];
    // The pool backed off at start, then the first computation failed in it: held elsewhere.
    assert_eq!(
        cause_with(&late, &both, &[]),
        Cause::FreeMemoryBelowRequested
    );
    // Steps were logged before the computation failed: the program outgrew its pool.
    assert_eq!(
        cause_with(&late, &both, std::slice::from_ref(&step)),
        Cause::CapacityExhausted
    );
    // A bare CUDA error after logged steps: not the start either.
    let mut bare = late.clone();
    bare.text = "RESOURCE_EXHAUSTED: CUDA_ERROR_OUT_OF_MEMORY: out of memory \
        xla/stream_executor/cuda/cuda_driver.cc:1"
        .to_string();
    assert_eq!(
        cause_with(&bare, std::slice::from_ref(&bare), &[]),
        Cause::FreeMemoryBelowRequested
    );
    assert_ne!(
        cause_with(&bare, std::slice::from_ref(&bare), &[step]),
        Cause::FreeMemoryBelowRequested
    );
}

#[test]
fn versions_compare() {
    assert!(at_least(Some("0.6.3.post1"), &[0, 5, 3], false));
    assert!(!at_least(Some("0.4.2"), &[0, 5, 3], false));
    assert!(at_least(None, &[0, 5, 3], true));
    assert!(at_least(Some("2.11.0+cu130"), &[2, 10], false));
    assert!(!at_least(Some("2.0"), &[2, 1], false));
}

/// The verdict over several messages (the first is the failure).
fn verdict_of(messages: &[OomMessage]) -> Verdict {
    let engine = EngineInfo {
        name: EngineName::Other,
        version: None,
        generation: None,
        evidence_line: None,
    };
    let phase = PhaseReport {
        failed_in: Phase::Unknown,
        last_completed: None,
        server_was_ready: None,
        prompt_can_be_cause: None,
        evidence: Vec::new(),
    };
    let versions = BTreeMap::new();
    decide(&VerdictInputs {
        failure: messages.first(),
        messages,
        engine: &engine,
        config: &EngineConfig::default(),
        model: None,
        memory: &EngineMemory::default(),
        versions: &versions,
        phase: &phase,
        timeline: &[],
        shutdown_line: None,
        holders_said: None,
        capacity_said: None,
    })
}

fn host(kind: OomKind, line: u64, text: &str) -> OomMessage {
    OomMessage {
        is_gpu_oom: false,
        line,
        end_line: line,
        exception: None,
        text: text.to_string(),
        ..message(kind, OomFigures::default())
    }
}

#[test]
fn a_kill_without_evidence_of_memory_is_not_called_host_memory() {
    let mut killed = host(OomKind::KilledBySignal, 3, "Exit Code: 137");
    killed.details.exit_code = Some(137);
    let verdict = verdict_of(std::slice::from_ref(&killed));
    assert_eq!(verdict.cause, Cause::KilledBySignal);
    assert!(
        verdict.headline.contains("the cause is not shown"),
        "{}",
        verdict.headline
    );
    assert!(
        verdict.headline.contains("exit code 137"),
        "{}",
        verdict.headline
    );
    assert_eq!(verdict.owner_class, OwnerClass::NotGpuMemory);

    // The same kill with the kernel's line: host memory, with the kernel's figures.
    let mut kernel = host(
        OomKind::HostMemory,
        7,
        "Memory cgroup out of memory: Killed process 42 (python)",
    );
    kernel.end_line = 9;
    kernel.details.killed_pid = Some(42);
    kernel.details.killed_process = Some("python".to_string());
    kernel.details.killed_rss_bytes = Some(Bytes(30 * GIB));
    kernel.details.killed_anon_rss_bytes = Some(Bytes(29 * GIB));
    kernel.details.host_usage_bytes = Some(Bytes(32 * GIB));
    kernel.details.host_limit_bytes = Some(Bytes(32 * GIB));
    kernel.details.oom_constraint = Some("CONSTRAINT_MEMCG".to_string());
    let verdict = verdict_of(&[killed, kernel]);
    assert_eq!(verdict.cause, Cause::HostMemory);
    let evidence = verdict.evidence.join("\n");
    assert!(
        evidence.contains(
            "lines 7–9: the kernel's OOM killer killed process 42 (python), which held 30.00 GiB"
        ),
        "{evidence}"
    );
    assert!(
        evidence.contains("usage 32.00 GiB of limit 32.00 GiB (34359738368 bytes"),
        "{evidence}"
    );
    assert!(
        verdict.next_steps[0].contains("above its 32.00 GiB"),
        "{:?}",
        verdict.next_steps
    );
}

#[test]
fn a_cache_small_against_an_image_pipelines_request_is_not_fragmentation() {
    // A VAE decode of 2.5 GiB on an 8 GiB card: 1.2 GiB free, 1.6 GiB cached (under three
    // quarters of the request), 4.5 GiB of live tensors.
    let failure = pytorch(2.5, 8.0, 1.2, 4.5, 1.6);
    let cause = cause_of(&failure, EngineName::Automatic1111, Phase::Inference);
    assert_eq!(cause, Cause::InferenceLoad);
    // The cache all but holds the request (15.93 of 16 GiB) and free memory adds 10.48 GiB.
    let failure = pytorch(16.0, 47.99, 10.48, 18.36, 15.93);
    let cause = cause_of(&failure, EngineName::Automatic1111, Phase::Inference);
    assert_eq!(cause, Cause::FragmentationPlausible);
}

/// The cause with the engine's own start-up figures given (while loading weights).
fn cause_with_memory(failure: &OomMessage, engine: EngineName, memory: &EngineMemory) -> Cause {
    cause_in(failure, engine, Phase::WeightsLoad, memory)
}

#[test]
fn little_free_memory_when_the_engine_started_points_at_other_processes() {
    // TensorFlow started with 448 MiB of a 24 GiB card; its own pool then ran out.
    let failure = message(OomKind::TensorflowBfc, OomFigures::default());
    let memory = EngineMemory {
        free_at_start: Some(Bytes(448 << 20)),
        total_gpu: Some(Bytes(24 * GIB)),
        ..Default::default()
    };
    let cause = cause_with_memory(&failure, EngineName::Tensorflow, &memory);
    assert_eq!(cause, Cause::OtherProcessesHoldMemory);
    // SGLang's "avail mem" at the start of its weight load: 10 of 80 GiB.
    let failure = pytorch(0.5, 80.0, 0.2, 9.0, 0.1);
    let memory = EngineMemory {
        free_at_start: Some(Bytes(10 * GIB)),
        ..Default::default()
    };
    let cause = cause_with_memory(&failure, EngineName::Sglang, &memory);
    assert_eq!(cause, Cause::OtherProcessesHoldMemory);
    // Most of the card free at start: the run itself filled it.
    let memory = EngineMemory {
        free_at_start: Some(Bytes(78 * GIB)),
        ..Default::default()
    };
    let failure = pytorch(0.5, 80.0, 0.2, 77.0, 0.1);
    let cause = cause_with_memory(&failure, EngineName::Sglang, &memory);
    assert_ne!(cause, Cause::OtherProcessesHoldMemory);
}

#[test]
fn automatic1111_advice_names_forges_own_memory_settings() {
    let failure = pytorch(2.5, 8.0, 1.2, 4.5, 1.6);
    let engine = EngineInfo {
        name: EngineName::Automatic1111,
        version: None,
        generation: None,
        evidence_line: None,
    };
    let phase = PhaseReport {
        failed_in: Phase::Inference,
        last_completed: None,
        server_was_ready: None,
        prompt_can_be_cause: None,
        evidence: Vec::new(),
    };
    let versions = BTreeMap::new();
    let inputs = VerdictInputs {
        failure: Some(&failure),
        messages: std::slice::from_ref(&failure),
        engine: &engine,
        config: &EngineConfig::default(),
        model: None,
        memory: &EngineMemory::default(),
        versions: &versions,
        phase: &phase,
        timeline: &[],
        shutdown_line: None,
        holders_said: None,
        capacity_said: None,
    };
    let steps = decide(&inputs).next_steps.join("\n");
    assert!(steps.contains("--medvram"), "{steps}");
    assert!(steps.contains("\"GPU Weights\""), "{steps}");
    assert!(steps.contains("\"Never OOM Integrated\""), "{steps}");
}

/// The reporter's words that other programs held the memory decide the cause when the figures
/// do not; not when the message shows this process holding most of the card.
#[test]
fn reporter_saying_other_programs_held_memory() {
    let failure = message(OomKind::OtherGpuOom, OomFigures::default());
    let engine = EngineInfo {
        name: EngineName::Pytorch,
        version: None,
        generation: None,
        evidence_line: None,
    };
    let phase = PhaseReport {
        failed_in: Phase::WeightsLoad,
        last_completed: None,
        server_was_ready: None,
        prompt_can_be_cause: None,
        evidence: Vec::new(),
    };
    let versions = BTreeMap::new();
    let memory = EngineMemory::default();
    let config = EngineConfig::default();
    let cause_with = |failure: &OomMessage, holders_said: Option<u64>| {
        decide(&VerdictInputs {
            failure: Some(failure),
            messages: std::slice::from_ref(failure),
            engine: &engine,
            config: &config,
            model: None,
            memory: &memory,
            versions: &versions,
            phase: &phase,
            timeline: &[],
            shutdown_line: None,
            holders_said,
            capacity_said: None,
        })
        .cause
    };
    assert_eq!(cause_with(&failure, None), Cause::WeightsDoNotFit);
    assert_eq!(
        cause_with(&failure, Some(9)),
        Cause::OtherProcessesHoldMemory
    );
    // 20 of 24 GiB held by this process: its own load fills the card.
    let full = pytorch(1.0, 24.0, 0.5, 20.0, 0.5);
    assert_ne!(cause_with(&full, Some(9)), Cause::OtherProcessesHoldMemory);
}

/// The TPU compiler's HBM check with no stage shown: the program's own buffers against the
/// chip, capacity; with a stage shown, that stage's cause.
#[test]
fn tpu_hbm_check_is_capacity() {
    let mut failure = message(OomKind::XlaResourceExhausted, OomFigures::default());
    failure.text =
        "RESOURCE_EXHAUSTED: Ran out of memory in memory space hbm. Used 9.50G of 8.00G hbm."
            .to_string();
    assert_eq!(
        cause_of(&failure, EngineName::Jax, Phase::Unknown),
        Cause::CapacityExhausted
    );
    assert_eq!(
        cause_of(&failure, EngineName::Jax, Phase::TrainingStep),
        Cause::TrainingMemory
    );
}

/// The text saying the card is too small decides a cause no figure decides; not against a
/// reporter naming other holders.
#[test]
fn words_that_the_card_is_too_small() {
    let failure = message(OomKind::CudaErrorOutOfMemory, OomFigures::default());
    let engine = EngineInfo {
        name: EngineName::Pytorch,
        version: None,
        generation: None,
        evidence_line: None,
    };
    let phase = PhaseReport {
        failed_in: Phase::Unknown,
        last_completed: None,
        server_was_ready: None,
        prompt_can_be_cause: None,
        evidence: Vec::new(),
    };
    let versions = BTreeMap::new();
    let memory = EngineMemory::default();
    let config = EngineConfig::default();
    let cause_with = |capacity_said: Option<u64>, holders_said: Option<u64>| {
        decide(&VerdictInputs {
            failure: Some(&failure),
            messages: std::slice::from_ref(&failure),
            engine: &engine,
            config: &config,
            model: None,
            memory: &memory,
            versions: &versions,
            phase: &phase,
            timeline: &[],
            shutdown_line: None,
            holders_said,
            capacity_said,
        })
        .cause
    };
    assert_eq!(cause_with(None, None), Cause::Unknown);
    assert_eq!(cause_with(Some(9), None), Cause::CapacityExhausted);
    assert_eq!(
        cause_with(Some(9), Some(4)),
        Cause::OtherProcessesHoldMemory
    );
}

/// The allocator reporting enough free in total but a largest contiguous region below the
/// request is fragmentation whatever the stage; a largest region above it says nothing.
#[test]
fn a_largest_free_region_below_the_request_is_fragmentation() {
    let figures = OomFigures {
        tried_to_allocate_bytes: gib_f(0.5),
        free_bytes: gib_f(0.9),
        ..OomFigures::default()
    };
    let mut failure = message(OomKind::XlaResourceExhausted, figures);
    failure.details.largest_free_block_bytes = gib_f(0.4);
    assert_eq!(
        cause_of(&failure, EngineName::Jax, Phase::TrainingStep),
        Cause::FragmentationPlausible
    );
    failure.details.largest_free_block_bytes = gib_f(0.6);
    assert_ne!(
        cause_of(&failure, EngineName::Jax, Phase::TrainingStep),
        Cause::FragmentationPlausible
    );
}

/// A raw CUDA out-of-memory read as pinned host memory gets the pinning advice first.
#[test]
fn pinned_host_memory_gets_pinning_advice() {
    let mut failure = message(OomKind::HostMemory, OomFigures::default());
    failure.is_gpu_oom = false;
    failure.text = "RuntimeError: CUDA error: out of memory".to_string();
    let steps = super::host_memory_steps(&failure);
    assert!(
        steps
            .first()
            .is_some_and(|step| step.contains("pin_memory")),
        "{steps:?}"
    );
    failure.text = "MemoryError: Unable to allocate 2.00 GiB".to_string();
    let steps = super::host_memory_steps(&failure);
    assert!(
        steps.iter().all(|step| !step.contains("pin_memory")),
        "{steps:?}"
    );
}
