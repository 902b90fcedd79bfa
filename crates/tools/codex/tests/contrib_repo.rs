//! `create_contrib_repo` (`docs/tools.md#create_contrib_repo`), and its sample plugin through the
//! plugin loader.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use crate::common;

use common::{Env, call, head_files, is_clean, log};
use elroy_core::ToolRegistry;
use serde_json::json as j;

#[tokio::test]
async fn creates_a_repo_whose_sample_plugin_is_loaded_and_callable() {
    let env = Env::new();
    let ctx = env.context(&[]);
    let repo = env.home.path().join("work/my-contrib");
    let shown = repo.display().to_string();
    let tail = format!(
        "Set contrib_tools_path to {shown} and restart Elroy to load its tools and panels."
    );

    // A relative path resolves against the working directory.
    let r = call(
        &ctx,
        "create_contrib_repo",
        j!({ "path": " work/my-contrib " }),
    )
    .await;
    assert_eq!(
        (r.content.as_str(), r.is_error),
        (
            format!("Created contrib repo at {shown} (added hello_tool, hello_panel, README.md, .gitignore). {tail}").as_str(),
            false
        )
    );
    assert_eq!(log(&repo), ["Initial Elroy contrib repo"]);
    assert_eq!(
        head_files(&repo),
        [".gitignore", "README.md", "hello_panel", "hello_tool"]
    );
    assert!(is_clean(&repo));
    assert_eq!(
        std::fs::read_to_string(repo.join("hello_tool")).unwrap(),
        elroy_tools_codex::stubs::HELLO_TOOL
    );
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = |f: &str| {
            std::fs::metadata(repo.join(f))
                .unwrap()
                .permissions()
                .mode()
                & 0o777
        };
        assert_eq!(
            (mode("hello_tool"), mode("hello_panel"), mode("README.md")),
            (0o755, 0o755, 0o644)
        );
        let git = git2::Repository::open(&repo).unwrap();
        let tree = git.head().unwrap().peel_to_tree().unwrap();
        assert_eq!(tree.get_name("hello_tool").unwrap().filemode(), 0o100_755);
        // No identity in the new repository: git's inherited one if complete, else the fallback.
        let inherited = git.config().ok().and_then(|c| {
            Some((
                c.get_string("user.name").ok()?,
                c.get_string("user.email").ok()?,
            ))
        });
        let (name, email) = inherited.unwrap_or_else(|| {
            (
                "Elroy Contrib".to_owned(),
                "elroy-contrib@example.local".to_owned(),
            )
        });
        let commit = git.head().unwrap().peel_to_commit().unwrap();
        assert_eq!(commit.author().name().unwrap(), name);
        assert_eq!(commit.author().email().unwrap(), email);
        // The commit time is the tool context's clock (2026-11-30T06:00Z and later).
        assert!(commit.time().seconds() >= 1_796_018_400);
        let mut config = git
            .config()
            .unwrap()
            .open_level(git2::ConfigLevel::Local)
            .unwrap();
        config.set_str("user.name", "Ana Ruiz").unwrap();
        config.set_str("user.email", "ana@example.local").unwrap();
    }

    // Nothing to add; then one stub missing in an existing repository.
    let again = call(&ctx, "create_contrib_repo", j!({ "path": shown })).await;
    assert_eq!(
        again.content,
        format!("Contrib repo at {shown} already has its stub files. {tail}")
    );
    std::fs::write(repo.join("README.md.bak"), "keep me").unwrap();
    std::fs::remove_file(repo.join("README.md")).unwrap();
    let updated = call(&ctx, "create_contrib_repo", j!({ "path": shown })).await;
    assert_eq!(
        updated.content,
        format!("Updated contrib repo at {shown} (added README.md). {tail}")
    );
    assert_eq!(
        log(&repo),
        ["Add Elroy contrib stubs", "Initial Elroy contrib repo"]
    );
    let git = git2::Repository::open(&repo).unwrap();
    let commit = git.head().unwrap().peel_to_commit().unwrap();
    assert_eq!(commit.author().name().unwrap(), "Ana Ruiz");
    assert_eq!(commit.committer().email().unwrap(), "ana@example.local");
    // Only the stub was committed; the user's other file is untouched and untracked.
    assert!(!head_files(&repo).contains(&"README.md.bak".to_owned()));
    assert_eq!(
        std::fs::read_to_string(repo.join("README.md.bak")).unwrap(),
        "keep me"
    );

    // The plugin loader finds the sample tool and panel; the tool is callable through the registry.
    let mut registry = ToolRegistry::new();
    let report = elroy_plugins::load_from(
        &env.home.path().join("no-contrib"),
        std::slice::from_ref(&repo),
        &[],
        60,
        &mut registry,
    );
    assert_eq!(report.warnings, Vec::<String>::new());
    assert_eq!(registry.names(), ["hello_contrib"]);
    assert_eq!(
        registry.origin("hello_contrib"),
        Some(&elroy_core::ToolOrigin::Plugin {
            path: repo.join("hello_tool")
        })
    );
    assert_eq!(
        registry
            .invoke("hello_contrib", Some(r#"{"name":"team"}"#), &ctx)
            .await
            .content,
        "Hello, team! (from the Elroy contrib repo)"
    );
    assert_eq!(
        registry
            .invoke("hello_contrib", Some("{}"), &ctx)
            .await
            .content,
        "Hello, world! (from the Elroy contrib repo)"
    );
    assert_eq!(report.panels.len(), 1);
    assert_eq!(report.panels[0].title, "Hello");
    assert_eq!(
        elroy_plugins::render_panel(&report.panels[0]),
        "# Hello from contrib\n\nThis tab is drawn by hello_panel.\n"
    );
}

#[tokio::test]
async fn path_errors() {
    let env = Env::new();
    let ctx = env.context(&[]);
    assert_eq!(
        call(&ctx, "create_contrib_repo", j!({ "path": "  " }))
            .await
            .content,
        "Error invoking tool create_contrib_repo: path must not be empty"
    );
    let file = env.home.path().join("a-file");
    std::fs::write(&file, "x").unwrap();
    assert_eq!(
        call(
            &ctx,
            "create_contrib_repo",
            j!({ "path": file.display().to_string() })
        )
        .await
        .content,
        format!(
            "Error invoking tool create_contrib_repo: Path exists and is not a directory: {}",
            file.display()
        )
    );
    // An existing directory inside another repository gets its own repository.
    let outer = env.home.path().join("outer");
    git2::Repository::init(&outer).unwrap();
    let inner = outer.join("plugins");
    std::fs::create_dir_all(&inner).unwrap();
    let r = call(
        &ctx,
        "create_contrib_repo",
        j!({ "path": inner.display().to_string() }),
    )
    .await;
    assert!(
        r.content.starts_with(&format!(
            "Created contrib repo at {} (added",
            inner.display()
        )),
        "{}",
        r.content
    );
    assert!(inner.join(".git").is_dir());
}

#[test]
fn schemas_equal_golden() {
    let shared = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../testdata");
    let golden: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(shared.join("golden/tools_schema.json")).unwrap(),
    )
    .unwrap();
    let registry = common::registry();
    assert_eq!(
        registry.names(),
        [
            "create_contrib_repo",
            "edit_contrib_with_codex",
            "inspect_elroy_with_codex",
            "list_codex_sessions"
        ]
    );
    for spec in registry.specs() {
        let expected = golden
            .as_array()
            .unwrap()
            .iter()
            .find(|e| e["function"]["name"] == spec.name.as_str())
            .unwrap();
        assert_eq!(
            serde_json::to_string(&spec.to_json()).unwrap(),
            serde_json::to_string(expected).unwrap()
        );
    }
}
