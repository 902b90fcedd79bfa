//! `elroy models fetch [NAME]`: downloads the built-in embedder's model directory (the work is
//! `elroy_llm::model_files`), with a progress bar on a terminal and a SHA-256 check per file.

use std::process::ExitCode;

use clap::{Args, Subcommand};
use elroy_config::Config;
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

/// `elroy models …`
#[derive(Debug, Args)]
pub struct ModelsArgs {
    /// What to do with the models
    #[command(subcommand)]
    pub command: ModelsCommand,
}

/// `elroy models` subcommands.
#[derive(Debug, Subcommand)]
pub enum ModelsCommand {
    /// Download a sentence-transformers model for the built-in embedder (recall by meaning
    /// without an embeddings API) into embedding_model_path (default
    /// $ELROY_HOME/models/all-MiniLM-L6-v2), from models_base_url (default Hugging Face); each
    /// file is checked against its SHA-256 before it is kept
    Fetch {
        /// The model [default: all-MiniLM-L6-v2]; another NAME goes to $ELROY_HOME/models/NAME
        /// unless embedding_model_path is set
        #[arg(value_name = "NAME")]
        name: Option<String>,
    },
}

pub(crate) fn run(config: &Config, args: &ModelsArgs) -> Result<ExitCode, String> {
    let ModelsCommand::Fetch { name } = &args.command;
    let name = name
        .clone()
        .unwrap_or_else(|| elroy_llm::model_files::DEFAULT_MODEL.to_owned());
    let dir = if config.settings.embedding_model_path.is_some()
        || name == elroy_llm::model_files::DEFAULT_MODEL
    {
        config.paths.embedding_model_dir.clone()
    } else {
        config.paths.elroy_home.join("models").join(&name)
    };
    let bar = ProgressBar::with_draw_target(None, ProgressDrawTarget::stderr());
    bar.set_style(
        ProgressStyle::with_template("{msg:24} {bar:30} {bytes}/{total_bytes} {bytes_per_sec}")
            .map_err(|e| e.to_string())?,
    );
    let mut progress = |file: &str, done: u64, total: Option<u64>| {
        if done == 0 {
            bar.reset();
            bar.set_message(file.to_owned());
            if let Some(total) = total {
                bar.set_length(total);
            }
        }
        bar.set_position(done);
    };
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| e.to_string())?;
    let result = runtime.block_on(elroy_llm::model_files::fetch_model(
        &config.settings.models_base_url,
        &name,
        &dir,
        &mut progress,
    ));
    bar.finish_and_clear();
    let files = result.map_err(|e| e.to_string())?;
    crate::output::print(&format!(
        "Fetched {name} into {} ({} files, checked)\n",
        dir.display(),
        files.len()
    ))?;
    Ok(ExitCode::SUCCESS)
}
