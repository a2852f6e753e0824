//! Secrets and private paths removed before anything is rendered or diffed (R16).
//!
//! Pure functions over strings, argument vectors and environment maps. `oomdoc run` applies
//! them at the source (before anything reaches `run.json`), and `report`/`diff` apply them again
//! to whatever they print. What goes:
//! - tokens: Hugging Face `hf_…`, OpenAI-style `sk-…`, `Bearer …` values;
//! - values of secret-looking flags: `--api-key X`, `--token X`, `--hf-token=X`, `--password X`, …;
//! - values of secret-looking environment variables: `*_TOKEN`, `*_KEY`, `*SECRET*`, `*PASSWORD*`;
//! - passwords in URLs: `scheme://user:pass@host` → `scheme://user:[REDACTED]@host`;
//! - home directories: `/home/<user>`, `/Users/<user>`, `/root` → `~`;
//! - the user name, as a whole word → `[USER]`.
//!
//! Nothing here reads the environment: the caller passes the home directory and user name.

use std::collections::BTreeMap;
use std::sync::OnceLock;

use regex::Regex;

/// What a removed secret is replaced with.
pub const REDACTED: &str = "[REDACTED]";
/// What the user name is replaced with.
pub const USER: &str = "[USER]";

/// Facts about the local user that must not leak (given by the caller, read in `source/`).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Redactor {
    /// The home directory, e.g. `/home/alice` (replaced by `~` besides the usual roots).
    pub home: Option<String>,
    /// The user name, e.g. `alice` (replaced by `[USER]` as a whole word).
    pub user: Option<String>,
}

fn token_regex() -> Option<&'static Regex> {
    static REGEX: OnceLock<Option<Regex>> = OnceLock::new();
    REGEX
        .get_or_init(|| {
            // hf_ tokens are `hf_` + 34 letters today; sk- keys include `sk-proj-…`, `sk-ant-…`.
            // Short look-alikes (`sk-1`) are left alone: the floor of 8 characters keeps words intact.
            Regex::new(r"\b(?:hf_[A-Za-z0-9]{8,}|sk-[A-Za-z0-9_\-]{8,})").ok()
        })
        .as_ref()
}

fn bearer_regex() -> Option<&'static Regex> {
    static REGEX: OnceLock<Option<Regex>> = OnceLock::new();
    REGEX
        .get_or_init(|| Regex::new(r"(?i)\b(bearer)(\s+|%20)[^\s'\x22,;]+").ok())
        .as_ref()
}

fn url_password_regex() -> Option<&'static Regex> {
    static REGEX: OnceLock<Option<Regex>> = OnceLock::new();
    REGEX
        .get_or_init(|| {
            Regex::new(r"\b([A-Za-z][A-Za-z0-9+.\-]*://[^\s:/@'\x22]*):[^\s@/'\x22]+@").ok()
        })
        .as_ref()
}

fn home_regex() -> Option<&'static Regex> {
    static REGEX: OnceLock<Option<Regex>> = OnceLock::new();
    REGEX
        .get_or_init(|| {
            Regex::new(r"(?:/home/[^/\s'\x22:]+|/Users/[^/\s'\x22:]+|/root)(?:/|\b|$)").ok()
        })
        .as_ref()
}

fn secret_flag_value_regex() -> Option<&'static Regex> {
    static REGEX: OnceLock<Option<Regex>> = OnceLock::new();
    REGEX
        .get_or_init(|| {
            // `--api-key=X` inside a longer string (a shell command line in one argument).
            Regex::new(
                r"(?i)(--?(?:[a-z0-9]+[-_])*(?:key|token|secret|password|passwd|pass)=)[^\s'\x22]+",
            )
            .ok()
        })
        .as_ref()
}

impl Redactor {
    /// A redactor for this home directory and user name (either may be unknown).
    pub fn new(home: Option<String>, user: Option<String>) -> Self {
        Redactor { home, user }
    }

    /// Removes tokens, URL passwords, `--secret=value` values, home directories and the user
    /// name from free text (a log line, a path, one argument).
    pub fn text(&self, text: &str) -> String {
        let mut out = replace(token_regex(), text, |_| REDACTED.to_owned());
        out = replace(bearer_regex(), &out, |captures| {
            format!("{}{}{REDACTED}", &captures[1], &captures[2])
        });
        out = replace(url_password_regex(), &out, |captures| {
            format!("{}:{REDACTED}@", &captures[1])
        });
        out = replace(secret_flag_value_regex(), &out, |captures| {
            format!("{}{REDACTED}", &captures[1])
        });
        out = self.paths(&out);
        self.user_name(&out)
    }

    fn paths(&self, text: &str) -> String {
        let mut out = text.to_owned();
        if let Some(home) = self.home.as_deref() {
            let home = home.trim_end_matches('/');
            // A home outside the usual roots (`/data/alice`); `/` itself would match everything.
            if home.len() > 1 {
                out = replace_path_prefix(&out, home);
            }
        }
        replace(home_regex(), &out, |captures| {
            if captures[0].ends_with('/') {
                "~/".to_owned()
            } else {
                "~".to_owned()
            }
        })
    }

    fn user_name(&self, text: &str) -> String {
        let Some(user) = self.user.as_deref() else {
            return text.to_owned();
        };
        // Names of one or two letters (or `root`, handled as a path) would eat ordinary words.
        if user.chars().count() < 3 || user == "root" {
            return text.to_owned();
        }
        let pattern = format!(r"\b{}\b", regex::escape(user));
        match Regex::new(&pattern) {
            Ok(regex) => regex.replace_all(text, USER).into_owned(),
            Err(_) => text.to_owned(),
        }
    }

    /// Redacts a command line: the value after a secret-looking flag (`--api-key X`,
    /// `--token X`, `--hf-token=X`), then every argument as free text.
    pub fn argv(&self, argv: &[String]) -> Vec<String> {
        let mut out = Vec::with_capacity(argv.len());
        let mut hide_next = false;
        for argument in argv {
            if hide_next {
                out.push(REDACTED.to_owned());
                hide_next = false;
                continue;
            }
            if let Some((flag, _value)) = argument.split_once('=') {
                if is_secret_flag(flag) {
                    out.push(format!("{flag}={REDACTED}"));
                    continue;
                }
            } else if is_secret_flag(argument) {
                hide_next = true;
            }
            out.push(self.text(argument));
        }
        out
    }

    /// Redacts environment values: secret-looking names get `[REDACTED]` (the name stays, so a
    /// comparison still sees that it was set); other values are redacted as free text.
    pub fn env(&self, env: &BTreeMap<String, String>) -> BTreeMap<String, String> {
        env.iter()
            .map(|(name, value)| {
                let value = if is_secret_env_name(name) {
                    REDACTED.to_owned()
                } else {
                    self.text(value)
                };
                (name.clone(), value)
            })
            .collect()
    }
}

/// Applies `regex` (when it compiled: the patterns are constants, checked by a test).
fn replace(
    regex: Option<&Regex>,
    text: &str,
    with: impl Fn(&regex::Captures<'_>) -> String,
) -> String {
    match regex {
        Some(regex) => regex
            .replace_all(text, |captures: &regex::Captures<'_>| with(captures))
            .into_owned(),
        None => text.to_owned(),
    }
}

/// Whether a command-line flag carries a secret value: `--api-key`, `--token`, `--hf-token`,
/// `--password`, `--secret`, and any `--…-key`/`--…-token`/`--…_secret` spelling.
pub fn is_secret_flag(flag: &str) -> bool {
    let Some(name) = flag.strip_prefix('-') else {
        return false;
    };
    let name = name
        .trim_start_matches('-')
        .to_ascii_lowercase()
        .replace('_', "-");
    if name.is_empty() {
        return false;
    }
    let last = name.rsplit('-').next().unwrap_or(&name);
    matches!(
        last,
        "key" | "token" | "secret" | "password" | "passwd" | "apikey" | "pass"
    ) || name.contains("secret")
        || name.contains("password")
}

/// Whether an environment variable holds a secret: `*_TOKEN`, `*_KEY`, `*SECRET*`, `*PASSWORD*`
/// (case-insensitive), plus `*_PASS`, `*_PASSWD` and `*CREDENTIALS*`.
pub fn is_secret_env_name(name: &str) -> bool {
    let upper = name.to_ascii_uppercase();
    upper.ends_with("_TOKEN")
        || upper == "TOKEN"
        || upper.ends_with("_KEY")
        || upper.ends_with("APIKEY")
        || upper.contains("SECRET")
        || upper.contains("PASSWORD")
        || upper.ends_with("_PASS")
        || upper.ends_with("_PASSWD")
        || upper.contains("CREDENTIALS")
}

/// Replaces `prefix` when it is a whole path prefix (followed by `/`, a non-path character or
/// the end), by `~`.
fn replace_path_prefix(text: &str, prefix: &str) -> String {
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

#[cfg(test)]
mod tests {
    use super::*;

    fn alice() -> Redactor {
        Redactor::new(Some("/home/alice".into()), Some("alice".into()))
    }

    fn strings(items: &[&str]) -> Vec<String> {
        items.iter().map(|s| (*s).to_owned()).collect()
    }

    #[test]
    fn constant_regexes_compile() {
        assert!(token_regex().is_some());
        assert!(bearer_regex().is_some());
        assert!(url_password_regex().is_some());
        assert!(home_regex().is_some());
        assert!(secret_flag_value_regex().is_some());
    }

    #[test]
    fn tokens_in_text() {
        let r = Redactor::default();
        let cases = [
            (
                "token hf_AbCdEfGhIjKlMnOpQrStUvWxYz0123456789 ok",
                "token [REDACTED] ok",
            ),
            ("key=sk-proj-abcDEF123456_xyz end", "key=[REDACTED] end"),
            (
                "Authorization: Bearer eyJhbGciOiJIUzI1NiJ9.abc",
                "Authorization: Bearer [REDACTED]",
            ),
            (
                "curl -H 'authorization: bearer abc123'",
                "curl -H 'authorization: bearer [REDACTED]'",
            ),
            (
                "https://bob:s3cr3t@example.com/repo.git",
                "https://bob:[REDACTED]@example.com/repo.git",
            ),
            (
                "postgres://u:p@db:5432/x",
                "postgres://u:[REDACTED]@db:5432/x",
            ),
            (
                "vllm serve m --api-key=abc123 --port 8000",
                "vllm serve m --api-key=[REDACTED] --port 8000",
            ),
            // Look-alikes stay: too short, not a word start, no password in the URL.
            ("task-1 sk-1 ask-questions", "task-1 sk-1 ask-questions"),
            (
                "https://example.com:8080/path",
                "https://example.com:8080/path",
            ),
            ("max_num_batched_tokens=8192", "max_num_batched_tokens=8192"),
        ];
        for (input, expected) in cases {
            assert_eq!(r.text(input), expected, "input: {input}");
        }
    }

    #[test]
    fn home_directories_become_tilde() {
        let r = alice();
        let cases = [
            ("/home/alice/models/llama", "~/models/llama"),
            ("/home/bob/x", "~/x"),
            ("/Users/carol/.cache/huggingface", "~/.cache/huggingface"),
            ("/root/.cache", "~/.cache"),
            ("/root", "~"),
            ("cd /home/alice && ls", "cd ~ && ls"),
            ("PATH=/home/alice/bin:/usr/bin", "PATH=~/bin:/usr/bin"),
            ("/rootfs/x", "/rootfs/x"),
            ("/usr/lib/python3", "/usr/lib/python3"),
        ];
        for (input, expected) in cases {
            assert_eq!(r.text(input), expected, "input: {input}");
        }
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
    fn user_name_as_whole_word() {
        let r = alice();
        assert_eq!(r.text("owner alice, alicex"), "owner [USER], alicex");
        let short = Redactor::new(None, Some("al".into()));
        assert_eq!(short.text("al all"), "al all");
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
    fn secret_flag_names() {
        for flag in [
            "--api-key",
            "--api_key",
            "--token",
            "--hf-token",
            "--HF_TOKEN",
            "--secret",
            "--db-password",
            "-key",
            "--apikey",
        ] {
            assert!(is_secret_flag(flag), "{flag}");
        }
        for flag in [
            "--tokenizer",
            "--max-tokens",
            "--keys-dir",
            "api-key",
            "--",
            "-",
        ] {
            assert!(!is_secret_flag(flag), "{flag}");
        }
    }

    #[test]
    fn env_values() {
        let r = alice();
        let env: BTreeMap<String, String> = [
            ("HF_TOKEN", "hf_abcdefghijklmnop"),
            ("HUGGING_FACE_HUB_TOKEN", "whatever"),
            ("OPENAI_API_KEY", "sk-aaaaaaaaaaaa"),
            ("AWS_SECRET_ACCESS_KEY", "x"),
            ("DB_PASSWORD", "x"),
            ("HF_HOME", "/home/alice/.cache/hf"),
            ("PYTORCH_CUDA_ALLOC_CONF", "expandable_segments:True"),
            ("NCCL_DEBUG", "INFO"),
            ("VLLM_MAX_TOKENS", "5"),
        ]
        .into_iter()
        .map(|(k, v)| (k.to_owned(), v.to_owned()))
        .collect();
        let out = r.env(&env);
        assert_eq!(out["HF_TOKEN"], REDACTED);
        assert_eq!(out["HUGGING_FACE_HUB_TOKEN"], REDACTED);
        assert_eq!(out["OPENAI_API_KEY"], REDACTED);
        assert_eq!(out["AWS_SECRET_ACCESS_KEY"], REDACTED);
        assert_eq!(out["DB_PASSWORD"], REDACTED);
        assert_eq!(out["HF_HOME"], "~/.cache/hf");
        assert_eq!(out["PYTORCH_CUDA_ALLOC_CONF"], "expandable_segments:True");
        assert_eq!(out["NCCL_DEBUG"], "INFO");
        assert_eq!(out["VLLM_MAX_TOKENS"], "5");
    }

    proptest::proptest! {
        #[test]
        fn redaction_never_panics_and_hides_hf_tokens(prefix in "[ -~]{0,20}", token in "[A-Za-z0-9]{10,40}") {
            let r = alice();
            let text = format!("{prefix} hf_{token}");
            let out = r.text(&text);
            let secret = format!("hf_{token}");
            proptest::prop_assert!(!out.contains(&secret));
        }
    }
}
