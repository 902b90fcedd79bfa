//! Memory vectors soon after a write, through the detached embedding worker
//! (`elroy_runtime::embed_worker`): the real binary with the built-in embedder over the tiny
//! test model, no other elroy process running.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use crate::common;

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use common::{TestHome, stderr, stdout};

/// A home whose embedder is the built-in one over the tiny test model (in `models/tiny`).
fn home_with_tiny_model() -> TestHome {
    let home = TestHome::new();
    let model = home.root().join("models").join("tiny");
    elroy_embed::test_support::write_tiny_model(&model);
    std::fs::create_dir_all(home.home()).unwrap();
    std::fs::write(
        home.home().join("elroy.conf.yaml"),
        format!(
            "embedding_model: builtin\nembedding_model_path: {}\n",
            model.display()
        ),
    )
    .unwrap();
    home
}

/// `(active memories, of them with a vector of their current text)`.
fn vectors(home: &TestHome) -> (i64, i64) {
    let db = rusqlite::Connection::open(home.home().join("state.db")).unwrap();
    db.query_row(
        "SELECT count(*), count(e.item_id) FROM memories m
         LEFT JOIN embeddings e ON e.kind = 'memory' AND e.item_id = m.id
           AND e.user_id = m.user_id AND e.text_md5 = m.text_md5
         WHERE m.is_active = 1",
        [],
        |r| Ok((r.get(0)?, r.get(1)?)),
    )
    .unwrap()
}

/// Waits until every active memory has its vector. The deadline only stops a hang (the worker
/// needs well under a second here); it is not what the test measures.
fn wait_for_vectors(home: &TestHome, memories: i64) {
    let start = Instant::now();
    loop {
        let (active, embedded) = vectors(home);
        if active == memories && embedded == memories {
            return;
        }
        assert!(
            start.elapsed() < Duration::from_secs(120),
            "no vectors: {embedded} of {active} memories embedded"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
}

fn remember(home: &TestHome, text: &str) {
    let out = home
        .cmd()
        .args(["remember", text])
        .output()
        .expect("run elroy remember");
    assert!(out.status.success(), "{}", stderr(&out));
}

/// Waits (at most a minute) until no `elroy models embed --worker` of this home is running
/// (`/proc`: its command line and its `ELROY_HOME`).
fn wait_until_no_worker_runs(home: &Path) {
    let wanted = format!("ELROY_HOME={}", home.display());
    let running = || {
        std::fs::read_dir("/proc")
            .map(|entries| {
                entries.filter_map(Result::ok).any(|entry| {
                    let dir = entry.path();
                    let cmdline = std::fs::read(dir.join("cmdline")).unwrap_or_default();
                    let is_worker = cmdline.split(|b| *b == 0).any(|arg| arg == b"--worker");
                    is_worker
                        && std::fs::read(dir.join("environ"))
                            .unwrap_or_default()
                            .split(|b| *b == 0)
                            .any(|var| var == wanted.as_bytes())
                })
            })
            .unwrap_or(false)
    };
    let start = Instant::now();
    while running() {
        assert!(
            start.elapsed() < Duration::from_secs(60),
            "a worker of this home is still running"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// Holds the home's worker lock, as a running worker does.
fn hold_worker_lock(home: &TestHome) -> std::fs::File {
    let file = std::fs::OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .open(lock_path(&home.home()))
        .unwrap();
    file.try_lock().unwrap();
    file
}

/// The worker lock of a home (`docs/formats.md#home-layout`).
fn lock_path(home: &Path) -> PathBuf {
    home.join(".embed-worker.lock")
}

/// Whether some process holds the worker lock of `home`.
fn lock_is_held(home: &Path) -> bool {
    let Ok(file) = std::fs::File::open(lock_path(home)) else {
        return false;
    };
    file.try_lock().is_err()
}

/// A memory written by `elroy remember` (the process exits at once, before any vector is
/// computed) has its vector soon after, with no other elroy process running: the write starts
/// the detached worker. Another of the kind: three more written one after another, as a script
/// does, and one through `elroy tools call create_memory`.
#[test]
fn a_memory_written_by_a_process_that_exits_at_once_gets_its_vector() {
    let home = home_with_tiny_model();
    remember(&home, "the dog is a beagle.");
    wait_for_vectors(&home, 1);
    for text in ["the cat is a dog.", "a beagle is a dog.", "the cats."] {
        remember(&home, text);
    }
    let out = home.call(
        "create_memory",
        r#"{"name":"the dog","text":"the dog is the beagle."}"#,
    );
    assert!(out.status.success(), "{}", stderr(&out));
    wait_for_vectors(&home, 5);
    // `elroy doctor` has nothing to say once they are there.
    let out = home.cmd().arg("doctor").output().unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", stdout(&out));
}

/// While a worker holds the home's worker lock, writers start no second one and a worker
/// started anyway does nothing (two writers at once, then `elroy models embed --worker` by
/// hand); `elroy doctor` reports the memories still missing vectors. When the lock is free
/// again, the next write's worker embeds them all.
#[test]
fn two_writers_never_run_two_workers() {
    let home = home_with_tiny_model();
    std::fs::create_dir_all(home.home()).unwrap();
    let lock = hold_worker_lock(&home);
    let writers: Vec<_> = ["the dog is a beagle.", "the cat is a cat."]
        .iter()
        .map(|text| {
            home.cmd()
                .args(["remember", text])
                .stdout(std::process::Stdio::null())
                .spawn()
                .unwrap()
        })
        .collect();
    for mut writer in writers {
        assert!(writer.wait().unwrap().success());
    }
    let out = home
        .cmd()
        .args(["models", "embed", "--worker"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(vectors(&home), (2, 0));
    let out = home.cmd().arg("doctor").output().unwrap();
    assert_eq!(out.status.code(), Some(1));
    let report = stdout(&out);
    assert!(
        report.contains("memories: 2 memories have no vector of builtin:")
            && report.contains("a background worker is computing them now"),
        "{report}"
    );
    drop(lock);
    remember(&home, "a dog.");
    wait_for_vectors(&home, 3);
}

/// A worker killed while it embeds (here: while it waits, holding the worker lock, on an
/// embeddings API that accepts the connection and never answers) leaves its memories without
/// vectors; the kernel lets go of its lock, and the next command that meets them (a question)
/// starts a worker that embeds them all.
#[cfg(unix)]
#[test]
fn a_killed_worker_is_resumed_by_the_next_command() {
    let home = home_with_tiny_model();
    std::fs::create_dir_all(home.home()).unwrap();
    // Written while a worker (the test) holds the lock: no vector yet.
    let lock = hold_worker_lock(&home);
    for text in ["the dog is a beagle.", "the cat is a cat.", "a beagle."] {
        remember(&home, text);
    }
    assert_eq!(vectors(&home), (3, 0));
    // The workers those writes started found the lock taken; they must be gone before the lock
    // is let go, or one of them (with the real model) would take it instead of the worker below.
    wait_until_no_worker_runs(&home.home());
    // An embeddings API that never answers: the kernel accepts connections into the listener's
    // backlog, nobody reads the request. (The built-in model cannot stand in: elroy refuses
    // model files that are not regular files before opening them, so a FIFO never blocks.)
    let silent = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let api_base = format!("http://{}/v1", silent.local_addr().unwrap());
    drop(lock);
    let mut worker = home
        .cmd()
        .args(["models", "embed", "--worker"])
        .env("ELROY_EMBEDDING_MODEL", "testkit-embed")
        .env("ELROY_EMBEDDING_MODEL_API_BASE", &api_base)
        .spawn()
        .unwrap();
    let start = Instant::now();
    while !lock_is_held(&home.home()) {
        assert!(
            start.elapsed() < Duration::from_secs(120),
            "the worker never took its lock"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    worker.kill().unwrap();
    worker.wait().unwrap();
    assert!(!lock_is_held(&home.home()));
    assert_eq!(vectors(&home), (3, 0));
    drop(silent);
    // A question meets the missing vectors (it ranks them by keywords) and starts a worker.
    let out = home.call("examine_memories", r#"{"question":"Is the dog a beagle?"}"#);
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(stdout(&out).contains("beagle"), "{}", stdout(&out));
    wait_for_vectors(&home, 3);
}

/// The pids of this home's running `elroy models embed --worker` processes.
fn worker_pids(home: &Path) -> Vec<u32> {
    let wanted = format!("ELROY_HOME={}", home.display());
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    entries
        .filter_map(Result::ok)
        .filter_map(|entry| {
            let pid: u32 = entry.file_name().to_str()?.parse().ok()?;
            let dir = entry.path();
            let cmdline = std::fs::read(dir.join("cmdline")).ok()?;
            let environ = std::fs::read(dir.join("environ")).ok()?;
            let is_worker = cmdline.split(|b| *b == 0).any(|arg| arg == b"--worker");
            let ours = environ.split(|b| *b == 0).any(|v| v == wanted.as_bytes());
            (is_worker && ours).then_some(pid)
        })
        .collect()
}

/// The resident worker's socket (`docs/formats.md#home-layout`).
fn socket_path(home: &Path) -> PathBuf {
    home.join(".embed-worker.sock")
}

/// Waits (at most two minutes) until the home's worker listens on its socket.
fn wait_for_socket(home: &Path) {
    let start = Instant::now();
    while std::os::unix::net::UnixStream::connect(socket_path(home)).is_err() {
        assert!(
            start.elapsed() < Duration::from_secs(120),
            "no worker listens"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// `elroy` of `home` whose worker keeps the model for a minute, logging at debug level.
fn resident(home: &TestHome) -> std::process::Command {
    let mut cmd = home.cmd();
    cmd.env("ELROY_EMBEDDING_WORKER_IDLE_SECONDS", "60")
        .env("ELROY_LOG_LEVEL", "debug");
    cmd
}

/// `elroy remember TEXT` whose worker keeps the model `idle` seconds after its last request.
fn remember_keeping_the_model(home: &TestHome, idle: &str, text: &str) {
    let out = resident(home)
        .env("ELROY_EMBEDDING_WORKER_IDLE_SECONDS", idle)
        .args(["remember", text])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
}

/// A home with one memory, its vector, and the worker its write started staying ten minutes.
fn home_with_a_staying_worker() -> TestHome {
    let home = home_with_tiny_model();
    remember_keeping_the_model(&home, "600", "the dog is a beagle.");
    wait_for_vectors(&home, 1);
    wait_for_socket(&home.home());
    home
}

/// Ends the home's staying worker (it ends when its socket file is removed) and waits for it.
fn end_the_worker(home: &TestHome) {
    std::fs::remove_file(socket_path(&home.home())).unwrap();
    wait_until_no_worker_runs(&home.home());
}

/// Times the log says a question's vector came from the resident worker.
fn answered_by_worker(home: &TestHome) -> usize {
    std::fs::read_to_string(home.home().join("logs").join("elroy.log"))
        .unwrap_or_default()
        .matches("question embedded by the resident worker")
        .count()
}

fn ask(cmd: &mut std::process::Command, question: &str) -> String {
    let args = format!(r#"{{"question":"{question}"}}"#);
    let out = cmd
        .args(["tools", "call", "examine_memories", "--args", &args])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    stdout(&out)
}

/// The worker a write started keeps the model after embedding (`embedding_worker_idle_seconds`)
/// and answers the next processes' questions on its socket (the owner's only), so they load no
/// model; a memory written meanwhile is embedded by that worker when the writer tells it; the
/// worker ends when its socket is removed, and when its idle time passes with no request.
#[cfg(unix)]
#[test]
fn the_worker_a_write_started_answers_the_next_questions() {
    use std::os::unix::fs::PermissionsExt;
    let home = home_with_tiny_model();
    remember_keeping_the_model(&home, "60", "the dog is a beagle.");
    wait_for_vectors(&home, 1);
    wait_for_socket(&home.home());
    let mode = std::fs::metadata(socket_path(&home.home()))
        .unwrap()
        .permissions()
        .mode();
    assert_eq!(mode & 0o777, 0o600);
    assert!(ask(&mut resident(&home), "Is the dog a beagle?").contains("beagle"));
    assert!(ask(&mut resident(&home), "What is the dog?").contains("beagle"));
    assert_eq!(answered_by_worker(&home), 2);
    assert_eq!(worker_pids(&home.home()).len(), 1);
    // A write while it stays: the writer tells it, it embeds, no second worker runs.
    remember_keeping_the_model(&home, "60", "a cat.");
    wait_for_vectors(&home, 2);
    assert_eq!(worker_pids(&home.home()).len(), 1);
    end_the_worker(&home);
    assert!(!lock_is_held(&home.home()));
    // Another of the kind: a worker whose idle time passes ends by itself.
    remember_keeping_the_model(&home, "1", "a beagle is a dog.");
    wait_for_vectors(&home, 3);
    wait_until_no_worker_runs(&home.home());
    assert!(!socket_path(&home.home()).exists());
}

/// A question with no worker running embeds itself and starts one, which answers the next
/// question; a worker killed while it stays leaves a stale socket: the next question still gets
/// its answer (embedded in its process) and starts a new worker, which replaces the socket and
/// answers the question after.
#[cfg(unix)]
#[test]
fn a_question_starts_a_worker_and_a_killed_one_is_replaced() {
    let home = home_with_tiny_model();
    for text in ["the dog is a beagle.", "the cat is a cat."] {
        remember(&home, text);
    }
    wait_for_vectors(&home, 2);
    wait_until_no_worker_runs(&home.home());
    assert!(ask(&mut resident(&home), "Is the dog a beagle?").contains("beagle"));
    assert_eq!(answered_by_worker(&home), 0);
    wait_for_socket(&home.home());
    assert!(ask(&mut resident(&home), "Is the dog a dog?").contains("beagle"));
    assert_eq!(answered_by_worker(&home), 1);
    let pids = worker_pids(&home.home());
    assert_eq!(pids.len(), 1, "{pids:?}");
    let killed = std::process::Command::new("kill")
        .args(["-KILL", &pids[0].to_string()])
        .status()
        .unwrap();
    assert!(killed.success());
    wait_until_no_worker_runs(&home.home());
    assert!(
        socket_path(&home.home()).exists(),
        "the killed worker's socket stays"
    );
    assert!(ask(&mut resident(&home), "Is the cat a cat?").contains("cat"));
    assert_eq!(answered_by_worker(&home), 1);
    wait_for_socket(&home.home());
    assert!(ask(&mut resident(&home), "What is the cat?").contains("cat"));
    assert_eq!(answered_by_worker(&home), 2);
    assert_eq!(worker_pids(&home.home()).len(), 1);
    end_the_worker(&home);
}

/// `elroy models embed` (a foreground embedding with its progress, as a session's background
/// one) while a resident worker stays: after a model switch every memory is pending for the new
/// model, the command asks the worker to yield instead of waiting out its idle time (ten minutes
/// here), and embeds them itself.
#[cfg(unix)]
#[test]
fn a_foreground_embedding_does_not_wait_for_a_resident_worker() {
    let home = home_with_a_staying_worker();
    let other = other_tiny_model(&home);
    let mut embed = resident(&home)
        .env("ELROY_EMBEDDING_MODEL_PATH", &other)
        .args(["models", "embed"])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let start = Instant::now();
    let status = loop {
        if let Some(status) = embed.try_wait().unwrap() {
            break status;
        }
        assert!(
            start.elapsed() < Duration::from_secs(120),
            "elroy models embed waits for the resident worker"
        );
        std::thread::sleep(Duration::from_millis(20));
    };
    assert!(status.success());
    wait_until_no_worker_runs(&home.home());
    let db = rusqlite::Connection::open(home.home().join("state.db")).unwrap();
    let models: i64 = db
        .query_row("SELECT count(DISTINCT model) FROM embeddings", [], |r| {
            r.get(0)
        })
        .unwrap();
    assert_eq!(models, 2);
}

/// Another model's directory: the tiny one with a different configuration file (another
/// content, so another model name).
fn other_tiny_model(home: &TestHome) -> PathBuf {
    let other = home.root().join("models").join("other");
    std::fs::create_dir_all(&other).unwrap();
    for entry in std::fs::read_dir(home.root().join("models").join("tiny")).unwrap() {
        let entry = entry.unwrap();
        std::fs::copy(entry.path(), other.join(entry.file_name())).unwrap();
    }
    let config = other.join("config.json");
    let text = std::fs::read_to_string(&config).unwrap();
    std::fs::write(&config, format!("{text}\n ")).unwrap();
    other
}

/// `(model, vectors)` of the home's embeddings.
fn vectors_per_model(home: &TestHome) -> Vec<(String, i64)> {
    let db = rusqlite::Connection::open(home.home().join("state.db")).unwrap();
    let mut stmt = db
        .prepare("SELECT model, count(*) FROM embeddings GROUP BY model ORDER BY model")
        .unwrap();
    stmt.query_map([], |r| Ok((r.get(0)?, r.get(1)?)))
        .unwrap()
        .map(Result::unwrap)
        .collect()
}

/// A staying worker of one model while the configuration names another: a write of the new
/// model is refused by it, which ends it, and a worker of the new model embeds the write; a
/// question of the new model also ends an old worker and starts a new one.
#[cfg(unix)]
#[test]
fn a_worker_of_another_model_gives_way() {
    let home = home_with_a_staying_worker();
    let other = other_tiny_model(&home);
    let out = resident(&home)
        .env("ELROY_EMBEDDING_WORKER_IDLE_SECONDS", "600")
        .env("ELROY_EMBEDDING_MODEL_PATH", &other)
        .args(["remember", "the cat is a cat."])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    let start = Instant::now();
    while vectors_per_model(&home).len() < 2 {
        assert!(
            start.elapsed() < Duration::from_secs(120),
            "no vector of the new model: {:?}",
            vectors_per_model(&home)
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    let counts = vectors_per_model(&home);
    assert!(counts.iter().all(|(_, n)| *n >= 1), "{counts:?}");
    // The new model's worker stays; a question of the first model makes it give way in turn.
    wait_for_socket(&home.home());
    assert!(ask(&mut resident(&home), "Is the dog a beagle?").contains("beagle"));
    wait_for_socket(&home.home());
    // The worker that gave way exits; one stays.
    let start = Instant::now();
    while worker_pids(&home.home()).len() != 1 {
        assert!(
            start.elapsed() < Duration::from_secs(60),
            "{:?}",
            worker_pids(&home.home())
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    end_the_worker(&home);
}

/// `elroy models embed` with a staying worker and memories it was not told about (written
/// keywords only): the command embeds them itself and says how many, the worker having given
/// way without taking them.
#[cfg(unix)]
#[test]
fn a_foreground_embedding_embeds_what_is_pending_itself() {
    let home = home_with_a_staying_worker();
    // Keywords only: a configuration file whose empty embedding_model disables embeddings.
    let keywords = home.root().join("keywords.yaml");
    std::fs::write(&keywords, "embedding_model: ''\n").unwrap();
    for text in ["the cat is a cat.", "a beagle.", "the cats."] {
        let out = home
            .cmd()
            .arg("--config")
            .arg(&keywords)
            .args(["remember", text])
            .output()
            .unwrap();
        assert!(out.status.success(), "{}", stderr(&out));
    }
    assert_eq!(vectors(&home), (4, 1));
    let out = resident(&home).args(["models", "embed"]).output().unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(stdout(&out).trim(), "3 memories embedded.");
    assert_eq!(vectors(&home), (4, 4));
}

/// A staying worker holds nothing of the process that started it: not a pipe it passed on as
/// descriptor 3 (a `$(…)` or a test harness reading that pipe to its end returns while the
/// worker stays), not its working directory.
#[cfg(unix)]
#[test]
fn a_staying_worker_keeps_no_descriptor_or_directory_of_its_starter() {
    let home = home_with_tiny_model();
    let mut cmd = std::process::Command::new("sh");
    cmd.arg("-c")
        .arg(r#""$0" remember "the dog is a beagle." 3>&1 >/dev/null"#)
        .arg(env!("CARGO_BIN_EXE_elroy"));
    for (name, value) in resident(&home).get_envs() {
        match value {
            Some(value) => cmd.env(name, value),
            None => cmd.env_remove(name),
        };
    }
    cmd.env("ELROY_EMBEDDING_WORKER_IDLE_SECONDS", "600")
        .current_dir(home.root());
    // Returns once the pipe's writers are gone: the writer process, and the worker unless it let
    // go of descriptor 3.
    let out = cmd.output().unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    wait_for_vectors(&home, 1);
    let pids = worker_pids(&home.home());
    assert_eq!(pids.len(), 1, "the worker is gone: {pids:?}");
    let cwd = std::fs::read_link(format!("/proc/{}/cwd", pids[0])).unwrap();
    assert_eq!(cwd, Path::new("/"));
    end_the_worker(&home);
}
