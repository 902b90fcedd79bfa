//! [`FeatureRequestStore`]: the `feature-requests/` directory of one user home.

use std::path::{Path, PathBuf};

use elroy_markdown::{
    Document, HomeLock, Mapping, MarkdownError, read_text, sanitize_filename, unique_path,
    write_atomic,
};
use jiff::Timestamp;

use crate::similarity::{Candidate, MatchReason, best_match, normalize};
use crate::{FeatureRequest, isoformat_utc};

/// The directory name inside the user home.
pub const FEATURE_REQUESTS_DIR: &str = "feature-requests";

/// One `*.md` file of the directory: a request, or a file whose front matter could not be read.
// Entries live in short lists for one operation; boxing the common variant buys nothing.
#[allow(clippy::large_enum_variant)]
#[derive(Debug, Clone, PartialEq)]
pub enum Entry {
    /// A loadable request.
    Request(FeatureRequest),
    /// A file that could not be read (invalid front matter, invalid UTF-8, I/O error). It is
    /// never rewritten.
    Unreadable {
        /// The file name.
        file_name: String,
        /// The error; for invalid YAML, [`MarkdownError::InvalidFrontMatter`].
        error: MarkdownError,
    },
}

impl Entry {
    /// The file name.
    pub fn file_name(&self) -> &str {
        match self {
            Entry::Request(r) => &r.file_name,
            Entry::Unreadable { file_name, .. } => file_name,
        }
    }
}

/// What [`FeatureRequestStore::make`] did.
#[derive(Debug, Clone, PartialEq)]
pub enum MakeOutcome {
    /// A new file was written.
    Created(FeatureRequest),
    /// The request was merged into an existing one.
    Merged {
        /// The request after the merge.
        request: FeatureRequest,
        /// Why it was judged a duplicate.
        reason: MatchReason,
    },
}

/// Replacement values for [`FeatureRequestStore::edit`]; `None` keeps the stored value. Values
/// are trimmed; a value that is empty after trimming counts as `None`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct EditRequest {
    /// New canonical title.
    pub title: Option<String>,
    /// New summary.
    pub description: Option<String>,
    /// New rationale.
    pub rationale: Option<String>,
    /// New status.
    pub status: Option<String>,
}

/// Errors of the store. `Display` is the tool message.
pub type Result<T> = std::result::Result<T, MarkdownError>;

/// The feature-request files of one user home (`docs/formats.md#feature-requests`). Holds only
/// paths; every write runs under the home lock and re-reads the directory inside it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FeatureRequestStore {
    elroy_home: PathBuf,
    dir: PathBuf,
    dir_display: String,
}

fn trimmed(value: Option<&str>) -> Option<String> {
    value
        .map(crate::record::py_strip)
        .filter(|v| !v.is_empty())
        .map(str::to_owned)
}

/// Elroy's `_merge_supporting_context`: the new block alone when there was none; unchanged when
/// the identical block is already contained; else appended after a blank line.
pub(crate) fn merge_context(existing: Option<&str>, new: &str) -> String {
    match existing {
        None | Some("") => new.to_owned(),
        Some(old) if old.contains(new) => old.to_owned(),
        Some(old) => format!("{}\n\n{new}", old.trim_end()),
    }
}

impl FeatureRequestStore {
    /// The store of `user_home`, locking `$ELROY_HOME/.lock` of `elroy_home`.
    pub fn new(elroy_home: impl Into<PathBuf>, user_home: impl AsRef<Path>) -> Self {
        let elroy_home = elroy_home.into();
        let dir = user_home.as_ref().join(FEATURE_REQUESTS_DIR);
        let dir_display = match dir.strip_prefix(&elroy_home) {
            Ok(rel) => rel
                .components()
                .map(|c| c.as_os_str().to_string_lossy())
                .collect::<Vec<_>>()
                .join("/"),
            Err(_) => FEATURE_REQUESTS_DIR.to_owned(),
        };
        FeatureRequestStore {
            elroy_home,
            dir,
            dir_display,
        }
    }

    /// The directory (`<user home>/feature-requests`).
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// The display path of a file, relative to `$ELROY_HOME` (`feature-requests/x.md`).
    pub fn display(&self, file_name: &str) -> String {
        format!("{}/{file_name}", self.dir_display)
    }

    /// The `*.md` file names of the directory in file-name (code point) order: the stores' rule
    /// ([`elroy_markdown::list_md_dir`]: regular files, not hidden; a symlink is not followed and
    /// is not a feature request). A missing directory has none.
    fn file_names(&self) -> Result<Vec<String>> {
        Ok(elroy_markdown::list_md_dir(&self.dir, &self.dir_display)?
            .files
            .into_iter()
            .map(|(name, _)| name)
            .collect())
    }

    /// Reads one file.
    ///
    /// # Errors
    /// [`MarkdownError`] naming the file: unreadable, not UTF-8, or invalid front matter.
    pub fn load(&self, file_name: &str) -> Result<FeatureRequest> {
        let display = self.display(file_name);
        let text = read_text(&self.dir.join(file_name), &display)?;
        let doc = Document::parse(&text, &display)?;
        Ok(FeatureRequest::from_document(file_name, &doc))
    }

    /// Every `*.md` file in file-name order, open and closed alike.
    ///
    /// # Errors
    /// Only when the directory itself cannot be listed; unreadable files are
    /// [`Entry::Unreadable`].
    pub fn entries(&self) -> Result<Vec<Entry>> {
        Ok(self
            .file_names()?
            .into_iter()
            .map(|name| match self.load(&name) {
                Ok(request) => Entry::Request(request),
                Err(error) => Entry::Unreadable {
                    file_name: name,
                    error,
                },
            })
            .collect())
    }

    /// Every loadable request in file-name order.
    ///
    /// # Errors
    /// As [`FeatureRequestStore::entries`].
    pub fn requests(&self) -> Result<Vec<FeatureRequest>> {
        Ok(self
            .entries()?
            .into_iter()
            .filter_map(|e| match e {
                Entry::Request(r) => Some(r),
                Entry::Unreadable { .. } => None,
            })
            .collect())
    }

    /// The first file, in file-name order, whose `id`, `title`, stem or any alias normalises to
    /// the same text as `identifier` (`docs/tool-rules.md#matching-feature-requests`). An
    /// unreadable file can only match by its stem, and then its error is returned.
    ///
    /// # Errors
    /// The matching file's read error, or a directory listing error.
    pub fn find(&self, identifier: &str) -> Result<Option<FeatureRequest>> {
        let wanted = normalize(identifier);
        for entry in self.entries()? {
            match entry {
                Entry::Request(r) => {
                    let matches = [r.id.as_str(), r.title.as_str(), r.stem()]
                        .into_iter()
                        .chain(r.aliases.iter().map(String::as_str))
                        .any(|n| normalize(n) == wanted);
                    if matches {
                        return Ok(Some(r));
                    }
                }
                Entry::Unreadable { file_name, error } => {
                    let stem = file_name.strip_suffix(".md").unwrap_or(&file_name);
                    if normalize(stem) == wanted {
                        return Err(error);
                    }
                }
            }
        }
        Ok(None)
    }

    /// `$ELROY_HOME` (whose `.lock` guards every write).
    pub(crate) fn elroy_home(&self) -> &Path {
        &self.elroy_home
    }

    /// Writes a new request file (`docs/formats.md#feature-request-keys`): slug from the title, the
    /// unique path rule, `status: open`, both stamps `now`, no aliases. Call under the home lock.
    pub(crate) fn new_request(
        &self,
        title: &str,
        summary: &str,
        rationale: Option<String>,
        supporting_context: String,
        source: &str,
        stamp: &str,
    ) -> Result<FeatureRequest> {
        let slug = sanitize_filename(
            &title.to_lowercase().replace(['_', ' '], "-"),
            "feature-request",
        );
        let path = unique_path(&self.dir, &slug, None, &self.dir_display)?;
        let file_name = path
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_else(|| format!("{slug}.md"));
        let request = FeatureRequest {
            file_name,
            id: slug,
            title: title.to_owned(),
            status: "open".to_owned(),
            source: source.to_owned(),
            created_at: stamp.to_owned(),
            updated_at: stamp.to_owned(),
            aliases: Vec::new(),
            summary: summary.to_owned(),
            rationale,
            supporting_context: Some(supporting_context),
            front_matter: Mapping::new(),
            body_fallback: None,
        };
        self.write_request(&request)
    }

    /// Writes `request` atomically and returns it as Elroy's loader reads the file back (Elroy
    /// reports the reloaded record: a blank title comes back as the file stem).
    pub(crate) fn write_request(&self, request: &FeatureRequest) -> Result<FeatureRequest> {
        write_atomic(
            &self.dir.join(&request.file_name),
            request.render().as_bytes(),
            &self.display(&request.file_name),
        )?;
        self.load(&request.file_name)
    }

    /// `make_feature_request` (`docs/tools.md#make_feature_request`) at `now` for `user_token`:
    /// merges into the best match (`docs/tool-rules.md#matching-feature-requests`) or writes a new
    /// file. `title`, `description` and `rationale` are trimmed; an empty rationale is absent. Runs
    /// under the home lock.
    ///
    /// # Errors
    /// Lock, listing and write failures.
    pub fn make(
        &self,
        now: Timestamp,
        user_token: &str,
        title: &str,
        description: &str,
        rationale: Option<&str>,
    ) -> Result<MakeOutcome> {
        // The title is a name: stored in NFC (`elroy_markdown::normalize_name`).
        let title = elroy_markdown::normalize_name(crate::record::py_strip(title)).into_owned();
        let description = crate::record::py_strip(description).to_owned();
        let rationale = trimmed(rationale);
        let stamp = isoformat_utc(now);
        let mut lines = vec![
            format!("- Captured at: {stamp}"),
            format!("- Requested title: {title}"),
            format!("- Description: {description}"),
        ];
        if let Some(r) = &rationale {
            lines.push(format!("- Rationale: {r}"));
        }
        lines.push(format!("- User token: {user_token}"));
        let block = lines.join("\n");

        let _lock = HomeLock::acquire(&self.elroy_home)?;
        let requests = self.requests()?;
        let candidates: Vec<Candidate<'_>> = requests
            .iter()
            .map(|r| Candidate {
                title: &r.title,
                aliases: &r.aliases,
                summary: &r.summary,
            })
            .collect();
        if let Some((index, reason)) = best_match(&title, &description, &candidates) {
            let mut request = requests[index].clone();
            let mut aliases: Vec<String> = request.aliases.clone();
            aliases.push(title);
            aliases.retain(|a| *a != request.title);
            aliases.sort();
            aliases.dedup();
            request.aliases = aliases;
            request.supporting_context =
                Some(merge_context(request.supporting_context.as_deref(), &block));
            if request.created_at.is_empty() {
                request.created_at = stamp.clone();
            }
            request.updated_at = stamp;
            let request = self.write_request(&request)?;
            return Ok(MakeOutcome::Merged { request, reason });
        }

        let request = self.new_request(
            &title,
            &description,
            rationale,
            block,
            "user_request",
            &stamp,
        )?;
        Ok(MakeOutcome::Created(request))
    }

    /// `edit_feature_request` (`docs/tools.md#edit_feature_request`) at `now` for `user_token`.
    /// `Ok(None)` when no request matches `identifier` (trimmed). The old title is not added to the
    /// aliases; `id`, `source`, `created_at`, aliases, unknown keys and the file name are kept.
    /// Runs under the home lock.
    ///
    /// # Errors
    /// The matching file's read error (invalid front matter: nothing is written), lock and write
    /// failures.
    pub fn edit(
        &self,
        now: Timestamp,
        user_token: &str,
        identifier: &str,
        changes: &EditRequest,
    ) -> Result<Option<FeatureRequest>> {
        let _lock = HomeLock::acquire(&self.elroy_home)?;
        let Some(mut request) = self.find(crate::record::py_strip(identifier))? else {
            return Ok(None);
        };
        let stamp = isoformat_utc(now);
        if let Some(title) = trimmed(changes.title.as_deref()) {
            request.title = title;
        }
        if let Some(status) = trimmed(changes.status.as_deref()) {
            request.status = status;
        }
        if let Some(summary) = trimmed(changes.description.as_deref()) {
            request.summary = summary;
        }
        if let Some(rationale) = trimmed(changes.rationale.as_deref()) {
            request.rationale = Some(rationale);
        }
        let block = format!("- Edited at: {stamp}\n- Edited by user token: {user_token}");
        request.supporting_context =
            Some(merge_context(request.supporting_context.as_deref(), &block));
        if request.created_at.is_empty() {
            request.created_at = stamp.clone();
        }
        request.updated_at = stamp;
        Ok(Some(self.write_request(&request)?))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn context_merge_rule() {
        assert_eq!(merge_context(None, "b"), "b");
        assert_eq!(merge_context(Some("a\nb\nc"), "b"), "a\nb\nc");
        assert_eq!(merge_context(Some("a  "), "b"), "a\n\nb");
    }
}
