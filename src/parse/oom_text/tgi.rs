//! TGI (text-generation-inference) warm-up failures (`server/text_generation_server/`): the Python shard's
//! `Not enough memory to handle {n} prefill tokens. You need to decrease
//! `--max-batch-prefill-tokens`` (`server/text_generation_server/models/flash_causal_lm.py`) and
//! the router's `Not enough memory to handle `max_total_tokens={n}`` (`backends/v3/src/lib.rs`).

use super::{integer_of, Family, Parsed};
use crate::model::failure::{EngineName, OomKind};

pub(super) fn start(text: &str) -> Option<(Family, usize)> {
    let position = super::find(text, "Not enough memory to handle")
        .or_else(|| super::find(text, "not enough memory to handle"))?;
    Some((Family::Tgi, position))
}

pub(super) fn is_complete(s: &str) -> bool {
    regex!(r"(?i:n)otenoughmemorytohandle(?:\d+prefilltokens|`?max_total_tokens=\d+)").is_match(s)
}

pub(super) fn parse(s: &str) -> Parsed {
    let mut parsed = Parsed::new(OomKind::TgiWarmup, true);
    parsed.engine_hint = Some(EngineName::Tgi);
    parsed.details.prefill_tokens =
        integer_of(regex!(r"(?i:n)otenoughmemorytohandle(\d+)prefill"), s);
    parsed.details.max_total_tokens = integer_of(regex!(r"max_total_tokens=(\d+)"), s);
    parsed
}
