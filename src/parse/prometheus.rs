//! Parse Prometheus text exposition format (probe memory source).
//!
//! Reads what a `/metrics` endpoint answers (dcgm-exporter, vLLM, SGLang, TGI): sample lines
//! `name{label="value",…} value [timestamp]`, with `# HELP`/`# TYPE` comments and the
//! OpenMetrics `# EOF` and exemplars (` # {…} …` after the value) tolerated. Format reference:
//! <https://prometheus.io/docs/instrumenting/exposition_formats/>. Pure: no HTTP here.
//!
//! Also parses the selector a user writes after `#` in `--memory-from prometheus:URL#SELECTOR`:
//! `METRIC` or `METRIC{label="value",…}` (exact matches only).

use std::collections::BTreeMap;

/// Errors of the exposition parser and of selectors, with the line and the bad text.
#[derive(Debug, thiserror::Error, PartialEq)]
pub enum PrometheusError {
    /// A sample line that does not follow the format.
    #[error("line {line}: {reason} in `{text}`")]
    BadLine {
        /// 1-based line number.
        line: usize,
        /// What is wrong.
        reason: &'static str,
        /// The line (cut to 200 characters).
        text: String,
    },
    /// A selector (`METRIC{label="v"}`) that cannot be parsed.
    #[error("bad metric selector `{text}`: {reason}")]
    BadSelector {
        /// The selector as given.
        text: String,
        /// What is wrong.
        reason: &'static str,
    },
}

/// One sample: a metric name, its labels and its value.
#[derive(Debug, Clone, PartialEq)]
pub struct Sample {
    /// Metric name, e.g. `DCGM_FI_DEV_FB_USED` or `vllm:kv_cache_usage_perc`.
    pub name: String,
    /// Labels, sorted by name.
    pub labels: BTreeMap<String, String>,
    /// The value (`NaN`, `+Inf`, `-Inf` allowed).
    pub value: f64,
}

/// Picks samples: a metric name and labels that must match exactly.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Selector {
    /// Metric name.
    pub name: String,
    /// Required labels.
    pub labels: BTreeMap<String, String>,
}

impl Selector {
    /// A selector on a name alone.
    pub fn name(name: &str) -> Selector {
        Selector {
            name: name.to_string(),
            labels: BTreeMap::new(),
        }
    }

    /// Parses `METRIC` or `METRIC{label="value",…}`.
    pub fn parse(text: &str) -> Result<Selector, PrometheusError> {
        let bad = |reason| PrometheusError::BadSelector {
            text: text.to_string(),
            reason,
        };
        let trimmed = text.trim();
        let (name, rest) = split_name(trimmed);
        if name.is_empty() {
            return Err(bad("no metric name"));
        }
        let labels = if rest.is_empty() {
            BTreeMap::new()
        } else if let Some(body) = rest.strip_prefix('{') {
            let (labels, after) = parse_labels(body).map_err(bad)?;
            if !after.trim().is_empty() {
                return Err(bad("unexpected text after `}`"));
            }
            labels
        } else {
            return Err(bad("expected `{` after the metric name"));
        };
        Ok(Selector {
            name: name.to_string(),
            labels,
        })
    }

    /// Whether a sample matches: same name, and every required label equal.
    pub fn matches(&self, sample: &Sample) -> bool {
        sample.name == self.name
            && self
                .labels
                .iter()
                .all(|(key, value)| sample.labels.get(key) == Some(value))
    }

    /// The samples this selector picks, in exposition order.
    pub fn select<'a>(&self, samples: &'a [Sample]) -> Vec<&'a Sample> {
        samples
            .iter()
            .filter(|sample| self.matches(sample))
            .collect()
    }
}

impl std::fmt::Display for Selector {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}", self.name)?;
        if !self.labels.is_empty() {
            let labels: Vec<String> = self
                .labels
                .iter()
                .map(|(key, value)| format!("{key}={value:?}"))
                .collect();
            write!(f, "{{{}}}", labels.join(","))?;
        }
        Ok(())
    }
}

/// Parses a whole exposition. Comments and blank lines are skipped; any malformed sample
/// line is an error naming its line.
pub fn parse(text: &str) -> Result<Vec<Sample>, PrometheusError> {
    let (samples, mut errors) = parse_lenient(text);
    match errors.is_empty() {
        true => Ok(samples),
        false => Err(errors.swap_remove(0)),
    }
}

/// Parses a whole exposition, keeping every sample line that parses and an error for each
/// that does not: one odd series of an exporter (say a Prometheus 3 quoted UTF-8 name) must
/// not hide the gauge the probe reads.
pub fn parse_lenient(text: &str) -> (Vec<Sample>, Vec<PrometheusError>) {
    let mut samples = Vec::new();
    let mut errors = Vec::new();
    for (number, raw) in text.lines().enumerate() {
        let line = raw.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        match parse_line(line) {
            Ok(sample) => samples.push(sample),
            Err(reason) => errors.push(PrometheusError::BadLine {
                line: number + 1,
                reason,
                text: line.chars().take(200).collect(),
            }),
        }
    }
    (samples, errors)
}

fn parse_line(line: &str) -> Result<Sample, &'static str> {
    let (name, rest) = split_name(line);
    if name.is_empty() {
        return Err("no metric name");
    }
    let (labels, rest) = match rest.strip_prefix('{') {
        Some(body) => parse_labels(body)?,
        None => (BTreeMap::new(), rest),
    };
    // OpenMetrics exemplars follow ` # `; they are not part of the value.
    let rest = rest.split(" # ").next().unwrap_or_default();
    let value_text = rest.split_whitespace().next().ok_or("no value")?;
    let value = parse_value(value_text).ok_or("value is not a number")?;
    Ok(Sample {
        name: name.to_string(),
        labels,
        value,
    })
}

fn split_name(text: &str) -> (&str, &str) {
    let end = text
        .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_' || c == ':'))
        .unwrap_or(text.len());
    (&text[..end], text[end..].trim_start())
}

fn parse_value(text: &str) -> Option<f64> {
    match text {
        "+Inf" | "Inf" => Some(f64::INFINITY),
        "-Inf" => Some(f64::NEG_INFINITY),
        "NaN" => Some(f64::NAN),
        other => other.parse().ok(),
    }
}

/// Parses `label="value",…}` (after the opening brace); returns the labels and the text
/// after the closing brace.
fn parse_labels(body: &str) -> Result<(BTreeMap<String, String>, &str), &'static str> {
    let mut labels = BTreeMap::new();
    let mut rest = body.trim_start();
    loop {
        if let Some(after) = rest.strip_prefix('}') {
            return Ok((labels, after));
        }
        let (key, after_key) = split_name(rest);
        if key.is_empty() {
            return Err("bad label name");
        }
        let after_eq = after_key
            .strip_prefix('=')
            .ok_or("expected `=` after a label name")?
            .trim_start();
        let after_quote = after_eq
            .strip_prefix('"')
            .ok_or("expected `\"` to open a label value")?;
        let mut value = String::new();
        let mut characters = after_quote.char_indices();
        let mut end = None;
        while let Some((offset, character)) = characters.next() {
            match character {
                '\\' => match characters.next() {
                    Some((_, 'n')) => value.push('\n'),
                    Some((_, escaped)) => value.push(escaped),
                    None => return Err("unterminated label value"),
                },
                '"' => {
                    end = Some(offset + 1);
                    break;
                }
                other => value.push(other),
            }
        }
        let end = end.ok_or("unterminated label value")?;
        labels.insert(key.to_string(), value);
        rest = after_quote[end..].trim_start();
        if let Some(after_comma) = rest.strip_prefix(',') {
            rest = after_comma.trim_start();
        } else if !rest.starts_with('}') {
            return Err("expected `,` or `}` after a label value");
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    // Shaped like dcgm-exporter 3.x and vLLM 0.8 output (names from their docs; values invented).
    const TEXT: &str = r#"# HELP DCGM_FI_DEV_FB_USED Framebuffer memory used (in MiB).
# TYPE DCGM_FI_DEV_FB_USED gauge
DCGM_FI_DEV_FB_USED{gpu="0",UUID="GPU-aaaa",modelName="NVIDIA H200"} 1234
DCGM_FI_DEV_FB_USED{gpu="1",UUID="GPU-bbbb",modelName="NVIDIA H200"} 77
# TYPE vllm:kv_cache_usage_perc gauge
vllm:kv_cache_usage_perc{engine="0",model_name="m \"q\"\\x"} 0.25
vllm:num_preemptions_total{model_name="m"} 3.0 1700000000000
up NaN
x_total{a="1",} 1e3 # {trace_id="abc"} 1.0
# EOF
"#;

    #[test]
    fn parses_samples_labels_and_values() {
        let samples = parse(TEXT).unwrap();
        assert_eq!(samples.len(), 6);
        assert_eq!(samples[0].name, "DCGM_FI_DEV_FB_USED");
        assert_eq!(samples[0].labels["UUID"], "GPU-aaaa");
        assert_eq!(samples[0].value, 1234.0);
        assert_eq!(samples[2].name, "vllm:kv_cache_usage_perc");
        assert_eq!(samples[2].labels["model_name"], "m \"q\"\\x");
        assert_eq!(samples[3].value, 3.0);
        assert!(samples[4].value.is_nan());
        assert_eq!(samples[5].value, 1000.0);
        assert_eq!(samples[5].labels["a"], "1");
    }

    #[test]
    fn selects_by_name_and_labels() {
        let samples = parse(TEXT).unwrap();
        let selector = Selector::parse(r#"DCGM_FI_DEV_FB_USED{gpu="1"}"#).unwrap();
        let picked = selector.select(&samples);
        assert_eq!(picked.len(), 1);
        assert_eq!(picked[0].value, 77.0);
        assert_eq!(
            Selector::parse("DCGM_FI_DEV_FB_USED")
                .unwrap()
                .select(&samples)
                .len(),
            2
        );
        assert_eq!(selector.to_string(), r#"DCGM_FI_DEV_FB_USED{gpu="1"}"#);
    }

    #[test]
    fn bad_lines_name_their_line() {
        let error = parse("ok 1\nbroken{a=\"1\" 2\n").unwrap_err();
        assert_eq!(
            error.to_string(),
            "line 2: expected `,` or `}` after a label value in `broken{a=\"1\" 2`"
        );
        assert!(parse("m abc").is_err());
        assert!(parse("m{a=\"x").is_err());
        assert!(parse("m").is_err());
    }

    #[test]
    fn one_bad_line_does_not_hide_the_others() {
        // A Prometheus 3 quoted UTF-8 metric name, then the gauge the probe reads.
        let text = "{\"gpu.mem.used\", gpu=\"0\"} 5\nDCGM_FI_DEV_FB_USED{gpu=\"0\"} 1.5E+3 -12\n";
        let (samples, errors) = parse_lenient(text);
        assert_eq!(samples.len(), 1);
        assert_eq!(samples[0].value, 1500.0);
        assert_eq!(errors.len(), 1);
        assert!(errors[0].to_string().starts_with("line 1: no metric name"));
        assert!(parse(text).is_err());
    }

    #[test]
    fn values_in_every_spelling() {
        let (samples, errors) =
            parse_lenient("a +Inf\nb -Inf\nc 1.5e-3\nd -0\ne +7\nf 18446744073709551616\n");
        assert!(errors.is_empty(), "{errors:?}");
        let values: Vec<f64> = samples.iter().map(|s| s.value).collect();
        assert_eq!(
            values,
            [
                f64::INFINITY,
                f64::NEG_INFINITY,
                0.0015,
                0.0,
                7.0,
                1.8446744073709552e19
            ]
        );
    }

    #[test]
    fn bad_selectors() {
        assert!(Selector::parse("").is_err());
        assert!(Selector::parse("m{a=1}").is_err());
        assert!(Selector::parse("m x").is_err());
        assert!(Selector::parse("m{a=\"1\"} x").is_err());
    }
}
