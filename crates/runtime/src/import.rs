//! `elroy import --summarize`: each imported conversation distilled into one memory by the
//! configured chat model (the fast model when one is set, as for elroy's own background
//! memories) through `elroy_orchestrator::form_memory`, behind elroy-import's `Summarizer`.

use std::sync::Arc;

use elroy_config::Config;

/// Why the summarizer could not be built.
#[derive(Debug, thiserror::Error)]
pub enum SummarizerError {
    /// No chat model can be chosen or its client built.
    #[error(transparent)]
    Model(#[from] elroy_llm::LlmError),
    /// The async runtime the model calls run on could not start.
    #[error("{0}")]
    AsyncRuntime(std::io::Error),
}

/// The configured model as elroy-import's [`elroy_import::Summarizer`].
pub struct ModelSummarizer {
    model: Arc<dyn elroy_llm::ChatModel>,
    assistant: String,
    runtime: tokio::runtime::Runtime,
}

impl ModelSummarizer {
    /// The fast model of `config` when one is set, else the chat model; a fast model that
    /// cannot be built is a warning on stderr (`elroy: …`).
    ///
    /// # Errors
    /// [`SummarizerError::Model`] when no chat model can be built (before anything is read);
    /// [`SummarizerError::AsyncRuntime`].
    pub fn new(config: &Config) -> Result<Self, SummarizerError> {
        let warn = |w: &str| crate::output::eprintln(&format!("elroy: {w}"));
        let models = crate::models::Models::build(config, &elroy_llm::select::process_env, &warn)?;
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .map_err(SummarizerError::AsyncRuntime)?;
        Ok(ModelSummarizer {
            model: models.fast.unwrap_or(models.chat),
            assistant: config.settings.default_assistant_name.clone(),
            runtime,
        })
    }
}

impl elroy_import::Summarizer for ModelSummarizer {
    fn summarize(
        &mut self,
        conversation: &str,
    ) -> Result<Option<(String, String)>, elroy_import::SummarizeError> {
        self.runtime
            .block_on(elroy_orchestrator::form_memory(
                self.model.as_ref(),
                &self.assistant,
                conversation.to_owned(),
            ))
            .map_err(|e| elroy_import::SummarizeError(Box::new(e)))
    }
}
