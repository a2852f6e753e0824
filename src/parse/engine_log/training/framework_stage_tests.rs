use super::super::{event_kinds as kinds, parse_line_scan};
use crate::model::explain::EventKind;

fn is_step(line: &str) -> bool {
    kinds(line).contains(&EventKind::TrainingStep)
}

#[test]
fn megatron_detectron2_yolo_and_opennmt_lines_are_training() {
    assert!(is_step(
        " [2024-05-01 10:00:00] iteration      200/   10000 | consumed samples:        51200 | \
             elapsed time per iteration (ms): 812.3 | learning rate: 1.500E-04 |"
    ));
    assert!(is_step(
        "[06/09 11:05:25 d2.engine.train_loop]: Exception during training:"
    ));
    assert!(is_step(
        "      Epoch    GPU_mem   box_loss   cls_loss   dfl_loss  Instances       Size"
    ));
    assert!(is_step(
        "     Epoch   gpu_mem       box       obj       cls    labels  img_size"
    ));
    assert!(is_step(
        "[2021-03-01 10:00:00,000 INFO] Step 1000/200000; acc:  45.12; ppl: 32.10; xent: 3.47; \
             lr: 0.00100; 12000/11000 tok/s;    300 sec"
    ));
    // Look-alikes: prose, a validation table, another consumer of the words.
    assert!(!is_step("consumed samples: 100 | iteration unknown"));
    assert!(!is_step("Exception during training of my own model"));
    assert!(!is_step(
        "                 Class     Images  Instances      Box(P          R      mAP50"
    ));
    assert!(!is_step("my GPU_mem column shows 3G"));
    assert!(!is_step("Step 3; acc: 1"));
    assert!(!is_step("Validation accuracy: 45.1; ppl: 3"));
}

#[test]
fn trainer_and_unsloth_loop_starts_are_training() {
    assert!(is_step(
        "[INFO|trainer.py:2134] 2024-05-01 >> ***** Running training *****"
    ));
    assert!(is_step(
        "   \\\\   /|    Num examples = 1,000 | Num Epochs = 3 | Total steps = 60"
    ));
    // Unsloth's load banner and a dataset summary are not a loop.
    assert!(!is_step(
        "   \\\\   /|    GPU: Tesla T4. Max memory: 14.748 GB. Platform: Linux."
    ));
    assert!(!is_step("  Num examples = 1000"));
}

#[test]
fn framework_bars_name_their_stage() {
    use crate::model::explain::Phase;
    let late = |line: &str| parse_line_scan(line).late_phase;
    for line in [
        "Validation DataLoader 0:  45%|████▌     | 9/20 [00:03<00:04,  2.61it/s]",
        "Sanity Checking DataLoader 0:  50%|█████     | 1/2 [00:00<00:00,  3.12it/s]",
        "Testing DataLoader 0: 100%|██████████| 5/5 [00:01<00:00,  4.00it/s]",
        "                 Class     Images  Instances      Box(P          R      mAP50  \
             mAP50-95):  40%|████      | 2/5 [00:01<00:02,  1.50it/s]",
    ] {
        assert_eq!(late(line), Some(Phase::Inference), "{line}");
        assert!(!is_step(line), "{line}");
    }
    // torchtune's recipe bar is a step; A1111's total bar is a generation request.
    assert!(is_step(
        "1|12|Loss: 1.4512:   3%|▎         | 12/400 [00:31<16:40,  2.58s/it]"
    ));
    assert_eq!(
        kinds("Total progress:  45%|████▌     | 9/20 [00:03<00:04,  2.61it/s]"),
        vec![EventKind::Request]
    );
    // Look-alikes: a Lightning training bar, other bars naming the words elsewhere.
    assert!(is_step(
        "Epoch 0:  62%|██████▏   | 878/1417 [00:15<00:09, 56.28it/s, loss=0.523, v_num=1]"
    ));
    assert_eq!(
        late("Epoch 0:  62%|██████▏   | 878/1417 [00:15<00:09, 56.28it/s, loss=0.523]"),
        Some(Phase::TrainingStep)
    );
    assert_eq!(
        late("Loading checkpoint shards:  50%|█████     | 1/2 [00:03<00:03,  3.10s/it]"),
        None
    );
    assert!(!is_step(
        "run|Loss: 1.2:  3%|▎ | 12/400 [00:31<16:40,  2.58s/it]"
    ));
    assert!(kinds("my Total progress: 45% [00:03<00:04,  2.61it/s]").is_empty());
}

#[test]
fn tensorflow_gradient_scopes_are_training() {
    use crate::model::explain::Phase;
    let late = |line: &str| parse_line_scan(line).late_phase;
    for line in [
            "\t [[{{node gradient_tape/sequential/conv2d/Conv2D/Conv2DBackpropInput}}]]",
            "\t [[Node: gradients/conv1/Conv2D_grad/Conv2DBackpropFilter = Conv2DBackpropFilter[T=DT_FLOAT]]]",
            "\t [[{{node gradients_1/dense/MatMul_grad/MatMul}}]]",
            // `tf.gradients` called inside the model's own name scope.
            "\t [[Node: net/train-op/gradients/AddN_3-0-TransposeNHWCToNCHW = Transpose[T=DT_FLOAT]]]",
        ] {
            assert_eq!(late(line), Some(Phase::TrainingStep), "{line}");
        }
    // A forward node, a scope merely starting with the word, a bare name: nothing.
    for line in [
        "\t [[{{node sequential/conv2d/Conv2D}}]]",
        "\t [[{{node gradients_check/dense/MatMul}}]]",
        "\t [[{{node gradients}}]]",
    ] {
        assert_eq!(late(line), None, "{line}");
    }
}

#[test]
fn autobatch_probe_and_tensorflow_device_creation() {
    assert_eq!(
            kinds("AutoBatch: Computing optimal batch size for imgsz=640 at 60.0% CUDA memory utilization."),
            vec![EventKind::ProfilingStart]
        );
    assert_eq!(
        kinds("AutoBatch: Using batch-size 281 for CUDA:0 16.87G/23.99G (70%) ✅"),
        vec![EventKind::ProfilingDone]
    );
    assert!(kinds("Computing optimal batch size by hand").is_empty());
    assert_eq!(
            kinds("2018-01-01 I tensorflow/core/common_runtime/gpu/gpu_device.cc:1030] Found device 0 with properties:"),
            vec![EventKind::DeviceInit]
        );
    assert_eq!(
            kinds("I tensorflow/core/common_runtime/gpu/gpu_device.cc:1326] Created TensorFlow device (/job:localhost/replica:0/task:0/device:GPU:0 with 7000 MB memory) -> physical GPU"),
            vec![EventKind::DeviceInit]
        );
    assert!(kinds("Found device driver outdated").is_empty());
}
