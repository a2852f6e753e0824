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

/// `text` without control characters, for text and Markdown output: strings from outside
/// (command lines from `/proc`, a server's model name or error body, recorded names) may hold
/// newlines or terminal escape sequences, which would break a table or drive the terminal.
/// Whitespace controls become a space, others U+FFFD.
pub fn printable(text: &str) -> String {
    text.chars()
        .map(|c| match c {
            '\n' | '\r' | '\t' => ' ',
            c if c.is_control() => '\u{fffd}',
            c => c,
        })
        .collect()
}
