//! `elroy models fetch`'s download (`elroy_llm::model_files`) against a loopback server that
//! serves a model directory the Hugging Face way (`/{name}/resolve/main/{file}`, the SHA-256 as
//! `X-Linked-ETag`).
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::collections::HashMap;
use std::sync::Arc;

use axum::extract::{Path, State};
use axum::http::{HeaderMap, HeaderValue, StatusCode};
use axum::response::IntoResponse;
use elroy_llm::model_files::{FetchError, fetch_model};
use sha2::{Digest, Sha256};

type Files = Arc<HashMap<String, (Vec<u8>, Option<String>)>>;

async fn serve_file(
    State(files): State<Files>,
    Path((name, file)): Path<(String, String)>,
) -> impl IntoResponse {
    match files.get(&format!("{name}/{file}")) {
        Some((bytes, etag)) => {
            let mut headers = HeaderMap::new();
            if let Some(etag) = etag {
                headers.insert(
                    "x-linked-etag",
                    HeaderValue::from_str(&format!("\"{etag}\"")).unwrap(),
                );
            }
            (StatusCode::OK, headers, bytes.clone()).into_response()
        }
        None => StatusCode::NOT_FOUND.into_response(),
    }
}

async fn start(files: Files) -> String {
    let app = axum::Router::new()
        .route(
            "/{name}/resolve/main/{file}",
            axum::routing::get(serve_file),
        )
        .with_state(files);
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
    format!("http://{addr}")
}

fn sha(bytes: &[u8]) -> String {
    Sha256::digest(bytes)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

const FILES: [&str; 4] = [
    "config.json",
    "tokenizer.json",
    "sentence_bert_config.json",
    "model.safetensors",
];

#[tokio::test]
async fn fetch_downloads_each_file_with_its_checksum_and_reports_progress() {
    let mut files = HashMap::new();
    for f in FILES {
        let bytes = format!("contents of {f}").repeat(1000).into_bytes();
        let digest = sha(&bytes);
        files.insert(format!("tiny/{f}"), (bytes, Some(digest)));
    }
    let files: Files = Arc::new(files);
    let base = start(files.clone()).await;
    let dir = tempfile::tempdir().unwrap();
    let model_dir = dir.path().join("models/tiny");
    let mut seen: Vec<(String, u64, Option<u64>)> = Vec::new();
    let written = fetch_model(&base, "tiny", &model_dir, &mut |f, done, total| {
        seen.push((f.to_owned(), done, total));
    })
    .await
    .unwrap();
    assert_eq!(written.len(), 4);
    for f in FILES {
        assert_eq!(
            std::fs::read(model_dir.join(f)).unwrap(),
            files[&format!("tiny/{f}")].0
        );
        // Progress starts at 0 and ends at the file's size.
        let sizes: Vec<u64> = seen.iter().filter(|s| s.0 == f).map(|s| s.1).collect();
        assert_eq!(sizes.first(), Some(&0));
        assert_eq!(
            sizes.last().copied(),
            Some(files[&format!("tiny/{f}")].0.len() as u64)
        );
    }
    assert!(
        !std::fs::read_dir(&model_dir).unwrap().any(|e| e
            .unwrap()
            .file_name()
            .to_string_lossy()
            .ends_with(".part"))
    );
}

/// Two faults of the kind "the bytes are not the model": a file whose digest differs from the
/// server's, and the default model served with other bytes than its pinned digests. Neither
/// leaves a file behind.
#[tokio::test]
async fn a_checksum_mismatch_keeps_no_file() {
    let mut files = HashMap::new();
    for f in FILES {
        files.insert(format!("tiny/{f}"), (b"good".to_vec(), Some(sha(b"other"))));
        files.insert(
            format!("all-MiniLM-L6-v2/{f}"),
            (b"not the model".to_vec(), None),
        );
    }
    let base = start(Arc::new(files)).await;
    for name in ["tiny", "all-MiniLM-L6-v2"] {
        let dir = tempfile::tempdir().unwrap();
        let err = fetch_model(&base, name, dir.path(), &mut |_, _, _| {})
            .await
            .unwrap_err();
        assert!(matches!(err, FetchError::Checksum { .. }), "{err}");
        assert!(err.to_string().contains("checksum mismatch"), "{err}");
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0);
    }
}

#[tokio::test]
async fn a_missing_file_or_checksum_is_a_clear_error() {
    let mut files = HashMap::new();
    files.insert("nosum/config.json".to_owned(), (b"{}".to_vec(), None));
    let base = start(Arc::new(files)).await;
    let dir = tempfile::tempdir().unwrap();
    let err = fetch_model(&base, "nosum", dir.path(), &mut |_, _, _| {})
        .await
        .unwrap_err();
    assert!(matches!(err, FetchError::NoChecksum { .. }), "{err}");
    let err = fetch_model(&base, "absent", dir.path(), &mut |_, _, _| {})
        .await
        .unwrap_err();
    assert!(err.to_string().ends_with("HTTP 404"), "{err}");
}
