//! The soul composition rules of `docs/behaviour.md#the-soul-snapshot`.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use elroy_notebook::{BOOTSTRAP_CAP_BYTES, BOOTSTRAP_FILES, Soul, TRUNCATION_NOTICE};

#[test]
fn no_files_no_soul() {
    let home = tempfile::tempdir().unwrap();
    let soul = Soul::compose(home.path());
    assert!(soul.is_empty());
    assert_eq!(soul.text(), "");
    assert_eq!(soul.prompt_block(), None);
}

#[test]
fn all_files_in_fixed_order_trimmed() {
    let home = tempfile::tempdir().unwrap();
    // Written in reverse order, so directory order cannot be what orders them.
    for (i, name) in BOOTSTRAP_FILES.iter().enumerate().rev() {
        std::fs::write(home.path().join(name), format!("\n\n  {name} text {i}\n\n")).unwrap();
    }
    let soul = Soul::compose(home.path());
    let expected: Vec<String> = BOOTSTRAP_FILES
        .iter()
        .enumerate()
        .map(|(i, name)| format!("## {name}\n\n{name} text {i}"))
        .collect();
    assert_eq!(soul.text(), expected.join("\n\n"));
    assert_eq!(
        BOOTSTRAP_FILES,
        [
            "AGENTS.md",
            "SOUL.md",
            "IDENTITY.md",
            "USER.md",
            "TOOLS.md",
            "HEARTBEAT.md",
            "MEMORY.md"
        ]
    );
    assert_eq!(
        soul.prompt_block().unwrap(),
        format!(
            "<soul>\nThese files from my home directory were loaded when this session started. Changes I make with the memory tool appear here from the next session on.\n\n{}\n</soul>",
            soul.text()
        )
    );
}

#[test]
fn empty_file_gives_a_bare_heading_and_missing_files_are_skipped() {
    let home = tempfile::tempdir().unwrap();
    std::fs::write(home.path().join("TOOLS.md"), " \n\t\n").unwrap();
    std::fs::write(home.path().join("AGENTS.md"), "Use tabs.").unwrap();
    let soul = Soul::compose(home.path());
    assert_eq!(soul.text(), "## AGENTS.md\n\nUse tabs.\n\n## TOOLS.md\n\n");
    assert!(soul.warnings().is_empty());
}

#[test]
fn invalid_utf8_becomes_replacement_characters() {
    let home = tempfile::tempdir().unwrap();
    std::fs::write(home.path().join("USER.md"), b"caf\xe9 \xff ok").unwrap();
    assert_eq!(
        Soul::compose(home.path()).text(),
        "## USER.md\n\ncaf\u{fffd} \u{fffd} ok"
    );
}

#[test]
fn larger_files_are_capped_with_the_notice_and_left_unchanged() {
    let home = tempfile::tempdir().unwrap();
    // 2 MiB - 1 bytes of ASCII, then a 3-byte '€' cut by the cap after its first byte.
    let mut content = "a".repeat(BOOTSTRAP_CAP_BYTES - 1).into_bytes();
    content.extend_from_slice("€ tail beyond the cap".as_bytes());
    std::fs::write(home.path().join("MEMORY.md"), &content).unwrap();
    // Exactly at the cap: no notice.
    let exact = "b".repeat(BOOTSTRAP_CAP_BYTES);
    std::fs::write(home.path().join("SOUL.md"), &exact).unwrap();

    let soul = Soul::compose(home.path());
    let sections = soul.sections();
    assert_eq!(sections[0].file, "SOUL.md");
    assert!(!sections[0].truncated);
    assert_eq!(sections[0].text, exact);
    assert_eq!(sections[1].file, "MEMORY.md");
    assert!(sections[1].truncated);
    assert_eq!(
        sections[1].text,
        format!(
            "{}{}",
            "a".repeat(BOOTSTRAP_CAP_BYTES - 1),
            TRUNCATION_NOTICE
        )
    );
    assert!(
        soul.text()
            .ends_with("a\n[truncated: exceeds 2 MB bootstrap cap]")
    );
    assert_eq!(
        std::fs::read(home.path().join("MEMORY.md")).unwrap(),
        content
    );
}

#[cfg(unix)]
#[test]
fn unreadable_file_is_skipped_with_a_warning() {
    let home = tempfile::tempdir().unwrap();
    std::fs::create_dir(home.path().join("IDENTITY.md")).unwrap();
    std::fs::write(home.path().join("SOUL.md"), "x").unwrap();
    let soul = Soul::compose(home.path());
    assert_eq!(soul.text(), "## SOUL.md\n\nx");
    assert_eq!(soul.warnings().len(), 1);
    assert!(soul.warnings()[0].starts_with("Unable to read IDENTITY.md: "));
}
