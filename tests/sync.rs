//! `elroy sync` end to end: homes of several "machines" (each its own `ELROY_HOME` and
//! `ELROY_MACHINE_NAME`) and a bare repository in a temporary directory.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use crate::common;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Output;

use common::{TestHome, stderr, stdout};

const NOW: &str = "2026-03-16T08:30:00Z";

pub(crate) struct Machine {
    pub(crate) home: TestHome,
    pub(crate) name: &'static str,
}

impl Machine {
    pub(crate) fn new(name: &'static str) -> Self {
        Machine {
            home: TestHome::new(),
            name,
        }
    }

    pub(crate) fn run_env(&self, args: &[&str], env: &[(&str, &str)]) -> Output {
        let mut cmd = self.home.cmd();
        cmd.env("ELROY_NOW", NOW)
            .env("ELROY_MACHINE_NAME", self.name)
            .args(args);
        for (k, v) in env {
            cmd.env(k, v);
        }
        cmd.output().unwrap()
    }

    pub(crate) fn run(&self, args: &[&str]) -> Output {
        self.run_env(args, &[])
    }

    pub(crate) fn call(&self, tool: &str, args: &str) -> String {
        let out = self.run(&["tools", "call", tool, "--args", args]);
        assert!(
            out.status.success(),
            "{tool} on {}: {}",
            self.name,
            stderr(&out)
        );
        stdout(&out)
    }

    pub(crate) fn sync(&self, remote: &Path) -> String {
        let out = self.run(&["sync", "--remote", remote.to_str().unwrap()]);
        assert!(
            out.status.success(),
            "sync on {}: {}{}",
            self.name,
            stdout(&out),
            stderr(&out)
        );
        stdout(&out)
    }

    pub(crate) fn root(&self) -> PathBuf {
        self.home.home()
    }
}

pub(crate) fn bare(dir: &Path) -> PathBuf {
    let path = dir.join("remote.git");
    git2::Repository::init_bare(&path).unwrap();
    path
}

/// Every store file of a home (relative path → content): agenda, memories, feature requests, notes.
pub(crate) fn store_files(root: &Path) -> BTreeMap<String, String> {
    let mut files = BTreeMap::new();
    fn walk(root: &Path, dir: &Path, files: &mut BTreeMap<String, String>) {
        let Ok(entries) = std::fs::read_dir(dir) else {
            return;
        };
        for entry in entries.flatten() {
            let path = entry.path();
            let rel = path
                .strip_prefix(root)
                .unwrap()
                .to_string_lossy()
                .into_owned();
            if rel.starts_with(".git") || rel.starts_with("logs") || rel.starts_with("cache") {
                continue;
            }
            if path.is_dir() {
                walk(root, &path, files);
            } else if rel.ends_with(".md") {
                files.insert(rel, std::fs::read_to_string(&path).unwrap());
            }
        }
    }
    walk(root, root, &mut files);
    files
}

fn memory_ids(root: &Path) -> Vec<(String, i64)> {
    store_files(root)
        .into_iter()
        .filter(|(p, _)| p.starts_with("memories/"))
        .map(|(p, text)| {
            let id = text
                .lines()
                .find_map(|l| l.strip_prefix("id: "))
                .unwrap_or_else(|| panic!("{p} has no id: {text}"))
                .trim()
                .parse()
                .unwrap();
            (p, id)
        })
        .collect()
}

pub(crate) fn assert_no_markers(root: &Path) {
    for (path, text) in store_files(root) {
        assert!(!text.contains("<<<<<<<"), "{path} has conflict markers");
    }
}

#[test]
fn three_homes_share_everything_and_converge_with_unique_ids() {
    let dir = tempfile::tempdir().unwrap();
    let remote = bare(dir.path());
    let machines = [
        Machine::new("laptop"),
        Machine::new("desktop"),
        Machine::new("server"),
    ];
    for m in &machines {
        m.call(
            "add_agenda_item",
            &format!(r#"{{"text":"Agenda item from {}"}}"#, m.name),
        );
        // Every machine gives its first memory id 1.
        m.call(
            "create_memory",
            &format!(
                r#"{{"name":"Memory of {}","text":"Written on the {}."}}"#,
                m.name, m.name
            ),
        );
    }
    // One round each: every machine sees what the ones before it pushed.
    let mut reports = Vec::new();
    for m in &machines {
        reports.push(m.sync(&remote));
    }
    // The third pulls what the first two made, and its report names both.
    assert!(
        reports[2].contains("\nPulled from desktop, laptop: "),
        "{}",
        reports[2]
    );
    let last = &machines[2];
    let files = store_files(&last.root());
    for m in &machines {
        assert!(
            files.contains_key(&format!("agenda/Agenda_item_from_{}.md", m.name)),
            "{files:?}"
        );
    }
    // Second round: everything everywhere, the same bytes in every home.
    for m in &machines {
        m.sync(&remote);
    }
    let reference = store_files(&machines[0].root());
    for m in &machines {
        assert_eq!(store_files(&m.root()), reference, "{} differs", m.name);
        assert_no_markers(&m.root());
        // A synced home is a healthy home.
        let out = m.run(&["doctor"]);
        assert!(out.status.success(), "{}: {}", m.name, stdout(&out));
    }
    // Ids unique again, and each machine's index shows each memory's own text under its name.
    let ids = memory_ids(&machines[0].root());
    assert_eq!(ids.len(), 3, "{ids:?}");
    let mut unique: Vec<i64> = ids.iter().map(|(_, id)| *id).collect();
    unique.sort_unstable();
    unique.dedup();
    assert_eq!(unique.len(), 3, "{ids:?}");
    for m in &machines {
        for other in &machines {
            let shown = m.call(
                "print_memory",
                &format!(r#"{{"memory_name":"Memory of {}"}}"#, other.name),
            );
            assert!(
                shown.contains(&format!("Written on the {}.", other.name)),
                "{} shows for {}: {shown}",
                m.name,
                other.name
            );
        }
    }
}

#[test]
fn the_first_sync_saves_the_remote_and_an_unreachable_remote_changes_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let m = Machine::new("laptop");
    m.call("add_agenda_item", r#"{"text":"Water the plants"}"#);
    m.call(
        "create_memory",
        r#"{"name":"Bike lock","text":"The code is 4711."}"#,
    );
    std::fs::write(
        m.root().join("elroy.conf.yaml"),
        "# mine\nmax_tokens: 5000\n",
    )
    .unwrap();
    // A hand edit not committed yet: it stays uncommitted when the remote cannot be reached.
    std::fs::write(m.root().join("MEMORY.md"), "- likes tea\n").unwrap();
    let head = |m: &Machine| {
        git2::Repository::open(m.root())
            .unwrap()
            .head()
            .unwrap()
            .peel_to_commit()
            .unwrap()
            .id()
    };
    let before = (store_files(&m.root()), head(&m));
    let missing = dir.path().join("no-such-remote.git");
    let out = m.run(&["sync", "--remote", missing.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(1), "{}", stdout(&out));
    assert!(
        stderr(&out).contains("cannot sync with"),
        "{}",
        stderr(&out)
    );
    assert_eq!((store_files(&m.root()), head(&m)), before);
    assert_eq!(
        std::fs::read_to_string(m.root().join("elroy.conf.yaml")).unwrap(),
        "# mine\nmax_tokens: 5000\n"
    );
    // A directory that is not a repository refuses the same way.
    let out = m.run(&["sync", "--remote", dir.path().to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(1));
    assert_eq!((store_files(&m.root()), head(&m)), before);
    // Without a remote: a clear message.
    let out = m.run(&["sync"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(
        stderr(&out).contains("elroy sync --remote URL"),
        "{}",
        stderr(&out)
    );

    let remote = bare(dir.path());
    let report = m.sync(&remote);
    assert!(report.contains("Saved sync_remote"), "{report}");
    assert!(
        report.contains("agenda: Water the plants (new)"),
        "{report}"
    );
    assert!(report.contains("memories: Bike lock (new)"), "{report}");
    assert!(report.contains("notes: MEMORY (new)"), "{report}");
    assert!(!report.contains(".gitignore"), "{report}");
    // The memory's name travels in its file.
    let memory = std::fs::read_to_string(m.root().join("memories/Bike_lock.md")).unwrap();
    assert!(memory.contains("name: Bike lock"), "{memory}");
    assert_eq!(
        std::fs::read_to_string(m.root().join("elroy.conf.yaml")).unwrap(),
        format!(
            "# mine\nmax_tokens: 5000\nsync_remote: {}\n",
            remote.display()
        )
    );
    // Now `elroy sync` alone uses it.
    let out = m.run(&["sync"]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(stdout(&out).contains("Already in sync"), "{}", stdout(&out));
}

#[test]
fn a_sync_killed_at_any_step_loses_nothing_and_the_next_completes() {
    for step in ["fetch", "merge", "index", "push"] {
        let dir = tempfile::tempdir().unwrap();
        let remote = bare(dir.path());
        let a = Machine::new("laptop");
        let b = Machine::new("desktop");
        a.call("add_agenda_item", r#"{"text":"From the laptop"}"#);
        a.call(
            "create_memory",
            r#"{"name":"Laptop memory","text":"laptop text"}"#,
        );
        a.sync(&remote);
        b.call("add_agenda_item", r#"{"text":"From the desktop"}"#);
        b.call("add_agenda_item", r#"{"text":"Another from the desktop"}"#);
        b.call(
            "create_memory",
            r#"{"name":"Desktop memory","text":"desktop text"}"#,
        );
        let out = b.run_env(
            &["sync", "--remote", remote.to_str().unwrap()],
            &[("ELROY_SYNC_FAIL_AFTER", step)],
        );
        assert_eq!(out.status.code(), Some(86), "{step}: {}", stderr(&out));
        // Readable: the agenda lists, nothing of this machine is lost.
        let listing = b.call("list_agenda_items", "{}");
        assert!(listing.contains("From the desktop"), "{step}: {listing}");
        assert!(
            listing.contains("Another from the desktop"),
            "{step}: {listing}"
        );
        // The next sync completes, on both machines.
        b.sync(&remote);
        a.sync(&remote);
        for m in [&a, &b] {
            let listing = m.call("list_agenda_items", "{}");
            for item in [
                "From the laptop",
                "From the desktop",
                "Another from the desktop",
            ] {
                assert!(listing.contains(item), "{step} {}: {listing}", m.name);
            }
            for (name, text) in [
                ("Laptop memory", "laptop text"),
                ("Desktop memory", "desktop text"),
            ] {
                let shown = m.call("print_memory", &format!(r#"{{"memory_name":"{name}"}}"#));
                assert!(shown.contains(text), "{step} {}: {shown}", m.name);
            }
            assert_no_markers(&m.root());
        }
        assert_eq!(store_files(&a.root()), store_files(&b.root()), "{step}");
    }
}

#[test]
fn a_file_changed_on_both_machines_is_reported_and_history_and_undo_stay_honest() {
    let dir = tempfile::tempdir().unwrap();
    let remote = bare(dir.path());
    let a = Machine::new("laptop");
    let b = Machine::new("desktop");
    a.call("add_agenda_item", r#"{"text":"Plan the trip"}"#);
    a.sync(&remote);
    b.sync(&remote);
    // Both change the same item.
    a.call(
        "add_agenda_item_update",
        r#"{"item_name":"Plan the trip","note":"Booked the train"}"#,
    );
    b.call(
        "add_agenda_item_update",
        r#"{"item_name":"Plan the trip","note":"Asked for leave"}"#,
    );
    a.sync(&remote);
    let report = b.sync(&remote);
    assert!(report.contains("Changed on both machines"), "{report}");
    assert!(report.contains("agenda/Plan_the_trip.md"), "{report}");
    // Both texts are somewhere in the desktop's home, none with conflict markers.
    let all: String = std::fs::read_dir(b.root().join("agenda"))
        .unwrap()
        .flatten()
        .map(|e| std::fs::read_to_string(e.path()).unwrap())
        .collect();
    assert!(
        all.contains("Booked the train") && all.contains("Asked for leave"),
        "{all}"
    );
    assert_no_markers(&b.root());

    // The laptop's pulled change shows with its machine in the desktop's history.
    let out = b.run(&["history"]);
    let history = stdout(&out);
    assert!(
        history
            .lines()
            .any(|l| l.contains("add_agenda_item_update") && l.contains("(from laptop)")),
        "{history}"
    );

    // The desktop's own last change, changed since by a pull: undo refuses and says why.
    b.call("add_agenda_item", r#"{"text":"Call mom"}"#);
    b.sync(&remote);
    a.sync(&remote);
    a.call(
        "add_agenda_item_update",
        r#"{"item_name":"Call mom","note":"Called"}"#,
    );
    a.sync(&remote);
    let before = store_files(&b.root());
    b.sync(&remote);
    assert_ne!(store_files(&b.root()), before);
    let out = b.run(&["undo"]);
    assert_eq!(out.status.code(), Some(1), "{}", stdout(&out));
    assert!(
        stderr(&out).contains("by a change from laptop"),
        "{}",
        stderr(&out)
    );
    assert!(b.call("list_agenda_items", "{}").contains("Call mom"));
}

#[test]
fn user_names_travel_with_the_sync() {
    let dir = tempfile::tempdir().unwrap();
    let remote = bare(dir.path());
    let a = Machine::new("laptop");
    let b = Machine::new("desktop");
    a.call("set_user_full_name", r#"{"full_name":"Ada King"}"#);
    a.call("set_user_preferred_name", r#"{"preferred_name":"Ada"}"#);
    let report = a.sync(&remote);
    assert!(report.contains("user names"), "{report}");
    b.call("get_current_date", "{}");
    b.sync(&remote);
    assert!(b.call("get_user_full_name", "{}").contains("Ada King"));
    assert!(b.call("get_user_preferred_name", "{}").contains("Ada"));
    // A change on the desktop goes back the other way.
    b.call(
        "set_user_preferred_name",
        r#"{"preferred_name":"Countess","override_existing":true}"#,
    );
    b.sync(&remote);
    a.sync(&remote);
    assert!(a.call("get_user_preferred_name", "{}").contains("Countess"));
    assert!(a.call("get_user_full_name", "{}").contains("Ada King"));
}

#[test]
fn a_chat_session_syncs_at_start_and_exit_when_asked() {
    let dir = tempfile::tempdir().unwrap();
    let remote = bare(dir.path());
    let laptop = Machine::new("laptop");
    laptop.call("add_agenda_item", r#"{"text":"Pulled at the start"}"#);
    laptop.sync(&remote);

    let server = elroy_testkit::MockServer::start();
    server.push(elroy_testkit::Reply::text("Noted."));
    let desktop = Machine {
        home: common::home_with_model(
            &server,
            &format!(
                "sync_remote: {}\nsync_on_start: true\nsync_on_exit: true\n",
                remote.display()
            ),
        ),
        name: "desktop",
    };
    let mut child = desktop
        .home
        .cmd()
        .env("ELROY_NOW", NOW)
        .env("ELROY_MACHINE_NAME", "desktop")
        .arg("chat")
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    {
        use std::io::Write;
        let mut stdin = child.stdin.take().unwrap();
        stdin
            .write_all(b"/remember Pushed at the exit\nexit\n")
            .unwrap();
    }
    let out = child.wait_with_output().unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    let err = stderr(&out);
    // One status line each: the start pulled the laptop's item, the exit pushed the memory.
    assert!(err.contains("sync: pulled 1, pushed 0"), "{err}");
    assert!(err.contains("sync: pulled 0, pushed 1"), "{err}");
    assert!(
        desktop
            .root()
            .join("agenda/Pulled_at_the_start.md")
            .exists()
    );
    laptop.sync(&remote);
    let memories = store_files(&laptop.root());
    assert!(
        memories.values().any(|t| t.contains("Pushed at the exit")),
        "{memories:?}"
    );
}

#[test]
fn deleted_on_one_machine_and_edited_on_the_other_keeps_the_edit() {
    let dir = tempfile::tempdir().unwrap();
    let remote = bare(dir.path());
    let a = Machine::new("laptop");
    let b = Machine::new("desktop");
    a.call("add_agenda_item", r#"{"text":"Fix the bike"}"#);
    a.call("add_agenda_item", r#"{"text":"Paint the fence"}"#);
    a.sync(&remote);
    b.sync(&remote);
    // The laptop deletes one and edits the other; the desktop does the opposite.
    std::fs::remove_file(a.root().join("agenda/Fix_the_bike.md")).unwrap();
    a.call(
        "add_agenda_item_update",
        r#"{"item_name":"Paint the fence","note":"Bought paint"}"#,
    );
    b.call(
        "add_agenda_item_update",
        r#"{"item_name":"Fix the bike","note":"New chain"}"#,
    );
    std::fs::remove_file(b.root().join("agenda/Paint_the_fence.md")).unwrap();
    a.sync(&remote);
    let report = b.sync(&remote);
    assert!(
        report.contains(
            "agenda/Fix_the_bike.md: deleted on one machine, edited on the other; the edit was kept"
        ),
        "{report}"
    );
    assert!(
        report.contains(
            "agenda/Paint_the_fence.md: deleted on one machine, edited on the other; the edit was kept"
        ),
        "{report}"
    );
    a.sync(&remote);
    for m in [&a, &b] {
        let files = store_files(&m.root());
        assert!(
            files["agenda/Fix_the_bike.md"].contains("New chain"),
            "{}",
            m.name
        );
        assert!(
            files["agenda/Paint_the_fence.md"].contains("Bought paint"),
            "{}",
            m.name
        );
    }
}

#[test]
fn undo_finds_this_machines_change_behind_another_machines_merge() {
    let dir = tempfile::tempdir().unwrap();
    let remote = bare(dir.path());
    let a = Machine::new("laptop");
    let b = Machine::new("desktop");
    a.call("add_agenda_item", r#"{"text":"Laptop item"}"#);
    a.sync(&remote);
    b.sync(&remote);
    b.call("add_agenda_item", r#"{"text":"Desktop item"}"#);
    b.sync(&remote);
    // The laptop merges the desktop's change (its second parent) and pushes the merge; the
    // desktop fast-forwards to it.
    a.call("add_agenda_item", r#"{"text":"Another laptop item"}"#);
    a.sync(&remote);
    b.sync(&remote);
    assert!(b.root().join("agenda/Another_laptop_item.md").exists());
    let out = b.run(&["undo"]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(stdout(&out).contains("add_agenda_item"), "{}", stdout(&out));
    assert!(!b.root().join("agenda/Desktop_item.md").exists());
    // The laptop's items are not this machine's to undo.
    assert!(b.root().join("agenda/Laptop_item.md").exists());
    assert!(b.root().join("agenda/Another_laptop_item.md").exists());
}

#[test]
fn remind_watch_syncs_every_interval() {
    let dir = tempfile::tempdir().unwrap();
    let remote = bare(dir.path());
    let laptop = Machine::new("laptop");
    laptop.call("add_agenda_item", r#"{"text":"Seen by the watcher"}"#);
    laptop.sync(&remote);
    let server = Machine::new("server");
    std::fs::create_dir_all(server.root()).unwrap();
    std::fs::write(
        server.root().join("elroy.conf.yaml"),
        format!(
            "sync_remote: {}\nsync_interval_minutes: 5\n",
            remote.display()
        ),
    )
    .unwrap();
    let mut child = server
        .home
        .cmd()
        .env("ELROY_MACHINE_NAME", "server")
        .args(["remind", "--watch"])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut stderr_pipe = child.stderr.take().unwrap();
    let (sender, receiver) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let mut buf = [0u8; 1024];
        let mut seen = String::new();
        while let Ok(n) = std::io::Read::read(&mut stderr_pipe, &mut buf) {
            if n == 0 {
                break;
            }
            seen.push_str(&String::from_utf8_lossy(&buf[..n]));
            if seen.contains('\n') {
                let _ = sender.send(seen.clone());
            }
        }
    });
    let line = receiver
        .recv_timeout(std::time::Duration::from_secs(30))
        .unwrap_or_default();
    let _ = child.kill();
    let _ = child.wait();
    assert!(line.contains("sync: pulled 1, pushed 0"), "{line}");
    assert!(server.root().join("agenda/Seen_by_the_watcher.md").exists());
}

/// Network remotes go through the user's `git`: one that cannot be reached (here ssh to a closed
/// loopback port) is exit 1 with git's reason, and the home is as it was.
#[test]
fn an_unreachable_network_remote_goes_through_git_and_changes_nothing() {
    let m = Machine::new("laptop");
    m.call("add_agenda_item", r#"{"text":"Water the plants"}"#);
    let head = |m: &Machine| {
        git2::Repository::open(m.root())
            .unwrap()
            .head()
            .unwrap()
            .peel_to_commit()
            .unwrap()
            .id()
    };
    let before = (store_files(&m.root()), head(&m));
    let out = m.run(&["sync", "--remote", "ssh://elroy@127.0.0.1:1/srv/elroy.git"]);
    assert_eq!(out.status.code(), Some(1), "{}", stdout(&out));
    let err = stderr(&out);
    assert!(
        err.contains("cannot sync with ssh://elroy@127.0.0.1:1/srv/elroy.git"),
        "{err}"
    );
    assert_eq!((store_files(&m.root()), head(&m)), before);
    assert!(!m.root().join("elroy.conf.yaml").exists());
}

#[test]
fn a_name_edited_by_hand_survives_the_sync_and_undo_passes_over_the_names_commit() {
    let dir = tempfile::tempdir().unwrap();
    let remote = bare(dir.path());
    let a = Machine::new("laptop");
    a.call(
        "create_memory",
        r#"{"name":"Tea","text":"Likes green tea."}"#,
    );
    a.call(
        "create_memory",
        r#"{"name":"Coffee","text":"No coffee after noon."}"#,
    );
    a.sync(&remote);
    // The sync wrote the missing names into the files.
    let tea = a.root().join("memories/Tea.md");
    assert!(
        std::fs::read_to_string(&tea)
            .unwrap()
            .contains("name: Tea\n")
    );
    // A person renames one by hand; the next sync keeps their name (it used to write the
    // database's name back and say "Already in sync").
    let edited = std::fs::read_to_string(&tea)
        .unwrap()
        .replace("name: Tea\n", "name: Green tea\n");
    std::fs::write(&tea, &edited).unwrap();
    a.sync(&remote);
    assert_eq!(std::fs::read_to_string(&tea).unwrap(), edited);
    // A name key a person adds to a file whose name the sync had not written yet is kept too.
    a.call(
        "create_memory",
        r#"{"name":"Walks","text":"Walks at seven."}"#,
    );
    let walks = a.root().join("memories/Walks.md");
    let hand =
        std::fs::read_to_string(&walks)
            .unwrap()
            .replacen("---\n", "---\nname: Evening walks\n", 1);
    std::fs::write(&walks, &hand).unwrap();
    a.sync(&remote);
    assert!(
        std::fs::read_to_string(&walks)
            .unwrap()
            .contains("name: Evening walks\n")
    );
    assert!(
        !std::fs::read_to_string(&walks)
            .unwrap()
            .contains("name: Walks\n")
    );

    // Undo of a change made before the first sync: only this machine's `sync: names` touched the
    // file since, so undo goes through (it used to refuse, blaming "another machine").
    let b = Machine::new("desk");
    b.call(
        "create_memory",
        r#"{"name":"Bikes","text":"Rides a blue bike."}"#,
    );
    b.sync(&remote);
    let bikes = b.root().join("memories/Bikes.md");
    assert!(
        std::fs::read_to_string(&bikes)
            .unwrap()
            .contains("name: Bikes\n")
    );
    let out = b.run(&["undo"]);
    assert!(out.status.success(), "{}{}", stdout(&out), stderr(&out));
    assert!(stdout(&out).contains("create_memory"), "{}", stdout(&out));
    assert!(!bikes.exists());
}

#[test]
fn a_second_sync_of_the_same_home_waits_for_none_and_changes_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let remote = bare(dir.path());
    let a = Machine::new("laptop");
    a.call(
        "create_memory",
        r#"{"name":"Tea","text":"Likes green tea."}"#,
    );
    a.sync(&remote);
    a.call(
        "create_memory",
        r#"{"name":"Bread","text":"Bakes rye bread."}"#,
    );
    let before = store_files(&a.root());
    let head = || {
        git2::Repository::open(a.root())
            .unwrap()
            .head()
            .unwrap()
            .target()
            .unwrap()
    };
    let head_before = head();
    // Another sync of this home holds the sync lock.
    let held = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .open(a.root().join(".git/elroy-sync.lock"))
        .unwrap();
    held.try_lock().unwrap();
    let out = a.run(&["sync"]);
    assert_eq!(out.status.code(), Some(1), "{}", stdout(&out));
    assert!(
        stderr(&out).contains("another elroy sync is running on this home"),
        "{}",
        stderr(&out)
    );
    assert_eq!(store_files(&a.root()), before);
    assert_eq!(head(), head_before);
    drop(held);
    let report = a.sync(&remote);
    assert!(report.contains("Bread"), "{report}");
}

#[test]
fn another_remote_on_the_command_line_is_used_once_and_said_so() {
    let dir = tempfile::tempdir().unwrap();
    let remote = bare(dir.path());
    let other = dir.path().join("other.git");
    git2::Repository::init_bare(&other).unwrap();
    let a = Machine::new("laptop");
    a.call(
        "create_memory",
        r#"{"name":"Tea","text":"Likes green tea."}"#,
    );
    a.sync(&remote);
    let conf = std::fs::read_to_string(a.root().join("elroy.conf.yaml")).unwrap();
    let report = a.sync(&other);
    assert!(
        report.contains(&format!(
            "Synced with {} this time; sync_remote stays {}",
            other.display(),
            remote.display()
        )),
        "{report}"
    );
    assert_eq!(
        std::fs::read_to_string(a.root().join("elroy.conf.yaml")).unwrap(),
        conf
    );
    // The other remote got the home.
    let pushed = git2::Repository::open_bare(&other).unwrap();
    assert!(pushed.find_reference("refs/heads/main").is_ok());
}

/// Items are matched across machines by identity, not by path. The issue's case:
/// `rename_due_item` on one machine and `update_due_item_text` on the other (the renaming
/// machine syncs first: the other merges a rename it pulls); another kind of item renamed: an
/// agenda item moved by hand (`mv`) on one machine and given an update on the other (the editing
/// machine syncs first: the renaming machine merges its own rename with the pulled edit); a
/// third: a hand `mv` that also rewrites the text, matched by the `uid` key the first sync gave
/// the file.
#[test]
fn a_rename_on_one_machine_and_an_edit_on_the_other_make_one_item() {
    let dir = tempfile::tempdir().unwrap();
    let remote = bare(dir.path());
    let a = Machine::new("laptop");
    let b = Machine::new("desktop");
    a.call(
        "create_due_item",
        r#"{"name":"Dentist","text":"Ask about the invoice","trigger_time":"2099-03-17 09:00"}"#,
    );
    a.call("add_agenda_item", r#"{"text":"Plan the trip"}"#);
    a.sync(&remote);
    b.sync(&remote);

    a.call(
        "rename_due_item",
        r#"{"old_name":"Dentist","new_name":"Call the dentist"}"#,
    );
    b.call(
        "update_due_item_text",
        r#"{"name":"Dentist","new_text":"Ask about the invoice and the x-ray"}"#,
    );
    a.sync(&remote);
    let report = b.sync(&remote);
    assert!(
        report.contains("agenda/Dentist.md: renamed to agenda/Call_the_dentist.md"),
        "{report}"
    );

    b.call(
        "add_agenda_item_update",
        r#"{"item_name":"Plan the trip","note":"Booked the train"}"#,
    );
    b.sync(&remote);
    std::fs::rename(
        a.root().join("agenda/Plan_the_trip.md"),
        a.root().join("agenda/Trip_to_Kyoto.md"),
    )
    .unwrap();
    let report = a.sync(&remote);
    assert!(
        report.contains("agenda/Plan_the_trip.md: renamed to agenda/Trip_to_Kyoto.md"),
        "{report}"
    );
    b.sync(&remote);

    // Every agenda file got its identity at its first sync: a `uid` key, the rest as it was.
    let trip = std::fs::read_to_string(b.root().join("agenda/Trip_to_Kyoto.md")).unwrap();
    let uid = trip
        .lines()
        .find_map(|l| l.strip_prefix("uid: "))
        .unwrap_or_else(|| panic!("no uid: {trip}"))
        .to_owned();
    // A third kind: moved by hand and rewritten (too different for git's rename detection),
    // while the other machine adds an update: the same `uid` makes it one item.
    // Many lines, so that rewriting all of them leaves git's similarity far below its 50%.
    let go: Vec<String> = (1..=16)
        .map(|n| format!("Gym step {n}: stretch."))
        .collect();
    a.call(
        "create_due_item",
        &serde_json::json!({"name": "Gym", "text": go.join("\n"), "trigger_time": "2099-03-17 07:00"})
            .to_string(),
    );
    a.sync(&remote);
    b.sync(&remote);
    let gym = std::fs::read_to_string(a.root().join("agenda/Gym.md")).unwrap();
    assert!(gym.contains("\nuid: "), "{gym}");
    let mut rewritten = gym.clone();
    for (n, line) in go.iter().enumerate() {
        rewritten = rewritten.replace(
            line.as_str(),
            &format!("Swim forty lengths, set {}, before work.", n + 1),
        );
    }
    std::fs::remove_file(a.root().join("agenda/Gym.md")).unwrap();
    std::fs::write(a.root().join("agenda/Swimming.md"), &rewritten).unwrap();
    // The other machine moves its time by hand (a front-matter key: merges with the new text).
    let b_gym = std::fs::read_to_string(b.root().join("agenda/Gym.md")).unwrap();
    assert!(b_gym.contains("2099-03-17 07:00"), "{b_gym}");
    std::fs::write(
        b.root().join("agenda/Gym.md"),
        b_gym.replace("2099-03-17 07:00", "2099-03-18 07:00"),
    )
    .unwrap();
    b.sync(&remote);
    let report = a.sync(&remote);
    assert!(
        report.contains("agenda/Gym.md: renamed to agenda/Swimming.md"),
        "{report}"
    );
    b.sync(&remote);

    for m in [&a, &b] {
        let files = store_files(&m.root());
        let swimming = &files["agenda/Swimming.md"];
        assert!(
            swimming.contains("Swim forty lengths, set 16")
                && swimming.contains("2099-03-18 07:00"),
            "{swimming}"
        );
        assert!(
            files["agenda/Trip_to_Kyoto.md"].contains(&format!("uid: {uid}")),
            "the uid changed"
        );
        for gone in [
            "agenda/Dentist.md",
            "agenda/Plan_the_trip.md",
            "agenda/Gym.md",
        ] {
            assert!(!files.contains_key(gone), "{}: {files:?}", m.name);
        }
        let dentist = &files["agenda/Call_the_dentist.md"];
        assert!(
            dentist.contains("and the x-ray") && dentist.contains("name: Call the dentist"),
            "{dentist}"
        );
        assert!(files["agenda/Trip_to_Kyoto.md"].contains("Booked the train"));
        let out = m.call("print_due_item", r#"{"name":"Call the dentist"}"#);
        assert!(out.contains("and the x-ray"), "{out}");
        let out = m.run(&["doctor"]);
        assert!(out.status.success(), "{}: {}", m.name, stdout(&out));
    }
    assert_eq!(store_files(&a.root()), store_files(&b.root()));
    crate::sync_git::assert_healthy(&[&a, &b], &remote);
}

/// Twins stay alive and distinct. The issue's case: both machines create the due item
/// "Call the dentist" with different times before syncing; another input of the kind: case twins
/// (`Call_mom.md` on one machine, `call_Mom.md` on the other, made by hand).
#[test]
fn twins_and_case_twins_stay_two_active_items() {
    let dir = tempfile::tempdir().unwrap();
    let remote = bare(dir.path());
    let a = Machine::new("laptop");
    let b = Machine::new("desktop");
    a.call(
        "create_due_item",
        r#"{"name":"Call the dentist","text":"About the crown","trigger_time":"2099-03-17 09:00"}"#,
    );
    b.call(
        "create_due_item",
        r#"{"name":"Call the dentist","text":"About the invoice","trigger_time":"2099-03-18 10:00"}"#,
    );
    let item = |text: &str| {
        format!("---\ncompleted: false\ndate: '2026-03-16'\nstatus: created\n---\n\n{text}")
    };
    for (m, file, text) in [
        (&a, "Call_mom.md", "Ask about the weekend"),
        (&b, "call_Mom.md", "Wish her a happy birthday"),
    ] {
        std::fs::create_dir_all(m.root().join("agenda")).unwrap();
        std::fs::write(m.root().join("agenda").join(file), item(text)).unwrap();
    }
    a.sync(&remote);
    let report = b.sync(&remote);
    assert!(
        report.contains("the other is now 'Call the dentist (from laptop)'"),
        "{report}"
    );
    assert!(report.contains("(from laptop)"), "{report}");
    a.sync(&remote);
    assert_eq!(store_files(&a.root()), store_files(&b.root()));
    for m in [&a, &b] {
        let files = store_files(&m.root());
        // No sidecar: both are items, and no two paths differ only by case.
        assert!(
            !files.keys().any(|p| p.contains(".sync-conflict-")),
            "{files:?}"
        );
        let mut folded: Vec<String> = files.keys().map(|p| p.to_lowercase()).collect();
        folded.sort();
        folded.dedup();
        assert_eq!(folded.len(), files.len(), "{files:?}");
        // Both dentist items are due items with their own times, and both can be read by name.
        // The machine whose name sorts second ("laptop" after "desktop") gave up the name.
        for (name, text) in [
            ("Call the dentist", "About the invoice"),
            ("Call the dentist (from laptop)", "About the crown"),
        ] {
            let out = m.call("print_due_item", &format!(r#"{{"name":"{name}"}}"#));
            assert!(out.contains(text), "{}: {name}: {out}", m.name);
        }
        let all: String = files.values().cloned().collect();
        for text in [
            "2099-03-17",
            "2099-03-18",
            "Ask about the weekend",
            "happy birthday",
        ] {
            assert!(all.contains(text), "{}: {text} lost: {files:?}", m.name);
        }
        let out = m.run(&["doctor"]);
        assert!(out.status.success(), "{}: {}", m.name, stdout(&out));
    }
    // Case twins the other way round: the merging machine's own new file is the one to move.
    for (m, file, text) in [
        (&a, "Buy_Bread.md", "Rye from the market"),
        (&b, "buy_bread.md", "Sourdough from the bakery"),
    ] {
        std::fs::write(m.root().join("agenda").join(file), item(text)).unwrap();
    }
    b.sync(&remote);
    let report = a.sync(&remote);
    assert!(
        report.contains("the other is now 'Buy Bread (from laptop)'"),
        "{report}"
    );
    b.sync(&remote);
    assert_eq!(store_files(&a.root()), store_files(&b.root()));
    let files = store_files(&a.root());
    assert!(
        files["agenda/buy_bread.md"].contains("Sourdough"),
        "{files:?}"
    );
    assert!(!files.contains_key("agenda/Buy_Bread.md"), "{files:?}");
    assert!(
        files
            .values()
            .any(|t| t.contains("Rye from the market")
                && t.contains("name: Buy Bread (from laptop)")),
        "{files:?}"
    );
    crate::sync_git::assert_healthy(&[&a, &b], &remote);
}
