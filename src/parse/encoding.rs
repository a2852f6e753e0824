//! The character encoding of a text input, and its conversion to UTF-8, chunk by chunk.
//!
//! Most failure texts are UTF-8. Two other encodings reach `oomdoc explain` in practice:
//! - UTF-16: Windows PowerShell 5.1's `>` redirection and `Out-File` write UTF-16 LE with a
//!   byte-order mark (`FF FE`); `Set-Content -Encoding BigEndianUnicode` writes `FE FF`; some
//!   tools drop the mark. Every ASCII character then has a zero byte beside it, so the text
//!   would be refused as binary. Found by the mark or, without one, by the zero bytes sitting
//!   on one side of most pairs ([`sniff`]).
//! - Windows-1252 (and Latin-1, its subset): a console or editor on Windows saving the text in
//!   the legacy code page. A few bytes ≥ 0x80 that are not UTF-8 (`é` as `E9`); the rest is
//!   ASCII. Decoded by the WHATWG table so `caf\xE9` reads `café` rather than `caf�`.
//!
//! Plain UTF-8 (or ASCII) is left alone: [`sniff`] runs once on the first bytes of an input,
//! and only the other encodings go through a [`Transcoder`]. Pure: no I/O.

/// How many bytes at the start of an input [`sniff`] looks at.
pub const SNIFF_BYTES: usize = 8192;

/// The encoding of a text input.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Encoding {
    /// UTF-8 or ASCII: read as is.
    Utf8,
    /// UTF-16, little endian (PowerShell's default redirection).
    Utf16Le,
    /// UTF-16, big endian.
    Utf16Be,
    /// Windows-1252 (Latin-1 superset), a Windows console's legacy code page.
    Windows1252,
}

impl Encoding {
    /// The name people know it by.
    pub fn name(self) -> &'static str {
        match self {
            Encoding::Utf8 => "UTF-8",
            Encoding::Utf16Le => "UTF-16 LE",
            Encoding::Utf16Be => "UTF-16 BE",
            Encoding::Windows1252 => "Windows-1252",
        }
    }
}

/// What [`sniff`] found: the encoding and how many bytes of byte-order mark to skip.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Sniffed {
    /// The encoding of the input.
    pub encoding: Encoding,
    /// Length of the byte-order mark at the start (0, 2 or 3), not part of the text.
    pub bom_len: usize,
}

/// The encoding of an input, from its first bytes (at most [`SNIFF_BYTES`] are read).
///
/// UTF-16 by its byte-order mark, or without one when at least 8 code units were read and
/// ≥ 70 % of them have a zero high byte on one side and (almost) none on the other: ASCII text
/// in UTF-16. Windows-1252 when the bytes are not UTF-8 but hold no zero byte, no valid
/// multi-byte UTF-8 sequence and no more than 10 % of bytes ≥ 0x80 (more is binary data, which
/// the caller refuses, or another code page this does not guess). Everything else is UTF-8.
pub fn sniff(start: &[u8]) -> Sniffed {
    let start = &start[..start.len().min(SNIFF_BYTES)];
    let utf8 = Sniffed {
        encoding: Encoding::Utf8,
        bom_len: 0,
    };
    if start.starts_with(&[0xEF, 0xBB, 0xBF]) {
        return Sniffed {
            encoding: Encoding::Utf8,
            bom_len: 3,
        };
    }
    if start.starts_with(&[0xFF, 0xFE]) {
        return Sniffed {
            encoding: Encoding::Utf16Le,
            bom_len: 2,
        };
    }
    if start.starts_with(&[0xFE, 0xFF]) {
        return Sniffed {
            encoding: Encoding::Utf16Be,
            bom_len: 2,
        };
    }
    if let Some(encoding) = utf16_by_zeros(start) {
        return Sniffed {
            encoding,
            bom_len: 0,
        };
    }
    if looks_windows_1252(start) {
        return Sniffed {
            encoding: Encoding::Windows1252,
            bom_len: 0,
        };
    }
    utf8
}

/// UTF-16 without a mark: zero bytes on one side of most byte pairs.
fn utf16_by_zeros(start: &[u8]) -> Option<Encoding> {
    let pairs = start.len() / 2;
    if pairs < 8 {
        return None;
    }
    let (mut even_zero, mut odd_zero) = (0usize, 0usize);
    for pair in start.chunks_exact(2) {
        even_zero += usize::from(pair[0] == 0);
        odd_zero += usize::from(pair[1] == 0);
    }
    // ASCII in UTF-16 LE: `h\0i\0`; a few CJK or other units may have no zero byte.
    let mostly = |count: usize| count * 10 >= pairs * 7;
    let rarely = |count: usize| count * 20 <= pairs;
    if mostly(odd_zero) && rarely(even_zero) {
        Some(Encoding::Utf16Le)
    } else if mostly(even_zero) && rarely(odd_zero) {
        Some(Encoding::Utf16Be)
    } else {
        None
    }
}

/// Not UTF-8, no zero byte, no valid multi-byte sequence, few high bytes: a legacy code page.
fn looks_windows_1252(start: &[u8]) -> bool {
    if start.is_empty() || start.contains(&0) {
        return false;
    }
    let mut invalid = 0usize;
    let mut multibyte = 0usize;
    let mut rest = start;
    while !rest.is_empty() {
        let (valid, error) = match std::str::from_utf8(rest) {
            Ok(text) => (text, None),
            Err(error) => (
                // The prefix up to `valid_up_to` is valid UTF-8 by definition.
                std::str::from_utf8(&rest[..error.valid_up_to()]).unwrap_or_default(),
                Some(error),
            ),
        };
        multibyte += valid.chars().filter(|c| c.len_utf8() > 1).count();
        let Some(error) = error else { break };
        let Some(bad) = error.error_len() else {
            // A sequence cut by the end of the sniffed window.
            break;
        };
        invalid += bad;
        rest = &rest[error.valid_up_to() + bad..];
    }
    let high = start.iter().filter(|&&byte| byte >= 0x80).count();
    invalid > 0 && multibyte == 0 && high * 10 <= start.len()
}

/// Converts an input in a known encoding to UTF-8, in chunks cut anywhere (a UTF-16 code unit
/// or a surrogate pair may straddle two chunks).
#[derive(Debug)]
pub struct Transcoder {
    encoding: Encoding,
    /// Bytes of an incomplete code unit or surrogate pair, waiting for the next chunk.
    pending: Vec<u8>,
    /// Byte-order-mark bytes still to skip at the start.
    skip: usize,
}

impl Transcoder {
    /// A transcoder for what [`sniff`] found.
    pub fn new(sniffed: Sniffed) -> Transcoder {
        Transcoder {
            encoding: sniffed.encoding,
            pending: Vec::new(),
            skip: sniffed.bom_len,
        }
    }

    /// The encoding being converted.
    pub fn encoding(&self) -> Encoding {
        self.encoding
    }

    /// Appends the UTF-8 of `chunk` to `out`; an incomplete unit at its end waits for the next.
    pub fn push(&mut self, chunk: &[u8], out: &mut Vec<u8>) {
        let skipped = self.skip.min(chunk.len());
        self.skip -= skipped;
        let chunk = &chunk[skipped..];
        match self.encoding {
            Encoding::Utf8 => out.extend_from_slice(chunk),
            Encoding::Windows1252 => {
                for &byte in chunk {
                    push_char(out, windows_1252(byte));
                }
            }
            Encoding::Utf16Le | Encoding::Utf16Be => {
                let mut bytes = std::mem::take(&mut self.pending);
                bytes.extend_from_slice(chunk);
                let used = self.push_utf16(&bytes, out, false);
                self.pending = bytes[used..].to_vec();
            }
        }
    }

    /// Appends what is left at the end of the input (an odd byte or a lone surrogate becomes
    /// U+FFFD, as a lossy decoder does).
    pub fn finish(&mut self, out: &mut Vec<u8>) {
        let bytes = std::mem::take(&mut self.pending);
        let used = self.push_utf16(&bytes, out, true);
        if used < bytes.len() {
            push_char(out, char::REPLACEMENT_CHARACTER);
        }
    }

    /// Decodes whole code units of `bytes`; returns how many bytes were used. Without `last`,
    /// a high surrogate at the end waits for its pair.
    fn push_utf16(&self, bytes: &[u8], out: &mut Vec<u8>, last: bool) -> usize {
        let big_endian = self.encoding == Encoding::Utf16Be;
        let units: Vec<u16> = bytes
            .chunks_exact(2)
            .map(|pair| {
                if big_endian {
                    u16::from_be_bytes([pair[0], pair[1]])
                } else {
                    u16::from_le_bytes([pair[0], pair[1]])
                }
            })
            .collect();
        let mut take = units.len();
        if !last
            && units
                .last()
                .is_some_and(|unit| (0xD800..0xDC00).contains(unit))
        {
            take -= 1;
        }
        out.reserve(take);
        for decoded in char::decode_utf16(units[..take].iter().copied()) {
            push_char(out, decoded.unwrap_or(char::REPLACEMENT_CHARACTER));
        }
        take * 2
    }
}

fn push_char(out: &mut Vec<u8>, c: char) {
    let mut buffer = [0u8; 4];
    out.extend_from_slice(c.encode_utf8(&mut buffer).as_bytes());
}

/// One Windows-1252 byte as a character (WHATWG's `windows-1252` index: 0x80–0x9F hold
/// typographic characters; the five it leaves undefined map to the C1 control of that value).
fn windows_1252(byte: u8) -> char {
    const HIGH: [char; 32] = [
        '\u{20AC}', '\u{81}', '\u{201A}', '\u{192}', '\u{201E}', '\u{2026}', '\u{2020}',
        '\u{2021}', '\u{2C6}', '\u{2030}', '\u{160}', '\u{2039}', '\u{152}', '\u{8D}', '\u{17D}',
        '\u{8F}', '\u{90}', '\u{2018}', '\u{2019}', '\u{201C}', '\u{201D}', '\u{2022}', '\u{2013}',
        '\u{2014}', '\u{2DC}', '\u{2122}', '\u{161}', '\u{203A}', '\u{153}', '\u{9D}', '\u{17E}',
        '\u{178}',
    ];
    match byte {
        0x80..=0x9F => HIGH[usize::from(byte - 0x80)],
        _ => char::from(byte),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn utf16le(text: &str, bom: bool) -> Vec<u8> {
        let mut bytes = if bom { vec![0xFF, 0xFE] } else { Vec::new() };
        bytes.extend(text.encode_utf16().flat_map(u16::to_le_bytes));
        bytes
    }

    fn utf16be(text: &str, bom: bool) -> Vec<u8> {
        let mut bytes = if bom { vec![0xFE, 0xFF] } else { Vec::new() };
        bytes.extend(text.encode_utf16().flat_map(u16::to_be_bytes));
        bytes
    }

    /// Transcodes `input` in chunks of `size` bytes.
    fn decode(input: &[u8], size: usize) -> String {
        let mut transcoder = Transcoder::new(sniff(input));
        let mut out = Vec::new();
        for chunk in input.chunks(size) {
            transcoder.push(chunk, &mut out);
        }
        transcoder.finish(&mut out);
        String::from_utf8(out).expect("transcoder output is UTF-8")
    }

    const OOM: &str = "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. \
                       GPU 0 has a total capacity of 23.99 GiB — 显存不足 🙂\r\n";

    #[test]
    fn utf8_and_ascii_are_left_alone() {
        for text in ["INFO 04-02 21:42:59 hello\n", OOM, "", "é"] {
            assert_eq!(sniff(text.as_bytes()).encoding, Encoding::Utf8, "{text:?}");
        }
        let bom = [&[0xEF, 0xBB, 0xBF][..], b"Killed\n"].concat();
        assert_eq!(
            sniff(&bom),
            Sniffed {
                encoding: Encoding::Utf8,
                bom_len: 3
            }
        );
        assert_eq!(decode(&bom, 1), "Killed\n");
    }

    #[test]
    fn utf16_with_and_without_mark_in_any_chunking() {
        for (bytes, encoding) in [
            (utf16le(OOM, true), Encoding::Utf16Le),
            (utf16le(OOM, false), Encoding::Utf16Le),
            (utf16be(OOM, true), Encoding::Utf16Be),
            (utf16be(OOM, false), Encoding::Utf16Be),
        ] {
            assert_eq!(sniff(&bytes).encoding, encoding);
            for size in [1, 2, 3, 5, 7, 64, 4096] {
                assert_eq!(
                    decode(&bytes, size),
                    OOM,
                    "{encoding:?} in chunks of {size}"
                );
            }
        }
    }

    #[test]
    fn utf16_cut_mid_unit_or_pair_ends_in_a_replacement() {
        let mut bytes = utf16le("out of memory 🙂", true);
        bytes.truncate(bytes.len() - 1);
        // The lone high surrogate and the odd byte after it.
        assert_eq!(decode(&bytes, 3), "out of memory \u{FFFD}\u{FFFD}");
        bytes.truncate(bytes.len() - 2);
        assert_eq!(decode(&bytes, 4), "out of memory \u{FFFD}");
    }

    #[test]
    fn binary_data_is_not_taken_for_utf16_or_windows_1252() {
        // A pickle's start, a gzip header, zeros, a run of high bytes: left to the binary check.
        let pickle = b"\x80\x04\x95\x10\x00\x00\x00\x00\x00\x00\x00}\x94(\x8c\x08segments\x94]\x94";
        for bytes in [
            &pickle[..],
            &[0u8; 64][..],
            &[0xFFu8; 100][..],
            &[0x1f, 0x8b, 0x08, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x03][..],
        ] {
            assert_eq!(sniff(bytes).encoding, Encoding::Utf8, "{bytes:?}");
        }
        // Too short to tell.
        assert_eq!(sniff(&utf16le("OOM", false)).encoding, Encoding::Utf8);
    }

    #[test]
    fn windows_1252_reads_as_its_characters() {
        let bytes = b"RuntimeError: CUDA out of memory (m\xe9moire GPU \x93pleine\x94) \x80 \x81\n";
        assert_eq!(sniff(bytes).encoding, Encoding::Windows1252);
        assert_eq!(
            decode(bytes, 5),
            "RuntimeError: CUDA out of memory (m\u{e9}moire GPU \u{201c}pleine\u{201d}) \u{20ac} \u{81}\n"
        );
        // Valid UTF-8 with a stray bad byte stays UTF-8 (lossy later); so does text with more
        // than 10 % high bytes (another code page or binary).
        let stray = ["café \u{2014} ok ".as_bytes(), &[0xFF]].concat();
        assert_eq!(sniff(&stray).encoding, Encoding::Utf8);
        assert_eq!(
            sniff(&[b"ab".as_slice(), &[0xC0; 20]].concat()).encoding,
            Encoding::Utf8
        );
    }
}
