//! Error conventions: typed `thiserror` enums in the library, `anyhow` with context at the
//! edges, and hints a person can act on (`Hint`), collected from the error chain when it is
//! printed (`cli::output`, which knows every error type that has one).

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
