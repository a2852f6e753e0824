use super::super::parse_line_scan;
use crate::model::explain::EventKind;

#[test]
fn native_frames_of_a_torch_error() {
    let line = "frame #4: at::native::(anonymous namespace)::slow_conv_transpose3d_backward_out_cuda_template(at::Tensor const&, at::Tensor const&) + 0x4d (0x2ba39fce177d in /u/lib/python3.7/site-packages/torch/lib/libtorch_cuda.so)";
    let (function, file) = parse_line_scan(line).frame.unwrap();
    assert_eq!(
        function,
        "native::slow_conv_transpose3d_backward_out_cuda_template"
    );
    assert_eq!(
        file,
        "/u/lib/python3.7/site-packages/torch/lib/libtorch_cuda.so"
    );
    let line = "frame #12: torch::autograd::generated::ConvolutionBackward0::apply(std::vector<at::Tensor>&&) + 0x1a (0x7f in /opt/conda/lib/python3.10/site-packages/torch/lib/libtorch_cpu.so)";
    assert_eq!(
        parse_line_scan(line).frame.unwrap().0,
        "ConvolutionBackward0::apply"
    );
    // Cut before its library.
    assert_eq!(
        parse_line_scan("frame #4: at::native::x_backward_template(at::Tensor const&, at::Ten")
            .frame,
        Some(("native::x_backward_template".into(), "<native>".into()))
    );
    assert_eq!(
            parse_line_scan("frame #4: at::native::y_backward(at::Tensor const&) + 0x15ef (0x2b in /N/u/envs/dense_m")
                .frame,
            Some(("native::y_backward".into(), "<native>".into()))
        );
    // Not a native frame: no library, no number.
    assert_eq!(
        parse_line_scan("frame #: x (in /site-packages/a.so)").frame,
        None
    );
    assert_eq!(
        parse_line_scan("see frame #3: it is in site-packages").frame,
        None
    );
}

#[test]
fn a_warning_from_torch_cuda_graphs_shows_a_capture() {
    let line = "/opt/venv/lib/python3.12/site-packages/torch/cuda/graphs.py:126: UserWarning: The CUDA Graph is empty.";
    let facts = parse_line_scan(line);
    assert_eq!(facts.events[0].kind, EventKind::CudaGraphCaptureStart);
    let other = "/opt/venv/lib/python3.12/site-packages/torch/cuda/memory.py:12: UserWarning: x";
    assert!(parse_line_scan(other).events.is_empty());
}
