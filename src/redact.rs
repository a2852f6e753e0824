//! The one redactor: secrets and private paths removed from everything oomdoc records,
//! renders or prints. `oomdoc run` applies it to the whole record before each write and to its
//! summary; `report` and `diff` apply it to every string they read, before analysis.
//!
//! Pure functions over strings, argument vectors, environment maps and JSON values. Nothing
//! here reads the environment: the caller passes the home directory and user names.
//!
//! What goes (the list is also in `docs/redaction.md`; one table test per kind below):
//! - tokens by shape: Hugging Face `hf_…`, OpenAI-style `sk-…`, GitHub `ghp_`/`gho_`/`ghu_`/
//!   `ghs_`/`ghr_`/`github_pat_…`, GitLab `glpat-…`, Slack `xoxb-`/`xoxp-`/`xoxa-`/…, AWS access
//!   key ids `AKIA…`/`ASIA…`, Google API keys `AIza…`, JWTs `eyJ….eyJ….…`;
//! - `Authorization:` header values (`Basic`, `Bearer`, `Token` or bare) and `Bearer …` anywhere;
//! - private-key blocks (`-----BEGIN … PRIVATE KEY-----` … `-----END … PRIVATE KEY-----`, PEM and
//!   OpenSSH; an unterminated block to the end of the text), and a line that is nothing but a
//!   long base64 run (the body of such a block met one line at a time);
//! - values of secret-looking flags: `--api-key X`, `--api-key=X`, `--hf-token X`, `--password X`
//!   in an argument vector or inside a line;
//! - values of secret-looking names, whatever the syntax: `NAME=value`, `export NAME=value`,
//!   `name = value` (INI), `NAME: value` (YAML, logs), `'name': 'value'` / `"name": [...]`
//!   (Python and JSON reprs, e.g. vLLM's `non-default args: {'api_key': [...]}`);
//! - environment values of secret-looking names (the name stays, so a comparison still sees it
//!   was set);
//! - passwords in URLs: `scheme://user:pass@host` → `scheme://user:[REDACTED]@host` (the password
//!   may hold `/`);
//! - home directories: `/home/<user>`, `/Users/<user>`, `/root`, the given home, `C:\Users\<user>`
//!   → `~`;
//! - user names (the given one and those found in home paths or `USER`/`LOGNAME`/`USERNAME` of
//!   records) as whole words → `[USER]`, unless shorter than 3 letters or a common word (`root`,
//!   `admin`, …).
//!
//! A secret-looking name ([`is_secret_name`]) is, after dropping leading dashes and reading `-`
//! and `.` as `_`, case-insensitively: `KEY`, `TOKEN`, `SECRET`, `PASSWORD`, `PASSWD`, `PASS`,
//! `APIKEY`, `AUTH`, `CREDENTIAL(S)`; or one ending in `_KEY`, `_KEYS`, `APIKEY`, `_TOKEN`,
//! `_PASS`, `_PASSWD`, `_AUTH`; or one holding `SECRET`, `PASSWORD`, `PASSWD`, `CREDENTIAL`,
//! `API_KEY`, `_AUTH_` or starting with `AUTH_`. So `VLLM_API_KEYS`, `VLLM_API_KEY_SECONDARY`,
//! `HF_HUB_AUTH`, `AWS_SECRET_ACCESS_KEY` are secret; `--max-tokens`, `--tokenizer`,
//! `TOKENIZERS_PARALLELISM`, `num_key_value_heads` are not.
//!
//! What stays: anything of none of these shapes (a secret printed bare in a sentence, with no
//! name, flag or known prefix, cannot be told from other text), and the child's own `log.txt`
//! of `oomdoc run`, which is its output as printed (see `docs/redaction.md`).

use std::borrow::Cow;
use std::collections::BTreeMap;
use std::sync::OnceLock;

use regex::{Captures, Regex};
use serde::de::DeserializeOwned;
use serde::Serialize;
use serde_json::Value;

/// What a removed secret is replaced with.
pub const REDACTED: &str = "[REDACTED]";
/// What a user name is replaced with.
pub const USER: &str = "[USER]";

/// Names too common as words to be replaced outside paths.
const COMMON_NAMES: &[&str] = &[
    "root", "user", "users", "admin", "ubuntu", "debian", "nobody", "runner", "app", "home",
    "data", "shared", "work", "test", "dev",
];

/// Removes secrets and private paths; knows the home directory and the user names to hide.
#[derive(Debug, Clone, Default)]
pub struct Redactor {
    /// The home directory, e.g. `/home/alice` (replaced by `~` besides the usual roots).
    home: Option<String>,
    /// User names as whole-word patterns, e.g. `\balice\b`.
    users: Vec<Regex>,
    /// The names of `users`, to keep them unique.
    user_names: Vec<String>,
}

struct Patterns {
    private_key_block: Regex,
    base64_line: Regex,
    tokens: Regex,
    authorization: Regex,
    bearer: Regex,
    url_password: Regex,
    flag_value: Regex,
    named_value: Regex,
    home: Regex,
    home_user: Regex,
    windows_home: Regex,
}

/// Compiles the redaction patterns now (they are otherwise compiled on first use, which is
/// the rendering of a report): a caller with an idle thread calls this beside its own work,
/// so that the patterns' compilation (several ms) leaves the path to the output.
pub fn prepare() {
    let _ = patterns();
}

#[expect(
    clippy::expect_used,
    reason = "constant patterns, compiled by every test of this module"
)]
fn patterns() -> &'static Patterns {
    static PATTERNS: OnceLock<Patterns> = OnceLock::new();
    PATTERNS.get_or_init(|| {
        let compile = |pattern: &str| Regex::new(pattern).expect("valid redaction pattern");
        Patterns {
            private_key_block: compile(
                r"-----BEGIN [A-Z0-9 ]*PRIVATE KEY( BLOCK)?-----(?s:.*?)(?:-----END [A-Z0-9 ]*PRIVATE KEY( BLOCK)?-----|\z)",
            ),
            // A PEM/OpenSSH body line: base64 only, with digits and both cases.
            base64_line: compile(r"^\s*[A-Za-z0-9+/]{20,}={0,2}\s*$"),
            // hf_ tokens are `hf_` + 34 letters today; sk- keys include `sk-proj-…`, `sk-ant-…`.
            // Short look-alikes (`sk-1`) are left alone: the floor of 8 characters keeps words.
            tokens: compile(concat!(
                r"\b(?:hf_[A-Za-z0-9]{8,}|sk-[A-Za-z0-9_\-]{8,}",
                r"|gh[pousr]_[A-Za-z0-9]{16,}|github_pat_[A-Za-z0-9_]{16,}",
                r"|glpat-[A-Za-z0-9_\-]{16,}|xox[abposr]-[A-Za-z0-9\-]{8,}",
                r"|(?:AKIA|ASIA)[0-9A-Z]{16}|AIza[0-9A-Za-z_\-]{30,}",
                r"|eyJ[A-Za-z0-9_\-]{4,}\.[A-Za-z0-9_\-]{4,}\.[A-Za-z0-9_\-]*)",
            )),
            authorization: compile(
                r#"(?i)\b(proxy-)?(authorization["']?\s*[:=]\s*["']?)(?:(basic|bearer|token|digest|negotiate)\s+)?[^\s'",;\[][^\s'",;]*"#,
            ),
            bearer: compile(r#"(?i)\b(bearer)(\s+|%20)[^\s'",;\[\]][^\s'",;\]]*"#),
            url_password: compile(r#"\b([A-Za-z][A-Za-z0-9+.\-]*://[^\s:/@'"]*):[^\s@'"]+@"#),
            flag_value: compile(
                r#"(^|[^A-Za-z0-9_\-])(--?[A-Za-z][A-Za-z0-9_.\-]*)(?:(=)("[^"]*"|'[^']*'|[^\s"']+)|(\s+)("[^"]*"|'[^']*'|[^\s"'\-][^\s"']*))"#,
            ),
            named_value: compile(
                r#"(^|[^A-Za-z0-9_.\-])(["']?)([A-Za-z_][A-Za-z0-9_.\-]*)(["']?)(\s*[:=]\s*)(\[[^\]]*\]?|"[^"]*"?|'[^']*'?|[^\s'"}]+)"#,
            ),
            home: compile(r#"(?:/home/[^/\s'":]+|/Users/[^/\s'":]+|/root)(?:/|\b|$)"#),
            home_user: compile(r#"(?:/var)?/(?:home|Users)/([^/\s:'"=,;)\]}]+)"#),
            windows_home: compile(r#"(?i)\b[A-Z]:\\Users\\([^\\\s:'"]+)"#),
        }
    })
}

impl Redactor {
    /// A redactor for this home directory and user name (either may be unknown).
    pub fn new(home: Option<String>, user: Option<String>) -> Self {
        let mut redactor = Redactor {
            home: home.filter(|home| home.trim_end_matches('/').len() > 1),
            ..Redactor::default()
        };
        if let Some(user) = user {
            redactor.add_user(&user);
        }
        redactor
    }

    /// A redactor for a set of records: hides the user names found in their home paths and in
    /// `USER`/`LOGNAME`/`USERNAME` values (a report may join records of several users).
    pub fn for_values(values: &[&Value]) -> Self {
        let mut redactor = Redactor::default();
        redactor.add_users_from(values);
        redactor
    }

    /// Adds the user names found in `values` (see [`Redactor::for_values`]).
    pub fn add_users_from(&mut self, values: &[&Value]) {
        let mut names: Vec<String> = Vec::new();
        for value in values {
            collect_users(value, None, &mut names);
        }
        names.sort();
        names.dedup();
        for name in names {
            self.add_user(&name);
        }
    }

    /// Adds the user names found in a typed document (as [`Redactor::add_users_from`] finds
    /// them in its JSON form).
    pub fn add_users_from_typed<T: Serialize>(&mut self, item: &T) {
        if let Ok(value) = serde_json::to_value(item) {
            self.add_users_from(&[&value]);
        }
    }

    /// Adds the user names found in home paths of free text (a log read with the records).
    pub fn add_users_from_text(&mut self, text: &str) {
        let mut names: Vec<String> = Vec::new();
        home_users(text, &mut names);
        // `add_user` skips a name it already has.
        for name in names {
            self.add_user(&name);
        }
    }

    fn add_user(&mut self, name: &str) {
        if name.chars().count() < 3
            || COMMON_NAMES.contains(&name.to_ascii_lowercase().as_str())
            || self.user_names.iter().any(|known| known == name)
        {
            return;
        }
        if let Ok(regex) = Regex::new(&format!(r"\b{}\b", regex::escape(name))) {
            self.users.push(regex);
            self.user_names.push(name.to_owned());
        }
    }

    /// Removes every kind listed in the module documentation from free text (a log line or a
    /// whole log, a path, one argument, a rendered summary).
    pub fn text(&self, text: &str) -> String {
        let patterns = patterns();
        let mut out = patterns
            .private_key_block
            .replace_all(text, REDACTED)
            .into_owned();
        out = base64_lines(&out);
        out = patterns.tokens.replace_all(&out, REDACTED).into_owned();
        out = patterns
            .authorization
            .replace_all(&out, authorization)
            .into_owned();
        out = patterns
            .bearer
            .replace_all(&out, |captures: &Captures<'_>| {
                format!("{}{}{REDACTED}", &captures[1], &captures[2])
            })
            .into_owned();
        out = patterns
            .url_password
            .replace_all(&out, |captures: &Captures<'_>| {
                format!("{}:{REDACTED}@", &captures[1])
            })
            .into_owned();
        out = mask_values(&out, &patterns.flag_value, 2, &[4, 6], is_secret_flag);
        out = mask_values(&out, &patterns.named_value, 3, &[6], is_secret_name);
        out = self.paths(&out);
        for user in &self.users {
            if let Cow::Owned(replaced) = user.replace_all(&out, USER) {
                out = replaced;
            }
        }
        out
    }

    fn paths(&self, text: &str) -> String {
        let mut out = match self.home.as_deref() {
            // A home outside the usual roots (`/data/alice`).
            Some(home) => replace_path_prefix(text, home.trim_end_matches('/')),
            None => text.to_owned(),
        };
        let patterns = patterns();
        out = patterns
            .home
            .replace_all(&out, |captures: &Captures<'_>| {
                if captures[0].ends_with('/') {
                    "~/".to_owned()
                } else {
                    "~".to_owned()
                }
            })
            .into_owned();
        patterns.windows_home.replace_all(&out, "~").into_owned()
    }

    /// A copy of a typed value with every string in it redacted as in [`Redactor::value`]
    /// (an analysis result about to be rendered: its quoted log lines, paths and names).
    pub fn typed<T: Serialize + DeserializeOwned>(&self, item: &T) -> serde_json::Result<T> {
        let mut value = serde_json::to_value(item)?;
        self.value(&mut value);
        serde_json::from_value(value)
    }

    /// Redacts every string literal of serialised JSON as text, leaving the rest as written.
    /// A literal that does not read back as a JSON string is redacted as raw text (a
    /// replacement never holds a quote or a backslash, so the document stays valid).
    /// Each distinct literal is redacted once (a report repeats its strings: the same frames
    /// under many sites).
    pub fn json_text(&self, json: &str) -> String {
        let mut out = String::with_capacity(json.len());
        let mut rest = json;
        // Literals already redacted: where each one's redacted form starts and ends in `out`.
        let mut seen: std::collections::HashMap<&str, (usize, usize)> =
            std::collections::HashMap::new();
        while let Some(start) = rest.find('"') {
            out.push_str(&rest[..start]);
            let literal = &rest[start..];
            let end = string_literal_end(literal);
            let (quoted, after) = literal.split_at(end);
            rest = after;
            if let Some(&(from, to)) = seen.get(quoted) {
                let again = out[from..to].to_owned();
                out.push_str(&again);
                continue;
            }
            let from = out.len();
            match serde_json::from_str::<String>(quoted) {
                Ok(text) => {
                    let redacted = self.text(&text);
                    if redacted == text {
                        out.push_str(quoted);
                    } else {
                        match serde_json::to_string(&redacted) {
                            Ok(written) => out.push_str(&written),
                            Err(_) => out.push_str(&self.text(quoted)),
                        }
                    }
                }
                Err(_) => out.push_str(&self.text(quoted)),
            }
            seen.insert(quoted, (from, out.len()));
        }
        out.push_str(rest);
        out
    }

    /// Redacts a command line: the value after a secret-looking flag (`--api-key X`,
    /// `--token X`), then every argument as free text.
    pub fn argv(&self, argv: &[String]) -> Vec<String> {
        let mut out = Vec::with_capacity(argv.len());
        let mut hide_next = false;
        for argument in argv {
            if hide_next {
                out.push(REDACTED.to_owned());
                hide_next = false;
                continue;
            }
            if !argument.contains('=') && is_secret_flag(argument) {
                hide_next = true;
            }
            out.push(self.text(argument));
        }
        out
    }

    /// Redacts one environment value: the whole value for a secret-looking name, else as text.
    pub fn env_value(&self, name: &str, value: &str) -> String {
        if is_secret_name(name) {
            REDACTED.to_owned()
        } else {
            self.text(value)
        }
    }

    /// Redacts environment values (see [`Redactor::env_value`]); names stay.
    pub fn env(&self, env: &BTreeMap<String, String>) -> BTreeMap<String, String> {
        env.iter()
            .map(|(name, value)| (name.clone(), self.env_value(name, value)))
            .collect()
    }

    /// Digests of the redacted values (`fnv1a64:` and 16 hex digits), so that two records can
    /// tell that a variable changed without holding its value. A secret is redacted before
    /// it is digested, so its digest says nothing; a guessable value (a number) can be found
    /// again from its digest, as from any digest.
    pub fn env_digests(&self, env: &BTreeMap<String, String>) -> BTreeMap<String, String> {
        env.iter()
            .map(|(name, value)| {
                let redacted = self.env_value(name, value);
                (
                    name.clone(),
                    format!("fnv1a64:{:016x}", fnv1a64(redacted.as_bytes())),
                )
            })
            .collect()
    }

    /// Redacts every string of a JSON document in place: `environment`/`env` objects by
    /// variable name, `command`/`argv`/`args` arrays of strings as command lines, everything
    /// else as text.
    pub fn value(&self, value: &mut Value) {
        match value {
            Value::String(text) => *text = self.text(text),
            Value::Array(items) => items.iter_mut().for_each(|item| self.value(item)),
            Value::Object(map) => {
                for (key, item) in map.iter_mut() {
                    match (key.as_str(), &mut *item) {
                        ("environment" | "env", Value::Object(variables)) => {
                            for (name, variable) in variables.iter_mut() {
                                if let Value::String(text) = variable {
                                    *text = self.env_value(name, text);
                                } else if is_secret_name(name) {
                                    *variable = Value::from(REDACTED);
                                } else {
                                    self.value(variable);
                                }
                            }
                        }
                        ("command" | "argv" | "args", Value::Array(arguments))
                            if arguments.iter().all(Value::is_string) =>
                        {
                            let argv: Vec<String> = arguments
                                .iter()
                                .filter_map(|a| a.as_str().map(str::to_owned))
                                .collect();
                            *arguments = self.argv(&argv).into_iter().map(Value::from).collect();
                        }
                        _ => self.value(item),
                    }
                }
            }
            _ => {}
        }
    }
}

/// `Authorization: <scheme> <value>` with the value masked; a value already masked (the scheme
/// alone is left for the value) stays.
fn authorization(captures: &Captures<'_>) -> String {
    let whole = &captures[0];
    let start = captures.get(0).map_or(0, |m| m.start());
    let prefix_end = captures.get(2).map_or(0, |m| m.end()) - start;
    let value = whole.get(prefix_end..).unwrap_or("").trim_start();
    let scheme = captures.get(3).map(|m| m.as_str());
    if scheme.is_none()
        && ["basic", "bearer", "token", "digest", "negotiate"]
            .contains(&value.to_ascii_lowercase().as_str())
    {
        return whole.to_owned();
    }
    let proxy = captures.get(1).map_or("", |m| m.as_str());
    match scheme {
        Some(scheme) => format!("{proxy}{}{scheme} {REDACTED}", &captures[2]),
        None => format!("{proxy}{}{REDACTED}", &captures[2]),
    }
}

/// Masks the value (the first of `value_groups` that matched) of each match of `regex` whose
/// `name_group` is secret. A match of another name is looked at again from the end of the
/// name, so that its value can be the name of the next (`A: api_key = x`).
fn mask_values(
    text: &str,
    regex: &Regex,
    name_group: usize,
    value_groups: &[usize],
    is_secret: fn(&str) -> bool,
) -> String {
    let mut out = String::new();
    let mut copied = 0;
    let mut at = 0;
    while let Some(captures) = regex.captures_at(text, at) {
        let Some(name) = captures.get(name_group) else {
            break;
        };
        let value = value_groups.iter().find_map(|group| captures.get(*group));
        match value {
            Some(value) if is_secret(name.as_str()) => {
                out.push_str(&text[copied..value.start()]);
                out.push_str(&masked(value.as_str()));
                copied = value.end();
                at = value.end();
            }
            _ => at = name.end(),
        }
        if at >= text.len() {
            break;
        }
    }
    if copied == 0 {
        return text.to_owned();
    }
    out.push_str(&text[copied..]);
    out
}

/// The replacement of a secret value, keeping its quotes.
fn masked(value: &str) -> String {
    if value.starts_with('\'') {
        format!("'{REDACTED}'")
    } else if value.starts_with('"') {
        format!("\"{REDACTED}\"")
    } else {
        REDACTED.to_owned()
    }
}

/// Lines that are nothing but a long base64 run with digits and both cases (the body of a
/// private key met one line at a time) become [`REDACTED`].
fn base64_lines(text: &str) -> String {
    let patterns = patterns();
    let is_secret_line = |line: &str| {
        patterns.base64_line.is_match(line)
            && line.bytes().any(|b| b.is_ascii_digit())
            && line.bytes().any(|b| b.is_ascii_uppercase())
            && line.bytes().any(|b| b.is_ascii_lowercase())
    };
    if !text.split('\n').any(is_secret_line) {
        return text.to_owned();
    }
    text.split('\n')
        .map(|line| if is_secret_line(line) { REDACTED } else { line })
        .collect::<Vec<_>>()
        .join("\n")
}

/// The user names in the home paths of `text` (`/home/<user>`, `/Users/<user>`,
/// `C:\Users\<user>`), in order.
fn home_users(text: &str, names: &mut Vec<String>) {
    let patterns = patterns();
    for captures in patterns
        .home_user
        .captures_iter(text)
        .chain(patterns.windows_home.captures_iter(text))
    {
        if let Some(name) = captures.get(1) {
            names.push(name.as_str().to_owned());
        }
    }
}

fn collect_users(value: &Value, key: Option<&str>, names: &mut Vec<String>) {
    match value {
        Value::String(text) => {
            home_users(text, names);
            if matches!(key, Some("USER" | "LOGNAME" | "USERNAME")) && !text.is_empty() {
                names.push(text.clone());
            }
        }
        Value::Array(items) => items
            .iter()
            .for_each(|item| collect_users(item, None, names)),
        Value::Object(map) => map
            .iter()
            .for_each(|(key, item)| collect_users(item, Some(key), names)),
        _ => {}
    }
}

/// The length of the JSON string literal at the start of `text` (which starts with `"`), up to
/// and with its closing quote; the whole text when it has none.
fn string_literal_end(text: &str) -> usize {
    let mut escaped = false;
    for (index, byte) in text.bytes().enumerate().skip(1) {
        match byte {
            _ if escaped => escaped = false,
            b'\\' => escaped = true,
            b'"' => return index + 1,
            _ => {}
        }
    }
    text.len()
}

/// Whether a name (an environment variable, a config key, a flag without its dashes) holds a
/// secret; the rule is in the module documentation.
pub fn is_secret_name(name: &str) -> bool {
    let name: String = name
        .trim_start_matches('-')
        .chars()
        .map(|c| match c {
            '-' | '.' => '_',
            c => c.to_ascii_uppercase(),
        })
        .collect();
    let name = name.trim_start_matches('_');
    if name.is_empty() {
        return false;
    }
    matches!(
        name,
        "KEY"
            | "TOKEN"
            | "SECRET"
            | "PASSWORD"
            | "PASSWD"
            | "PASS"
            | "APIKEY"
            | "AUTH"
            | "CREDENTIAL"
            | "CREDENTIALS"
    ) || [
        "_KEY", "_KEYS", "APIKEY", "_TOKEN", "_PASS", "_PASSWD", "_AUTH",
    ]
    .iter()
    .any(|end| name.ends_with(end))
        || [
            "SECRET",
            "PASSWORD",
            "PASSWD",
            "CREDENTIAL",
            "API_KEY",
            "_AUTH_",
        ]
        .iter()
        .any(|part| name.contains(part))
        || name.starts_with("AUTH_")
}

/// Whether a command-line flag carries a secret value: a `-` or `--` flag with a
/// secret-looking name ([`is_secret_name`]).
pub fn is_secret_flag(flag: &str) -> bool {
    flag.starts_with('-') && is_secret_name(flag)
}

/// Whether an environment variable holds a secret ([`is_secret_name`]).
pub fn is_secret_env_name(name: &str) -> bool {
    is_secret_name(name)
}

/// Replaces `prefix` when it is a whole path prefix (followed by `/`, a non-path character or
/// the end), by `~`.
fn replace_path_prefix(text: &str, prefix: &str) -> String {
    if prefix.len() <= 1 {
        return text.to_owned();
    }
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(position) = rest.find(prefix) {
        let after = &rest[position + prefix.len()..];
        let boundary = after
            .chars()
            .next()
            .is_none_or(|c| c == '/' || !(c.is_alphanumeric() || c == '_' || c == '-' || c == '.'));
        out.push_str(&rest[..position]);
        if boundary {
            out.push('~');
        } else {
            out.push_str(prefix);
        }
        rest = after;
    }
    out.push_str(rest);
    out
}

/// 64-bit FNV-1a: fixed by its definition, so digests written by any oomdoc version compare.
fn fnv1a64(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325, |hash, byte| {
        (hash ^ u64::from(*byte)).wrapping_mul(0x0100_0000_01b3)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn environment_digests_change_with_the_value_and_hide_secrets() {
        let redactor = Redactor::new(None, None);
        let env = |name: &str, value: &str| BTreeMap::from([(name.to_owned(), value.to_owned())]);
        // The published FNV-1a test vector: "a" → af63dc4c8601ec8c.
        assert_eq!(fnv1a64(b"a"), 0xaf63_dc4c_8601_ec8c);
        let one = redactor.env_digests(&env("BATCH_SIZE", "64"));
        let two = redactor.env_digests(&env("BATCH_SIZE", "32"));
        assert_ne!(one, two);
        assert!(one["BATCH_SIZE"].starts_with("fnv1a64:"));
        assert_eq!(one["BATCH_SIZE"].len(), "fnv1a64:".len() + 16);
        // Two secrets digest alike: redacted first.
        assert_eq!(
            redactor.env_digests(&env("DB_PASSWORD", "hunter2")),
            redactor.env_digests(&env("DB_PASSWORD", "correct horse"))
        );
    }

    fn alice() -> Redactor {
        Redactor::new(Some("/home/alice".into()), Some("alice".into()))
    }

    #[test]
    fn json_text_redacts_each_string_and_keeps_the_layout() {
        let json = "{\n  \"b\": \"token ghp_abcdefghijklmnopqrstuvwxyz0123456789\",\n  \
                    \"a\": [\"/home/alice/x \\\"q\\\"\", 3, \"keep\"],\n  \"n\": 1.5\n}\n";
        let out = alice().json_text(json);
        assert_eq!(
            out,
            "{\n  \"b\": \"token [REDACTED]\",\n  \"a\": [\"~/x \\\"q\\\"\", 3, \"keep\"],\n  \
             \"n\": 1.5\n}\n"
        );
        let value: Value = serde_json::from_str(&out).unwrap_or_default();
        assert_eq!(value["a"][2], "keep");
        // An unterminated literal is redacted as raw text, never dropped.
        assert_eq!(alice().json_text("[\"/home/alice"), "[\"~");
        // A literal met again reads as it did the first time (it is redacted once).
        assert_eq!(
            alice().json_text("[\"/home/alice/a\", \"k\", \"/home/alice/a\", \"k\", \"/home/alice"),
            "[\"~/a\", \"k\", \"~/a\", \"k\", \"~"
        );
    }

    #[test]
    fn typed_redacts_every_string_of_a_struct() {
        let lines = strings(&["cmd --api-key abc", "/home/alice/run.py"]);
        assert_eq!(
            alice().typed(&lines).ok(),
            Some(strings(&["cmd --api-key [REDACTED]", "~/run.py"]))
        );
    }

    fn strings(items: &[&str]) -> Vec<String> {
        items.iter().map(|s| (*s).to_owned()).collect()
    }

    fn check(cases: &[(&str, &str)]) {
        let r = alice();
        for (input, expected) in cases {
            assert_eq!(r.text(input), *expected, "input: {input}");
            // Redacting twice changes nothing more.
            assert_eq!(r.text(expected), *expected, "again: {expected}");
        }
    }

    #[test]
    fn constant_patterns_compile() {
        let _ = patterns();
    }

    #[test]
    fn token_shapes() {
        check(&[
            (
                "token hf_AbCdEfGhIjKlMnOpQrStUvWxYz0123456789 ok",
                "token [REDACTED] ok",
            ),
            ("use sk-proj-abcDEF123456_xyz end", "use [REDACTED] end"),
            (
                "ghp_aBcDeFgHiJkLmNoPqRsTuVwXyZ0123456789 gho_aBcDeFgHiJkLmNoPqRsTuV",
                "[REDACTED] [REDACTED]",
            ),
            (
                "pat github_pat_11ABCDEFG0123456789_abcdefghij",
                "pat [REDACTED]",
            ),
            (
                "slack xoxb-1234567890-abcdefghij xoxp-1234567890-abcdef",
                "slack [REDACTED] [REDACTED]",
            ),
            ("aws AKIAIOSFODNN7EXAMPLE.", "aws [REDACTED]."),
            (
                "jwt eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U",
                "jwt [REDACTED]",
            ),
            // Look-alikes stay: too short, not a word start.
            ("task-1 sk-1 ask-questions", "task-1 sk-1 ask-questions"),
            ("max_num_batched_tokens=8192", "max_num_batched_tokens=8192"),
        ]);
    }

    #[test]
    fn authorization_headers() {
        check(&[
            (
                "Authorization: Bearer eyJhbGciOiJIUzI1NiJ9abc",
                "Authorization: Bearer [REDACTED]",
            ),
            (
                "curl -H 'authorization: bearer abc123'",
                "curl -H 'authorization: bearer [REDACTED]'",
            ),
            (
                "Authorization: Basic dXNlcjpwYXNzd29yZA==",
                "Authorization: Basic [REDACTED]",
            ),
            ("authorization=s3cr3tvalue x", "authorization=[REDACTED] x"),
            ("token: Bearer%20abc", "token: [REDACTED]"),
        ]);
    }

    #[test]
    fn url_passwords() {
        check(&[
            (
                "https://bob:s3cr3t@example.com/repo.git",
                "https://bob:[REDACTED]@example.com/repo.git",
            ),
            (
                "postgres://u:p@db:5432/x",
                "postgres://u:[REDACTED]@db:5432/x",
            ),
            (
                "redis://:pa/ss+w0rd@cache:6379",
                "redis://:[REDACTED]@cache:6379",
            ),
            (
                "https://example.com:8080/path",
                "https://example.com:8080/path",
            ),
        ]);
    }

    #[test]
    fn private_key_blocks() {
        let body = "b3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQAAAAAAAAABAAAAMwAAAAtzc2gtZW";
        let block = format!(
            "before\n-----BEGIN OPENSSH PRIVATE KEY-----\n{body}\n{body}\n-----END OPENSSH PRIVATE KEY-----\nafter"
        );
        assert_eq!(alice().text(&block), "before\n[REDACTED]\nafter");
        let rsa = "-----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEA7\n";
        assert_eq!(alice().text(rsa), "[REDACTED]");
        // Met one line at a time (a log line each): the body lines go too.
        assert_eq!(alice().text(body), REDACTED);
        assert_eq!(alice().text("-----BEGIN PRIVATE KEY-----"), "[REDACTED]");
        // Ordinary long words stay.
        assert_eq!(
            alice().text("torch.cuda.OutOfMemoryError"),
            "torch.cuda.OutOfMemoryError"
        );
        assert_eq!(
            alice().text("AllocatedBytesTotalReserved"),
            "AllocatedBytesTotalReserved"
        );
    }

    #[test]
    fn secret_flags_inside_text() {
        check(&[
            (
                "vllm serve m --api-key=abc123 --port 8000",
                "vllm serve m --api-key=[REDACTED] --port 8000",
            ),
            (
                "args: vllm serve m --api-key abc123 --port 8000",
                "args: vllm serve m --api-key [REDACTED] --port 8000",
            ),
            (
                "--hf-token 'x y z' --tokenizer t",
                "--hf-token '[REDACTED]' --tokenizer t",
            ),
            ("--api-key --hf-token X", "--api-key --hf-token [REDACTED]"),
            (
                "--max-tokens 512 --keys-dir d",
                "--max-tokens 512 --keys-dir d",
            ),
        ]);
    }

    #[test]
    fn secret_names_in_any_syntax() {
        check(&[
            (
                "non-default args: {'model': 'm', 'api_key': ['k1', 'k2'], 'hf_token': 'hf-x1'}",
                "non-default args: {'model': 'm', 'api_key': [REDACTED], 'hf_token': '[REDACTED]'}",
            ),
            (
                r#"{"api_key": "abc", "max_tokens": 5}"#,
                r#"{"api_key": "[REDACTED]", "max_tokens": 5}"#,
            ),
            (
                "aws_secret_access_key = wJalrXUtnFEMI/K7MDENG",
                "aws_secret_access_key = [REDACTED]",
            ),
            (
                "AWS_SECRET_ACCESS_KEY: wJalrXUtnFEMI/K7MDENG",
                "AWS_SECRET_ACCESS_KEY: [REDACTED]",
            ),
            ("password: hunter2", "password: [REDACTED]"),
            (
                "export WANDB_API_KEY=0123abcd",
                "export WANDB_API_KEY=[REDACTED]",
            ),
            (
                "HF_HUB_AUTH=x1 VLLM_API_KEYS=a,b",
                "HF_HUB_AUTH=[REDACTED] VLLM_API_KEYS=[REDACTED]",
            ),
            ("num_key_value_heads: 8", "num_key_value_heads: 8"),
            ("KeyError: 'x'", "KeyError: 'x'"),
            ("12:30:45 INFO", "12:30:45 INFO"),
        ]);
    }

    #[test]
    fn home_directories_become_tilde() {
        check(&[
            ("/home/alice/models/llama", "~/models/llama"),
            ("/home/bob/x", "~/x"),
            ("/Users/carol/.cache/huggingface", "~/.cache/huggingface"),
            ("/root/.cache", "~/.cache"),
            ("/root", "~"),
            ("cd /home/alice && ls", "cd ~ && ls"),
            ("PATH=/home/alice/bin:/usr/bin", "PATH=~/bin:/usr/bin"),
            ("/rootfs/x", "/rootfs/x"),
            ("/usr/lib/python3", "/usr/lib/python3"),
            (r"C:\Users\Dave\x", r"~\x"),
        ]);
    }

    #[test]
    fn home_outside_usual_roots() {
        let r = Redactor::new(Some("/data/u/dave/".into()), None);
        assert_eq!(r.text("/data/u/dave/ckpt"), "~/ckpt");
        assert_eq!(r.text("/data/u/davey/ckpt"), "/data/u/davey/ckpt");
        let root = Redactor::new(Some("/".into()), None);
        assert_eq!(root.text("/usr/bin"), "/usr/bin");
    }

    #[test]
    fn user_names_as_whole_words() {
        let r = alice();
        assert_eq!(r.text("owner alice, alicex"), "owner [USER], alicex");
        let short = Redactor::new(None, Some("al".into()));
        assert_eq!(short.text("al all"), "al all");
        let found = Redactor::for_values(&[&serde_json::json!({"cwd": "/home/carol/p"})]);
        assert_eq!(found.text("carol-box"), "[USER]-box");
    }

    #[test]
    fn argv_secret_flags() {
        let r = alice();
        let argv = strings(&[
            "vllm",
            "serve",
            "/home/alice/m",
            "--api-key",
            "sk-notreallyasecret",
            "--hf-token=hf_zzzzzzzzzzzzzzzz",
            "--token",
            "plainvalue",
            "--max-num-batched-tokens",
            "8192",
            "--password=x",
            "--tokenizer",
            "t",
        ]);
        assert_eq!(
            r.argv(&argv),
            strings(&[
                "vllm",
                "serve",
                "~/m",
                "--api-key",
                "[REDACTED]",
                "--hf-token=[REDACTED]",
                "--token",
                "[REDACTED]",
                "--max-num-batched-tokens",
                "8192",
                "--password=[REDACTED]",
                "--tokenizer",
                "t",
            ])
        );
    }

    #[test]
    fn secret_names() {
        for name in [
            "--api-key",
            "--api_key",
            "--token",
            "--hf-token",
            "--HF_TOKEN",
            "--secret",
            "--db-password",
            "-key",
            "--apikey",
            "HF_TOKEN",
            "HUGGING_FACE_HUB_TOKEN",
            "OPENAI_API_KEY",
            "AWS_SECRET_ACCESS_KEY",
            "DB_PASSWORD_FILE",
            "VLLM_API_KEYS",
            "VLLM_API_KEY_SECONDARY",
            "HF_HUB_AUTH",
            "GOOGLE_APPLICATION_CREDENTIALS",
            "password",
            "aws_secret_access_key",
        ] {
            assert!(is_secret_name(name), "{name}");
        }
        for name in [
            "--tokenizer",
            "--max-tokens",
            "--keys-dir",
            "--",
            "-",
            "TOKENIZERS_PARALLELISM",
            "VLLM_MAX_TOKENS",
            "PYTORCH_CUDA_ALLOC_CONF",
            "num_key_value_heads",
            "GIT_AUTHOR_NAME",
            "authorization",
        ] {
            assert!(!is_secret_name(name), "{name}");
        }
        assert!(!is_secret_flag("api-key"));
    }

    #[test]
    fn env_values() {
        let r = alice();
        let env: BTreeMap<String, String> = [
            ("HF_TOKEN", "hf_abcdefghijklmnop"),
            ("VLLM_API_KEYS", "k1,k2"),
            ("HF_HUB_AUTH", "x"),
            ("HF_HOME", "/home/alice/.cache/hf"),
            ("PYTORCH_CUDA_ALLOC_CONF", "expandable_segments:True"),
            ("VLLM_MAX_TOKENS", "5"),
        ]
        .into_iter()
        .map(|(k, v)| (k.to_owned(), v.to_owned()))
        .collect();
        let out = r.env(&env);
        assert_eq!(out["HF_TOKEN"], REDACTED);
        assert_eq!(out["VLLM_API_KEYS"], REDACTED);
        assert_eq!(out["HF_HUB_AUTH"], REDACTED);
        assert_eq!(out["HF_HOME"], "~/.cache/hf");
        assert_eq!(out["PYTORCH_CUDA_ALLOC_CONF"], "expandable_segments:True");
        assert_eq!(out["VLLM_MAX_TOKENS"], "5");
    }

    #[test]
    fn json_values_by_role() {
        let r = alice();
        let mut value = serde_json::json!({
            "command": ["vllm", "--api-key", "k-1"],
            "preflight": {"environment": {"VLLM_API_KEY_SECONDARY": "zz", "HF_HOME": "/home/alice/h"}},
            "explain": {"context": [{"line": 3, "text": "HF_TOKEN=abc"}]},
        });
        r.value(&mut value);
        assert_eq!(
            value,
            serde_json::json!({
                "command": ["vllm", "--api-key", "[REDACTED]"],
                "preflight": {"environment": {"VLLM_API_KEY_SECONDARY": "[REDACTED]", "HF_HOME": "~/h"}},
                "explain": {"context": [{"line": 3, "text": "HF_TOKEN=[REDACTED]"}]},
            })
        );
    }

    /// One secret of each kind: the text that plants it, and the part that must not survive.
    pub(crate) const PLANTED: &[(&str, &str)] = &[
        ("non-default args: {'api_key': ['Zq7secretA'], 'hf_token': 'Zq7secretB'}", "Zq7secret"),
        ("aws_secret_access_key = Zq7secret/C+x", "Zq7secret"),
        ("AWS_SECRET_ACCESS_KEY: Zq7secretD", "Zq7secret"),
        ("password: Zq7secretE", "Zq7secret"),
        ("https://u:Zq7/secretF@host/x", "Zq7/secret"),
        ("-----BEGIN OPENSSH PRIVATE KEY-----\nZq7secretGb3BlbnNzaC1rZXktdjEAAAAABG5v\n-----END OPENSSH PRIVATE KEY-----", "Zq7secret"),
        ("VLLM_API_KEYS=Zq7secretH", "Zq7secret"),
        ("VLLM_API_KEY_SECONDARY=Zq7secretI", "Zq7secret"),
        ("HF_HUB_AUTH=Zq7secretJ", "Zq7secret"),
        ("MY_SECRET_THING=Zq7secretK", "Zq7secret"),
        ("DB_PASSWORD_FILE=Zq7secretL", "Zq7secret"),
        ("GOOGLE_CREDENTIAL=Zq7secretM", "Zq7secret"),
        ("key AKIAZQ7SECRETNNNNNNN", "AKIAZQ7SECRET"),
        ("Authorization: Basic Zq7secretO", "Zq7secret"),
        ("Authorization: Bearer Zq7secretP", "Zq7secret"),
        ("export WANDB_API_KEY=Zq7secretQ", "Zq7secret"),
        ("--api-key Zq7secretR", "Zq7secret"),
        ("--api-key=Zq7secretS", "Zq7secret"),
        ("--hf-token Zq7secretT", "Zq7secret"),
        ("ghp_Zq7secretUUUUUUUUUUUUUUUUUUUUUUUUUUUU", "Zq7secret"),
        ("gho_Zq7secretVVVVVVVVVVVVVVV", "Zq7secret"),
        ("github_pat_Zq7secretWWWWWWWWWWWW", "Zq7secret"),
        ("xoxb-Zq7secretX-1234", "Zq7secret"),
        ("xoxp-Zq7secretY-1234", "Zq7secret"),
        ("hf_Zq7secretZzzzzzzzz", "Zq7secret"),
        ("sk-Zq7secretAAaaaa", "Zq7secret"),
        ("eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJacTdzZWNyZXQifQ.Zq7secretSig", "Zq7secret"),
    ];

    #[test]
    fn every_planted_kind_is_removed() {
        let r = alice();
        for (planted, secret) in PLANTED {
            let out = r.text(planted);
            assert!(!out.contains(secret), "{planted} → {out}");
        }
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(256))]
        /// A planted secret never survives, whatever surrounds it: free text, one argument or
        /// a whole command line, an environment value, a string inside JSON.
        #[test]
        fn planted_secrets_never_survive(
            kind in 0..PLANTED.len(),
            prefix in "[ -~]{0,12}",
            suffix in "[ -~]{0,12}",
            place in 0..4usize,
        ) {
            let r = alice();
            let (planted, secret) = PLANTED[kind];
            let line = format!("{prefix} {planted} {suffix}");
            let out = match place {
                0 => r.text(&line),
                1 => {
                    // One argument, or a flag and its value as two.
                    let mut argv = vec![prefix.clone(), planted.to_owned(), suffix.clone()];
                    if planted.starts_with("--") {
                        argv = planted.split(' ').map(str::to_owned).collect();
                    }
                    r.argv(&argv).join(" ")
                }
                2 => {
                    let mut value = serde_json::json!({"explain": {"lines": [line.clone()]}, "env": {"VLLM_X": line}});
                    r.value(&mut value);
                    value.to_string()
                }
                _ => {
                    // A record written by serde_json: the secret inside an escaped JSON string.
                    let mut value = serde_json::json!({"text": line});
                    r.value(&mut value);
                    serde_json::to_string_pretty(&value).unwrap_or_default()
                }
            };
            proptest::prop_assert!(!out.contains(secret), "{line:?} → {out:?}");
        }
    }
}
