//! The arguments of `oomdoc probe` and the options they resolve to.

use std::path::PathBuf;
use std::time::Duration;

use clap::{Args, ValueEnum};

use crate::cli::args::OutputArgs;
use crate::cli::settings;
use crate::probe::launch::LaunchOptions;
use crate::probe::memory::MemorySpec;
use crate::probe::{parse_duration, ProbeOptions};
use crate::source::server::{self, Endpoint};

/// Arguments of `oomdoc probe`.
#[derive(Debug, Args)]
pub struct ProbeArgs {
    /// Base URL of the OpenAI-compatible server, e.g. `http://127.0.0.1:8000`
    pub url: String,
    /// Model name to send (default: the first model `/v1/models` lists)
    #[arg(long)]
    pub model: Option<String>,
    /// Where memory is read: `nvml`, `prometheus:URL[#METRIC{label="v"}]` (default metric
    /// dcgm-exporter's `DCGM_FI_DEV_FB_USED`, MiB) or `replay:FILE` (a JSON list of bytes)
    #[arg(long, value_name = "SOURCE", default_value = "nvml")]
    pub memory_from: MemorySpec,
    /// With `nvml`: the GPU to read, by UUID (or prefix) or NVML index (default: every GPU, summed)
    #[arg(long, value_name = "UUID|INDEX")]
    pub gpu: Option<String>,
    /// With `nvml`: read the memory of this process (the server) instead of the whole GPU
    #[arg(long, value_name = "PID")]
    pub pid: Option<u32>,
    /// Add a concurrent phase: rounds of N parallel requests (0 or 1: no concurrent phase)
    #[arg(long, value_name = "N", default_value_t = 0, value_parser = clap::value_parser!(u32).range(0..=256))]
    pub concurrency: u32,
    /// Run the whole protocol K times
    #[arg(long, value_name = "K", default_value_t = 1, value_parser = clap::value_parser!(u32).range(1..=50))]
    pub repeat: u32,
    /// API key sent as `Authorization: Bearer` (default: `OOMDOC_API_KEY`, then `OPENAI_API_KEY`); never printed
    #[arg(long, value_name = "KEY", hide_env_values = true)]
    pub api_key: Option<String>,
    /// Which API to call
    #[arg(long, value_enum, default_value_t = EndpointArg::Completions)]
    pub endpoint: EndpointArg,
    /// Timeout of each request, seconds
    #[arg(long, value_name = "SECS", default_value_t = 60, value_parser = clap::value_parser!(u64).range(1..=3600))]
    pub request_timeout: u64,
    /// Limit on the whole protocol, seconds (it stops there and reports what it has)
    #[arg(long, value_name = "SECS", default_value_t = 600, value_parser = clap::value_parser!(u64).range(1..=86400))]
    pub time_limit: u64,
    /// `max_tokens` of each request
    #[arg(long, value_name = "N", default_value_t = 16, value_parser = clap::value_parser!(u32).range(1..=4096))]
    pub max_tokens: u32,
    /// Start the server with the command after `--` for each repeat, from a clean start, and
    /// stop it after the protocol (`URL` is where it will answer)
    #[arg(long, requires = "command")]
    pub launch: bool,
    /// With `--launch`: longest wait for the server to answer, seconds
    #[arg(long, value_name = "SECS", default_value_t = 900, value_parser = clap::value_parser!(u64).range(1..=86400))]
    pub ready_timeout: u64,
    /// With `--launch`: seconds between SIGTERM and SIGKILL of the server's process group
    #[arg(long, value_name = "SECS", default_value_t = 30, value_parser = clap::value_parser!(u64).range(1..=3600))]
    pub stop_grace: u64,
    /// With `--launch`: directory for `repeat-N/` (server log, probe document) and `probe.json`
    #[arg(long, value_name = "DIR", default_value = "oomdoc-probe")]
    pub out: PathBuf,
    /// Soak: cycle the protocol for this long (`90s`, `30m`, `2h`) and judge the whole run
    /// (with `--launch`: one start); Ctrl-C ends it early with the verdict so far
    #[arg(long, value_name = "DURATION", value_parser = parse_duration, conflicts_with = "repeat")]
    pub duration: Option<Duration>,
    /// With `--launch`: the server's command and arguments
    #[arg(last = true, value_name = "CMD")]
    pub command: Vec<String>,
    /// With `--launch`: reuse `repeat-N/` directories of an earlier probe in `--out`
    #[arg(long)]
    pub force: bool,
    /// Output options.
    #[command(flatten)]
    pub output: OutputArgs,
}

/// `--endpoint`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum EndpointArg {
    /// `/v1/completions`.
    Completions,
    /// `/v1/chat/completions`.
    Chat,
}

impl ProbeArgs {
    /// The protocol's options (the API key from the flag or the environment).
    pub(super) fn options(&self) -> ProbeOptions {
        ProbeOptions {
            url: self.url.clone(),
            model: self.model.clone(),
            memory_from: self.memory_from.clone(),
            gpu: self.gpu.clone(),
            pid: self.pid,
            concurrency: self.concurrency,
            repeat: self.repeat,
            api_key: server::api_key(self.api_key.clone()),
            endpoint: match self.endpoint {
                EndpointArg::Completions => Endpoint::Completions,
                EndpointArg::Chat => Endpoint::Chat,
            },
            request_timeout_s: self.request_timeout,
            time_limit_s: self.time_limit,
            max_tokens: self.max_tokens,
            duration: self.duration,
            progress: settings::stderr_is_terminal(),
        }
    }

    /// How `--launch` starts and stops the server.
    pub(super) fn launch_options(&self) -> LaunchOptions {
        LaunchOptions {
            command: self.command.clone(),
            force: self.force,
            out: self.out.clone(),
            ready_timeout: Duration::from_secs(self.ready_timeout),
            grace: Duration::from_secs(self.stop_grace),
        }
    }
}
