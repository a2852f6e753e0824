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

fn unknown_unit(unit: &str, text: &str) -> String {
    format!("unknown size unit `{unit}` in `{text}` (use KiB, MiB, GiB, TiB, or GB for 10^9)")
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

/// Parses a size a user typed on the command line: `80GiB`, `80 GiB`, `141GB` (decimal),
/// `24g` (binary), `1073741824` (bytes).
pub fn parse_size_arg(text: &str) -> Result<Bytes, String> {
    let trimmed = text.trim();
    let split = trimmed
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(trimmed.len());
    let (number, unit) = trimmed.split_at(split);
    let number: f64 = number
        .parse()
        .map_err(|_| format!("`{text}` is not a size (expected e.g. `80GiB`, `24g` or bytes)"))?;
    let unit = unit.trim().to_ascii_lowercase();
    let multiplier: f64 = match unit.as_str() {
        "" | "b" => 1.0,
        "k" | "kib" => KIB as f64,
        "m" | "mib" => MIB as f64,
        "g" | "gib" => GIB as f64,
        "t" | "tib" => TIB as f64,
        "kb" => 1e3,
        "mb" => 1e6,
        "gb" => 1e9,
        "tb" => 1e12,
        _ => return Err(unknown_unit(&unit, text)),
    };
    let bytes = number * multiplier;
    if !bytes.is_finite() || bytes >= u64::MAX as f64 {
        return Err(format!("`{text}` is too large to be a memory size"));
    }
    Ok(Bytes(to_u64(bytes)))
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
    fn size_args() {
        assert_eq!(parse_size_arg("80GiB"), Ok(Bytes(80 * GIB)));
        assert_eq!(parse_size_arg("24g"), Ok(Bytes(24 * GIB)));
        assert_eq!(parse_size_arg("141GB"), Ok(Bytes(141_000_000_000)));
        assert_eq!(parse_size_arg("1024"), Ok(Bytes(1024)));
        assert!(parse_size_arg("lots").is_err());
        assert!(parse_size_arg("3 parsecs").is_err());
        assert!(parse_size_arg("17179869184GiB").is_err());
        assert!(parse_size_arg("1e400").is_err());
    }
}
