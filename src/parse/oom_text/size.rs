//! Sizes as engines print them (`20.00 MiB`, `6,291,456 bytes`, `636,18 MiB`) into exact bytes.

use crate::model::Bytes;

/// Parses one PyTorch/driver size as printed: `20.00 MiB`, `0 bytes`, `1024.00 KiB`,
/// `17179869184.00 GiB` → exact bytes (value × unit, rounded); returns None for garbage.
///
/// Units are binary. `KB`/`MB`/`GB`/`TB`/`PB`/`EB` are read as binary too: the engines we parse print
/// `GB` for 2^30 (vLLM ≤0.7 `Loading model weights took %.4f GB`, SGLang `avail mem=… GB`).
/// A decimal comma (`636,18 MiB`, llama.cpp under some locales) is accepted. Values beyond
/// `u64::MAX` (the NVML N/A sentinel `17179869184.00 GiB` = 2^64) saturate to `u64::MAX`.
pub fn parse_size(text: &str) -> Option<Bytes> {
    let text = text.trim();
    let number_end = text
        .find(|c: char| !(c.is_ascii_digit() || c == '.' || c == ','))
        .unwrap_or(text.len());
    let (number, unit) = text.split_at(number_end);
    let multiplier: u128 = match unit.trim_start() {
        "bytes" | "byte" | "B" => 1,
        "KiB" | "KB" | "kB" => 1 << 10,
        "MiB" | "MB" => 1 << 20,
        "GiB" | "GB" => 1 << 30,
        "TiB" | "TB" => 1 << 40,
        // An absurd request (an overflowed size: Paddle's `Cannot allocate 937.335938PB memory
        // on GPU 0`) is printed in the units above a terabyte.
        "PiB" | "PB" => 1 << 50,
        "EiB" | "EB" => 1 << 60,
        _ => return None,
    };
    let number = without_grouping(number, multiplier == 1)?;
    let number = number.as_str();
    let (integer, fraction) = match number.find('.') {
        Some(position) => (&number[..position], &number[position + 1..]),
        None => (number, ""),
    };
    let digits_ok = |s: &str| s.bytes().all(|b| b.is_ascii_digit());
    if integer.is_empty()
        || integer.len() > 24
        || fraction.len() > 12
        || !digits_ok(integer)
        || !digits_ok(fraction)
        || (number.len() > integer.len() && fraction.is_empty())
    {
        return None;
    }
    let scale = 10u128.pow(fraction.len() as u32);
    let integer: u128 = integer.parse().ok()?;
    let fraction: u128 = if fraction.is_empty() {
        0
    } else {
        fraction.parse().ok()?
    };
    let mantissa = integer.checked_mul(scale)?.checked_add(fraction)?;
    let bytes = mantissa
        .checked_mul(multiplier)
        .map(|product| (product + scale / 2) / scale)
        .unwrap_or(u128::MAX);
    Some(Bytes(u64::try_from(bytes).unwrap_or(u64::MAX)))
}

/// A number with its digit grouping removed and its decimal separator made a `.`: `1,024.00`
/// and `1.024,00` (a locale's thousands separators) → `1024.00`, `636,18` (a decimal comma) →
/// `636.18`, `6,291,456` → `6291456`. With two kinds of separator the last is the decimal one;
/// several of one kind group digits; one comma is a decimal comma, except in a count of bytes
/// (`6,291,456 bytes`, `8,192 bytes`), which has no fraction. None when a group is not three
/// digits (`1,2.3`).
fn without_grouping(number: &str, whole_bytes: bool) -> Option<String> {
    let last = number.rfind(['.', ',']);
    let Some(last) = last else {
        return Some(number.to_string());
    };
    let decimal_char = number[last..].chars().next()?;
    let other = if decimal_char == '.' { ',' } else { '.' };
    let count = |c: char| number.matches(c).count();
    let grouping = if count(other) > 0 {
        Some(other)
    } else if count(decimal_char) > 1 || (decimal_char == ',' && whole_bytes) {
        Some(decimal_char)
    } else {
        None
    };
    let (whole, fraction) = match grouping {
        Some(group) if group == decimal_char => (number, ""),
        _ => (&number[..last], &number[last + 1..]),
    };
    let mut digits = String::with_capacity(number.len());
    if let Some(group) = grouping {
        let mut pieces = whole.split(group);
        let head = pieces.next()?;
        if head.is_empty() || head.len() > 3 {
            return None;
        }
        digits.push_str(head);
        for piece in pieces {
            if piece.len() != 3 {
                return None;
            }
            digits.push_str(piece);
        }
    } else {
        digits.push_str(whole);
    }
    if !fraction.is_empty() || (grouping != Some(decimal_char) && last + 1 == number.len()) {
        digits.push('.');
        digits.push_str(fraction);
    }
    Some(digits)
}

/// NVML's "not available" (`usedGpuMemory = (unsigned long long)-1`) printed by PyTorch as
/// `17179869184.00 GiB`, and cudaMallocAsync's "no fraction set" limit: anything ≥ 1.7e10 GiB.
pub fn is_not_available(bytes: Bytes) -> bool {
    bytes.get() >= 17_000_000_000u64.saturating_mul(crate::model::bytes::GIB)
}
