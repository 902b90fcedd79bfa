//! The versioned home on a home of 1,000 agenda files: what it adds to every elroy start and to
//! every tool call.
//!
//! Run: `cargo bench -p elroy-history --bench history`. `start_unchanged` is the check every start
//! makes (one status walk comparing stat data with `.git/index`, no commit);
//! `call_without_change` is the recorder around a tool call that wrote nothing (no git access);
//! `call_adding_one_file` commits one new file (the paths from the write journal, no status
//! walk); `initial_import` is the first start of such a home.

#![allow(missing_docs, clippy::unwrap_used, clippy::expect_used)]

use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use elroy_core::{NoArgs, ToolContext, ToolError, ToolOutput, ToolRegistry, TypedTool, UserInfo};
use elroy_history::{Recorder, VersionedHome};
use jiff::Timestamp;

const FILES: usize = 1_000;

fn now() -> Timestamp {
    "2026-03-16T08:30:00Z".parse().unwrap()
}

fn write_home(root: &Path) {
    let agenda = root.join("agenda");
    std::fs::create_dir_all(&agenda).unwrap();
    for i in 0..FILES {
        std::fs::write(
            agenda.join(format!("Item_{i}.md")),
            format!(
                "---\ncompleted: false\ndate: '2026-03-{:02}'\nname: Item {i}\nstatus: created\n---\n\nItem {i}: water the plants.\n",
                i % 28 + 1
            ),
        )
        .unwrap();
    }
}

fn versioned_home() -> (tempfile::TempDir, VersionedHome) {
    let dir = tempfile::tempdir().unwrap();
    write_home(dir.path());
    let home = VersionedHome::start(dir.path(), now()).unwrap();
    (dir, home)
}

#[divan::bench(sample_count = 10)]
fn initial_import(bencher: divan::Bencher) {
    bencher
        .with_inputs(|| {
            let dir = tempfile::tempdir().unwrap();
            write_home(dir.path());
            dir
        })
        .bench_values(|dir| {
            VersionedHome::start(dir.path(), now()).unwrap();
            dir
        });
}

#[divan::bench]
fn start_unchanged(bencher: divan::Bencher) {
    let (_dir, home) = versioned_home();
    bencher.bench(|| VersionedHome::start(home.root(), now()).unwrap());
}

static COUNTER: AtomicU64 = AtomicU64::new(0);

/// Writes one new agenda file per call when `write` is set.
struct Touch {
    write: bool,
}

impl TypedTool for Touch {
    type Args = NoArgs;
    const NAME: &'static str = "touch";
    const EFFECT: elroy_core::ToolEffect = elroy_core::ToolEffect::HOME_OVERWRITES;
    const DESCRIPTION: &'static str = "Writes a file.";
    fn run(&self, ctx: &ToolContext, _: NoArgs) -> Result<ToolOutput, ToolError> {
        if self.write {
            let n = COUNTER.fetch_add(1, Ordering::Relaxed);
            // Through elroy-markdown, as the stores write: its journal names the path.
            elroy_markdown::write_atomic(
                &ctx.user.elroy_home.join(format!("agenda/New_{n}.md")),
                b"new\n",
                "new",
            )
            .unwrap();
        }
        Ok(ToolOutput::text("ok"))
    }
}

fn call(bencher: divan::Bencher, write: bool) {
    let (_dir, home) = versioned_home();
    let mut registry = ToolRegistry::new();
    registry.register(elroy_core::sync_tool(Touch { write }));
    registry.set_call_observer(Arc::new(Recorder::new(home.clone())));
    let mut ctx = ToolContext::new(UserInfo {
        id: None,
        token: "DEFAULT".into(),
        elroy_home: home.root().to_path_buf(),
        user_home: home.root().to_path_buf(),
    });
    ctx.time = elroy_core::TimeContext::fixed(now(), jiff::tz::TimeZone::UTC);
    bencher.bench(|| {
        let mut f = std::pin::pin!(registry.invoke("touch", None, &ctx));
        let mut cx = std::task::Context::from_waker(std::task::Waker::noop());
        assert!(f.as_mut().poll(&mut cx).is_ready());
    });
}

#[divan::bench(sample_count = 20)]
fn call_without_change(bencher: divan::Bencher) {
    call(bencher, false);
}

#[divan::bench(sample_count = 20)]
fn call_adding_one_file(bencher: divan::Bencher) {
    call(bencher, true);
}

fn main() {
    divan::main();
}
