//! Opening a PyTorch memory snapshot (`torch.cuda.memory._dump_snapshot()`, plain or gzip, or
//! stdin) for the data-only decoder in `parse::torch_snapshot`, with a memory budget scaled to
//! the file's stored size. Nothing here interprets the snapshot.

use std::path::Path;

use anyhow::Context;

use crate::model::snapshot::Snapshot;
use crate::parse::torch_snapshot;
use crate::source::file;

/// Reads one snapshot from `path` (`-`: stdin), each error naming where it came from.
pub fn read(path: &Path) -> anyhow::Result<Snapshot> {
    if path.as_os_str() == "-" {
        return torch_snapshot::read(file::stdin())
            .context("failed to read a memory snapshot from stdin");
    }
    let stored = std::fs::metadata(path).ok().map(|metadata| metadata.len());
    let reader = file::open_file(path)?;
    torch_snapshot::read_with_limits(reader, torch_snapshot::limits_for(stored))
        .with_context(|| format!("failed to read memory snapshot `{}`", path.display()))
}
