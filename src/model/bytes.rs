//! `Bytes`: a byte count that cannot be confused with another unit.
//!
//! Internally everything is exact bytes; human output uses binary units (GiB/MiB/KiB),
//! never "GB" for 2^30.

use std::fmt;

use serde::{Deserialize, Serialize};

/// A number of bytes. Serialised as a plain integer.
#[derive(
    Debug, Clone, Copy, Default, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize,
)]
#[serde(transparent)]
pub struct Bytes(pub u64);

/// 2^10.
pub const KIB: u64 = 1 << 10;
/// 2^20.
pub const MIB: u64 = 1 << 20;
/// 2^30.
pub const GIB: u64 = 1 << 30;
/// 2^40.
pub const TIB: u64 = 1 << 40;

impl Bytes {
    /// Zero bytes.
    pub const ZERO: Bytes = Bytes(0);

    /// The raw count.
    pub fn get(self) -> u64 {
        self.0
    }

    /// From a count of MiB (nvidia-smi prints MiB; bytes are MiB × 2^20).
    pub fn from_mib(mib: u64) -> Bytes {
        Bytes(mib.saturating_mul(MIB))
    }

    /// From a count of GiB.
    pub fn from_gib_f64(gib: f64) -> Bytes {
        Bytes(to_u64(gib * GIB as f64))
    }

    /// The value in GiB as a float, for display and ratios.
    pub fn as_gib(self) -> f64 {
        self.0 as f64 / GIB as f64
    }

    /// The value in MiB as a float.
    pub fn as_mib(self) -> f64 {
        self.0 as f64 / MIB as f64
    }

    /// Saturating subtraction.
    pub fn saturating_sub(self, other: Bytes) -> Bytes {
        Bytes(self.0.saturating_sub(other.0))
    }

    /// Saturating addition.
    pub fn saturating_add(self, other: Bytes) -> Bytes {
        Bytes(self.0.saturating_add(other.0))
    }

    /// Human text with two decimals in the largest binary unit that keeps the number ≥ 1,
    /// e.g. `20.00 MiB`, `139.80 GiB`, `512 B`.
    pub fn human(self) -> String {
        self.to_string()
    }
}

fn to_u64(value: f64) -> u64 {
    if value.is_nan() || value <= 0.0 {
        0
    } else if value >= u64::MAX as f64 {
        u64::MAX
    } else {
        value.round() as u64
    }
}

impl fmt::Display for Bytes {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let value = self.0;
        if value < KIB {
            write!(f, "{value} B")
        } else if value < MIB {
            write!(f, "{:.2} KiB", value as f64 / KIB as f64)
        } else if value < GIB {
            write!(f, "{:.2} MiB", value as f64 / MIB as f64)
        } else if value < TIB {
            write!(f, "{:.2} GiB", value as f64 / GIB as f64)
        } else {
            write!(f, "{:.2} TiB", value as f64 / TIB as f64)
        }
    }
}

impl From<u64> for Bytes {
    fn from(value: u64) -> Self {
        Bytes(value)
    }
}

impl std::ops::Add for Bytes {
    type Output = Bytes;
    fn add(self, rhs: Bytes) -> Bytes {
        self.saturating_add(rhs)
    }
}

impl std::iter::Sum for Bytes {
    fn sum<I: Iterator<Item = Bytes>>(iter: I) -> Bytes {
        iter.fold(Bytes::ZERO, |a, b| a + b)
    }
}

/// Units accepted by [`parse_size_arg`], lower case, with their size in bytes: decimal
/// `KB`…`TB` (10^3…10^12, as disks and datasheets count) and binary `KiB`…`TiB` (2^10…2^40,
/// as CUDA, PyTorch and nvidia-smi count).
const SIZE_UNITS: &[(&str, u64)] = &[
    ("b", 1),
    ("kb", 1_000),
    ("mb", 1_000_000),
    ("gb", 1_000_000_000),
    ("tb", 1_000_000_000_000),
    ("kib", KIB),
    ("mib", MIB),
    ("gib", GIB),
    ("tib", TIB),
];

/// Parses a size a user typed on the command line: a number (decimals allowed) and a unit,
/// `80GiB`, `80 GiB`, `141GB` (decimal), `139.8gib`, `150109880320B`. A number without a unit
/// is refused rather than read as bytes: `--gpu-memory 24` meant 24 GiB or 24 GB, never 24
/// bytes. Single-letter units (`24g`) are refused too: tools disagree on whether they are
/// binary (Docker) or decimal. The arithmetic is exact (no floating point), rounded to the
/// nearest byte.
pub fn parse_size_arg(text: &str) -> Result<Bytes, String> {
    let trimmed = text.trim();
    let split = trimmed
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(trimmed.len());
    let (number, unit) = trimmed.split_at(split);
    let unit = unit.trim();
    let example = "e.g. `80GiB`, `24GB` or `1.5TiB`";
    let (whole, fraction) = number.split_once('.').unwrap_or((number, ""));
    if whole.is_empty() && fraction.is_empty() || fraction.contains('.') {
        return Err(format!("`{text}` is not a size ({example})"));
    }
    if unit.is_empty() {
        return Err(format!(
            "`{text}` has no unit: write `{number}GiB` (binary, 2^30 bytes, as nvidia-smi and \
             PyTorch count) or `{number}GB` (decimal, 10^9 bytes); bytes are `{number}B`"
        ));
    }
    let lower = unit.to_ascii_lowercase();
    let Some(&(_, multiplier)) = SIZE_UNITS.iter().find(|(name, _)| *name == lower) else {
        let hint = match lower.as_str() {
            "k" | "m" | "g" | "t" => {
                let upper = lower.to_ascii_uppercase();
                format!(": write `{number}{upper}iB` (binary) or `{number}{upper}B` (decimal)")
            }
            _ => " (use B, KB, MB, GB, TB or KiB, MiB, GiB, TiB)".to_string(),
        };
        return Err(format!("unknown size unit `{unit}` in `{text}`{hint}"));
    };
    let too_large = || format!("`{text}` is too large to be a memory size");
    let digits = |part: &str| -> Result<u128, String> {
        if part.is_empty() {
            return Ok(0);
        }
        part.parse::<u128>().map_err(|_| too_large())
    };
    if fraction.len() > 18 {
        return Err(format!(
            "`{text}` has more decimals than a byte count needs"
        ));
    }
    let scale = 10u128.pow(fraction.len() as u32);
    let whole_bytes = digits(whole)?
        .checked_mul(u128::from(multiplier))
        .ok_or_else(too_large)?;
    // fraction × multiplier / 10^digits, rounded half up to a whole byte.
    let fraction_bytes = (digits(fraction)? * u128::from(multiplier) + scale / 2) / scale;
    let bytes = whole_bytes
        .checked_add(fraction_bytes)
        .filter(|bytes| *bytes <= u128::from(u64::MAX))
        .ok_or_else(too_large)?;
    if multiplier == 1 && !fraction.trim_end_matches('0').is_empty() {
        return Err(format!("`{text}` is not a whole number of bytes"));
    }
    Ok(Bytes(bytes as u64))
}

/// A signed size for people, rounded to whole bytes: `+8.00 MiB`, `-2.00 MiB`, `0 B`.
pub fn signed_bytes(value: f64) -> String {
    let magnitude = Bytes(value.abs().round() as u64);
    if value <= -0.5 {
        format!("-{magnitude}")
    } else if value >= 0.5 {
        format!("+{magnitude}")
    } else {
        magnitude.to_string()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn display_uses_binary_units() {
        assert_eq!(Bytes(512).to_string(), "512 B");
        assert_eq!(Bytes(20 * MIB).to_string(), "20.00 MiB");
        assert_eq!(Bytes(150_109_880_320).to_string(), "139.80 GiB");
    }

    #[test]
    fn signed_sizes() {
        assert_eq!(signed_bytes(8.0 * MIB as f64), "+8.00 MiB");
        assert_eq!(signed_bytes(-2.0 * MIB as f64), "-2.00 MiB");
        assert_eq!(signed_bytes(0.1), "0 B");
    }

    #[test]
    fn size_args() {
        let ok = [
            ("80GiB", 80 * GIB),
            ("80 GiB", 80 * GIB),
            ("24gib", 24 * GIB),
            ("141GB", 141_000_000_000),
            ("141gb", 141_000_000_000),
            ("1024B", 1024),
            ("1.5KiB", 1536),
            ("139.80GiB", 150_109_106_995),
            ("0.5TB", 500_000_000_000),
            ("2TiB", 2 * TIB),
            ("3MB", 3_000_000),
            ("7kb", 7000),
            (".5MiB", MIB / 2),
            ("0GiB", 0),
        ];
        for (text, bytes) in ok {
            assert_eq!(parse_size_arg(text), Ok(Bytes(bytes)), "{text}");
        }
        let refused = [
            ("24", "has no unit: write `24GiB`"),
            ("1024", "`1024GB` (decimal"),
            ("24g", "write `24GiB` (binary) or `24GB` (decimal)"),
            ("lots", "not a size"),
            ("3 parsecs", "unknown size unit `parsecs`"),
            ("17179869184GiB", "too large"),
            ("1e400", "unknown size unit `e400`"),
            ("1.2.3GiB", "not a size"),
            ("1.5B", "not a whole number of bytes"),
            ("-1GiB", "not a size"),
            ("", "not a size"),
        ];
        for (text, expected) in refused {
            let error = parse_size_arg(text).unwrap_err();
            assert!(error.contains(expected), "{text}: {error}");
        }
    }
}
