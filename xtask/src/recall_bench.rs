//! `cargo xtask bench --recall --locomo DIR`: recall quality on LoCoMo (snap-research/locomo's
//! `data/locomo10.zip`, unpacked: DIR is its `locomo10_v2` folder of `{26,…,50}.json`) and the
//! whole-process time of `examine_memories`. Nothing is downloaded.
//!
//! For each of the ten conversations two homes are written through the library
//! ([`MemoryStore::create`], the path `create_memory` takes): one memory per session observation
//! (its text; the dialog ids it cites are its evidence) and one per dialog turn (`Speaker: text`,
//! its dialog id), each written at its session's date and time ([`crate::locomo`]). Each question
//! of categories 1–4 that has evidence is then asked through exactly what the `examine_memories`
//! tool runs ([`MemoryStore::sync_if_changed`], then [`MemoryStore::search_readable`] with
//! [`MemoryQuery::from_text`] and [`elroy_tools_memory::MAX_MEMORIES`]); a question is a hit at
//! k when one of the first k memories returned carries one of its evidence ids. Modes: keywords
//! only (no embedder) and the built-in embedder (`elroy_embed` over `--model DIR`).
//!
//! Homes and vectors persist under the work directory (default `target/recall-bench/`): a home
//! is rewritten only when its memories change, and every text the embedder sees is cached in
//! `vectors-<model>.bin` there, so a second run needs no model time. The cache is keyed by the
//! exact text, so cached vectors are the vectors the model gives.
//!
//! The in-process part needs the release build (the model is ~50× slower unoptimised): run from
//! a debug `cargo xtask`, the job re-runs itself with `cargo run --release -p xtask`.

use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::sync::Arc;
use std::time::{Duration, Instant};

use elroy_core::Embedder;
use elroy_memory::{MemoryQuery, MemoryStore, MemoryStoreOptions};

use crate::locomo::{Item, Question, load_conversation};
use crate::vector_cache::CachedEmbedder;

/// The development split: the only conversations fusion rules may be tuned on.
pub const DEV: [&str; 5] = ["26", "30", "41", "42", "43"];
/// The held-out split.
pub const HELD_OUT: [&str; 5] = ["44", "47", "48", "49", "50"];

/// The categories counted (5, adversarial, has no evidence to find).
const CATEGORIES: [(u64, &str); 4] = [
    (1, "1 multi-hop"),
    (2, "2 temporal"),
    (3, "3 open-domain"),
    (4, "4 single-hop"),
];

/// Bumped when the way memories are written changes (homes are then rewritten).
const HOME_FORMAT: &str = "recall-bench-2";

/// The conversation whose homes the whole-process timing uses (680 dialog turns).
const TIMING_CONVERSATION: &str = "43";

/// The usage line of `--recall` (after `cargo xtask bench`'s own).
pub const SYNOPSIS: &str =
    "       cargo xtask bench --recall --locomo DIR [--model DIR] [--work DIR] [--split dev|all]
                         [--timing-questions N] [--binary PATH] [--library-only]";

/// The options of `--recall`, for `cargo xtask bench --help`.
pub const USAGE: &str =
    "  --recall             recall hit@2/hit@5 on LoCoMo per store (session observations, dialog
                       turns) and category, keywords only and with the built-in embedder, and the
                       whole-process time of `elroy tools call examine_memories`
  --locomo DIR         the unpacked locomo10_v2 folder ({26,30,41,42,43,44,47,48,49,50}.json) of
                       data/locomo10.zip in github.com/snap-research/locomo (nothing is downloaded)
  --model DIR          the built-in embedder's model directory (default ELROY_EMBEDDING_MODEL_PATH,
                       else $ELROY_HOME/models/all-MiniLM-L6-v2, else ~/.elroy/models/…); without
                       it the embedder's rows say SKIPPED
  --work DIR           homes and cached vectors (default target/recall-bench; reused while the
                       memories are unchanged)
  --split dev          print the development split (26, 30, 41, 42, 43) only: what tuning looks at
  --timing-questions N questions timed per store and mode (default 100; 0 skips the timing)
  --library-only       skip the one-process rows (each memory written and each question asked by
                       its own release `elroy tools call` process, nothing in between: the
                       default); keep the library's rows (keywords, built-in pre-embedded)";

/// Options of `--recall`.
#[derive(Debug, Clone, Default)]
pub struct Options {
    /// `--locomo DIR`: the unpacked `locomo10_v2` folder.
    pub locomo: Option<PathBuf>,
    /// `--model DIR`: the built-in embedder's model directory.
    pub model: Option<PathBuf>,
    /// `--work DIR`: homes and cached vectors.
    pub work: Option<PathBuf>,
    /// `--split dev`: only the development split is read and printed.
    pub dev_only: bool,
    /// `--timing-questions N`: questions timed per store and mode (`None`: 100).
    pub timing_questions: Option<usize>,
    /// `--library-only`: no one-process rows (the library's rows alone, for quick tuning).
    pub library_only: bool,
}

/// A store of one conversation: observations or dialog turns.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum StoreKind {
    Observations,
    Turns,
}

impl StoreKind {
    const ALL: [StoreKind; 2] = [StoreKind::Observations, StoreKind::Turns];

    fn label(self) -> &'static str {
        match self {
            StoreKind::Observations => "observations",
            StoreKind::Turns => "dialog turns",
        }
    }

    fn dir(self) -> &'static str {
        match self {
            StoreKind::Observations => "observations",
            StoreKind::Turns => "turns",
        }
    }
}

/// The model directory: `--model`, else as elroy's configuration defaults it.
fn model_dir(options: &Options) -> PathBuf {
    if let Some(dir) = &options.model {
        return dir.clone();
    }
    if let Some(dir) = std::env::var_os("ELROY_EMBEDDING_MODEL_PATH") {
        return PathBuf::from(dir);
    }
    let home = std::env::var_os("ELROY_HOME")
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".elroy")))
        .unwrap_or_else(|| PathBuf::from(".elroy"));
    home.join("models").join(elroy_embed::DEFAULT_MODEL)
}

/// The 1, 5 and 15 minute load averages (`/proc/loadavg`), `n/a` elsewhere.
fn load_average() -> String {
    std::fs::read_to_string("/proc/loadavg")
        .ok()
        .map(|s| s.split_whitespace().take(3).collect::<Vec<_>>().join(" "))
        .unwrap_or_else(|| "n/a".into())
}

fn now() -> jiff::Timestamp {
    jiff::Timestamp::now()
}

/// Opens the DEFAULT user's memory store of `home` (`state.db`, `memories/`), as elroy does.
fn open_store(home: &Path, embedder: Option<Arc<dyn Embedder>>) -> Result<MemoryStore, String> {
    let db = Arc::new(
        elroy_db::Db::open(&home.join("state.db"))
            .map_err(|e| format!("{}: {e}", home.display()))?,
    );
    let user_id = db
        .ensure_user("DEFAULT", now())
        .map_err(|e| e.to_string())?;
    let (store, _) = MemoryStore::open(
        db,
        MemoryStoreOptions {
            elroy_home: home.to_path_buf(),
            memory_dir: home.join("memories"),
            elroy_db_path: None,
            user_id,
            embedder,
            // elroy's default: 1 - l2_memory_relevance_distance_threshold / 2.
            cosine_threshold: 0.3,
        },
        now(),
    )
    .map_err(|e| e.to_string())?;
    Ok(store)
}

/// The digest of what a home holds: rewritten when it differs.
fn items_digest(items: &[Item]) -> String {
    let mut text = String::from(HOME_FORMAT);
    for item in items {
        text.push('\u{1}');
        text.push_str(&item.name);
        text.push('\u{2}');
        text.push_str(&item.text);
        text.push('\u{3}');
        text.push_str(&item.at.to_string());
    }
    elroy_memory::md5_hex(&text)
}

/// Writes (or reuses) the home of one store of one conversation, with vectors when `embedder`
/// is given. Returns the home's path.
fn ensure_home(
    work: &Path,
    conversation: &str,
    kind: StoreKind,
    items: &[Item],
    embedder: Option<&Arc<CachedEmbedder>>,
) -> Result<PathBuf, String> {
    let home = work.join(format!("{}-{conversation}", kind.dir()));
    let stamp = home.join("inputs.md5");
    let digest = items_digest(items);
    let fresh = std::fs::read_to_string(&stamp).is_ok_and(|s| s.trim() == digest);
    if !fresh {
        if home.exists() {
            std::fs::remove_dir_all(&home).map_err(|e| format!("{}: {e}", home.display()))?;
        }
        std::fs::create_dir_all(&home).map_err(|e| format!("{}: {e}", home.display()))?;
        let dyn_embedder = embedder.map(|e| Arc::clone(e) as Arc<dyn Embedder>);
        let store = open_store(&home, dyn_embedder)?;
        for item in items {
            store
                .create(&item.name, &item.text, &[], item.at)
                .map_err(|e| format!("{}: {e}", home.display()))?;
        }
        std::fs::write(&stamp, &digest).map_err(|e| format!("{}: {e}", stamp.display()))?;
    }
    if let Some(embedder) = embedder {
        // Vectors missing from a home written without the model (at most 32 per call).
        let store = open_store(&home, Some(Arc::clone(embedder) as Arc<dyn Embedder>))?;
        while store.embed_pending(None) > 0 {}
    }
    Ok(home)
}

/// Hits of one question: whether one of the first 2 / 5 memories carries evidence, and whether
/// nothing was found.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct Outcome {
    pub hit2: bool,
    pub hit5: bool,
    pub empty: bool,
}

/// Asks every question of a conversation on one home as `examine_memories` does.
fn ask_all(
    home: &Path,
    items: &[Item],
    questions: &[Question],
    embedder: Option<Arc<dyn Embedder>>,
) -> Result<Vec<Outcome>, String> {
    let store = open_store(home, embedder)?;
    let evidence: HashMap<&str, &[String]> = items
        .iter()
        .map(|i| (i.name.as_str(), i.evidence.as_slice()))
        .collect();
    let mut out = Vec::with_capacity(questions.len());
    for q in questions {
        // What `examine_memories` runs (crates/tools/memory/src/examine.rs).
        let _ = store.sync_if_changed(now());
        let found = store
            .search_readable(
                &MemoryQuery::from_text(&q.text),
                elroy_tools_memory::MAX_MEMORIES,
            )
            .map_err(|e| e.to_string())?;
        let hit = |k: usize| {
            found.hits.iter().take(k).any(|(m, _)| {
                evidence
                    .get(m.name.as_str())
                    .is_some_and(|ids| ids.iter().any(|id| q.evidence.contains(id)))
            })
        };
        out.push(Outcome {
            hit2: hit(2),
            hit5: hit(5),
            empty: found.hits.is_empty(),
        });
    }
    Ok(out)
}

/// Counts of one cell: questions, hits at 2 and 5, empty answers.
#[derive(Debug, Clone, Copy, Default)]
struct Tally {
    n: usize,
    hit2: usize,
    hit5: usize,
    empty: usize,
}

impl Tally {
    fn add(&mut self, o: Outcome) {
        self.n += 1;
        self.hit2 += usize::from(o.hit2);
        self.hit5 += usize::from(o.hit5);
        self.empty += usize::from(o.empty);
    }

    fn pct(part: usize, n: usize) -> String {
        if n == 0 {
            "-".into()
        } else {
            format!("{:.1}", 100.0 * part as f64 / n as f64)
        }
    }
}

/// `(mode, store, conversation) → outcomes per question`.
type Results = BTreeMap<(&'static str, &'static str, String), Vec<(u64, Outcome)>>;

fn print_split(results: &Results, modes: &[&'static str], label: &str, ids: &[&str]) {
    println!("\n== {label} ({})", ids.join(", "));
    for mode in modes {
        println!("\n{mode}");
        println!(
            "{:<16} {:>5} {:>11} {:>11} {:>7} {:>11} {:>11} {:>7}",
            "category",
            "n",
            "obs hit@2",
            "obs hit@5",
            "obs 0",
            "turns hit@2",
            "turns hit@5",
            "turns 0"
        );
        let mut rows: Vec<(String, Option<u64>)> = CATEGORIES
            .iter()
            .map(|(c, l)| ((*l).to_owned(), Some(*c)))
            .collect();
        rows.push(("all".into(), None));
        for (row, category) in rows {
            let mut cells = Vec::new();
            for kind in StoreKind::ALL {
                let mut t = Tally::default();
                for id in ids {
                    let Some(list) = results.get(&(*mode, kind.label(), (*id).to_owned())) else {
                        continue;
                    };
                    for (c, o) in list {
                        if category.is_none_or(|want| want == *c) {
                            t.add(*o);
                        }
                    }
                }
                cells.push(t);
            }
            if cells[0].n == 0 && cells[1].n == 0 {
                println!("{row:<16} SKIPPED");
                continue;
            }
            println!(
                "{:<16} {:>5} {:>11} {:>11} {:>7} {:>11} {:>11} {:>7}",
                row,
                cells[0].n.max(cells[1].n),
                Tally::pct(cells[0].hit2, cells[0].n),
                Tally::pct(cells[0].hit5, cells[0].n),
                cells[0].empty,
                Tally::pct(cells[1].hit2, cells[1].n),
                Tally::pct(cells[1].hit5, cells[1].n),
                cells[1].empty,
            );
        }
    }
}

/// Runs `--recall`. `binary` is the release elroy for the timing (`None`: no timing).
///
/// # Errors
/// A message when the data cannot be read or a home cannot be written.
pub fn run(root: &Path, options: &Options, binary: Option<&Path>) -> Result<(), String> {
    let started = Instant::now();
    let locomo = options
        .locomo
        .clone()
        .ok_or("--recall needs --locomo DIR (the unpacked locomo10_v2 folder)")?;
    let work = options
        .work
        .clone()
        .unwrap_or_else(|| root.join("target").join("recall-bench"));
    std::fs::create_dir_all(&work).map_err(|e| format!("{}: {e}", work.display()))?;
    let model = model_dir(options);
    let embedder = Arc::new(CachedEmbedder::open(&model, &work));
    let with_model = match embedder.available() {
        Ok(()) => true,
        Err(e) => {
            println!("built-in embedder: SKIPPED ({e})");
            false
        }
    };
    let ids: Vec<&str> = if options.dev_only {
        DEV.to_vec()
    } else {
        DEV.iter().chain(&HELD_OUT).copied().collect()
    };
    let mut conversations = Vec::new();
    for id in &ids {
        conversations.push(load_conversation(&locomo, id)?);
    }
    println!(
        "LoCoMo from {}: {} conversations, {} questions (categories 1–4 with evidence), {} observations, {} dialog turns",
        locomo.display(),
        conversations.len(),
        conversations
            .iter()
            .map(|c| c.questions.len())
            .sum::<usize>(),
        conversations
            .iter()
            .map(|c| c.observations.len())
            .sum::<usize>(),
        conversations.iter().map(|c| c.turns.len()).sum::<usize>(),
    );
    println!(
        "work directory: {} (homes and cached vectors)",
        work.display()
    );
    println!("model: {} ({})", model.display(), embedder.name);
    println!("load average: {}", load_average());

    let keywords = "keywords only (library)";
    let builtin = "built-in embedder, pre-embedded (library)";
    let keywords_oneproc = "keywords only, one process per call";
    let builtin_oneproc = "built-in embedder, one process per call";
    let mut modes = vec![keywords];
    if with_model {
        modes.push(builtin);
    }
    let one_process = match binary {
        Some(binary) if with_model && !options.library_only => {
            modes.push(keywords_oneproc);
            modes.push(builtin_oneproc);
            Some(binary)
        }
        _ => None,
    };
    let mut oneproc_runs: Vec<(String, StoreKind, crate::recall_oneproc::OneProcessRun)> =
        Vec::new();
    let mut results: Results = BTreeMap::new();
    let mut homes = HashMap::new();
    for c in &conversations {
        for kind in StoreKind::ALL {
            let items = match kind {
                StoreKind::Observations => &c.observations,
                StoreKind::Turns => &c.turns,
            };
            let t = Instant::now();
            let home = ensure_home(&work, &c.id, kind, items, with_model.then_some(&embedder))?;
            let built = t.elapsed();
            for mode in &modes {
                let e = (*mode == builtin).then(|| Arc::clone(&embedder) as Arc<dyn Embedder>);
                let outcomes = ask_all(&home, items, &c.questions, e)?;
                results.insert(
                    (*mode, kind.label(), c.id.clone()),
                    c.questions
                        .iter()
                        .map(|q| q.category)
                        .zip(outcomes)
                        .collect(),
                );
            }
            if let Some(binary) = one_process {
                let t = Instant::now();
                let oneproc_home = work.join(format!("oneproc-{}-{}", kind.dir(), c.id));
                let run = crate::recall_oneproc::write_and_ask(
                    binary,
                    &model,
                    &oneproc_home,
                    items,
                    &c.questions,
                )?;
                for (mode, outcomes) in [
                    (builtin_oneproc, &run.builtin),
                    (keywords_oneproc, &run.keywords),
                ] {
                    let categories = c.questions.iter().map(|q| q.category);
                    results.insert(
                        (mode, kind.label(), c.id.clone()),
                        categories.zip(outcomes.iter().copied()).collect(),
                    );
                }
                println!(
                    "   {} {}: one process per call in {:.0} s ({} without a vector at the first question)",
                    c.id,
                    kind.label(),
                    t.elapsed().as_secs_f64(),
                    run.pending_at_first_question
                );
                oneproc_runs.push((c.id.clone(), kind, run));
            }
            if built > Duration::from_secs(2) {
                println!(
                    "   {} {}: home ready in {:.0} s",
                    c.id,
                    kind.label(),
                    built.as_secs_f64()
                );
            }
            homes.insert((c.id.clone(), kind.label()), home);
        }
        embedder.save()?;
    }
    if !with_model {
        println!(
            "\nbuilt-in embedder: SKIPPED (no model at {})",
            model.display()
        );
    }
    print_split(&results, &modes, "dev split", &DEV);
    if !options.dev_only {
        print_split(&results, &modes, "held-out split", &HELD_OUT);
        let all: Vec<&str> = DEV.iter().chain(&HELD_OUT).copied().collect();
        print_split(&results, &modes, "all ten", &all);
    }

    print_oneproc_times(&oneproc_runs);

    let sample = options.timing_questions.unwrap_or(100);
    if let (Some(binary), true) = (binary, sample > 0) {
        let Some(c) = conversations.iter().find(|c| c.id == TIMING_CONVERSATION) else {
            return Ok(());
        };
        println!(
            "\n== whole-process `elroy tools call examine_memories` (release binary, conversation {}, {} questions per store and mode)",
            c.id,
            sample.min(c.questions.len())
        );
        println!(
            "{:<14} {:>9} {:<18} {:>9} {:>9}",
            "store", "memories", "mode", "median", "p95"
        );
        for kind in StoreKind::ALL {
            let Some(home) = homes.get(&(c.id.clone(), kind.label())) else {
                continue;
            };
            let count = match kind {
                StoreKind::Observations => c.observations.len(),
                StoreKind::Turns => c.turns.len(),
            };
            for mode in modes.iter().filter(|m| **m == keywords || **m == builtin) {
                let model = (*mode == builtin).then_some(model.as_path());
                let (median, p95) = time_examine(binary, home, model, &c.questions, sample)?;
                println!(
                    "{:<14} {:>9} {:<18} {:>6.1} ms {:>6.1} ms",
                    kind.label(),
                    count,
                    mode,
                    median.as_secs_f64() * 1e3,
                    p95.as_secs_f64() * 1e3
                );
            }
            if !with_model {
                println!("{:<14} {:>9} {:<18} SKIPPED", kind.label(), count, builtin);
            }
        }
    }
    println!(
        "\n== done in {:.0} s (load average {})",
        started.elapsed().as_secs_f64(),
        load_average()
    );
    Ok(())
}

/// Median and p95 wall time of `elroy tools call examine_memories` over `sample` questions
/// (spread over the conversation's list), after 2 warm-up calls, on `home` (keywords only when
/// `model` is `None`, else the built-in embedder over `model`).
fn time_examine(
    binary: &Path,
    home: &Path,
    model: Option<&Path>,
    questions: &[Question],
    sample: usize,
) -> Result<(Duration, Duration), String> {
    let sample = sample.min(questions.len()).max(1);
    let picked: Vec<&Question> = (0..sample)
        .map(|i| &questions[i * questions.len() / sample])
        .collect();
    let mut times = Vec::with_capacity(sample);
    for (i, q) in picked.iter().take(2).chain(&picked).enumerate() {
        let args = serde_json::json!({ "question": q.text }).to_string();
        let mut cmd = crate::bench::scrubbed_command(binary, home, home);
        cmd.args(["tools", "call", "examine_memories", "--args", &args])
            .stdout(Stdio::null());
        match model {
            Some(dir) => cmd
                .env("ELROY_EMBEDDING_MODEL", "builtin")
                .env("ELROY_EMBEDDING_MODEL_PATH", dir),
            None => cmd.env("ELROY_EMBEDDING_MODEL", ""),
        };
        let t = Instant::now();
        let status = cmd
            .status()
            .map_err(|e| format!("{}: {e}", binary.display()))?;
        let took = t.elapsed();
        if !status.success() {
            return Err(format!(
                "elroy tools call examine_memories failed on {}: {status}",
                home.display()
            ));
        }
        if i >= 2 {
            times.push(took);
        }
    }
    times.sort();
    let median = times[times.len() / 2];
    let p95 = times[(times.len() * 95).div_ceil(100).saturating_sub(1)];
    Ok((median, p95))
}

/// The one-process path's whole-process times and how fast the vectors followed the writes,
/// per store over every conversation run.
fn print_oneproc_times(runs: &[(String, StoreKind, crate::recall_oneproc::OneProcessRun)]) {
    if runs.is_empty() {
        return;
    }
    println!(
        "\n== one process per call: whole-process times (release binary; median / p95) and the vectors"
    );
    println!(
        "{:<14} {:>9} {:>19} {:>22} {:>22} {:>10} {:>16}",
        "store",
        "homes",
        "create_memory",
        "examine (built-in)",
        "examine (keywords)",
        "no vector",
        "all embedded"
    );
    for kind in StoreKind::ALL {
        let of_kind: Vec<_> = runs.iter().filter(|(_, k, _)| *k == kind).collect();
        if of_kind.is_empty() {
            continue;
        }
        let all = |f: fn(&crate::recall_oneproc::OneProcessRun) -> &Vec<Duration>| {
            of_kind
                .iter()
                .flat_map(|(_, _, r)| f(r).iter().copied())
                .collect::<Vec<_>>()
        };
        let fmt = |times: Vec<Duration>| {
            let (m, p) = crate::recall_oneproc::median_p95(&times);
            format!(
                "{:.1} / {:.1} ms",
                m.as_secs_f64() * 1e3,
                p.as_secs_f64() * 1e3
            )
        };
        let pending: i64 = of_kind
            .iter()
            .map(|(_, _, r)| r.pending_at_first_question)
            .sum();
        let caught_up = of_kind
            .iter()
            .map(|(_, _, r)| r.caught_up_after)
            .try_fold(Duration::ZERO, |max, d| d.map(|d| max.max(d)))
            .map_or_else(
                || "not in 10 min".to_owned(),
                |d| format!("≤ {:.1} s", d.as_secs_f64()),
            );
        println!(
            "{:<14} {:>9} {:>19} {:>22} {:>22} {:>10} {:>16}",
            kind.label(),
            of_kind.len(),
            fmt(all(|r| &r.writes)),
            fmt(all(|r| &r.asks_builtin)),
            fmt(all(|r| &r.asks_keywords)),
            pending,
            caught_up
        );
    }
    println!(
        "(\"no vector\": memories without one when the first question was asked, summed over the homes; \"all embedded\": the longest wait from a home's last write until every memory had its vector, measured after its last question)"
    );
}
