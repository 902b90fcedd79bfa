//! LoCoMo's conversations as `cargo xtask bench --recall` writes and asks them: one memory per
//! session observation and per dialog turn (with the dialog ids that are its evidence and the
//! time of its session), and the questions of categories 1–4 that have evidence.

use std::path::Path;

/// One memory to write: its name, text, evidence ids and when it is written (its session's
/// date and time, read as UTC, plus 10 s per memory before it in the session).
pub(crate) struct Item {
    pub name: String,
    pub text: String,
    pub evidence: Vec<String>,
    pub at: jiff::Timestamp,
}

/// A session's `session_N_date_time` (`1:56 pm on 8 May, 2023`) as a UTC instant.
fn session_time(text: &str) -> Option<jiff::Timestamp> {
    let parsed = jiff::fmt::strtime::parse("%I:%M %p on %d %B, %Y", text.trim()).ok()?;
    let at = parsed.to_datetime().ok()?;
    jiff::tz::TimeZone::UTC.to_timestamp(at).ok()
}

/// One question with evidence.
pub(crate) struct Question {
    pub text: String,
    pub category: u64,
    pub evidence: Vec<String>,
}

/// One conversation: its id, its two stores' memories and its questions.
pub(crate) struct Conversation {
    pub id: String,
    pub observations: Vec<Item>,
    pub turns: Vec<Item>,
    pub questions: Vec<Question>,
}

/// Dialog ids of a field: a string (`"D1:3"`, sometimes `"D8:6; D9:17"`) or a list of them.
fn dia_ids(value: &serde_json::Value) -> Vec<String> {
    let mut out = Vec::new();
    let mut push = |s: &str| {
        for part in s.split([';', ',', ' ']) {
            let part = part.trim();
            if !part.is_empty() {
                out.push(part.to_owned());
            }
        }
    };
    match value {
        serde_json::Value::String(s) => push(s),
        serde_json::Value::Array(items) => {
            for item in items {
                if let Some(s) = item.as_str() {
                    push(s);
                }
            }
        }
        _ => {}
    }
    out
}

/// The sessions of a conversation in order: `(n, key)` for every `session_N` list.
fn sessions(doc: &serde_json::Map<String, serde_json::Value>) -> Vec<u64> {
    let mut out: Vec<u64> = doc
        .iter()
        .filter(|(_, v)| v.is_array())
        .filter_map(|(k, _)| k.strip_prefix("session_")?.parse().ok())
        .collect();
    out.sort_unstable();
    out
}

/// Reads conversation `id` (`DIR/{id}.json`).
pub(crate) fn load_conversation(dir: &Path, id: &str) -> Result<Conversation, String> {
    let path = dir.join(format!("{id}.json"));
    let text = std::fs::read_to_string(&path).map_err(|e| format!("{}: {e}", path.display()))?;
    let doc: serde_json::Value =
        serde_json::from_str(&text).map_err(|e| format!("{}: {e}", path.display()))?;
    let doc = doc
        .as_object()
        .ok_or_else(|| format!("{}: not a JSON object", path.display()))?;
    let mut observations = Vec::new();
    let mut turns = Vec::new();
    for n in sessions(doc) {
        let key = format!("session_{n}_date_time");
        let start = doc
            .get(&key)
            .and_then(|v| v.as_str())
            .and_then(session_time)
            .ok_or_else(|| format!("{}: no readable {key}", path.display()))?;
        let at = |i: usize| start + jiff::SignedDuration::from_secs(10 * i as i64);
        if let Some(list) = doc.get(&format!("session_{n}")).and_then(|v| v.as_array()) {
            for (i, turn) in list.iter().enumerate() {
                let speaker = turn["speaker"].as_str().unwrap_or_default();
                let said = turn["text"].as_str().unwrap_or_default();
                turns.push(Item {
                    name: format!("Session {n} turn {}", i + 1),
                    text: format!("{speaker}: {said}"),
                    evidence: dia_ids(&turn["dia_id"]),
                    at: at(i),
                });
            }
        }
        if let Some(by_speaker) = doc
            .get(&format!("session_{n}_observation"))
            .and_then(|v| v.as_object())
        {
            let mut i = 0;
            for list in by_speaker.values() {
                for entry in list.as_array().into_iter().flatten() {
                    let Some(text) = entry.get(0).and_then(|t| t.as_str()) else {
                        continue;
                    };
                    i += 1;
                    observations.push(Item {
                        name: format!("Session {n} observation {i}"),
                        text: text.to_owned(),
                        evidence: entry.get(1).map(dia_ids).unwrap_or_default(),
                        at: at(i),
                    });
                }
            }
        }
    }
    let questions = doc
        .get("qa")
        .and_then(|v| v.as_array())
        .into_iter()
        .flatten()
        .filter_map(|q| {
            let category = q["category"].as_u64()?;
            let evidence = dia_ids(&q["evidence"]);
            ((1..=4).contains(&category) && !evidence.is_empty()).then(|| Question {
                text: q["question"].as_str().unwrap_or_default().to_owned(),
                category,
                evidence,
            })
        })
        .collect();
    Ok(Conversation {
        id: id.to_owned(),
        observations,
        turns,
        questions,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dia_ids_of_strings_and_lists() {
        assert_eq!(dia_ids(&serde_json::json!("D1:3")), ["D1:3"]);
        assert_eq!(
            dia_ids(&serde_json::json!("D8:6; D9:17")),
            ["D8:6", "D9:17"]
        );
        assert_eq!(
            dia_ids(&serde_json::json!(["D1:3", "D2:4"])),
            ["D1:3", "D2:4"]
        );
        assert!(dia_ids(&serde_json::json!(null)).is_empty());
    }

    #[test]
    fn session_times() {
        assert_eq!(
            session_time("1:56 pm on 8 May, 2023").map(|t| t.to_string()),
            Some("2023-05-08T13:56:00Z".to_owned())
        );
        assert_eq!(
            session_time("12:09 am on 13 September, 2023").map(|t| t.to_string()),
            Some("2023-09-13T00:09:00Z".to_owned())
        );
        assert_eq!(session_time("sometime"), None);
    }
}
