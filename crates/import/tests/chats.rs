#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
//! `import_chats` through the library: a ChatGPT export inside its zip (deflate), a Claude.ai
//! export zip without `conversations.json`, progress reports, and the memories' dates and sources.

use std::io::Write;
use std::path::Path;

use elroy_config::{Config, LoadOptions};
use elroy_import::{ChatImportOptions, Granularity, IMPORT_SOURCE_TYPE, Source, import_chats};

fn config(root: &Path) -> Config {
    Config::load(&LoadOptions {
        home: Some(root.join("home")),
        flags: vec![("versioned_home".into(), "false".into(), "--flag".into())],
        cwd: root.to_path_buf(),
        user_dir: Some(root.to_path_buf()),
        ..LoadOptions::default()
    })
    .unwrap()
}

fn options(source: Source, path: &Path) -> ChatImportOptions {
    ChatImportOptions {
        source,
        paths: vec![path.to_path_buf()],
        user_home: None,
        since: None,
        project: None,
        exclude: Vec::new(),
        dry_run: false,
        granularity: Granularity::Span,
    }
}

const EXPORT: &str = r#"[{"title": "Bread", "create_time": 1709647200.5, "conversation_id": "c1",
  "current_node": "b",
  "mapping": {"a": {"parent": null, "message": {"author": {"role": "user"}, "create_time": 1709647200.5,
                    "content": {"content_type": "text", "parts": ["How long should rye dough proof?"]}}},
              "b": {"parent": "a", "message": {"author": {"role": "assistant"}, "create_time": 1709647260.0,
                    "content": {"content_type": "text", "parts": ["About three hours at room temperature."]}}}}}]"#;

fn zip_with(path: &Path, name: &str, text: &str) {
    let mut zip = zip::ZipWriter::new(std::fs::File::create(path).unwrap());
    let opts = zip::write::SimpleFileOptions::default()
        .compression_method(zip::CompressionMethod::Deflated);
    zip.start_file("user-123/chat.html", opts).unwrap();
    zip.write_all(b"<html></html>").unwrap();
    zip.start_file(name, opts).unwrap();
    zip.write_all(text.as_bytes()).unwrap();
    zip.finish().unwrap();
}

#[test]
fn chatgpt_zip_imports_with_dates_sources_and_progress() {
    let root = tempfile::tempdir().unwrap();
    let export = root.path().join("export.zip");
    zip_with(&export, "user-123/conversations.json", EXPORT);
    let config = config(root.path());
    let mut ticks = Vec::new();
    let report = import_chats(&config, &options(Source::ChatGpt, &export), &mut |p| {
        ticks.push(*p)
    })
    .unwrap();
    assert!(report.problems.is_empty(), "{report}");
    assert_eq!((report.memories, report.exchanges), (1, 1), "{report}");
    assert_eq!(report.names, ["Bread (2024-03-05)"]);
    let last = ticks.last().unwrap();
    assert_eq!((last.conversations, last.memories), (1, 1));
    assert!(last.bytes > 0 && last.bytes == last.total_bytes);

    let db = elroy_db::Db::open(match &config.paths.database {
        elroy_config::DatabaseLocation::File(p) => p,
        elroy_config::DatabaseLocation::Memory => unreachable!(),
    })
    .unwrap();
    let (created, sources): (String, String) = db
        .with_conn(|c| {
            c.query_row(
                "SELECT created_at, source_metadata FROM memories",
                [],
                |r| Ok((r.get(0)?, r.get(1)?)),
            )
        })
        .unwrap();
    assert!(
        created.starts_with("2024-03-05T14:00:00"),
        "dated when said: {created}"
    );
    assert!(sources.contains(IMPORT_SOURCE_TYPE), "{sources}");
    let text = std::fs::read_to_string(config.paths.memory_dir.join("Bread__2024-03-05.md"))
        .unwrap_or_else(|_| {
            let dir = std::fs::read_dir(&config.paths.memory_dir).unwrap();
            let names: Vec<_> = dir.flatten().map(|e| e.file_name()).collect();
            panic!("memory files: {names:?}")
        });
    assert!(
        text.contains("Imported from ChatGPT: conversation \"Bread\", 2024-03-05"),
        "{text}"
    );
    assert!(
        text.contains("User: How long should rye dough proof?"),
        "{text}"
    );
}

#[test]
fn a_zip_without_conversations_is_reported_not_imported() {
    let root = tempfile::tempdir().unwrap();
    let export = root.path().join("claude.zip");
    zip_with(&export, "users.json", "[]");
    let config = config(root.path());
    let report = import_chats(&config, &options(Source::Claude, &export), &mut |_| {}).unwrap();
    assert_eq!(report.memories, 0);
    assert_eq!(report.problems.len(), 1, "{report}");
    assert!(
        report.problems[0].reason.contains("no conversations.json"),
        "{report}"
    );
    // A second kind: a JSON document that is not an array.
    let file = root.path().join("conversations.json");
    std::fs::write(&file, r#"{"conversations": []}"#).unwrap();
    let report = import_chats(&config, &options(Source::Claude, &file), &mut |_| {}).unwrap();
    assert!(
        report.problems[0].reason.contains("not a Claude.ai export"),
        "{report}"
    );
}
