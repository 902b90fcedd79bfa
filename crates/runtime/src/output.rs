//! The front ends' one path to standard output (the command line's commands and the line chat,
//! elroy-chat), and their error lines on standard error.
//!
//! A reader that closes the pipe early (`elroy config | head -1`) has what it wants. The first
//! write that fails with a broken pipe marks standard output closed; that write and every later
//! one are dropped, and the command finishes its work as usual (a turn is still stored, background
//! work still runs) and exits with the status it would have had, 0 on success: no panic, no error
//! line. This is ripgrep's choice, rather than the shell convention of dying by `SIGPIPE` (141),
//! so a closed pipe never interrupts a write to the home. Every other write error is returned.
//!
//! Nothing in the command line or the line chat writes to standard output any other way
//! (`print!`/`println!` panic on a closed pipe): clap's help and version text and the shell
//! completions go through here too.

use std::io::Write;
use std::sync::atomic::{AtomicBool, Ordering};

/// Why standard output cannot be written.
#[derive(Debug, thiserror::Error)]
pub enum OutputError {
    /// Descriptor 1 was closed when elroy started ([`check_stdout_open`]).
    #[error("cannot write to standard output: it is closed")]
    Closed,
    /// A write or flush failed other than by a closed pipe.
    #[error("cannot write to standard output: {0}")]
    Write(#[source] std::io::Error),
}

/// The front ends' error line (their commands fail with a `String`).
impl From<OutputError> for String {
    fn from(error: OutputError) -> Self {
        error.to_string()
    }
}

/// Set once a write to standard output found the pipe closed.
static STDOUT_CLOSED: AtomicBool = AtomicBool::new(false);

/// Whether a reader closed standard output (every later write is dropped).
pub fn stdout_closed() -> bool {
    STDOUT_CLOSED.load(Ordering::Relaxed)
}

/// Whether standard output was open when elroy started. With descriptor 1 closed (`elroy remind
/// >&-`) the Rust runtime puts `/dev/null`, opened read-write, in its place before `main`, so
/// every line would vanish with nobody told. A shell's `> /dev/null` opens it write-only: that
/// is a choice (cron with `notify_command`) and stays allowed.
///
/// # Errors
/// [`OutputError::Closed`].
pub fn check_stdout_open() -> Result<(), OutputError> {
    static OPEN: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    let open = *OPEN.get_or_init(|| !stdout_was_closed());
    if open {
        Ok(())
    } else {
        Err(OutputError::Closed)
    }
}

fn stdout_was_closed() -> bool {
    use rustix::fs::{FileType, OFlags, fcntl_getfl, fstat, major, minor};
    let out = std::io::stdout();
    let (Ok(flags), Ok(stat)) = (fcntl_getfl(&out), fstat(&out)) else {
        // Not even a descriptor.
        return true;
    };
    let read_write = flags & OFlags::RWMODE == OFlags::RDWR;
    let dev_null = FileType::from_raw_mode(stat.st_mode) == FileType::CharacterDevice
        && major(stat.st_rdev) == 1
        && minor(stat.st_rdev) == 3;
    read_write && dev_null
}

/// Writes `bytes` to standard output and flushes; a closed pipe marks the output closed and is
/// not an error.
///
/// # Errors
/// [`OutputError::Write`] for any other failure, and [`OutputError::Closed`] when descriptor 1
/// is closed ([`check_stdout_open`]).
pub fn write_bytes(bytes: &[u8]) -> Result<(), OutputError> {
    if stdout_closed() {
        return Ok(());
    }
    check_stdout_open()?;
    let mut out = std::io::stdout().lock();
    match out.write_all(bytes).and_then(|()| out.flush()) {
        Ok(()) => Ok(()),
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => {
            STDOUT_CLOSED.store(true, Ordering::Relaxed);
            Ok(())
        }
        Err(e) => Err(OutputError::Write(e)),
    }
}

/// Writes `text` to standard output as it is (see [`write_bytes`]).
///
/// # Errors
/// As [`write_bytes`].
pub fn print(text: &str) -> Result<(), OutputError> {
    write_bytes(text.as_bytes())
}

/// Writes `text` and a line break to standard output in one write (see [`write_bytes`]).
///
/// # Errors
/// As [`write_bytes`].
pub fn println(text: &str) -> Result<(), OutputError> {
    let mut line = String::with_capacity(text.len() + 1);
    line.push_str(text);
    line.push('\n');
    write_bytes(line.as_bytes())
}

/// Writes `text` and a line break to standard error. A failure is ignored: there is nowhere left
/// to report it, and `eprintln!` would panic.
pub fn eprintln(text: &str) {
    let mut err = std::io::stderr().lock();
    let _ = writeln!(err, "{text}");
    let _ = err.flush();
}
