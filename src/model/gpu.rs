//! The three names of one GPU, as distinct types: the CUDA ordinal a program uses
//! (`cuda:1`), the NVML index `nvidia-smi` prints, and the UUID. The first two differ as soon
//! as `CUDA_VISIBLE_DEVICES` or `CUDA_DEVICE_ORDER` is set, and mixing them up is the mistake
//! oomdoc exists to catch, so the compiler keeps them apart. Each serialises as its bare value.

use serde::{Deserialize, Serialize};

/// What CUDA (and PyTorch: `cuda:N`, "GPU N" in an OOM message) calls a device under the
/// `CUDA_VISIBLE_DEVICES` and `CUDA_DEVICE_ORDER` that apply.
#[derive(
    Debug, Clone, Copy, Default, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize,
)]
#[serde(transparent)]
pub struct CudaOrdinal(pub u32);

/// The index NVML and `nvidia-smi` give a device (PCI order on most machines, whatever CUDA
/// sees).
#[derive(
    Debug, Clone, Copy, Default, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize,
)]
#[serde(transparent)]
pub struct NvmlIndex(pub u32);

/// A GPU's `GPU-…` UUID as NVML and `nvidia-smi` print it: the one name of a device that
/// means the same thing in every process and on every listing.
#[derive(Debug, Clone, Default, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(transparent)]
pub struct GpuUuid(pub String);

impl GpuUuid {
    /// The text.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl std::ops::Deref for GpuUuid {
    type Target = str;
    fn deref(&self) -> &str {
        &self.0
    }
}

impl std::fmt::Display for GpuUuid {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.0.fmt(f)
    }
}

impl PartialEq<str> for GpuUuid {
    fn eq(&self, other: &str) -> bool {
        self.0 == other
    }
}

impl PartialEq<String> for GpuUuid {
    fn eq(&self, other: &String) -> bool {
        &self.0 == other
    }
}

impl PartialEq<&str> for GpuUuid {
    fn eq(&self, other: &&str) -> bool {
        self.0 == *other
    }
}

impl From<&str> for GpuUuid {
    fn from(text: &str) -> Self {
        GpuUuid(text.to_string())
    }
}

impl From<String> for GpuUuid {
    fn from(text: String) -> Self {
        GpuUuid(text)
    }
}

impl CudaOrdinal {
    /// The number.
    pub fn get(self) -> u32 {
        self.0
    }
}

/// Decimal text as a framework prints the ordinal (`GPU 0`, `current device: 1`).
impl std::str::FromStr for CudaOrdinal {
    type Err = std::num::ParseIntError;
    fn from_str(text: &str) -> Result<Self, Self::Err> {
        text.parse().map(CudaOrdinal)
    }
}

/// A wider integer read from a message; refused when it does not fit an ordinal.
impl TryFrom<u64> for CudaOrdinal {
    type Error = std::num::TryFromIntError;
    fn try_from(number: u64) -> Result<Self, Self::Error> {
        u32::try_from(number).map(CudaOrdinal)
    }
}

impl NvmlIndex {
    /// The number.
    pub fn get(self) -> u32 {
        self.0
    }
}

impl std::fmt::Display for CudaOrdinal {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.0.fmt(f)
    }
}

impl std::fmt::Display for NvmlIndex {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.0.fmt(f)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_serialises_as_its_bare_number() {
        assert_eq!(serde_json::to_string(&CudaOrdinal(1)).unwrap(), "1");
        assert_eq!(serde_json::to_string(&NvmlIndex(3)).unwrap(), "3");
        assert_eq!(
            serde_json::from_str::<CudaOrdinal>("2").unwrap(),
            CudaOrdinal(2)
        );
        assert_eq!(
            serde_json::from_str::<NvmlIndex>("0").unwrap(),
            NvmlIndex(0)
        );
        assert_eq!(format!("{}", CudaOrdinal(7)), "7");
        let uuid = GpuUuid::from("GPU-5f1c");
        assert_eq!(serde_json::to_string(&uuid).unwrap(), "\"GPU-5f1c\"");
        assert_eq!(
            serde_json::from_str::<GpuUuid>("\"GPU-5f1c\"").unwrap(),
            uuid
        );
        assert_eq!(uuid, "GPU-5f1c");
    }

    #[test]
    fn an_ordinal_read_from_a_message_must_fit() {
        assert_eq!("3".parse::<CudaOrdinal>(), Ok(CudaOrdinal(3)));
        assert!("".parse::<CudaOrdinal>().is_err());
        assert!("-1".parse::<CudaOrdinal>().is_err());
        assert!("4294967296".parse::<CudaOrdinal>().is_err());
        assert_eq!(CudaOrdinal::try_from(7_u64), Ok(CudaOrdinal(7)));
        assert!(CudaOrdinal::try_from(u64::from(u32::MAX) + 1).is_err());
    }
}
