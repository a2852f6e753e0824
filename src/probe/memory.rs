//! `--memory-from SOURCE`: where `oomdoc probe` reads device memory, parsed by clap into a
//! [`MemorySpec`] before the command runs (a bad spec is a usage error, exit 2).

use std::path::PathBuf;
use std::str::FromStr;

use crate::parse::prometheus::Selector;

/// dcgm-exporter's framebuffer-used gauge (MiB), the default Prometheus metric.
pub const DCGM_FB_USED: &str = "DCGM_FI_DEV_FB_USED";

/// A memory source for `oomdoc probe`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum MemorySpec {
    /// NVML on this machine (`nvml`).
    Nvml,
    /// A Prometheus endpoint (`prometheus:URL[#METRIC{label="v"}]`).
    Prometheus {
        /// The endpoint, e.g. `http://dcgm:9400/metrics`.
        url: String,
        /// The series to read (default [`DCGM_FB_USED`]).
        selector: Selector,
    },
    /// A JSON list of byte counts, one per reading (`replay:FILE`).
    Replay {
        /// The file.
        path: PathBuf,
    },
}

impl FromStr for MemorySpec {
    type Err = String;

    fn from_str(text: &str) -> Result<Self, Self::Err> {
        let spec = text.trim();
        if spec == "nvml" {
            return Ok(MemorySpec::Nvml);
        }
        if let Some(rest) = spec.strip_prefix("prometheus:") {
            let (url, selector) = match rest.split_once('#') {
                Some((url, selector)) => (
                    url,
                    Selector::parse(selector).map_err(|error| error.to_string())?,
                ),
                None => (rest, Selector::name(DCGM_FB_USED)),
            };
            if url.is_empty() {
                return Err("`prometheus:` needs the metrics URL, e.g. \
                     `prometheus:http://dcgm:9400/metrics`"
                    .to_owned());
            }
            return Ok(MemorySpec::Prometheus {
                url: url.to_owned(),
                selector,
            });
        }
        if let Some(path) = spec.strip_prefix("replay:") {
            if path.is_empty() {
                return Err("`replay:` needs a file, e.g. `replay:readings.json`".to_owned());
            }
            return Ok(MemorySpec::Replay {
                path: PathBuf::from(path),
            });
        }
        Err(format!(
            "unknown memory source `{spec}`: use `nvml`, \
             `prometheus:URL[#METRIC{{label=\"value\"}}]` or `replay:FILE`"
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_form_parses_and_a_bad_one_says_what_to_use() {
        assert_eq!("nvml".parse(), Ok(MemorySpec::Nvml));
        assert_eq!(
            "prometheus:http://h:9400/metrics".parse(),
            Ok(MemorySpec::Prometheus {
                url: "http://h:9400/metrics".to_owned(),
                selector: Selector::name(DCGM_FB_USED),
            })
        );
        let labelled: Result<MemorySpec, String> =
            "prometheus:http://h/m#DCGM_FI_DEV_FB_USED{gpu=\"1\"}".parse();
        match labelled {
            Ok(MemorySpec::Prometheus { selector, .. }) => {
                assert_eq!(selector.labels.get("gpu").map(String::as_str), Some("1"));
            }
            other => panic!("{other:?}"),
        }
        assert_eq!(
            "replay:r.json".parse(),
            Ok(MemorySpec::Replay {
                path: PathBuf::from("r.json")
            })
        );
        let bad: Result<MemorySpec, String> = "carrier-pigeon".parse();
        let expected = "unknown memory source `carrier-pigeon`";
        assert!(bad.is_err_and(|error| error.starts_with(expected)));
        assert!("prometheus:".parse::<MemorySpec>().is_err());
        assert!("replay:".parse::<MemorySpec>().is_err());
        assert!("prometheus:http://h/m#{bad".parse::<MemorySpec>().is_err());
    }
}
