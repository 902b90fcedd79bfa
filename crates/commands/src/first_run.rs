//! A first run without a chat model, front-end neutral: the choice a person makes (a local server
//! found by `elroy_llm::probe::search`, or a pasted provider key), starting the session with it
//! and saving it to the configuration file so the next start uses it too.

use elroy_llm::probe::{LocalServer, model_for_key};

use crate::ChatSession;

/// What a person picked on a first run.
#[derive(Clone, PartialEq, Eq)]
pub enum ModelChoice {
    /// A local OpenAI-compatible server and one of its models.
    Local {
        /// The server's name (`llama.cpp`).
        server: String,
        /// Its base URL (`http://127.0.0.1:8080/v1`), saved as `chat_model_api_base`.
        base_url: String,
        /// The model, saved as `chat_model`.
        model: String,
    },
    /// A provider key, saved as `chat_model_api_key`, with the model elroy infers for its
    /// provider, saved as `chat_model`.
    Key {
        /// The key as pasted (trimmed).
        key: String,
        /// The model for the key's provider.
        model: String,
    },
}

/// The key never reaches a log or a debug print.
impl std::fmt::Debug for ModelChoice {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ModelChoice::Local {
                server,
                base_url,
                model,
            } => f
                .debug_struct("Local")
                .field("server", server)
                .field("base_url", base_url)
                .field("model", model)
                .finish(),
            ModelChoice::Key { key, model } => f
                .debug_struct("Key")
                .field("key", &mask_key(key))
                .field("model", model)
                .finish(),
        }
    }
}

impl ModelChoice {
    /// A found server with its first listed model.
    ///
    /// # Errors
    /// [`FirstRunError::NoModel`] when the server lists no model.
    pub fn local(server: &LocalServer) -> Result<Self, FirstRunError> {
        let model = server
            .models
            .first()
            .ok_or_else(|| FirstRunError::NoModel {
                server: server.name.to_owned(),
                base_url: server.base_url.clone(),
            })?;
        Ok(ModelChoice::Local {
            server: server.name.to_owned(),
            base_url: server.base_url.clone(),
            model: model.clone(),
        })
    }

    /// A pasted provider key, its provider told by its form (`elroy_llm::probe::model_for_key`).
    ///
    /// # Errors
    /// [`FirstRunError::UnknownKey`] when the key's provider cannot be told.
    pub fn key(key: &str) -> Result<Self, FirstRunError> {
        let key = key.trim();
        let model = model_for_key(key).ok_or_else(|| FirstRunError::UnknownKey {
            masked: mask_key(key),
        })?;
        Ok(ModelChoice::Key {
            key: key.to_owned(),
            model: model.to_owned(),
        })
    }

    /// The chat model chosen.
    pub fn model(&self) -> &str {
        match self {
            ModelChoice::Local { model, .. } | ModelChoice::Key { model, .. } => model,
        }
    }

    /// The configuration keys and values that make the choice permanent.
    pub fn settings(&self) -> Vec<(&'static str, String)> {
        match self {
            ModelChoice::Local {
                base_url, model, ..
            } => vec![
                ("chat_model", model.clone()),
                ("chat_model_api_base", base_url.clone()),
            ],
            ModelChoice::Key { key, model } => vec![
                ("chat_model", model.clone()),
                ("chat_model_api_key", key.clone()),
            ],
        }
    }
}

/// Why a first-run choice cannot be made or used; `Display` is the sentence for the person.
#[derive(Debug, thiserror::Error)]
pub enum FirstRunError {
    /// The chosen local server lists no model.
    #[error(
        "{server} at {base_url} lists no model: load one in it, or set chat_model (ELROY_CHAT_MODEL) to a model it serves"
    )]
    NoModel {
        /// The server's name (`Ollama`).
        server: String,
        /// Its base URL.
        base_url: String,
    },
    /// The pasted key's provider cannot be told from its form.
    #[error(
        "{masked} is not a key elroy recognises (Anthropic keys start with sk-ant-, OpenAI keys with sk-, Gemini keys with AIza); for another provider set chat_model and chat_model_api_key in elroy.conf.yaml"
    )]
    UnknownKey {
        /// The key as it may be shown ([`mask_key`]).
        masked: String,
    },
    /// The session could not start with the chosen model.
    #[error("cannot use {model}: {source}")]
    CannotUse {
        /// The chosen model.
        model: String,
        /// Why its session could not start.
        #[source]
        source: elroy_runtime::RuntimeError,
    },
}

/// A key as it may be shown: its first three characters and last four, the rest as `…`
/// (`sk-…wxyz`); a key of fewer than 12 characters is shown as `…` alone.
pub fn mask_key(key: &str) -> String {
    let chars: Vec<char> = key.trim().chars().collect();
    if chars.len() < 12 {
        return "…".to_owned();
    }
    let head: String = chars[..3].iter().collect();
    let tail: String = chars[chars.len() - 4..].iter().collect();
    format!("{head}…{tail}")
}

/// Starts `chat`'s model session with `choice` ([`ChatSession::adopt_model`]) and saves it to
/// the configuration file (`elroy_config::set_key`: comments and order kept, mode 0600).
/// Returns the lines to show: which model is used now, and where it was saved (or why saving
/// failed: the session runs all the same).
///
/// # Errors
/// [`FirstRunError::CannotUse`]: the model cannot be used; nothing was saved then.
pub fn adopt_and_save(
    chat: &mut ChatSession,
    choice: &ModelChoice,
) -> Result<Vec<String>, FirstRunError> {
    let (base, key) = match choice {
        ModelChoice::Local { base_url, .. } => (Some(base_url.as_str()), None),
        ModelChoice::Key { key, .. } => (None, Some(key.as_str())),
    };
    chat.adopt_model(choice.model(), base, key)
        .map_err(|source| FirstRunError::CannotUse {
            model: choice.model().to_owned(),
            source,
        })?;
    let mut lines = vec![match choice {
        ModelChoice::Local {
            server,
            base_url,
            model,
        } => format!("Using `{model}` from {server} at {base_url}."),
        ModelChoice::Key { key, model } => {
            format!("Using `{model}` with the key {}.", mask_key(key))
        }
    }];
    let file = chat.runtime().config.writable_file();
    let saved = choice.settings().iter().try_for_each(|(key, value)| {
        elroy_config::set_key(&file, key, &serde_json::Value::String(value.clone()))
    });
    lines.push(match saved {
        Ok(()) => format!(
            "Saved {} in {} (readable by you only).",
            choice
                .settings()
                .iter()
                .map(|(k, _)| *k)
                .collect::<Vec<_>>()
                .join(" and "),
            file.display()
        ),
        Err(e) => format!("Not saved, so the next start asks again: {e}"),
    });
    Ok(lines)
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn keys_are_masked_and_never_printed_whole() {
        assert_eq!(mask_key("sk-ant-api03-abcdefgh1234"), "sk-…1234");
        assert_eq!(mask_key("short-key"), "…");
        let choice = ModelChoice::key("sk-ant-api03-abcdefgh1234").unwrap();
        let shown = format!("{choice:?}");
        assert!(!shown.contains("abcdefgh"), "{shown}");
        let e = ModelChoice::key("mysecretvalue-123456")
            .unwrap_err()
            .to_string();
        assert!(!e.contains("secretvalue"), "{e}");
    }

    #[test]
    fn a_server_without_models_cannot_be_chosen() {
        let server = LocalServer {
            name: "Ollama",
            base_url: "http://127.0.0.1:11434/v1".into(),
            models: vec![],
        };
        assert!(
            ModelChoice::local(&server)
                .unwrap_err()
                .to_string()
                .contains("lists no model")
        );
        let server = LocalServer {
            models: vec!["llama3.1".into(), "qwen".into()],
            ..server
        };
        assert_eq!(
            ModelChoice::local(&server).unwrap().settings(),
            [
                ("chat_model", "llama3.1".to_owned()),
                (
                    "chat_model_api_base",
                    "http://127.0.0.1:11434/v1".to_owned()
                )
            ]
        );
    }

    fn open_home(home: &elroy_testkit::TempHome) -> ChatSession {
        let options = elroy_config::LoadOptions {
            home: Some(home.path().to_path_buf()),
            cwd: home.path().to_path_buf(),
            user_dir: Some(home.path().to_path_buf()),
            env: [("ELROY_NOW".to_owned(), "2026-12-01T09:30:00Z".to_owned())]
                .into_iter()
                .collect(),
            ..elroy_config::LoadOptions::default()
        };
        let config = elroy_config::Config::load(&options).unwrap();
        ChatSession::open_without_model_allowed(
            config,
            elroy_core::Capabilities { can_restart: false },
            elroy_runtime::logged_warnings(),
        )
        .unwrap()
    }

    /// Without a model the commands work and turns wait; choosing a found server starts the
    /// session with it and saves it, comments kept, mode 0600; the next open has a model.
    #[tokio::test]
    async fn a_chosen_server_is_used_at_once_and_saved() {
        if ["ANTHROPIC_API_KEY", "OPENAI_API_KEY", "GEMINI_API_KEY"]
            .iter()
            .any(|k| std::env::var_os(k).is_some())
        {
            println!("SKIPPED: a provider key in the environment gives a model");
            return;
        }
        let server = elroy_testkit::MockServer::start();
        let home = elroy_testkit::TempHome::new();
        home.write_config("# mine\nmax_tokens: 9000 # big\n");
        let mut chat = open_home(&home);
        assert!(
            chat.no_model()
                .unwrap()
                .contains("ELROY_CHAT_MODEL_API_BASE")
        );
        assert!(chat.session().is_none() && chat.model_name().is_none());
        let added = crate::run(
            &crate::Command::Remember(Some("Likes tea".into())),
            &mut chat,
        )
        .await;
        assert!(!added.is_error, "{added:?}");
        let model = crate::run(&crate::Command::Model(None), &mut chat).await;
        assert!(model.lines[0].contains("No chat model yet"), "{model:?}");
        assert!(crate::run(&crate::Command::Clear, &mut chat).await.is_error);

        let found = LocalServer {
            name: "llama.cpp",
            base_url: server.base_url(),
            models: vec!["testkit-model".into()],
        };
        let lines = adopt_and_save(&mut chat, &ModelChoice::local(&found).unwrap()).unwrap();
        assert_eq!(chat.model_name(), Some("testkit-model"));
        assert!(chat.no_model().is_none());
        assert!(
            lines[1].starts_with("Saved chat_model and chat_model_api_base in "),
            "{lines:?}"
        );
        let saved = std::fs::read_to_string(home.config_path()).unwrap();
        assert_eq!(
            saved,
            format!(
                "# mine\nmax_tokens: 9000 # big\nchat_model: testkit-model\nchat_model_api_base: {}\n",
                server.base_url()
            )
        );
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let mode = std::fs::metadata(home.config_path())
                .unwrap()
                .permissions()
                .mode();
            assert_eq!(mode & 0o777, 0o600);
        }
        let again = open_home(&home);
        assert_eq!(again.model_name(), Some("testkit-model"));
    }
}
