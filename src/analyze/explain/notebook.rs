//! A notebook cell's listing in IPython's verbose traceback, kept for the phase pass.

use super::context::{gather_after, gather_context};
use super::Explainer;

/// The most lines between a traceback's head and its first frame's arrow for a notebook cell's
/// listing to be kept (the head, the cell's header, up to five lines of the cell before the
/// arrow: IPython's `context=5`).
const CELL_HEADER_LINES: u64 = 8;
/// The most lines of a notebook cell's listing kept after its arrow line.
const CELL_LINES: u64 = 6;

/// The first line of a notebook cell's frame in IPython's traceback (IPython 8 `Cell In[3],
/// line 2`; before it `<ipython-input-3-…> in <module>` and `Input In [3], in <cell line: 2>()`).
fn notebook_cell_header(text: &str) -> bool {
    let text = text.trim_start();
    text.starts_with("Cell In[")
        || text.starts_with("<ipython-input-")
        || text.starts_with("Input In [")
}

impl Explainer {
    /// Keeps the listing of a notebook cell whose arrow line (`----> 2 out = model(**batch)`,
    /// line `line_no`, ending at `end`) is the first frame under a traceback's head: IPython's
    /// verbose traceback prints the cell (`Cell In[3], line 2`, `<ipython-input-3-…> in
    /// <module>`, `Input In [3], in <cell line: 2>()`) with the lines around the one that raised
    /// (`IPython/core/ultratb.py` `VerboseTB.format_record`, `context=5`): the program's code
    /// before and after the failing statement (`      3 out.loss.backward()`), read by the phase
    /// pass with the lines above the traceback (`Collected::above_tracebacks`). The listing ends
    /// at a blank line or the next frame.
    pub(super) fn keep_cell_listing(
        &mut self,
        block: &[u8],
        first_line: u64,
        end: usize,
        line_no: u64,
    ) {
        let Some(&head) = self.collected.tracebacks.back() else {
            return;
        };
        if head >= line_no || line_no - head > CELL_HEADER_LINES {
            return;
        }
        let before = gather_context(
            &self.tail,
            block,
            first_line,
            end,
            line_no,
            head + 1,
            line_no.saturating_sub(1),
        );
        if !before.iter().any(|line| notebook_cell_header(&line.text)) {
            return;
        }
        let after = gather_after(
            block,
            end.saturating_add(1),
            line_no + 1,
            line_no + CELL_LINES,
        );
        let listing = after.into_iter().take_while(|line| {
            let text = line.text.trim();
            !text.is_empty() && !text.starts_with("File ") && !notebook_cell_header(text)
        });
        let kept = before
            .into_iter()
            .filter(|line| !notebook_cell_header(&line.text))
            .chain(listing);
        self.collected.above_tracebacks.extend(kept);
    }
}
