//! OpenAI-compatible HTTP servers and metrics endpoints (`oomdoc probe`).
//!
//! [`InferenceServer`] is what the probe needs from a server: the model list and one
//! completion at a time (callable from several threads for the concurrent phase).
//! [`HttpServer`] implements it with blocking `ureq`: every request has a timeout, the API key
//! goes only in the `Authorization: Bearer` header of requests to the server itself and never
//! into an error, a log or a report. [`fetch_text`] reads a metrics endpoint (no key sent).

use std::time::{Duration, Instant};

use serde_json::Value;

/// Errors talking to a server or a metrics endpoint. Messages carry the URL (credentials
/// removed) and never the API key.
#[derive(Debug, thiserror::Error)]
pub enum ServerError {
    /// No connection (refused, DNS, reset before an answer).
    #[error("cannot reach `{url}`: {reason}")]
    Unreachable {
        /// The URL.
        url: String,
        /// The transport's reason.
        reason: String,
    },
    /// No answer within the timeout.
    #[error("no answer from `{url}` within {seconds} s")]
    Timeout {
        /// The URL.
        url: String,
        /// The timeout.
        seconds: u64,
    },
    /// An HTTP error status.
    #[error("`{url}` answered HTTP {status}{}", body_suffix(.body))]
    Status {
        /// The URL.
        url: String,
        /// HTTP status code.
        status: u16,
        /// The start of the body (300 characters at most).
        body: String,
    },
    /// A redirect: never followed, since it could lead to another host (and turn the POST of a
    /// completion into a GET).
    #[error(
        "`{url}` answered HTTP {status}, a redirect to `{location}`, which oomdoc does not follow"
    )]
    Redirect {
        /// The URL.
        url: String,
        /// HTTP status code.
        status: u16,
        /// The `Location` header (credentials removed).
        location: String,
    },
    /// An answer that is not what an OpenAI-compatible server sends.
    #[error("unexpected answer from `{url}`: {reason}")]
    BadResponse {
        /// The URL.
        url: String,
        /// What is wrong.
        reason: String,
    },
}

fn body_suffix(body: &str) -> String {
    if body.trim().is_empty() {
        String::new()
    } else {
        format!(": {}", body.trim())
    }
}

impl crate::error::Hint for ServerError {
    fn hint(&self) -> Option<String> {
        match self {
            ServerError::Unreachable { .. } => Some(
                "is the server running and listening on that address? check the URL".to_string(),
            ),
            ServerError::Timeout { .. } => {
                Some("a loaded server may need more time: raise `--request-timeout`".to_string())
            }
            ServerError::Status {
                status: 401 | 403, ..
            } => Some(format!(
                "pass the key with `--api-key KEY` or set `{}`",
                crate::env_vars::OOMDOC_API_KEY
            )),
            ServerError::Redirect { .. } => Some(
                "give the URL the server answers on directly (after any proxy or redirect)"
                    .to_string(),
            ),
            ServerError::Status { .. } | ServerError::BadResponse { .. } => None,
        }
    }
}

impl ServerError {
    /// The HTTP status, when the server answered with one.
    pub fn status(&self) -> Option<u16> {
        match self {
            ServerError::Status { status, .. } => Some(*status),
            _ => None,
        }
    }

    /// Whether the server could not be reached at all (as opposed to answering badly).
    pub fn is_unreachable(&self) -> bool {
        matches!(self, ServerError::Unreachable { .. })
    }
}

/// A model the server lists.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ServedModel {
    /// The id to send as `model`.
    pub id: String,
    /// Context length in tokens, from whichever field the server uses.
    pub context_tokens: Option<u64>,
}

/// Which completion API to call.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Endpoint {
    /// `/v1/completions` with `prompt`.
    Completions,
    /// `/v1/chat/completions` with one user message.
    Chat,
}

/// One completion request.
#[derive(Debug, Clone)]
pub struct CompletionRequest {
    /// Model id.
    pub model: String,
    /// The prompt (or the user message).
    pub prompt: String,
    /// `max_tokens`.
    pub max_tokens: u32,
    /// Which API.
    pub endpoint: Endpoint,
}

/// A completed request.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Completion {
    /// HTTP status (2xx).
    pub status: u16,
    /// `usage.completion_tokens`, when sent.
    pub completion_tokens: Option<u64>,
}

/// A request and how long it took, whatever its outcome.
#[derive(Debug)]
pub struct Attempt {
    /// Wall time in milliseconds.
    pub latency_ms: u64,
    /// The outcome.
    pub result: Result<Completion, ServerError>,
}

/// What the probe needs from an OpenAI-compatible server.
pub trait InferenceServer: Sync {
    /// `GET /v1/models`.
    fn models(&self) -> Result<Vec<ServedModel>, ServerError>;
    /// One completion; never panics, always returns within the timeout (plus connect time).
    fn complete(&self, request: &CompletionRequest) -> Attempt;
}

/// A server reached over HTTP with `ureq`.
pub struct HttpServer {
    base: String,
    agent: ureq::Agent,
    api_key: Option<String>,
    timeout: Duration,
}

impl std::fmt::Debug for HttpServer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // The key is never printed, not even in debug output.
        f.debug_struct("HttpServer")
            .field("base", &self.base)
            .field("api_key", &self.api_key.as_ref().map(|_| "<redacted>"))
            .field("timeout", &self.timeout)
            .finish()
    }
}

impl HttpServer {
    /// A client for the server at `url` (`http://host:port`, with or without `/v1`).
    pub fn new(url: &str, api_key: Option<String>, timeout: Duration) -> HttpServer {
        HttpServer {
            base: base_url(url),
            agent: agent(timeout),
            api_key: api_key.filter(|key| !key.is_empty()),
            timeout,
        }
    }

    /// The base URL requests are built on, credentials removed.
    pub fn base(&self) -> String {
        redact_url(&self.base)
    }

    /// `{base}/metrics`, where vLLM, SGLang and TGI expose Prometheus metrics.
    pub fn metrics_url(&self) -> String {
        format!("{}/metrics", self.base)
    }

    fn url(&self, path: &str) -> String {
        format!("{}{path}", self.base)
    }

    fn authorize(&self, request: ureq::Request) -> ureq::Request {
        match &self.api_key {
            Some(key) => request.set("Authorization", &format!("Bearer {key}")),
            None => request,
        }
    }
}

impl InferenceServer for HttpServer {
    fn models(&self) -> Result<Vec<ServedModel>, ServerError> {
        let url = self.url("/v1/models");
        let request = self
            .authorize(self.agent.get(&url))
            .set("Connection", "close");
        let body = read(request.call(), &url, self.timeout)?;
        parse_models(&body).map_err(|reason| ServerError::BadResponse {
            url: redact_url(&url),
            reason,
        })
    }

    fn complete(&self, request: &CompletionRequest) -> Attempt {
        let (path, body) = match request.endpoint {
            Endpoint::Completions => (
                "/v1/completions",
                serde_json::json!({
                    "model": request.model,
                    "prompt": request.prompt,
                    "max_tokens": request.max_tokens,
                    "temperature": 0,
                }),
            ),
            Endpoint::Chat => (
                "/v1/chat/completions",
                serde_json::json!({
                    "model": request.model,
                    "messages": [{"role": "user", "content": request.prompt}],
                    "max_tokens": request.max_tokens,
                    "temperature": 0,
                }),
            ),
        };
        let url = self.url(path);
        let started = Instant::now();
        let http = self
            .authorize(self.agent.post(&url))
            .set("Content-Type", "application/json")
            .set("Connection", "close");
        let result =
            read(http.send_string(&body.to_string()), &url, self.timeout).and_then(|text| {
                let json: Value =
                    serde_json::from_str(&text).map_err(|error| ServerError::BadResponse {
                        url: redact_url(&url),
                        reason: format!("not JSON ({error})"),
                    })?;
                // See: #14. An answer without a completion is a failure, not a success.
                if let Some(reason) = missing_completion(&json, request.endpoint) {
                    return Err(ServerError::BadResponse {
                        url: redact_url(&url),
                        reason,
                    });
                }
                Ok(Completion {
                    status: 200,
                    completion_tokens: json
                        .pointer("/usage/completion_tokens")
                        .and_then(Value::as_u64),
                })
            });
        Attempt {
            latency_ms: u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX),
            result,
        }
    }
}

/// Why an answer holds no completion, or `None` when its first choice has one: `text` for
/// `/v1/completions`, a `message` object for `/v1/chat/completions`.
fn missing_completion(json: &Value, endpoint: Endpoint) -> Option<String> {
    let Some(choices) = json.get("choices") else {
        return Some("no `choices` in the answer".to_string());
    };
    let Some(first) = choices.as_array().and_then(|list| list.first()) else {
        return Some("`choices` is not a non-empty list".to_string());
    };
    let has_completion = match endpoint {
        Endpoint::Completions => first.get("text").is_some_and(Value::is_string),
        Endpoint::Chat => first.get("message").is_some_and(Value::is_object),
    };
    if has_completion {
        None
    } else {
        Some(match endpoint {
            Endpoint::Completions => "the first choice has no `text`".to_string(),
            Endpoint::Chat => "the first choice has no `message`".to_string(),
        })
    }
}

/// Reads a metrics endpoint (`GET url`, no credentials sent) as text.
pub fn fetch_text(url: &str, timeout: Duration) -> Result<String, ServerError> {
    read(
        agent(timeout).get(url).set("Connection", "close").call(),
        url,
        timeout,
    )
}

/// No kept-alive connections: a single-threaded server (Python's `http.server`, a test
/// server) serves one connection at a time, so an idle pooled connection to it would block the
/// next scrape or parallel request until its timeout. One connection per request costs
/// nothing at the probe's pace.
fn agent(timeout: Duration) -> ureq::Agent {
    ureq::AgentBuilder::new()
        .timeout_connect(timeout.min(Duration::from_secs(10)))
        .timeout(timeout)
        .max_idle_connections(0)
        .max_idle_connections_per_host(0)
        // See: #14. A redirect was followed to another host, the POST turned into a GET and
        // its answer was taken for the server's. None is followed; `read` refuses them.
        .redirects(0)
        .build()
}

fn read(
    answer: Result<ureq::Response, ureq::Error>,
    url: &str,
    timeout: Duration,
) -> Result<String, ServerError> {
    let url_shown = redact_url(url);
    match answer {
        Ok(response) if (300..400).contains(&response.status()) => {
            let status = response.status();
            let location = response
                .header("location")
                .map(|location| {
                    redact_url(location)
                        .chars()
                        .take(300)
                        .map(|c| if c.is_control() { ' ' } else { c })
                        .collect::<String>()
                })
                .unwrap_or_default();
            Err(ServerError::Redirect {
                url: url_shown,
                status,
                location,
            })
        }
        Ok(response) => response
            .into_string()
            .map_err(|error| transport(url_shown, &error, timeout)),
        Err(ureq::Error::Status(status, response)) => {
            let body: String = response
                .into_string()
                .unwrap_or_default()
                .chars()
                .take(300)
                // The body goes into an error message on a terminal: no escapes, one line.
                .map(|c| if c.is_control() { ' ' } else { c })
                .collect();
            Err(ServerError::Status {
                url: url_shown,
                status,
                body,
            })
        }
        Err(ureq::Error::Transport(error)) => {
            let io_kind = std::error::Error::source(&error)
                .and_then(|source| source.downcast_ref::<std::io::Error>())
                .map(std::io::Error::kind);
            let timed_out = matches!(
                io_kind,
                Some(std::io::ErrorKind::TimedOut | std::io::ErrorKind::WouldBlock)
            ) || error.to_string().contains("timed out");
            if timed_out {
                Err(ServerError::Timeout {
                    url: url_shown,
                    seconds: timeout.as_secs(),
                })
            } else {
                let reason = std::error::Error::source(&error)
                    .map(|source| source.to_string())
                    .or_else(|| error.message().map(str::to_string))
                    .unwrap_or_else(|| error.kind().to_string());
                Err(ServerError::Unreachable {
                    url: url_shown,
                    reason,
                })
            }
        }
    }
}

fn transport(url: String, error: &std::io::Error, timeout: Duration) -> ServerError {
    match error.kind() {
        std::io::ErrorKind::TimedOut | std::io::ErrorKind::WouldBlock => ServerError::Timeout {
            url,
            seconds: timeout.as_secs(),
        },
        _ => ServerError::Unreachable {
            url,
            reason: error.to_string(),
        },
    }
}

/// The API key to send: the flag's, else `OOMDOC_API_KEY`, else `OPENAI_API_KEY`; an empty
/// key is none.
pub fn api_key(flag: Option<String>) -> Option<String> {
    flag.or_else(|| std::env::var(crate::env_vars::OOMDOC_API_KEY).ok())
        .or_else(|| std::env::var(crate::env_vars::OPENAI_API_KEY).ok())
        .filter(|key| !key.is_empty())
}

/// `http://h:8000/v1/` → `http://h:8000`.
pub fn base_url(url: &str) -> String {
    let trimmed = url.trim().trim_end_matches('/');
    let trimmed = trimmed.strip_suffix("/v1").unwrap_or(trimmed);
    if trimmed.contains("://") {
        trimmed.to_string()
    } else {
        format!("http://{trimmed}")
    }
}

/// Removes `user:password@` from a URL, so it can be shown and recorded.
pub fn redact_url(url: &str) -> String {
    let Some((scheme, rest)) = url.split_once("://") else {
        return url.to_string();
    };
    let authority_end = rest.find('/').unwrap_or(rest.len());
    match rest[..authority_end].rfind('@') {
        Some(at) => format!("{scheme}://{}", &rest[at + 1..]),
        None => url.to_string(),
    }
}

/// Parses `/v1/models`: `{"data": [{"id": …, …}]}`, with the context length from the field
/// each server uses: `max_model_len` (vLLM, SGLang), `context_length` / `context_window`,
/// `meta.n_ctx_train` (llama-server), `meta.n_ctx`.
pub fn parse_models(body: &str) -> Result<Vec<ServedModel>, String> {
    let json: Value = serde_json::from_str(body).map_err(|error| format!("not JSON ({error})"))?;
    let data = json
        .get("data")
        .and_then(Value::as_array)
        .ok_or("no `data` list")?;
    let mut models = Vec::new();
    for entry in data {
        let Some(id) = entry.get("id").and_then(Value::as_str) else {
            continue;
        };
        let context_tokens = [
            "/max_model_len",
            "/context_length",
            "/context_window",
            "/max_context_length",
            "/meta/n_ctx_train",
            "/meta/n_ctx",
        ]
        .iter()
        .find_map(|pointer| entry.pointer(pointer).and_then(Value::as_u64))
        .filter(|tokens| *tokens > 0);
        models.push(ServedModel {
            id: id.to_string(),
            context_tokens,
        });
    }
    Ok(models)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn context_length_from_each_server() {
        let vllm = r#"{"object":"list","data":[{"id":"Qwen/Qwen2.5-7B","object":"model","max_model_len":32768}]}"#;
        assert_eq!(
            parse_models(vllm).unwrap(),
            vec![ServedModel {
                id: "Qwen/Qwen2.5-7B".to_string(),
                context_tokens: Some(32768)
            }]
        );
        let llama = r#"{"data":[{"id":"m.gguf","meta":{"n_ctx_train":8192,"n_vocab":32000}}]}"#;
        assert_eq!(parse_models(llama).unwrap()[0].context_tokens, Some(8192));
        let ollama = r#"{"object":"list","data":[{"id":"llama3:8b","object":"model"}]}"#;
        assert_eq!(parse_models(ollama).unwrap()[0].context_tokens, None);
        assert!(parse_models("[]").is_err());
        assert!(parse_models("<html>").is_err());
    }

    #[test]
    fn urls() {
        assert_eq!(base_url("http://h:8000/v1/"), "http://h:8000");
        assert_eq!(base_url("127.0.0.1:8000"), "http://127.0.0.1:8000");
        assert_eq!(redact_url("http://u:secret@h:1/x@y"), "http://h:1/x@y");
        assert_eq!(redact_url("http://h:1/v1"), "http://h:1/v1");
    }

    #[test]
    fn debug_hides_the_key() {
        let server = HttpServer::new(
            "http://127.0.0.1:1",
            Some("sk-secret".into()),
            Duration::from_secs(1),
        );
        assert!(!format!("{server:?}").contains("sk-secret"));
    }

    /// A one-shot loopback server that answers each of `answers` (raw HTTP) to one connection.
    fn canned(answers: Vec<String>) -> (String, std::thread::JoinHandle<()>) {
        use std::io::{Read as _, Write as _};
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let url = format!("http://{}", listener.local_addr().unwrap());
        let handle = std::thread::spawn(move || {
            for answer in answers {
                let (mut stream, _) = listener.accept().unwrap();
                let mut buffer = [0u8; 4096];
                let _ = stream.read(&mut buffer);
                let _ = stream.write_all(answer.as_bytes());
            }
        });
        (url, handle)
    }

    fn http(status: &str, headers: &str, body: &str) -> String {
        format!(
            "HTTP/1.1 {status}\r\n{headers}Content-Length: {}\r\nConnection: close\r\n\r\n{body}",
            body.len()
        )
    }

    fn request() -> CompletionRequest {
        CompletionRequest {
            model: "m".to_string(),
            prompt: "hi".to_string(),
            max_tokens: 1,
            endpoint: Endpoint::Completions,
        }
    }

    #[test]
    fn issue_14_redirects_are_not_followed() {
        // See: #14. A 302 to another host was followed; the POST became a GET and the other
        // host's answer counted as the server's.
        let (url, handle) = canned(vec![
            http(
                "302 Found",
                "Location: http://user:pw@198.51.100.7:9/v1/completions\r\n",
                "",
            ),
            http("307 Temporary Redirect", "Location: /v1/models\r\n", ""),
        ]);
        let server = HttpServer::new(&url, None, Duration::from_secs(5));
        let attempt = server.complete(&request());
        let error = attempt.result.unwrap_err();
        assert!(
            matches!(error, ServerError::Redirect { status: 302, .. }),
            "{error}"
        );
        assert_eq!(
            error.to_string(),
            format!("`{url}/v1/completions` answered HTTP 302, a redirect to `http://198.51.100.7:9/v1/completions`, which oomdoc does not follow")
        );
        let error = server.models().unwrap_err();
        assert!(
            matches!(error, ServerError::Redirect { status: 307, .. }),
            "{error}"
        );
        handle.join().unwrap();
    }

    #[test]
    fn issue_14_an_answer_without_a_completion_is_a_failure() {
        // See: #14. A 200 with no completion counted as success.
        let (url, handle) = canned(vec![
            http("200 OK", "", r#"{"choices":[]}"#),
            http("200 OK", "", r#"{"choices":[{"index":0}]}"#),
            http("200 OK", "", r#"{"choices":"x"}"#),
            http(
                "200 OK",
                "",
                r#"{"choices":[{"text":"ok"}],"usage":{"completion_tokens":1}}"#,
            ),
        ]);
        let server = HttpServer::new(&url, None, Duration::from_secs(5));
        for expected in [
            "`choices` is not a non-empty list",
            "the first choice has no `text`",
            "`choices` is not a non-empty list",
        ] {
            let error = server.complete(&request()).result.unwrap_err();
            assert!(error.to_string().ends_with(expected), "{error}");
        }
        let completion = server.complete(&request()).result.unwrap();
        assert_eq!(completion.completion_tokens, Some(1));
        handle.join().unwrap();
        let chat =
            serde_json::json!({"choices": [{"message": {"role": "assistant", "content": "x"}}]});
        assert_eq!(missing_completion(&chat, Endpoint::Chat), None);
        assert!(missing_completion(&chat, Endpoint::Completions).is_some());
    }

    #[test]
    fn refused_connection_is_unreachable() {
        // Port 1 on loopback: nothing listens there in a test environment.
        let server = HttpServer::new("http://127.0.0.1:1", None, Duration::from_secs(2));
        let error = server.models().unwrap_err();
        assert!(error.is_unreachable(), "{error}");
    }
}
