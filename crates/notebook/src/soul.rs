//! The soul snapshot (`docs/behaviour.md#the-soul-snapshot`,
//! `docs/behaviour.md#the-soul-snapshot`): the bootstrap files of the user home composed once, at
//! session start, into one frozen text for the system prompt.

use std::io::Read;
use std::path::Path;

/// The bootstrap files, in composition order.
pub const BOOTSTRAP_FILES: [&str; 7] = [
    "AGENTS.md",
    "SOUL.md",
    "IDENTITY.md",
    "USER.md",
    "TOOLS.md",
    "HEARTBEAT.md",
    "MEMORY.md",
];

/// At most this many bytes of each bootstrap file are read for the prompt (2 MiB).
pub const BOOTSTRAP_CAP_BYTES: usize = 2_097_152;

/// Appended to the decoded text of a file larger than [`BOOTSTRAP_CAP_BYTES`].
pub const TRUNCATION_NOTICE: &str = "\n[truncated: exceeds 2 MB bootstrap cap]";

/// The fixed text that opens the soul block of the system prompt (ours,
/// `docs/behaviour.md#the-system-prompt`).
pub const SOUL_BLOCK_INTRO: &str = "These files from my home directory were loaded when this session started. Changes I make with the memory tool appear here from the next session on.";

/// One bootstrap file as it went into the snapshot.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SoulSection {
    /// The file name, e.g. `MEMORY.md`.
    pub file: &'static str,
    /// The decoded text (with the truncation notice when capped), trimmed of surrounding
    /// whitespace.
    pub text: String,
    /// Whether the file was larger than the cap.
    pub truncated: bool,
}

/// A frozen soul: taken once per session start, never updated. Later `memory` tool writes change
/// the files on disk, not this value; the next [`Soul::compose`] sees them.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Soul {
    sections: Vec<SoulSection>,
    text: String,
    warnings: Vec<String>,
}

impl Soul {
    /// Reads the bootstrap files of `user_home` in [`BOOTSTRAP_FILES`] order and composes them:
    /// each existing file becomes `## {file name}\n\n{text trimmed}`, sections joined by `\n\n`.
    ///
    /// Missing files are skipped silently. A file that exists but cannot be read (a directory,
    /// no permission) is skipped with a warning in [`Soul::warnings`]; the session still starts.
    /// Each file is read up to [`BOOTSTRAP_CAP_BYTES`]; invalid UTF-8 becomes U+FFFD, except a
    /// sequence cut off by the cap, which is dropped. The files are never changed.
    pub fn compose(user_home: &Path) -> Soul {
        let mut sections = Vec::new();
        let mut warnings = Vec::new();
        for file in BOOTSTRAP_FILES {
            match read_capped(&user_home.join(file)) {
                Ok(Some((text, truncated))) => sections.push(SoulSection {
                    file,
                    text: text.trim().to_owned(),
                    truncated,
                }),
                Ok(None) => {}
                Err(e) => warnings.push(format!("Unable to read {file}: {e}")),
            }
        }
        let text = sections
            .iter()
            .map(|s| format!("## {}\n\n{}", s.file, s.text))
            .collect::<Vec<_>>()
            .join("\n\n");
        Soul {
            sections,
            text,
            warnings,
        }
    }

    /// The composed text (`{soul}` in the system prompt); empty when no bootstrap file exists.
    pub fn text(&self) -> &str {
        &self.text
    }

    /// Whether no bootstrap file was found (then the prompt has no soul block).
    pub fn is_empty(&self) -> bool {
        self.sections.is_empty()
    }

    /// The files that went in, in order.
    pub fn sections(&self) -> &[SoulSection] {
        &self.sections
    }

    /// Files that exist but could not be read, as `Unable to read {file}: {os error}`.
    pub fn warnings(&self) -> &[String] {
        &self.warnings
    }

    /// The soul block of the system prompt (`docs/behaviour.md#the-system-prompt`), or `None` when
    /// no bootstrap file exists: `<soul>\n{intro}\n\n{soul}\n</soul>`.
    pub fn prompt_block(&self) -> Option<String> {
        if self.is_empty() {
            return None;
        }
        Some(format!(
            "<soul>\n{SOUL_BLOCK_INTRO}\n\n{}\n</soul>",
            self.text
        ))
    }
}

/// Reads at most the cap; `Ok(None)` when the file does not exist. Returns the decoded text (with
/// the notice appended when the file was larger) and whether it was truncated.
fn read_capped(path: &Path) -> std::io::Result<Option<(String, bool)>> {
    let file = match std::fs::File::open(path) {
        Ok(f) => f,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(e),
    };
    let mut bytes = Vec::new();
    // One byte more than the cap tells whether the file is larger.
    file.take(BOOTSTRAP_CAP_BYTES as u64 + 1)
        .read_to_end(&mut bytes)?;
    let truncated = bytes.len() > BOOTSTRAP_CAP_BYTES;
    if truncated {
        bytes.truncate(BOOTSTRAP_CAP_BYTES);
        drop_cut_sequence(&mut bytes);
    }
    let mut text = String::from_utf8_lossy(&bytes).into_owned();
    if truncated {
        text.push_str(TRUNCATION_NOTICE);
    }
    Ok(Some((text, truncated)))
}

/// Drops an incomplete UTF-8 sequence at the very end of `bytes` (one the cap cut in two), so it
/// does not decode as U+FFFD. Invalid bytes elsewhere are left for lossy decoding.
fn drop_cut_sequence(bytes: &mut Vec<u8>) {
    let len = bytes.len();
    // A sequence is at most 4 bytes: its lead byte is within the last 3.
    for start in (len.saturating_sub(3)..len).rev() {
        let b = bytes[start];
        if b & 0b1100_0000 == 0b1000_0000 {
            continue; // continuation byte: keep looking for the lead
        }
        if let Err(e) = std::str::from_utf8(&bytes[start..])
            && e.valid_up_to() == 0
            && e.error_len().is_none()
        {
            bytes.truncate(start);
        }
        return;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cut_sequence_is_dropped_but_invalid_bytes_are_not() {
        let mut b = "ab€".as_bytes()[..4].to_vec(); // "ab" + 2 of the 3 bytes of '€'
        drop_cut_sequence(&mut b);
        assert_eq!(b, b"ab");
        let mut b = b"ab\xff".to_vec();
        drop_cut_sequence(&mut b);
        assert_eq!(b, b"ab\xff");
        let mut b = "a€".as_bytes().to_vec();
        drop_cut_sequence(&mut b);
        assert_eq!(b, "a€".as_bytes());
    }
}
