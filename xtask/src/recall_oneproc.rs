//! The path people take, for `cargo xtask bench --recall`: every memory written by its own
//! `elroy tools call create_memory` process and every question asked by its own `elroy tools
//! call examine_memories` process, with nothing in between (no embedding step: whatever the
//! writes' detached embedding worker has done by the time a question comes is what it ranks).
//!
//! Per conversation and store a fresh home is written through the release binary with the
//! built-in embedder configured (`ELROY_EMBEDDING_MODEL=builtin`), then each question is asked
//! at once with the embedder, then again keywords only (`ELROY_EMBEDDING_MODEL=`; the keyword
//! answer does not depend on vectors). Every process is timed; the memories still without a
//! vector are counted when the first question is asked, and the time from the last write until
//! every memory has its vector is measured after the last question.

use std::path::Path;
use std::process::Stdio;
use std::time::{Duration, Instant};

use crate::locomo::{Item, Question};
use crate::recall_bench::Outcome;

/// What one store of one conversation gave through the one-process path.
pub(crate) struct OneProcessRun {
    /// Outcomes with the built-in embedder, per question.
    pub builtin: Vec<Outcome>,
    /// Outcomes keywords only, per question.
    pub keywords: Vec<Outcome>,
    /// Whole-process time of each `create_memory`.
    pub writes: Vec<Duration>,
    /// Whole-process time of each `examine_memories` with the built-in embedder.
    pub asks_builtin: Vec<Duration>,
    /// Whole-process time of each `examine_memories` keywords only.
    pub asks_keywords: Vec<Duration>,
    /// Memories without a vector when the first question was asked.
    pub pending_at_first_question: i64,
    /// From the last write until every memory had its vector (`None`: not within 10 minutes).
    pub caught_up_after: Option<Duration>,
}

/// `elroy` for the home `home`, its streams set for capture, the embedder as `model` says
/// (`Some(dir)`: the built-in one over `dir`; `None`: keywords only).
fn elroy(binary: &Path, home: &Path, model: Option<&Path>) -> std::process::Command {
    let mut cmd = crate::bench::scrubbed_command(binary, home, home);
    match model {
        Some(dir) => cmd
            .env("ELROY_EMBEDDING_MODEL", "builtin")
            .env("ELROY_EMBEDDING_MODEL_PATH", dir),
        None => cmd.env("ELROY_EMBEDDING_MODEL", ""),
    };
    cmd.stdout(Stdio::piped());
    cmd
}

/// Runs `cmd` to its end: `(stdout, wall time)`; an error when it fails.
fn timed(mut cmd: std::process::Command, what: &str) -> Result<(String, Duration), String> {
    let t = Instant::now();
    let out = cmd.output().map_err(|e| format!("{what}: {e}"))?;
    let took = t.elapsed();
    if !out.status.success() {
        return Err(format!("{what} failed: {}", out.status));
    }
    Ok((String::from_utf8_lossy(&out.stdout).into_owned(), took))
}

/// The names of the memories an `examine_memories` answer lists, in order.
fn answer_names(text: &str) -> Vec<&str> {
    text.lines()
        .filter_map(|l| l.strip_prefix("## Memory: "))
        .map(str::trim)
        .collect()
}

/// `(active memories, of them without a vector of their current text)` in `home`'s `state.db`.
fn vector_counts(home: &Path) -> Result<(i64, i64), String> {
    let db = rusqlite::Connection::open(home.join("state.db")).map_err(|e| e.to_string())?;
    db.busy_timeout(Duration::from_secs(5))
        .map_err(|e| e.to_string())?;
    db.query_row(
        "SELECT count(*), count(*) - count(e.item_id) FROM memories m
         LEFT JOIN embeddings e ON e.kind = 'memory' AND e.item_id = m.id
           AND e.user_id = m.user_id AND e.text_md5 = m.text_md5
         WHERE m.is_active = 1",
        [],
        |r| Ok((r.get(0)?, r.get(1)?)),
    )
    .map_err(|e| e.to_string())
}

/// Writes `items` into a fresh `home` one process each, then asks `questions` one process each
/// (built-in embedder, then keywords only); see the module documentation.
///
/// # Errors
/// A message when a process cannot run or fails.
pub(crate) fn write_and_ask(
    binary: &Path,
    model: &Path,
    home: &Path,
    items: &[Item],
    questions: &[Question],
) -> Result<OneProcessRun, String> {
    if home.exists() {
        std::fs::remove_dir_all(home).map_err(|e| format!("{}: {e}", home.display()))?;
    }
    std::fs::create_dir_all(home).map_err(|e| format!("{}: {e}", home.display()))?;
    let mut writes = Vec::with_capacity(items.len());
    for item in items {
        let args = serde_json::json!({ "name": item.name, "text": item.text }).to_string();
        let mut cmd = elroy(binary, home, Some(model));
        // Written when its session took place, as a person's memory would be.
        cmd.env("ELROY_NOW", item.at.to_string());
        cmd.args(["tools", "call", "create_memory", "--args", &args]);
        writes.push(timed(cmd, "elroy tools call create_memory")?.1);
    }
    let last_write = Instant::now();
    let pending_at_first_question = vector_counts(home)?.1;
    let evidence: std::collections::HashMap<&str, &[String]> = items
        .iter()
        .map(|i| (i.name.as_str(), i.evidence.as_slice()))
        .collect();
    let ask = |model: Option<&Path>| -> Result<(Vec<Outcome>, Vec<Duration>), String> {
        let mut outcomes = Vec::with_capacity(questions.len());
        let mut times = Vec::with_capacity(questions.len());
        for q in questions {
            let args = serde_json::json!({ "question": q.text }).to_string();
            let mut cmd = elroy(binary, home, model);
            cmd.args(["tools", "call", "examine_memories", "--args", &args]);
            let (text, took) = timed(cmd, "elroy tools call examine_memories")?;
            times.push(took);
            let names = answer_names(&text);
            let hit = |k: usize| {
                names.iter().take(k).any(|n| {
                    evidence
                        .get(n)
                        .is_some_and(|ids| ids.iter().any(|id| q.evidence.contains(id)))
                })
            };
            outcomes.push(Outcome {
                hit2: hit(2),
                hit5: hit(5),
                empty: names.is_empty(),
            });
        }
        Ok((outcomes, times))
    };
    let (builtin, asks_builtin) = ask(Some(model))?;
    let (keywords, asks_keywords) = ask(None)?;
    let mut caught_up_after = None;
    while last_write.elapsed() < Duration::from_secs(600) {
        if vector_counts(home)?.1 == 0 {
            caught_up_after = Some(last_write.elapsed());
            break;
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    Ok(OneProcessRun {
        builtin,
        keywords,
        writes,
        asks_builtin,
        asks_keywords,
        pending_at_first_question,
        caught_up_after,
    })
}

/// `(median, p95)` of `times` (zero when empty).
pub(crate) fn median_p95(times: &[Duration]) -> (Duration, Duration) {
    if times.is_empty() {
        return (Duration::ZERO, Duration::ZERO);
    }
    let mut sorted = times.to_vec();
    sorted.sort();
    let median = sorted[sorted.len() / 2];
    let p95 = sorted[(sorted.len() * 95).div_ceil(100).saturating_sub(1)];
    (median, p95)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_of_an_answer_in_order() {
        let text = "## Memory: Session 1 turn 2\n\nA: hi\n\n*Source content: x*\n\n## Memory: Session 3 observation 1\n\nB\n\n## Due item: x";
        assert_eq!(
            answer_names(text),
            ["Session 1 turn 2", "Session 3 observation 1"]
        );
        assert!(answer_names("No relevant memories found for: q").is_empty());
    }

    #[test]
    fn median_and_p95() {
        let times: Vec<Duration> = (1..=20).map(Duration::from_millis).collect();
        assert_eq!(
            median_p95(&times),
            (Duration::from_millis(11), Duration::from_millis(19))
        );
    }
}
