//! Home-level tests of [`crate::sync`] through the library API (the property test): two
//! homes and a bare repository in a temporary directory, random edit sequences on both, then
//! sync; every text written on either side is somewhere in the merged homes (in its file, a
//! sibling, a renamed memory or a renamed twin) and no store file holds conflict markers. The
//! edits include hand renames (`mv`) and creations of the same name on both sides
//! (twins).

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::Mutex;
use std::time::Duration;

use proptest::prelude::*;

use crate::{SyncOptions, sync};

/// The machine name is process-wide: tests that sync take turns.
static MACHINE: Mutex<()> = Mutex::new(());

fn options(remote: &Path) -> SyncOptions {
    SyncOptions {
        remote: remote.to_string_lossy().into_owned(),
        db: None,
        now: "2026-03-16T08:30:00Z".parse().unwrap(),
        timeout: Duration::from_secs(10),
    }
}

fn sync_as(machine: &str, home: &Path, remote: &Path) -> crate::SyncReport {
    elroy_history::set_machine_name(Some(machine));
    sync(home, &options(remote)).unwrap_or_else(|e| panic!("sync on {machine}: {e}"))
}

/// Every file of the home outside `.git`: relative path → text.
fn files(root: &Path) -> BTreeMap<String, String> {
    let mut out = BTreeMap::new();
    fn walk(root: &Path, dir: &Path, out: &mut BTreeMap<String, String>) {
        for entry in std::fs::read_dir(dir).unwrap().flatten() {
            let path = entry.path();
            let rel = path
                .strip_prefix(root)
                .unwrap()
                .to_string_lossy()
                .replace('\\', "/");
            if rel.starts_with(".git") || rel == ".lock" {
                continue;
            }
            if path.is_dir() {
                walk(root, &path, out);
            } else {
                out.insert(rel, std::fs::read_to_string(&path).unwrap_or_default());
            }
        }
    }
    walk(root, root, &mut out);
    out
}

const PATHS: [&str; 7] = [
    "agenda/Item_a.md",
    "agenda/Item_b.md",
    "memories/Note_a.md",
    "memories/Note_b.md",
    "feature-requests/Dark_mode.md",
    "MEMORY.md",
    "agenda/Item_c.md",
];

fn content(path: &str, token: &str, id: u8) -> String {
    if path.starts_with("memories/") {
        format!("---\nid: {id}\n---\n\n{token}")
    } else if path.starts_with("agenda/") {
        format!("---\ncompleted: false\ndate: '2026-03-16'\nstatus: created\n---\n\n{token}")
    } else {
        format!("{token}\n")
    }
}

#[derive(Debug, Clone)]
enum Edit {
    Write {
        path: usize,
        id: u8,
    },
    Delete {
        path: usize,
    },
    /// A hand `mv` of `from` to `to` when both are in the same store directory and `to` is free.
    Rename {
        from: usize,
        to: usize,
    },
}

fn edit() -> impl Strategy<Value = Edit> {
    prop_oneof![
        3 => (0..PATHS.len(), 1u8..4).prop_map(|(path, id)| Edit::Write { path, id }),
        1 => (0..PATHS.len()).prop_map(|path| Edit::Delete { path }),
        2 => (0..PATHS.len(), 0..PATHS.len()).prop_map(|(from, to)| Edit::Rename { from, to }),
    ]
}

fn dir_of(path: &str) -> &str {
    path.rsplit_once('/').map_or("", |(dir, _)| dir)
}

/// Applies `edits` to `home` as hand edits; returns the texts this side wrote and kept (path →
/// token), which must survive the sync.
fn apply(home: &Path, side: &str, edits: &[Edit]) -> BTreeMap<String, String> {
    let mut kept = BTreeMap::new();
    for (n, e) in edits.iter().enumerate() {
        match e {
            Edit::Write { path, id } => {
                let path = PATHS[*path];
                let token = format!("text-{side}-{n}");
                let file = home.join(path);
                std::fs::create_dir_all(file.parent().unwrap()).unwrap();
                std::fs::write(&file, content(path, &token, *id)).unwrap();
                kept.insert(path.to_owned(), token);
            }
            Edit::Delete { path } => {
                let path = PATHS[*path];
                let _ = std::fs::remove_file(home.join(path));
                kept.remove(path);
            }
            Edit::Rename { from, to } => {
                let (from, to) = (PATHS[*from], PATHS[*to]);
                if from == to
                    || dir_of(from).is_empty()
                    || dir_of(from) != dir_of(to)
                    || !home.join(from).exists()
                    || home.join(to).exists()
                {
                    continue;
                }
                std::fs::rename(home.join(from), home.join(to)).unwrap();
                if let Some(token) = kept.remove(from) {
                    kept.insert(to.to_owned(), token);
                }
            }
        }
    }
    kept
}

fn check(root: &Path, must: &[BTreeMap<String, String>]) -> Result<(), TestCaseError> {
    let all = files(root);
    for (path, text) in &all {
        prop_assert!(!text.contains("<<<<<<<"), "{path} holds conflict markers");
    }
    // No two paths differ only by case (one file on a case-insensitive file system).
    let mut folded: Vec<String> = all.keys().map(|p| p.to_lowercase()).collect();
    folded.sort();
    folded.dedup();
    prop_assert_eq!(folded.len(), all.len());
    for side in must {
        for (path, token) in side {
            prop_assert!(
                all.values().any(|t| t.contains(token.as_str())),
                "{token} (written to {path}) is gone: {all:?}"
            );
        }
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 24, ..ProptestConfig::default() })]

    #[test]
    fn random_edits_on_two_homes_lose_no_text(
        base in proptest::collection::vec(edit(), 0..4),
        ours in proptest::collection::vec(edit(), 1..6),
        theirs in proptest::collection::vec(edit(), 1..6),
    ) {
        let _turn = MACHINE.lock().unwrap_or_else(|e| e.into_inner());
        let dir = tempfile::tempdir().unwrap();
        let remote = dir.path().join("remote.git");
        git2::Repository::init_bare(&remote).unwrap();
        let a = dir.path().join("a");
        let b = dir.path().join("b");
        std::fs::create_dir_all(&a).unwrap();
        std::fs::create_dir_all(&b).unwrap();
        apply(&a, "base", &base);
        sync_as("laptop", &a, &remote);
        sync_as("desktop", &b, &remote);
        prop_assert_eq!(files(&a), files(&b));
        let kept_a = apply(&a, "laptop", &ours);
        let kept_b = apply(&b, "desktop", &theirs);
        sync_as("laptop", &a, &remote);
        sync_as("desktop", &b, &remote);
        sync_as("laptop", &a, &remote);
        check(&a, &[kept_a.clone(), kept_b.clone()])?;
        check(&b, &[kept_a, kept_b])?;
        // Both homes hold the same files, and memory ids are unique in them.
        prop_assert_eq!(files(&a), files(&b));
        let mut ids: Vec<i64> = files(&a)
            .iter()
            .filter(|(p, _)| p.starts_with("memories/") && p.ends_with(".md"))
            .filter_map(|(_, t)| crate::identity::memory_id(t.as_bytes()))
            .collect();
        let count = ids.len();
        ids.sort_unstable();
        ids.dedup();
        prop_assert_eq!(ids.len(), count);
    }
}

#[test]
fn nothing_to_do_twice_is_quiet_and_a_pushed_home_is_on_the_remote() {
    let _turn = MACHINE.lock().unwrap_or_else(|e| e.into_inner());
    let dir = tempfile::tempdir().unwrap();
    let remote = dir.path().join("remote.git");
    git2::Repository::init_bare(&remote).unwrap();
    let a = dir.path().join("a");
    std::fs::create_dir_all(a.join("agenda")).unwrap();
    std::fs::write(
        a.join("agenda/Water.md"),
        content("agenda/Water.md", "water", 0),
    )
    .unwrap();
    let first = sync_as("laptop", &a, &remote);
    assert!(first.remote_was_empty);
    assert!(
        first.pushed.iter().any(|c| c.path == "agenda/Water.md"),
        "{first:?}"
    );
    let second = sync_as("laptop", &a, &remote);
    assert_eq!(second, crate::SyncReport::default());
    let bare = git2::Repository::open_bare(&remote).unwrap();
    let head = bare
        .find_reference("refs/heads/main")
        .unwrap()
        .peel_to_commit()
        .unwrap();
    assert!(
        head.tree()
            .unwrap()
            .get_path(Path::new("agenda/Water.md"))
            .is_ok()
    );
}

#[test]
fn a_sibling_deleted_by_hand_leaves_every_machine() {
    let _turn = MACHINE.lock().unwrap_or_else(|e| e.into_inner());
    let dir = tempfile::tempdir().unwrap();
    let remote = dir.path().join("remote.git");
    git2::Repository::init_bare(&remote).unwrap();
    let a = dir.path().join("a");
    let b = dir.path().join("b");
    std::fs::create_dir_all(a.join("agenda")).unwrap();
    std::fs::create_dir_all(&b).unwrap();
    let path = "agenda/Trip.md";
    std::fs::write(a.join(path), content(path, "Pack the bags", 0)).unwrap();
    sync_as("laptop", &a, &remote);
    sync_as("desktop", &b, &remote);
    // The same line changed differently on both machines.
    std::fs::write(a.join(path), content(path, "Pack the red bag", 0)).unwrap();
    std::fs::write(b.join(path), content(path, "Pack the blue bag", 0)).unwrap();
    sync_as("laptop", &a, &remote);
    let report = sync_as("desktop", &b, &remote);
    sync_as("laptop", &a, &remote);
    let sibling = report.merged.iter().find_map(|e| match e {
        crate::merge::ReportEntry::Sibling { sibling, .. } => Some(sibling.clone()),
        _ => None,
    });
    let all = files(&b);
    assert!(
        all.values().any(|t| t.contains("Pack the red bag"))
            && all.values().any(|t| t.contains("Pack the blue bag")),
        "{all:?}"
    );
    if let Some(sibling) = sibling {
        assert!(a.join(&sibling).exists() && b.join(&sibling).exists());
        // Merged by hand on the laptop, the sibling deleted: gone everywhere after a round.
        std::fs::remove_file(a.join(&sibling)).unwrap();
        sync_as("laptop", &a, &remote);
        sync_as("desktop", &b, &remote);
        assert!(!b.join(&sibling).exists(), "{sibling} still on the desktop");
        let repo = git2::Repository::open(&b).unwrap();
        let head = repo.head().unwrap().peel_to_tree().unwrap();
        assert!(head.get_path(Path::new(&sibling)).is_err());
    }
    assert_eq!(files(&a), files(&b));
}

/// Another kind of item renamed: a memory moved and rewritten by hand on one machine
/// (too different for git's rename detection) while the other adds a front-matter key to it;
/// its `id` makes it one memory at the new path, with both changes.
#[test]
fn a_memory_renamed_and_rewritten_is_matched_by_its_id() {
    let _turn = MACHINE.lock().unwrap_or_else(|e| e.into_inner());
    let dir = tempfile::tempdir().unwrap();
    let remote = dir.path().join("remote.git");
    git2::Repository::init_bare(&remote).unwrap();
    let a = dir.path().join("a");
    let b = dir.path().join("b");
    std::fs::create_dir_all(a.join("memories")).unwrap();
    std::fs::create_dir_all(&b).unwrap();
    // Many lines, so that a rewrite of all of them leaves git's similarity far below its 50%.
    let tea: String = (1..=12)
        .map(|n| format!("Tea note {n}: green, no sugar.\n"))
        .collect();
    std::fs::write(
        a.join("memories/Tea.md"),
        format!("---\nid: 7\n---\n\n{tea}"),
    )
    .unwrap();
    sync_as("laptop", &a, &remote);
    sync_as("desktop", &b, &remote);
    std::fs::remove_file(a.join("memories/Tea.md")).unwrap();
    let drinks: String = (1..=12)
        .map(|n| format!("Drinks line {n}: black coffee before noon.\n"))
        .collect();
    std::fs::write(
        a.join("memories/Drinks.md"),
        format!("---\nid: 7\n---\n\n{drinks}"),
    )
    .unwrap();
    std::fs::write(
        b.join("memories/Tea.md"),
        format!("---\nid: 7\nsource: kitchen\n---\n\n{tea}"),
    )
    .unwrap();
    sync_as("laptop", &a, &remote);
    let report = sync_as("desktop", &b, &remote);
    sync_as("laptop", &a, &remote);
    assert!(
        report.merged.contains(&crate::merge::ReportEntry::Renamed {
            path: "memories/Drinks.md".into(),
            from: "memories/Tea.md".into(),
        }),
        "{report:?}"
    );
    for home in [&a, &b] {
        let all = files(home);
        assert!(!all.contains_key("memories/Tea.md"), "{all:?}");
        let drinks = &all["memories/Drinks.md"];
        assert!(
            drinks.contains("Drinks line 12: black coffee") && drinks.contains("source: kitchen"),
            "{drinks}"
        );
    }
    assert_eq!(files(&a), files(&b));
}
