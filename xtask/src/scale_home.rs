//! `cargo xtask scale-home DIR`: writes a large synthetic elroy home, the home of the scale
//! benchmark (a home after years of use):
//!
//! - `--agenda N` agenda files (default 10,000) in Elroy's format, dated over one year from
//!   2026-01-01, each with a checklist of 1–4 entries, every third with progress notes in its
//!   `## Updates` section; `--due N` of them (default 500) are due items (a trigger time at 09:00 UTC
//!   on their date, every fifth also with a trigger context);
//! - `--memories N` memory files (default 100,000) with ids and natural-like text
//!   ([`elroy_testkit::corpus`]); with `--vocabulary small`, text drawn from the corpus' 74 topic
//!   words only, so a question's words each occur in some 15 % of all memories (the keyword leg's
//!   worst case);
//! - a versioned history (`.git`, as `elroy-history` keeps it) of `--commits N` commits (default
//!   10,000): an `initial import` of every file, then one `add_agenda_item_update` commit per later
//!   step, each adding a note to one agenda file, by `elroy <elroy@localhost>`, an hour apart. The
//!   working files equal the last commit and the git index is written with stat data, as a home
//!   elroy has used is.
//!
//! No `state.db` is written: the first elroy command indexes the files (benchmarks warm up first).
//! Everything is deterministic for given counts.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode, Stdio};

use elroy_testkit::corpus::{Rng, TOPIC_WORDS, memory_text};

/// The sizes of a scale home.
#[derive(Debug, Clone, Copy)]
pub struct ScaleSpec {
    /// Agenda files (plain and due).
    pub agenda: usize,
    /// Due items among them (at most `agenda`).
    pub due: usize,
    /// Memory files.
    pub memories: usize,
    /// Commits in the history (at least 1: the initial import).
    pub commits: usize,
    /// Memory text from the 74 topic words only (`--vocabulary small`).
    pub small_vocabulary: bool,
}

impl Default for ScaleSpec {
    fn default() -> Self {
        ScaleSpec {
            agenda: 10_000,
            due: 500,
            memories: 100_000,
            commits: 10_000,
            small_vocabulary: false,
        }
    }
}

const USAGE: &str =
    "usage: cargo xtask scale-home DIR [--agenda N] [--due N] [--memories N] [--commits N]
                              [--vocabulary natural|small]

Writes a synthetic elroy home into DIR (which must not exist or be empty):
  --agenda N     agenda files over one year, with checklists and updates (default 10000)
  --due N        due items among them, trigger times at 09:00 UTC (default 500)
  --memories N   memory files with natural-like text (default 100000)
  --commits N    commits in the versioned history, the first an initial import (default 10000)
  --vocabulary V natural (default): Zipf text over 20,000 words mixed with 74 topic words;
                 small: the 74 topic words only (a question's words match ~15% of the memories)";

/// Runs `cargo xtask scale-home`; `args` are the words after `scale-home`.
pub fn run(args: &[&str]) -> ExitCode {
    if args.iter().any(|a| matches!(*a, "-h" | "--help")) {
        println!("{USAGE}");
        return ExitCode::SUCCESS;
    }
    let (dir, spec) = match parse(args) {
        Ok(parsed) => parsed,
        Err(e) => {
            eprintln!("{e}\n\n{USAGE}");
            return ExitCode::from(2);
        }
    };
    let started = std::time::Instant::now();
    match write_home(&dir, &spec) {
        Ok(()) => {
            println!(
                "wrote {} agenda files ({} due), {} memories and {} commits into {} in {:.1} s",
                spec.agenda,
                spec.due.min(spec.agenda),
                spec.memories,
                spec.commits.max(1),
                dir.display(),
                started.elapsed().as_secs_f64()
            );
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("cargo xtask scale-home: {e}");
            ExitCode::FAILURE
        }
    }
}

fn parse(args: &[&str]) -> Result<(PathBuf, ScaleSpec), String> {
    let mut spec = ScaleSpec::default();
    let mut dir = None;
    let mut it = args.iter();
    while let Some(arg) = it.next() {
        let mut number = |name: &str| -> Result<usize, String> {
            it.next()
                .and_then(|v| v.replace('_', "").parse().ok())
                .ok_or_else(|| format!("{name} needs a whole number"))
        };
        match *arg {
            "--agenda" => spec.agenda = number("--agenda")?,
            "--due" => spec.due = number("--due")?,
            "--memories" => spec.memories = number("--memories")?,
            "--commits" => spec.commits = number("--commits")?,
            "--vocabulary" => match it.next().copied() {
                Some("small") => spec.small_vocabulary = true,
                Some("natural") => spec.small_vocabulary = false,
                _ => return Err("--vocabulary needs natural or small".into()),
            },
            other if other.starts_with('-') => return Err(format!("unknown option {other}")),
            other if dir.is_none() => dir = Some(PathBuf::from(other)),
            other => return Err(format!("unexpected argument {other}")),
        }
    }
    let dir = dir.ok_or("DIR is required")?;
    Ok((dir, spec))
}

/// One agenda file: its file name, its content before any history note, and the notes the
/// history adds to it in order.
struct AgendaFile {
    file: String,
    base: String,
    notes: Vec<String>,
}

impl AgendaFile {
    /// The content with the first `n` history notes.
    fn with_notes(&self, n: usize) -> String {
        if n == 0 {
            return self.base.clone();
        }
        let notes: Vec<&str> = self.notes[..n].iter().map(String::as_str).collect();
        if self.base.contains("\n## Updates\n\n") {
            format!("{}\n{}", self.base, notes.join("\n"))
        } else {
            format!("{}\n\n## Updates\n\n{}", self.base, notes.join("\n"))
        }
    }
}

fn io_err(path: &Path) -> impl Fn(std::io::Error) -> String + '_ {
    move |e| format!("{}: {e}", path.display())
}

/// Writes the home of `spec` into `dir` (created; it must be empty or missing).
///
/// # Errors
/// A message naming the file or git step that failed.
pub fn write_home(dir: &Path, spec: &ScaleSpec) -> Result<(), String> {
    if dir.exists()
        && std::fs::read_dir(dir)
            .map_err(io_err(dir))?
            .next()
            .is_some()
    {
        return Err(format!("{} is not empty", dir.display()));
    }
    let agenda_dir = dir.join("agenda");
    let memory_dir = dir.join("memories");
    for d in [&agenda_dir, &memory_dir] {
        std::fs::create_dir_all(d).map_err(io_err(d))?;
    }
    let mut rng = Rng(0x5EED_E1A0_2026_0001);
    let mut agenda = agenda_files(&mut rng, spec);
    // Which agenda file each later commit touches, and the note it adds.
    let later = spec.commits.max(1) - 1;
    let mut touched = Vec::with_capacity(later);
    for k in 0..later {
        let index = rng.below(agenda.len().max(1));
        if let Some(item) = agenda.get_mut(index) {
            let day = 1 + k % 28;
            item.notes.push(format!(
                "- **2026-{:02}-{day:02} {:02}:{:02}**: progress note {k} on {}",
                1 + (k / 28) % 12,
                k % 24,
                k % 60,
                TOPIC_WORDS[k % TOPIC_WORDS.len()]
            ));
            touched.push(index);
        }
    }
    for item in &agenda {
        let path = agenda_dir.join(&item.file);
        std::fs::write(&path, item.with_notes(item.notes.len())).map_err(io_err(&path))?;
    }
    let mut memories = BTreeMap::new();
    for i in 1..=spec.memories {
        let topic = TOPIC_WORDS[rng.below(TOPIC_WORDS.len())];
        let file = format!("Note_{i}_about_{topic}.md");
        let text = format!(
            "---\nid: {i}\n---\n\n{}",
            memory_text(&mut rng, i, spec.small_vocabulary)
        );
        let path = memory_dir.join(&file);
        std::fs::write(&path, &text).map_err(io_err(&path))?;
        memories.insert(file, text);
    }
    let gitignore = dir.join(".gitignore");
    std::fs::write(&gitignore, elroy_history::GITIGNORE).map_err(io_err(&gitignore))?;
    write_history(dir, &agenda, &touched, &memories)
}

fn agenda_files(rng: &mut Rng, spec: &ScaleSpec) -> Vec<AgendaFile> {
    let start = jiff::civil::date(2026, 1, 1);
    let due_every = if spec.due == 0 {
        usize::MAX
    } else {
        (spec.agenda / spec.due.min(spec.agenda)).max(1)
    };
    let mut due_left = spec.due.min(spec.agenda);
    let mut files = Vec::with_capacity(spec.agenda);
    for i in 0..spec.agenda {
        let offset = i64::try_from(i * 365 / spec.agenda.max(1)).unwrap_or(0);
        let date = start
            .checked_add(jiff::Span::new().days(offset))
            .unwrap_or(start);
        let topic = TOPIC_WORDS[rng.below(TOPIC_WORDS.len())];
        let other = TOPIC_WORDS[rng.below(TOPIC_WORDS.len())];
        let is_due = due_left > 0 && i % due_every == 0;
        let mut front = String::from("---\n");
        let name;
        if is_due {
            due_left -= 1;
            name = format!("Reminder {i} {topic}");
        } else {
            name = format!("Agenda item {i} {topic} and {other}");
            front.push_str("checklist:\n");
            for id in 1..=1 + rng.below(4) {
                front.push_str(&format!(
                    "- completed: {}\n  id: {id}\n  text: Step {id} for the {topic}\n",
                    rng.below(2) == 1
                ));
            }
        }
        front.push_str(&format!(
            "completed: false\ndate: '{date}'\nname: {name}\nstatus: created\n"
        ));
        if is_due {
            if i % 5 == 0 {
                front.push_str(&format!("trigger_context: when the {topic} comes up\n"));
            }
            front.push_str(&format!("trigger_datetime: {date} 09:00:00+00:00\n"));
        }
        front.push_str("---\n\n");
        let mut body = format!("{name}\nSome details about the {topic} and the {other}.");
        if i % 3 == 0 {
            body.push_str(&format!(
                "\n\n## Updates\n\n- **{date} 10:15**: started on the {topic}"
            ));
        }
        files.push(AgendaFile {
            file: format!(
                "{}.md",
                elroy_markdown::sanitize_filename(&name, "agenda_item")
            ),
            base: front + &body,
            notes: Vec::new(),
        });
    }
    files
}

/// The history: an initial import of every file, then one commit per entry of `touched`,
/// written by `git fast-import` (one pack with deltas, as `git gc` would leave a long-used home;
/// seconds instead of minutes), then the index is built with stat data (`git reset`).
fn write_history(
    dir: &Path,
    agenda: &[AgendaFile],
    touched: &[usize],
    memories: &BTreeMap<String, String>,
) -> Result<(), String> {
    git(dir, &["init", "--quiet", "--initial-branch=main"], None)?;
    let mut stream: Vec<u8> = Vec::new();
    let base_time: usize = 1_767_225_600; // 2026-01-01T00:00:00Z
    let commit = |stream: &mut Vec<u8>, k: usize, message: &str| {
        let who = format!(
            "{} <{}> {} +0000",
            elroy_history::COMMITTER_NAME,
            elroy_history::COMMITTER_EMAIL,
            base_time + k * 3600
        );
        stream.extend_from_slice(
            format!(
                "commit refs/heads/main\nauthor {who}\ncommitter {who}\ndata {}\n{message}\n",
                message.len()
            )
            .as_bytes(),
        );
    };
    let file = |stream: &mut Vec<u8>, path: &str, content: &str| {
        stream.extend_from_slice(
            format!("M 100644 inline {path}\ndata {}\n", content.len()).as_bytes(),
        );
        stream.extend_from_slice(content.as_bytes());
        stream.push(b'\n');
    };
    commit(&mut stream, 0, elroy_history::INITIAL_IMPORT);
    file(&mut stream, ".gitignore", elroy_history::GITIGNORE);
    for item in agenda {
        file(&mut stream, &format!("agenda/{}", item.file), &item.base);
    }
    for (name, text) in memories {
        file(&mut stream, &format!("memories/{name}"), text);
    }
    let mut notes_so_far = vec![0usize; agenda.len()];
    for (k, &index) in touched.iter().enumerate() {
        let item = &agenda[index];
        notes_so_far[index] += 1;
        let path = format!("agenda/{}", item.file);
        commit(
            &mut stream,
            k + 1,
            &format!("add_agenda_item_update: {path}"),
        );
        file(&mut stream, &path, &item.with_notes(notes_so_far[index]));
    }
    git(dir, &["fast-import", "--quiet"], Some(stream))?;
    // The index with stat data of the working files (as after elroy's own commits).
    git(dir, &["reset", "--quiet"], None)
}

/// Runs `git ARGS` in `dir`, feeding `input` on standard input.
fn git(dir: &Path, args: &[&str], input: Option<Vec<u8>>) -> Result<(), String> {
    use std::io::Write;
    let what = format!("git {}", args.join(" "));
    let mut child = Command::new("git")
        .args(args)
        .current_dir(dir)
        .stdin(if input.is_some() {
            Stdio::piped()
        } else {
            Stdio::null()
        })
        .stdout(Stdio::null())
        .spawn()
        .map_err(|e| format!("{what}: {e} (is git installed?)"))?;
    if let (Some(bytes), Some(mut stdin)) = (input, child.stdin.take()) {
        stdin
            .write_all(&bytes)
            .map_err(|e| format!("{what}: {e}"))?;
    }
    let status = child.wait().map_err(|e| format!("{what}: {e}"))?;
    if status.success() {
        Ok(())
    } else {
        Err(format!("{what} failed: {status}"))
    }
}
