//! The agenda store on a home with 10,000 agenda files (every operation under 20 ms).
//!
//! Run: `cargo bench -p elroy-agenda --bench agenda`. The home is built once: 10,000 files in
//! Elroy's format (plain items over 100 dates, every fifth one a due item). "warm" benchmarks use a
//! store that has scanned the directory before (the normal case inside one elroy process: only
//! changed files are parsed again); `db_index_*` use a store over a database opened by the bench
//! (as the elroy runtime does); `cold_first_scan` is a fresh store (a new process) on the index
//! the others filled: it stats the 10,000 files and reads none.

#![allow(missing_docs, clippy::unwrap_used, clippy::expect_used)]

use std::path::{Path, PathBuf};
use std::sync::LazyLock;
use std::sync::atomic::{AtomicU64, Ordering};

use elroy_agenda::AgendaStore;
use jiff::Timestamp;
use jiff::civil::Date;
use jiff::tz::TimeZone;

const FILES: usize = 10_000;

struct BenchHome {
    _dir: tempfile::TempDir,
    path: PathBuf,
}

fn write_home(path: &Path) {
    let agenda = path.join("agenda");
    std::fs::create_dir_all(&agenda).unwrap();
    for i in 0..FILES {
        let day = 1 + (i % 28);
        let month = 1 + (i / 28) % 4;
        let text = if i % 5 == 0 {
            format!(
                "---\ncompleted: false\ndate: '2026-0{month}-{day:02}'\nname: Reminder number {i}\nstatus: created\ntrigger_context: when topic {i} comes up\ntrigger_datetime: 2026-0{month}-{day:02} 03:30:00+00:00\n---\n\nReminder body {i}"
            )
        } else {
            format!(
                "---\nchecklist:\n- completed: true\n  id: 1\n  text: First step of {i}\n- completed: false\n  id: 2\n  text: Second step\ncompleted: false\ndate: '2026-0{month}-{day:02}'\nname: Agenda item number {i}\nstatus: created\n---\n\nAgenda item number {i}\nSome details.\n\n## Updates\n\n- **2026-03-16 10:15**: A note"
            )
        };
        let name = if i % 5 == 0 {
            format!("Reminder_number_{i}.md")
        } else {
            format!("Agenda_item_number_{i}.md")
        };
        std::fs::write(agenda.join(name), text).unwrap();
    }
}

static HOME: LazyLock<BenchHome> = LazyLock::new(|| {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().to_path_buf();
    write_home(&path);
    BenchHome { _dir: dir, path }
});

static WARM: LazyLock<AgendaStore> = LazyLock::new(|| {
    let store = AgendaStore::open(&HOME.path, &HOME.path, "DEFAULT").unwrap();
    store.list_items(date()).unwrap();
    store
});

/// The same home with the id index in `state.db` (what the elroy runtime uses).
static WARM_DB: LazyLock<AgendaStore> = LazyLock::new(|| {
    let db = std::sync::Arc::new(elroy_db::Db::open(&HOME.path.join("state.db")).unwrap());
    let user = db.ensure_user("DEFAULT", Timestamp::UNIX_EPOCH).unwrap();
    let index = elroy_agenda::DbIndex::new(db, user);
    let store = AgendaStore::new(&HOME.path, &HOME.path, index);
    store.list_items(date()).unwrap();
    store
});

static COUNTER: AtomicU64 = AtomicU64::new(0);

fn date() -> Date {
    jiff::civil::date(2026, 2, 14)
}

fn now() -> jiff::ZonedDateTime {
    "2026-03-01T00:00:00Z"
        .parse::<Timestamp>()
        .unwrap()
        .to_zoned_datetime(TimeZone::UTC)
}

fn main() {
    divan::main();
}

#[divan::bench]
fn warm_list_agenda_items() -> usize {
    WARM.list_items(divan::black_box(date())).unwrap().len()
}

#[divan::bench]
fn warm_add_agenda_item() {
    let n = COUNTER.fetch_add(1, Ordering::Relaxed);
    WARM.add_item(&format!("Bench added {n}"), date(), Timestamp::UNIX_EPOCH)
        .unwrap();
}

#[divan::bench]
fn warm_add_agenda_item_update() {
    WARM.add_update("Agenda_item_number_9999", "progress", &now())
        .unwrap();
}

#[divan::bench]
fn warm_complete_checklist_item() {
    WARM.complete_checklist_item("Agenda_item_number_9998", 2)
        .unwrap();
}

#[divan::bench]
fn warm_print_due_item() -> usize {
    WARM.due_item("Reminder number 9995").unwrap().text.len()
}

#[divan::bench]
fn warm_due_now() -> usize {
    WARM.due_now(now().timestamp()).unwrap().len()
}

#[divan::bench]
fn db_index_list_agenda_items() -> usize {
    WARM_DB.list_items(divan::black_box(date())).unwrap().len()
}

#[divan::bench]
fn db_index_add_agenda_item() {
    let n = COUNTER.fetch_add(1, Ordering::Relaxed);
    WARM_DB
        .add_item(
            &format!("Bench db added {n}"),
            date(),
            Timestamp::UNIX_EPOCH,
        )
        .unwrap();
}

#[divan::bench]
fn db_index_complete_checklist_item() {
    WARM_DB
        .complete_checklist_item("Agenda_item_number_9997", 2)
        .unwrap();
}

#[divan::bench(sample_count = 5, sample_size = 1)]
fn cold_first_scan() -> usize {
    let store = AgendaStore::open(&HOME.path, &HOME.path, "DEFAULT").unwrap();
    store.list_items(date()).unwrap().len()
}

#[divan::bench]
fn baseline_read_dir() -> usize {
    std::fs::read_dir(HOME.path.join("agenda")).unwrap().count()
}

#[divan::bench]
fn baseline_read_dir_and_stat() -> u64 {
    std::fs::read_dir(HOME.path.join("agenda"))
        .unwrap()
        .map(|e| e.unwrap().metadata().unwrap().len())
        .sum()
}

/// One typical file: YAML parse and item building (what a first scan does 10,000 times).
#[divan::bench]
fn parse_one_item_file() -> usize {
    let text = "---\nchecklist:\n- completed: true\n  id: 1\n  text: First step\n- completed: false\n  id: 2\n  text: Second step\ncompleted: false\ndate: '2026-03-20'\nname: Agenda item number 1\nstatus: created\n---\n\nAgenda item number 1\nSome details.";
    let doc = elroy_markdown::Document::parse(divan::black_box(text), "agenda/X.md").unwrap();
    doc.front_matter.len()
}
