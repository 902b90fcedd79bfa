//! `elroy sync --remote URL` and `sync_remote`: the first remote given is saved in the writable
//! configuration file (through [`crate::set_key`], comments and order kept); a later one is for
//! that sync only and the saved one stays.

use std::path::PathBuf;

use crate::{Config, EditError};

/// What became of a remote given for one sync.
#[derive(Debug)]
pub enum RemoteSaved {
    /// No `sync_remote` was configured: the remote is now saved in this file.
    Saved(PathBuf),
    /// No `sync_remote` was configured, and saving it in this file failed (the file is
    /// unchanged).
    NotSaved {
        /// The writable configuration file.
        file: PathBuf,
        /// Why it was not written.
        error: EditError,
    },
    /// Another `sync_remote` is configured and stays: the remote was for this sync only.
    OneOff {
        /// The configured `sync_remote`.
        saved: String,
    },
    /// The remote is the configured `sync_remote`.
    Same,
}

impl Config {
    /// Saves `remote` as `sync_remote` in [`Config::writable_file`] when none is configured;
    /// otherwise says whether it differs from the configured one. Call it after the sync
    /// succeeded, so a remote that does not work is never saved.
    pub fn keep_sync_remote(&self, remote: &str) -> RemoteSaved {
        match &self.settings.sync_remote {
            Some(saved) if saved == remote => RemoteSaved::Same,
            Some(saved) => RemoteSaved::OneOff {
                saved: saved.clone(),
            },
            None => {
                let file = self.writable_file();
                match crate::set_key(&file, "sync_remote", &remote.into()) {
                    Ok(()) => RemoteSaved::Saved(file),
                    Err(error) => RemoteSaved::NotSaved { file, error },
                }
            }
        }
    }
}
