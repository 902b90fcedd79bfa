//! `cargo xtask bench --scale`: whole-process cost of everyday commands on an empty home, a
//! 1,000-memory home and a home after years of use ([`crate::scale_home`]: 10,000 agenda items,
//! 100,000 memories, 10,000 commits), side by side; with `--dense-home`, also a home of
//! `scale-home --vocabulary small`; with `--model DIR`, also the memory commands with the built-in
//! embedder (`+emb`), after [`fill_vectors`] gave the homes' memories vectors.
//!
//! Each figure is the median wall time from spawn to exit of `--runs` runs after 2 warm-up runs
//! (the first run on the large home builds `state.db`; warm-ups keep that out of the figures),
//! and the peak RSS of one more run (`/usr/bin/time -f %M`). Commands that write (`add_agenda_item`,
//! `create_memory`) get new arguments every run; `elroy message` runs one turn against the
//! testkit's zero-latency loopback model. The versioned home is on (the default).

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use elroy_testkit::{MockServer, Reply};

use crate::scale_home::{ScaleSpec, write_home};

/// One measured command: a label and the arguments of run `i`.
struct Case {
    label: &'static str,
    args: fn(usize) -> Vec<String>,
    /// Read this many lines of standard output, then close it (`| head`); `None` discards it.
    head: Option<usize>,
    /// Run with the built-in embedder over `--model` (measured only when it is given).
    embed: bool,
}

fn words(list: &[&str]) -> Vec<String> {
    list.iter().map(|s| (*s).to_owned()).collect()
}

fn call(tool: &str, args: String) -> Vec<String> {
    vec![
        "tools".into(),
        "call".into(),
        tool.into(),
        "--args".into(),
        args,
    ]
}

const CASES: &[Case] = &[
    Case {
        label: "elroy version",
        args: |_| words(&["version"]),
        head: None,
        embed: false,
    },
    Case {
        label: "get_current_date",
        args: |_| words(&["tools", "call", "get_current_date"]),
        head: None,
        embed: false,
    },
    Case {
        label: "list_agenda_items (a date)",
        args: |_| call("list_agenda_items", r#"{"item_date":"2026-06-15"}"#.into()),
        head: None,
        embed: false,
    },
    Case {
        label: "print_due_item",
        args: |_| call("print_due_item", r#"{"name":"Reminder 0 bench"}"#.into()),
        head: None,
        embed: false,
    },
    Case {
        label: "add_agenda_item",
        args: |i| {
            call(
                "add_agenda_item",
                format!(
                    r#"{{"text":"Bench item {i} {}","item_date":"2026-06-15"}}"#,
                    run_tag()
                ),
            )
        },
        head: None,
        embed: false,
    },
    Case {
        label: "create_memory",
        args: |i| {
            call(
                "create_memory",
                format!(
                    r#"{{"name":"Bench memory {i} {}","text":"The user mentioned the bench kayak {i}."}}"#,
                    run_tag()
                ),
            )
        },
        head: None,
        embed: false,
    },
    Case {
        label: "examine_memories",
        args: |_| {
            call(
                "examine_memories",
                r#"{"question":"Which opera and ballet tickets are booked for the anniversary?"}"#
                    .into(),
            )
        },
        head: None,
        embed: false,
    },
    Case {
        label: "create_memory +emb",
        args: |i| {
            call(
                "create_memory",
                format!(
                    r#"{{"name":"Bench embedded memory {i} {}","text":"The user booked opera tickets for the anniversary {i}."}}"#,
                    run_tag()
                ),
            )
        },
        head: None,
        embed: true,
    },
    Case {
        label: "examine_memories +emb",
        args: |_| {
            call(
                "examine_memories",
                r#"{"question":"Which opera and ballet tickets are booked for the anniversary?"}"#
                    .into(),
            )
        },
        head: None,
        embed: true,
    },
    Case {
        label: "message +emb (mock model)",
        args: |i| {
            vec![
                "message".into(),
                format!("Bench message {i}: which opera tickets did I book?"),
            ]
        },
        head: None,
        embed: true,
    },
    Case {
        label: "history | head",
        args: |_| words(&["history"]),
        head: Some(10),
        embed: false,
    },
    Case {
        label: "message (mock model)",
        args: |i| {
            vec![
                "message".into(),
                format!("Bench message {i}: what is on today?"),
            ]
        },
        head: None,
        embed: false,
    },
];

/// Distinguishes runs of one bench invocation from earlier ones on a reused home.
fn run_tag() -> String {
    static TAG: std::sync::OnceLock<String> = std::sync::OnceLock::new();
    TAG.get_or_init(|| {
        let seconds = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_secs());
        format!("t{seconds}")
    })
    .clone()
}

struct Figure {
    median: Duration,
    peak_rss_kib: Option<u64>,
}

/// What `cargo xtask bench --scale` measures.
pub struct ScaleRun<'a> {
    /// The elroy binary.
    pub binary: &'a Path,
    /// Runs per command (after 2 warm-up runs).
    pub runs: usize,
    /// The 100,000-memory home to reuse (`--scale-home`), else one is written.
    pub large: Option<&'a Path>,
    /// A home of `cargo xtask scale-home --vocabulary small` (`--dense-home`), measured too.
    pub dense: Option<&'a Path>,
    /// A sentence-transformers directory (`--model`): the `+emb` commands run with the built-in
    /// embedder over it, after the homes' memories got vectors ([`fill_vectors`]).
    pub model: Option<&'a Path>,
}

/// How many memories of a home get real vectors of the model ([`fill_vectors`]); the rest get
/// synthetic ones mixed from these.
const REAL_VECTORS: usize = 1000;

/// Measures every case on an empty home, a 1,000-memory home (written now), the scale home
/// (`large`, or one written now into a temporary directory) and the small-vocabulary home when
/// given, printing a table.
///
/// # Errors
/// A message when a home cannot be written or a command fails.
pub fn run(opts: &ScaleRun<'_>) -> Result<(), String> {
    let binary = opts.binary;
    let runs = opts.runs;
    let server = MockServer::start();
    server.fallback(Reply::text("Noted."));
    let scratch = std::env::temp_dir().join(format!("elroy-scale-bench-{}", std::process::id()));
    let _cleanup = RemoveOnDrop(scratch.clone());
    let empty = scratch.join("empty");
    std::fs::create_dir_all(&empty).map_err(|e| format!("{}: {e}", empty.display()))?;
    let small = scratch.join("small");
    write_home(
        &small,
        &ScaleSpec {
            agenda: 100,
            due: 5,
            memories: 1000,
            commits: 100,
            small_vocabulary: false,
        },
    )?;
    let large = match opts.large {
        Some(dir) => dir.to_path_buf(),
        None => {
            let dir = scratch.join("large");
            let started = Instant::now();
            println!("writing the scale home (cargo xtask scale-home) …");
            write_home(&dir, &ScaleSpec::default())?;
            println!("   written in {:.0} s", started.elapsed().as_secs_f64());
            dir
        }
    };
    let mut homes = vec![
        ("empty", empty.as_path()),
        ("1,000 memories", small.as_path()),
        ("100,000 memories", large.as_path()),
    ];
    if let Some(dense) = opts.dense {
        homes.push(("100,000, small vocabulary", dense));
    }
    for (_, home) in &homes {
        // The due item print_due_item looks up (the scale home has "Reminder 0 …" already).
        let setup = call(
            "create_due_item",
            r#"{"name":"Reminder 0 bench","text":"Bench reminder","trigger_context":"when benchmarking"}"#
                .into(),
        );
        let _ = run_once(binary, home, &server.base_url(), &setup, None, None);
    }
    if let Some(model) = opts.model {
        for (label, home) in homes.iter().skip(1) {
            let started = Instant::now();
            // Index the memories first (a keyword search syncs `memories/` into `state.db`).
            let index = call("examine_memories", r#"{"question":"index"}"#.into());
            run_once(binary, home, &server.base_url(), &index, None, None)?;
            let (real, synthetic) = fill_vectors(home, model)?;
            if real + synthetic > 0 {
                println!(
                    "{label}: stored {real} real and {synthetic} synthetic vectors in {:.0} s",
                    started.elapsed().as_secs_f64()
                );
            }
        }
    }
    print!("\n{:<26}", "command");
    for (label, _) in &homes {
        print!(" {:>26}", format!("{label}: median, RSS"));
    }
    println!(" {:>9} {:>9}", "100k/empty", "100k/1k");
    let ms = |d: Duration| format!("{:.1} ms", d.as_secs_f64() * 1e3);
    let rss = |f: &Figure| {
        f.peak_rss_kib
            .map_or_else(|| "n/a".into(), |k| format!("{:.1} MiB", k as f64 / 1024.0))
    };
    for case in CASES {
        if case.embed && opts.model.is_none() {
            continue;
        }
        let model = if case.embed { opts.model } else { None };
        let mut row = Vec::new();
        for (_, home) in &homes {
            row.push(measure(
                binary,
                home,
                &server.base_url(),
                case,
                runs,
                model,
            )?);
        }
        print!("{:<26}", case.label);
        for f in &row {
            print!(" {:>26}", format!("{}, {}", ms(f.median), rss(f)));
        }
        let ratio =
            |a: &Figure, b: &Figure| a.median.as_secs_f64() / b.median.as_secs_f64().max(1e-9);
        println!(
            " {:>8.1}x {:>8.1}x",
            ratio(&row[2], &row[0]),
            ratio(&row[2], &row[1])
        );
    }
    // The full-screen interface's first screen (within 100 ms on the large home).
    let mut screens = Vec::new();
    for (_, home) in &homes {
        screens.push(first_screen(binary, home, &server.base_url(), runs)?);
    }
    print!("{:<26}", "chat: first screen");
    for d in &screens {
        print!(" {:>26}", ms(*d));
    }
    println!(
        " {:>8.1}x {:>8.1}x",
        screens[2].as_secs_f64() / screens[0].as_secs_f64().max(1e-9),
        screens[2].as_secs_f64() / screens[1].as_secs_f64().max(1e-9)
    );
    Ok(())
}

/// Gives every active memory of `home` without a vector of the built-in model over `model_dir`
/// one, written straight into `state.db` (as `MemoryStore::embed_pending` stores them): the
/// memories with the [`REAL_VECTORS`] lowest ids get the model's own vector of their rendering;
/// every other one a deterministic synthetic unit vector, the normalised mix of two of those
/// real vectors and some noise (so the codes and similarities have a sentence model's spread).
/// Embedding all 100,000 with the model would take over half an hour of one core; the per-question
/// work (the question is embedded by the real model; codes scanned, candidates rescored) is the
/// same either way. Returns `(real, synthetic)` counts stored.
///
/// # Errors
/// A message when the model or `state.db` cannot be used.
pub fn fill_vectors(home: &Path, model_dir: &Path) -> Result<(usize, usize), String> {
    use elroy_core::Embedder as _;
    let db_err = |e: rusqlite::Error| format!("{}: {e}", home.join("state.db").display());
    let embedder = elroy_embed::LazyEmbedder::new(model_dir.to_path_buf(), Box::new(|_| {}));
    let model = embedder.model().to_owned();
    let mut conn = rusqlite::Connection::open(home.join("state.db")).map_err(db_err)?;
    conn.busy_timeout(Duration::from_secs(5)).map_err(db_err)?;
    let user: i64 = conn
        .query_row("SELECT id FROM users WHERE token = 'DEFAULT'", [], |r| {
            r.get(0)
        })
        .map_err(db_err)?;
    let missing: Vec<(i64, String, String, String)> = {
        let mut st = conn
            .prepare(
                "SELECT m.id, m.name, m.file_name, m.text_md5 FROM memories m
                 LEFT JOIN embeddings e ON e.user_id = m.user_id AND e.kind = 'memory'
                   AND e.item_id = m.id AND e.model = ?2 AND e.text_md5 = m.text_md5
                 WHERE m.user_id = ?1 AND m.is_active = 1 AND e.item_id IS NULL ORDER BY m.id",
            )
            .map_err(db_err)?;
        st.query_map(rusqlite::params![user, model], |r| {
            Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?))
        })
        .map_err(db_err)?
        .collect::<rusqlite::Result<_>>()
        .map_err(db_err)?
    };
    if missing.is_empty() {
        return Ok((0, 0));
    }
    let mut pool: Vec<Vec<f32>> = Vec::new();
    // The real vectors already stored (a reused home) seed the pool first.
    {
        let mut st = conn
            .prepare(
                "SELECT vector FROM embeddings WHERE user_id = ?1 AND kind = 'memory' AND model = ?2
                 ORDER BY item_id LIMIT ?3",
            )
            .map_err(db_err)?;
        for v in st
            .query_map(rusqlite::params![user, model, REAL_VECTORS as i64], |r| {
                Ok(elroy_memory::recall::blob_to_vector(
                    &r.get::<_, Vec<u8>>(0)?,
                ))
            })
            .map_err(db_err)?
        {
            pool.push(v.map_err(db_err)?);
        }
    }
    let tx = conn.transaction().map_err(db_err)?;
    let (mut real, mut synthetic) = (0, 0);
    let mut rng = elroy_testkit::corpus::Rng(0x5EED_0EC7_0027);
    let now = jiff::Timestamp::now().to_string();
    for (id, name, file_name, md5) in missing {
        let vector = if pool.len() < REAL_VECTORS {
            let path = home.join("memories").join(&file_name);
            let text =
                std::fs::read_to_string(&path).map_err(|e| format!("{}: {e}", path.display()))?;
            let doc =
                elroy_markdown::Document::parse(&text, &file_name).map_err(|e| e.to_string())?;
            let rendering = elroy_memory::render_memory(&name, Some(&doc.raw_body));
            if elroy_memory::md5_hex(&rendering) != md5 {
                return Err(format!(
                    "{file_name}: its rendering is not what the index holds"
                ));
            }
            let v = embedder.embed(&rendering).map_err(|e| e.0)?;
            pool.push(v.clone());
            real += 1;
            v
        } else {
            let a = &pool[rng.below(pool.len())];
            let b = &pool[rng.below(pool.len())];
            let mut v: Vec<f32> = a
                .iter()
                .zip(b)
                .map(|(x, y)| {
                    let u = (rng.next_u64() >> 11) as f32 / (1u64 << 53) as f32;
                    x + 0.5 * y + 0.03 * (2.0 * u - 1.0)
                })
                .collect();
            elroy_memory::recall::normalize(&mut v);
            synthetic += 1;
            v
        };
        tx.execute(
            "INSERT INTO embeddings (user_id, kind, item_id, model, dims, vector, text_md5, updated_at)
             VALUES (?1, 'memory', ?2, ?3, ?4, ?5, ?6, ?7)
             ON CONFLICT(user_id, kind, item_id, model) DO UPDATE SET dims = excluded.dims,
               vector = excluded.vector, text_md5 = excluded.text_md5, updated_at = excluded.updated_at",
            rusqlite::params![
                user,
                id,
                model,
                vector.len() as i64,
                elroy_memory::recall::vector_to_blob(&vector),
                md5,
                now
            ],
        )
        .map_err(db_err)?;
    }
    tx.commit().map_err(db_err)?;
    Ok((real, synthetic))
}

struct RemoveOnDrop(PathBuf);

impl Drop for RemoveOnDrop {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

fn measure(
    binary: &Path,
    home: &Path,
    base_url: &str,
    case: &Case,
    runs: usize,
    model: Option<&Path>,
) -> Result<Figure, String> {
    let mut times = Vec::with_capacity(runs);
    for i in 0..runs + 2 {
        let took = run_once(binary, home, base_url, &(case.args)(i), case.head, model)?;
        if i >= 2 {
            times.push(took);
        }
    }
    times.sort();
    let peak_rss_kib = peak_rss(
        binary,
        home,
        base_url,
        &(case.args)(runs + 2),
        case.head,
        model,
    );
    Ok(Figure {
        median: times[times.len() / 2],
        peak_rss_kib,
    })
}

/// `elroy ARGS` on `home` with a scrubbed environment and the loopback model; with `model`, the
/// built-in embedder over that directory (else keyword recall only).
fn elroy(program: &Path, home: &Path, base_url: &str, model: Option<&Path>) -> Command {
    let mut cmd = crate::bench::scrubbed_command(program, home, home);
    cmd.env("ELROY_CHAT_MODEL", "testkit-model")
        .env("ELROY_CHAT_MODEL_API_BASE", base_url);
    if let Some(dir) = model {
        cmd.env("ELROY_EMBEDDING_MODEL", "builtin")
            .env("ELROY_EMBEDDING_MODEL_PATH", dir);
    }
    cmd
}

fn run_once(
    binary: &Path,
    home: &Path,
    base_url: &str,
    args: &[String],
    head: Option<usize>,
    model: Option<&Path>,
) -> Result<Duration, String> {
    let what = format!("elroy {}", args.join(" "));
    let started = Instant::now();
    let mut child = elroy(binary, home, base_url, model)
        .args(args)
        .stdout(if head.is_some() {
            Stdio::piped()
        } else {
            Stdio::null()
        })
        .spawn()
        .map_err(|e| format!("{what}: {e}"))?;
    if let (Some(lines), Some(stdout)) = (head, child.stdout.take()) {
        // `| head -N`: read N lines, then close the pipe.
        let mut reader = BufReader::new(stdout);
        let mut line = String::new();
        for _ in 0..lines {
            line.clear();
            if reader.read_line(&mut line).map_or(true, |n| n == 0) {
                break;
            }
        }
    }
    let status = child.wait().map_err(|e| format!("{what}: {e}"))?;
    let took = started.elapsed();
    if head.is_none() && !status.success() {
        return Err(format!("{what} failed: {status}"));
    }
    Ok(took)
}

/// Peak resident set size in KiB of one run, from `/usr/bin/time -f %M`; with `head`, the run
/// is cut as in [`run_once`] (`| head -N`), so it measures the same work.
fn peak_rss(
    binary: &Path,
    home: &Path,
    base_url: &str,
    args: &[String],
    head: Option<usize>,
    model: Option<&Path>,
) -> Option<u64> {
    let time = Path::new("/usr/bin/time");
    if !time.exists() {
        return None;
    }
    let mut cmd = elroy(time, home, base_url, model);
    cmd.args(["-f", "%M"]).arg(binary).args(args);
    let mut child = cmd
        .stdout(if head.is_some() {
            Stdio::piped()
        } else {
            Stdio::null()
        })
        .stderr(Stdio::piped())
        .spawn()
        .ok()?;
    if let (Some(lines), Some(stdout)) = (head, child.stdout.take()) {
        let mut reader = BufReader::new(stdout);
        let mut line = String::new();
        for _ in 0..lines {
            line.clear();
            if reader.read_line(&mut line).map_or(true, |n| n == 0) {
                break;
            }
        }
    }
    let out = child.wait_with_output().ok()?;
    String::from_utf8_lossy(&out.stderr)
        .lines()
        .last()?
        .trim()
        .parse()
        .ok()
}

/// The time from spawn until the full-screen interface has drawn its first screen (its input
/// line's mode label `INSERT` has been written to the terminal), `elroy chat` in a 30×120
/// pseudo-terminal, median of `runs` runs after one warm-up; each run then ends with Ctrl+D.
///
/// # Errors
/// The pseudo-terminal cannot be opened, elroy cannot be started, or no screen came in 10 s.
fn first_screen(
    binary: &Path,
    home: &Path,
    base_url: &str,
    runs: usize,
) -> Result<Duration, String> {
    use std::io::{Read, Write};

    use rustix::pty::{OpenptFlags, grantpt, openpt, ptsname, unlockpt};
    use rustix::termios::{Winsize, tcsetwinsize};

    let pty = |e: rustix::io::Errno| format!("pseudo-terminal: {e}");
    let io = |e: std::io::Error| format!("pseudo-terminal: {e}");
    let mut times = Vec::with_capacity(runs);
    for run in 0..=runs {
        let master =
            openpt(OpenptFlags::RDWR | OpenptFlags::NOCTTY | OpenptFlags::CLOEXEC).map_err(pty)?;
        grantpt(&master).map_err(pty)?;
        unlockpt(&master).map_err(pty)?;
        let name = ptsname(&master, Vec::new()).map_err(pty)?;
        let size = Winsize {
            ws_row: 30,
            ws_col: 120,
            ws_xpixel: 0,
            ws_ypixel: 0,
        };
        tcsetwinsize(&master, size).map_err(pty)?;
        let slave = std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .open(name.to_string_lossy().as_ref())
            .map_err(io)?;
        let started = Instant::now();
        let mut child = elroy(binary, home, base_url, None)
            .arg("chat")
            .env("TERM", "xterm-256color")
            .stdin(slave.try_clone().map_err(io)?)
            .stdout(slave.try_clone().map_err(io)?)
            .stderr(slave)
            .spawn()
            .map_err(|e| format!("elroy chat: {e}"))?;
        let mut master = std::fs::File::from(master);
        let (tx, rx) = std::sync::mpsc::channel();
        let mut reader = master.try_clone().map_err(io)?;
        std::thread::spawn(move || {
            let mut seen = Vec::new();
            let mut buf = [0u8; 8192];
            while let Ok(n) = reader.read(&mut buf) {
                if n == 0 {
                    break;
                }
                seen.extend_from_slice(&buf[..n]);
                if seen.windows(6).any(|w| w == b"INSERT") {
                    let _ = tx.send(());
                    seen.clear();
                }
            }
        });
        let drawn = rx.recv_timeout(Duration::from_secs(10));
        let took = started.elapsed();
        let _ = master.write_all(b"\x04");
        let deadline = Instant::now() + Duration::from_secs(10);
        while child.try_wait().ok().flatten().is_none() && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(20));
        }
        let _ = child.kill();
        let _ = child.wait();
        drawn.map_err(|_| "elroy chat drew no screen within 10 s".to_owned())?;
        if run > 0 {
            times.push(took);
        }
    }
    times.sort();
    Ok(times[times.len() / 2])
}
