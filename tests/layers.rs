//! The crate's dependencies run one way (see `src/lib.rs`): a test over every `crate::…` path
//! in `src/`, outside comments and test modules.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// Imports of a lower layer from a higher one that are still to be removed, each with the
/// reason it is there. The test fails when one of them is gone (delete it here) as well as
/// when a new one appears.
const KNOWN: &[(&str, &str)] = &[];

/// What each top-level module may not import.
fn forbidden(layer: &str) -> &'static [&'static str] {
    match layer {
        "error" => &[
            "env_vars", "model", "parse", "source", "analyze", "render", "redact", "record",
            "exporter", "cli",
        ],
        "model" => &[
            "parse", "source", "analyze", "render", "redact", "record", "exporter", "cli",
        ],
        "parse" => &["source", "analyze", "render", "record", "exporter", "cli"],
        "source" => &["analyze", "render", "record", "exporter", "cli"],
        "analyze" => &["source", "render", "record", "exporter", "cli"],
        "render" => &["source", "record", "exporter", "cli"],
        "redact" => &["source", "analyze", "render", "record", "exporter", "cli"],
        "record" | "probe" | "exporter" => &["cli"],
        _ => &[],
    }
}

fn rust_files(directory: &Path, out: &mut Vec<PathBuf>) {
    let mut entries: Vec<PathBuf> = std::fs::read_dir(directory)
        .unwrap_or_else(|error| panic!("{}: {error}", directory.display()))
        .map(|entry| entry.map(|entry| entry.path()))
        .collect::<Result<_, _>>()
        .unwrap_or_else(|error| panic!("{}: {error}", directory.display()));
    entries.sort();
    for path in entries {
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|extension| extension == "rs") {
            out.push(path);
        }
    }
}

/// The top-level module of a file under `src/`: `src/parse/text.rs` → `parse`,
/// `src/error.rs` → `error`.
fn layer_of(relative: &Path) -> String {
    let mut parts = relative.components().skip(1);
    let first = parts
        .next()
        .map(|part| part.as_os_str().to_string_lossy().into_owned())
        .unwrap_or_default();
    first.trim_end_matches(".rs").to_owned()
}

/// The top-level modules a file names as `crate::X`, in code outside comments and the test
/// module (tests may drive the whole pipeline).
fn imports(source: &str) -> BTreeSet<String> {
    let mut found = BTreeSet::new();
    for line in source.lines() {
        let code = line.trim_start();
        if code.starts_with("#[cfg(test)]") {
            break;
        }
        if code.starts_with("//") {
            continue;
        }
        let code = code.split("//").next().unwrap_or_default();
        let mut rest = code;
        while let Some(at) = rest.find("crate::") {
            let after = &rest[at + "crate::".len()..];
            if let Some(group) = after.strip_prefix('{') {
                // `use crate::{a::x, b::y}`: every first name in the group.
                for item in group.split(',') {
                    let name: String = item
                        .trim()
                        .chars()
                        .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
                        .collect();
                    if !name.is_empty() {
                        found.insert(name);
                    }
                }
            } else {
                let name: String = after
                    .chars()
                    .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
                    .collect();
                if !name.is_empty() {
                    found.insert(name);
                }
            }
            rest = after;
        }
    }
    found
}

#[test]
fn dependencies_run_one_way() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut files = Vec::new();
    rust_files(&root.join("src"), &mut files);
    assert!(files.len() > 50, "only {} files under src/", files.len());
    // (from layer, to layer) → the files that import it.
    let mut edges: BTreeMap<(String, String), Vec<String>> = BTreeMap::new();
    let mut violations: BTreeSet<(String, String)> = BTreeSet::new();
    for path in &files {
        let relative = path.strip_prefix(root).unwrap_or(path);
        let shown = relative.to_string_lossy().replace('\\', "/");
        let layer = layer_of(relative);
        let source = std::fs::read_to_string(path)
            .unwrap_or_else(|error| panic!("{}: {error}", path.display()));
        for target in imports(&source) {
            if target == layer {
                continue;
            }
            if forbidden(&layer).contains(&target.as_str()) {
                violations.insert((shown.clone(), target.clone()));
            }
            edges
                .entry((layer.clone(), target))
                .or_default()
                .push(shown.clone());
        }
    }
    let known: BTreeSet<(String, String)> = KNOWN
        .iter()
        .map(|(file, target)| ((*file).to_owned(), (*target).to_owned()))
        .collect();
    let new: Vec<_> = violations.difference(&known).collect();
    assert!(new.is_empty(), "imports against the layer order: {new:#?}");
    let gone: Vec<_> = known.difference(&violations).collect();
    assert!(
        gone.is_empty(),
        "no longer imported, remove from KNOWN: {gone:#?}"
    );
    let mut circles = Vec::new();
    for ((from, to), files) in &edges {
        if from < to {
            if let Some(back) = edges.get(&(to.clone(), from.clone())) {
                circles.push(format!("{from} ↔ {to}: {files:?} / {back:?}"));
            }
        }
    }
    assert!(
        circles.is_empty(),
        "layers importing each other: {circles:#?}"
    );
}

/// The functions (lower-case names) a file takes from `crate::analyze::…`, in code outside
/// comments and the test module: `use crate::analyze::m::{Type, helper}` gives `helper`.
fn analyze_functions(source: &str) -> BTreeSet<String> {
    let mut code = String::new();
    for line in source.lines() {
        let trimmed = line.trim_start();
        if trimmed.starts_with("#[cfg(test)]") {
            break;
        }
        if !trimmed.starts_with("//") {
            code.push_str(trimmed.split("//").next().unwrap_or_default());
            code.push(' ');
        }
    }
    let identifier = |text: &str| -> String {
        text.trim()
            .chars()
            .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
            .collect()
    };
    let mut found = BTreeSet::new();
    let mut rest = code.as_str();
    while let Some(at) = rest.find("crate::analyze::") {
        let after = &rest[at + "crate::analyze::".len()..];
        let module = identifier(after);
        let path = after[module.len()..].strip_prefix("::").unwrap_or_default();
        let names: Vec<String> = match path.strip_prefix('{') {
            Some(group) => group
                .split('}')
                .next()
                .unwrap_or_default()
                .split(',')
                .map(|item| identifier(item.rsplit("::").next().unwrap_or_default()))
                .collect(),
            None => vec![identifier(path)],
        };
        for name in names {
            if name.starts_with(|c: char| c.is_ascii_lowercase()) && name != "self" {
                found.insert(name);
            }
        }
        rest = after;
    }
    found
}

#[test]
fn render_takes_findings_from_analyze_not_formatting_helpers() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut files = Vec::new();
    rust_files(&root.join("src/render"), &mut files);
    let mut helpers = BTreeSet::new();
    for path in &files {
        let shown = path
            .strip_prefix(root)
            .unwrap_or(path)
            .to_string_lossy()
            .replace('\\', "/");
        let source = std::fs::read_to_string(path)
            .unwrap_or_else(|error| panic!("{}: {error}", path.display()));
        for name in analyze_functions(&source) {
            helpers.insert((shown.clone(), name));
        }
    }
    assert!(
        helpers.is_empty(),
        "render/ takes a formatting helper from analyze/ (move it to render/ or model/): \
         {helpers:#?}"
    );
}

#[test]
fn the_helper_scanner_sees_functions_not_types() {
    let found = analyze_functions(
        "use crate::analyze::m::{Report, human_duration,\n  fit::helper};\n\
         let x = crate::analyze::run_explain::LiveExplain::new();\n\
         let y = crate::analyze::growth::format_p(1.0); // crate::analyze::a::hidden\n\
         #[cfg(test)]\nuse crate::analyze::t::in_tests;\n",
    );
    let expected: BTreeSet<String> = ["human_duration", "helper", "format_p"]
        .iter()
        .map(|name| (*name).to_owned())
        .collect();
    assert_eq!(found, expected);
}

#[test]
fn the_scanner_sees_every_form_of_import() {
    let found = imports(
        "use crate::model::Bytes;\n// use crate::cli::x;\nuse crate::{parse::a, source::b};\n\
         let x = crate::render::f(); // crate::record\n#[cfg(test)]\nuse crate::analyze::y;\n",
    );
    let expected: BTreeSet<String> = ["model", "parse", "source", "render"]
        .iter()
        .map(|name| (*name).to_owned())
        .collect();
    assert_eq!(found, expected);
    assert_eq!(layer_of(Path::new("src/parse/oom_text/mod.rs")), "parse");
    assert_eq!(layer_of(Path::new("src/error.rs")), "error");
}
