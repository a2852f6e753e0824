//! Unit tests of wordings added in session 16: GPU OOMs named in titles, pinned host memory.
//! Every line is synthetic.

use super::tests::one;
use super::*;

/// llama.cpp's `unable to allocate CUDA0 buffer` retyped with a capital in a title is its
/// failure; numpy's host `Unable to allocate … for an array` is not a GPU OOM.
#[test]
fn a_title_unable_to_allocate_a_gpu_buffer_is_a_gpu_oom() {
    let message = one("Unable to allocate ROCm0 buffer after the update to 0.9");
    assert!(message.is_gpu_oom, "{message:#?}");
    let host = parse_text(
        "numpy.core._exceptions._ArrayMemoryError: Unable to allocate 2.50 GiB for an array \
         with shape (1000, 335544) and data type float64",
    );
    assert!(host.iter().all(|m| !m.is_gpu_oom), "{host:#?}");
    assert!(parse_text("Unable to allocate CPU buffer")
        .iter()
        .all(|m| !m.is_gpu_oom));
}

/// PyTorch's OOM class quoted as code in a title, the quote closing it: a mention.
#[test]
fn a_quoted_torch_oom_class_in_a_title_is_a_mention() {
    let messages = parse_text("server fails on startup with `torch.cuda.OutOfMemoryError`");
    assert!(messages.iter().any(|m| m.is_gpu_oom), "{messages:#?}");
    // Advice to catch it is not a report.
    let advice = parse_text("you should handle 'torch.OutOfMemoryError' in the loop");
    assert!(advice.iter().all(|m| !m.is_gpu_oom), "{advice:#?}");
}

/// The bare class in a title is held until the lines after it show GPU work (a TGI launcher's
/// log); Java's class, or no GPU work after it, is not a GPU OOM.
#[test]
fn a_bare_oom_class_in_a_title_needs_gpu_work_after_it() {
    let text = "OutOfMemoryError with a 13b model on two cards\n\
                2024-01-01T00:00:00Z  INFO text_generation_launcher: Starting download process.\n\
                2024-01-01T00:00:01Z  INFO download: text_generation_launcher: Successfully \
                downloaded weights.\n";
    let messages = parse_text(text);
    assert!(messages.iter().any(|m| m.is_gpu_oom), "{messages:#?}");
    let alone = parse_text("OutOfMemoryError when indexing the documents\nthe index has 3M rows\n");
    assert!(alone.iter().all(|m| !m.is_gpu_oom), "{alone:#?}");
    let java = parse_text(
        "java.lang.OutOfMemoryError in the spark driver\nINFO text_generation_launcher: up\n",
    );
    assert!(java.iter().all(|m| !m.is_gpu_oom), "{java:#?}");
}

/// A raw CUDA out-of-memory raised where host memory is pinned is the host's, not the GPU's:
/// the pinning call as the innermost frame, the DataLoader's pin thread, or the host
/// allocator's frames in the message.
#[test]
fn a_raw_cuda_oom_of_a_pinned_host_allocation_is_not_a_gpu_oom() {
    for text in [
        "Traceback (most recent call last):\n  File \"prefetch.py\", line 12, in stage\n    \
         buf = batch.pin_memory()\nRuntimeError: CUDA error: out of memory\n",
        "  File \"cache.py\", line 40, in alloc\n    staging = torch.empty(n, dtype=torch.uint8, \
         pin_memory=True)\nRuntimeError: CUDA error: out of memory\nCUDA kernel errors might be \
         asynchronously reported at some other API call.\n",
        "RuntimeError: Caught RuntimeError in pin memory thread for device 0.\nOriginal \
         Traceback (most recent call last):\n  File \"/usr/lib/torch/utils/data/_utils/worker.py\", \
         line 30, in do_one_step\n    data = fetch()\n  File \"/usr/lib/x/collate.py\", line 9, in \
         run\n    return out\nRuntimeError: CUDA error: out of memory\n",
    ] {
        let messages = parse_text(text);
        assert!(!messages.is_empty(), "{text}");
        assert!(messages.iter().all(|m| !m.is_gpu_oom), "{text}: {messages:#?}");
        assert!(
            messages.iter().any(|m| m.kind == OomKind::HostMemory),
            "{text}: {messages:#?}"
        );
    }
    // A DataLoader built with pin_memory=True far above a device OOM changes nothing, nor does
    // a sentence about the setting.
    let device = parse_text(
        "loader = DataLoader(ds, batch_size=8, pin_memory=True)\nepoch 1\nstep 1\nstep 2\n\
         step 3\nstep 4\n  File \"train.py\", line 88, in step\n    out = model(x)\n\
         RuntimeError: CUDA error: out of memory\n",
    );
    assert!(device.iter().any(|m| m.is_gpu_oom), "{device:#?}");
    let prose = parse_text("I set pin_memory to False\nRuntimeError: CUDA error: out of memory\n");
    assert!(prose.iter().any(|m| m.is_gpu_oom), "{prose:#?}");
}

/// A failure's wording in a conditional clause of advice (a README's or a reply's `If you get
/// …, set …`) reports nothing; the same wording in a report (first person, no advice) does.
#[test]
fn a_failure_wording_in_a_clause_of_advice_is_not_a_failure() {
    for text in [
        "If you get CUDA out of memory, set PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True",
        "Tip: when you see torch.cuda.OutOfMemoryError: CUDA out of memory, reduce the batch",
        "> If you run into \"CUDA out of memory\" errors, try a smaller resolution.",
        "Note: if CUDA error: out of memory happens, lower gpu_memory_utilization",
        "To avoid OOM, use --medvram",
        "In case of CUDA OOM errors, reduce the batch size",
        "The model loads fine. If you see cudaErrorMemoryAllocation, reduce n_gpu_layers",
    ] {
        let messages = parse_text(text);
        assert!(
            messages.iter().all(|m| !m.is_gpu_oom),
            "{text}: {messages:#?}"
        );
    }
    for text in [
        "When I raise the batch to 16, I get CUDA out of memory on the 3090",
        "When running SDXL at 1024px: CUDA out of memory",
        "RuntimeError: CUDA error: out of memory",
        "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 20.00 MiB. GPU 0 has a \
         total capacity of 7.79 GiB of which 3.31 MiB is free.",
    ] {
        let messages = parse_text(text);
        assert!(
            messages.iter().any(|m| m.is_gpu_oom),
            "{text}: {messages:#?}"
        );
    }
}

/// A title's `CUDA out of memory` whose paste ends in an error of another kind (a `ValueError`
/// with no memory word) is not a GPU OOM; a wrapper or a memory word keeps it.
#[test]
fn a_titled_oom_whose_paste_ends_in_another_error_is_not_a_gpu_oom() {
    let other = parse_text(
        "CUDA out of memory when running the demo\n\nTraceback (most recent call last):\n  \
         File \"demo.py\", line 3, in <module>\n    run(x)\nValueError: shapes (4,) and (8,) \
         do not match\n",
    );
    assert!(other.iter().all(|m| !m.is_gpu_oom), "{other:#?}");
    let wrapper = parse_text(
        "CUDA out of memory when running the demo\n\nTraceback (most recent call last):\n  \
         File \"demo.py\", line 3, in <module>\n    run(x)\nRuntimeError: Engine core \
         initialization failed. See root cause above.\n",
    );
    assert!(wrapper.iter().any(|m| m.is_gpu_oom), "{wrapper:#?}");
    let memory = parse_text(
        "CUDA out of memory when loading in 4 bit\nValueError: Some modules are dispatched on \
         the CPU; make sure you have enough GPU RAM to fit the quantized model\n",
    );
    assert!(memory.iter().any(|m| m.is_gpu_oom), "{memory:#?}");
}

/// Ollama's scheduler giving up on placing the layers (`memory layout cannot be allocated`):
/// a GPU OOM in the app's words, named ollama's.
#[test]
fn ollama_memory_layout_cannot_be_allocated_is_a_gpu_oom() {
    for text in [
        "Error: 500 Internal Server Error: memory layout cannot be allocated with num_gpu = 40",
        "level=WARN source=server.go:900 msg=\"memory layout cannot be allocated\" memory=1",
    ] {
        let message = one(text);
        assert!(message.is_gpu_oom, "{text}: {message:#?}");
        assert_eq!(message.engine_hint, Some(EngineName::Ollama), "{text}");
    }
}

/// The GPU's memory named short in a European language's question or title is a mention; the
/// memory alone (the host's as often) is not.
#[test]
fn gpu_memory_named_short_in_european_languages_is_a_mention() {
    for text in [
        "При запуске на RTX 3060 не хватает видеопамяти",
        "Ошибка: недостаточно памяти GPU при загрузке модели",
        "Al generar imágenes me quedo sin memoria de GPU",
        "Erro: memória insuficiente na GPU ao treinar",
        "Errore: memoria GPU insufficiente con batch 8",
        "Erreur : mémoire GPU insuffisante pendant l'entraînement",
        "Beim Training: nicht genügend VRAM auf der Karte",
    ] {
        let messages = parse_text(text);
        assert!(
            messages.iter().any(|m| m.is_gpu_oom),
            "{text}: {messages:#?}"
        );
    }
    for text in [
        "Ошибка: недостаточно памяти",
        "Error: memoria insuficiente",
        "nicht genügend Arbeitsspeicher",
    ] {
        let messages = parse_text(text);
        assert!(
            messages.iter().all(|m| !m.is_gpu_oom),
            "{text}: {messages:#?}"
        );
    }
}

/// The TPU runtime's largest contiguous free region is kept beside its free total.
#[test]
fn tpu_runtime_largest_contiguous_region_is_kept() {
    let message = one(
        "RuntimeError: RESOURCE_EXHAUSTED: Attempting to allocate 12.00M. That was not \
         possible. There are 20.00M free. Due to fragmentation, the largest contiguous region \
         of free memory is 8.00M.; (0x0x0_HBM0)",
    );
    assert_eq!(
        message.details.largest_free_block_bytes,
        Some(Bytes(8 * 1024 * 1024))
    );
}

/// A failure's wording in a forecast (a warning before a run, an engine's caution) reports
/// nothing; a report that says it happened does, hedged words elsewhere or not.
#[test]
fn a_failure_wording_in_a_forecast_is_not_a_failure() {
    for text in [
        "2026-01-05 10:00:01,003 WARNING score: only 1.8 GiB free on cuda:0; CUDA out of memory \
         errors are likely with batch_size=256",
        "WARNING: max_model_len is large, which may cause OOM during profiling",
        "This might lead to out of memory on smaller cards.",
        "[warn] the cache is at risk of running out of memory",
        "Note: CUDA OOM may occur when the resolution is above 2048",
    ] {
        let messages = parse_text(text);
        assert!(
            messages.iter().all(|m| !m.is_gpu_oom),
            "{text}: {messages:#?}"
        );
    }
    for text in [
        "It is likely a bug: RuntimeError: CUDA error: out of memory",
        "I get CUDA out of memory when the batch is 64, which is likely too big",
        "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a \
         total capacity of 79.19 GiB of which 1.10 GiB is free.",
    ] {
        let messages = parse_text(text);
        assert!(
            messages.iter().any(|m| m.is_gpu_oom),
            "{text}: {messages:#?}"
        );
    }
}
