//! Tests of the known-line likeness test (`like_previous`, `like_shape`), against the plain
//! comparison of lines.

use super::{compare_lines, like_but_run, like_previous, like_shape, scanner};
use proptest::prelude::*;

fn like(a: &str, b: &str) -> bool {
    like_previous(a.as_bytes(), b.as_bytes(), &scanner().digits)
}

#[test]
fn lines_that_differ_in_free_digits_are_alike() {
    let line =
        |port: u32| format!("INFO:     10.0.0.7:{port} - \"POST /v1/completions HTTP/1.1\" 200 OK");
    assert!(like(&line(40123), &line(51234)));
    assert!(like(&line(40123), &line(40123)));
    assert!(!like(&line(40123), &line(4012)), "another length");
    assert!(
        !like("x \"POST /v1/ y", "x \"POST /v2/ y"),
        "a marker holds the digit"
    );
    assert!(
        like("x POST /v1/ y", "x POST /v2/ y"),
        "no marker without the quote"
    );
    assert!(
        !like("exit code 137.", "exit code 138."),
        "a marker holds the digits"
    );
    assert!(
        !like("status: 7", "status: 8"),
        "a marker may start at the run"
    );
    assert!(!like("abc", "abd"), "not digits");
    assert!(!like("a1", "ab"), "digit for a letter");
    assert!(like("took 12.5 s at 10:00:01", "took 47.9 s at 11:59:31"));
}

/// Lines built from marker pieces, digits and separators: wherever two lines are alike,
/// a full search finds the same markers at the same places in both.
fn piece() -> impl Strategy<Value = String> {
    let scanner = scanner();
    let markers: Vec<String> = scanner.patterns.iter().map(|m| m.to_string()).collect();
    prop_oneof![
        proptest::sample::select(markers.clone()),
        proptest::sample::select(markers).prop_flat_map(|m| {
            let len = m.len();
            (Just(m), 0..len).prop_map(|(m, cut)| {
                m.char_indices()
                    .map(|(i, _)| i)
                    .rfind(|&i| i <= cut)
                    .map_or(m.clone(), |i| m[..i].to_string())
            })
        }),
        "[0-9]{1,4}",
        "[ :=/v.()a-z]{1,3}",
    ]
}

fn mutate_digits(line: &str, seed: u64) -> String {
    let mut state = seed | 1;
    line.chars()
        .map(|c| {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            match state % 31 {
                // Now and then a digit becomes something else (lines no longer alike).
                0 if c.is_ascii_digit() => char::from(b"v: =x"[(state / 31 % 5) as usize]),
                _ if c.is_ascii_digit() && state % 3 == 0 => {
                    char::from(b'0' + (state / 3 % 10) as u8)
                }
                _ => c,
            }
        })
        .collect()
}

#[test]
fn one_changed_run_is_found_and_reused() {
    let line = |port: u32, took: u32| format!("at 10.0.0.7:{port} - took {took} ms");
    let (a, b, c) = (line(40123, 1), line(51234, 1), line(61111, 1));
    let run = compare_lines(a.as_bytes(), b.as_bytes(), &scanner().digits);
    let port = a.find("40123").unwrap();
    assert_eq!(run, Some(Some(port..port + 5)));
    assert!(like_but_run(b.as_bytes(), c.as_bytes(), port..port + 5));
    assert!(!like_but_run(
        b.as_bytes(),
        line(61111, 2).as_bytes(),
        port..port + 5
    ));
    // Only digits may change inside the run (here a letter would make a marker).
    assert!(!like_but_run(b"\"POST /11/", b"\"POST /v1/", 7..9));
    assert!(like_but_run(b"\"POST /11/", b"\"POST /21/", 7..9));
    // Two runs changed: none is kept.
    let two = compare_lines(a.as_bytes(), line(51234, 2).as_bytes(), &scanner().digits);
    assert_eq!(two, Some(None));
    assert_eq!(
        compare_lines(a.as_bytes(), a.as_bytes(), &scanner().digits),
        Some(None)
    );
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2000))]
    #[test]
    fn a_reused_run_keeps_the_markers(pieces in proptest::collection::vec(piece(), 1..8), seeds in any::<(u64, u64)>()) {
        let first = pieces.concat();
        let second = mutate_digits(&first, seeds.0);
        let third = mutate_digits(&second, seeds.1);
        let digits = &scanner().digits;
        if let Some(Some(run)) = compare_lines(first.as_bytes(), second.as_bytes(), digits) {
            if like_but_run(second.as_bytes(), third.as_bytes(), run) {
                let scanner = scanner();
                let mut a = Vec::new();
                let mut b = Vec::new();
                scanner.scan(second.as_bytes(), &mut a);
                scanner.scan(third.as_bytes(), &mut b);
                prop_assert_eq!(a, b, "{:?} / {:?}", second, third);
            }
        }
    }
}

/// Like [`mutate_digits`], and now and then a digit doubled or dropped (runs of digits of
/// other lengths).
fn mutate_digit_runs(line: &str, seed: u64) -> String {
    let mut state = seed | 1;
    let mut out = String::new();
    for c in mutate_digits(line, seed).chars() {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        match state % 7 {
            0 if c.is_ascii_digit() => {}
            1 if c.is_ascii_digit() => {
                out.push(c);
                out.push(char::from(b'0' + (state / 7 % 10) as u8));
            }
            _ => out.push(c),
        }
    }
    out
}

#[test]
fn lines_with_runs_of_other_lengths_are_alike() {
    let shape = |a: &str, b: &str| {
        like_shape(
            a.as_bytes(),
            format!("{b}\nnext").as_bytes(),
            &scanner().digits,
        )
    };
    let line = |ip: &str, port: u32| {
        format!("INFO:     {ip}:{port} - \"POST /v1/completions HTTP/1.1\" 200 OK")
    };
    let b = line("192.168.100.7", 4012);
    assert_eq!(shape(&line("10.0.0.7", 40123), &b), Some(b.len()));
    assert_eq!(shape(&line("10.0.0.7", 40123), "INFO:     10.0.0.7"), None);
    assert_eq!(shape("took 12.5 s", "took 1244.75 s"), Some(14));
    assert_eq!(
        shape("took 12.5 s", "took .5 s"),
        None,
        "a run in one line only"
    );
    assert_eq!(shape("took 12.5 s", "took 12.5 ms"), None);
    assert_eq!(shape("took 12", "took 123"), Some(8), "a run at the end");
    assert_eq!(
        shape("x \"POST /v1/ y", "x \"POST /v12/ y"),
        None,
        "a marker holds the digit"
    );
    assert_eq!(
        shape("exit code 137.", "exit code 1.",),
        None,
        "a marker holds the digits"
    );
    assert_eq!(shape("", ""), Some(0));
    assert_eq!(shape("a1", "a1"), Some(2));
    assert_eq!(
        like_shape(b"a1", b"a12", &scanner().digits),
        None,
        "no line end"
    );
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(3000))]
    #[test]
    fn lines_alike_in_shape_hold_the_same_markers(pieces in proptest::collection::vec(piece(), 1..8), seed in any::<u64>()) {
        let line = pieces.concat();
        let other = mutate_digit_runs(&line, seed);
        let rest = format!("{other}\n{line}");
        if let Some(length) = like_shape(line.as_bytes(), rest.as_bytes(), &scanner().digits) {
            prop_assert_eq!(length, other.len());
            let scanner = scanner();
            let mut a = Vec::new();
            let mut b = Vec::new();
            scanner.scan(line.as_bytes(), &mut a);
            scanner.scan(other.as_bytes(), &mut b);
            let patterns = |found: Vec<(usize, usize)>| found.into_iter().map(|(_, p)| p).collect::<Vec<_>>();
            prop_assert_eq!(patterns(a), patterns(b), "{:?} / {:?}", line, other);
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2000))]
    #[test]
    fn alike_lines_hold_the_same_markers(pieces in proptest::collection::vec(piece(), 1..8), seed in any::<u64>()) {
        let line = pieces.concat();
        let other = mutate_digits(&line, seed);
        if like(&line, &other) {
            let scanner = scanner();
            let mut a = Vec::new();
            let mut b = Vec::new();
            scanner.scan(line.as_bytes(), &mut a);
            scanner.scan(other.as_bytes(), &mut b);
            prop_assert_eq!(a, b, "{:?} / {:?}", line, other);
        }
    }
}
