//! Error conventions: typed `thiserror` enums in the library, `anyhow` with context at the
//! edges, and hints a person can act on, collected from the error chain when it is printed.

/// An error that knows what the user could do about it.
pub trait Hint {
    /// A one-line suggestion (`hint: …`), if there is one.
    fn hint(&self) -> Option<String>;
}

/// A plain error carrying a hint, for edges where a typed error would be overkill.
#[derive(Debug, thiserror::Error)]
#[error("{message}")]
pub struct HintedError {
    /// The message (lowercase start, no final period).
    pub message: String,
    /// What to try.
    pub hint: String,
}

impl HintedError {
    /// A message with a hint.
    pub fn new(message: impl Into<String>, hint: impl Into<String>) -> Self {
        HintedError {
            message: message.into(),
            hint: hint.into(),
        }
    }
}

impl Hint for HintedError {
    fn hint(&self) -> Option<String> {
        Some(self.hint.clone())
    }
}

/// Registry of error types that carry hints. Each module with a `Hint` impl adds its type
/// here so the renderer can find hints without knowing every module.
type HintProbe = fn(&(dyn std::error::Error + 'static)) -> Option<String>;

fn probe<T: Hint + std::error::Error + 'static>(
    error: &(dyn std::error::Error + 'static),
) -> Option<String> {
    error.downcast_ref::<T>().and_then(Hint::hint)
}

const HINT_PROBES: &[HintProbe] = &[
    probe::<HintedError>,
    probe::<crate::source::checkpoint::CheckpointError>,
    probe::<crate::source::server::ServerError>,
    probe::<crate::source::gpu::GpuError>,
    probe::<crate::source::file::InputError>,
    probe::<crate::parse::torch_snapshot::TorchSnapshotError>,
];

/// Hints found along an error's chain, outermost first, without duplicates.
pub fn hints(error: &anyhow::Error) -> Vec<String> {
    let mut found: Vec<String> = Vec::new();
    for cause in error.chain() {
        for probe in HINT_PROBES {
            if let Some(hint) = probe(cause) {
                if !found.contains(&hint) {
                    found.push(hint);
                }
            }
        }
    }
    found
}
