//! The labelled corpus (`tests/fixtures/corpus/`, schema in its README): real failure texts
//! from public issue threads and from the H200, each with what a careful reader concludes.
//! `explain` runs on every text; the scores per measure must stay at or above the floors below,
//! and every text's outcome is pinned by a snapshot.
//!
//! `scripts/score_corpus.sh` prints the score tables (per engine, per family, per measure);
//! `OOMDOC_CORPUS_MISSES=1` lists every miss with what was expected and what came out;
//! `OOMDOC_CORPUS_ONLY=<file>` scores only the texts that file lists (one path a line, relative
//! to the corpus, `#` comments), e.g. a batch of new texts before any rule is changed for them
//! (their "unseen" score); the floors are then not checked.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use oomdoc::analyze::explain::explain_reader;
use oomdoc::model::explain::{Cause, ExplainReport, Phase};
use serde::Deserialize;

/// Floors per measure (a fraction of the texts the measure applies to): what `explain`
/// reaches today, so that no change makes it worse. The targets are 0.97 (GPU OOM), 0.97
/// (figures), 0.85 (phase), 0.90 (engine), 0.90 (unknown kept), 0.90 (cause). A floor moves
/// up with the score; it moves down only when new, harder texts join the corpus (the
/// seventh session's 87 blind texts from public issues took phase from 0.89 to 0.83; the
/// eighth session's 91 blind public-issue texts, at 0.44 phase on first contact, from 0.87 to
/// 0.81, and GPU OOM from 0.99 to 0.98; the ninth session's 101 blind public-issue texts, at
/// 0.38 phase on first contact, from 0.82 to 0.77, GPU OOM to 0.97, unknown kept and cause
/// to 0.94; the tenth session's 82 blind public-issue texts and 18 blind H200 texts, at 0.51
/// and 0.71 phase on first contact, from 0.77 to 0.74, GPU OOM to 0.96, unknown kept to
/// 0.92; the session's merged work then took GPU OOM to 0.977 and phase to 0.764, and the
/// floors follow: GPU OOM 0.97, phase 0.76, unknown kept 0.91 with six new texts of which
/// five keep it; the eleventh session's 105 blind public-issue texts and 20 blind H200 texts,
/// at 0.38 and 0.56 phase and 0.82 GPU OOM on first contact, took GPU OOM to 0.96, figures to
/// 0.97, phase to 0.71, engine to 0.95, unknown kept to 0.90 and cause to 0.93; the session's
/// merged work then took GPU OOM to 0.974, phase to 0.781 and cause to 0.943, and the floors
/// follow, except unknown kept: reading the reporter's sentences for the stage (+42 phase)
/// gives a stage to three texts labelled unknown, 0.896, floor 0.89); the twelfth session's 18
/// blind H200 texts, at 7/11 phase on first contact, took phase from 0.781 to 0.779, and its
/// 104 blind public-issue texts, at 0.55 phase and 0.92 GPU OOM on first contact, took GPU OOM
/// to 0.970, figures to 0.960, phase to 0.756 and cause to 0.937; the session's merged work
/// then took GPU OOM to 0.977, figures to 0.980, phase to 0.778 and cause to 0.942, and the
/// floors follow; the thirteenth session's 112 blind public-issue texts and 28 blind H200 texts
/// (0.58 and 0.54 phase on first contact) and its merged work left GPU OOM at 0.971, figures
/// 0.991, phase 0.791, engine 0.963, unknown kept 0.903 and cause 0.945, and the floors follow;
/// the fourteenth session's 115 blind public-issue texts and 21 blind H200 texts (0.67 and 0.71
/// phase, 0.73 and 1.00 unknown kept on first contact) took unknown kept to 0.880; the session's
/// merged work then left GPU OOM at 0.976, figures 0.992, phase 0.807, engine 0.962, unknown
/// kept 0.900 and cause 0.956, and the floors follow; the fifteenth session's 107 blind
/// public-issue texts and 24 blind H200 texts (0.54 and 0.67 phase, 0.84 and 1.00 engine, 0.66
/// and 1.00 unknown kept on first contact) and its merged work left GPU OOM at 0.972, figures
/// 0.992, phase 0.811, engine 0.956, unknown kept 0.894 and cause 0.955: engine to 0.95 and
/// unknown kept to 0.89 for the new texts; the sixteenth session's 104 blind public-issue texts
/// and 26 blind H200 texts (0.64 and 0.42 phase, 0.89 and 1.00 engine, 0.83 and 1.00 unknown
/// kept on first contact) and its merged work left GPU OOM at 0.972, figures 0.990, phase 0.813,
/// engine 0.955, unknown kept 0.897 and cause 0.958: the floors stay; the seventeenth
/// session's 128 blind public-issue texts and 24 blind H200 texts (0.59 and 0.41 phase, 0.91
/// and 0.96 GPU OOM on first contact) took GPU OOM to 0.969 and phase to 0.799; the eighteenth
/// session's merged work then left GPU OOM at 0.979, figures 0.990, phase 0.850, engine 0.958,
/// unknown kept 0.900 and cause 0.960, and the floors follow; the nineteenth session's 65 blind
/// public-issue texts (0.58 phase, 0.56 figures, 0.85 cause on first contact: Ascend NPU
/// messages, MXNet's storage manager, prose-only reports) took figures to 0.981 and cause to
/// 0.957, and the floors follow them down (0.98, 0.95); with its 13 blind H200 texts the
/// session's work then left GPU OOM at 0.977, figures 0.989, phase 0.847, engine 0.956,
/// unknown kept 0.900 and cause 0.959 on 1851 texts; its second blind batch (78 texts from
/// forums and less-covered projects, 0.37 phase on first contact) and the work after it left
/// GPU OOM at 0.974, figures 0.983, phase 0.841, engine 0.955, unknown kept 0.901 and cause
/// 0.959 on 1929 texts; the twentieth session's 70 blind public texts and 23 blind H200 texts
/// (0.57 and 0.75 phase, 0.91 and 0.96 GPU OOM, 0.76 and 0.91 engine, 0.79 and 1.00 unknown
/// kept on first contact) and its work left GPU OOM at 0.974, figures 0.981, phase 0.847,
/// engine 0.951, unknown kept 0.898 and cause 0.957 on 2022 texts: unknown kept to 0.89 for
/// the new texts; the twenty-first session's 87 blind texts and its work left GPU OOM at 0.973,
/// phase 0.849, engine 0.952 and cause 0.954 on 2109 texts; the twenty-second session's 67
/// blind public texts and 16 blind H200 texts (0.37 and 0.63 phase, 0.70 and 1.00 GPU OOM, 0.79
/// and 1.00 engine on first contact; 7 of the public texts are pages that only quote an OOM,
/// guides, an error catalogue and a pull request, which `explain` reads as reports), its second
/// batch of 24 public reports (0.56 phase, 0.96 GPU OOM on first contact), a second H200 batch
/// of 13 texts (11/13 phase on first contact) and its work left GPU OOM at 0.968, figures 0.981,
/// phase 0.836, engine 0.948, unknown kept 0.894 and cause 0.946 on 2229 texts, and the floors
/// follow them down (GPU OOM 0.96, phase 0.83, engine and cause 0.94); the twenty-third
/// session's 104 blind texts and its work left GPU OOM at 0.969, figures 0.981, phase 0.833,
/// engine 0.949, unknown kept 0.897 and cause 0.945 on 2345 texts; the twenty-fourth session's
/// 31 blind public texts and 14 blind H200 texts (12/21 and 8/11 phase, 30/31 and 14/14 GPU OOM
/// on first contact) and its work left GPU OOM at 0.969, figures 0.982, phase 0.831, engine
/// 0.949, unknown kept 0.895 and cause 0.945 on 2390 texts: the floors stay; the twenty-fifth
/// session's 40 blind public texts, most of them excerpts cut mid-traceback from niche projects
/// (15/33 phase, 35/40 GPU OOM, 15/19 figures on first contact; 21/33, 38/40 and 17/19 after
/// its rules) and 13 blind H200 texts (3/10 phase, 13/13 GPU OOM and engine on first contact,
/// 5/10 after; two labellers agreed on 11 of the 13 phases) left GPU OOM at 0.969, figures
/// 0.981, phase 0.827, engine 0.948, unknown kept 0.897 and cause 0.945 on 2443 texts: the
/// phase floor follows them down to 0.82. The twenty-sixth session's five blind batches (40
/// public issue texts: 15/31 phase on first contact, 25/40 engine; 22 more on serving and LLM
/// training: 10/15; 12 from Q&A and forum pages: 4/9; 13, 13, 9 and 8 H200 texts: 7/10, 5/11,
/// 6/8 and 5/8) and their rules left GPU OOM at 0.971, figures 0.982, phase 0.829, engine 0.944,
/// unknown kept 0.896 and cause 0.948 on 2560 texts: the floors stay. The twenty-seventh
/// session's fifteen blind batches (209 texts: twelve public ones from serving and local engines,
/// training, forums and niche repositories, Chinese, Japanese and Korean threads, recent serving
/// and post-training, media apps, research code, local runtimes, TensorFlow and JAX, multi-GPU
/// training and host kills, speech and OCR, Apple, Ascend and other accelerators; three made on
/// the H200: 94/161 phase on first contact, 117/161 after its rules) left GPU OOM at 0.972,
/// figures 0.981, phase 0.828, engine 0.943, unknown kept 0.888 and cause 0.948 on 2769 texts.
/// Their labellers read a training named without its progress (`when I started training`,
/// `Training failed`) as `unknown` more often than the earlier ones did (154 of the corpus's
/// labels of such words say training_step, 40 unknown; this session's 5 of 5 say unknown): the
/// unknown-kept floor follows them down to 0.88. The twenty-eighth session's fifteen blind
/// batches (186 texts: ROCm, Intel and Apple users, serving engines, training stacks, media apps,
/// research frameworks, local LLM apps, research repositories, the Hugging Face ecosystem, the
/// newest reports, non-English ones, issue search at random, distributed jobs, desktop users,
/// and one batch made on the H200; 62/144 phase on first contact, 79/144 after its rules) are
/// harder than the corpus before them (reports of the user's words alone, apps of no engine of
/// the list) and left GPU OOM at 0.973, figures 0.975, phase 0.807, engine 0.935, unknown kept
/// 0.888 and cause 0.945 on 2955 texts: figures, phase and engine follow them down to 0.97,
/// 0.80 and 0.93. The twenty-ninth session's seventeen blind batches (153 texts: serving
/// engines, fine-tuning stacks, speech and video, vision and 3D code, generic searches, local
/// and image apps, JAX/TF/Paddle, distributed jobs, notebooks, non-English reports, cloud
/// deployments, multimodal and RAG apps, RL and science; phase on first contact 41/71 for the
/// first eleven, 16/40 for the last six, collected after the session's rules) left GPU OOM at
/// 0.974, figures 0.972, phase 0.793, engine 0.932, unknown kept 0.888 and cause 0.944 on 3108
/// texts: phase follows them down to 0.79. The thirtieth session's fifteen blind batches (145
/// texts; first contact: 33/48 phase and 60/78 engine for the first eight, from serving
/// engines, fine-tuning, image and video apps, local LLMs, evaluation and OCR, research code
/// and generic and older reports; 18/49 phase, 36/47 figures and 57/67 engine for the last
/// seven, from everyday words, Windows desktop apps, multi-GPU runs, non-PyTorch runtimes
/// (TensorRT builds, XGBoost, OpenVINO), notebooks, non-English reports, containers and
/// non-NVIDIA accelerators; one of them made the parser panic, fixed; then 39 more from
/// serving engines, speech, video and 3D, multimodal and RL training, message words and
/// Lightning/Keras/JAX research code: 17/34 phase, 39/39 GPU OOM on first contact) and its
/// rules left GPU OOM at 0.974, figures 0.969, phase 0.782, engine 0.929, unknown kept 0.889
/// and cause 0.937 on 3292 texts: figures, phase, engine and cause follow them down to 0.96,
/// 0.78, 0.92 and 0.93. The thirty-first session's 156 blind texts (62 from science and
/// robotics, graph and tabular work, LLM apps, vision, diffusion training, pre-training, forum
/// posts and small apps: 13/39 phase on first contact, most of them told in the reporter's
/// words; 40 from vLLM/SGLang, ollama/llama.cpp, fine-tuning, image apps and generic 2025-2026
/// reports, 18/27 with the first 62's rules; 54 from other serving engines, multi-GPU training,
/// JAX/TF, compilers, speech, Chinese model repositories and older reports, 14/40 with the
/// first 102's rules) and its rules left GPU OOM at 0.974, figures 0.965, phase 0.773, engine
/// 0.922, unknown kept 0.883 and cause 0.933 on 3448 texts: the phase floor follows it down to
/// 0.77. The thirty-second session's 64 blind texts (vLLM V1 and SGLang, llama.cpp and ollama,
/// fine-tuning stacks, image and audio apps, TensorRT-LLM and Xinference, research code: 24/43
/// phase, 60/64 GPU OOM and 36/46 cause on first contact; their causes are mostly judgement
/// calls between capacity, fragmentation and other processes on a full card) and its rules
/// left GPU OOM at 0.974, figures 0.965, phase 0.772, engine 0.922, unknown kept 0.884 and
/// cause 0.930 on 3512 texts: the cause floor follows it down to 0.92. The thirty-third
/// session's 102 blind texts (50 from generic PyTorch and Hugging Face reports, apps, Chinese,
/// Korean and Russian threads: 15/40 phase and 31/50 engine on first contact; 42 from serving
/// and local inference, training and research code: 17/28 phase and 35/42 engine with the
/// first 50's rules; 10 from forums and blogs: 7/7 phase and 10/10 engine) and its rules left
/// GPU OOM at 0.974, figures 0.966, phase 0.769, engine 0.920, unknown kept 0.882 and cause
/// 0.929 on 3614 texts: the phase floor follows it down to 0.76. The thirty-ninth session's
/// 34 blind texts scored after its rules (image, video and audio apps; LLM fine-tuning and RL
/// frameworks: 13/26 phase, 29/34 GPU OOM, 5/8 unknown kept) left unknown kept at 0.879
/// (1187/1350: three RL reports naming the job, "OOMs at step 13", "during the PPO training",
/// "the rollout inference phase", read as its stage): that floor follows it down to 0.87. The
/// forty-fourth session's 166 blind texts (classic NLP, GAN and restoration apps, pre-training,
/// Chinese reports, local agents; biology tools, RL, time series and speech, export and
/// compression, engines' start-up logs: 68/115 phase and 40/51 unknown kept on first contact)
/// and its rules left unknown kept at 0.869 (1437/1654; the texts the rules read before are
/// unchanged; the new misses are reporters' words naming the job or the run, "I tried to train
/// by following your scripts", "errors during inference for sequences that are too long",
/// which the labels leave unknown): that floor follows it down to 0.86. The forty-fifth
/// session's 230 blind texts (TF1/Keras research code, 2023 chat-model training, diffusion
/// training repos, video understanding, offloaded inference, Windows and WSL2, shared GPUs,
/// long-context generation, courses, offline batch jobs; scientific ML, generic vision
/// training, serving gateways, image editing and captioning, classic leak threads: 91/152
/// phase on first contact) and its rules left phase at 0.760 (2623/3452; three texts read
/// wrong before now right, one title's `after 3 epochs` now read as the training's progress
/// against its label): the phase floor follows it down to 0.75. The forty-sixth session's 446
/// blind texts in three rounds (3D perception to older frameworks; geospatial to code LLMs;
/// web apps, medical imaging, TTS, multimodal training, low-precision training, ASR, AMD
/// data-centre GPUs, notebooks) and its rules left unknown kept at 0.858 (1659/1933; of the
/// older texts one more kept; the new misses are prose-only host-memory reports naming the
/// fine-tuning job, which no host message marks as such, and "after one epoch" left unknown
/// against the audit's rule 2c): that floor follows it down to 0.85. The forty-seventh
/// session's 239 blind texts in two rounds (Rust, JVM/.NET and C++ bindings, Vulkan/mobile/
/// browser engines, R/MATLAB/Julia, anomaly detection and re-identification, 3D reconstruction,
/// new architectures, inference-acceleration research; non-NVIDIA accelerators, video
/// upscaling apps, AUTOMATIC1111 extensions, graph networks, 2023 RLHF stacks, older
/// distributed frameworks, GPU-library handle failures, reports in other languages: 52/113
/// phase on first contact, most of the rest told only in the reporter's words or cut before
/// the stage) and its rules left phase at 0.746 (2841/3810; of the older texts two more read
/// right, none wrong); a third round of 43 (speech-to-speech models, server load tests,
/// multi-LoRA serving, music generation, diffusion distillation, GPU simulation codes: 8/23
/// phase on first contact, 12/23 after its rules) left it at 0.744 (2853/3833), and a fourth
/// of 78 (agentic RL, GPU vector search, cluster serving platforms, Windows ML runtimes, GPU
/// dataframes, real-time avatar apps, chat front-ends, Ray: 24/44 phase and 67/78 GPU OOM on
/// first contact with the session's earlier rules, 25/44 and 72/78 after its own) at 0.742
/// (2878/3877), and a fifth of 47 (Blackwell cards, video-generation serving, pathology models,
/// llama.cpp's Python bindings, hand-written CUDA C/C++, Triton for non-LLM models: 13/26 phase
/// and 46/47 GPU OOM on first contact, 16/26 after its rules) at 0.742 (2895/3903): the phase
/// floor follows them down to 0.74. The forty-eighth session's 211 blind texts in two rounds
/// (ggml programs beyond llama.cpp, identity and try-on apps, image restoration, NLP libraries,
/// model editing and robustness, point clouds, optical flow and matting, genomics; video LLMs,
/// captioning jobs, audio classification, distributed LLM inference, allocator settings, small
/// cards, Keras 3, long-context training: 53/124 phase on first contact, 56/124 after its rules,
/// most of the rest told only in the reporter's words or cut before the failure by the index
/// they came from) left phase at 0.733 (2950/4027; of the older texts two more read right, one
/// wrong): the phase floor follows it down to 0.73. A third round of 94 (open-vocabulary
/// detection, test-time adaptation and few-shot learning, reasoning scripts, human body and
/// motion models, learned compression and spiking networks, tabular and knowledge-graph models,
/// trajectory and crowd models, explainability: 27/54 phase on first contact, 29/54 after its
/// rules) left it just under that (2979/4081, 72.997 %), and cause just under 0.92 (3208/3487,
/// 91.997 %; of the session's 11 new misses, 7 are capacity or host labels read from the
/// reporter's words, which the tool leaves unknown or finds no GPU message in): the phase floor
/// follows it down to 0.72, the cause floor to 0.91. A fourth round of 64 (OCR vision-language
/// models, unified multimodal models, conversion tooling, diffusion acceleration, streaming
/// ASR, text-to-image training, neural style transfer, physiological signals: 17/33 phase and
/// 57/64 engine on first contact, 21/33 and 61/64 after its rules) left phase at 0.729
/// (3000/4114) and cause at 0.920 (3235/3517). The fiftieth session's 223 blind texts in two
/// rounds (vLLM's V0 engine, the QLoRA year, the SDXL year's web UIs, llama.cpp and ollama of
/// 2023-2024, DeepSpeed/FSDP, TGI and TEI, TensorRT-LLM, Q&A sites; SGLang 0.1-0.4,
/// transformers of 2024, ComfyUI of 2024, ollama of 2024, Whisper apps, diffusers' training
/// scripts, OpenMMLab and YOLO training, Keras and TensorFlow 2) kept unknown at 61/91 on first
/// contact, 64/91 after its rules (their labellers leave unknown the reports that name the job,
/// `when fine-tuning 13B`, `OOM when start the training`, or a checkpoint's save, and the
/// reports whose only stage is a maintainer's or another user's comment): unknown kept at
/// 0.845 (2103/2490), and that floor follows it down to 0.84. A third round of 121 (Lightning
/// 1.x, LLaMA-Factory, text-generation-webui of 2023, Axolotl and Unsloth, InvokeAI/Fooocus/
/// Forge, AMD consumer cards, Apple and Intel GPUs, vLLM's pooling and multimodal models:
/// 42/86 phase and 111/121 GPU OOM on first contact, 52/86 and 118/121 after its rules) left
/// GPU OOM at 0.967, figures 0.961, phase 0.724, engine 0.935, unknown kept 0.843 and cause
/// 0.920 on 7002 texts. The fifty-first session's 360 blind texts in three rounds (vLLM of 2023,
/// transformers of 2020-2022, PyTorch 0.x tracebacks, llama.cpp and ollama of 2025, Stable
/// Diffusion of 2022, TensorFlow 1.x, LMDeploy and MLC-LLM, Unsloth/TRL/PEFT of 2025;
/// DeepSpeed/Megatron/NeMo of 2025, ComfyUI's custom nodes, ultralytics and SAM 2, text-
/// generation-webui and ExLlamaV2, SGLang of 2025, Lightning 2.x, diffusers of 2025, Windows
/// users; ASR of 2025, transformers of 2025, vLLM's V1 of 2025, Forge and SD.Next, kohya-ss of
/// 2023, accelerate and PEFT, video generation of 2023-2024, model makers' threads) kept unknown
/// at 86/117 on first contact and after its rules (their labellers leave unknown the reports
/// that name the job, a title-only OOM over a cut log, a commenter's advice): unknown kept at
/// 0.839 (2216/2642), and that floor follows it down to 0.83. Phase went 145/243 on first
/// contact, 166/243 after the rules; GPU OOM 331/360 and 341/360. The corpus then stood at GPU
/// OOM 0.967, figures 0.961, phase 0.722, engine 0.935, unknown kept 0.839 and cause 0.920 on
/// 7362 texts. A fourth round of 91 (Jetson boards, TensorFlow 2.0-2.4, PyTorch 1.5-1.13 model
/// repositories, llama.cpp of 2024, vLLM of late 2024, Detectron2 and MMDetection 2.x, Triton and
/// TensorRT, ComfyUI of 2023; cut short when the session's search budget ran out) scored GPU OOM
/// 85/91, phase 31/56 and unknown kept 27/35 on first contact, phase 34/56 after its rules: GPU
/// OOM 0.966, figures 0.960, phase 0.721, engine 0.934, unknown kept 0.838 and cause 0.920 on
/// 7453 texts. The fifty-second session's 481 blind texts in five rounds (vLLM and SGLang of late
/// 2025, TensorRT-LLM, ONNX Runtime apps, speech synthesis, 3D vision, Rust stacks, pre-training
/// frameworks; protein structure, RL post-training, forums, medical imaging, multimodal LLMs,
/// embeddings, desktop LLM apps, JAX; TGI of 2024-2025, llama.cpp of 2023, diffusion training,
/// image apps, detection repositories, speech of 2022-2024, quantization tools, Kubernetes and
/// clouds; vLLM of early 2024, PyTorch core, transformers of 2023-2024, TensorFlow 2.10+,
/// non-NVIDIA accelerators, time series and tabular, robotics, Chinese LLM repositories; OCR,
/// image restoration, distributed training, graph and scientific ML, evaluation harnesses) were
/// harder than the corpus: most threads in the search store were already in it, so many texts
/// are search excerpts cut before the error, titles or the reporter's prose. On first contact
/// they scored GPU OOM 437/481, figures 130/146, phase 170/319, engine 439/481, unknown kept
/// 136/162, cause 203/223; after the session's rules 444/481, 135/146, 182/319, 441/481, 136/162
/// and 204/223. The corpus then stood at GPU OOM 0.964, figures 0.959, phase 0.711, engine
/// 0.933, unknown kept 0.838 and cause 0.919 on 7934 texts: the figures floor follows it down to
/// 0.955 and the phase floor to 0.71.
///
/// Session 53 added 307 blind texts in 24 batches (GPU data science and gradient boosting, RL
/// and robotics simulation, medical imaging, Apple silicon and other accelerators, non-Python
/// frameworks, serving infrastructure, LLM training frameworks, computational biology; speech,
/// vision-language models, image restoration, detection training, LLM inference libraries,
/// non-English reports, recommendation and time series, hosted notebooks; diffusion fine-tuning
/// tools, video and 3D generation, TensorRT-LLM, vLLM's later V1 releases, desktop llama.cpp
/// apps, PyTorch core, Q&A threads, forum threads). On first contact they scored GPU OOM
/// 277/307, figures 78/84, phase 112/208, engine 280/307, unknown kept 80/99, cause 128/158;
/// after the session's rules 281/307, 81/84, 116/208, 281/307, 80/99 and 130/158. The corpus then
/// stood at GPU OOM 0.962, figures 0.959, phase 0.706, engine 0.932, unknown kept 0.837 and cause
/// 0.916 on 8241 texts: the phase floor follows it down to 0.70.
///
/// Session 54 added 374 blind texts in 38 batches (PaddlePaddle and other non-PyTorch stacks,
/// Keras and JAX training, speech synthesis, graph and sparse-convolution nets, NeRF and
/// Gaussian splatting, quantization tools, evaluation and RLHF, Chinese LLM repositories;
/// avatars, retrieval stacks, chat front-ends relaying an engine, scientific ML, cluster
/// operations, custom kernels, classification, video and depth; diffusion fine-tuning scripts,
/// segmentation, GANs, classic NLP, LLM application frameworks, export toolchains, MoE and long
/// context, image-generation repositories; Kaggle, small pre-training, translation, code LLMs,
/// other inference engines, distributed training, desktop diffusion apps, mobile and Vulkan GPUs;
/// hosted demos, document AI, fine-tuning front ends, grounding models, geospatial, pose). On
/// first contact they scored GPU OOM 347/374, figures 134/147, phase 131/231, engine 353/374,
/// unknown kept 115/143, cause 200/223; after the session's rules 356/374, 136/147, 142/231,
/// 353/374, 117/143 and 200/223. The corpus then stood at GPU OOM 0.962, figures 0.958, phase
/// 0.703, engine 0.933, unknown kept 0.836 and cause 0.915 on 8615 texts: the floors stand.
///
/// Session 55 added 314 blind texts in 32 batches, from fields the corpus had not yet drawn on
/// (PyTorch-native LLM fine-tuning, RL rollouts, GPU computing outside deep learning and its
/// renderers, AutoML, voice conversion, molecular dynamics and cryo-EM, state-space models,
/// driving perception; serving frameworks, captioning tools, speech toolkits, ROCm, image
/// editing, LLM training libraries, JAX research code, WebGPU and Vulkan; omni models, NVIDIA
/// NIM, 3D reconstruction, cloud platforms, compression research, KoboldAI, 2026 reports,
/// protein models; robot policies, video LLMs, video codecs, physics simulators, Rust and .NET
/// runtimes, ModelScope, 2025 image models, reasoning research). On first contact they scored
/// GPU OOM 284/314, figures 90/106, phase 92/187, engine 305/314, unknown kept 112/127, cause
/// 158/192; after the session's rules 300/314, 97/106, 111/187, 305/314, 112/127 and 168/192.
/// The corpus then stood at GPU OOM 0.962, figures 0.958, phase 0.700 (4004/5721, a text short
/// of it), engine 0.934, unknown kept 0.837 and cause 0.913 on 8929 texts (the texts before it
/// gained 4 phases and 2 figures and lost 2 unknowns kept): the phase floor follows it down to
/// 0.695.
///
/// Session 56 added 304 blind texts in 31 batches (embedding models and vector search,
/// diffusion fine-tuning trainers, frame interpolation, time-series models, face swapping,
/// image-to-3D, point clouds, self-supervised vision; weather models, new LLM architectures,
/// self-hosted chat apps, data pipelines, diffusion research code, vision-language pretraining,
/// audio classification, depth and optical flow; DirectML and ZLUDA, LLM fine-tuning
/// frameworks, code assistants, re-identification and tracking, Kubernetes serving, federated
/// learning, small pre-training, memory-saving optimizers; agent frameworks, single-cell and
/// genomics models, action recognition, DETR-family detectors, meta-learning, molecular models,
/// JAX and TPU stacks). On first contact they scored GPU OOM 289/304, figures 102/114, phase
/// 88/185, engine 291/304, unknown kept 99/119, cause 161/182; after the session's rules
/// 298/304, 108/114, 98/185, 291/304, 100/119 and 165/182. The corpus then stood at GPU OOM
/// 0.962, figures 0.958, phase 0.696 (4109/5906), engine 0.935, unknown kept 0.837 and cause
/// 0.914 on 9233 texts (the texts before it gained 7 phases, 1 figure, 1 GPU verdict and 2
/// causes and lost 1 unknown kept, net): the floors stand.
const FLOORS: [(Measure, f64); 6] = [
    (Measure::GpuOom, 0.96),
    (Measure::Figures, 0.955),
    (Measure::PhaseShown, 0.695),
    (Measure::Engine, 0.92),
    (Measure::UnknownKept, 0.83),
    (Measure::Cause, 0.91),
];

/// One label file.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Label {
    source: String,
    #[serde(default)]
    #[allow(
        dead_code,
        reason = "read by people and by corpus/cite.py, not by the scorer"
    )]
    what: Option<String>,
    gpu_oom: bool,
    family: String,
    engine: Vec<String>,
    phase: String,
    #[serde(default)]
    phase_why: Option<String>,
    #[serde(default)]
    cause: Option<String>,
    #[serde(default)]
    figures: BTreeMap<String, serde_json::Value>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Measure {
    GpuOom,
    Figures,
    PhaseShown,
    Engine,
    UnknownKept,
    Cause,
}

impl Measure {
    const ALL: [Measure; 6] = [
        Measure::GpuOom,
        Measure::Figures,
        Measure::PhaseShown,
        Measure::Engine,
        Measure::UnknownKept,
        Measure::Cause,
    ];

    fn name(self) -> &'static str {
        match self {
            Measure::GpuOom => "gpu-oom",
            Measure::Figures => "figures",
            Measure::PhaseShown => "phase",
            Measure::Engine => "engine",
            Measure::UnknownKept => "unknown",
            Measure::Cause => "cause",
        }
    }
}

/// Hits and totals of one measure.
#[derive(Debug, Default, Clone, Copy)]
struct Score {
    hits: u32,
    total: u32,
}

impl Score {
    fn add(&mut self, hit: bool) {
        self.total += 1;
        self.hits += u32::from(hit);
    }

    fn fraction(self) -> f64 {
        if self.total == 0 {
            1.0
        } else {
            f64::from(self.hits) / f64::from(self.total)
        }
    }

    fn cell(self) -> String {
        if self.total == 0 {
            "-".to_string()
        } else {
            format!("{}/{}", self.hits, self.total)
        }
    }
}

type Scores = BTreeMap<Measure, Score>;

fn corpus_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/corpus")
}

/// Every `*.txt` under the corpus with its label, sorted by path.
fn corpus() -> Vec<(PathBuf, Label)> {
    corpus_of(|_| true)
}

/// The `*.txt` under the corpus that `wanted` keeps, with their labels, sorted by path (texts
/// left out need no label yet: a batch can be scored while another is being labelled).
fn corpus_of(wanted: impl Fn(&Path) -> bool) -> Vec<(PathBuf, Label)> {
    let mut texts = Vec::new();
    let mut stack = vec![corpus_dir()];
    while let Some(dir) = stack.pop() {
        let entries = std::fs::read_dir(&dir).unwrap_or_else(|e| panic!("{}: {e}", dir.display()));
        for entry in entries {
            let path = entry
                .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
                .path();
            if path.is_dir() {
                stack.push(path);
            } else if path.extension().is_some_and(|e| e == "txt") && wanted(&path) {
                let label_path = path.with_extension("label.json");
                let raw = std::fs::read(&label_path)
                    .unwrap_or_else(|e| panic!("{}: no label: {e}", path.display()));
                let label: Label = serde_json::from_slice(&raw)
                    .unwrap_or_else(|e| panic!("{}: bad label: {e}", label_path.display()));
                texts.push((path, label));
            }
        }
    }
    texts.sort_by(|a, b| a.0.cmp(&b.0));
    texts
}

/// Bytes of a labelled size: `"1.96 GiB"`, `"20 MiB"`, `"123 bytes"`, or a number of bytes.
/// GB/MB/KB are binary, as PyTorch, llama.cpp and ggml print them.
fn label_bytes(value: &serde_json::Value) -> Option<u64> {
    label_size(value).map(|(bytes, _)| bytes)
}

/// Bytes of a labelled size and how far a value may be from it and still print the same
/// (half a unit of the last printed digit).
fn label_size(value: &serde_json::Value) -> Option<(u64, u64)> {
    if let Some(bytes) = value.as_u64() {
        return Some((bytes, 0));
    }
    let text = value.as_str()?.trim().replace(',', "");
    let split = text
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(text.len());
    let (number_text, unit) = text.split_at(split);
    // A whole count of bytes is read exactly (an f64 holds 53 bits: `4547406516732812544
    // bytes`, an overflowed request, would round).
    if matches!(
        unit.trim().to_ascii_lowercase().as_str(),
        "" | "b" | "bytes" | "byte"
    ) {
        if let Ok(bytes) = number_text.parse::<u64>() {
            return Some((bytes, 0));
        }
    }
    let number: f64 = number_text.parse().ok()?;
    let scale: f64 = match unit.trim().to_ascii_lowercase().as_str() {
        "" | "b" | "bytes" | "byte" => 1.0,
        "kib" | "kb" | "k" => 1024.0,
        "mib" | "mb" | "m" => 1024.0 * 1024.0,
        "gib" | "gb" | "g" => 1024.0 * 1024.0 * 1024.0,
        "tib" | "tb" => 1024.0 * 1024.0 * 1024.0 * 1024.0,
        "pib" | "pb" => 1024f64.powi(5),
        "eib" | "eb" => 1024f64.powi(6),
        _ => return None,
    };
    let decimals = number_text_decimals(number_text);
    let slack = 0.5 * scale / 10f64.powi(decimals);
    Some(((number * scale).round() as u64, slack.ceil() as u64))
}

fn number_text_decimals(number: &str) -> i32 {
    number
        .split_once('.')
        .map_or(0, |(_, fraction)| fraction.len() as i32)
}

/// The coarse cause class of the corpus labels.
fn coarse_cause(report: &ExplainReport) -> &'static str {
    if !report.is_gpu_oom {
        return "not_gpu";
    }
    match report.verdict.cause {
        Cause::OtherProcessesHoldMemory | Cause::FreeMemoryBelowRequested => "other_process",
        Cause::FragmentationPlausible => "fragmentation",
        Cause::SizeOverflow => "overflow",
        Cause::HostMemory | Cause::KilledBySignal | Cause::IllegalMemoryAccess => "not_gpu",
        Cause::Unknown => "unknown",
        _ => "capacity",
    }
}

fn json_name<T: serde::Serialize>(value: &T) -> String {
    serde_json::to_value(value)
        .ok()
        .and_then(|v| v.as_str().map(str::to_string))
        .unwrap_or_default()
}

/// What `explain` said of one text, as pinned by its snapshot.
#[derive(Debug, serde::Serialize)]
struct Outcome {
    is_gpu_oom: bool,
    kind: Option<String>,
    engine: String,
    phase: String,
    phase_evidence: Vec<String>,
    cause: String,
    headline: String,
    oom: Option<serde_json::Value>,
}

fn outcome(report: &ExplainReport) -> Outcome {
    let primary = report
        .ooms
        .iter()
        .find(|m| m.is_gpu_oom)
        .or(report.ooms.first());
    Outcome {
        is_gpu_oom: report.is_gpu_oom,
        kind: primary.map(|m| json_name(&m.kind)),
        engine: json_name(&report.engine.name),
        phase: report.phase.failed_in.as_str().to_string(),
        phase_evidence: report.phase.evidence.clone(),
        cause: json_name(&report.verdict.cause),
        headline: report.verdict.headline.clone(),
        oom: report
            .oom
            .as_ref()
            .map(|o| serde_json::to_value(o).unwrap_or_default()),
    }
}

/// Scores one text; misses are described in `misses`.
fn score(label: &Label, report: &ExplainReport, scores: &mut Scores, misses: &mut Vec<String>) {
    let mut check = |measure: Measure, hit: bool, what: String| {
        scores.entry(measure).or_default().add(hit);
        if !hit {
            misses.push(format!("{}: {what}", measure.name()));
        }
    };
    check(
        Measure::GpuOom,
        report.is_gpu_oom == label.gpu_oom,
        format!(
            "expected gpu_oom={}, got {}",
            label.gpu_oom, report.is_gpu_oom
        ),
    );
    if label.gpu_oom && !label.figures.is_empty() {
        let oom = report
            .oom
            .as_ref()
            .map(|o| serde_json::to_value(o).unwrap_or_default());
        let mut wrong = Vec::new();
        for (key, expected) in &label.figures {
            let got = oom.as_ref().and_then(|o| {
                if key == "gpu_index" {
                    o.get("gpu_index").and_then(serde_json::Value::as_u64)
                } else {
                    o.get(format!("{key}_bytes"))
                        .and_then(serde_json::Value::as_u64)
                }
            });
            // `"more than 1EB"`: the message prints a lower bound, not the size (PyTorch's
            // `Tried to allocate more than 1EB memory`); oomdoc must report that bound exactly
            // and name the field in `lower_bound_fields`.
            let bound = expected
                .as_str()
                .and_then(|text| text.trim().strip_prefix("more than "));
            let want = if key == "gpu_index" {
                expected.as_u64().map(|index| (index, 0))
            } else if let Some(bound) = bound {
                label_size(&bound.into()).map(|(bytes, _)| (bytes, 0))
            } else {
                label_size(expected)
            };
            let marked_bound = oom
                .as_ref()
                .and_then(|o| o.get("lower_bound_fields"))
                .and_then(serde_json::Value::as_array)
                .is_some_and(|fields| {
                    fields
                        .iter()
                        .any(|field| field.as_str() == Some(&format!("{key}_bytes")))
                });
            let ok = match (want, got) {
                (Some((w, _)), Some(g)) if bound.is_some() => w == g && marked_bound,
                (Some((w, slack)), Some(g)) => w.abs_diff(g) <= slack.max(1) && !marked_bound,
                _ => false,
            };
            if !ok {
                wrong.push(format!(
                    "{key}: expected {expected} ({want:?}), got {got:?}"
                ));
            }
        }
        check(Measure::Figures, wrong.is_empty(), wrong.join("; "));
    }
    if !label.gpu_oom && !label.figures.is_empty() {
        // Host-memory figures: from the messages' `details` (the kernel prints a kill over
        // several messages: each figure is taken from the first message that has it).
        let details: Vec<serde_json::Value> = report
            .ooms
            .iter()
            .filter(|message| !message.is_gpu_oom)
            .map(|message| serde_json::to_value(&message.details).unwrap_or_default())
            .collect();
        let mut wrong = Vec::new();
        for (key, expected) in &label.figures {
            let plain = matches!(key.as_str(), "killed_pid" | "exit_code");
            let field = if plain {
                key.clone()
            } else {
                format!("{key}_bytes")
            };
            let got = details
                .iter()
                .find_map(|d| d.get(&field).and_then(serde_json::Value::as_i64));
            let ok = match got {
                Some(got) if plain => expected.as_i64() == Some(got),
                Some(got) => label_size(expected)
                    .is_some_and(|(w, slack)| w.abs_diff(got as u64) <= slack.max(1)),
                None => false,
            };
            if !ok {
                wrong.push(format!("{key}: expected {expected}, got {got:?}"));
            }
        }
        check(Measure::Figures, wrong.is_empty(), wrong.join("; "));
    }
    let got_phase = report.phase.failed_in;
    if label.phase == "unknown" {
        check(
            Measure::UnknownKept,
            got_phase == Phase::Unknown,
            format!("expected unknown, got {}", got_phase.as_str()),
        );
    } else {
        check(
            Measure::PhaseShown,
            got_phase.as_str() == label.phase,
            format!(
                "expected {} ({}), got {}",
                label.phase,
                label.phase_why.as_deref().unwrap_or("?"),
                got_phase.as_str()
            ),
        );
    }
    let engine = json_name(&report.engine.name);
    check(
        Measure::Engine,
        label.engine.contains(&engine),
        format!("expected {:?}, got {engine}", label.engine),
    );
    if let Some(cause) = &label.cause {
        let got = coarse_cause(report);
        check(
            Measure::Cause,
            got == cause,
            format!(
                "expected {cause}, got {got} ({})",
                json_name(&report.verdict.cause)
            ),
        );
    }
}

fn table(title: &str, rows: &BTreeMap<String, Scores>) -> String {
    let mut out = format!("\n{title:<22}");
    for measure in Measure::ALL {
        let _ = write!(out, " {:>9}", measure.name());
    }
    out.push('\n');
    for (name, scores) in rows {
        let _ = write!(out, "{name:<22}");
        for measure in Measure::ALL {
            let cell = scores.get(&measure).copied().unwrap_or_default().cell();
            let _ = write!(out, " {cell:>9}");
        }
        out.push('\n');
    }
    out
}

fn explain_file(path: &Path) -> ExplainReport {
    let file = std::fs::File::open(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    explain_reader(std::io::BufReader::new(file))
        .unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

#[test]
#[allow(
    clippy::print_stderr,
    reason = "the score tables are this test's report (scripts/score_corpus.sh shows them)"
)]
fn corpus_scores_meet_the_floors() {
    let only = std::env::var_os("OOMDOC_CORPUS_ONLY").map(PathBuf::from);
    let texts;
    if let Some(list) = &only {
        let listed = std::fs::read_to_string(list)
            .unwrap_or_else(|e| panic!("OOMDOC_CORPUS_ONLY={}: {e}", list.display()));
        let wanted: Vec<PathBuf> = listed
            .lines()
            .map(str::trim)
            .filter(|line| !line.is_empty() && !line.starts_with('#'))
            .map(|line| corpus_dir().join(line))
            .collect();
        texts = corpus_of(|path| wanted.iter().any(|w| w == path));
        if let Some(missing) = wanted
            .iter()
            .find(|path| !texts.iter().any(|(p, _)| p == *path))
        {
            panic!(
                "OOMDOC_CORPUS_ONLY={}: {} is not a corpus text",
                list.display(),
                missing.display()
            );
        }
    } else {
        texts = corpus();
        assert!(texts.len() >= 100, "corpus has only {} texts", texts.len());
    }
    let mut total = Scores::new();
    let mut by_engine: BTreeMap<String, Scores> = BTreeMap::new();
    let mut by_family: BTreeMap<String, Scores> = BTreeMap::new();
    let mut by_group: BTreeMap<String, Scores> = BTreeMap::new();
    let mut miss_lines = Vec::new();
    let root = corpus_dir();
    for (path, label) in &texts {
        let report = explain_file(path);
        let mut scores = Scores::new();
        let mut misses = Vec::new();
        score(label, &report, &mut scores, &mut misses);
        let relative = path
            .strip_prefix(&root)
            .unwrap_or(path)
            .display()
            .to_string();
        let group = relative.split('/').next().unwrap_or("").to_string();
        for (measure, score) in &scores {
            for target in [
                total.entry(*measure).or_default(),
                by_engine
                    .entry(label.engine[0].clone())
                    .or_default()
                    .entry(*measure)
                    .or_default(),
                by_family
                    .entry(label.family.clone())
                    .or_default()
                    .entry(*measure)
                    .or_default(),
                by_group
                    .entry(group.clone())
                    .or_default()
                    .entry(*measure)
                    .or_default(),
            ] {
                target.hits += score.hits;
                target.total += score.total;
            }
        }
        for miss in misses {
            miss_lines.push(format!("{relative}: {miss}"));
        }
    }
    let mut report = format!("corpus: {} texts\n", texts.len());
    report.push_str(&table("group", &by_group));
    report.push_str(&table("engine (label)", &by_engine));
    report.push_str(&table("family (label)", &by_family));
    report.push_str(&table(
        "all",
        &BTreeMap::from([("all".to_string(), total.clone())]),
    ));
    if std::env::var_os("OOMDOC_CORPUS_MISSES").is_some() {
        report.push_str("\nmisses:\n");
        for line in &miss_lines {
            report.push_str(line);
            report.push('\n');
        }
    }
    eprintln!("{report}");
    if only.is_some() {
        return;
    }
    let mut below = Vec::new();
    for (measure, floor) in FLOORS {
        let score = total.get(&measure).copied().unwrap_or_default();
        if score.fraction() < floor {
            below.push(format!(
                "{}: {} = {:.1} % < {:.0} %",
                measure.name(),
                score.cell(),
                score.fraction() * 100.0,
                floor * 100.0
            ));
        }
    }
    assert!(
        below.is_empty(),
        "below the floors:\n{}\n(OOMDOC_CORPUS_MISSES=1 lists the misses)",
        below.join("\n")
    );
}

#[test]
fn corpus_outcomes_are_pinned() {
    let root = corpus_dir();
    let mut settings = insta::Settings::clone_current();
    settings.set_snapshot_path("snapshots/corpus");
    settings.set_prepend_module_to_snapshot(false);
    settings.bind(|| {
        for (path, _) in corpus() {
            let name = path
                .strip_prefix(&root)
                .unwrap_or(&path)
                .display()
                .to_string()
                .replace('/', "__");
            insta::assert_json_snapshot!(name, outcome(&explain_file(&path)));
        }
    });
}

#[test]
fn label_sizes_are_read_as_binary() {
    assert_eq!(label_bytes(&"1.96 GiB".into()), Some(2_104_533_975));
    assert_eq!(label_bytes(&"20.00 MiB".into()), Some(20 * 1024 * 1024));
    assert_eq!(label_bytes(&"123456 bytes".into()), Some(123_456));
    assert_eq!(
        label_bytes(&"4547406516732812544 bytes".into()),
        Some(4_547_406_516_732_812_544)
    );
    assert_eq!(label_bytes(&"1,024 MB".into()), Some(1 << 30));
    assert_eq!(label_bytes(&serde_json::json!(42)), Some(42));
    assert_eq!(label_bytes(&"lots".into()), None);
    // A lower bound's label is read by the figure check, not here.
    assert_eq!(label_bytes(&"more than 1EB".into()), None);
    assert_eq!(label_bytes(&"1EB".into()), Some(1 << 60));
}

#[test]
fn every_text_is_cited() {
    let readme = std::fs::read_to_string(
        PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/README.md"),
    )
    .unwrap();
    let missing: Vec<String> = corpus()
        .into_iter()
        .filter_map(|(path, label)| {
            let name = path.file_name()?.to_string_lossy().into_owned();
            let cited = readme
                .lines()
                .any(|line| line.contains(&format!("`{name}`")) && line.contains(&label.source));
            (!cited).then_some(name)
        })
        .collect();
    assert!(
        missing.is_empty(),
        "not cited in tests/fixtures/README.md (run tests/fixtures/corpus/cite.py): {missing:?}"
    );
}
