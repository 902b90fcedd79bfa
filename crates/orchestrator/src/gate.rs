//! Whether a user message triggers recall (`docs/behaviour.md#whether-to-recall` step 2, the
//! heuristic skip).

const ACKNOWLEDGEMENTS: [&str; 11] = [
    "ok",
    "okay",
    "yes",
    "no",
    "thanks",
    "thank you",
    "sure",
    "got it",
    "k",
    "yep",
    "nope",
];
const GREETINGS: [&str; 8] = [
    "hi",
    "hello",
    "hey",
    "good morning",
    "good afternoon",
    "good evening",
    "goodbye",
    "bye",
];

/// Whether recall runs for `message`: trimmed, lower-cased, trailing `.`, `!`, `?`, `,` removed;
/// short acknowledgements and greetings skip it (We (D9): punctuation is stripped).
pub fn should_recall(message: &str) -> bool {
    let lowered = message.trim().to_lowercase();
    let normalised = lowered.trim_end_matches(['.', '!', '?', ',']);
    let short_ack = normalised.chars().count() < 10 && ACKNOWLEDGEMENTS.contains(&normalised);
    !(short_ack || GREETINGS.contains(&normalised))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn vectors_16_6() {
        for (message, expected) in [
            ("ok", false),
            ("Thanks", false),
            ("thank you!", false),
            ("good morning", false),
            ("hello there", true),
            ("ok, what about my dentist appointment?", true),
        ] {
            assert_eq!(should_recall(message), expected, "{message}");
        }
    }
}
