//! Whole-text checks of session 35's phase rules: a training script's start announced alone on
//! its line, and sentence-transformers' embedding bar; with the cases each must leave alone.

use super::whole_text::{phase, TORCH_OOM};
use crate::model::explain::Phase;

#[test]
fn a_training_start_announced_alone_on_its_line() {
    for line in [
        "2019-12-11 05:25:21,147 maskrcnn_benchmark.trainer INFO: Start training\n",
        "============== Starting Training ==============\n",
        "Running training\n",
        "Training...\n",
        "ready to train!\n",
        "2020-01-16 16:31:19,461 - root - INFO - Start training from epoch 3\n",
    ] {
        let text = format!("loading data\n{line}{TORCH_OOM}");
        assert_eq!(phase(&text), Phase::TrainingStep, "{line}");
    }
}

#[test]
fn the_words_in_a_sentence_or_with_more_after_them_are_no_announcement() {
    for line in [
        "I restart training\n",
        "Training... not yet, loading the weights first\n",
    ] {
        let text = format!("{line}{TORCH_OOM}");
        assert_ne!(phase(&text), Phase::TrainingStep, "{line}");
    }
}

#[test]
fn sentence_transformers_embedding_bar() {
    let text = "Batches:  88%|████████▊ | 176/200 [00:40<00:05,  4.41batch/s]\n\
                Batches: 100%|██████████| 200/200 [00:45<00:00,  4.41batch/s]\n\
                Traceback (most recent call last):\n  \
                File \"embed_all.py\", line 15, in <module>\n    \
                emb = torch.cat(all_embeddings)\n"
        .to_string()
        + TORCH_OOM;
    assert_eq!(phase(&text), Phase::Inference);
    // Another label with the word is not the embedding loop.
    let text = "Loading batches:  88%|████████▊ | 176/200 [00:40<00:05,  4.41it/s]\n\
                Traceback (most recent call last):\n  \
                File \"embed_all.py\", line 15, in <module>\n    \
                emb = torch.cat(all_embeddings)\n"
        .to_string()
        + TORCH_OOM;
    assert_ne!(phase(&text), Phase::Inference);
}
