//! Which files of a home are versioned.

/// The `.gitignore` written into a new home repository: everything is ignored except the markdown
/// stores of the `DEFAULT` user (the home itself) and of every `users/<token>/` home. It keeps
/// `state.db`, `logs/`, `cache/` and `.lock` out; [`is_store_path`] is the exact rule elroy stages by.
pub const GITIGNORE: &str = "\
# elroy versions only its markdown stores (elroy history, elroy undo); see is_store_path.
/*
!/.gitignore
!/agenda/
!/feature-requests/
!/memories/
!/MEMORY.md
!/USER.md
!/users/
/users/*/*
!/users/*/agenda/
!/users/*/feature-requests/
!/users/*/memories/
!/users/*/MEMORY.md
!/users/*/USER.md
";

/// The pathspecs handed to libgit2's status walk (a superset; [`is_store_path`] filters).
pub(crate) const PATHSPECS: [&str; 6] = [
    "agenda",
    "feature-requests",
    "memories",
    "MEMORY.md",
    "USER.md",
    "users",
];

const STORE_DIRS: [&str; 3] = ["agenda", "feature-requests", "memories"];
const NOTEBOOK_FILES: [&str; 2] = ["MEMORY.md", "USER.md"];

/// Whether `path` (relative to `$ELROY_HOME`, `/`-separated) belongs to a markdown store:
/// `agenda/…/*.md`, `feature-requests/…/*.md`, `memories/…/*.md` (the archive included), `MEMORY.md`
/// or `USER.md`, at the top or below `users/<token>/`. Hidden files (atomic-write temporaries,
/// editor swap files) never are: the file names are the stores' own rule
/// ([`elroy_markdown::is_md_name`]). A symlink with such a name is versioned as a link (git's
/// way), never followed.
pub fn is_store_path(path: &str) -> bool {
    let rest = match path.strip_prefix("users/") {
        Some(rest) => match rest.split_once('/') {
            Some((token, rest)) if !token.is_empty() => rest,
            _ => return false,
        },
        None => path,
    };
    if NOTEBOOK_FILES.contains(&rest) {
        return true;
    }
    let Some((dir, inner)) = rest.split_once('/') else {
        return false;
    };
    let file = inner.rsplit('/').next().unwrap_or(inner);
    STORE_DIRS.contains(&dir)
        && elroy_markdown::is_md_name(file)
        && inner
            .split('/')
            .all(|part| !part.is_empty() && part != "..")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn store_paths() {
        for yes in [
            "agenda/Water_the_plants.md",
            "feature-requests/Dark_mode.md",
            "memories/Trip.md",
            "memories/archive/Old.md",
            "MEMORY.md",
            "USER.md",
            "users/alice/agenda/x.md",
            "users/alice/MEMORY.md",
        ] {
            assert!(is_store_path(yes), "{yes}");
        }
        for no in [
            "state.db",
            ".lock",
            "logs/elroy.log",
            "cache/history",
            "SOUL.md",
            "agenda/.x.md.tmp-1-abcd",
            "agenda/.x.md.swp",
            "agenda/notes.txt",
            "agenda",
            "users/MEMORY.md",
            "users//agenda/x.md",
            "users/alice/state.db",
            "elroy.conf.yaml",
            ".gitignore",
        ] {
            assert!(!is_store_path(no), "{no}");
        }
    }
}
