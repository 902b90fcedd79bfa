//! Permission rules (`docs/security.md#rules`): a tool name or glob, optionally with a specifier —
//! a path glob for path tools, `domain:HOST` for network tools.
//!
//! `read_file`, `mcp__github__*`, `read_file(~/notes/**)`, `ls(/srv/data)`,
//! `fetch_page(domain:en.wikipedia.org)`, `fetch_page(domain:*.example.org)`.

use std::fmt;
use std::path::{Path, PathBuf};

use globset::{Glob, GlobBuilder, GlobMatcher, GlobSet, GlobSetBuilder};

use crate::path::{Roots, resolve_glob_prefix};

/// A rule that could not be read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum RuleError {
    /// Nothing but white space.
    #[error("a rule cannot be empty")]
    Empty,
    /// `NAME(` without the closing parenthesis, or text after it.
    #[error("'{0}' is not NAME or NAME(SPECIFIER): check the parentheses")]
    Parentheses(String),
    /// An empty specifier `NAME()`.
    #[error(
        "'{0}' has an empty specifier: write NAME alone, or a path glob or domain:HOST inside the parentheses"
    )]
    EmptySpecifier(String),
    /// The tool-name glob or the path glob is not a glob.
    #[error("'{rule}': {message}")]
    Glob {
        /// The rule as written.
        rule: String,
        /// What is wrong with the glob.
        message: String,
    },
    /// `domain:` with no host, a port, or a host with characters no host has.
    #[error(
        "'{0}': domain: needs a host name without a port, such as example.org or *.example.org"
    )]
    Domain(String),
    /// A specifier that is neither `domain:HOST` nor a path glob (`domain=x`, a URL).
    #[error("'{0}': the specifier is neither a path glob (/…, ~/…, ./…) nor domain:HOST")]
    NotAPath(String),
}

/// What a rule's specifier matches.
#[derive(Debug, Clone)]
pub enum Specifier {
    /// Any call of the named tools.
    Any,
    /// Calls whose target path, resolved, matches this glob (`~` expanded, its literal leading
    /// directories resolved through symlinks).
    Path {
        /// The glob as resolved (absolute).
        pattern: String,
        /// True when the pattern has no glob characters: it names one exact path (the only kind
        /// of rule that lets a secret through).
        exact: bool,
        /// The compiled glob (and `DIR` itself for `DIR/**`).
        matcher: GlobSet,
    },
    /// Calls whose URL's host is this host (`*.example.org`: any subdomain of example.org).
    Domain(String),
}

/// One permission rule.
#[derive(Debug, Clone)]
pub struct Rule {
    text: String,
    name: GlobMatcher,
    specifier: Specifier,
}

impl fmt::Display for Rule {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.text)
    }
}

fn name_glob(rule: &str, name: &str) -> Result<GlobMatcher, RuleError> {
    Glob::new(name)
        .map(|g| g.compile_matcher())
        .map_err(|e| RuleError::Glob {
            rule: rule.to_owned(),
            message: e.kind().to_string(),
        })
}

fn strip_prefix_ignore_case<'a>(s: &'a str, prefix: &str) -> Option<&'a str> {
    s.get(..prefix.len())
        .filter(|head| head.eq_ignore_ascii_case(prefix))
        .map(|_| &s[prefix.len()..])
}

/// A path glob starts like a path: `/`, `~`, `.`, or a glob character; `domain=x` or
/// `http://…` is a mistyped specifier, refused rather than silently matching nothing.
fn looks_like_path(spec: &str) -> bool {
    !spec.contains("://")
        && !spec.contains('=')
        && (spec.starts_with(['/', '~', '.', '*', '?', '[', '{'])
            || spec.chars().next().is_some_and(char::is_alphanumeric))
}

/// The glob's matcher; `DIR/**` also matches `DIR` itself (`ls(/etc/**)` covers `ls /etc`).
fn path_matcher(rule: &str, pattern: &str) -> Result<GlobSet, RuleError> {
    let mut set = GlobSetBuilder::new();
    let mut add = |p: &str| -> Result<(), RuleError> {
        let glob = GlobBuilder::new(p)
            .literal_separator(true)
            .build()
            .map_err(|e| RuleError::Glob {
                rule: rule.to_owned(),
                message: e.kind().to_string(),
            })?;
        set.add(glob);
        Ok(())
    };
    add(pattern)?;
    if let Some(dir) = pattern.strip_suffix("/**")
        && !dir.is_empty()
    {
        add(dir)?;
    }
    set.build().map_err(|e| RuleError::Glob {
        rule: rule.to_owned(),
        message: e.kind().to_string(),
    })
}

/// `path` with glob characters escaped, so a rule made from it names that one path.
pub(crate) fn escape_glob(path: &str) -> String {
    let mut out = String::with_capacity(path.len());
    for c in path.chars() {
        if matches!(c, '*' | '?' | '[' | ']' | '{' | '}') {
            out.push('[');
            out.push(c);
            out.push(']');
        } else {
            out.push(c);
        }
    }
    out
}

fn has_glob_chars(s: &str) -> bool {
    s.contains(['*', '?', '[', '{'])
}

impl Rule {
    /// Reads a rule; `~` and relative path globs resolve against `roots` (the person's home
    /// directory and the working directory).
    ///
    /// # Errors
    /// A [`RuleError`] saying what is wrong.
    pub fn parse(text: &str, roots: &Roots) -> Result<Rule, RuleError> {
        let text = text.trim();
        if text.is_empty() {
            return Err(RuleError::Empty);
        }
        let (name, spec) = match text.find('(') {
            None => (text, None),
            Some(open) => {
                let Some(inner) = text[open + 1..].strip_suffix(')') else {
                    return Err(RuleError::Parentheses(text.to_owned()));
                };
                (&text[..open], Some(inner.trim()))
            }
        };
        let name = name.trim();
        if name.is_empty() || name.contains(')') {
            return Err(RuleError::Parentheses(text.to_owned()));
        }
        let specifier = match spec {
            None => Specifier::Any,
            Some("") => return Err(RuleError::EmptySpecifier(text.to_owned())),
            Some(spec) => match strip_prefix_ignore_case(spec, "domain:") {
                Some(host) => {
                    let host = host.trim().trim_end_matches('.').to_ascii_lowercase();
                    let bare = host.strip_prefix("*.").unwrap_or(&host);
                    let bracketed = bare.starts_with('[') && bare.ends_with(']');
                    if bare.is_empty()
                        || (!bracketed && bare.contains(':'))
                        || !bare.chars().all(|c| {
                            c.is_ascii_alphanumeric() || matches!(c, '.' | '-' | ':' | '[' | ']')
                        })
                    {
                        return Err(RuleError::Domain(text.to_owned()));
                    }
                    Specifier::Domain(host.trim_matches(['[', ']']).to_owned())
                }
                None => {
                    if !looks_like_path(spec) {
                        return Err(RuleError::NotAPath(text.to_owned()));
                    }
                    let pattern = resolve_glob_prefix(spec, roots);
                    let matcher = path_matcher(text, &pattern)?;
                    Specifier::Path {
                        exact: !has_glob_chars(spec),
                        pattern,
                        matcher,
                    }
                }
            },
        };
        Ok(Rule {
            text: text.to_owned(),
            name: name_glob(text, name)?,
            specifier,
        })
    }

    /// The rule as written.
    pub fn as_str(&self) -> &str {
        &self.text
    }

    /// Its specifier.
    pub fn specifier(&self) -> &Specifier {
        &self.specifier
    }

    /// True when the rule names the tool `name`, whatever its specifier.
    pub fn names_tool(&self, name: &str) -> bool {
        self.name.is_match(name)
    }

    /// True when the rule covers a call of `tool` reaching `target`.
    pub fn matches(&self, tool: &str, target: &ResolvedTarget) -> bool {
        if !self.name.is_match(tool) {
            return false;
        }
        match (&self.specifier, target) {
            (Specifier::Any, _) => true,
            (Specifier::Path { matcher, .. }, ResolvedTarget::Path(path)) => matcher.is_match(path),
            (Specifier::Domain(host), ResolvedTarget::Url { host: Some(h), .. }) => {
                domain_matches(host, h)
            }
            _ => false,
        }
    }

    /// True when the rule names exactly `path` for `tool` (a path specifier without glob
    /// characters): what lets a secret through.
    pub fn names_exact_path(&self, tool: &str, path: &Path) -> bool {
        self.name.is_match(tool)
            && matches!(&self.specifier, Specifier::Path { exact: true, pattern, .. }
                if Path::new(pattern) == path)
    }
}

fn domain_matches(rule_host: &str, host: &str) -> bool {
    let host = host.trim_end_matches('.').to_ascii_lowercase();
    match rule_host.strip_prefix("*.") {
        Some(parent) => host
            .strip_suffix(parent)
            .is_some_and(|sub| sub.ends_with('.') && sub.len() > 1),
        None => host == rule_host,
    }
}

/// What a call reaches, resolved for matching.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ResolvedTarget {
    /// Nothing a rule's specifier can match.
    None,
    /// A filesystem path, absolute, symlinks and `..` resolved as far as the path exists.
    Path(PathBuf),
    /// A URL, and its host when it has one.
    Url {
        /// The URL as given.
        url: String,
        /// Its host, lower case.
        host: Option<String>,
    },
}

impl ResolvedTarget {
    /// The narrowest rule that allows a call of `tool` reaching this target.
    pub fn narrowest_rule(&self, tool: &str) -> String {
        match self {
            ResolvedTarget::Path(path) => {
                format!("{tool}({})", escape_glob(&path.to_string_lossy()))
            }
            ResolvedTarget::Url {
                host: Some(host), ..
            } => format!("{tool}(domain:{host})"),
            _ => tool.to_owned(),
        }
    }
}
