//! Choosing the model, its protocol, endpoint and key (`docs/behaviour.md#model-providers`,
//! `docs/behaviour.md#embeddings`).

use elroy_config::Config;

use crate::LlmError;

/// Which configured model a client is for; selects the `{role}_api_base` / `{role}_api_key` keys.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ModelRole {
    /// `chat_model`: the conversation.
    Chat,
    /// `fast_model`: background work; defaults to the chat model and its endpoint.
    Fast,
    /// `embedding_model`: recall vectors.
    Embedding,
}

impl ModelRole {
    /// `chat_model`, `fast_model` or `embedding_model`.
    pub fn key(self) -> &'static str {
        match self {
            ModelRole::Chat => "chat_model",
            ModelRole::Fast => "fast_model",
            ModelRole::Embedding => "embedding_model",
        }
    }
}

/// The wire protocol of an endpoint.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Protocol {
    /// OpenAI chat completions (`POST {base}/chat/completions`, `POST {base}/embeddings`); also
    /// Gemini's OpenAI-compatible endpoint, Ollama, vLLM, llama.cpp, LM Studio.
    OpenAi,
    /// Anthropic Messages (`POST {base}/v1/messages`, `x-api-key`), served by
    /// [`GenaiAnthropicChat`](crate::GenaiAnthropicChat).
    Anthropic,
}

/// Where and how to reach one model.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ModelEndpoint {
    /// The protocol.
    pub protocol: Protocol,
    /// The configured name after alias resolution (for messages and the `model` column).
    pub name: String,
    /// The name sent to the server (provider prefix removed).
    pub model: String,
    /// The base URL without a trailing slash, for example `https://api.openai.com/v1`.
    pub base_url: String,
    /// The key, if one was found. `None` only when a base URL was configured (local servers).
    pub api_key: Option<String>,
    /// `openai_organization`, sent as `OpenAI-Organization` to OpenAI-protocol endpoints.
    pub organization: Option<String>,
}

/// Default chat model when only an Anthropic key is available
/// (`docs/behaviour.md#choosing-the-chat-model`).
pub const DEFAULT_ANTHROPIC_MODEL: &str = "claude-sonnet-4-5-20250929";
/// The message when no chat model is configured and none can be inferred
/// (`docs/behaviour.md#choosing-the-chat-model` step 3).
pub const NO_MODEL_MESSAGE: &str = "Could not infer chat model: set chat_model (ELROY_CHAT_MODEL) or one of ANTHROPIC_API_KEY, OPENAI_API_KEY, GEMINI_API_KEY, or ELROY_CHAT_MODEL_API_BASE with ELROY_CHAT_MODEL for a local server; without a model, `elroy tools` calls every tool and `elroy` on a terminal opens the interface";

/// Resolves the aliases of `docs/behaviour.md#model-aliases` (`sonnet`, `opus`, `haiku`, `o1`,
/// `o1_mini`, `gpt-5`, `gpt5-mini`, `gpt5-nano`); other names are returned unchanged.
pub fn resolve_alias(name: &str) -> &str {
    match name {
        "sonnet" => "claude-sonnet-4-5-20250929",
        "opus" => "claude-opus-4-5-20251101",
        "haiku" => "claude-3-5-haiku-20241022",
        "o1" => "openai/o1",
        "o1_mini" => "openai/o1-mini",
        "gpt-5" => "openai/gpt-5",
        "gpt5-mini" => "openai/gpt-5-mini",
        "gpt5-nano" => "openai/gpt-5-nano",
        other => other,
    }
}

/// Reads process environment variables; tests pass their own.
pub type EnvLookup<'a> = &'a dyn Fn(&str) -> Option<String>;

/// The process environment, ignoring empty values.
pub fn process_env(name: &str) -> Option<String> {
    std::env::var(name).ok().filter(|v| !v.is_empty())
}

fn anthropic_key(config: &Config, env: EnvLookup<'_>) -> Option<String> {
    env("ANTHROPIC_API_KEY").or_else(|| config.settings.anthropic_api_key.clone())
}

fn openai_key(config: &Config, env: EnvLookup<'_>) -> Option<String> {
    config
        .settings
        .openai_api_key
        .clone()
        .or_else(|| env("OPENAI_API_KEY"))
}

/// The chat model name (`docs/behaviour.md#choosing-the-chat-model`): `chat_model` (aliases
/// resolved), else inferred from the available keys: Anthropic, then OpenAI (`gpt-5`), then Gemini.
///
/// # Errors
/// [`LlmError::NoModel`] with [`NO_MODEL_MESSAGE`].
pub fn chat_model_name(config: &Config, env: EnvLookup<'_>) -> Result<String, LlmError> {
    if let Some(name) = &config.settings.chat_model {
        return Ok(resolve_alias(name).to_owned());
    }
    if anthropic_key(config, env).is_some() {
        return Ok(DEFAULT_ANTHROPIC_MODEL.to_owned());
    }
    if openai_key(config, env).is_some() {
        return Ok(resolve_alias("gpt-5").to_owned());
    }
    if env("GEMINI_API_KEY").is_some() {
        return Ok("gemini/gemini-2.0-flash".to_owned());
    }
    Err(LlmError::NoModel(NO_MODEL_MESSAGE.to_owned()))
}

/// The chat model that will be used and why, for `elroy config`: `("gpt-5", "inferred from
/// OPENAI_API_KEY")`, `("claude-sonnet-4-5-20250929", "alias sonnet")`; `None` when none can be
/// chosen. A `chat_model` set without an alias has the reason `""` (its source says where it was
/// set).
pub fn chat_model_choice(config: &Config, env: EnvLookup<'_>) -> Option<(String, String)> {
    if let Some(name) = &config.settings.chat_model {
        let resolved = resolve_alias(name);
        let why = if resolved == name {
            String::new()
        } else {
            format!("alias {name}")
        };
        return Some((resolved.to_owned(), why));
    }
    let name = chat_model_name(config, env).ok()?;
    let why = if env("ANTHROPIC_API_KEY").is_some() {
        "inferred from ANTHROPIC_API_KEY"
    } else if config.settings.anthropic_api_key.is_some() {
        "inferred from anthropic_api_key"
    } else if env("OPENAI_API_KEY").is_some() {
        "inferred from OPENAI_API_KEY"
    } else if config.settings.openai_api_key.is_some() {
        "inferred from openai_api_key"
    } else {
        "inferred from GEMINI_API_KEY"
    };
    Some((name, why.to_owned()))
}

/// The endpoint for `role` (`docs/behaviour.md#provider-endpoint-and-key`): protocol from the name,
/// base URL from `{role}_api_base` (the fast model falls back to the chat model's settings), key
/// from `{role}_api_key` then the provider's variables.
///
/// # Errors
/// [`LlmError::NoModel`] when no chat model can be chosen; [`LlmError::MissingKey`] when no key
/// is found and no base URL is configured; [`LlmError::NoModel`] for an empty `embedding_model`.
pub fn endpoint(
    config: &Config,
    role: ModelRole,
    env: EnvLookup<'_>,
) -> Result<ModelEndpoint, LlmError> {
    let chat = chat_model_name(config, env);
    let name = match role {
        ModelRole::Chat => chat?,
        ModelRole::Fast => match &config.settings.fast_model {
            Some(n) => resolve_alias(n).to_owned(),
            None => chat?,
        },
        ModelRole::Embedding => config
            .settings
            .embedding_model
            .clone()
            .ok_or_else(|| LlmError::NoModel("embedding_model is empty".into()))?,
    };
    // `{role}_api_base` and `{role}_api_key`; the fast model inherits the chat model's.
    let keys = &config.settings;
    let (role_base, role_key) = match role {
        ModelRole::Chat => (&keys.chat_model_api_base, &keys.chat_model_api_key),
        ModelRole::Fast => (&keys.fast_model_api_base, &keys.fast_model_api_key),
        ModelRole::Embedding => (
            &keys.embedding_model_api_base,
            &keys.embedding_model_api_key,
        ),
    };
    let (role_base, role_key) = match role {
        ModelRole::Fast => (
            role_base
                .clone()
                .or_else(|| keys.chat_model_api_base.clone()),
            role_key.clone().or_else(|| keys.chat_model_api_key.clone()),
        ),
        _ => (role_base.clone(), role_key.clone()),
    };

    let (protocol, model, default_base, provider_key, key_hint) =
        if let Some(rest) = name.strip_prefix("anthropic/") {
            (
                Protocol::Anthropic,
                rest.to_owned(),
                "https://api.anthropic.com".to_owned(),
                anthropic_key(config, env),
                "ANTHROPIC_API_KEY",
            )
        } else if name.starts_with("claude") {
            (
                Protocol::Anthropic,
                name.clone(),
                "https://api.anthropic.com".to_owned(),
                anthropic_key(config, env),
                "ANTHROPIC_API_KEY",
            )
        } else if let Some(rest) = name.strip_prefix("gemini/") {
            (
                Protocol::OpenAi,
                rest.to_owned(),
                "https://generativelanguage.googleapis.com/v1beta/openai".to_owned(),
                env("GEMINI_API_KEY"),
                "GEMINI_API_KEY",
            )
        } else {
            let model = name.strip_prefix("openai/").unwrap_or(&name).to_owned();
            let mut base = keys.openai_api_base.clone();
            if role == ModelRole::Embedding {
                base = keys.openai_embedding_api_base.clone().or(base);
            }
            (
                Protocol::OpenAi,
                model,
                base.unwrap_or_else(|| "https://api.openai.com/v1".to_owned()),
                openai_key(config, env),
                "OPENAI_API_KEY",
            )
        };
    let api_key = role_key.or(provider_key);
    if api_key.is_none() && role_base.is_none() {
        return Err(LlmError::MissingKey {
            model: name,
            hint: format!(
                "set {role}_api_key (ELROY_{upper}_API_KEY) or {key_hint}, or point {role}_api_base at a server that needs no key",
                role = role.key(),
                upper = role.key().to_uppercase(),
            ),
        });
    }
    let base_url = role_base
        .unwrap_or(default_base)
        .trim_end_matches('/')
        .to_owned();
    Ok(ModelEndpoint {
        protocol,
        name,
        model,
        base_url,
        api_key,
        organization: keys.openai_organization.clone(),
    })
}

/// Whether embeddings are available (`docs/behaviour.md#embeddings`): a non-empty `embedding_model`
/// whose endpoint resolves.
pub fn embeddings_available(config: &Config, env: EnvLookup<'_>) -> bool {
    endpoint(config, ModelRole::Embedding, env).is_ok()
}

#[cfg(test)]
mod tests {
    use super::*;
    use elroy_config::LoadOptions;

    fn config(yaml: &str) -> (tempfile::TempDir, Config) {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("elroy.conf.yaml");
        std::fs::write(&file, yaml).unwrap();
        let options = LoadOptions {
            home: Some(dir.path().to_path_buf()),
            config_file: Some(file),
            cwd: dir.path().to_path_buf(),
            ..LoadOptions::default()
        };
        let cfg = Config::load(&options).unwrap();
        (dir, cfg)
    }

    fn env_of<'a>(pairs: &'a [(&'a str, &'a str)]) -> impl Fn(&str) -> Option<String> + 'a {
        move |name| {
            pairs
                .iter()
                .find(|(k, _)| *k == name)
                .map(|(_, v)| (*v).to_owned())
        }
    }

    #[test]
    fn inference_order_and_failure() {
        let (_d, c) = config("{}");
        assert_eq!(
            chat_model_name(&c, &env_of(&[])).unwrap_err().to_string(),
            NO_MODEL_MESSAGE
        );
        assert_eq!(
            chat_model_name(
                &c,
                &env_of(&[("GEMINI_API_KEY", "g"), ("OPENAI_API_KEY", "o")])
            )
            .unwrap(),
            "openai/gpt-5"
        );
        assert_eq!(
            chat_model_name(
                &c,
                &env_of(&[("ANTHROPIC_API_KEY", "a"), ("OPENAI_API_KEY", "o")])
            )
            .unwrap(),
            DEFAULT_ANTHROPIC_MODEL
        );
        assert_eq!(
            chat_model_name(&c, &env_of(&[("GEMINI_API_KEY", "g")])).unwrap(),
            "gemini/gemini-2.0-flash"
        );
    }

    #[test]
    fn local_openai_compatible_server() {
        let (_d, c) =
            config("chat_model: llama3.1\nchat_model_api_base: http://127.0.0.1:11434/v1/\n");
        let e = endpoint(&c, ModelRole::Chat, &env_of(&[])).unwrap();
        assert_eq!(e.protocol, Protocol::OpenAi);
        assert_eq!(e.model, "llama3.1");
        assert_eq!(e.base_url, "http://127.0.0.1:11434/v1");
        assert_eq!(e.api_key, None);
        let fast = endpoint(&c, ModelRole::Fast, &env_of(&[])).unwrap();
        assert_eq!(fast, e);
    }

    #[test]
    fn prefixes_and_keys() {
        let (_d, c) = config("chat_model: openai/anthropic/claude-3-5-sonnet\n");
        let e = endpoint(&c, ModelRole::Chat, &env_of(&[("OPENAI_API_KEY", "sk")])).unwrap();
        assert_eq!(
            (e.protocol, e.model.as_str()),
            (Protocol::OpenAi, "anthropic/claude-3-5-sonnet")
        );
        assert_eq!(e.api_key.as_deref(), Some("sk"));
        let missing = endpoint(&c, ModelRole::Chat, &env_of(&[])).unwrap_err();
        assert!(
            missing
                .to_string()
                .contains("set chat_model_api_key (ELROY_CHAT_MODEL_API_KEY) or OPENAI_API_KEY"),
            "{missing}"
        );

        let (_d, c) = config("chat_model: sonnet\n");
        let e = endpoint(&c, ModelRole::Chat, &env_of(&[("ANTHROPIC_API_KEY", "a")])).unwrap();
        assert_eq!(e.protocol, Protocol::Anthropic);
        assert_eq!(e.model, DEFAULT_ANTHROPIC_MODEL);
        assert_eq!(e.base_url, "https://api.anthropic.com");

        let (_d, c) = config("chat_model: gemini/gemini-2.0-flash\n");
        let e = endpoint(&c, ModelRole::Chat, &env_of(&[("GEMINI_API_KEY", "g")])).unwrap();
        assert_eq!(e.model, "gemini-2.0-flash");
        assert_eq!(
            e.base_url,
            "https://generativelanguage.googleapis.com/v1beta/openai"
        );
    }

    #[test]
    fn anthropic_prefix_base_override_and_key_order() {
        let (_d, c) = config(
            "chat_model: anthropic/claude-3-5-haiku-20241022\nchat_model_api_base: http://127.0.0.1:9/\n",
        );
        let e = endpoint(&c, ModelRole::Chat, &env_of(&[("ANTHROPIC_API_KEY", "a")])).unwrap();
        assert_eq!(e.protocol, Protocol::Anthropic);
        assert_eq!(e.name, "anthropic/claude-3-5-haiku-20241022");
        assert_eq!(e.model, "claude-3-5-haiku-20241022");
        assert_eq!(e.base_url, "http://127.0.0.1:9");
        assert_eq!(e.api_key.as_deref(), Some("a"));
        // A base URL without any key is allowed (a local proxy).
        assert_eq!(
            endpoint(&c, ModelRole::Chat, &env_of(&[])).unwrap().api_key,
            None
        );
        // `{role}_api_key` comes first.
        let (_d, c) = config("chat_model: claude-x\nchat_model_api_key: own\n");
        let e = endpoint(&c, ModelRole::Chat, &env_of(&[("ANTHROPIC_API_KEY", "a")])).unwrap();
        assert_eq!(
            (e.protocol, e.base_url.as_str(), e.api_key.as_deref()),
            (
                Protocol::Anthropic,
                "https://api.anthropic.com",
                Some("own")
            )
        );
    }

    #[test]
    fn embeddings_follow_their_own_keys() {
        let (_d, c) = config("{}");
        assert!(!embeddings_available(&c, &env_of(&[])));
        assert!(embeddings_available(
            &c,
            &env_of(&[("OPENAI_API_KEY", "k")])
        ));
        let (_d, c) = config("embedding_model_api_base: http://127.0.0.1:9/v1\n");
        let e = endpoint(&c, ModelRole::Embedding, &env_of(&[])).unwrap();
        assert_eq!(e.model, "text-embedding-3-small");
        assert_eq!(e.base_url, "http://127.0.0.1:9/v1");
    }

    /// `elroy config` shows the model that will be used and why.
    #[test]
    fn chat_model_choice_says_why() {
        let (_d, plain) = config("");
        assert_eq!(chat_model_choice(&plain, &env_of(&[])), None);
        assert_eq!(
            chat_model_choice(&plain, &env_of(&[("OPENAI_API_KEY", "sk")])),
            Some(("openai/gpt-5".into(), "inferred from OPENAI_API_KEY".into()))
        );
        assert_eq!(
            chat_model_choice(
                &plain,
                &env_of(&[("OPENAI_API_KEY", "sk"), ("ANTHROPIC_API_KEY", "a")])
            ),
            Some((
                DEFAULT_ANTHROPIC_MODEL.into(),
                "inferred from ANTHROPIC_API_KEY".into()
            ))
        );
        let (_d, alias) = config("chat_model: sonnet\n");
        assert_eq!(
            chat_model_choice(&alias, &env_of(&[])),
            Some((DEFAULT_ANTHROPIC_MODEL.into(), "alias sonnet".into()))
        );
        let (_d, named) = config("chat_model: gpt-4o\n");
        assert_eq!(
            chat_model_choice(&named, &env_of(&[])),
            Some(("gpt-4o".into(), String::new()))
        );
    }
}
