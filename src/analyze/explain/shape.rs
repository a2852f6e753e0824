//! Whether a line is like a recent one (the "known line" shortcut of the candidate scan): the
//! same bytes but for runs of digits no marker can cover, so it holds the same markers at the
//! same places and need not be searched again.

use super::*;

/// For every run of digits inside a marker, the marker's text before the run: a line's
/// run of digits can be covered by a marker only where the line shows that text before it.
#[derive(Debug)]
pub(super) struct DigitContexts {
    /// The texts (empty: a marker starts with a digit, so any run may be covered).
    pub(super) before: Vec<&'static [u8]>,
    /// For each text, its last (up to) eight bytes as the high bytes of a little-endian
    /// word, and the mask of those bytes: one compare against the eight bytes before a run.
    pub(super) tails: Vec<(u64, u64)>,
    /// Their last bytes, for a quick first check.
    pub(super) last_bytes: [bool; 256],
    /// Some marker starts with a digit.
    pub(super) any: bool,
}

impl DigitContexts {
    pub(super) fn new(patterns: &[&'static str]) -> DigitContexts {
        let mut contexts = DigitContexts {
            before: Vec::new(),
            tails: Vec::new(),
            last_bytes: [false; 256],
            any: false,
        };
        for pattern in patterns {
            let bytes = pattern.as_bytes();
            for (at, pair) in bytes.windows(2).enumerate() {
                if !pair[0].is_ascii_digit() && pair[1].is_ascii_digit() {
                    let before = &bytes[..=at];
                    if !contexts.before.contains(&before) {
                        contexts.before.push(before);
                        let tail = &before[before.len().saturating_sub(8)..];
                        let (mut value, mut mask) = ([0u8; 8], [0u8; 8]);
                        value[8 - tail.len()..].copy_from_slice(tail);
                        mask[8 - tail.len()..].fill(0xff);
                        contexts
                            .tails
                            .push((u64::from_le_bytes(value), u64::from_le_bytes(mask)));
                        contexts.last_bytes[usize::from(pair[0])] = true;
                    }
                }
            }
            contexts.any |= bytes.first().is_some_and(u8::is_ascii_digit);
        }
        contexts
    }

    /// Whether a marker may cover the run of digits that starts at `run_start` in `line`.
    pub(super) fn may_cover(&self, line: &[u8], run_start: usize) -> bool {
        if self.any {
            return true;
        }
        let Some(&before) = run_start.checked_sub(1).and_then(|at| line.get(at)) else {
            return false;
        };
        if !self.last_bytes[usize::from(before)] {
            return false;
        }
        let head = &line[..run_start];
        match head
            .get(run_start.saturating_sub(8)..)
            .filter(|word| word.len() == 8)
        {
            Some(word) => {
                let word = u64::from_le_bytes(word.try_into().unwrap_or_default());
                self.tails
                    .iter()
                    .zip(&self.before)
                    .any(|(&(value, mask), context)| {
                        word & mask == value && (context.len() <= 8 || head.ends_with(context))
                    })
            }
            None => self.before.iter().any(|context| head.ends_with(context)),
        }
    }
}

/// Whether `line` holds the same markers at the same places as `previous`, known without
/// searching it: both have the same length and the same bytes except digit for digit, and
/// no marker can cover a run of digits that changed. Proof: a marker without digits, or
/// one that covers no changed byte, occurs in one line exactly where it occurs in the
/// other; a marker covering a changed digit has a run of digits there, which starts where
/// the line's run starts (the byte before it is not a digit), so the line shows the
/// marker's text before that run right before the line's run ([`DigitContexts`]).
#[cfg(test)]
pub(super) fn like_previous(previous: &[u8], line: &[u8], digits: &DigitContexts) -> bool {
    compare_lines(previous, line, digits).is_some()
}

/// [`like_previous`] for lines whose runs of digits may differ in length too (ports, IP
/// addresses, token counts, timestamps): whether the line at the start of `rest` is like
/// `previous`, and if so its length (where its `\n` is in `rest`). Both lines must be the
/// same bytes but for runs of digits, each changed run a run (of at least one digit) in both
/// lines, and no marker may cover a run that changed ([`DigitContexts::may_cover`] in both
/// lines). Proof: a marker that does not start with a digit and covers a digit of a run has
/// a run of digits that starts where the line's run starts (the byte before is not a digit),
/// so the line shows the marker's text before that run right before its own run. A marker
/// covering no changed run spans bytes that are the same in both lines (constant bytes and
/// unchanged runs, only shifted), so it occurs in both, in the same order.
pub(super) fn like_shape(previous: &[u8], rest: &[u8], digits: &DigitContexts) -> Option<usize> {
    let (mut i, mut j) = (0, 0);
    let n = previous.len();
    loop {
        // Equal bytes, eight at a time (the first difference from the xor of two words),
        // then one at a time near the ends.
        while let (Some(a), Some(b)) = (previous.get(i..i + 8), rest.get(j..j + 8)) {
            let a = u64::from_le_bytes(a.try_into().unwrap_or_default());
            let b = u64::from_le_bytes(b.try_into().unwrap_or_default());
            let same = ((a ^ b).trailing_zeros() / 8) as usize;
            i += same;
            j += same;
            if same < 8 {
                break;
            }
        }
        while i < n && rest.get(j) == Some(&previous[i]) {
            i += 1;
            j += 1;
        }
        let b = *rest.get(j)?;
        if i == n && b == b'\n' {
            return Some(j);
        }
        // A difference (or a longer run of digits at the end of the line).
        if !previous.get(i).is_some_and(u8::is_ascii_digit) && !b.is_ascii_digit() {
            return None;
        }
        // The bytes since the last difference are equal: the run starts as far back in both.
        let mut back = 0;
        while back < i && back < j && previous[i - back - 1].is_ascii_digit() {
            back += 1;
        }
        let (run_a, run_b) = (i - back, j - back);
        let mut end_a = i;
        while end_a < n && previous[end_a].is_ascii_digit() {
            end_a += 1;
        }
        let mut end_b = j;
        while rest.get(end_b).is_some_and(u8::is_ascii_digit) {
            end_b += 1;
        }
        if end_a == run_a
            || end_b == run_b
            || digits.may_cover(previous, run_a)
            || digits.may_cover(&rest[..end_b], run_b)
        {
            return None;
        }
        i = end_a;
        j = end_b;
    }
}

/// [`like_previous`], saying which runs of digits changed: `None` when the lines are not
/// alike, else the one run that changed (`Some(None)`: none or several did).
pub(super) fn compare_lines(
    previous: &[u8],
    line: &[u8],
    digits: &DigitContexts,
) -> Option<Option<Range<usize>>> {
    if previous.len() != line.len() {
        return None;
    }
    let mut changes = Changes::default();
    // Eight bytes at a time: one compare of two words, then only the bytes that differ.
    let mut words = previous.chunks_exact(8);
    let mut line_words = line.chunks_exact(8);
    let mut at = 0;
    for (a, b) in (&mut words).zip(&mut line_words) {
        let a = u64::from_le_bytes(a.try_into().unwrap_or_default());
        let b = u64::from_le_bytes(b.try_into().unwrap_or_default());
        if a != b && !differences_allowed(previous, line, at, a ^ b, &mut changes, digits) {
            return None;
        }
        at += 8;
    }
    let differ = (0..)
        .zip(words.remainder().iter().zip(line_words.remainder()))
        .filter(|(_, (a, b))| a != b)
        .fold(0u64, |mask, (byte, _)| mask | 0xff << (byte * 8));
    if differ != 0 && !differences_allowed(previous, line, at, differ, &mut changes, digits) {
        return None;
    }
    Some((changes.runs == 1).then_some(changes.last))
}

/// Whether `line` is like `previous` (see [`like_previous`]) when `previous` differed from
/// the line before it in the one run of digits `run`, found by [`compare_lines`]: then
/// every byte outside `run` equal to `previous`'s and digits inside it are enough. (The
/// bytes around `run` are not digits, so it is a whole run of `line` too, and a marker
/// could not cover it in `previous`: `line` shows the same text before it.)
pub(super) fn like_but_run(previous: &[u8], line: &[u8], run: Range<usize>) -> bool {
    previous.len() == line.len()
        && run.end <= line.len()
        && previous[..run.start] == line[..run.start]
        && previous[run.end..] == line[run.end..]
        && line[run].iter().all(u8::is_ascii_digit)
}

/// The changed runs of digits [`differences_allowed`] has checked.
#[derive(Debug, Default)]
pub(super) struct Changes {
    /// Bytes before this are checked already.
    checked: usize,
    /// Runs that changed.
    runs: u32,
    /// The last of them.
    last: Range<usize>,
}

/// For [`compare_lines`]: whether the bytes that differ in the word at `at` (a mask with
/// `0xff` per differing byte) are digits in runs no marker may cover.
pub(super) fn differences_allowed(
    previous: &[u8],
    line: &[u8],
    at: usize,
    mut differ: u64,
    changes: &mut Changes,
    digits: &DigitContexts,
) -> bool {
    let both_digits = |at: usize| previous[at].is_ascii_digit() && line[at].is_ascii_digit();
    loop {
        // Bytes of runs already checked are allowed.
        differ &= match changes.checked.saturating_sub(at) {
            0 => u64::MAX,
            covered @ 1..8 => u64::MAX << (covered * 8),
            _ => 0,
        };
        if differ == 0 {
            return true;
        }
        let byte = at + (differ.trailing_zeros() / 8) as usize;
        if !both_digits(byte) {
            return false;
        }
        let mut run_start = byte;
        while run_start > 0 && both_digits(run_start - 1) {
            run_start -= 1;
        }
        if digits.may_cover(previous, run_start) || digits.may_cover(line, run_start) {
            return false;
        }
        let mut run_end = byte + 1;
        while run_end < line.len() && both_digits(run_end) {
            run_end += 1;
        }
        changes.checked = run_end;
        changes.runs += 1;
        changes.last = run_start..run_end;
    }
}
