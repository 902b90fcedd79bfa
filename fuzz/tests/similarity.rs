//! Feature-request similarity (elroy-feature-requests, `tools.md` §5.0): the difflib port gives
//! CPython's `SequenceMatcher(None, a, b).ratio()` exactly (differential check against the
//! system's `python3`, in batches), stays in `0..=1`, gives 1.0 for identical strings, and never
//! panics; `similarity` and `token_overlap` keep their bounds, and `token_overlap` is symmetric.
//! (`ratio` itself is not symmetric in CPython either, so symmetry is not asserted for it.)

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, missing_docs)]

use std::io::Write;
use std::process::{Command, Stdio};

use elroy_feature_requests::difflib::ratio;
use elroy_feature_requests::similarity::{normalize, similarity, token_overlap};
use elroy_fuzz::fuzz;
use proptest::prelude::*;

/// Text over a small alphabet (many matches, ties) or anything; some long enough (≥ 200
/// characters) for the autojunk rule.
fn text() -> impl Strategy<Value = String> {
    prop_oneof![
        4 => "[ab ]{0,12}",
        4 => "[a-e ]{0,40}",
        2 => "[a-c]{190,260}",
        2 => "[a-z ]{150,400}",
        2 => any::<String>(),
        1 => "(add|calendar|sync|dark|mode|export|the|for| |-|_){0,30}",
    ]
}

#[test]
fn ratio_properties() {
    fuzz(
        "similarity::ratio_properties",
        (text(), text()),
        |(a, b)| {
            let r = ratio(&a, &b);
            prop_assert!((0.0..=1.0).contains(&r), "ratio {} out of bounds", r);
            prop_assert_eq!(ratio(&a, &a), 1.0);
            let s = similarity(&a, &b);
            prop_assert!((0.0..=1.0).contains(&s));
            prop_assert_eq!(similarity(&a, &a), 1.0);
            prop_assert_eq!(s, ratio(&normalize(&a), &normalize(&b)));
            let o = token_overlap(&a, &b);
            prop_assert!((0.0..=1.0).contains(&o));
            prop_assert_eq!(o, token_overlap(&b, &a));
            // 2·M / (|a| + |b|): M is a whole number of characters, at most the shorter length.
            let (la, lb) = (a.chars().count(), b.chars().count());
            if la + lb > 0 {
                let m = r * (la + lb) as f64 / 2.0;
                prop_assert!((m - m.round()).abs() < 1e-6 && m.round() as usize <= la.min(lb));
            }
            Ok(())
        },
    );
}

const PYTHON: &str = r#"
import sys, json, difflib
pairs = json.load(sys.stdin)
json.dump([repr(difflib.SequenceMatcher(None, a, b).ratio()) for a, b in pairs], sys.stdout)
"#;

/// CPython's ratios for `pairs` (one `python3` process per batch).
fn python_ratios(pairs: &[(String, String)]) -> Vec<f64> {
    let mut child = Command::new("python3")
        .args(["-c", PYTHON])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .expect("python3 for the differential similarity target");
    let input = serde_json::to_vec(pairs).unwrap();
    child.stdin.take().unwrap().write_all(&input).unwrap();
    let out = child.wait_with_output().unwrap();
    assert!(out.status.success(), "python3 failed");
    // As text, parsed by Rust's correctly rounded `f64::from_str`: serde_json's default float
    // parser can be one ULP off (see README.md, finding 2).
    let texts: Vec<String> = serde_json::from_slice(&out.stdout).unwrap();
    texts.iter().map(|t| t.parse().unwrap()).collect()
}

#[test]
fn ratio_equals_cpython() {
    if Command::new("python3").arg("-V").output().is_err() {
        eprintln!("python3 not found: differential target skipped");
        return;
    }
    // Surrogates cannot cross JSON into Python strings; Rust strings have none anyway.
    fuzz(
        "similarity::ratio_equals_cpython (batches of 64 pairs)",
        prop::collection::vec((text(), text()), 64),
        |pairs| {
            let expected = python_ratios(&pairs);
            for ((a, b), py) in pairs.iter().zip(expected) {
                let ours = ratio(a, b);
                prop_assert!(
                    ours == py,
                    "ratio({:?}, {:?}) = {} but CPython says {}",
                    a,
                    b,
                    ours,
                    py
                );
            }
            Ok(())
        },
    );
}
