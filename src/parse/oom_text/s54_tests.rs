//! Unit tests of wordings added in session 54: spconv 1.x's CUDA check, Thrust's scratch
//! space, DeepSpeed-Inference's workspace.

use super::*;
use crate::model::failure::OomMessage;

fn first(text: &str) -> Option<OomMessage> {
    parse_text(text).into_iter().next()
}

#[test]
fn spconvs_status_2_is_a_gpu_oom_and_other_statuses_are_not() {
    for text in [
        "RuntimeError: mmdet3d/ops/spconv/src/indice_cuda.cu 124\ncuda execution failed with \
         error 2\n",
        "I get error: `/spconv/src/spconv/indice.cu 125 cuda execution failed with error 2`\n",
        "RuntimeError: /spconv/src/spconv/indice.cu 274\ncuda execution failed with error 2 \
         out of memory\n",
    ] {
        let message = first(text).expect("a message");
        assert!(message.is_gpu_oom, "{text}: {message:#?}");
    }
    for text in [
        "RuntimeError: /spconv/src/spconv/indice.cu 274\ncuda execution failed with error 3 \
         initialization error\n",
        "cuda execution failed with error 222\n",
        "cuda execution failed with error 98\n",
    ] {
        assert!(
            first(text).is_none_or(|message| !message.is_gpu_oom),
            "{text}"
        );
    }
}

#[test]
fn thrusts_temporary_buffer_is_the_devices_memory() {
    let text = "  File \"/opt/dgr/core/trainer.py\", line 210, in _train_epoch\n\
                MemoryError: std::bad_alloc: temporary_buffer::allocate: get_temporary_buffer \
                failed\n";
    let message = first(text).expect("a message");
    assert!(message.is_gpu_oom, "{message:#?}");
}

#[test]
fn deepspeed_inferences_workspace_is_a_gpu_oom() {
    let text = "    self.allocate_workspace(self.config.hidden_size, self.config.heads,\n\
                RuntimeError: Workspace can't be allocated, no enough memory.\n";
    let message = first(text).expect("a message");
    assert!(message.is_gpu_oom, "{message:#?}");
}

#[test]
fn a_gpu_apis_own_out_of_memory_statuses_are_gpu_ooms() {
    for text in [
        // OpenCL's status -4 in the lowercase of error tables.
        "[ERROR]     memory object allocation failure\n",
        // OpenGL's GL_OUT_OF_MEMORY as its code and as the specification describes it.
        "java.lang.RuntimeException: glActiveTexture: GL error: 0x505\n",
        "E/GlContext: GL_OUT_OF_MEMORY after glTexImage2D\n",
        "Exception: `There is not enough memory left to execute the command`\n",
        // Metal Performance Shaders' buffer, with its size.
        "MPSCommandBufferImageCache.mm:1411: failed assertion `Failed to allocate private \
         MTLBuffer for size 2717908992'\n",
    ] {
        let message = first(text).expect("a message");
        assert!(message.is_gpu_oom, "{text}: {message:#?}");
    }
    let metal =
        first("failed assertion `Failed to allocate private MTLBuffer for size 2717908992'\n")
            .expect("a message");
    assert_eq!(
        metal.figures.tried_to_allocate_bytes,
        Some(crate::model::Bytes(2_717_908_992))
    );
    // Another GL error is not one.
    assert!(first("glActiveTexture: GL error: 0x502\n").is_none_or(|m| !m.is_gpu_oom));
}

#[test]
fn a_backticked_tensorflow_class_header_gives_way_to_the_ops_message() {
    let text = "`ResourceExhaustedError: 2 root error(s) found.\n  (0) Resource exhausted: OOM \
                when allocating tensor with shape[20,48,2,25,201,64] and type float on \
                /job:localhost/replica:0/task:0/device:GPU:0 by allocator GPU_0_bfc\n";
    let message = first(text).expect("a message");
    assert_eq!(message.line, 2, "{message:#?}");
    assert_eq!(message.figures.gpu_index.map(|index| index.0), Some(0));
}
