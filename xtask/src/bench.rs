//! `cargo xtask bench`: builds the release binary and prints elroy's headline figures, each with
//! its method (the numbers of `docs/performance.md`).
//!
//! 1. start-up of `elroy version` and `elroy tools list`: wall time from spawn to exit of the
//!    release binary, median of `--runs` runs after 3 warm-up runs (page cache warm), in a fresh
//!    temporary home; peak RSS from `/usr/bin/time -f %M`;
//! 2. the same for Elroy 0.5.0 (`elroy version` of the Python package, `ELROY_ORACLE_BIN` or
//!    `~/.cache/elroy-oracle/venv/bin/elroy`), and the ratio of the medians;
//! 3. the agenda store on a 10,000-file home (`cargo bench -p elroy-agenda --bench agenda`);
//! 4. recall p50/p95 over 100,000 memories (`cargo bench -p elroy-memory --bench recall` with
//!    `ELROY_RECALL_PERCENTILES=1`);
//! 5. elroy's own time per chat turn against the testkit's zero-latency loopback model server
//!    (`cargo bench -p elroy-runtime --bench turn`);
//! 6. the full-screen interface after a long session (`cargo bench -p elroy-tui --bench
//!    long_session`).
//!
//! The measuring code of 3–6 lives in those crates' benches; this job only runs them.
//!
//! `--scale` (`scale_bench.rs`) and `--recall` (`recall_bench.rs`: hit@2/hit@5 on LoCoMo through
//! `examine_memories`' search, and its whole-process time) are separate jobs.

use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode, Stdio};
use std::time::{Duration, Instant};

/// Options of `cargo xtask bench`.
struct Options {
    runs: Option<usize>,
    python_runs: usize,
    skip_benches: bool,
    scale: bool,
    scale_home: Option<PathBuf>,
    dense_home: Option<PathBuf>,
    model: Option<PathBuf>,
    binary: Option<PathBuf>,
    /// `--recall` and its options (`recall_bench.rs`).
    recall: Option<crate::recall_bench::Options>,
}

fn bench_usage() -> String {
    BENCH_USAGE
        .replace("{RECALL_SYNOPSIS}", crate::recall_bench::SYNOPSIS)
        .replace("{RECALL_USAGE}", crate::recall_bench::USAGE)
}

const BENCH_USAGE: &str =
    "usage: cargo xtask bench [--runs N] [--python-runs N] [--no-cargo-benches]
       cargo xtask bench --scale [--runs N] [--scale-home DIR] [--dense-home DIR] [--model DIR]
                                 [--binary PATH]
{RECALL_SYNOPSIS}

  --runs N             runs per command (default 50; 11 with --scale)
  --python-runs N      runs of Elroy 0.5.0's `elroy version` (default 3; 0 skips it)
  --no-cargo-benches   only the start-up figures (skips the agenda, recall and turn benches)
  --scale              everyday commands on an empty home and on a home after years of use
                       (10,000 agenda items, 100,000 memories, 10,000 commits), side by side
  --scale-home DIR     with --scale: use this home (from `cargo xtask scale-home DIR`) instead
                       of writing one (a reused home keeps what the benchmark adds)
  --dense-home DIR     with --scale: also measure this home (`cargo xtask scale-home DIR
                       --vocabulary small`: a question's words match ~15% of the memories)
  --model DIR          with --scale: also measure the memory commands with the built-in embedder
                       over this sentence-transformers directory (all-MiniLM-L6-v2); the homes'
                       memories get vectors first (1,000 real, the rest synthetic)
  --binary PATH        measure this elroy binary instead of building the release one
{RECALL_USAGE}";

fn parse_options(args: &[&str]) -> Result<Options, String> {
    let mut options = Options {
        runs: None,
        python_runs: 3,
        skip_benches: false,
        scale: false,
        scale_home: None,
        dense_home: None,
        model: None,
        binary: None,
        recall: None,
    };
    let mut it = args.iter();
    while let Some(arg) = it.next() {
        let mut number = |name: &str| -> Result<usize, String> {
            it.next()
                .and_then(|v| v.parse().ok())
                .ok_or_else(|| format!("{name} needs a number"))
        };
        match *arg {
            "--runs" => options.runs = Some(number("--runs")?.max(1)),
            "--scale" => options.scale = true,
            "--scale-home" | "--dense-home" | "--model" | "--binary" => {
                let path = it
                    .next()
                    .map(PathBuf::from)
                    .ok_or_else(|| format!("{arg} needs a path"))?;
                match *arg {
                    "--binary" => options.binary = Some(path),
                    "--dense-home" => options.dense_home = Some(path),
                    "--model" => options.model = Some(path),
                    _ => options.scale_home = Some(path),
                }
            }
            "--python-runs" => options.python_runs = number("--python-runs")?,
            "--no-cargo-benches" => options.skip_benches = true,
            "--recall" => {
                options.recall.get_or_insert_with(Default::default);
            }
            "--locomo" | "--work" => {
                let path = it
                    .next()
                    .map(PathBuf::from)
                    .ok_or_else(|| format!("{arg} needs a path"))?;
                let recall = options.recall.get_or_insert_with(Default::default);
                match *arg {
                    "--locomo" => recall.locomo = Some(path),
                    _ => recall.work = Some(path),
                }
            }
            "--split" => match it.next().copied() {
                Some("dev") => options.recall.get_or_insert_with(Default::default).dev_only = true,
                Some("all") => options.recall.get_or_insert_with(Default::default).dev_only = false,
                _ => return Err("--split needs dev or all".into()),
            },
            "--library-only" => {
                options
                    .recall
                    .get_or_insert_with(Default::default)
                    .library_only = true;
            }
            "--timing-questions" => {
                let n = number("--timing-questions")?;
                options
                    .recall
                    .get_or_insert_with(Default::default)
                    .timing_questions = Some(n);
            }
            other => return Err(format!("unknown option {other}")),
        }
    }
    // `--model` is the built-in embedder's directory for `--scale` and `--recall` alike.
    if let Some(recall) = options.recall.as_mut() {
        recall.model = options.model.clone();
    }
    Ok(options)
}

/// Runs the bench job; `args` are the words after `bench`.
pub fn run(root: &Path, args: &[&str]) -> ExitCode {
    if args.iter().any(|a| matches!(*a, "-h" | "--help")) {
        println!("{}", bench_usage());
        return ExitCode::SUCCESS;
    }
    let options = match parse_options(args) {
        Ok(o) => o,
        Err(e) => {
            eprintln!("{e}\n\n{}", bench_usage());
            return ExitCode::from(2);
        }
    };
    match run_all(root, &options) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("cargo xtask bench: {e}");
            ExitCode::FAILURE
        }
    }
}

fn cargo() -> Command {
    let mut cmd = Command::new(std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into()));
    cmd.env_remove("RUSTFLAGS");
    cmd
}

fn run_all(root: &Path, options: &Options) -> Result<(), String> {
    let total = Instant::now();
    if let Some(recall) = &options.recall {
        return run_recall(root, options, recall);
    }
    println!("== machine");
    print_machine();

    let binary = match &options.binary {
        Some(binary) => binary.clone(),
        None => build_release(root)?,
    };
    if options.scale {
        println!(
            "\n== everyday commands, empty home vs. large home (median of {} runs after 2 warm-up runs)",
            options.runs.unwrap_or(11)
        );
        crate::scale_bench::run(&crate::scale_bench::ScaleRun {
            binary: &binary,
            runs: options.runs.unwrap_or(11),
            large: options.scale_home.as_deref(),
            dense: options.dense_home.as_deref(),
            model: options.model.as_deref(),
        })?;
        println!(
            "\n== done in {:.0} s (including builds)",
            total.elapsed().as_secs_f64()
        );
        return Ok(());
    }
    let runs = options.runs.unwrap_or(50);

    let home = TempHome::new()?;
    println!(
        "\n== start-up (release binary, temporary home, median of {} runs after 3 warm-up runs)",
        runs
    );
    let version = measure(&binary, &["version"], &home.path, runs)?;
    let tools = measure(&binary, &["tools", "list"], &home.path, runs)?;
    print_figure("elroy version", &version);
    print_figure("elroy tools list", &tools);

    if options.python_runs > 0 {
        println!(
            "\n== Elroy 0.5.0 (Python), `elroy version`, temporary HOME, median of {} runs after 1 warm-up run",
            options.python_runs
        );
        match oracle_binary() {
            Some(python) => {
                let theirs =
                    measure_with_warmup(&python, &["version"], &home.path, options.python_runs, 1)?;
                print_figure("Elroy 0.5.0 version", &theirs);
                let ratio = theirs.median.as_secs_f64() / version.median.as_secs_f64();
                println!(
                    "ratio: elroy's `elroy version` starts {ratio:.0}x faster than Elroy 0.5.0's (requirement: at least 500x) — {}",
                    if ratio >= 500.0 { "met" } else { "NOT MET" }
                );
            }
            None => println!(
                "Elroy 0.5.0 not found (set ELROY_ORACLE_BIN or install it at ~/.cache/elroy-oracle/venv): skipped"
            ),
        }
    }

    if !options.skip_benches {
        println!(
            "\n== agenda store on a 10,000-file home (divan; db_index_* is what the runtime uses)"
        );
        println!("   cargo bench -p elroy-agenda --bench agenda -- db_index_ cold_first_scan");
        cargo_bench(
            root,
            &[
                "-p",
                "elroy-agenda",
                "--bench",
                "agenda",
                "--",
                "db_index_",
                "cold_first_scan",
            ],
            &[],
        )?;

        println!(
            "\n== recall over 100,000 memories (keyword leg, no embeddings; single recalls timed)"
        );
        println!("   ELROY_RECALL_PERCENTILES=1 cargo bench -p elroy-memory --bench recall");
        cargo_bench(
            root,
            &["-p", "elroy-memory", "--bench", "recall"],
            &[("ELROY_RECALL_PERCENTILES", "1")],
        )?;

        println!(
            "\n== one chat turn against the testkit's zero-latency loopback server (1,000 memories, 200 context messages, one tool round; divan)"
        );
        println!("   cargo bench -p elroy-runtime --bench turn");
        cargo_bench(root, &["-p", "elroy-runtime", "--bench", "turn"], &[])?;

        println!(
            "\n== the full-screen interface: keystroke, PageUp and resize, empty vs 300 turns of 120-line markdown replies (state change + one 120x40 frame, no terminal IO; divan)"
        );
        println!("   cargo bench -p elroy-tui --bench long_session");
        cargo_bench(root, &["-p", "elroy-tui", "--bench", "long_session"], &[])?;
    }
    println!(
        "\n== done in {:.0} s (including builds)",
        total.elapsed().as_secs_f64()
    );
    Ok(())
}

/// `cargo build --release -p elroy`; the path of the binary.
/// `--recall`: in a release xtask, builds (or takes) the release elroy for the timing and runs
/// the benchmark; in a debug one, re-runs the same command with `cargo run --release -p xtask`
/// (the built-in embedder is ~50× slower unoptimised).
fn run_recall(
    root: &Path,
    options: &Options,
    recall: &crate::recall_bench::Options,
) -> Result<(), String> {
    if cfg!(debug_assertions) {
        let args: Vec<String> = std::env::args().skip(1).collect();
        println!("== cargo run --release -p xtask -- {}", args.join(" "));
        let status = cargo()
            .current_dir(root)
            .args(["run", "--quiet", "--release", "-p", "xtask", "--"])
            .args(&args)
            .status()
            .map_err(|e| format!("cannot run cargo: {e}"))?;
        return if status.success() {
            Ok(())
        } else {
            Err("the release run failed".into())
        };
    }
    println!("== machine");
    print_machine();
    let timing = recall.timing_questions.unwrap_or(100) > 0 || !recall.library_only;
    let binary = match (&options.binary, timing) {
        (Some(binary), _) => Some(binary.clone()),
        (None, true) => Some(build_release(root)?),
        (None, false) => None,
    };
    crate::recall_bench::run(root, recall, binary.as_deref())
}

fn build_release(root: &Path) -> Result<PathBuf, String> {
    println!("\n== cargo build --release -p elroy");
    let started = Instant::now();
    let status = cargo()
        .current_dir(root)
        .args(["build", "--release", "-p", "elroy"])
        .status()
        .map_err(|e| format!("cannot run cargo: {e}"))?;
    if !status.success() {
        return Err("cargo build --release -p elroy failed".into());
    }
    println!("built in {:.1} s", started.elapsed().as_secs_f64());
    Ok(target_dir(root)?.join("release").join("elroy"))
}

/// A temporary `$HOME` with `.elroy` inside, removed on drop.
struct TempHome {
    path: PathBuf,
}

impl TempHome {
    fn new() -> Result<Self, String> {
        let path = std::env::temp_dir().join(format!("elroy-bench-{}", std::process::id()));
        std::fs::create_dir_all(&path).map_err(|e| format!("{}: {e}", path.display()))?;
        Ok(TempHome { path })
    }
}

impl Drop for TempHome {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.path);
    }
}

struct Figure {
    median: Duration,
    min: Duration,
    max: Duration,
    peak_rss_kib: Option<u64>,
}

fn print_figure(label: &str, f: &Figure) {
    let ms = |d: Duration| d.as_secs_f64() * 1e3;
    let rss = f.peak_rss_kib.map_or_else(
        || "n/a".to_owned(),
        |k| format!("{:.1} MiB", k as f64 / 1024.0),
    );
    println!(
        "{label:<22} median {:>9.2} ms   min {:>9.2} ms   max {:>9.2} ms   peak RSS {rss}",
        ms(f.median),
        ms(f.min),
        ms(f.max)
    );
}

/// A command for `program args` with a scrubbed environment and `home` as `$HOME`.
fn command(program: &Path, args: &[&str], home: &Path) -> Command {
    let mut cmd = scrubbed_command(program, home, &home.join(".elroy"));
    cmd.args(args).stdout(Stdio::null());
    cmd
}

/// `program` run in `home` (also `HOME`) on the elroy home `elroy_home`, with no `ELROY_*` or
/// `*_API_KEY` variable of the caller's environment, standard input and error closed: what every
/// benchmark measures, so the person's own configuration never changes a figure.
pub(crate) fn scrubbed_command(program: &Path, home: &Path, elroy_home: &Path) -> Command {
    let mut cmd = Command::new(program);
    for (name, _) in std::env::vars_os() {
        let name = name.to_string_lossy().into_owned();
        if name.starts_with("ELROY_") || name.ends_with("_API_KEY") {
            cmd.env_remove(&name);
        }
    }
    cmd.env("HOME", home)
        .env("ELROY_HOME", elroy_home)
        .current_dir(home)
        .stdin(Stdio::null())
        .stderr(Stdio::null());
    cmd
}

fn measure(program: &Path, args: &[&str], home: &Path, runs: usize) -> Result<Figure, String> {
    measure_with_warmup(program, args, home, runs, 3)
}

fn measure_with_warmup(
    program: &Path,
    args: &[&str],
    home: &Path,
    runs: usize,
    warmup: usize,
) -> Result<Figure, String> {
    let what = format!("{} {}", program.display(), args.join(" "));
    let run_once = || -> Result<Duration, String> {
        let started = Instant::now();
        let status = command(program, args, home)
            .status()
            .map_err(|e| format!("{what}: {e}"))?;
        let elapsed = started.elapsed();
        if !status.success() {
            return Err(format!("{what} failed: {status}"));
        }
        Ok(elapsed)
    };
    for _ in 0..warmup {
        run_once()?;
    }
    let mut times = Vec::with_capacity(runs);
    for _ in 0..runs {
        times.push(run_once()?);
    }
    times.sort();
    Ok(Figure {
        median: times[times.len() / 2],
        min: times[0],
        max: times[times.len() - 1],
        peak_rss_kib: peak_rss(program, args, home),
    })
}

/// Peak resident set size in KiB of one run, from `/usr/bin/time -f %M`.
fn peak_rss(program: &Path, args: &[&str], home: &Path) -> Option<u64> {
    let time = Path::new("/usr/bin/time");
    if !time.exists() {
        return None;
    }
    let mut cmd = command(time, &["-f", "%M"], home);
    cmd.arg(program).args(args).stderr(Stdio::piped());
    let out = cmd.output().ok()?;
    String::from_utf8_lossy(&out.stderr)
        .lines()
        .last()?
        .trim()
        .parse()
        .ok()
}

fn oracle_binary() -> Option<PathBuf> {
    let path = std::env::var_os("ELROY_ORACLE_BIN")
        .map(PathBuf::from)
        .or_else(|| {
            std::env::var_os("HOME")
                .map(|h| PathBuf::from(h).join(".cache/elroy-oracle/venv/bin/elroy"))
        })?;
    path.exists().then_some(path)
}

/// The cargo target directory (`cargo metadata`).
fn target_dir(root: &Path) -> Result<PathBuf, String> {
    let out = cargo()
        .current_dir(root)
        .args(["metadata", "--format-version", "1", "--no-deps"])
        .output()
        .map_err(|e| format!("cargo metadata: {e}"))?;
    let meta: serde_json::Value =
        serde_json::from_slice(&out.stdout).map_err(|e| format!("cargo metadata output: {e}"))?;
    meta["target_directory"]
        .as_str()
        .map(PathBuf::from)
        .ok_or_else(|| "cargo metadata has no target_directory".to_owned())
}

/// `cargo bench ARGS` with its output passed through.
fn cargo_bench(root: &Path, args: &[&str], env: &[(&str, &str)]) -> Result<(), String> {
    let started = Instant::now();
    let mut cmd = cargo();
    cmd.current_dir(root).arg("bench").arg("-q").args(args);
    for (k, v) in env {
        cmd.env(k, v);
    }
    let status = cmd
        .status()
        .map_err(|e| format!("cargo bench {}: {e}", args.join(" ")))?;
    if !status.success() {
        return Err(format!("cargo bench {} failed", args.join(" ")));
    }
    println!(
        "   ({:.0} s including the build)",
        started.elapsed().as_secs_f64()
    );
    Ok(())
}

fn print_machine() {
    let cores = std::thread::available_parallelism().map_or(0, std::num::NonZero::get);
    let cpuinfo = std::fs::read_to_string("/proc/cpuinfo").unwrap_or_default();
    let model = cpuinfo
        .lines()
        .find_map(|l| l.strip_prefix("model name"))
        .map(|l| l.trim_start_matches([' ', '\t', ':']).to_owned())
        .unwrap_or_else(|| "unknown".to_owned());
    let meminfo = std::fs::read_to_string("/proc/meminfo").unwrap_or_default();
    let memory = meminfo
        .lines()
        .find_map(|l| l.strip_prefix("MemTotal:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<u64>().ok())
        .map_or_else(
            || "unknown".to_owned(),
            |kib| format!("{:.1} GiB", kib as f64 / 1024.0 / 1024.0),
        );
    let rustc = Command::new("rustc")
        .arg("--version")
        .output()
        .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_owned())
        .unwrap_or_default();
    println!("cpus: {cores} ({model}), memory: {memory}, {rustc}");
}
