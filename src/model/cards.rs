//! Common GPU classes and their memory, for `oomdoc fit --gpu NAME` and for "which card would
//! fit" (R12, R19). A table, not a measurement: each entry says where its figure comes from.
//!
//! `total_bytes` is the memory total the driver reports (`nvidia-smi` "MiB" total = NVML
//! `memory.total`) where we found one printed by a real machine, else the datasheet capacity
//! taken as binary GiB. PyTorch's `torch.cuda.mem_get_info()` total, which vLLM multiplies by
//! `--gpu-memory-utilization`, is a little lower still (H200: 139.80 GiB against NVML's
//! 140.40 GiB in tests/fixtures/h200-torch2.11/).

use serde::Serialize;

use super::bytes::MIB;
use super::Bytes;

/// One GPU class.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct Card {
    /// Name as the user types it (`--gpu h100`), lower case.
    pub key: &'static str,
    /// Marketing name.
    pub name: &'static str,
    /// Memory total used for budgets.
    pub total_bytes: Bytes,
    /// Where `total_bytes` comes from.
    pub source: &'static str,
}

const fn mib(count: u64) -> Bytes {
    Bytes(count * MIB)
}

const SMI: &str = "nvidia-smi total printed on real machines (public logs)";

/// The table, smallest first.
pub const CARDS: &[Card] = &[
    Card {
        key: "t4",
        name: "Tesla T4 16GB",
        total_bytes: mib(15_360),
        source: SMI,
    },
    Card {
        key: "l4",
        name: "NVIDIA L4 24GB",
        total_bytes: mib(23_034),
        source: SMI,
    },
    Card {
        key: "rtx4090",
        name: "GeForce RTX 4090 24GB",
        total_bytes: mib(24_564),
        source: SMI,
    },
    Card {
        key: "a10g",
        name: "NVIDIA A10G 24GB",
        total_bytes: mib(24_576),
        source: "datasheet 24 GB (GDDR6) taken as 24 GiB; nvidia-smi shows a little less",
    },
    Card {
        key: "rtx3090",
        name: "GeForce RTX 3090 24GB",
        total_bytes: mib(24_576),
        source: "datasheet 24 GB (GDDR6X) taken as 24 GiB",
    },
    Card {
        key: "rtx5090",
        name: "GeForce RTX 5090 32GB",
        total_bytes: mib(32_607),
        source: SMI,
    },
    Card {
        key: "a100-40gb",
        name: "A100 40GB",
        total_bytes: mib(40_960),
        source: "datasheet 40 GB (HBM2) taken as 40 GiB",
    },
    Card {
        key: "l40s",
        name: "NVIDIA L40S 48GB",
        total_bytes: mib(46_068),
        source: SMI,
    },
    Card {
        key: "h100",
        name: "H100 80GB HBM3",
        total_bytes: mib(81_559),
        source: SMI,
    },
    Card {
        key: "a100-80gb",
        name: "A100 80GB",
        total_bytes: mib(81_920),
        source: "datasheet 80 GB (HBM2e) taken as 80 GiB",
    },
    Card {
        key: "h100-nvl",
        name: "H100 NVL 94GB",
        total_bytes: mib(95_830),
        source: SMI,
    },
    Card {
        key: "h200",
        name: "H200 141GB",
        total_bytes: mib(143_771),
        source: "NVML total in tests/fixtures/h200-torch2.11/nvidia-smi-q.xml",
    },
    Card {
        key: "b200",
        name: "B200 180GB",
        total_bytes: mib(183_359),
        source: SMI,
    },
    Card {
        key: "mi300x",
        name: "AMD Instinct MI300X 192GB",
        total_bytes: mib(196_608),
        source: "datasheet 192 GB (HBM3) taken as 192 GiB",
    },
];

/// Other spellings accepted by [`find`].
const ALIASES: &[(&str, &str)] = &[
    ("tesla-t4", "t4"),
    ("a10", "a10g"),
    ("3090", "rtx3090"),
    ("4090", "rtx4090"),
    ("5090", "rtx5090"),
    ("a100", "a100-80gb"),
    ("a100-40", "a100-40gb"),
    ("a100-80", "a100-80gb"),
    ("l40", "l40s"),
    ("h100-80gb", "h100"),
    ("h100-sxm", "h100"),
    ("h800", "h100"),
    ("h100nvl", "h100-nvl"),
    ("h200-141gb", "h200"),
    ("b200-180gb", "b200"),
    ("mi300", "mi300x"),
];

/// Finds a card by key or alias, ignoring case, spaces and `_`/`-`/`nvidia` prefixes.
pub fn find(name: &str) -> Option<&'static Card> {
    let mut wanted: String = name
        .to_ascii_lowercase()
        .chars()
        .map(|c| if c == '_' || c == ' ' { '-' } else { c })
        .collect();
    for prefix in ["nvidia-", "geforce-", "rtx-", "tesla-", "amd-", "instinct-"] {
        if let Some(rest) = wanted.strip_prefix(prefix) {
            wanted = rest.to_string();
        }
    }
    let wanted = wanted.trim_matches('-').to_string();
    let squashed = wanted.replace('-', "");
    let key = ALIASES
        .iter()
        .find(|(alias, _)| *alias == wanted || alias.replace('-', "") == squashed)
        .map(|(_, key)| *key)
        .unwrap_or(wanted.as_str());
    CARDS.iter().find(|card| {
        card.key == key
            || card.key.replace('-', "") == key.replace('-', "")
            || card.key.replace("rtx", "") == key
    })
}

/// Keys of every card, for help and errors.
pub fn keys() -> Vec<&'static str> {
    CARDS.iter().map(|card| card.key).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_cards_by_common_spellings() {
        assert_eq!(find("H100").map(|c| c.key), Some("h100"));
        assert_eq!(find("NVIDIA H200").map(|c| c.key), Some("h200"));
        assert_eq!(find("rtx_4090").map(|c| c.key), Some("rtx4090"));
        assert_eq!(find("A100-40GB").map(|c| c.key), Some("a100-40gb"));
        assert_eq!(find("a100").map(|c| c.key), Some("a100-80gb"));
        assert_eq!(find("h100 nvl").map(|c| c.key), Some("h100-nvl"));
        assert!(find("tpu").is_none());
    }

    #[test]
    fn table_is_sorted_by_memory() {
        assert!(CARDS
            .windows(2)
            .all(|pair| pair[0].total_bytes <= pair[1].total_bytes));
        assert_eq!(find("h200").unwrap().total_bytes.get(), 150_754_820_096);
    }
}
