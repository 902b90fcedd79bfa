//! The contrib repository's stub files, byte for byte (`docs/tools.md#create_contrib_repo`).

/// `hello_tool`: a sample plugin tool (mode 0755).
pub const HELLO_TOOL: &str = r#"#!/bin/sh
# Sample Elroy contrib tool.
# `hello_tool --schema` prints the tool's schema; Elroy reads it at startup.
# For a call, Elroy runs `hello_tool` with the JSON arguments on stdin and uses
# stdout as the result. Exit non-zero to report stderr as an error.
if [ "$1" = "--schema" ]; then
  cat <<'EOF'
{"type": "function", "function": {"name": "hello_contrib", "description": "Greet someone from the contrib plugin directory.", "parameters": {"type": "object", "properties": {"name": {"type": "string", "description": "Who to greet."}}, "required": []}}}
EOF
  exit 0
fi
args=$(cat)
name=$(printf '%s' "$args" | sed -n 's/.*"name"[[:space:]]*:[[:space:]]*"\([^"]*\)".*/\1/p')
[ -n "$name" ] || name="world"
printf 'Hello, %s! (from the Elroy contrib repo)\n' "$name"
"#;

/// `hello_panel`: a sample sidebar panel (mode 0755).
pub const HELLO_PANEL: &str = r#"#!/bin/sh
# Sample Elroy sidebar panel.
# `--schema` declares the panel; `--panel` prints the markdown shown in its tab.
case "$1" in
  --schema)
    echo '[{"type": "panel", "title": "Hello"}]'
    ;;
  --panel)
    printf '# Hello from contrib\n\nThis tab is drawn by hello_panel.\n'
    ;;
  *)
    echo "hello_panel supports only --schema and --panel" >&2
    exit 2
    ;;
esac
"#;

/// `README.md` of the contrib repository.
pub const README: &str = r#"# Elroy contrib plugins

Elroy loads the executable files in this directory at startup. Point the
`contrib_tools_path` setting at this directory, then restart Elroy. Files whose
names start with `_` or `.` are ignored.

## Tools

An executable that prints a tool schema when run with `--schema` becomes an
assistant tool. For each call, Elroy runs it without arguments, writes the
call's JSON arguments to its standard input, and uses its standard output as the
result. A non-zero exit status reports standard error as a tool error.
See `hello_tool`.

## Panels

An executable whose `--schema` output includes
`{"type": "panel", "title": "..."}` adds a sidebar tab. Elroy runs it with
`--panel` and shows the markdown it prints. See `hello_panel`.
"#;

/// `.gitignore` of the contrib repository.
pub const GITIGNORE: &str = r#"# Local files that should not be committed
*.log
*.tmp
.env
"#;

/// A stub: file name, content, executable.
pub type Stub = (&'static str, &'static str, bool);

/// Every stub in the order `create_contrib_repo` writes them.
pub const ALL: [Stub; 4] = [
    ("hello_tool", HELLO_TOOL, true),
    ("hello_panel", HELLO_PANEL, true),
    ("README.md", README, false),
    (".gitignore", GITIGNORE, false),
];

/// The stubs `edit_contrib_with_codex` ensures (no sample plugins).
pub const DOCS_ONLY: [Stub; 2] = [
    ("README.md", README, false),
    (".gitignore", GITIGNORE, false),
];
