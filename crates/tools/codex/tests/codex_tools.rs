//! The Codex tools with a fake `codex` program (`docs/tools.md#codex-and-contrib-plugins`).

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use crate::common;

use common::{Env, call, head, head_files, is_clean, json, log};
use elroy_core::ToolRegistry;
use serde_json::json as j;

#[tokio::test]
async fn edit_contrib_records_the_session_and_commits_the_change() {
    let env = Env::new();
    // Codex's own session log, found by thread id.
    let day = env.codex_home.path().join("sessions/2026/11/30");
    std::fs::create_dir_all(&day).unwrap();
    let session_file = day.join("rollout-2026-11-30T06-00-00-thread-1.jsonl");
    std::fs::write(&session_file, "{}\n").unwrap();

    let ctx = env.context(&[]);
    let r = call(
        &ctx,
        "edit_contrib_with_codex",
        j!({ "prompt": "  Add a greet tool  ", "model": "gpt-5-codex" }),
    )
    .await;
    let out = json(&r);
    let contrib = env.contrib();
    let commit = head(&contrib);
    let dir = contrib.display().to_string();
    assert_eq!(
        r.content,
        j!({
            "session_id": "thread-1",
            "scope": "contrib",
            "repo_path": dir,
            "status": "completed",
            "summary": format!("Codex session thread-1 ran in {dir} (scope: contrib).\nPaths changed during this run: greet_tool\nCommitted as {}.\nFinal message: Added greet_tool.", &commit[..12]),
            "final_message": "Added greet_tool.",
            "touched_paths": ["greet_tool"],
            "commands": [{"command": "bash -lc \"chmod +x greet_tool\"", "exit_code": 0, "output_excerpt": "done\n"}],
            "commit": commit,
            "session_file_path": session_file.display().to_string(),
        })
        .to_string()
    );
    assert_eq!(out["commit"], commit.as_str());

    // The repository: the initial commit, then the Codex edit; nothing left uncommitted.
    assert_eq!(
        log(&contrib),
        [
            "Codex contrib edit (session thread-1)",
            "Initial Elroy contrib repo"
        ]
    );
    assert_eq!(
        head_files(&contrib),
        [".gitignore", "README.md", "greet_tool"]
    );
    assert!(is_clean(&contrib));

    // The command line of `docs/tool-rules.md#running-codex` step 2.
    let args = env.args(1);
    assert_eq!(
        args[..9],
        [
            "exec",
            "--json",
            "--sandbox",
            "workspace-write",
            "--skip-git-repo-check",
            "-m",
            "gpt-5-codex",
            "-C",
            dir.as_str()
        ]
    );
    assert!(args[9].starts_with("You are editing the Elroy contrib plugin directory."));
    assert!(args[9].ends_with(&format!(
        "Contrib directory: {dir}\n\nEdit request:\nAdd a greet tool"
    )));

    // The row.
    let rows = env.store.list_all();
    assert_eq!(rows.len(), 1);
    assert_eq!(rows[0].prompt, "  Add a greet tool  ");
    assert_eq!(rows[0].model.as_deref(), Some("gpt-5-codex"));
    assert_eq!(rows[0].status.as_str(), "completed");
    assert_eq!(rows[0].exit_code, Some(0));

    // What Codex wrote starts untrusted: the next start does not run it.
    let trust = elroy_plugins::TrustStore::new(env.home.path());
    let mut registry = ToolRegistry::new();
    let report = elroy_plugins::load_from(&contrib, &[], &trust, &[], 60, &mut registry);
    assert!(registry.names().is_empty());
    assert_eq!(
        report.untrusted,
        [(contrib.join("greet_tool"), elroy_plugins::TrustState::New)]
    );

    // Trusted by the person, it loads at the next start and can be called.
    trust
        .trust(&[contrib.join("greet_tool")], "2026-11-30T10:00:00Z")
        .unwrap();
    let mut registry = ToolRegistry::new();
    let report = elroy_plugins::load_from(&contrib, &[], &trust, &[], 60, &mut registry);
    assert_eq!(report.warnings, Vec::<String>::new());
    assert_eq!(registry.names(), ["greet"]);
    let greeted = registry.invoke("greet", Some("{}"), &ctx).await;
    assert_eq!(greeted.content, "hi from greet");
}

#[tokio::test]
async fn inspect_elroy_changes_nothing() {
    let env = Env::new();
    let source = tempfile::tempdir().unwrap();
    std::fs::write(source.path().join("Cargo.toml"), "[workspace]\n").unwrap();
    let repo = git2::Repository::init(source.path()).unwrap();
    let mut index = repo.index().unwrap();
    index.add_path(std::path::Path::new("Cargo.toml")).unwrap();
    index.write().unwrap();
    let tree = repo.find_tree(index.write_tree().unwrap()).unwrap();
    let sig = git2::Signature::now("T", "t@example.local").unwrap();
    repo.commit(Some("HEAD"), &sig, &sig, "init", &tree, &[])
        .unwrap();
    let before = head(source.path());
    std::fs::create_dir_all(env.home.path().join("logs")).unwrap();
    std::fs::write(
        env.home.path().join("logs/elroy.log"),
        "2026-11-30T05:59:59.000Z INFO elroy: started\n",
    )
    .unwrap();

    let src = source.path().display().to_string();
    let ctx = env.context(&[("ELROY_ELROY_SOURCE_PATH", src.as_str())]);
    let r = call(
        &ctx,
        "inspect_elroy_with_codex",
        j!({ "prompt": "Why is recall slow?" }),
    )
    .await;
    let out = json(&r);
    assert_eq!(out["scope"], "elroy");
    assert_eq!(out["status"], "completed");
    assert_eq!(out["touched_paths"], j!([]));
    assert_eq!(out["commit"], j!(null));
    assert_eq!(out["session_file_path"], j!(null));
    assert_eq!(
        out["summary"],
        format!(
            "Codex session thread-1 ran in {src} (scope: elroy).\nNo repository changes were detected during this run.\nFinal message: Added greet_tool."
        )
    );
    assert_eq!(head(source.path()), before);
    assert!(is_clean(source.path()));
    assert!(!source.path().join("greet_tool").exists());
    let args = env.args(1);
    assert_eq!(args[3], "read-only");
    let log_path = env.home.path().join("logs/elroy.log");
    assert_eq!(
        args.last().unwrap(),
        &format!(
            "Inspect the Elroy source tree. This is a read-only task: do not create, modify or delete any file. Report concrete findings with file paths and line numbers, the risks you see, and suggested next steps.\n\nInspection request:\nWhy is recall slow?\n\nElroy log file: {}\nRecent log excerpt:\n2026-11-30T05:59:59.000Z INFO elroy: started\n",
            log_path.display()
        )
    );

    // Without logs; a Codex that writes anyway is reported, and still nothing is committed.
    let r = call(
        &ctx,
        "inspect_elroy_with_codex",
        j!({ "prompt": "MISBEHAVE", "include_logs": false }),
    )
    .await;
    let out = json(&r);
    assert_eq!(
        env.args(2).last().unwrap(),
        "Inspect the Elroy source tree. This is a read-only task: do not create, modify or delete any file. Report concrete findings with file paths and line numbers, the risks you see, and suggested next steps.\n\nInspection request:\nMISBEHAVE"
    );
    assert_eq!(out["touched_paths"], j!(["greet_tool"]));
    assert_eq!(out["commit"], j!(null));
    assert!(out["summary"].as_str().unwrap().ends_with(
        "Paths changed during this run: greet_tool\nWarning: files changed during a read-only inspection.\nFinal message: Added greet_tool."
    ));
    assert_eq!(head(source.path()), before);
}

#[tokio::test]
async fn list_codex_sessions_filters_by_scope() {
    let env = Env::new();
    let source = tempfile::tempdir().unwrap();
    let src = source.path().display().to_string();
    let ctx = env.context(&[("ELROY_ELROY_SOURCE_PATH", src.as_str())]);
    json(&call(&ctx, "edit_contrib_with_codex", j!({ "prompt": "one" })).await);
    json(
        &call(
            &ctx,
            "inspect_elroy_with_codex",
            j!({ "prompt": "two", "include_logs": false }),
        )
        .await,
    );
    let failed = call(
        &ctx,
        "edit_contrib_with_codex",
        j!({ "prompt": "BREAK it" }),
    )
    .await;
    assert_eq!(
        failed.content,
        "Error invoking tool edit_contrib_with_codex: Codex session thread-3 failed: model refused"
    );

    let ids = |v: &serde_json::Value| -> Vec<String> {
        v["sessions"]
            .as_array()
            .unwrap()
            .iter()
            .map(|s| s["session_id"].as_str().unwrap().to_owned())
            .collect()
    };
    let all = json(&call(&ctx, "list_codex_sessions", j!({})).await);
    assert_eq!(ids(&all), ["thread-3", "thread-2", "thread-1"]);
    let keys: Vec<&String> = all["sessions"][0].as_object().unwrap().keys().collect();
    assert_eq!(
        keys,
        [
            "session_id",
            "scope",
            "repo_path",
            "status",
            "started_at",
            "updated_at",
            "summary",
            "final_message",
            "touched_paths",
            "commit"
        ]
    );
    assert_eq!(all["sessions"][0]["status"], "failed");
    assert_eq!(all["sessions"][0]["final_message"], "model refused");
    let started = all["sessions"][2]["started_at"].as_str().unwrap();
    assert!(
        started.starts_with("2026-11-30T06:00:") && started.ends_with(".000000Z"),
        "{started}"
    );

    let contrib = json(&call(&ctx, "list_codex_sessions", j!({ "scope": "contrib" })).await);
    assert_eq!(ids(&contrib), ["thread-3", "thread-1"]);
    let elroy = json(&call(&ctx, "list_codex_sessions", j!({ "scope": " ELROY " })).await);
    assert_eq!(ids(&elroy), ["thread-2"]);
    let one = json(&call(&ctx, "list_codex_sessions", j!({ "limit": 1 })).await);
    assert_eq!(ids(&one), ["thread-3"]);
    assert_eq!(
        call(&ctx, "list_codex_sessions", j!({ "scope": "plugins" }))
            .await
            .content,
        "Error invoking tool list_codex_sessions: scope must be 'contrib', 'elroy', or omitted"
    );
    assert_eq!(
        call(&ctx, "list_codex_sessions", j!({ "limit": 0 }))
            .await
            .content,
        "Error invoking tool list_codex_sessions: limit must be at least 1"
    );
    // The failed run's changes stay uncommitted.
    assert_eq!(log(&env.contrib()).len(), 2);
}

#[tokio::test]
async fn failures_timeouts_and_launch_errors() {
    let env = Env::new();
    let ctx = env.context(&[("ELROY_CODEX_TIMEOUT_SECONDS", "1")]);
    let silent = call(&ctx, "edit_contrib_with_codex", j!({ "prompt": "SILENT" })).await;
    assert_eq!(
        silent.content,
        "Error invoking tool edit_contrib_with_codex: Codex session thread-1 failed: Codex did not emit a final assistant message."
    );
    let slow = call(&ctx, "edit_contrib_with_codex", j!({ "prompt": "SLEEP" })).await;
    assert_eq!(
        slow.content,
        "Error invoking tool edit_contrib_with_codex: Codex session thread-2 timed out after 1 seconds"
    );
    let rows = env.store.list_all();
    // The thread id printed before the hang names the session.
    assert_eq!(rows[1].status.as_str(), "timed_out");
    assert_eq!(rows[1].session_id, "thread-2");
    assert_eq!(
        call(&ctx, "edit_contrib_with_codex", j!({ "prompt": "  " }))
            .await
            .content,
        "Error invoking tool edit_contrib_with_codex: prompt must not be empty"
    );

    let ctx = env.context(&[("ELROY_CODEX_COMMAND", "/nonexistent/codex --flag")]);
    let missing = call(&ctx, "edit_contrib_with_codex", j!({ "prompt": "x" })).await;
    assert_eq!(
        missing.content,
        "Error invoking tool edit_contrib_with_codex: Unable to launch Codex: No such file or directory (os error 2)"
    );
    assert_eq!(env.store.list_all().len(), 2);

    let gone = env.home.path().join("no-such-tree");
    let ctx = env.context(&[("ELROY_ELROY_SOURCE_PATH", gone.to_str().unwrap())]);
    assert_eq!(
        call(&ctx, "inspect_elroy_with_codex", j!({ "prompt": "x" }))
            .await
            .content,
        format!(
            "Error invoking tool inspect_elroy_with_codex: elroy_source_path {} is not a directory; set elroy_source_path to the directory of the Elroy source code",
            gone.display()
        )
    );
}
