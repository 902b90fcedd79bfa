//! The recorder as the registry's call observer: what a call changed is committed under the
//! tool's name; hand edits are never taken for the tool's.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::path::Path;
use std::sync::{Arc, Mutex};

use elroy_core::{
    NoArgs, TimeContext, ToolContext, ToolError, ToolOutput, ToolRegistry, TypedTool, UserInfo,
    sync_tool,
};
use elroy_history::{Recorder, VersionedHome};

/// Files to write (`None`: delete), relative to the home.
type Files = Vec<(String, Option<Vec<u8>>)>;

/// Writes (or deletes) the files it is given before each call.
#[derive(Default, Clone)]
struct Put(Arc<Mutex<Files>>);

impl TypedTool for Put {
    type Args = NoArgs;
    const NAME: &'static str = "put_files";
    const EFFECT: elroy_core::ToolEffect = elroy_core::ToolEffect::HOME_OVERWRITES;
    const DESCRIPTION: &'static str = "Writes files.";
    fn run(&self, ctx: &ToolContext, _: NoArgs) -> Result<ToolOutput, ToolError> {
        let mut fail = false;
        for (path, bytes) in self.0.lock().unwrap().drain(..) {
            if path == "FAIL" {
                fail = true;
                continue;
            }
            // `HAND:path`: a hand edit made while the call runs (not through elroy-markdown).
            if let Some(path) = path.strip_prefix("HAND:") {
                std::fs::write(ctx.user.elroy_home.join(path), bytes.unwrap_or_default()).unwrap();
                continue;
            }
            let file = ctx.user.elroy_home.join(&path);
            // As the stores do: through elroy-markdown, whose write journal tells the recorder
            // which paths the call changed.
            match bytes {
                Some(bytes) => elroy_markdown::write_atomic(&file, &bytes, &path).unwrap(),
                None => elroy_markdown::remove_file(&file, &path).unwrap(),
            }
        }
        if fail {
            return Err(ToolError::new("asked to fail"));
        }
        Ok(ToolOutput::text("done"))
    }
}

struct Setup {
    _dir: tempfile::TempDir,
    home: VersionedHome,
    registry: ToolRegistry,
    put: Put,
    ctx: ToolContext,
}

impl Setup {
    fn new() -> Self {
        let dir = tempfile::tempdir().unwrap();
        let now = "2026-03-16T08:30:00Z".parse().unwrap();
        let home = VersionedHome::start(dir.path(), now).unwrap();
        let put = Put::default();
        let mut registry = ToolRegistry::new();
        registry.register(sync_tool(put.clone()));
        registry.set_call_observer(Arc::new(Recorder::new(home.clone())));
        let mut ctx = ToolContext::new(UserInfo {
            id: None,
            token: "DEFAULT".into(),
            elroy_home: dir.path().to_path_buf(),
            user_home: dir.path().to_path_buf(),
        });
        ctx.time = TimeContext::fixed(now, jiff::tz::TimeZone::UTC);
        Setup {
            _dir: dir,
            home,
            registry,
            put,
            ctx,
        }
    }

    fn root(&self) -> &Path {
        self.home.root()
    }

    fn call(&self, files: &[(&str, Option<&[u8]>)]) -> elroy_core::ToolResult {
        *self.put.0.lock().unwrap() = files
            .iter()
            .map(|(p, b)| ((*p).to_owned(), b.map(<[u8]>::to_vec)))
            .collect();
        block_on(self.registry.invoke("put_files", None, &self.ctx))
    }

    fn summaries(&self) -> Vec<String> {
        self.home
            .history(None)
            .unwrap()
            .into_iter()
            .map(|c| c.summary)
            .collect()
    }
}

fn block_on<F: std::future::Future>(f: F) -> F::Output {
    let mut f = std::pin::pin!(f);
    let mut cx = std::task::Context::from_waker(std::task::Waker::noop());
    match f.as_mut().poll(&mut cx) {
        std::task::Poll::Ready(v) => v,
        std::task::Poll::Pending => panic!("sync tools are ready at once"),
    }
}

#[test]
fn a_call_commits_what_it_changed_under_the_tools_name() {
    let s = Setup::new();
    s.call(&[("agenda/a.md", Some(b"a\n")), ("agenda/b.md", Some(b"b\n"))]);
    s.call(&[("agenda/a.md", None)]);
    s.call(&[]);
    s.call(&[
        ("memories/1.md", Some(b"1")),
        ("memories/2.md", Some(b"2")),
        ("memories/3.md", Some(b"3")),
        ("memories/4.md", Some(b"4")),
    ]);
    assert_eq!(
        s.summaries(),
        [
            "put_files: memories/1.md, memories/2.md, memories/3.md and 1 more",
            "put_files: agenda/a.md",
            "put_files: agenda/a.md, agenda/b.md",
            "initial import",
        ]
    );
    let last = &s.home.history(None).unwrap()[0];
    assert!(
        last.message
            .ends_with("\n\nmemories/1.md\nmemories/2.md\nmemories/3.md\nmemories/4.md")
    );
}

#[test]
fn a_hand_edit_the_call_did_not_touch_is_left_for_external_edit() {
    let s = Setup::new();
    std::fs::write(s.root().join("MEMORY.md"), "by hand\n").unwrap();
    s.call(&[("agenda/a.md", Some(b"a\n"))]);
    assert_eq!(s.summaries(), ["put_files: agenda/a.md", "initial import"]);
    let now = "2026-03-16T09:00:00Z".parse().unwrap();
    VersionedHome::start(s.root(), now).unwrap();
    assert_eq!(
        s.summaries(),
        ["external edit", "put_files: agenda/a.md", "initial import"]
    );
}

#[test]
fn a_hand_edit_overwritten_by_the_call_is_committed_first_and_survives_undo() {
    let s = Setup::new();
    s.call(&[("agenda/a.md", Some(b"elroy 1\n"))]);
    std::fs::write(s.root().join("agenda/a.md"), "by hand\n").unwrap();
    s.call(&[("agenda/a.md", Some(b"elroy 2\n"))]);
    assert_eq!(
        s.summaries(),
        [
            "put_files: agenda/a.md",
            "external edit",
            "put_files: agenda/a.md",
            "initial import"
        ]
    );
    let now = "2026-03-16T09:00:00Z".parse().unwrap();
    s.home.undo(now).unwrap();
    assert_eq!(
        std::fs::read(s.root().join("agenda/a.md")).unwrap(),
        b"by hand\n"
    );
}

#[test]
fn a_tool_error_still_commits_what_the_tool_wrote() {
    // The observer runs for failed calls too: a tool that wrote and then failed leaves no
    // uncommitted change behind. Invalid arguments run nothing and commit nothing.
    let s = Setup::new();
    let result = s.call(&[("agenda/a.md", Some(b"a\n")), ("FAIL", None)]);
    assert_eq!(
        result.content,
        "Error invoking tool put_files: asked to fail"
    );
    assert_eq!(s.summaries(), ["put_files: agenda/a.md", "initial import"]);
    std::fs::write(s.root().join("USER.md"), "by hand\n").unwrap();
    let result = block_on(s.registry.invoke("put_files", Some("[1]"), &s.ctx));
    assert!(result.is_error);
    assert_eq!(s.summaries(), ["put_files: agenda/a.md", "initial import"]);
}

#[test]
fn work_outside_a_tool_call_is_recorded_under_its_label() {
    let s = Setup::new();
    std::fs::write(s.root().join("USER.md"), "by hand\n").unwrap();
    let now = "2026-03-16T09:00:00Z".parse().unwrap();
    let answer = s.home.record(now, "automatic memory", || {
        elroy_markdown::write_atomic(&s.root().join("memories/Fact.md"), b"fact\n", "Fact.md")
            .unwrap();
        42
    });
    assert_eq!(answer, 42);
    assert_eq!(
        s.summaries(),
        ["automatic memory: memories/Fact.md", "initial import"]
    );
}

/// What `git status --porcelain` (the git program) prints for the home.
fn git_status(root: &Path) -> String {
    let out = std::process::Command::new("git")
        .args(["status", "--porcelain", "--untracked-files=all"])
        .current_dir(root)
        .output()
        .expect("git runs");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

fn head_paths(root: &Path) -> Vec<String> {
    let repo = git2::Repository::open(root).unwrap();
    let tree = repo.head().unwrap().peel_to_tree().unwrap();
    let mut paths = Vec::new();
    tree.walk(git2::TreeWalkMode::PreOrder, |dir, entry| {
        if entry.kind() == Some(git2::ObjectType::Blob) {
            paths.push(format!("{dir}{}", entry.name().unwrap()));
        }
        git2::TreeWalkResult::Ok
    })
    .unwrap();
    paths
}

#[test]
fn a_call_commits_only_its_own_paths_when_a_file_is_edited_by_hand_meanwhile() {
    let s = Setup::new();
    s.call(&[("agenda/a.md", Some(b"a\n")), ("USER.md", Some(b"me\n"))]);
    // While the call runs, the user edits USER.md: it is not the tool's change.
    s.call(&[
        ("agenda/b.md", Some(b"b\n")),
        ("HAND:USER.md", Some(b"edited by hand\n")),
    ]);
    let changes = s.home.history(None).unwrap();
    assert_eq!(changes[0].summary, "put_files: agenda/b.md");
    assert_eq!(changes[0].paths, ["agenda/b.md"]);
    assert_eq!(git_status(s.root()), " M USER.md\n");
    let now = "2026-03-16T09:00:00Z".parse().unwrap();
    VersionedHome::start(s.root(), now).unwrap();
    let changes = s.home.history(None).unwrap();
    assert_eq!(changes[0].summary, "external edit");
    assert_eq!(changes[0].paths, ["USER.md"]);
    assert_eq!(git_status(s.root()), "");
}

#[test]
fn a_write_that_changes_nothing_makes_no_commit() {
    let s = Setup::new();
    s.call(&[("agenda/a.md", Some(b"a\n"))]);
    let before = s.summaries();
    // The same bytes again, and a file written and then put back as it was.
    s.call(&[("agenda/a.md", Some(b"a\n"))]);
    s.call(&[
        ("agenda/a.md", Some(b"other\n")),
        ("agenda/a.md", Some(b"a\n")),
    ]);
    assert_eq!(s.summaries(), before);
    assert_eq!(git_status(s.root()), "");
}

#[test]
fn removals_and_renames_are_committed() {
    let s = Setup::new();
    s.call(&[
        ("agenda/a.md", Some(b"a\n")),
        ("memories/m.md", Some(b"m\n")),
    ]);
    s.call(&[("agenda/a.md", None)]);
    assert_eq!(s.summaries()[0], "put_files: agenda/a.md");
    assert_eq!(head_paths(s.root()), [".gitignore", "memories/m.md"]);
    // A rename (the memory archive, a due item renamed) commits both paths.
    let now = "2026-03-16T09:00:00Z".parse().unwrap();
    s.home.record(now, "archive", || {
        elroy_markdown::rename_file(
            &s.root().join("memories/m.md"),
            &s.root().join("memories/archive/m.md"),
            "memories/archive/m.md",
        )
        .unwrap();
    });
    let last = &s.home.history(None).unwrap()[0];
    assert_eq!(last.paths, ["memories/archive/m.md", "memories/m.md"]);
    assert_eq!(
        head_paths(s.root()),
        [".gitignore", "memories/archive/m.md"]
    );
    assert_eq!(git_status(s.root()), "");
    // Undo brings the removed file back.
    s.home.undo(now).unwrap();
    assert_eq!(head_paths(s.root()), [".gitignore", "memories/m.md"]);
    assert_eq!(git_status(s.root()), "");
}

#[test]
fn the_index_is_current_with_stat_data_after_each_commit() {
    let s = Setup::new();
    s.call(&[
        ("agenda/a.md", Some(b"a\n")),
        ("MEMORY.md", Some(b"notes\n")),
    ]);
    assert_eq!(git_status(s.root()), "");
    let repo = git2::Repository::open(s.root()).unwrap();
    let index = repo.index().unwrap();
    let entry = index.get_path(Path::new("agenda/a.md"), 0).unwrap();
    // Stat data is filled in, so a status walk compares the stat and does not read the file.
    #[cfg(unix)]
    {
        assert_eq!(entry.file_size, 2);
        assert_ne!((entry.mtime.seconds(), entry.ino), (0, 0));
    }
    let _ = entry;
    let now = "2026-03-16T09:00:00Z".parse().unwrap();
    s.home.undo(now).unwrap();
    assert_eq!(git_status(s.root()), "");
}

#[test]
fn a_taken_index_lock_leaves_the_commit_made_and_the_next_start_refreshes_the_index() {
    let s = Setup::new();
    s.call(&[("agenda/a.md", Some(b"a\n"))]);
    // The user's `git` holds .git/index.lock: the commit is still made (trees are built from
    // HEAD's, not from the index); the index is left as it was.
    let lock = s.root().join(".git/index.lock");
    std::fs::write(&lock, "").unwrap();
    s.call(&[
        ("agenda/a.md", Some(b"a2\n")),
        ("agenda/b.md", Some(b"b\n")),
    ]);
    std::fs::remove_file(&lock).unwrap();
    assert_eq!(s.summaries()[0], "put_files: agenda/a.md, agenda/b.md");
    assert_ne!(
        git_status(s.root()),
        "",
        "the index is stale until the next start"
    );
    let now = "2026-03-16T09:00:00Z".parse().unwrap();
    VersionedHome::start(s.root(), now).unwrap();
    // Nothing is taken for an outside edit, and the index is current again.
    assert_eq!(s.summaries()[0], "put_files: agenda/a.md, agenda/b.md");
    assert_eq!(git_status(s.root()), "");
}

#[test]
fn a_hand_edit_made_before_a_start_is_committed_at_start_and_not_under_the_tool() {
    let s = Setup::new();
    s.call(&[("agenda/a.md", Some(b"elroy 1\n"))]);
    std::fs::write(s.root().join("agenda/a.md"), "by hand\n").unwrap();
    let now = "2026-03-16T09:00:00Z".parse().unwrap();
    VersionedHome::start(s.root(), now).unwrap();
    s.call(&[("agenda/a.md", Some(b"elroy 2\n"))]);
    assert_eq!(
        s.summaries(),
        [
            "put_files: agenda/a.md",
            "external edit",
            "put_files: agenda/a.md",
            "initial import"
        ]
    );
    s.home.undo(now).unwrap();
    assert_eq!(
        std::fs::read(s.root().join("agenda/a.md")).unwrap(),
        b"by hand\n"
    );
    // Undo refuses when a file of the change was edited since.
    s.call(&[("agenda/a.md", Some(b"elroy 3\n"))]);
    std::fs::write(s.root().join("agenda/a.md"), "by hand again\n").unwrap();
    assert!(matches!(
        s.home.undo(now),
        Err(elroy_history::HistoryError::EditedSince { .. })
    ));
}

/// Signals `go` and waits for `done` while it runs, then writes `agenda/call.md`: background work
/// on another thread writes while this call is under way.
struct Meanwhile {
    go: Mutex<std::sync::mpsc::Sender<()>>,
    done: Mutex<std::sync::mpsc::Receiver<()>>,
}

impl TypedTool for Meanwhile {
    type Args = NoArgs;
    const NAME: &'static str = "meanwhile";
    const EFFECT: elroy_core::ToolEffect = elroy_core::ToolEffect::HOME_OVERWRITES;
    const DESCRIPTION: &'static str = "Writes a file while background work writes another.";
    fn run(&self, ctx: &ToolContext, _: NoArgs) -> Result<ToolOutput, ToolError> {
        self.go.lock().unwrap().send(()).unwrap();
        self.done.lock().unwrap().recv().unwrap();
        let file = ctx.user.elroy_home.join("agenda/call.md");
        elroy_markdown::write_atomic(&file, b"call\n", "call").unwrap();
        Ok(ToolOutput::text("done"))
    }
}

#[test]
fn background_work_during_a_call_keeps_its_own_paths() {
    let s = Setup::new();
    let (go_tx, go_rx) = std::sync::mpsc::channel();
    let (done_tx, done_rx) = std::sync::mpsc::channel();
    let mut registry = ToolRegistry::new();
    registry.register(sync_tool(Meanwhile {
        go: Mutex::new(go_tx),
        done: Mutex::new(done_rx),
    }));
    registry.set_call_observer(Arc::new(Recorder::new(s.home.clone())));
    let (finish_tx, finish_rx) = std::sync::mpsc::channel::<()>();
    let home = s.home.clone();
    // The background work writes while the call runs and commits after the call has committed:
    // the call's commit must not take the background file.
    let background = std::thread::spawn(move || {
        go_rx.recv().unwrap();
        let now = "2026-03-16T09:00:00Z".parse().unwrap();
        home.record(now, "automatic memory", || {
            let file = home.root().join("memories/Fact.md");
            elroy_markdown::write_atomic(&file, b"fact\n", "Fact.md").unwrap();
            done_tx.send(()).unwrap();
            finish_rx.recv().unwrap();
        });
    });
    let result = block_on(registry.invoke("meanwhile", None, &s.ctx));
    assert!(!result.is_error, "{}", result.content);
    finish_tx.send(()).unwrap();
    background.join().unwrap();
    let changes = s.home.history(None).unwrap();
    let summaries: Vec<(&str, &[String])> = changes
        .iter()
        .map(|c| (c.summary.as_str(), c.paths.as_slice()))
        .collect();
    assert_eq!(
        summaries,
        [
            (
                "automatic memory: memories/Fact.md",
                &["memories/Fact.md".to_owned()][..]
            ),
            (
                "meanwhile: agenda/call.md",
                &["agenda/call.md".to_owned()][..]
            ),
            ("initial import", &[".gitignore".to_owned()][..]),
        ]
    );
    assert_eq!(git_status(s.root()), "");
}

#[test]
fn a_start_rebuilds_a_missing_or_stat_less_index_without_committing() {
    let s = Setup::new();
    s.call(&[("agenda/a.md", Some(b"a\n")), ("USER.md", Some(b"me\n"))]);
    let before = s.summaries();
    let now = "2026-03-16T09:00:00Z".parse().unwrap();
    // Deleted (a user's `rm .git/index`): every file looks new to a status walk.
    std::fs::remove_file(s.root().join(".git/index")).unwrap();
    VersionedHome::start(s.root(), now).unwrap();
    assert_eq!(s.summaries(), before);
    assert_eq!(git_status(s.root()), "");
    // Without stat data (as an index built from a tree is), or with every file touched: the
    // files are read once, found unchanged, and their stat data is written back.
    let repo = git2::Repository::open(s.root()).unwrap();
    let mut index = repo.index().unwrap();
    let stat_less: Vec<git2::IndexEntry> = index
        .iter()
        .map(|mut entry| {
            entry.ctime = git2::IndexTime::new(0, 0);
            entry.mtime = git2::IndexTime::new(0, 0);
            entry.ino = 0;
            entry.file_size = 0;
            entry
        })
        .collect();
    for entry in &stat_less {
        index.add(entry).unwrap();
    }
    index.write().unwrap();
    assert_eq!(
        repo.index()
            .unwrap()
            .get_path(Path::new("agenda/a.md"), 0)
            .unwrap()
            .file_size,
        0
    );
    VersionedHome::start(s.root(), now).unwrap();
    assert_eq!(s.summaries(), before);
    let entry = git2::Repository::open(s.root())
        .unwrap()
        .index()
        .unwrap()
        .get_path(Path::new("agenda/a.md"), 0)
        .unwrap();
    #[cfg(unix)]
    assert_eq!(entry.file_size, 2, "stat data written back");
    let _ = entry;
    assert_eq!(git_status(s.root()), "");
}

#[test]
fn a_large_index_is_left_to_the_next_walk_which_refreshes_it_without_committing() {
    // At 110,000 store files `.git/index` is 11 MB, read and rewritten whole to change one
    // entry; above 2 MiB a tool's commit leaves it, and the next walk refreshes the paths it left.
    let s = Setup::new();
    let repo = git2::Repository::open(s.root()).unwrap();
    let blob = repo.blob(b"padding\n").unwrap();
    let mut index = repo.index().unwrap();
    // Entries of no store (not versioned by elroy), enough to pass 2 MiB.
    for n in 0..24_000 {
        let path = format!("padding/a-long-enough-name-to-make-the-index-large-{n:05}.txt");
        index
            .add(&git2::IndexEntry {
                ctime: git2::IndexTime::new(0, 0),
                mtime: git2::IndexTime::new(0, 0),
                dev: 0,
                ino: 0,
                mode: 0o100_644,
                uid: 0,
                gid: 0,
                file_size: 0,
                id: blob,
                flags: u16::try_from(path.len()).unwrap(),
                flags_extended: 0,
                path: path.into_bytes(),
            })
            .unwrap();
    }
    index.write().unwrap();
    let index_file = s.root().join(".git/index");
    assert!(std::fs::metadata(&index_file).unwrap().len() > 2 * 1024 * 1024);
    let now = "2026-03-16T09:00:00Z".parse().unwrap();
    // A walk stamps the home, so the one after the call is the quick one (no libgit2 status).
    assert!(!s.home.commit_outside_edits(now).unwrap());
    let written = std::fs::metadata(&index_file).unwrap().modified().unwrap();
    s.call(&[("agenda/a.md", Some(b"a\n"))]);
    assert_eq!(s.summaries()[0], "put_files: agenda/a.md");
    assert_eq!(
        std::fs::metadata(&index_file).unwrap().modified().unwrap(),
        written,
        "the commit left .git/index as it was"
    );
    let entry = |repo: &git2::Repository| {
        repo.index()
            .unwrap()
            .get_path(Path::new("agenda/a.md"), 0)
            .map(|e| e.id)
    };
    assert_eq!(entry(&git2::Repository::open(s.root()).unwrap()), None);
    let stamp = std::fs::read_to_string(s.root().join(".git/elroy-walk.json")).unwrap();
    assert!(stamp.contains("agenda/a.md"), "noted as stale: {stamp}");
    assert!(!s.home.commit_outside_edits(now).unwrap());
    assert_eq!(s.summaries()[0], "put_files: agenda/a.md");
    let repo = git2::Repository::open(s.root()).unwrap();
    let head = repo.head().unwrap().peel_to_tree().unwrap();
    let committed = head.get_path(Path::new("agenda/a.md")).unwrap().id();
    assert_eq!(entry(&repo), Some(committed), "refreshed by the walk");
}

/// Nothing is committed while git has not finished something in the home. The kind: a
/// merge in progress (`.git/MERGE_HEAD`, as a stopped `git merge` leaves it); another input: a
/// tool's change to a file holding conflict markers, journaled with the markers and committed,
/// once the person has resolved the file, as the resolution (never the markers).
#[test]
fn nothing_is_committed_while_git_has_not_finished_and_the_change_waits_in_the_journal() {
    let s = Setup::new();
    s.call(&[("agenda/a.md", Some(b"a\n"))]);
    let head = |s: &Setup| s.summaries();
    let before = head(&s);
    let merge_head = s.root().join(".git/MERGE_HEAD");
    let id = git2::Repository::open(s.root())
        .unwrap()
        .head()
        .unwrap()
        .target()
        .unwrap();
    std::fs::write(&merge_head, format!("{id}\n")).unwrap();
    let result = s.call(&[("agenda/b.md", Some(b"b\n"))]);
    assert!(
        result
            .content
            .contains("not recorded in the history: a git merge is in progress")
            && result.content.contains("git merge --abort"),
        "{}",
        result.content
    );
    assert_eq!(head(&s), before);
    assert!(matches!(
        s.home.undo("2026-03-16T09:00:00Z".parse().unwrap()),
        Err(elroy_history::HistoryError::Unfinished(
            elroy_history::Unfinished::Merge
        ))
    ));
    std::fs::remove_file(&merge_head).unwrap();
    s.call(&[]);
    assert_eq!(head(&s)[0], "put_files: agenda/b.md");

    // A change written into a file that holds markers: journaled, then committed as resolved.
    std::fs::write(
        s.root().join("agenda/a.md"),
        "<<<<<<< HEAD\na\n=======\nA\n>>>>>>> other\n",
    )
    .unwrap();
    let result = s.call(&[(
        "agenda/a.md",
        Some(b"<<<<<<< HEAD\na\n=======\nA\n>>>>>>> other\nmore\n"),
    )]);
    assert!(
        result
            .content
            .contains("agenda/a.md holds git conflict markers"),
        "{}",
        result.content
    );
    std::fs::write(s.root().join("agenda/a.md"), "a\nA\nmore\n").unwrap();
    s.call(&[]);
    let repo = git2::Repository::open(s.root()).unwrap();
    let tree = repo.head().unwrap().peel_to_tree().unwrap();
    let blob = tree
        .get_path(Path::new("agenda/a.md"))
        .unwrap()
        .to_object(&repo)
        .unwrap();
    assert_eq!(blob.as_blob().unwrap().content(), b"a\nA\nmore\n");
    assert!(!s.root().join(".git/elroy-pending.jsonl").exists());
}
