//! The process signals the full-screen interface answers, so that every way out leaves the
//! terminal as it found it: SIGTERM, SIGHUP (the terminal window closed, an ssh connection
//! dropped), SIGINT and SIGQUIT end the interface (terminal restored first, then the usual bounded
//! wait for background work); SIGCONT (after Ctrl+Z, or an outside `kill -STOP` / `kill -CONT`)
//! re-enters raw mode and the alternate screen and redraws; SIGWINCH is a resize. Signal handling is tokio's
//! (`tokio::signal::unix`, on signal-hook-registry); no handler runs elroy code.

use std::process::ExitCode;

use tokio::signal::unix::{Signal, SignalKind, signal};

/// A signal that ends the interface.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Ending {
    /// SIGTERM: asked to stop (`kill`, a service manager).
    Terminate,
    /// SIGHUP: the terminal went away.
    Hangup,
    /// SIGINT from outside (in raw mode Ctrl+C is a key, not this signal).
    Interrupt,
    /// SIGQUIT from outside.
    Quit,
}

impl Ending {
    /// The signal's number (POSIX: TERM 15, HUP 1, INT 2, QUIT 3).
    pub fn number(self) -> u8 {
        match self {
            Ending::Terminate => 15,
            Ending::Hangup => 1,
            Ending::Interrupt => 2,
            Ending::Quit => 3,
        }
    }

    /// The exit code a shell expects of a process ended by this signal: 128 + its number.
    pub fn exit_code(self) -> ExitCode {
        ExitCode::from(128 + self.number())
    }

    /// The signal's name (`SIGTERM`).
    pub fn name(self) -> &'static str {
        match self {
            Ending::Terminate => "SIGTERM",
            Ending::Hangup => "SIGHUP",
            Ending::Interrupt => "SIGINT",
            Ending::Quit => "SIGQUIT",
        }
    }
}

/// What a received signal asks of the event loop.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Received {
    /// Leave: restore the terminal, wait for background work (bounded), exit.
    End(Ending),
    /// The process was continued after a stop: set the terminal up again and redraw.
    Continued,
    /// The terminal was resized (SIGWINCH).
    Resized,
}

/// The registered signal streams. Registered before the terminal is set up, so a signal that
/// arrives while the home opens is answered too (once the event loop runs) instead of killing
/// elroy with the terminal in raw mode.
pub struct Signals {
    terminate: Signal,
    hangup: Signal,
    interrupt: Signal,
    quit: Signal,
    cont: Signal,
    winch: Signal,
}

impl Signals {
    /// Registers the handlers; must run inside a tokio runtime with IO enabled.
    ///
    /// # Errors
    /// The OS error when a handler cannot be installed.
    pub fn register() -> std::io::Result<Signals> {
        Ok(Signals {
            terminate: signal(SignalKind::terminate())?,
            hangup: signal(SignalKind::hangup())?,
            interrupt: signal(SignalKind::interrupt())?,
            quit: signal(SignalKind::quit())?,
            cont: signal(SignalKind::from_raw(rustix::process::Signal::CONT.as_raw()))?,
            winch: signal(SignalKind::window_change())?,
        })
    }

    /// The next signal received.
    pub async fn recv(&mut self) -> Received {
        tokio::select! {
            _ = self.terminate.recv() => Received::End(Ending::Terminate),
            _ = self.hangup.recv() => Received::End(Ending::Hangup),
            _ = self.interrupt.recv() => Received::End(Ending::Interrupt),
            _ = self.quit.recv() => Received::End(Ending::Quit),
            _ = self.cont.recv() => Received::Continued,
            _ = self.winch.recv() => Received::Resized,
        }
    }
}

/// Stops elroy as a shell's Ctrl+Z would (SIGTSTP to itself, whose default action stops the
/// process; the kernel ignores it in a process group no shell watches, so elroy cannot be
/// stopped where nothing could continue it). Returns once elroy runs again.
pub fn suspend_self() {
    let _ = rustix::process::kill_process(rustix::process::getpid(), rustix::process::Signal::TSTP);
}
