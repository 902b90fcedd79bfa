//! The secrets no model's call reads, in any mode, unless an allow rule names that exact path
//! (`docs/security.md#secrets`). Paths are compared after resolving symlinks and `..`.

use std::path::{Path, PathBuf};

use globset::{GlobBuilder, GlobSet, GlobSetBuilder};

/// Paths under the person's home directory that hold credentials (a directory covers everything
/// in it).
const HOME_SECRETS: &[&str] = &[
    ".ssh",
    ".gnupg",
    ".aws",
    ".azure",
    ".config/gcloud",
    ".kube",
    ".docker/config.json",
    ".netrc",
    ".git-credentials",
    ".pgpass",
    ".config/gh",
    ".config/hub",
    ".npmrc",
    ".pypirc",
    ".cargo/credentials",
    ".cargo/credentials.toml",
    ".password-store",
];

/// Secrets anywhere: environment files, private keys, a process's environment and memory, the
/// shadow password files.
const ANYWHERE: &[&str] = &[
    "**/.env",
    "**/.env.*",
    "**/.envrc",
    "**/*.pem",
    "**/*.key",
    "**/*_rsa",
    "**/*_dsa",
    "**/*_ecdsa",
    "**/*_ed25519",
    "**/*_rsa_sk",
    "**/*_ecdsa_sk",
    "**/*_ed25519_sk",
    "**/*.p12",
    "**/*.pfx",
    "/proc/*/environ",
    "/proc/*/mem",
    "/proc/*/task/*/environ",
    "/proc/*/task/*/mem",
    "/etc/shadow",
    "/etc/gshadow",
];

/// Why a path is a secret, for the refusal's words.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SecretKind {
    /// A credentials file or folder of the person's home directory (`~/.ssh`, `~/.aws`, …).
    Credentials,
    /// An environment file, a private key, a process's environment or memory, a password file.
    Pattern,
    /// elroy's own configuration (it holds API keys).
    ElroyConfig,
}

/// The secrets list, built once per process.
#[derive(Debug, Clone)]
pub struct Secrets {
    home: Vec<PathBuf>,
    anywhere: GlobSet,
    configs: Vec<PathBuf>,
}

impl Secrets {
    /// The list for a person whose home directory is `user_dir`; `configs` are elroy's
    /// configuration files (the home's `elroy.conf.yaml`, a `--config FILE`), resolved.
    pub fn new(user_dir: Option<&Path>, configs: Vec<PathBuf>) -> Self {
        let home = user_dir
            .map(|dir| {
                let dir = crate::path::resolve_existing(dir);
                HOME_SECRETS.iter().map(|rel| dir.join(rel)).collect()
            })
            .unwrap_or_default();
        let mut set = GlobSetBuilder::new();
        for pattern in ANYWHERE {
            // The patterns are constants: a failure would be a bug caught by the tests.
            // `server.PEM`, `.ENV`: case does not make a key less secret.
            if let Ok(glob) = GlobBuilder::new(pattern)
                .literal_separator(true)
                .case_insensitive(true)
                .build()
            {
                set.add(glob);
            }
        }
        Secrets {
            home,
            anywhere: set.build().unwrap_or_else(|_| GlobSet::empty()),
            configs: configs
                .iter()
                .map(|p| crate::path::resolve_existing(p))
                .collect(),
        }
    }

    /// Why `path` (resolved) is a secret, or `None`.
    pub fn classify(&self, path: &Path) -> Option<SecretKind> {
        if self.configs.iter().any(|c| c == path) {
            return Some(SecretKind::ElroyConfig);
        }
        // Compared without case too: on a case-insensitive disk `~/.SSH` is `~/.ssh`.
        let lower = PathBuf::from(path.to_string_lossy().to_lowercase());
        if self
            .home
            .iter()
            .any(|s| path.starts_with(s) || lower.starts_with(s.to_string_lossy().to_lowercase()))
        {
            return Some(SecretKind::Credentials);
        }
        // A file inside a folder named like a secret (`.env/…` is rare; keys are files).
        if self.anywhere.is_match(path) {
            return Some(SecretKind::Pattern);
        }
        None
    }
}

impl SecretKind {
    /// The refusal's words.
    pub fn describe(&self) -> &'static str {
        match self {
            SecretKind::Credentials => "it holds credentials",
            SecretKind::Pattern => {
                "it is a secret (an environment file, a private key, a process's environment or memory, or a password file)"
            }
            SecretKind::ElroyConfig => "it is elroy's configuration, which holds API keys",
        }
    }
}
