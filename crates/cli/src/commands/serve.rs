//! `elroy serve [--bind ADDR:PORT]`: runs elroy-serve until SIGINT or SIGTERM. The first line on
//! stderr names the address it listens on; then one line per request.

use std::process::ExitCode;
use std::sync::Arc;

use clap::Args;
use elroy_config::Config;

use crate::args::Cli;

/// `elroy serve …`
#[derive(Debug, Args)]
pub struct ServeArgs {
    /// The address to listen on, IP:PORT (default serve.bind, else 127.0.0.1:8765; port 0 picks a free port). An address other than loopback reaches other machines: elroy warns
    #[arg(long, value_name = "ADDR:PORT")]
    pub bind: Option<String>,
}

pub(crate) fn run(cli: &Cli, args: &ServeArgs) -> Result<ExitCode, String> {
    one_inference_thread();
    let config = crate::load_config(cli)?;
    let settings = elroy_serve::ServeSettings::from_config(&config, args.bind.as_deref())
        .map_err(|e| e.to_string())?;
    let options = crate::load_options(cli);
    // Each key's user gets its configuration as `--user TOKEN` would.
    let loader: elroy_serve::ConfigLoader =
        Arc::new(move |token: &str| Config::load(&options.for_user(token, "serve.keys")));
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .map_err(|e| format!("cannot start the async runtime: {e}"))?;
    runtime.block_on(async move {
        let listener = tokio::net::TcpListener::bind(settings.bind)
            .await
            .map_err(|e| format!("cannot listen on {}: {e}", settings.bind))?;
        let address = listener
            .local_addr()
            .map_err(|e| format!("cannot read the bound address: {e}"))?;
        crate::output::eprintln(&format!(
            "elroy serve: listening on http://{address} ({} key{}); stop with Ctrl+C",
            settings.keys.len(),
            if settings.keys.len() == 1 { "" } else { "s" }
        ));
        if !address.ip().is_loopback() {
            crate::output::eprintln(&format!(
                "warning: {address} is not a loopback address: other machines can reach elroy; anyone with a key reaches that user's memories and tools (put TLS in front, see docs/serve.md)"
            ));
        }
        elroy_serve::run(listener, settings, loader, elroy_serve::stop_signal())
            .await
            .map_err(|e| e.to_string())
    })?;
    crate::output::eprintln("elroy serve: stopped");
    Ok(ExitCode::SUCCESS)
}

/// The environment variable the built-in embedder's inference library (candle) reads its thread
/// count from, once per process; it has no other setting.
const INFERENCE_THREADS: &str = "RAYON_NUM_THREADS";

/// Makes the server's built-in embedder run each forward pass on one thread: the server answers
/// its requests concurrently on threads of its own, and a question's forward pass is so small that
/// splitting it over the cores costs more than it saves (`examine_memories` through `/mcp`, 700
/// memories, quiet 2-core machine: 18.0 ms median split, 14.2 ms on one thread;
/// docs/performance.md). candle reads the count only from the environment, which a running
/// program cannot safely change, so the server replaces itself once (same process id, same
/// arguments) with the variable set, unless the person set it. If that fails, it goes on as it is.
fn one_inference_thread() {
    #[cfg(unix)]
    {
        use std::os::unix::process::CommandExt;
        if std::env::var_os(INFERENCE_THREADS).is_some() {
            return;
        }
        let Ok(exe) = std::env::current_exe() else {
            return;
        };
        let mut argv = std::env::args_os();
        let mut command = std::process::Command::new(exe);
        if let Some(arg0) = argv.next() {
            command.arg0(arg0);
        }
        // `exec` returns only when it failed.
        let error = command.args(argv).env(INFERENCE_THREADS, "1").exec();
        tracing::debug!("elroy serve: could not set {INFERENCE_THREADS}: {error}");
    }
}
