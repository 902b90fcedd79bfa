//! The model clients of a session (`docs/behaviour.md#model-providers`): the chat model and the
//! fast model for background work, both [`ChatModel`]s (the orchestrator's model port).

use std::sync::Arc;
use std::time::Duration;

use elroy_config::Config;
use elroy_llm::select::EnvLookup;
use elroy_llm::{ChatModel, LlmError, ModelEndpoint, ModelRole, Protocol};

/// The clients a session talks to.
pub struct Models {
    /// The chat model.
    pub chat: Arc<dyn ChatModel>,
    /// The chat model's wire protocol (the validator's user-first rule for Anthropic).
    pub protocol: Protocol,
    /// The fast model for background work, when it differs from the chat model
    /// (`docs/behaviour.md#choosing-the-chat-model`: it defaults to the chat model and its
    /// endpoint); `None` means the chat model.
    pub fast: Option<Arc<dyn ChatModel>>,
}

impl std::fmt::Debug for Models {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Models")
            .field("chat", &self.chat.model_name())
            .field(
                "fast",
                &self.fast.as_ref().map(|m| m.model_name().to_owned()),
            )
            .finish()
    }
}

impl Models {
    /// Builds the clients for `config`, with `env` for provider keys (the process environment in
    /// the binary). Each client has the default retries, `llm_timeout_seconds` (at least 1) as
    /// its idle timeout and `enable_caching`.
    ///
    /// A configured fast model that cannot be built (no key for its provider, a bad endpoint) is
    /// reported through `warn` — `fast model {name}: {reason}; background work uses the chat
    /// model` — and background work uses the chat model.
    ///
    /// # Errors
    /// [`LlmError`] when no chat model can be chosen or its client built.
    pub fn build(
        config: &Config,
        env: EnvLookup<'_>,
        warn: &dyn Fn(&str),
    ) -> Result<Self, LlmError> {
        let idle = Duration::from_secs(config.settings.llm_timeout_seconds.max(1));
        let endpoint = elroy_llm::select::endpoint(config, ModelRole::Chat, env)?;
        let protocol = endpoint.protocol;
        let chat = client(config, endpoint.clone(), idle)?;
        let fast = match elroy_llm::select::endpoint(config, ModelRole::Fast, env) {
            Ok(fast) if fast == endpoint => None,
            Ok(fast) => {
                let name = fast.name.clone();
                match client(config, fast, idle) {
                    Ok(model) => Some(model),
                    Err(e) => {
                        warn(&fast_warning(&name, &e));
                        None
                    }
                }
            }
            Err(e) => {
                let name = config.settings.fast_model.clone().unwrap_or_default();
                warn(&fast_warning(&name, &e));
                None
            }
        };
        Ok(Models {
            chat,
            protocol,
            fast,
        })
    }
}

fn fast_warning(name: &str, error: &LlmError) -> String {
    format!("fast model {name}: {error}; background work uses the chat model")
}

/// A chat client for `endpoint` with the default retries, `idle` as the idle timeout and
/// `enable_caching` (Anthropic prompt-cache markers), sending no configured secret value
/// ([`crate::redacting_model`]).
fn client(
    config: &Config,
    endpoint: ModelEndpoint,
    idle: Duration,
) -> Result<Arc<dyn ChatModel>, LlmError> {
    let model = elroy_llm::chat_client_with_caching(
        endpoint,
        elroy_llm::RetryPolicy::default(),
        elroy_llm::Timeouts {
            idle,
            ..elroy_llm::Timeouts::default()
        },
        config.settings.enable_caching,
    )?;
    // The secret values the permission gate removes from results leave no request either.
    let secrets = elroy_permissions::Redactor::new(crate::permissions::secret_values(config));
    Ok(crate::redacting_model::redacting(model, secrets))
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]
    use std::sync::Mutex;

    use super::*;

    fn config(flags: &[(&str, &str)]) -> Config {
        let home = std::env::temp_dir().join("elroy-runtime-models-test-home-unused");
        let options = elroy_config::LoadOptions {
            home: Some(home),
            flags: flags
                .iter()
                .map(|(k, v)| ((*k).to_owned(), (*v).to_owned(), format!("--{k}")))
                .collect(),
            cwd: std::env::temp_dir(),
            ..elroy_config::LoadOptions::default()
        };
        Config::load(&options).unwrap()
    }

    /// A configured fast model that cannot be built is a warning, not a silent fallback (the
    /// kind: every reason the fast client fails — a missing key for its provider, an unknown
    /// endpoint — reaches the user). No request is made.
    #[test]
    fn a_fast_model_that_cannot_be_built_is_a_warning() {
        let env = |name: &str| (name == "OPENAI_API_KEY").then(|| "sk-test".to_owned());
        let warnings = Mutex::new(Vec::new());
        let warn = |m: &str| warnings.lock().unwrap().push(m.to_owned());
        // Anthropic fast model, no Anthropic key.
        let models = Models::build(
            &config(&[
                ("chat_model", "gpt-4o"),
                ("fast_model", "claude-3-5-haiku-latest"),
            ]),
            &env,
            &warn,
        )
        .unwrap();
        assert!(models.fast.is_none());
        let seen = warnings.lock().unwrap().clone();
        assert_eq!(seen.len(), 1, "{seen:?}");
        assert!(
            seen[0].starts_with("fast model claude-3-5-haiku-latest: ")
                && seen[0].contains("ANTHROPIC_API_KEY")
                && seen[0].ends_with("; background work uses the chat model"),
            "{seen:?}"
        );
        // A fast model equal to the chat model, or one that builds, warns about nothing.
        warnings.lock().unwrap().clear();
        let same = Models::build(&config(&[("chat_model", "gpt-4o")]), &env, &warn).unwrap();
        assert!(same.fast.is_none());
        let other = Models::build(
            &config(&[("chat_model", "gpt-4o"), ("fast_model", "gpt-4o-mini")]),
            &env,
            &warn,
        )
        .unwrap();
        assert_eq!(other.fast.unwrap().model_name(), "gpt-4o-mini");
        assert!(warnings.lock().unwrap().is_empty());
    }
}
