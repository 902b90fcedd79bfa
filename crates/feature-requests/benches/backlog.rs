//! The cost of duplicate detection and of `make_feature_request` on a large backlog.
//!
//! Run: `cargo bench -p elroy-feature-requests --bench backlog`. `ratio_*` is one difflib ratio
//! (long strings take the autojunk path); `make_on_500` is a whole `make` (lock, read and score 500
//! files, write one) on a backlog of 500 requests.

#![allow(missing_docs, clippy::unwrap_used, clippy::expect_used)]

use elroy_feature_requests::{FeatureRequestStore, difflib, similarity};

fn main() {
    divan::main();
}

fn text(seed: usize, len: usize) -> String {
    let words = [
        "sync",
        "calendar",
        "reminders",
        "export",
        "memories",
        "markdown",
        "dark",
        "mode",
        "voice",
        "input",
        "with",
        "the",
        "for",
        "and",
        "users",
        "files",
    ];
    let mut out = String::new();
    let mut i = seed;
    while out.len() < len {
        out.push_str(words[i % words.len()]);
        out.push(' ');
        i = i.wrapping_mul(31).wrapping_add(7);
    }
    out
}

#[divan::bench]
fn ratio_title_pair() -> f64 {
    similarity::similarity(
        divan::black_box("Calendar syncing for reminders"),
        divan::black_box("Add calendar sync"),
    )
}

#[divan::bench]
fn ratio_1000_chars() -> f64 {
    let (a, b) = (text(1, 1000), text(2, 1000));
    difflib::ratio(divan::black_box(&a), divan::black_box(&b))
}

#[divan::bench(sample_count = 20)]
fn make_on_500(bencher: divan::Bencher) {
    let dir = tempfile::tempdir().unwrap();
    let store = FeatureRequestStore::new(dir.path(), dir.path());
    let now: jiff::Timestamp = "2026-03-16T08:30:00Z".parse().unwrap();
    for i in 0..500 {
        store
            .make(
                now,
                "DEFAULT",
                &format!("request {i} {}", text(i, 30)),
                &text(i + 1, 120),
                None,
            )
            .unwrap();
    }
    let mut n = 0usize;
    bencher.bench_local(|| {
        n += 1;
        store
            .make(
                now,
                "DEFAULT",
                &format!("brand new idea {n} {}", text(n, 20)),
                &text(n, 100),
                None,
            )
            .unwrap()
    });
}
