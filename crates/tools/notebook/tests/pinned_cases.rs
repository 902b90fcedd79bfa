//! Every pinned case of `docs/tool-rules.md#actions-and-checks` and the `memory` rows of R1
//! (`docs/behaviour.md#r1-an-edit-changes-only-what-it-matched`), R2, R5 and R6.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use crate::common;

use std::path::Path;

use common::{call, call_direct, context, read};
use serde_json::{Value, json};

const OK_ADD: &str = "ok (add \u{2192} MEMORY.md); loads next session";

/// Runs `args` on a home whose MEMORY.md holds `before` (`None`: missing) and returns the result
/// content, whether it is an error, and the file afterwards (`None`: still missing).
fn run(before: Option<&str>, args: Value, direct: bool) -> (String, bool, Option<String>) {
    let home = tempfile::tempdir().unwrap();
    if let Some(before) = before {
        std::fs::write(home.path().join("MEMORY.md"), before).unwrap();
    }
    let ctx = context(home.path());
    let r = if direct {
        call_direct(&ctx, &args)
    } else {
        call(&ctx, &args)
    };
    assert!(r.effects.is_empty());
    let after = std::fs::read_to_string(home.path().join("MEMORY.md")).ok();
    (r.content, r.is_error, after)
}

fn expect_ok(before: Option<&str>, args: Value, content: &str, after: &str) {
    for direct in [false, true] {
        let (c, e, a) = run(before, args.clone(), direct);
        assert_eq!((c.as_str(), e), (content, false), "{args}");
        assert_eq!(a.as_deref(), Some(after), "{args}");
    }
}

fn expect_err(before: Option<&str>, args: Value, message: &str, direct: bool) {
    let (c, e, a) = run(before, args.clone(), direct);
    assert_eq!(
        (c.as_str(), e),
        (
            format!("Error invoking tool memory: {message}").as_str(),
            true
        ),
        "{args}"
    );
    assert_eq!(a.as_deref(), before, "file must be unchanged: {args}");
}

#[test]
fn replace_without_with_is_an_error() {
    for direct in [false, true] {
        expect_err(
            Some("x\n"),
            json!({"action":"replace","text":"x"}),
            "with is required for replace",
            direct,
        );
        expect_err(
            Some("- a\n"),
            json!({"action":"replace","text":"- a"}),
            "with is required for replace",
            direct,
        );
    }
    expect_err(
        Some("x\n"),
        json!({"action":"replace","text":"x","with":null}),
        "with is required for replace",
        true,
    );
    expect_err(
        Some("x\n"),
        json!({"action":"replace","text":"x","with":5}),
        "with must be a string",
        true,
    );
}

#[test]
fn add_to_missing_file_and_user_target() {
    expect_ok(
        None,
        json!({"action":"add","text":"prefers dark mode"}),
        OK_ADD,
        "- prefers dark mode\n",
    );
    let home = tempfile::tempdir().unwrap();
    let ctx = context(home.path());
    let r = call(
        &ctx,
        &json!({"action":"add","target":"user","text":"works in UTC+5:30"}),
    );
    assert_eq!(
        (r.content.as_str(), r.is_error),
        ("ok (add \u{2192} USER.md); loads next session", false)
    );
    assert_eq!(read(home.path(), "USER.md"), "- works in UTC+5:30\n");
    assert!(!home.path().join("MEMORY.md").exists());
    // target "" and null mean self.
    let r = call_direct(&ctx, &json!({"action":"add","target":"","text":"a"}));
    assert_eq!(r.content, OK_ADD);
    let r = call_direct(&ctx, &json!({"action":"add","target":null,"text":"b"}));
    assert_eq!(r.content, OK_ADD);
    assert_eq!(read(home.path(), "MEMORY.md"), "- a\n- b\n");
}

#[test]
fn add_trims_and_appends() {
    expect_ok(
        Some("# Notes\n\n- a\n\n\n"),
        json!({"action":"add","text":"b"}),
        OK_ADD,
        "# Notes\n\n- a\n- b\n",
    );
    expect_ok(
        Some("- a\n"),
        json!({"action":"add","text":"   padded   "}),
        OK_ADD,
        "- a\n- padded\n",
    );
    for direct in [false, true] {
        expect_err(
            Some("- a\n"),
            json!({"action":"add","text":"   "}),
            "text must not be empty",
            direct,
        );
    }
    // `docs/formats.md#notes-file-format` example.
    expect_ok(
        Some("# Long-term notes\n\n- Ask before booking travel.\n"),
        json!({"action":"add","text":"The user prefers short answers in the morning."}),
        OK_ADD,
        "# Long-term notes\n\n- Ask before booking travel.\n- The user prefers short answers in the morning.\n",
    );
}

#[test]
fn replace_cases() {
    let ok = "ok (replace \u{2192} MEMORY.md); loads next session";
    expect_ok(
        Some("- prefers dark mode\n- likes verbose logs\n"),
        json!({"action":"replace","text":"verbose logs","with":"terse logs"}),
        ok,
        "- prefers dark mode\n- likes terse logs\n",
    );
    expect_ok(
        Some("x and x"),
        json!({"action":"replace","text":"x","with":"y"}),
        ok,
        "y and x",
    );
    expect_ok(
        Some("x and x\n"),
        json!({"action":"replace","text":"x","with":"y"}),
        ok,
        "y and x\n",
    );
    expect_ok(
        Some("price $5"),
        json!({"action":"replace","text":"$5","with":"cost $$10"}),
        ok,
        "price cost $$10",
    );
    expect_ok(
        Some("price $5\n"),
        json!({"action":"replace","text":"$5","with":"$& $1 ${0}"}),
        ok,
        "price $& $1 ${0}\n",
    );
    expect_ok(
        Some("path C:\\dir\n"),
        json!({"action":"replace","text":"C:\\dir","with":"D:\\new\\1"}),
        ok,
        "path D:\\new\\1\n",
    );
    expect_ok(
        Some("- prefers dark mode\n- likes verbose logs\n"),
        json!({"action":"replace","text":"mode\n- likes","with":"mode, likes"}),
        ok,
        "- prefers dark mode, likes verbose logs\n",
    );
    // R1: only the matched text changes.
    expect_ok(
        Some("## Tools\n- runs nightly\n## Search\nOld engine\n## Git\n- main branch\n"),
        json!({"action":"replace","text":"## Search\nOld","with":"## Search\nNew"}),
        ok,
        "## Tools\n- runs nightly\n## Search\nNew engine\n## Git\n- main branch\n",
    );
    // `with` may be empty when the tool runs without the validator.
    let (c, e, a) = run(
        Some("a b"),
        json!({"action":"replace","text":" b","with":""}),
        true,
    );
    assert_eq!((c.as_str(), e, a.as_deref()), (ok, false, Some("a")));
    for direct in [false, true] {
        expect_err(
            Some("- a\n"),
            json!({"action":"replace","text":"nonexistent","with":"x"}),
            "not found: nonexistent",
            direct,
        );
        expect_err(
            Some("abc\n"),
            json!({"action":"replace","text":"a.c","with":"z"}),
            "not found: a.c",
            direct,
        );
        expect_err(
            Some("- a\n"),
            json!({"action":"replace","text":"","with":"z"}),
            "text must not be empty",
            direct,
        );
    }
    // A miss on a missing file leaves it missing.
    expect_err(
        None,
        json!({"action":"replace","text":"x","with":"y"}),
        "not found: x",
        false,
    );
}

#[test]
fn remove_cases() {
    let ok = "ok (remove \u{2192} MEMORY.md); loads next session";
    expect_ok(
        Some("- prefers dark mode\n- likes verbose logs\n"),
        json!({"action":"remove","text":"- prefers dark mode\n"}),
        ok,
        "- likes verbose logs\n",
    );
    expect_ok(
        Some("- prefers dark mode\n"),
        json!({"action":"remove","text":"dark"}),
        ok,
        "- prefers  mode\n",
    );
    expect_ok(
        Some("- tea\n- green tea\n"),
        json!({"action":"remove","text":"tea"}),
        ok,
        "- \n- green tea\n",
    );
    expect_ok(
        Some("## Tools\n- runs nightly\n## Search\nOld engine\n## Git\n- main branch\n"),
        json!({"action":"remove","text":"Old engine\n"}),
        ok,
        "## Tools\n- runs nightly\n## Search\n## Git\n- main branch\n",
    );
    for direct in [false, true] {
        expect_err(
            Some("- a\n"),
            json!({"action":"remove","text":"zzz"}),
            "not found: zzz",
            direct,
        );
        expect_err(
            Some("- \n- green tea\n"),
            json!({"action":"remove","text":"coffee"}),
            "not found: coffee",
            direct,
        );
        expect_err(
            Some("- a\n"),
            json!({"action":"remove","text":""}),
            "text must not be empty",
            direct,
        );
    }
}

#[test]
fn unknown_action_and_target() {
    for direct in [false, true] {
        expect_err(
            Some("- a\n"),
            json!({"action":"delete","text":"a"}),
            "unknown action: delete",
            direct,
        );
        expect_err(
            Some("- a\n"),
            json!({"action":"Add","text":"a"}),
            "unknown action: Add",
            direct,
        );
        for target in ["memory", "User", "../USER"] {
            expect_err(
                Some("- a\n"),
                json!({"action":"add","target":target,"text":"x"}),
                &format!("unknown target: {target}"),
                direct,
            );
        }
    }
    expect_err(Some("- a\n"), json!({"text":"a"}), "unknown action: ", true);
    expect_err(
        Some("- a\n"),
        json!({"action":5,"text":"a"}),
        "unknown action: 5",
        true,
    );
    expect_err(
        Some("- a\n"),
        json!({"action":"add","target":["user"],"text":"a"}),
        "unknown target: [\"user\"]",
        true,
    );
    let home = tempfile::tempdir().unwrap();
    let ctx = context(home.path());
    call(&ctx, &json!({"action":"add","target":"../USER","text":"x"}));
    assert_eq!(
        std::fs::read_dir(home.path()).unwrap().count(),
        0,
        "nothing written"
    );
}

#[test]
fn text_must_be_a_string() {
    expect_err(
        Some("- a\n"),
        json!({"action":"add","text":5}),
        "text must be a string",
        true,
    );
    expect_err(
        Some("- a\n"),
        json!({"action":"remove"}),
        "text must be a string",
        true,
    );
    // Through the validator (`docs/tool-rules.md#actions-and-checks`, last paragraph).
    expect_err(
        Some("- a\n"),
        json!({"action":"add"}),
        "missing required argument 'text'",
        false,
    );
    expect_err(
        Some("- a\n"),
        json!({"action":"add","text":5}),
        "argument 'text' must be a string, got 5",
        false,
    );
}

#[test]
fn large_file_is_kept_whole() {
    let line = "- an entry that is there to make the file large\n";
    let before = line.repeat(3 * 1024 * 1024 / line.len() + 1);
    assert!(before.len() > 3 * 1024 * 1024);
    let (c, e, a) = run(Some(&before), json!({"action":"add","text":"x"}), false);
    assert_eq!((c.as_str(), e), (OK_ADD, false));
    assert_eq!(a.unwrap(), format!("{before}- x\n"));
}

#[test]
fn invalid_utf8_is_not_modified() {
    let home = tempfile::tempdir().unwrap();
    let path = home.path().join("MEMORY.md");
    std::fs::write(&path, b"- a\xff\n").unwrap();
    let r = call(&context(home.path()), &json!({"action":"add","text":"x"}));
    assert_eq!(
        (r.content.as_str(), r.is_error),
        (
            "Error invoking tool memory: MEMORY.md is not valid UTF-8; not modified",
            true
        )
    );
    assert_eq!(std::fs::read(&path).unwrap(), b"- a\xff\n");
}

#[test]
fn text_written_by_another_program_is_kept() {
    let home = tempfile::tempdir().unwrap();
    let ctx = context(home.path());
    std::fs::write(home.path().join("MEMORY.md"), "- a\n").unwrap();
    // Another program appends between two elroy operations.
    let mut f = std::fs::OpenOptions::new()
        .append(true)
        .open(home.path().join("MEMORY.md"))
        .unwrap();
    std::io::Write::write_all(&mut f, b"- b\n").unwrap();
    drop(f);
    call(&ctx, &json!({"action":"add","text":"c"}));
    assert_eq!(read(home.path(), "MEMORY.md"), "- a\n- b\n- c\n");
}

#[test]
fn multi_line_entry_stays_one_entry() {
    let home = tempfile::tempdir().unwrap();
    let ctx = context(home.path());
    call(&ctx, &json!({"action":"add","text":"line one\n\nline two"}));
    assert_eq!(read(home.path(), "MEMORY.md"), "- line one\n\nline two\n");
    call(
        &ctx,
        &json!({"action":"replace","text":"line two","with":"line 2"}),
    );
    assert_eq!(read(home.path(), "MEMORY.md"), "- line one\n\nline 2\n");
}

#[cfg(unix)]
#[test]
fn permission_bits_are_kept_and_user_home_is_created() {
    use std::os::unix::fs::PermissionsExt;
    let home = tempfile::tempdir().unwrap();
    let path = home.path().join("MEMORY.md");
    std::fs::write(&path, "- a\n").unwrap();
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o600)).unwrap();
    call(&context(home.path()), &json!({"action":"add","text":"b"}));
    assert_eq!(
        std::fs::metadata(&path).unwrap().permissions().mode() & 0o777,
        0o600
    );
    // A non-default user's home is created on the first write.
    let user_home = home.path().join("users/team");
    let mut ctx = context(home.path());
    ctx.services
        .insert(std::sync::Arc::new(elroy_notebook::Notebook::new(
            home.path(),
            &user_home,
        )));
    let r = call(&ctx, &json!({"action":"add","target":"user","text":"x"}));
    assert!(!r.is_error, "{}", r.content);
    assert_eq!(read(Path::new(&user_home), "USER.md"), "- x\n");
}
