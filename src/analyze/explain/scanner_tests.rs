//! Property tests of the candidate scan: the anchored fast scan finds what the plain automaton
//! finds.

use super::{collect_candidates, find_candidates, scanner, Candidates, Hits};
use proptest::prelude::*;

/// A line of markers, markers cut short, digits and noise (IP addresses, hex ids, words).
fn line() -> impl Strategy<Value = String> {
    let markers: Vec<String> = scanner().patterns.iter().map(|m| m.to_string()).collect();
    let piece = prop_oneof![
        proptest::sample::select(markers.clone()),
        proptest::sample::select(markers).prop_flat_map(|marker| {
            let cuts: Vec<usize> = marker.char_indices().map(|(at, _)| at).collect();
            proptest::sample::select(cuts).prop_map(move |cut| marker[..cut].to_string())
        }),
        "[0-9]{1,5}(\\.[0-9]{1,3}){0,3}",
        "[0-9a-f]{4,32}",
        "[ :=/v.()\"a-zA-Z]{1,6}",
    ];
    proptest::collection::vec(piece, 0..6).prop_map(|pieces| pieces.concat())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]
    /// On random mixes of marker and noise lines, the anchored scan finds exactly what
    /// the plain automaton finds, and the candidate lines are the same either way.
    #[test]
    fn the_fast_scan_finds_what_the_automaton_finds(lines in proptest::collection::vec(line(), 1..40)) {
        let scanner = scanner();
        let automaton = aho_corasick::AhoCorasick::new(&scanner.patterns).unwrap();
        let text = lines.join("\n") + "\n";
        let expected: Vec<(usize, usize)> = automaton
            .find_overlapping_iter(&text)
            .map(|found| (found.start(), found.pattern().as_usize()))
            .collect();
        let mut found = Vec::new();
        for line in text.split_inclusive('\n') {
            let start = line.as_ptr() as usize - text.as_ptr() as usize;
            let first = found.len();
            scanner.scan(line.as_bytes(), &mut found);
            for hit in &mut found[first..] {
                hit.0 += start;
            }
        }
        let mut by_line = expected.clone();
        by_line.sort_by_key(|&(start, _)| text[..start].matches('\n').count());
        prop_assert_eq!(found, by_line);
        let mut anchored = Candidates::default();
        find_candidates(text.as_bytes(), &mut anchored);
        let mut listed = Candidates::default();
        collect_candidates(scanner, text.as_bytes(), Hits::listed(&automaton, text.as_bytes()), &mut listed);
        prop_assert_eq!(format!("{:?}", anchored.lines), format!("{:?}", listed.lines));
        prop_assert_eq!(anchored.markers, listed.markers);
        prop_assert_eq!(anchored.total_lines, listed.total_lines);
    }
}

#[test]
fn the_markers_get_anchors_on_a_simd_cpu() {
    if cfg!(target_arch = "x86_64") && std::arch::is_x86_feature_detected!("ssse3") {
        assert!(scanner().anchored.is_some());
    }
}

/// The anchored scan finds exactly what the full overlapping automaton finds, in the
/// same order, on every fixture and on texts packed with overlapping markers.
#[test]
fn anchored_scan_equals_the_automaton() {
    let scanner = scanner();
    let automaton = aho_corasick::AhoCorasick::new(&scanner.patterns).unwrap();
    let mut texts = super::fixture_texts();
    texts.push(std::fs::read("examples/vllm-0.6.4-kv-cache-too-small.log").unwrap());
    let all = scanner.patterns.concat();
    texts.push(all.clone().into_bytes());
    texts.push(scanner.patterns.join("x").into_bytes());
    texts.push(all.chars().rev().collect::<String>().into_bytes());
    for text in &texts {
        let expected: Vec<(usize, usize)> = automaton
            .find_overlapping_iter(&text[..])
            .map(|found| (found.start(), found.pattern().as_usize()))
            .collect();
        let mut found = Vec::new();
        scanner.scan(text, &mut found);
        assert_eq!(found, expected);
    }
}
