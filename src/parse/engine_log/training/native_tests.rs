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

#[test]
fn frames_of_cpp_and_rust_backtraces() {
    let line = "3       0x7cb3c5bae3ab tensorrt_llm::batch_manager::kv_cache_manager::\
                WindowBlockManager::allocatePools(bool) + 635";
    assert_eq!(
        parse_line_scan(line).frame,
        Some((
            "WindowBlockManager::allocatePools".into(),
            "<native>".into()
        ))
    );
    // A return type and template arguments.
    let line = "1       0x7cb3c4fcd438 void tensorrt_llm::common::check<cudaError>(cudaError, \
                char const*, char const*, int) + 88";
    assert_eq!(
        parse_line_scan(line).frame.unwrap().0,
        "common::check".to_string()
    );
    // An address with a library and no name, and a log line with an address in it.
    assert_eq!(
        parse_line_scan("12      0x7f01 /usr/lib/libc.so.6(+0x29d90) [0x7f01]").frame,
        None
    );
    assert_eq!(
        parse_line_scan("[12] freed 0x7f01 block at tensorrt").frame,
        None
    );
    // Rust: a trait method is named by its trait; a log path names nothing.
    let line = "   4: <mistralrs_core::pipeline::normal::NormalLoader as \
                mistralrs_core::pipeline::loaders::Loader>::load_model_from_path";
    assert_eq!(
        parse_line_scan(line).frame.unwrap().0,
        "Loader::load_model_from_path".to_string()
    );
    let line =
        "   2: mistralrs_core::pipeline::loaders::DeviceMappedModelLoader::get_device_layers";
    assert_eq!(
        parse_line_scan(line).frame.unwrap().0,
        "DeviceMappedModelLoader::get_device_layers".to_string()
    );
    // An async function's body runs as its closure: the frame is the function's.
    assert_eq!(
        parse_line_scan("   6: mistralrs_server::main::{{closure}}")
            .frame
            .unwrap()
            .0,
        "mistralrs_server::main".to_string()
    );
    assert_eq!(
        parse_line_scan("  11: mistralrs_core::engine::Engine::run::{{closure}}::{{closure}}")
            .frame
            .unwrap()
            .0,
        "Engine::run".to_string()
    );
    // A C++ ABI tag is no part of the name.
    let line = "4       0x7f1ddd8c1618 tensorrt_llm::batch_manager::RuntimeBuffers::\
                prepareStep[abi:cxx11](int) + 1212";
    assert_eq!(
        parse_line_scan(line).frame.unwrap().0,
        "RuntimeBuffers::prepareStep".to_string()
    );
    assert_eq!(
        parse_line_scan(
            "2024-05-01T10:00:00Z  INFO text_generation_router::server: Serving on 0.0.0.0:80"
        )
        .frame,
        None
    );
}
