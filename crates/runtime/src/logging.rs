//! Logging to `$ELROY_HOME/logs/elroy.log` for every front end (never to stdout or stderr): a
//! size-rotated file, 10 MiB per file, `elroy.log.1` … `elroy.log.5` kept
//! (`docs/formats.md#home-layout`).
//!
//! Level: `ELROY_LOG_LEVEL` (a tracing filter such as `debug` or `elroy_llm=trace`), else `DEBUG`
//! with `-v` or config `debug: true`, else `INFO`.

use std::fs::{File, OpenOptions};
use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use elroy_config::Config;

/// Bytes per log file before it is rotated.
const MAX_BYTES: u64 = 10 * 1024 * 1024;
/// Rotated files kept (`elroy.log.1` … `elroy.log.5`).
const KEEP: usize = 5;

/// A file writer that rotates `elroy.log` → `elroy.log.1` → … when it grows past [`MAX_BYTES`].
struct RotatingFile {
    path: PathBuf,
    file: File,
    written: u64,
}

impl RotatingFile {
    fn open(path: &Path) -> io::Result<Self> {
        let file = OpenOptions::new().create(true).append(true).open(path)?;
        let written = file.metadata()?.len();
        Ok(RotatingFile {
            path: path.to_owned(),
            file,
            written,
        })
    }

    fn rotate(&mut self) -> io::Result<()> {
        let numbered = |n: usize| self.path.with_extension(format!("log.{n}"));
        for n in (1..KEEP).rev() {
            let from = numbered(n);
            if from.exists() {
                std::fs::rename(&from, numbered(n + 1))?;
            }
        }
        std::fs::rename(&self.path, numbered(1))?;
        *self = RotatingFile::open(&self.path)?;
        Ok(())
    }
}

impl Write for RotatingFile {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        if self.written + buf.len() as u64 > MAX_BYTES && self.written > 0 {
            // A failed rotation keeps appending to the current file rather than losing the line.
            let _ = self.rotate();
        }
        let n = self.file.write(buf)?;
        self.written += n as u64;
        Ok(n)
    }

    fn flush(&mut self) -> io::Result<()> {
        self.file.flush()
    }
}

/// The log file, opened (and its directory created) when the first line is written: a command
/// that fails before doing anything (no chat model, a bad flag value) leaves nothing in the home.
/// A directory or file that cannot be made drops the lines: logging never stops elroy.
struct LazyLog {
    dir: PathBuf,
    file: Option<RotatingFile>,
    failed: bool,
}

impl Write for LazyLog {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        if self.file.is_none() && !self.failed {
            self.file = std::fs::create_dir_all(&self.dir)
                .and_then(|()| RotatingFile::open(&self.dir.join("elroy.log")))
                .ok();
            self.failed = self.file.is_none();
        }
        match &mut self.file {
            Some(file) => file.write(buf),
            None => Ok(buf.len()),
        }
    }

    fn flush(&mut self) -> io::Result<()> {
        self.file.as_mut().map_or(Ok(()), Write::flush)
    }
}

/// Starts logging for this process; the log directory and file are made with the first line.
pub fn init(config: &Config, verbose: bool) {
    let log = LazyLog {
        dir: config.paths.logs_dir(),
        file: None,
        failed: false,
    };
    let default = if verbose || config.settings.debug {
        "debug"
    } else {
        "info"
    };
    let filter = std::env::var("ELROY_LOG_LEVEL")
        .ok()
        .and_then(|level| tracing_subscriber::EnvFilter::try_new(level.to_lowercase()).ok())
        .unwrap_or_else(|| tracing_subscriber::EnvFilter::new(default));
    let _ = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_ansi(false)
        .with_writer(Mutex::new(log))
        .try_init();
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rotates_and_keeps_five() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("elroy.log");
        let mut log = RotatingFile::open(&path).unwrap();
        let chunk = vec![b'x'; 4 * 1024 * 1024];
        for _ in 0..(3 * (KEEP + 2)) {
            log.write_all(&chunk).unwrap();
        }
        assert!(std::fs::metadata(&path).unwrap().len() <= MAX_BYTES);
        for n in 1..=KEEP {
            assert!(
                path.with_extension(format!("log.{n}")).exists(),
                "elroy.log.{n}"
            );
        }
        assert!(!path.with_extension(format!("log.{}", KEEP + 1)).exists());
    }

    #[test]
    fn the_log_directory_is_made_with_the_first_line() {
        let dir = tempfile::tempdir().unwrap();
        let logs = dir.path().join("home/logs");
        let mut log = LazyLog {
            dir: logs.clone(),
            file: None,
            failed: false,
        };
        log.flush().unwrap();
        assert!(!logs.exists());
        log.write_all(b"a line\n").unwrap();
        assert_eq!(
            std::fs::read_to_string(logs.join("elroy.log")).unwrap(),
            "a line\n"
        );
        // A directory that cannot be made: the line is dropped, the write succeeds.
        std::fs::write(dir.path().join("file"), "").unwrap();
        let mut log = LazyLog {
            dir: dir.path().join("file/logs"),
            file: None,
            failed: false,
        };
        log.write_all(b"dropped\n").unwrap();
        assert!(log.failed);
    }
}
