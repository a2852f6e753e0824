//! Small helpers shared by the engine parsers: timestamps, numbers after a key, sizes in
//! GiB/MiB/GB, `key=value` settings and traceback frames.

use crate::model::Bytes;

/// A timestamp found at the start of a line.
#[derive(Debug, Clone, PartialEq)]
pub struct Timestamp {
    /// As printed (`04-02 21:42:59`, `2024-06-17T13:18:29.371622Z`).
    pub text: String,
    /// Seconds on a common scale, for differences only (vLLM prints no year: year 2000 is assumed).
    pub seconds: Option<f64>,
}

/// Finds a timestamp in the first 48 bytes of a line: ISO-8601 (`2024-06-17T13:18:29.37Z`,
/// `2024-06-17 13:18:29`, TGI, SGLang, ollama `time=`), vLLM's `MM-DD HH:MM:SS`, or the
/// `YYYY/MM/DD - HH:MM:SS` of ollama's GIN lines.
pub fn parse_timestamp(line: &str) -> Option<Timestamp> {
    let bytes = line.as_bytes();
    let limit = bytes.len().min(48);
    let mut index = 0;
    while index < limit {
        if bytes[index].is_ascii_digit() && (index == 0 || !bytes[index - 1].is_ascii_digit()) {
            // Cheap shape checks before the full parse: `YYYY-`/`YYYY/` or `MM-DD `.
            let iso = matches!(bytes.get(index + 4), Some(b'-') | Some(b'/'));
            let month_day = bytes.get(index + 2) == Some(&b'-');
            let found = if iso {
                iso_at(line, index)
            } else if month_day {
                month_day_at(line, index)
            } else {
                None
            };
            if found.is_some() {
                return found;
            }
        }
        index += 1;
    }
    None
}

fn digits(bytes: &[u8], at: usize, count: usize) -> Option<u32> {
    let slice = bytes.get(at..at + count)?;
    if !slice.iter().all(u8::is_ascii_digit) {
        return None;
    }
    let mut value = 0u32;
    for digit in slice {
        value = value * 10 + u32::from(digit - b'0');
    }
    Some(value)
}

fn seconds_of(year: i32, month: u32, day: u32, hour: u32, minute: u32, second: f64) -> Option<f64> {
    let date = chrono::NaiveDate::from_ymd_opt(year, month, day)?;
    if hour > 23 || minute > 59 || second >= 61.0 {
        return None;
    }
    let days = date
        .signed_duration_since(chrono::NaiveDate::from_ymd_opt(1970, 1, 1)?)
        .num_days() as f64;
    Some(days * 86400.0 + f64::from(hour) * 3600.0 + f64::from(minute) * 60.0 + second)
}

/// Fractional seconds after `HH:MM:SS` at `at` (pointing at `.` or `,`); returns (fraction, length).
fn fraction(bytes: &[u8], at: usize) -> (f64, usize) {
    if !matches!(bytes.get(at), Some(b'.') | Some(b',')) {
        return (0.0, 0);
    }
    let mut end = at + 1;
    let mut value = 0.0;
    let mut scale = 0.1;
    while end < bytes.len() && bytes[end].is_ascii_digit() && end - at <= 9 {
        value += f64::from(bytes[end] - b'0') * scale;
        scale /= 10.0;
        end += 1;
    }
    if end == at + 1 {
        (0.0, 0)
    } else {
        (value, end - at)
    }
}

fn clock(bytes: &[u8], at: usize) -> Option<(u32, u32, u32)> {
    let hour = digits(bytes, at, 2)?;
    (bytes.get(at + 2) == Some(&b':')).then_some(())?;
    let minute = digits(bytes, at + 3, 2)?;
    (bytes.get(at + 5) == Some(&b':')).then_some(())?;
    let second = digits(bytes, at + 6, 2)?;
    Some((hour, minute, second))
}

fn iso_at(line: &str, at: usize) -> Option<Timestamp> {
    let bytes = line.as_bytes();
    let year = digits(bytes, at, 4)?;
    let separator = *bytes.get(at + 4)?;
    if separator != b'-' && separator != b'/' {
        return None;
    }
    let month = digits(bytes, at + 5, 2)?;
    (bytes.get(at + 7) == Some(&separator)).then_some(())?;
    let day = digits(bytes, at + 8, 2)?;
    // `T`, a space, or ollama GIN's ` - `.
    let mut time_at = at + 11;
    match bytes.get(at + 10) {
        Some(b'T') | Some(b' ') => {}
        _ => return None,
    }
    if bytes.get(at + 11) == Some(&b'-') && bytes.get(at + 12) == Some(&b' ') {
        time_at = at + 13;
    }
    let (hour, minute, second) = clock(bytes, time_at)?;
    let (frac, frac_len) = fraction(bytes, time_at + 8);
    let mut end = time_at + 8 + frac_len;
    if bytes.get(end) == Some(&b'Z') {
        end += 1;
    }
    let seconds = seconds_of(
        year as i32,
        month,
        day,
        hour,
        minute,
        f64::from(second) + frac,
    );
    seconds?;
    Some(Timestamp {
        text: line.get(at..end)?.to_string(),
        seconds,
    })
}

fn month_day_at(line: &str, at: usize) -> Option<Timestamp> {
    let bytes = line.as_bytes();
    let month = digits(bytes, at, 2)?;
    (bytes.get(at + 2) == Some(&b'-')).then_some(())?;
    let day = digits(bytes, at + 3, 2)?;
    (bytes.get(at + 5) == Some(&b' ')).then_some(())?;
    let (hour, minute, second) = clock(bytes, at + 6)?;
    let (frac, frac_len) = fraction(bytes, at + 14);
    let seconds = seconds_of(2000, month, day, hour, minute, f64::from(second) + frac)?;
    Some(Timestamp {
        text: line.get(at..at + 14 + frac_len)?.to_string(),
        seconds: Some(seconds),
    })
}

/// The text right after the first occurrence of `key`.
pub fn after<'a>(text: &'a str, key: &str) -> Option<&'a str> {
    // memmem's one-shot search is much cheaper than `str::find` for these short lines
    // (measured with scripts/bench_explain.sh); the match is on a char boundary since `key`
    // is valid UTF-8.
    crate::parse::text::find_in_line(text.as_bytes(), key.as_bytes())
        .and_then(|at| text.get(at + key.len()..))
}

/// Whether `text` contains `needle` (memmem, see [`after`]).
pub fn has(text: &str, needle: &str) -> bool {
    crate::parse::text::find_in_line(text.as_bytes(), needle.as_bytes()).is_some()
}

/// Parses a number at the start of `text` (spaces skipped; `,` thousands separators accepted
/// when followed by three digits, as vLLM V1 prints token counts).
pub fn leading_number(text: &str) -> Option<f64> {
    let text = text.trim_start_matches([' ', '(', '=', ':', '\t']);
    let bytes = text.as_bytes();
    let mut cleaned = String::new();
    let mut index = 0;
    if bytes.first() == Some(&b'-') {
        cleaned.push('-');
        index = 1;
    }
    while index < bytes.len() {
        let byte = bytes[index];
        if byte.is_ascii_digit() || byte == b'.' {
            cleaned.push(byte as char);
        } else if byte == b','
            && bytes.len() >= index + 4
            && bytes[index + 1..index + 4].iter().all(u8::is_ascii_digit)
            && bytes.get(index + 4).is_none_or(|b| !b.is_ascii_digit())
        {
            // thousands separator
        } else {
            break;
        }
        index += 1;
    }
    let cleaned = cleaned.trim_end_matches('.');
    if cleaned.is_empty() || cleaned == "-" {
        return None;
    }
    cleaned.parse().ok()
}

/// The number right after `key`.
pub fn number_after(text: &str, key: &str) -> Option<f64> {
    leading_number(after(text, key)?)
}

/// An integer right after `key` (must be non-negative).
pub fn integer_after(text: &str, key: &str) -> Option<u64> {
    let value = number_after(text, key)?;
    (value >= 0.0 && value.fract() == 0.0 && value < 1e18).then_some(value as u64)
}

/// A size at the start of `text`: `16.46 GiB`, `6.0160 GB` (vLLM/SGLang "GB" mean GiB),
/// `3820.93 MiB`, `512 KiB`, `1024 bytes`. `gb_is_gib` says how to read `GB`.
pub fn leading_size(text: &str, gb_is_gib: bool) -> Option<Bytes> {
    let text = text.trim_start_matches([' ', '(', '=', ':']);
    let number = leading_number(text)?;
    if number < 0.0 {
        return None;
    }
    let rest = text
        .trim_start_matches(|c: char| c.is_ascii_digit() || c == '.' || c == ',' || c == '-')
        .trim_start();
    let unit = rest
        .split(|c: char| !c.is_ascii_alphabetic())
        .next()
        .unwrap_or("");
    let multiplier = match unit {
        "GiB" => 1024.0 * 1024.0 * 1024.0,
        "GB" | "G" if gb_is_gib => 1024.0 * 1024.0 * 1024.0,
        "GB" => 1e9,
        "MiB" => 1024.0 * 1024.0,
        "MB" => 1024.0 * 1024.0,
        "KiB" => 1024.0,
        "B" | "bytes" => 1.0,
        _ => return None,
    };
    Some(Bytes((number * multiplier).round() as u64))
}

/// A size right after `key`.
pub fn size_after(text: &str, key: &str, gb_is_gib: bool) -> Option<Bytes> {
    leading_size(after(text, key)?, gb_is_gib)
}

/// The value of a setting printed as `key=value`, `'key': value`, `"key": value` or
/// `key: value` (Rust `Debug`), unquoted; `None`/`null` values give `None`.
pub fn setting<'a>(text: &'a str, key: &str) -> Option<&'a str> {
    let mut search_from = 0;
    while let Some(found) = text[search_from..].find(key) {
        let at = search_from + found;
        search_from = at + key.len();
        let before = text[..at].chars().next_back();
        if before.is_some_and(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-' || c == '.') {
            continue;
        }
        let mut rest = &text[at + key.len()..];
        rest = rest.strip_prefix(['\'', '"']).unwrap_or(rest);
        let value = if let Some(value) = rest.strip_prefix('=') {
            value
        } else if let Some(value) = rest.strip_prefix(": ") {
            value
        } else if let Some(value) = rest.strip_prefix(':') {
            value
        } else {
            continue;
        };
        let value = value.trim_start();
        let value = read_value(value);
        if value.is_empty() || matches!(value, "None" | "null" | "none") {
            return None;
        }
        return Some(value);
    }
    None
}

fn read_value(value: &str) -> &str {
    if let Some(rest) = value.strip_prefix(['\'', '"']) {
        let quote = value.as_bytes()[0] as char;
        return rest.find(quote).map_or(rest, |end| &rest[..end]);
    }
    // `Some(4096)` (Rust Debug) → `4096`.
    if let Some(inner) = value.strip_prefix("Some(") {
        let inner = inner.strip_prefix(['\'', '"']).unwrap_or(inner);
        let end = inner.find([')', '"', '\'']).unwrap_or(inner.len());
        return &inner[..end];
    }
    let end = value.find([',', ')', '}', ']', ' ']).unwrap_or(value.len());
    &value[..end]
}

/// A setting parsed as a number.
pub fn setting_number(text: &str, key: &str) -> Option<f64> {
    setting(text, key).and_then(|value| value.trim().parse().ok())
}

/// A setting parsed as a non-negative integer.
pub fn setting_integer(text: &str, key: &str) -> Option<u64> {
    setting(text, key).and_then(|value| value.trim().parse().ok())
}

/// A setting parsed as a boolean (`True`/`true`/`False`/`false`).
pub fn setting_bool(text: &str, key: &str) -> Option<bool> {
    match setting(text, key)? {
        "True" | "true" => Some(true),
        "False" | "false" => Some(false),
        _ => None,
    }
}

/// The first whitespace-delimited token after `key`, without trailing punctuation.
pub fn word_after<'a>(text: &'a str, key: &str) -> Option<&'a str> {
    let rest = after(text, key)?.trim_start();
    let word = rest.split_whitespace().next()?;
    let word = word.trim_end_matches([',', '.', ';', ')', ':']);
    (!word.is_empty()).then_some(word)
}

/// Shortens a line for the timeline (at a character boundary).
pub fn shorten(text: &str, limit: usize) -> String {
    let text = text.trim();
    if text.len() <= limit {
        return text.to_string();
    }
    let mut end = limit;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    format!("{}…", &text[..end])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn timestamps() {
        let vllm = parse_timestamp("INFO 04-02 21:42:59 model_runner.py:1099] Loading").unwrap();
        assert_eq!(vllm.text, "04-02 21:42:59");
        let later = parse_timestamp("INFO 04-02 21:43:09 x").unwrap();
        assert_eq!(later.seconds.unwrap() - vllm.seconds.unwrap(), 10.0);
        let tgi = parse_timestamp("2024-06-17T13:18:29.371622Z  INFO shard-manager").unwrap();
        assert_eq!(tgi.text, "2024-06-17T13:18:29.371622Z");
        let sglang = parse_timestamp("[2025-01-01 12:00:00 TP0] Load weight begin").unwrap();
        assert_eq!(sglang.text, "2025-01-01 12:00:00");
        let gin = parse_timestamp("[GIN] 2024/05/01 - 12:00:00 | 200 |").unwrap();
        assert_eq!(gin.text, "2024/05/01 - 12:00:00");
        assert!(parse_timestamp("Loading checkpoint shards: 100%").is_none());
        assert!(parse_timestamp("llama_model_loader: - kv 12-34").is_none());
    }

    #[test]
    fn numbers_and_sizes() {
        assert_eq!(
            number_after("GPU KV cache size: 442,160 tokens", "size:"),
            Some(442160.0)
        );
        assert_eq!(number_after("took 6.0160 GB and", "took"), Some(6.016));
        assert_eq!(
            size_after("took 16.46 GiB memory", "took", true),
            Some(Bytes((16.46f64 * 1073741824.0).round() as u64))
        );
        assert_eq!(
            size_after("size = 3820.93 MiB", "size =", true).map(|b| b.0 / 1024),
            Some(3912632)
        );
        assert_eq!(
            size_after("x = 2 GB", "x =", false),
            Some(Bytes(2_000_000_000))
        );
        assert_eq!(number_after("K = -1.5GiB", "K ="), Some(-1.5));
    }

    #[test]
    fn settings() {
        let v1 = "config: model='meta-llama/Llama-3-8B', dtype=torch.bfloat16, max_seq_len=8192, tensor_parallel_size=2, enforce_eager=False, quantization=None";
        assert_eq!(setting(v1, "model"), Some("meta-llama/Llama-3-8B"));
        assert_eq!(setting(v1, "dtype"), Some("torch.bfloat16"));
        assert_eq!(setting_integer(v1, "max_seq_len"), Some(8192));
        assert_eq!(setting_integer(v1, "tensor_parallel_size"), Some(2));
        assert_eq!(setting_bool(v1, "enforce_eager"), Some(false));
        assert_eq!(setting(v1, "quantization"), None);
        let dict = "non-default args: {'model': 'Qwen/Qwen2-7B', 'gpu_memory_utilization': 0.95, 'max_model_len': 32768}";
        assert_eq!(setting(dict, "model"), Some("Qwen/Qwen2-7B"));
        assert_eq!(setting_number(dict, "gpu_memory_utilization"), Some(0.95));
        let debug = "Args { model_id: \"bigscience/bloom\", max_total_tokens: Some(4096), num_shard: Some(2), quantize: None }";
        assert_eq!(setting(debug, "model_id"), Some("bigscience/bloom"));
        assert_eq!(setting_integer(debug, "max_total_tokens"), Some(4096));
        assert_eq!(setting(debug, "quantize"), None);
        assert_eq!(setting("xmodel=1", "model"), None);
    }
}
