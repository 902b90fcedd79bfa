//! Deterministic synthetic text for benchmarks and large test homes: a xorshift generator and
//! memory texts that mix 74 everyday topic words with a Zipf-distributed vocabulary of 20,000
//! pseudo-words, as natural text mixes a few frequent words with many rare ones.
//!
//! Used by the recall benchmark (`crates/memory/benches/recall.rs`) and by `cargo xtask
//! scale-home` (the home of `cargo xtask bench --scale`).

/// A deterministic xorshift64 generator (not for cryptography).
#[derive(Debug, Clone)]
pub struct Rng(pub u64);

impl Rng {
    /// The next 64-bit value. A zero seed stays zero: seed with a non-zero value.
    pub fn next_u64(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }

    /// A value in `0..n` (`n` > 0; 0 when `n` is 0).
    pub fn below(&mut self, n: usize) -> usize {
        if n == 0 {
            return 0;
        }
        (self.next_u64() % n as u64) as usize
    }
}

/// The everyday topic words mixed into every text (each in many memories: what a person asks
/// about).
pub const TOPIC_WORDS: &[&str] = &[
    "bicycle",
    "garden",
    "tomato",
    "invoice",
    "spreadsheet",
    "guitar",
    "piano",
    "marathon",
    "library",
    "recipe",
    "lasagna",
    "mortgage",
    "insurance",
    "printer",
    "laptop",
    "keyboard",
    "umbrella",
    "sunscreen",
    "passport",
    "violin",
    "chess",
    "tennis",
    "yoga",
    "painting",
    "sculpture",
    "novel",
    "podcast",
    "newsletter",
    "vaccine",
    "pharmacy",
    "plumber",
    "roof",
    "window",
    "carpet",
    "sofa",
    "lamp",
    "battery",
    "charger",
    "backpack",
    "tent",
    "kayak",
    "mountain",
    "river",
    "forest",
    "museum",
    "concert",
    "theatre",
    "ballet",
    "opera",
    "jazz",
    "salsa",
    "knitting",
    "pottery",
    "origami",
    "telescope",
    "microscope",
    "chemistry",
    "algebra",
    "history",
    "geography",
    "spanish",
    "french",
    "german",
    "portuguese",
    "swimming",
    "cycling",
    "dentist",
    "coffee",
    "kyoto",
    "birthday",
    "anniversary",
    "budget",
    "meeting",
    "deadline",
];

/// A pseudo-word for rank `r` of the Zipf vocabulary (`bada`, `cefi`, …), distinct per rank.
pub fn pseudo_word(mut r: usize) -> String {
    const LETTERS: &[u8] = b"bcdfghjklmnpqrstvwxz";
    const VOWELS: &[u8] = b"aeiou";
    let mut w = String::new();
    loop {
        w.push(LETTERS[r % LETTERS.len()] as char);
        r /= LETTERS.len();
        w.push(VOWELS[r % VOWELS.len()] as char);
        r /= VOWELS.len();
        if r == 0 {
            break w;
        }
    }
}

/// One memory text (8–19 words). `dense` uses the topic words only (each then in ~15 % of all
/// memories, a worst case for BM25); otherwise a quarter of the words are topic words and the
/// rest Zipf(1) over 20,000 ranks. `i` makes every text unique.
///
/// ```
/// use elroy_testkit::corpus::{Rng, TOPIC_WORDS, memory_text};
/// let (mut a, mut b) = (Rng(7), Rng(7));
/// let first: Vec<String> = (0..50).map(|i| memory_text(&mut a, i, false)).collect();
/// let again: Vec<String> = (0..50).map(|i| memory_text(&mut b, i, false)).collect();
/// assert_eq!(first, again, "deterministic for one seed");
/// let unique: std::collections::HashSet<&String> = first.iter().collect();
/// assert_eq!(unique.len(), 50);
/// let dense = memory_text(&mut a, 1, true);
/// let words = dense["The user mentioned ".len()..].split(" (note").next().unwrap_or_default();
/// assert!(words.split(' ').all(|w| TOPIC_WORDS.contains(&w)), "{dense}");
/// ```
pub fn memory_text(rng: &mut Rng, i: usize, dense: bool) -> String {
    let mut words: Vec<String> = Vec::new();
    let n = 8 + rng.below(12);
    for _ in 0..n {
        let x = rng.next_u64();
        if dense || x.is_multiple_of(4) {
            words.push(TOPIC_WORDS[(x >> 8) as usize % TOPIC_WORDS.len()].to_owned());
        } else {
            // Zipf(1) over 20,000 ranks by inverse transform of a log-uniform draw.
            let u = ((x >> 11) as f64) / ((1u64 << 53) as f64);
            let rank = (20_000f64.powf(u) as usize).saturating_sub(1);
            words.push(pseudo_word(rank));
        }
    }
    format!("The user mentioned {} (note {i}).", words.join(" "))
}
