//! A small OpenAI-compatible server for the probe tests: `/v1/models`, `/v1/completions`,
//! `/v1/chat/completions` and a Prometheus `/metrics` whose memory follows a scripted story.
//!
//! std only: one thread, one request per connection (`Connection: close`), loopback only.
//! Stopping it (drop) closes the listener, so later connections are refused, which is how the
//! `crash` story looks to a client.

#![expect(clippy::unwrap_used, reason = "test setup panics on failure")]

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;

/// How memory (MiB, as dcgm-exporter's `DCGM_FI_DEV_FB_USED`) moves with served completions.
#[derive(Debug, Clone, Copy)]
pub enum Story {
    /// Warm-up rise over the first 4 completions (+100 MiB each), then flat.
    Plateau,
    /// Flat, +512 MiB once when the first long prompt arrives, then flat.
    Step,
    /// A warm-up that goes on into the identical phase: +100 MiB for each of the first 8
    /// completions, then flat.
    SlowWarmup,
    /// +8 MiB with every completion, for ever.
    Leak,
    /// Flat until the first long prompt, then +8 MiB with every completion (a leak that only
    /// the alternating phase shows).
    LeakAfterLong,
    /// Flat level with up to 450 MiB of jitter (digits of π × 50 MiB).
    Noise,
    /// Plateau, but the server dies (stops listening) after this many completions.
    Crash(usize),
    /// Plateau, but every completion after this many answers HTTP 500.
    Errors(usize),
}

/// Prompts longer than this are "long".
const LONG_PROMPT: usize = 500;
const DIGITS: [u64; 23] = [
    3, 1, 4, 1, 5, 9, 2, 6, 5, 3, 5, 8, 9, 7, 9, 3, 2, 3, 8, 4, 6, 2, 6,
];
/// Bound on connections served, so a test can never loop for ever.
const MAX_CONNECTIONS: usize = 5000;

struct State {
    completions: usize,
    long_seen: bool,
    /// Completions served since the first long prompt (that one included).
    since_long: usize,
}

impl Story {
    fn memory_mib(self, state: &State) -> u64 {
        let n = state.completions as u64;
        match self {
            Story::Plateau | Story::Crash(_) | Story::Errors(_) => 1000 + 100 * n.min(4),
            Story::Step => 1000 + if state.long_seen { 512 } else { 0 },
            Story::SlowWarmup => 1000 + 100 * n.min(8),
            Story::Leak => 1000 + 8 * n,
            Story::LeakAfterLong => 1000 + 8 * state.since_long as u64,
            Story::Noise => 1000 + DIGITS[state.completions % DIGITS.len()] * 50,
        }
    }
}

/// A running test server; stops on drop.
pub struct TestServer {
    /// `http://127.0.0.1:PORT`.
    pub url: String,
    stop: Arc<AtomicBool>,
    address: std::net::SocketAddr,
    handle: Option<JoinHandle<()>>,
}

impl TestServer {
    /// Starts a server telling `story`; with `api_key`, requests without
    /// `Authorization: Bearer KEY` get 401.
    pub fn start(story: Story, api_key: Option<&str>) -> TestServer {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let address = listener.local_addr().unwrap();
        let stop = Arc::new(AtomicBool::new(false));
        let api_key = api_key.map(str::to_string);
        let thread_stop = Arc::clone(&stop);
        let handle = std::thread::spawn(move || {
            let mut state = State {
                completions: 0,
                long_seen: false,
                since_long: 0,
            };
            for _ in 0..MAX_CONNECTIONS {
                let Ok((stream, _)) = listener.accept() else {
                    break;
                };
                if thread_stop.load(Ordering::SeqCst) {
                    break;
                }
                serve(stream, story, api_key.as_deref(), &mut state);
                if let Story::Crash(after) = story {
                    if state.completions >= after {
                        break; // the listener is dropped: connections are refused from now on
                    }
                }
            }
        });
        TestServer {
            url: format!("http://{address}"),
            stop,
            address,
            handle: Some(handle),
        }
    }

    /// `URL/metrics`.
    pub fn metrics_url(&self) -> String {
        format!("{}/metrics", self.url)
    }
}

impl Drop for TestServer {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
        let _ = TcpStream::connect(self.address); // wakes `accept`; refused if already gone
        if let Some(handle) = self.handle.take() {
            let _ = handle.join();
        }
    }
}

fn serve(stream: TcpStream, story: Story, api_key: Option<&str>, state: &mut State) {
    let _ = stream.set_read_timeout(Some(std::time::Duration::from_secs(10)));
    let mut reader = BufReader::new(stream);
    let mut request_line = String::new();
    if reader.read_line(&mut request_line).is_err() {
        return;
    }
    let mut content_length = 0usize;
    let mut authorization = None;
    loop {
        let mut line = String::new();
        if reader.read_line(&mut line).unwrap_or(0) == 0 {
            break;
        }
        let line = line.trim_end();
        if line.is_empty() {
            break;
        }
        if let Some((name, value)) = line.split_once(':') {
            match name.trim().to_ascii_lowercase().as_str() {
                "content-length" => content_length = value.trim().parse().unwrap_or(0),
                "authorization" => authorization = Some(value.trim().to_string()),
                _ => {}
            }
        }
    }
    let mut body = vec![0u8; content_length.min(1 << 20)];
    if reader.read_exact(&mut body).is_err() {
        return;
    }
    let mut parts = request_line.split_whitespace();
    let method = parts.next().unwrap_or_default().to_string();
    let path = parts.next().unwrap_or_default().to_string();
    let (status, content_type, text) =
        route(&method, &path, &body, story, api_key, authorization, state);
    let mut stream = reader.into_inner();
    let reason = match status {
        200 => "OK",
        401 => "Unauthorized",
        404 => "Not Found",
        _ => "Error",
    };
    let _ = write!(
        stream,
        "HTTP/1.1 {status} {reason}\r\nContent-Type: {content_type}\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{text}",
        text.len()
    );
    let _ = stream.flush();
}

fn route(
    method: &str,
    path: &str,
    body: &[u8],
    story: Story,
    api_key: Option<&str>,
    authorization: Option<String>,
    state: &mut State,
) -> (u16, &'static str, String) {
    const JSON: &str = "application/json";
    if path == "/metrics" {
        let mib = story.memory_mib(state);
        let text = format!(
            "{{\"gpu.mem.used\",gpu=\"0\"}} 1\n# HELP DCGM_FI_DEV_FB_USED Framebuffer memory used (in MiB).\n# TYPE DCGM_FI_DEV_FB_USED gauge\nDCGM_FI_DEV_FB_USED{{gpu=\"0\",UUID=\"GPU-test\"}} {mib}\nDCGM_FI_DEV_FB_USED{{gpu=\"1\",UUID=\"GPU-idle\"}} 0\n# TYPE vllm:kv_cache_usage_perc gauge\nvllm:kv_cache_usage_perc{{model_name=\"tiny\"}} {}\n# TYPE vllm:num_preemptions_total counter\nvllm:num_preemptions_total{{model_name=\"tiny\"}} 0\n",
            if state.long_seen { 0.25 } else { 0.0 }
        );
        return (200, "text/plain; version=0.0.4", text);
    }
    if let Some(key) = api_key {
        if authorization.as_deref() != Some(&format!("Bearer {key}")) {
            return (
                401,
                JSON,
                r#"{"error":{"message":"invalid api key","type":"invalid_request_error"}}"#
                    .to_string(),
            );
        }
    }
    match (method, path) {
        ("GET", "/v1/models") => (
            200,
            JSON,
            r#"{"object":"list","data":[{"id":"tiny","object":"model","max_model_len":4096}]}"#
                .to_string(),
        ),
        ("POST", "/v1/completions") | ("POST", "/v1/chat/completions") => {
            let request: serde_json::Value = serde_json::from_slice(body).unwrap_or_default();
            let prompt = request
                .get("prompt")
                .or_else(|| request.pointer("/messages/0/content"))
                .and_then(serde_json::Value::as_str)
                .unwrap_or_default();
            if request.get("model").and_then(serde_json::Value::as_str) != Some("tiny") {
                return (
                    404,
                    JSON,
                    r#"{"error":{"message":"no such model"}}"#.to_string(),
                );
            }
            if let Story::Errors(after) = story {
                if state.completions >= after {
                    return (
                        500,
                        JSON,
                        // Pretty-printed, as some servers answer: the error line must stay one line.
                        "{\"error\":{\n\t\"message\":\"CUDA out of memory\",\"code\":500}}"
                            .to_string(),
                    );
                }
            }
            state.completions += 1;
            state.long_seen |= prompt.len() > LONG_PROMPT;
            state.since_long += usize::from(state.long_seen);
            let choice = if path == "/v1/completions" {
                r#"{"index":0,"text":" ok","finish_reason":"length"}"#
            } else {
                r#"{"index":0,"message":{"role":"assistant","content":"ok"},"finish_reason":"length"}"#
            };
            (
                200,
                JSON,
                format!(
                    r#"{{"id":"cmpl-{}","object":"text_completion","model":"tiny","choices":[{choice}],"usage":{{"prompt_tokens":{},"completion_tokens":1}}}}"#,
                    state.completions,
                    prompt.len() / 4
                ),
            )
        }
        _ => (
            404,
            JSON,
            r#"{"error":{"message":"not found"}}"#.to_string(),
        ),
    }
}
