//! OpenAI-compatible embeddings (`docs/behaviour.md#embeddings`): `POST {base}/embeddings` with
//! `{"model", "input": [text]}`; vectors are L2-normalised.

use std::time::Duration;

use elroy_core::BoxFuture;
use serde_json::{Value, json};

use crate::{Embedder, LlmError, ModelEndpoint};

/// An embedding client for one OpenAI-compatible endpoint.
#[derive(Debug, Clone)]
pub struct OpenAiEmbedder {
    http: reqwest::Client,
    endpoint: ModelEndpoint,
    /// Waits after HTTP 429/5xx: 1, 2, 4, 8 s (five attempts in all).
    delays: Vec<Duration>,
}

impl OpenAiEmbedder {
    /// A client for `endpoint`.
    ///
    /// # Errors
    /// [`LlmError::Connect`] when the HTTP client cannot be built.
    pub fn new(endpoint: ModelEndpoint, timeout: Duration) -> Result<Self, LlmError> {
        crate::install_tls();
        let http = reqwest::Client::builder()
            .connect_timeout(Duration::from_secs(30))
            .timeout(timeout)
            .build()
            .map_err(|e| LlmError::Connect {
                url: endpoint.base_url.clone(),
                message: e.to_string(),
            })?;
        Ok(OpenAiEmbedder {
            http,
            endpoint,
            delays: [1, 2, 4, 8].map(Duration::from_secs).to_vec(),
        })
    }

    /// Replaces the retry waits (tests use short ones).
    pub fn with_delays(mut self, delays: Vec<Duration>) -> Self {
        self.delays = delays;
        self
    }

    async fn embed_inner(&self, text: &str) -> Result<Vec<f32>, LlmError> {
        let url = format!("{}/embeddings", self.endpoint.base_url);
        let mut input = text.to_owned();
        let mut attempt = 0;
        loop {
            let mut builder = self
                .http
                .post(&url)
                .json(&json!({"model": self.endpoint.model, "input": [input]}));
            if let Some(key) = &self.endpoint.api_key {
                builder = builder.bearer_auth(key);
            }
            let response = builder.send().await.map_err(|e| LlmError::Connect {
                url: url.clone(),
                message: e.to_string(),
            })?;
            let status = response.status().as_u16();
            let body = response.text().await.unwrap_or_default();
            if (200..300).contains(&status) {
                return parse_embedding(&body);
            }
            let retry = if status == 429 || status >= 500 {
                true
            } else if status == 400 && body.to_lowercase().contains("context length") {
                let chars: Vec<char> = input.chars().collect();
                input = chars[chars.len() / 2..].iter().collect();
                true
            } else {
                false
            };
            match self.delays.get(attempt) {
                Some(delay) if retry => {
                    tokio::time::sleep(*delay).await;
                    attempt += 1;
                }
                _ => {
                    return Err(LlmError::Status {
                        url,
                        status,
                        message: body.chars().take(300).collect(),
                    });
                }
            }
        }
    }
}

/// Reads `data[0].embedding` and L2-normalises it.
///
/// # Errors
/// [`LlmError::Protocol`] when the body has no embedding.
pub fn parse_embedding(body: &str) -> Result<Vec<f32>, LlmError> {
    let value: Value = serde_json::from_str(body)
        .map_err(|e| LlmError::Protocol(format!("embedding response is not JSON ({e})")))?;
    let vector: Vec<f32> = value
        .pointer("/data/0/embedding")
        .and_then(Value::as_array)
        .ok_or_else(|| LlmError::Protocol("embedding response has no data[0].embedding".into()))?
        .iter()
        .map(|x| x.as_f64().unwrap_or(0.0) as f32)
        .collect();
    let norm = vector.iter().map(|x| x * x).sum::<f32>().sqrt();
    if norm == 0.0 {
        return Ok(vector);
    }
    Ok(vector.into_iter().map(|x| x / norm).collect())
}

impl Embedder for OpenAiEmbedder {
    fn model_name(&self) -> &str {
        &self.endpoint.name
    }

    fn embed<'a>(&'a self, text: &'a str) -> BoxFuture<'a, Result<Vec<f32>, LlmError>> {
        Box::pin(async move {
            if text.trim().is_empty() {
                return Err(LlmError::Protocol("empty text is never embedded".into()));
            }
            self.embed_inner(text).await
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn blocking_embedder_against_the_testkit() {
        use elroy_core::Embedder as _;
        let server = elroy_testkit::MockServer::start();
        let endpoint = ModelEndpoint {
            protocol: crate::Protocol::OpenAi,
            name: "text-embedding-3-small".into(),
            model: "text-embedding-3-small".into(),
            base_url: server.base_url(),
            api_key: Some("k".into()),
            organization: None,
        };
        let e = BlockingEmbedder(OpenAiEmbedder::new(endpoint, Duration::from_secs(5)).unwrap());
        let v = e.embed("the user's dog is named Biscuit").unwrap();
        assert_eq!(v.len(), 64);
        let norm: f32 = v.iter().map(|x| x * x).sum();
        assert!((norm - 1.0).abs() < 1e-4);
        let sent = &server.requests()[0];
        assert_eq!(sent.path, "/v1/embeddings");
        assert_eq!(sent.body["input"][0], "the user's dog is named Biscuit");
        assert_eq!(e.model(), "text-embedding-3-small");
    }

    #[test]
    fn normalises() {
        let v = parse_embedding(r#"{"data":[{"embedding":[3,4]}]}"#).unwrap();
        assert_eq!(v, [0.6, 0.8]);
        assert!(parse_embedding("{}").is_err());
    }
}

/// [`OpenAiEmbedder`] behind elroy-core's synchronous [`elroy_core::Embedder`], for stores (which
/// have no async runtime). Each call runs the request on a short-lived thread with its own
/// single-threaded runtime, so it is safe to call from inside an async task.
#[derive(Debug, Clone)]
pub struct BlockingEmbedder(pub OpenAiEmbedder);

impl elroy_core::Embedder for BlockingEmbedder {
    fn model(&self) -> &str {
        Embedder::model_name(&self.0)
    }

    fn embed(&self, text: &str) -> Result<Vec<f32>, elroy_core::EmbedError> {
        let client = self.0.clone();
        let text = text.to_owned();
        let joined = std::thread::spawn(move || {
            let runtime = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .map_err(|e| LlmError::Connect {
                    url: client.endpoint.base_url.clone(),
                    message: e.to_string(),
                })?;
            runtime.block_on(Embedder::embed(&client, &text))
        })
        .join();
        match joined {
            Ok(result) => result.map_err(|e| elroy_core::EmbedError(e.to_string())),
            Err(_) => Err(elroy_core::EmbedError("the embedding thread failed".into())),
        }
    }
}
