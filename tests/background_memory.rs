//! Background memory work after a turn (`docs/behaviour.md#automatic-memory-creation`) is recorded
//! in the versioned home as its own commit, so `elroy undo` can take it back like a tool call.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use crate::common;

use std::process::Stdio;

use common::{TestHome, stderr, stdout};
use elroy_testkit::{MockServer, Reply};

#[test]
fn automatic_memory_is_its_own_history_commit() {
    let server = MockServer::start();
    server
        .push(Reply::text("Noted: green tea it is."))
        .push(Reply::text(
            "# Priya's tea preference\nPriya prefers green tea in the afternoon.",
        ));
    let home = TestHome::new();
    std::fs::create_dir_all(home.home()).unwrap();
    std::fs::write(
        home.home().join("elroy.conf.yaml"),
        format!(
            "chat_model: testkit-model\nchat_model_api_base: {}\nmessages_between_memory: 1\n",
            server.base_url()
        ),
    )
    .unwrap();
    let out = home
        .cmd()
        .env("ELROY_NOW", "2026-11-30T10:00:00Z")
        .args(["message", "I like green tea in the afternoon"])
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    let memory = home.home().join("memories/Priya_s_tea_preference.md");
    assert!(
        memory.exists(),
        "memories: {:?}",
        std::fs::read_dir(home.home().join("memories")).map(|d| d.count())
    );

    let history = home.cmd().arg("history").output().unwrap();
    let log = stdout(&history);
    let newest = log.lines().next().unwrap_or_default();
    assert!(
        newest.ends_with("automatic memory: memories/Priya_s_tea_preference.md"),
        "{log}"
    );
    assert!(!log.contains("external edit"), "{log}");

    let undo = home.cmd().arg("undo").output().unwrap();
    assert!(undo.status.success(), "{}", stderr(&undo));
    assert!(!memory.exists());
}
