//! Logging to `$ELROY_HOME/logs/elroy.log` (never to stdout or stderr): a size-rotated file,
//! 10 MiB per file, `elroy.log.1` … `elroy.log.5` kept (`docs/formats.md#home-layout`).
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

/// Starts logging for this process. A home whose log directory cannot be created just runs
/// without a log: logging never stops elroy.
pub(crate) fn init(config: &Config, verbose: bool) {
    let dir = config.paths.logs_dir();
    if std::fs::create_dir_all(&dir).is_err() {
        return;
    }
    let Ok(file) = RotatingFile::open(&dir.join("elroy.log")) else {
        return;
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
        .with_writer(Mutex::new(file))
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
}
