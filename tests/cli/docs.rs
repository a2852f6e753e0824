//! docs/phases.md's frame table is the rule table of the code, row for row
//! (`python3 scripts/phase_table.py` rewrites it from src/analyze/phase/rules.rs).

use oomdoc::analyze::phase::{Role, FRAME_RULES};

#[test]
fn phases_doc_lists_every_frame_rule() {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/docs/phases.md");
    let doc = std::fs::read_to_string(path).expect("docs/phases.md is readable");
    let rows: Vec<&str> = doc.lines().filter(|line| line.starts_with("| `")).collect();
    let mut missing = Vec::new();
    for rule in FRAME_RULES {
        let function = if rule.function.is_empty() {
            "(any)"
        } else {
            rule.function
        };
        let path = if rule.path.is_empty() {
            "(any)".to_string()
        } else {
            format!("`{}`", rule.path)
        };
        let phase = match rule.role {
            Role::Offload => "— (moves below it belong to the forward)",
            _ => rule.phase.as_str(),
        };
        let row = format!("| `{function}` | {path} | {phase} |");
        let library = format!("| {} |", rule.engine);
        if !rows
            .iter()
            .any(|line| line.starts_with(&row) && line.ends_with(&library))
        {
            missing.push(format!("{row} … {library}"));
        }
    }
    assert!(
        missing.is_empty(),
        "docs/phases.md lacks these frame rules (run `python3 scripts/phase_table.py`):\n{}",
        missing.join("\n")
    );
    let heading = format!("## Frame rules ({} rules;", FRAME_RULES.len());
    assert!(
        doc.contains(&heading),
        "docs/phases.md's heading should say `{heading}` (run `python3 scripts/phase_table.py`)"
    );
}
