//! Optional ANSI styling for text output. Text must read the same without colour.

/// Paints strings when colour is on; passes them through otherwise.
#[derive(Debug, Clone, Copy)]
pub struct Style {
    color: bool,
}

impl Style {
    /// A painter; `color` comes from the resolved settings.
    pub fn new(color: bool) -> Self {
        Style { color }
    }

    fn paint(&self, code: &str, text: &str) -> String {
        if self.color {
            format!("\x1b[{code}m{text}\x1b[0m")
        } else {
            text.to_string()
        }
    }

    /// Bold (headings).
    pub fn bold(&self, text: &str) -> String {
        self.paint("1", text)
    }
    /// Red (failures).
    pub fn bad(&self, text: &str) -> String {
        self.paint("1;31", text)
    }
    /// Yellow (warnings).
    pub fn warn(&self, text: &str) -> String {
        self.paint("33", text)
    }
    /// Green (fits, plateau).
    pub fn good(&self, text: &str) -> String {
        self.paint("32", text)
    }
    /// Dim (sources, secondary details).
    pub fn dim(&self, text: &str) -> String {
        self.paint("2", text)
    }
}
