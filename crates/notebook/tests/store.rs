//! [`Notebook`] on disk: edits under the lock, byte-identical files on every error, the display
//! path of a non-default user.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use elroy_notebook::{Edit, EditError, Notebook, NotebookError, Target};

#[test]
fn edits_and_misses() {
    let home = tempfile::tempdir().unwrap();
    let nb = Notebook::new(home.path(), home.path());
    assert_eq!(nb.read(Target::SelfNotes).unwrap(), "");
    nb.edit(Target::SelfNotes, &Edit::Add { text: "a".into() })
        .unwrap();
    nb.edit(Target::User, &Edit::Add { text: "u".into() })
        .unwrap();
    assert_eq!(nb.read(Target::SelfNotes).unwrap(), "- a\n");
    assert_eq!(nb.read(Target::User).unwrap(), "- u\n");
    let before = std::fs::read(nb.path(Target::SelfNotes)).unwrap();
    let err = nb
        .edit(Target::SelfNotes, &Edit::Remove { text: "zzz".into() })
        .unwrap_err();
    assert_eq!(err, NotebookError::Edit(EditError::NotFound("zzz".into())));
    assert_eq!(err.to_string(), "not found: zzz");
    assert_eq!(std::fs::read(nb.path(Target::SelfNotes)).unwrap(), before);
    // An empty text is refused before the lock or any file is touched.
    let fresh = tempfile::tempdir().unwrap();
    let nb = Notebook::new(fresh.path(), fresh.path());
    assert_eq!(
        nb.edit(
            Target::User,
            &Edit::Remove {
                text: String::new()
            }
        )
        .unwrap_err()
        .to_string(),
        "text must not be empty"
    );
    assert_eq!(std::fs::read_dir(fresh.path()).unwrap().count(), 0);
}

#[test]
fn unchanged_content_is_not_rewritten() {
    let home = tempfile::tempdir().unwrap();
    let nb = Notebook::new(home.path(), home.path());
    std::fs::write(nb.path(Target::SelfNotes), "same").unwrap();
    let before = std::fs::metadata(nb.path(Target::SelfNotes))
        .unwrap()
        .modified()
        .unwrap();
    std::thread::sleep(std::time::Duration::from_millis(20));
    nb.edit(
        Target::SelfNotes,
        &Edit::Replace {
            text: "same".into(),
            with: "same".into(),
        },
    )
    .unwrap();
    let after = std::fs::metadata(nb.path(Target::SelfNotes))
        .unwrap()
        .modified()
        .unwrap();
    assert_eq!(before, after);
}

#[test]
fn not_utf8_names_the_file() {
    let home = tempfile::tempdir().unwrap();
    let user_home = home.path().join("users/team");
    std::fs::create_dir_all(&user_home).unwrap();
    std::fs::write(user_home.join("USER.md"), b"\xff").unwrap();
    let nb = Notebook::new(home.path(), &user_home);
    assert_eq!(
        nb.edit(Target::User, &Edit::Add { text: "x".into() })
            .unwrap_err()
            .to_string(),
        "USER.md is not valid UTF-8; not modified"
    );
    assert_eq!(std::fs::read(user_home.join("USER.md")).unwrap(), b"\xff");
}
