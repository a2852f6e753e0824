//! Common GPU classes and their memory, for `oomdoc fit --gpu NAME` and for "which card would
//! fit". A table, not a measurement: each entry says where its figure comes from.
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
    /// Model without vendor, form factor or memory (`a100`, `4090`, `h100nvl`): what
    /// [`lookup`] matches a typed name against.
    pub family: &'static str,
    /// Marketing memory in GB, as names spell it (`a100-80gb`).
    pub memory_gb: u64,
    /// Memory total used for budgets.
    pub total_bytes: Bytes,
    /// Where `total_bytes` comes from.
    pub source: &'static str,
}

impl Card {
    /// Name, memory and key, for lists in errors.
    pub fn describe(&self) -> String {
        format!("`{}`: {} ({})", self.key, self.name, self.total_bytes)
    }
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
        family: "t4",
        memory_gb: 16,
        total_bytes: mib(15_360),
        source: SMI,
    },
    Card {
        key: "l4",
        name: "NVIDIA L4 24GB",
        family: "l4",
        memory_gb: 24,
        total_bytes: mib(23_034),
        source: SMI,
    },
    Card {
        key: "rtx4090",
        name: "GeForce RTX 4090 24GB",
        family: "4090",
        memory_gb: 24,
        total_bytes: mib(24_564),
        source: SMI,
    },
    Card {
        key: "a10g",
        name: "NVIDIA A10G 24GB",
        family: "a10g",
        memory_gb: 24,
        total_bytes: mib(24_576),
        source: "datasheet 24 GB (GDDR6) taken as 24 GiB; nvidia-smi shows a little less",
    },
    Card {
        key: "rtx3090",
        name: "GeForce RTX 3090 24GB",
        family: "3090",
        memory_gb: 24,
        total_bytes: mib(24_576),
        source: "datasheet 24 GB (GDDR6X) taken as 24 GiB",
    },
    Card {
        key: "rtx5090",
        name: "GeForce RTX 5090 32GB",
        family: "5090",
        memory_gb: 32,
        total_bytes: mib(32_607),
        source: SMI,
    },
    Card {
        key: "a100-40gb",
        name: "A100 40GB",
        family: "a100",
        memory_gb: 40,
        total_bytes: mib(40_960),
        source: "datasheet 40 GB (HBM2) taken as 40 GiB",
    },
    Card {
        key: "l40s",
        name: "NVIDIA L40S 48GB",
        family: "l40s",
        memory_gb: 48,
        total_bytes: mib(46_068),
        source: SMI,
    },
    Card {
        key: "h100",
        name: "H100 80GB HBM3",
        family: "h100",
        memory_gb: 80,
        total_bytes: mib(81_559),
        source: SMI,
    },
    Card {
        key: "a100-80gb",
        name: "A100 80GB",
        family: "a100",
        memory_gb: 80,
        total_bytes: mib(81_920),
        source: "datasheet 80 GB (HBM2e) taken as 80 GiB",
    },
    Card {
        key: "h100-nvl",
        name: "H100 NVL 94GB",
        family: "h100nvl",
        memory_gb: 94,
        total_bytes: mib(95_830),
        source: SMI,
    },
    Card {
        key: "h200",
        name: "H200 141GB",
        family: "h200",
        memory_gb: 141,
        total_bytes: mib(143_771),
        source: "NVML total of an H200 (nvidia-smi -q -x, driver 580)",
    },
    Card {
        key: "b200",
        name: "B200 180GB",
        family: "b200",
        memory_gb: 180,
        total_bytes: mib(183_359),
        source: SMI,
    },
    Card {
        key: "mi300x",
        name: "AMD Instinct MI300X 192GB",
        family: "mi300x",
        memory_gb: 192,
        total_bytes: mib(196_608),
        source: "datasheet 192 GB (HBM3) taken as 192 GiB",
    },
];

/// Words of a GPU name that say nothing about its memory: vendor and product line.
const VENDOR_WORDS: &[&str] = &["nvidia", "geforce", "tesla", "amd", "instinct", "radeon"];
/// Form-factor and memory-type words: PCIe and SXM versions of a card have the same memory.
const FORM_WORDS: &[&str] = &[
    "sxm", "sxm2", "sxm4", "sxm5", "pcie", "nvlink", "hbm2", "hbm2e", "hbm3", "hbm3e", "gddr6",
    "gddr6x", "gddr7",
];

/// Why a `--gpu` name matched no single card.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LookupError {
    /// The name fits several cards of different memory; never pick one silently.
    Ambiguous(Vec<&'static Card>),
    /// No card has this name; `near` lists cards with a similar one.
    Unknown {
        /// Cards whose family is one letter away from the typed one (`a10` → `a10g`, `a100`).
        near: Vec<&'static Card>,
    },
    /// The family exists but not with that memory (`a100-24gb`).
    NoSuchMemory {
        /// Memory typed, in GB.
        memory_gb: u64,
        /// The cards of that family.
        family: Vec<&'static Card>,
    },
}

/// A typed GPU name split into its model family and, when given, its memory in GB:
/// `NVIDIA A100-SXM4-80GB` → (`a100`, 80), `rtx_4090` → (`4090`, None), `H100 NVL` →
/// (`h100nvl`, None). Vendor and form-factor words are dropped.
fn family_and_memory(name: &str) -> (String, Option<u64>) {
    let lower = name.to_ascii_lowercase();
    let mut family = String::new();
    let mut memory = None;
    for token in lower.split(|c: char| !c.is_ascii_alphanumeric()) {
        if token.is_empty() || VENDOR_WORDS.contains(&token) || FORM_WORDS.contains(&token) {
            continue;
        }
        let digits = token.trim_end_matches("gb").trim_end_matches('g');
        let is_memory = !family.is_empty()
            && digits.len() < token.len()
            && !digits.is_empty()
            && digits.chars().all(|c| c.is_ascii_digit());
        // `a100-80` (a bare number after the model) is memory as well.
        let bare_number =
            !family.is_empty() && token.chars().all(|c| c.is_ascii_digit()) && token.len() <= 3;
        if is_memory || bare_number {
            memory = digits.parse().ok();
            continue;
        }
        family.push_str(token);
    }
    let family = family
        .strip_prefix("rtx")
        .filter(|rest| !rest.is_empty())
        .map_or(family.clone(), str::to_string);
    (family, memory)
}

/// Finds the card a `--gpu` name means: a key (`a100-80gb`), a marketing or nvidia-smi name
/// (`NVIDIA A100-SXM4-80GB`, `GeForce RTX 4090`) or a common short form (`4090`, `h100 nvl`),
/// ignoring case, spaces, `_`/`-`, vendor words and PCIe/SXM. A name that fits cards of
/// different memory (`a100`: 40 GB or 80 GB) is [`LookupError::Ambiguous`], never a guess.
pub fn lookup(name: &str) -> Result<&'static Card, LookupError> {
    let (family, memory) = family_and_memory(name);
    let same_family: Vec<&'static Card> = CARDS.iter().filter(|c| c.family == family).collect();
    let matching: Vec<&'static Card> = same_family
        .iter()
        .copied()
        .filter(|card| memory.is_none_or(|gb| card.memory_gb == gb))
        .collect();
    match (matching.as_slice(), memory) {
        ([card], _) => Ok(card),
        ([], Some(memory_gb)) if !same_family.is_empty() => Err(LookupError::NoSuchMemory {
            memory_gb,
            family: same_family,
        }),
        ([], _) => Err(LookupError::Unknown {
            near: CARDS
                .iter()
                .filter(|card| !family.is_empty() && one_edit_apart(card.family, &family))
                .collect(),
        }),
        (several, _) => Err(LookupError::Ambiguous(several.to_vec())),
    }
}

/// Whether two names differ by at most one inserted, removed or replaced character.
fn one_edit_apart(a: &str, b: &str) -> bool {
    let (a, b) = (a.as_bytes(), b.as_bytes());
    let (short, long) = if a.len() <= b.len() { (a, b) } else { (b, a) };
    if long.len() - short.len() > 1 {
        return false;
    }
    let prefix = short.iter().zip(long).take_while(|(x, y)| x == y).count();
    if short.len() == long.len() {
        short[prefix..]
            .iter()
            .skip(1)
            .eq(long[prefix..].iter().skip(1))
    } else {
        short[prefix..] == long[prefix + 1..]
    }
}

/// Keys of every card, for help and errors.
pub fn keys() -> Vec<&'static str> {
    CARDS.iter().map(|card| card.key).collect()
}

/// Finds a card by name when exactly one matches (see [`lookup`]).
pub fn find(name: &str) -> Option<&'static Card> {
    lookup(name).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_cards_by_common_spellings() {
        for (name, key) in [
            ("H100", "h100"),
            ("NVIDIA H200", "h200"),
            ("rtx_4090", "rtx4090"),
            ("4090", "rtx4090"),
            ("NVIDIA GeForce RTX 4090", "rtx4090"),
            ("A100-40GB", "a100-40gb"),
            ("a100-80", "a100-80gb"),
            ("NVIDIA A100-SXM4-80GB", "a100-80gb"),
            ("a100 pcie 40gb", "a100-40gb"),
            ("h100 nvl", "h100-nvl"),
            ("h100nvl", "h100-nvl"),
            ("NVIDIA H100 80GB HBM3", "h100"),
            ("h100-sxm", "h100"),
            ("Tesla T4", "t4"),
            ("mi300x", "mi300x"),
            ("h200-141gb", "h200"),
        ] {
            assert_eq!(lookup(name).map(|c| c.key), Ok(key), "{name}");
        }
    }

    #[test]
    fn ambiguous_and_unknown_names_are_never_guessed() {
        let keys = |cards: &[&Card]| cards.iter().map(|c| c.key).collect::<Vec<_>>();
        for name in ["a100", "A100-SXM4", "nvidia a100 pcie"] {
            match lookup(name) {
                Err(LookupError::Ambiguous(cards)) => {
                    assert_eq!(keys(&cards), ["a100-40gb", "a100-80gb"], "{name}")
                }
                other => panic!("{name}: {other:?}"),
            }
        }
        match lookup("a100-24gb") {
            Err(LookupError::NoSuchMemory { memory_gb, family }) => {
                assert_eq!(memory_gb, 24);
                assert_eq!(keys(&family), ["a100-40gb", "a100-80gb"]);
            }
            other => panic!("{other:?}"),
        }
        // A10, L40 and H800 are other cards than A10G, L40S and H100: not silently swapped,
        // only suggested.
        for (name, near) in [
            ("a10", vec!["a10g", "a100-40gb", "a100-80gb"]),
            ("l40", vec!["l4", "l40s"]),
            ("h800", vec!["h100", "h200"]),
            ("tpu-v5", vec![]),
        ] {
            match lookup(name) {
                Err(LookupError::Unknown { near: found }) => assert_eq!(keys(&found), near),
                other => panic!("{name}: {other:?}"),
            }
        }
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
