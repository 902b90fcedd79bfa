//! `elroy models fetch [NAME]`: downloads the built-in embedder's model directory (the work is
//! `elroy_llm::model_files`), with a progress bar on a terminal and a SHA-256 check per file.
//! `elroy models embed`: embeds now, in the foreground, the memories a session would embed in the
//! background (`elroy_runtime::reembed`).

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
    /// Embed now every memory that lacks a vector of the configured embedding model (what a
    /// chat session does in the background after embedding_model changes), with progress on
    /// stderr
    Embed {
        /// Run as the detached worker a command starts when it leaves memories without a
        /// vector: quietly, and only when no other worker holds the home's worker lock
        #[arg(long, hide = true)]
        worker: bool,
    },
}

pub(crate) fn run(config: Config, args: &ModelsArgs) -> Result<ExitCode, String> {
    let name = match &args.command {
        ModelsCommand::Fetch { name } => name,
        ModelsCommand::Embed { worker: true } => return embed_worker(config),
        ModelsCommand::Embed { worker: false } => return embed(config),
    };
    let config = &config;
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

/// `elroy models embed --worker`: the detached worker (`elroy_runtime::embed_worker`). Prints
/// nothing (its streams are closed); exit 0 unless the home cannot be opened.
fn embed_worker(config: Config) -> Result<ExitCode, String> {
    // A home removed since the worker was started is not made again.
    if !config.paths.user_home.is_dir() {
        return Ok(ExitCode::SUCCESS);
    }
    let runtime = elroy_runtime::Runtime::open(config).map_err(|e| e.to_string())?;
    let run = runtime.run_embed_worker();
    tracing::debug!("embedding worker: {run:?}");
    Ok(ExitCode::SUCCESS)
}

/// `elroy models embed`: the background embedding of a session, run to its end here. Prints how
/// many vectors were stored; exit 1 when it stopped on failures (the model cannot be loaded, the
/// API does not answer: the warning says why).
fn embed(config: Config) -> Result<ExitCode, String> {
    let runtime = elroy_runtime::Runtime::open(config).map_err(|e| e.to_string())?;
    for warning in &runtime.warnings {
        crate::output::eprintln(&format!("warning: {warning}"));
    }
    let stopped = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let progress: elroy_runtime::reembed::ProgressSink = {
        let stopped = std::sync::Arc::clone(&stopped);
        let print = elroy_runtime::reembed::stderr_progress();
        std::sync::Arc::new(move |p: &elroy_runtime::reembed::EmbedProgress| {
            match p {
                // The thread's own first line says "in the background"; here it is not.
                elroy_runtime::reembed::EmbedProgress::Started { model, total } => {
                    tracing::info!("{p}");
                    crate::output::eprintln(&format!(
                        "Embedding {total} memor{} with {model}…",
                        if *total == 1 { "y" } else { "ies" }
                    ));
                    return;
                }
                elroy_runtime::reembed::EmbedProgress::Finished { stopped: true, .. } => {
                    stopped.store(true, std::sync::atomic::Ordering::SeqCst);
                }
                _ => {}
            }
            print(p);
        })
    };
    let Some(running) = runtime.start_background_embedding(progress) else {
        crate::output::print(
            "No embedding model is configured or found: nothing to embed (`elroy models fetch` gets the built-in one).\n",
        )?;
        return Ok(ExitCode::SUCCESS);
    };
    let stored = running.join();
    crate::output::print(&format!(
        "{stored} memor{} embedded.\n",
        if stored == 1 { "y" } else { "ies" }
    ))?;
    Ok(if stopped.load(std::sync::atomic::Ordering::SeqCst) {
        ExitCode::FAILURE
    } else {
        ExitCode::SUCCESS
    })
}
