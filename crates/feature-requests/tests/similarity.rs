//! The similarity test vectors of `docs/tool-rules.md#matching-feature-requests`, Python's own
//! difflib ratios, and Elroy's merge decisions (values computed by Elroy 0.5.0's `queries.py` under
//! CPython 3.12).

use elroy_feature_requests::similarity::{
    Candidate, MatchReason, best_match, score, similarity, token_overlap,
};

fn close(actual: f64, expected: f64) {
    assert!(
        (actual - expected).abs() < 1e-6,
        "got {actual}, expected {expected}"
    );
}

#[test]
fn spec_vectors() {
    let vectors = [
        ("Add calendar sync", "Add Calendar Sync!", 1.0, 1.0),
        (
            "Calendar syncing for reminders",
            "Add calendar sync",
            0.553191,
            0.25,
        ),
        ("Add dark mode", "Dark mode", 0.818182, 0.666667),
        (
            "Allow reminders to appear in external calendar providers.",
            "Allow Elroy to sync reminders with external calendar providers.",
            0.762712,
            0.666667,
        ),
        (
            "Export memories to markdown",
            "Export memories as markdown files",
            0.833333,
            0.6,
        ),
    ];
    for (a, b, s, o) in vectors {
        close(similarity(a, b), s);
        close(token_overlap(a, b), o);
    }
    // Exact values as CPython prints them.
    assert_eq!(
        similarity("Calendar syncing for reminders", "Add calendar sync"),
        0.5531914893617021
    );
    assert_eq!(
        similarity(
            "Allow reminders to appear in external calendar providers.",
            "Allow Elroy to sync reminders with external calendar providers."
        ),
        0.7627118644067796
    );
}

#[derive(serde::Deserialize)]
struct Vector {
    a: String,
    b: String,
    ratio: f64,
}

/// 400 pairs from `tests/data/gen_difflib_vectors.py` (CPython's `SequenceMatcher.ratio()`),
/// 173 of them with `len(b) >= 200`, where the autojunk heuristic changes 151 results.
#[test]
fn python_difflib_ratios() {
    let text = include_str!("data/difflib_vectors.json");
    let vectors: Vec<Vector> = serde_json::from_str(text).unwrap();
    assert_eq!(vectors.len(), 400);
    for v in &vectors {
        let got = elroy_feature_requests::difflib::ratio(&v.a, &v.b);
        // serde_json's default float parsing may be off by one ulp; 1e-12 is far below the
        // spec's 1e-6 and far above rounding noise.
        assert!(
            (got - v.ratio).abs() < 1e-12,
            "a={:?} b={:?}: got {got}, Python {}",
            v.a,
            v.b,
            v.ratio
        );
    }
}

fn decide(
    title: &str,
    description: &str,
    existing: (&str, &[String], &str),
) -> Option<MatchReason> {
    let candidate = Candidate {
        title: existing.0,
        aliases: existing.1,
        summary: existing.2,
    };
    best_match(title, description, &[candidate]).map(|(_, reason)| reason)
}

#[test]
fn merge_decisions_match_elroy() {
    let none: Vec<String> = Vec::new();
    // 0.818 combined: below 0.82, summary 0.5 -> no merge.
    let s = score(
        "Dark mode",
        "Switch the UI to dark colors.",
        Candidate {
            title: "Add dark mode",
            aliases: &none,
            summary: "Let users switch to a dark theme.",
        },
    );
    assert_eq!(s.combined, 0.8181818181818182);
    assert_eq!(s.reason, MatchReason::StrongTitleOverlap);
    assert_eq!(
        decide(
            "Dark mode",
            "Switch the UI to dark colors.",
            ("Add dark mode", &none, "Let users switch to a dark theme.")
        ),
        None
    );
    // The fixture's merge (expected.json seq 43).
    assert_eq!(
        decide(
            "Export memories as markdown files",
            "Export all memories into a folder of markdown files.",
            (
                "Export memories to Markdown",
                &none,
                "Let users export every memory as a Markdown file with YAML front matter."
            )
        ),
        Some(MatchReason::StrongTitleOverlap)
    );
    // The fixture's new request (seq 44).
    let aliases = vec!["Export memories as markdown files".to_owned()];
    let s = score(
        "Calendar sync: Google #1",
        "Sync timed due items with Google Calendar events.",
        Candidate {
            title: "Export memories to Markdown",
            aliases: &aliases,
            summary: "Let users export every memory as a Markdown file with YAML front matter.",
        },
    );
    close(s.combined, 0.16326530612244897);
    assert_eq!(s.reason, MatchReason::Weak);
    // The spec's description rule (`docs/tools.md#make_feature_request` example).
    assert_eq!(
        decide(
            "Calendar syncing for reminders",
            "Allow reminders to appear in external calendar providers.",
            (
                "Add calendar sync",
                &none,
                "Allow Elroy to sync reminders with external calendar providers."
            )
        ),
        Some(MatchReason::SimilarBehaviorDescription)
    );
    assert_eq!(
        decide(
            "add calendar sync!!",
            "whatever",
            ("Add calendar sync", &none, "x")
        ),
        Some(MatchReason::ExactTitle)
    );
    // An alias counts as a title: 0.9565 against `Voice inputs`.
    let voice = vec!["Voice inputs".to_owned()];
    assert_eq!(
        decide(
            "Voice input",
            "Talk to Elroy",
            ("Add calendar sync", &voice, "x")
        ),
        Some(MatchReason::VerySimilarTitle)
    );
}

#[test]
fn first_of_equal_scores_wins() {
    let none: Vec<String> = Vec::new();
    let a = Candidate {
        title: "Add dark mode",
        aliases: &none,
        summary: "s",
    };
    assert_eq!(
        best_match("Add dark mode", "s", &[a, a]),
        Some((0, MatchReason::ExactTitle))
    );
    assert_eq!(best_match("Add dark mode", "s", &[]), None);
}
