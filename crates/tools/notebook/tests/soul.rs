//! The soul snapshot is frozen for its session (`docs/behaviour.md#the-soul-snapshot`): a `memory`
//! tool write reaches disk at once, the composed soul does not change, and the next composition has
//! it.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use crate::common;

use elroy_notebook::{Notebook, Soul};
use serde_json::json;

#[test]
fn soul_is_frozen_until_the_next_session() {
    let home = tempfile::tempdir().unwrap();
    std::fs::write(home.path().join("SOUL.md"), "Be kind.\n").unwrap();
    std::fs::write(
        home.path().join("MEMORY.md"),
        "- Deploys happen on Thursdays.\n",
    )
    .unwrap();
    let ctx = common::context(home.path());
    let notebook = ctx.services.require::<Notebook>().unwrap();

    let session_one = notebook.soul();
    let text_before = session_one.text().to_owned();
    assert_eq!(
        text_before,
        "## SOUL.md\n\nBe kind.\n\n## MEMORY.md\n\n- Deploys happen on Thursdays."
    );

    let r = common::call(
        &ctx,
        &json!({"action":"replace","text":"Thursdays","with":"Fridays"}),
    );
    assert_eq!(
        r.content,
        "ok (replace \u{2192} MEMORY.md); loads next session"
    );
    let r = common::call(
        &ctx,
        &json!({"action":"add","target":"user","text":"Prefers short answers."}),
    );
    assert!(!r.is_error);
    assert_eq!(
        common::read(home.path(), "MEMORY.md"),
        "- Deploys happen on Thursdays.\n".replace("Thursdays", "Fridays")
    );

    // The same session's soul is unchanged.
    assert_eq!(session_one.text(), text_before);
    assert!(!session_one.text().contains("Fridays"));

    // A new session's soul has the change, in the fixed file order.
    let session_two = Soul::compose(home.path());
    assert_eq!(
        session_two.text(),
        "## SOUL.md\n\nBe kind.\n\n## USER.md\n\n- Prefers short answers.\n\n## MEMORY.md\n\n- Deploys happen on Fridays."
    );
    assert_ne!(session_one, session_two);
}
