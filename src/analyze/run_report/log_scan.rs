//! The scan of a run's log: requests served, concurrency, the request before the OOM and the
//! lines before it.

use super::*;

/// What a scan of the child's log found (requests served, concurrency, the failing request).
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct LogScan {
    /// HTTP requests answered with 2xx, counted from access-log lines.
    pub requests_served: u64,
    /// Requests answered with an error status.
    pub requests_failed: u64,
    /// The last request line before the first out-of-memory line, when there is one.
    pub request_before_oom: Option<String>,
    /// vLLM `Maximum concurrency for N tokens per request: X` (as printed).
    pub max_concurrency: Option<String>,
    /// Highest `Running: N reqs` in the periodic stats lines.
    pub max_running_requests: Option<u64>,
    /// The lines before the first out-of-memory line and that line, at most
    /// [`CONTEXT_LINES`].
    pub lines_before_oom: Vec<String>,
    /// Whether the scan saw only part of the log.
    pub partial: bool,
}

/// Log lines kept before the failure (dozens, not one).
pub const CONTEXT_LINES: usize = 40;

/// Scans a (redacted) log for requests and concurrency. Lines are matched loosely: uvicorn
/// access lines (`"POST /v1/chat/completions HTTP/1.1" 200`), vLLM request lines
/// (`Received request …`), vLLM's KV sizing and periodic stats lines (vLLM's `gpu_worker.py`/`metrics/loggers.py`).
pub fn scan_log(text: &str, partial: bool) -> LogScan {
    let mut scan = LogScan {
        partial,
        ..LogScan::default()
    };
    let mut last_request: Option<String> = None;
    let mut seen_oom = false;
    let mut recent: std::collections::VecDeque<&str> = std::collections::VecDeque::new();
    for line in text.lines() {
        let line = line.trim_end_matches('\r');
        let lower = line.to_ascii_lowercase();
        if !seen_oom {
            if recent.len() == CONTEXT_LINES - 1 {
                recent.pop_front();
            }
            recent.push_back(line);
        }
        if !seen_oom && (lower.contains("out of memory") || lower.contains("outofmemoryerror")) {
            seen_oom = true;
            scan.request_before_oom = last_request.clone();
            scan.lines_before_oom = recent.iter().map(|line| shorten(line, 400)).collect();
        }
        if let Some(status) = access_log_status(line) {
            if (200..300).contains(&status) {
                scan.requests_served += 1;
            } else {
                scan.requests_failed += 1;
            }
            last_request = Some(shorten(line.trim(), 300));
        } else if line.contains("Received request") || line.contains("Added request") {
            last_request = Some(shorten(line.trim(), 300));
        }
        if let Some(position) = line.find("Maximum concurrency for ") {
            scan.max_concurrency = Some(line[position..].trim().to_owned());
        }
        if let Some(position) = line.find("Running: ") {
            let rest = &line[position + "Running: ".len()..];
            let digits: String = rest.chars().take_while(char::is_ascii_digit).collect();
            if let Ok(running) = digits.parse::<u64>() {
                if rest[digits.len()..].starts_with(" req") {
                    scan.max_running_requests =
                        Some(scan.max_running_requests.unwrap_or(0).max(running));
                }
            }
        }
    }
    scan
}

/// The status of an access-log line such as `INFO:  127.0.0.1:5 - "POST /v1/completions HTTP/1.1" 200 OK`.
pub(super) fn access_log_status(line: &str) -> Option<u16> {
    let start = line.find("\"POST /").or_else(|| line.find("\"GET /v1/"))?;
    let rest = &line[start + 1..];
    let close = rest.find('"')?;
    let request = &rest[..close];
    if !(request.contains("/v1/") || request.contains("/generate")) {
        return None;
    }
    rest[close + 1..].split_whitespace().next()?.parse().ok()
}

pub(super) fn shorten(text: &str, limit: usize) -> String {
    if text.chars().count() <= limit {
        text.to_owned()
    } else {
        let mut short: String = text.chars().take(limit).collect();
        short.push('…');
        short
    }
}
