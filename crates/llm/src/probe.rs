//! First run without a model (issue 15 item 10): which local OpenAI-compatible model server
//! answers on loopback, and what to tell a person who has no model at all.

use std::time::Duration;

use serde_json::Value;

/// A local model server to look for: its name and its usual port on `127.0.0.1`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LocalCandidate {
    /// The server's name (`Ollama`).
    pub name: &'static str,
    /// Its usual port.
    pub port: u16,
}

/// The usual local servers, in the order they are preferred: Ollama (11434), llama.cpp's server
/// (8080), LM Studio (1234), vLLM (8000).
pub const LOCAL_SERVERS: &[LocalCandidate] = &[
    LocalCandidate {
        name: "Ollama",
        port: 11434,
    },
    LocalCandidate {
        name: "llama.cpp",
        port: 8080,
    },
    LocalCandidate {
        name: "LM Studio",
        port: 1234,
    },
    LocalCandidate {
        name: "vLLM",
        port: 8000,
    },
];

/// How long each server gets to answer.
pub const PROBE_TIMEOUT: Duration = Duration::from_millis(300);

/// A local server that answered.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LocalServer {
    /// The candidate's name.
    pub name: &'static str,
    /// The base URL to configure as `chat_model_api_base`: `http://127.0.0.1:{port}/v1`.
    pub base_url: String,
    /// The model ids it lists (`data[].id` of `GET /v1/models`), in its order; may be empty.
    pub models: Vec<String>,
}

impl LocalServer {
    /// The settings that use this server: `ELROY_CHAT_MODEL_API_BASE=…` and, when it lists a
    /// model, `ELROY_CHAT_MODEL=…` (its first model), as environment-variable lines.
    pub fn settings(&self) -> Vec<String> {
        let mut lines = vec![format!("ELROY_CHAT_MODEL_API_BASE={}", self.base_url)];
        lines.push(format!(
            "ELROY_CHAT_MODEL={}",
            self.models
                .first()
                .map_or("<a model the server lists>", String::as_str)
        ));
        lines
    }
}

/// Asks every candidate at once (`GET http://127.0.0.1:{port}/v1/models`, `timeout` each) and
/// returns the first candidate, in `candidates` order, that answered HTTP 200 with a JSON body;
/// `None` when none did. Never fails: a refused connection, a timeout or another answer counts as
/// "not there". Only loopback is contacted.
pub async fn probe_local_servers(
    candidates: &[LocalCandidate],
    timeout: Duration,
) -> Option<LocalServer> {
    crate::install_tls();
    let client = reqwest::Client::builder()
        .timeout(timeout)
        .connect_timeout(timeout)
        .no_proxy()
        .build()
        .ok()?;
    let probes = candidates.iter().map(|candidate| {
        let client = client.clone();
        async move {
            let base_url = format!("http://127.0.0.1:{}/v1", candidate.port);
            let response = client.get(format!("{base_url}/models")).send().await.ok()?;
            if !response.status().is_success() {
                return None;
            }
            let body: Value = response.json().await.ok()?;
            let models = body
                .get("data")
                .and_then(Value::as_array)
                .map(|data| {
                    data.iter()
                        .filter_map(|m| m.get("id").and_then(Value::as_str).map(str::to_owned))
                        .collect()
                })
                .unwrap_or_default();
            Some(LocalServer {
                name: candidate.name,
                base_url,
                models,
            })
        }
    });
    futures_util::future::join_all(probes)
        .await
        .into_iter()
        .flatten()
        .next()
}

/// The few lines shown when no chat model is configured and no local server answered: the three
/// ways to get a model.
pub fn no_model_help() -> Vec<String> {
    vec![
        "No chat model is configured. Three ways to get one:".to_owned(),
        "  1. A provider key: export ANTHROPIC_API_KEY=… (or OPENAI_API_KEY, GEMINI_API_KEY); the model is chosen from it.".to_owned(),
        "  2. A local server (Ollama, llama.cpp, LM Studio, vLLM): export ELROY_CHAT_MODEL_API_BASE=http://127.0.0.1:11434/v1 and ELROY_CHAT_MODEL=<model>.".to_owned(),
        "  3. No model: `elroy tools list` and `elroy tools call NAME` use the agenda, memories and notes directly.".to_owned(),
        "docs/models.md has the details.".to_owned(),
    ]
}
