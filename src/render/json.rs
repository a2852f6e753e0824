//! JSON output: exactly one document, `"schema_version": 1` first, bytes as integers, maps
//! in stable order. The format is documented in `docs/json.md`.

use serde::Serialize;

/// The version of every JSON document oomdoc writes. Adding fields keeps it; renaming or
/// removing a field bumps it.
pub const SCHEMA_VERSION: u32 = 1;

#[derive(Serialize)]
struct Versioned<'a, T: Serialize> {
    schema_version: u32,
    #[serde(flatten)]
    body: &'a T,
}

/// Serialises `body` (a struct or map) with `schema_version` added at the top, pretty-printed,
/// ending in a newline.
pub fn to_document<T: Serialize>(body: &T) -> Result<Vec<u8>, serde_json::Error> {
    let mut bytes = serde_json::to_vec_pretty(&Versioned {
        schema_version: SCHEMA_VERSION,
        body,
    })?;
    bytes.push(b'\n');
    Ok(bytes)
}
