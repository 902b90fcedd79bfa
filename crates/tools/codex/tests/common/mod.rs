//! Shared helpers: a fake `codex` program, a context on a temporary home with an in-memory session
//! store, and git inspection.

#![allow(dead_code, clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicI64, Ordering};

use elroy_config::{Config, LoadOptions};
use elroy_core::{Clock, TimeContext, ToolContext, ToolRegistry, ToolResult, UserInfo};
use elroy_tools_codex::{CodexHome, CodexSessions, MemorySessionStore};
use jiff::Timestamp;

/// A fake `codex exec --json`: numbers its runs (`thread-{n}`), saves its arguments to
/// `args-{n}.txt` (each followed by a `--` line), prints Codex's JSONL events, and in
/// `workspace-write` mode adds an executable plugin `greet_tool` to the `-C` directory. Prompts
/// containing `BREAK` fail, `SLEEP` hangs, `MISBEHAVE` writes even in read-only mode, `SILENT` ends
/// without a final message.
pub const FAKE_CODEX: &str = r#"#!/bin/sh
here=$(dirname "$0")
n=$(cat "$here/count" 2>/dev/null || echo 0)
n=$((n + 1))
echo "$n" > "$here/count"
for a in "$@"; do printf '%s\n--\n' "$a"; done > "$here/args-$n.txt"
sandbox=""; dir=""; prev=""; prompt=""
for a in "$@"; do
  case "$prev" in
    --sandbox) sandbox="$a" ;;
    -C) dir="$a" ;;
  esac
  prev="$a"
  prompt="$a"
done
echo "Reading prompt from stdin..."
echo "{\"type\":\"thread.started\",\"thread_id\":\"thread-$n\"}"
echo '{"type":"turn.started"}'
case "$prompt" in
  *BREAK*)
    echo '{"type":"turn.failed","error":{"message":"model refused"}}'
    echo "boom" >&2
    exit 1 ;;
  *SLEEP*) sleep 30 ;;
  *SILENT*) exit 0 ;;
esac
case "$prompt" in *MISBEHAVE*) sandbox="workspace-write" ;; esac
if [ "$sandbox" = "workspace-write" ]; then
  cat > "$dir/greet_tool" <<'EOS'
#!/bin/sh
if [ "$1" = "--schema" ]; then
  echo '{"type":"function","function":{"name":"greet","description":"Greet.","parameters":{"type":"object","properties":{},"required":[]}}}'
  exit 0
fi
echo "hi from greet"
EOS
  chmod +x "$dir/greet_tool"
  printf '%s\n' '{"type":"item.completed","item":{"id":"item_1","type":"command_execution","command":"bash -lc \"chmod +x greet_tool\"","aggregated_output":"done\n","exit_code":0,"status":"completed"}}'
fi
echo '{"type":"item.completed","item":{"id":"item_2","type":"agent_message","text":"Added greet_tool."}}'
echo '{"type":"turn.completed","usage":{"input_tokens":10,"output_tokens":5}}'
"#;

/// A clock that advances one second per reading, from 2026-11-30T06:00:00Z.
#[derive(Debug, Default)]
pub struct SteppingClock(AtomicI64);

impl Clock for SteppingClock {
    fn now(&self) -> Timestamp {
        let n = self.0.fetch_add(1, Ordering::SeqCst);
        Timestamp::from_second(1_796_018_400 + n).unwrap()
    }
}

pub struct Env {
    pub home: tempfile::TempDir,
    pub bin: tempfile::TempDir,
    pub codex_home: tempfile::TempDir,
    pub store: Arc<MemorySessionStore>,
}

impl Env {
    pub fn new() -> Self {
        let bin = tempfile::tempdir().unwrap();
        let script = bin.path().join("fake_codex");
        std::fs::write(&script, FAKE_CODEX).unwrap();
        chmod_x(&script);
        Env {
            home: tempfile::tempdir().unwrap(),
            bin,
            codex_home: tempfile::tempdir().unwrap(),
            store: Arc::new(MemorySessionStore::new()),
        }
    }

    pub fn codex_command(&self) -> String {
        format!("sh '{}'", self.bin.path().join("fake_codex").display())
    }

    pub fn contrib(&self) -> PathBuf {
        self.home.path().join("contrib")
    }

    /// The arguments of run `n` of the fake Codex.
    pub fn args(&self, n: usize) -> Vec<String> {
        let text = std::fs::read_to_string(self.bin.path().join(format!("args-{n}.txt"))).unwrap();
        let mut args: Vec<String> = text.split("\n--\n").map(str::to_owned).collect();
        args.pop();
        args
    }

    pub fn context(&self, env: &[(&str, &str)]) -> ToolContext {
        let codex = self.codex_command();
        let mut all: Vec<(String, String)> = vec![
            ("TZ".into(), "UTC0".into()),
            ("ELROY_CODEX_COMMAND".into(), codex),
        ];
        all.extend(env.iter().map(|(k, v)| ((*k).to_owned(), (*v).to_owned())));
        let config = Config::load(&LoadOptions {
            home: Some(self.home.path().to_path_buf()),
            env: all.into_iter().collect(),
            cwd: self.home.path().to_path_buf(),
            user_dir: Some(self.home.path().join("user")),
            ..Default::default()
        })
        .unwrap();
        let mut ctx = ToolContext::new(UserInfo {
            id: Some(1),
            token: "DEFAULT".into(),
            elroy_home: self.home.path().to_path_buf(),
            user_home: self.home.path().to_path_buf(),
        });
        ctx.time = TimeContext::new(Arc::new(SteppingClock::default()), jiff::tz::TimeZone::UTC);
        ctx.cwd = self.home.path().to_path_buf();
        ctx.services.insert(Arc::new(config));
        ctx.services
            .insert(Arc::new(CodexSessions(self.store.clone())));
        ctx.services
            .insert(Arc::new(CodexHome(self.codex_home.path().to_path_buf())));
        ctx
    }
}

pub fn chmod_x(path: &Path) {
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o755)).unwrap();
}

pub fn registry() -> ToolRegistry {
    let mut r = ToolRegistry::new();
    elroy_tools_codex::register(&mut r);
    r
}

pub async fn call(ctx: &ToolContext, name: &str, args: serde_json::Value) -> ToolResult {
    registry().invoke(name, Some(&args.to_string()), ctx).await
}

pub fn json(result: &ToolResult) -> serde_json::Value {
    assert!(!result.is_error, "{}", result.content);
    serde_json::from_str(&result.content).unwrap()
}

/// Commit messages from HEAD back, newest first.
pub fn log(repo: &Path) -> Vec<String> {
    let repo = git2::Repository::open(repo).unwrap();
    let mut walk = repo.revwalk().unwrap();
    walk.push_head().unwrap();
    walk.map(|oid| {
        repo.find_commit(oid.unwrap())
            .unwrap()
            .message()
            .unwrap()
            .to_owned()
    })
    .collect()
}

pub fn head(repo: &Path) -> String {
    let repo = git2::Repository::open(repo).unwrap();
    repo.head()
        .unwrap()
        .peel_to_commit()
        .unwrap()
        .id()
        .to_string()
}

/// Files in HEAD's tree.
pub fn head_files(repo: &Path) -> Vec<String> {
    let repo = git2::Repository::open(repo).unwrap();
    let tree = repo.head().unwrap().peel_to_tree().unwrap();
    tree.iter().map(|e| e.name().unwrap().to_owned()).collect()
}

pub fn is_clean(repo: &Path) -> bool {
    let repo = git2::Repository::open(repo).unwrap();
    let mut opts = git2::StatusOptions::new();
    opts.include_untracked(true);
    repo.statuses(Some(&mut opts)).unwrap().is_empty()
}
