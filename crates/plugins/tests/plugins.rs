//! The plugin protocol (`docs/tool-rules.md#plugins`): discovery, `--schema` probing, skipped
//! plugins, calls.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

use elroy_core::{ToolContext, ToolOrigin, ToolRegistry, UserInfo};
use elroy_plugins::TrustStore;

/// Trusts every plugin `contrib` and `entries` give, as the person does with
/// `elroy plugins trust --all`; the returned list is the one to load with.
pub(crate) fn trust_all(home: &Path, contrib: &Path, entries: &[PathBuf]) -> TrustStore {
    let store = TrustStore::new(home);
    let found = elroy_plugins::discover(contrib, entries);
    store.trust(&found.plugins, "2026-11-30T10:00:00Z").unwrap();
    store
}

fn plugin(dir: &Path, name: &str, script: &str) -> PathBuf {
    let path = dir.join(name);
    std::fs::write(&path, script).unwrap();
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
    path
}

const ECHO: &str = r#"#!/bin/sh
if [ "$1" = "--schema" ]; then
  cat <<'JSON'
[{"type":"function","function":{"name":"echo_args","description":"Echo the call.","parameters":{"type":"object","properties":{"text":{"type":"string","description":"Text."},"count":{"type":"integer"}},"required":["text"]}}},
 {"type":"function","function":{"name":"fail_with","description":"Fail.","parameters":{"type":"object","properties":{"mode":{"type":"string"}},"required":[]}}},
 {"type":"panel","title":"Echo panel"}]
JSON
  exit 0
fi
input=$(cat)
case "$ELROY_TOOL_NAME" in
  echo_args)
    printf 'tool=%s token=%s home=%s\n' "$ELROY_TOOL_NAME" "$ELROY_USER_TOKEN" "$ELROY_HOME"
    printf 'stdin=%s\n' "$input" ;;
  fail_with)
    case "$input" in
      *stderr*) echo "  something broke  " >&2; exit 3 ;;
      *silent*) exit 4 ;;
      *signal*) kill -9 $$ ;;
      *sleep*) sleep 30 ;;
      *empty*) exit 0 ;;
      *braces*) printf '{}\r\n' ;;
    esac ;;
esac
"#;

fn ctx(home: &Path) -> ToolContext {
    let mut ctx = ToolContext::new(UserInfo {
        id: None,
        token: "alice".into(),
        elroy_home: home.to_path_buf(),
        user_home: home.join("users/alice"),
    });
    ctx.cwd = home.to_path_buf();
    ctx
}

fn builtin_registry() -> ToolRegistry {
    // One built-in name a plugin might collide with.
    let mut r = ToolRegistry::new();
    r.register(elroy_core::sync_tool(Pwd));
    r
}

struct Pwd;
impl elroy_core::TypedTool for Pwd {
    type Args = elroy_core::NoArgs;
    const NAME: &'static str = "pwd";
    const EFFECT: elroy_core::ToolEffect = elroy_core::ToolEffect::HOME_READS;
    const DESCRIPTION: &'static str = "Where.";
    fn run(
        &self,
        _: &ToolContext,
        _: elroy_core::NoArgs,
    ) -> Result<elroy_core::ToolOutput, elroy_core::ToolError> {
        Ok(elroy_core::ToolOutput::text("/"))
    }
}

#[tokio::test]
async fn valid_plugins_load_and_invalid_ones_are_skipped_with_warnings() {
    let home = tempfile::tempdir().unwrap();
    let contrib = home.path().join("contrib");
    std::fs::create_dir_all(&contrib).unwrap();
    let echo = plugin(&contrib, "echo_tool", ECHO);
    let garbage = plugin(
        &contrib,
        "garbage",
        "#!/bin/sh\necho 'Usage: garbage [--help]'\n",
    );
    let failing = plugin(
        &contrib,
        "exits",
        "#!/bin/sh\necho 'no schema for you' >&2\nexit 3\n",
    );
    let bad_name = plugin(
        &contrib,
        "bad_name",
        "#!/bin/sh\necho '{\"type\":\"function\",\"function\":{\"name\":\"has space\",\"description\":\"x\"}}'\n",
    );
    let clash = plugin(
        &contrib,
        "clash",
        "#!/bin/sh\necho '{\"type\":\"function\",\"function\":{\"name\":\"pwd\",\"description\":\"mine\"}}'\n",
    );
    // Ignored silently: hidden, private, not executable, documentation.
    plugin(&contrib, ".hidden", ECHO);
    plugin(&contrib, "_private", ECHO);
    std::fs::write(contrib.join("README.md"), "# notes\n").unwrap();
    std::fs::write(contrib.join("not_exec"), ECHO).unwrap();
    // A second entry: a single file, the same file again (loaded once), and a missing path.
    let extra = home.path().join("extra");
    std::fs::create_dir_all(&extra).unwrap();
    let single = plugin(
        &extra,
        "single",
        "#!/bin/sh\n[ \"$1\" = --schema ] && echo '{\"type\":\"function\",\"function\":{\"name\":\"single\",\"description\":\"One.\"}}' && exit 0\necho one\n",
    );
    let missing = home.path().join("missing");

    let entries = [single.clone(), echo.clone(), missing.clone()];
    let trust = trust_all(home.path(), &contrib, &entries);
    let mut registry = builtin_registry();
    let report = elroy_plugins::load_from(&contrib, &entries, &trust, &[], 2, &mut registry);
    assert_eq!(
        registry.names(),
        ["pwd", "echo_args", "fail_with", "single"]
    );
    assert_eq!(registry.origin("pwd"), Some(&ToolOrigin::Builtin));
    assert_eq!(
        registry.origin("single"),
        Some(&ToolOrigin::Plugin {
            path: single.clone()
        })
    );
    assert_eq!(
        report.warnings,
        [
            format!("plugin {}: path does not exist", missing.display()),
            format!(
                "plugin {}: invalid schema: item 1: tool name 'has space' must match ^[A-Za-z0-9_-]{{1,64}}$",
                bad_name.display()
            ),
            format!("plugin {}: duplicate tool name 'pwd'", clash.display()),
            format!(
                "plugin {}: --schema exited with status 3: no schema for you",
                failing.display()
            ),
            format!(
                "plugin {}: --schema output is not valid JSON",
                garbage.display()
            ),
        ]
    );
    assert_eq!(
        report.panels,
        [elroy_plugins::Panel {
            title: "Echo panel".into(),
            path: echo.clone(),
            trust: trust.clone(),
        }]
    );
    // Plugin schemas are rendered as declared.
    assert_eq!(
        registry.get("echo_args").unwrap().spec().to_json()["function"]["parameters"]["properties"]
            ["count"],
        serde_json::json!({"type":"integer"})
    );

    // exclude_tools applies to plugins too.
    let mut registry = builtin_registry();
    elroy_plugins::load_from(
        &contrib,
        &[],
        &trust,
        &["fail_with".to_owned()],
        2,
        &mut registry,
    );
    assert_eq!(registry.names(), ["pwd", "echo_args"]);
}

#[tokio::test]
async fn calls_pass_arguments_on_stdin_and_map_failures() {
    let home = tempfile::tempdir().unwrap();
    let dir = home.path().join("plugins");
    std::fs::create_dir_all(&dir).unwrap();
    plugin(&dir, "echo_tool", ECHO);
    let none = home.path().join("none");
    let trust = trust_all(home.path(), &none, std::slice::from_ref(&dir));
    let mut registry = ToolRegistry::new();
    let report = elroy_plugins::load_from(&none, &[dir], &trust, &[], 1, &mut registry);
    assert!(report.warnings.is_empty(), "{:?}", report.warnings);
    let ctx = ctx(home.path());

    let ok = registry
        .invoke(
            "echo_args",
            Some(r#"{"text":"hé","count":"2","extra":true}"#),
            &ctx,
        )
        .await;
    assert_eq!(
        (ok.content.as_str(), ok.is_error),
        (
            format!(
                // The undeclared `extra` is dropped, and the result says so.
                "tool=echo_args token=alice home={}\nstdin={{\"text\":\"hé\",\"count\":2}}\n\nNote: ignored unknown argument 'extra'",
                home.path().display()
            )
            .as_str(),
            false
        )
    );
    let missing = registry.invoke("echo_args", Some("{}"), &ctx).await;
    assert_eq!(
        missing.content,
        "Error invoking tool echo_args: missing required argument 'text'"
    );

    let fail = |mode: &'static str| {
        let registry = &registry;
        let ctx = &ctx;
        async move {
            registry
                .invoke("fail_with", Some(&format!("{{\"mode\":\"{mode}\"}}")), ctx)
                .await
                .content
        }
    };
    assert_eq!(
        fail("stderr").await,
        "Error invoking tool fail_with: something broke"
    );
    assert_eq!(
        fail("silent").await,
        "Error invoking tool fail_with: plugin exited with status 4"
    );
    assert_eq!(
        fail("signal").await,
        "Error invoking tool fail_with: plugin terminated by signal 9"
    );
    assert_eq!(
        fail("sleep").await,
        "Error invoking tool fail_with: plugin timed out after 1 seconds"
    );
    assert_eq!(fail("empty").await, "Success");
    // Plugin output is opaque text (robustness R17); one trailing CRLF is removed.
    assert_eq!(fail("braces").await, "{}");
}

#[tokio::test]
async fn a_plugin_that_disappears_cannot_be_run() {
    let home = tempfile::tempdir().unwrap();
    let dir = home.path().join("p");
    std::fs::create_dir_all(&dir).unwrap();
    let path = plugin(
        &dir,
        "single",
        "#!/bin/sh\necho '{\"type\":\"function\",\"function\":{\"name\":\"single\",\"description\":\"One.\"}}'\n",
    );
    let none = home.path().join("none");
    let trust = trust_all(home.path(), &none, std::slice::from_ref(&dir));
    let mut registry = ToolRegistry::new();
    elroy_plugins::load_from(&none, &[dir], &trust, &[], 5, &mut registry);
    std::fs::remove_file(&path).unwrap();
    let r = registry.invoke("single", None, &ctx(home.path())).await;
    // Gone, so its content can no longer be checked against the trust list: not run.
    assert_eq!(
        r.content,
        format!(
            "Error invoking tool single: plugin {} is not run: it cannot be read (No such file or directory (os error 2))",
            path.display()
        )
    );
}

#[test]
fn panel_errors_are_shown_in_the_tab() {
    let home = tempfile::tempdir().unwrap();
    let path = plugin(
        home.path(),
        "panel",
        "#!/bin/sh\necho 'cannot draw' >&2\nexit 1\n",
    );
    let quiet = plugin(home.path(), "quiet", "#!/bin/sh\nexit 5\n");
    let trust = TrustStore::new(home.path());
    trust
        .trust(&[path.clone(), quiet.clone()], "2026-11-30T10:00:00Z")
        .unwrap();
    let panel = |path: PathBuf| elroy_plugins::Panel {
        title: "T".into(),
        path,
        trust: trust.clone(),
    };
    assert_eq!(
        elroy_plugins::render_panel(&panel(path)),
        "Panel error: cannot draw"
    );
    assert_eq!(
        elroy_plugins::render_panel(&panel(quiet)),
        "Panel error: exit status 5"
    );
}
