//! `cargo xtask bench --scale`: whole-process cost of everyday commands on an empty home and on
//! a home after years of use ([`crate::scale_home`]: 10,000 agenda items, 100,000 memories,
//! 10,000 commits), side by side.
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
    },
    Case {
        label: "get_current_date",
        args: |_| words(&["tools", "call", "get_current_date"]),
        head: None,
    },
    Case {
        label: "list_agenda_items (a date)",
        args: |_| call("list_agenda_items", r#"{"item_date":"2026-06-15"}"#.into()),
        head: None,
    },
    Case {
        label: "print_due_item",
        args: |_| call("print_due_item", r#"{"name":"Reminder 0 bench"}"#.into()),
        head: None,
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
    },
    Case {
        label: "history | head",
        args: |_| words(&["history"]),
        head: Some(10),
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

/// Measures every case on an empty home and on the scale home (`reuse`, or one written now into
/// a temporary directory), printing a table.
///
/// # Errors
/// A message when a home cannot be written or a command fails.
pub fn run(binary: &Path, runs: usize, reuse: Option<&Path>) -> Result<(), String> {
    let server = MockServer::start();
    server.fallback(Reply::text("Noted."));
    let scratch = std::env::temp_dir().join(format!("elroy-scale-bench-{}", std::process::id()));
    let _cleanup = RemoveOnDrop(scratch.clone());
    let empty = scratch.join("empty");
    std::fs::create_dir_all(&empty).map_err(|e| format!("{}: {e}", empty.display()))?;
    let large = match reuse {
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
    let homes = [
        ("empty home", empty.as_path()),
        ("large home", large.as_path()),
    ];
    for (_, home) in &homes {
        // The due item print_due_item looks up (the scale home has "Reminder 0 …" already).
        let setup = call(
            "create_due_item",
            r#"{"name":"Reminder 0 bench","text":"Bench reminder","trigger_context":"when benchmarking"}"#
                .into(),
        );
        let _ = run_once(binary, home, &server.base_url(), &setup, None);
    }
    println!(
        "\n{:<28} {:>14} {:>10} {:>14} {:>10} {:>7}",
        "command", "empty: median", "peak RSS", "large: median", "peak RSS", "ratio"
    );
    for case in CASES {
        let mut row = Vec::new();
        for (_, home) in &homes {
            row.push(measure(binary, home, &server.base_url(), case, runs)?);
        }
        let ms = |d: Duration| format!("{:.1} ms", d.as_secs_f64() * 1e3);
        let rss = |f: &Figure| {
            f.peak_rss_kib
                .map_or_else(|| "n/a".into(), |k| format!("{:.1} MiB", k as f64 / 1024.0))
        };
        println!(
            "{:<28} {:>14} {:>10} {:>14} {:>10} {:>6.1}x",
            case.label,
            ms(row[0].median),
            rss(&row[0]),
            ms(row[1].median),
            rss(&row[1]),
            row[1].median.as_secs_f64() / row[0].median.as_secs_f64().max(1e-9)
        );
    }
    // The full-screen interface's first screen (issue 15: within 100 ms on the large home).
    let mut screens = Vec::new();
    for (_, home) in &homes {
        screens.push(first_screen(binary, home, &server.base_url(), runs)?);
    }
    println!(
        "{:<28} {:>14} {:>10} {:>14} {:>10} {:>6.1}x",
        "chat: first screen",
        format!("{:.1} ms", screens[0].as_secs_f64() * 1e3),
        "",
        format!("{:.1} ms", screens[1].as_secs_f64() * 1e3),
        "",
        screens[1].as_secs_f64() / screens[0].as_secs_f64().max(1e-9)
    );
    Ok(())
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
) -> Result<Figure, String> {
    let mut times = Vec::with_capacity(runs);
    for i in 0..runs + 2 {
        let took = run_once(binary, home, base_url, &(case.args)(i), case.head)?;
        if i >= 2 {
            times.push(took);
        }
    }
    times.sort();
    let peak_rss_kib = peak_rss(binary, home, base_url, &(case.args)(runs + 2), case.head);
    Ok(Figure {
        median: times[times.len() / 2],
        peak_rss_kib,
    })
}

/// `elroy ARGS` on `home` with a scrubbed environment and the loopback model.
fn elroy(program: &Path, home: &Path, base_url: &str) -> Command {
    let mut cmd = Command::new(program);
    for (name, _) in std::env::vars_os() {
        let name = name.to_string_lossy().into_owned();
        if name.starts_with("ELROY_") || name.ends_with("_API_KEY") {
            cmd.env_remove(&name);
        }
    }
    cmd.env("HOME", home)
        .env("ELROY_HOME", home)
        .env("ELROY_CHAT_MODEL", "testkit-model")
        .env("ELROY_CHAT_MODEL_API_BASE", base_url)
        .current_dir(home)
        .stdin(Stdio::null())
        .stderr(Stdio::null());
    cmd
}

fn run_once(
    binary: &Path,
    home: &Path,
    base_url: &str,
    args: &[String],
    head: Option<usize>,
) -> Result<Duration, String> {
    let what = format!("elroy {}", args.join(" "));
    let started = Instant::now();
    let mut child = elroy(binary, home, base_url)
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
) -> Option<u64> {
    let time = Path::new("/usr/bin/time");
    if !time.exists() {
        return None;
    }
    let mut cmd = elroy(time, home, base_url);
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
        let mut child = elroy(binary, home, base_url)
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
