//! First run without a model: which local OpenAI-compatible model servers answer on loopback
//! ([`search`], the one search both front ends use), and what to tell a person who has no model
//! at all.

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
/// (8080, also the port of the repository's stand-in model, `scripts/local-model.sh`), LM Studio
/// (1234), vLLM (8000).
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

/// The variable that replaces the searched ports: a comma-separated list of ports
/// (`8080,11434`), each named after the usual server on that port, else "a local server". For a
/// server on an unusual port, and for tests (which cannot rely on the usual ports being free).
pub const PORTS_VARIABLE: &str = "ELROY_LOCAL_SERVER_PORTS";

/// The candidates [`search`] asks: [`LOCAL_SERVERS`], or the ports of [`PORTS_VARIABLE`] when
/// `ports` (its value) holds at least one port. Words that are not ports are skipped.
pub fn candidates(ports: Option<&str>) -> Vec<LocalCandidate> {
    let listed: Vec<LocalCandidate> = ports
        .unwrap_or_default()
        .split(',')
        .filter_map(|word| word.trim().parse::<u16>().ok())
        .filter(|&port| port != 0)
        .map(|port| LocalCandidate {
            name: LOCAL_SERVERS
                .iter()
                .find(|c| c.port == port)
                .map_or("a local server", |c| c.name),
            port,
        })
        .collect();
    if listed.is_empty() {
        LOCAL_SERVERS.to_vec()
    } else {
        listed
    }
}

/// The local-server search of both front ends: every candidate of [`candidates`] (from the
/// process's [`PORTS_VARIABLE`]) asked at once with [`PROBE_TIMEOUT`]; the servers that answered,
/// in candidate order. Takes at most about one timeout.
pub async fn search() -> Vec<LocalServer> {
    let ports = std::env::var(PORTS_VARIABLE).ok();
    find_local_servers(&candidates(ports.as_deref()), PROBE_TIMEOUT).await
}

/// Asks every candidate at once (`GET http://127.0.0.1:{port}/v1/models`, `timeout` each) and
/// returns the first candidate, in `candidates` order, that answered HTTP 200 with a JSON body;
/// `None` when none did. Never fails: a refused connection, a timeout or another answer counts as
/// "not there". Only loopback is contacted.
pub async fn probe_local_servers(
    candidates: &[LocalCandidate],
    timeout: Duration,
) -> Option<LocalServer> {
    find_local_servers(candidates, timeout)
        .await
        .into_iter()
        .next()
}

/// Asks every candidate at once, as [`probe_local_servers`], and returns every one that
/// answered, in `candidates` order (a port listed twice is asked once).
pub async fn find_local_servers(
    candidates: &[LocalCandidate],
    timeout: Duration,
) -> Vec<LocalServer> {
    crate::install_tls();
    let Ok(client) = reqwest::Client::builder()
        .timeout(timeout)
        .connect_timeout(timeout)
        .no_proxy()
        .build()
    else {
        return Vec::new();
    };
    let mut unique: Vec<LocalCandidate> = Vec::new();
    for candidate in candidates {
        if !unique.iter().any(|c| c.port == candidate.port) {
            unique.push(*candidate);
        }
    }
    let probes = unique.iter().map(|candidate| {
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
        .collect()
}

/// The chat model a pasted provider key is for, by the key's form: `sk-ant-…` Anthropic
/// ([`crate::select::DEFAULT_ANTHROPIC_MODEL`]), other `sk-…` OpenAI (`openai/gpt-5`), `AIza…`
/// Gemini (`gemini/gemini-2.0-flash`) — the models elroy infers from each provider's variable.
/// `None` for a key of another form.
pub fn model_for_key(key: &str) -> Option<&'static str> {
    let key = key.trim();
    if key.starts_with("sk-ant-") {
        Some(crate::select::DEFAULT_ANTHROPIC_MODEL)
    } else if key.starts_with("sk-") {
        Some(crate::select::resolve_alias("gpt-5"))
    } else if key.starts_with("AIza") {
        Some("gemini/gemini-2.0-flash")
    } else {
        None
    }
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
