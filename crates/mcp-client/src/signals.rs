//! Stopping the servers when elroy is ended by a signal.
//!
//! A stdio server runs in its own process group, so the Ctrl+C of a terminal (SIGINT to the
//! foreground group), SIGTERM or SIGHUP end elroy but never reach the server; a server that
//! ignores end of input would run on. When the first [`crate::McpClients`] with servers is made,
//! a watcher thread takes over SIGINT, SIGTERM and SIGHUP for the process: on one of them it
//! stops every server of every live client (SIGTERM to each group, SIGKILL after a short grace,
//! reaped) and then ends elroy with the status the shell gives a process ended by that signal
//! (128 + its number), as the signal's default action would have.
//!
//! A front end that ends itself on a signal (the full-screen interface on all three, the line
//! chat's Ctrl+C that cancels a turn, `elroy remind --watch`) says so with
//! [`handled_by_front_end`]; the watcher then leaves that signal alone and the front end's own
//! orderly exit stops the servers (dropping the clients).

use std::sync::atomic::{AtomicU8, Ordering};
use std::sync::{Arc, Mutex, OnceLock, Weak};

use crate::Inner;

/// A signal that ends elroy.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Ending {
    /// SIGINT (Ctrl+C).
    Interrupt,
    /// SIGTERM.
    Terminate,
    /// SIGHUP (the terminal went away).
    Hangup,
}

impl Ending {
    fn bit(self) -> u8 {
        match self {
            Ending::Interrupt => 1,
            Ending::Terminate => 2,
            Ending::Hangup => 4,
        }
    }

    /// The signal's number (2, 15, 1).
    pub fn number(self) -> i32 {
        match self {
            Ending::Interrupt => 2,
            Ending::Terminate => 15,
            Ending::Hangup => 1,
        }
    }
}

/// Signals a front end handles itself.
static FRONT_END: AtomicU8 = AtomicU8::new(0);
/// Every client set made in this process.
static LIVE: Mutex<Vec<Weak<Inner>>> = Mutex::new(Vec::new());
/// Whether the watcher started (or could not).
static WATCHER: OnceLock<()> = OnceLock::new();

/// Leaves `signals` to the calling front end: the watcher neither stops the servers nor ends
/// elroy on them. Call it before the front end starts waiting for them.
pub fn handled_by_front_end(signals: &[Ending]) {
    let bits = signals.iter().fold(0, |bits, s| bits | s.bit());
    FRONT_END.fetch_or(bits, Ordering::SeqCst);
}

/// Records `inner` for the watcher, starting the watcher the first time.
pub(crate) fn register(inner: &Arc<Inner>) {
    if let Ok(mut live) = LIVE.lock() {
        live.retain(|w| w.strong_count() > 0);
        live.push(Arc::downgrade(inner));
    }
    WATCHER.get_or_init(start_watcher);
}

/// Stops the servers of every live client set (each waits at most a few seconds).
fn stop_all() {
    let live: Vec<Arc<Inner>> = LIVE
        .lock()
        .map(|live| live.iter().filter_map(Weak::upgrade).collect())
        .unwrap_or_default();
    for inner in live {
        inner.stop_servers();
    }
}

/// Installs the handlers now (so a signal right after the first server starts is caught) and
/// waits for them on a thread of its own.
fn start_watcher() {
    use tokio::signal::unix::{SignalKind, signal};
    let runtime = match tokio::runtime::Builder::new_current_thread()
        .enable_io()
        .build()
    {
        Ok(runtime) => runtime,
        Err(e) => {
            tracing::warn!("MCP clients: cannot watch for signals: {e}");
            return;
        }
    };
    let streams = {
        let _entered = runtime.enter();
        (
            signal(SignalKind::interrupt()),
            signal(SignalKind::terminate()),
            signal(SignalKind::hangup()),
        )
    };
    let (Ok(mut interrupt), Ok(mut terminate), Ok(mut hangup)) = streams else {
        tracing::warn!("MCP clients: cannot watch for SIGINT, SIGTERM and SIGHUP");
        return;
    };
    let spawned = std::thread::Builder::new()
        .name("elroy-mcp-signals".into())
        .spawn(move || {
            runtime.block_on(async move {
                loop {
                    let ending = tokio::select! {
                        _ = interrupt.recv() => Ending::Interrupt,
                        _ = terminate.recv() => Ending::Terminate,
                        _ = hangup.recv() => Ending::Hangup,
                    };
                    if FRONT_END.load(Ordering::SeqCst) & ending.bit() != 0 {
                        continue;
                    }
                    tracing::info!(
                        signal = ending.number(),
                        "ended by a signal: stopping the MCP servers"
                    );
                    stop_all();
                    std::process::exit(128 + ending.number());
                }
            });
        });
    if let Err(e) = spawned {
        tracing::warn!("MCP clients: cannot start the signal watcher: {e}");
    }
}
