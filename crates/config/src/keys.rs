//! The configuration keys (`orchestrator.md` §15.3, decision K7): name, type, default and
//! environment variable of each.

/// The type of a configuration value (`orchestrator.md` §15.2).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum KeyType {
    /// A boolean: YAML booleans, or `true/false/yes/no/on/off/1/0` ignoring case.
    Bool,
    /// An integer at least `min`.
    Int {
        /// The smallest value allowed.
        min: i64,
    },
    /// A floating-point number.
    Float,
    /// A string; numbers are taken as their text.
    Str,
    /// A list of strings: a YAML list; from the environment a JSON array or a comma-separated string.
    List,
    /// A list of paths: as `List`, but the environment form is separated by `:` (the platform's
    /// path-list separator).
    PathList,
}

/// One configuration key.
#[derive(Debug, Clone, Copy)]
pub struct KeyDef {
    /// The key as written in `elroy.conf.yaml`.
    pub name: &'static str,
    /// Its type.
    pub ty: KeyType,
    /// The default as YAML text, or `None` for null.
    pub default: Option<&'static str>,
    /// The environment variable that sets it.
    pub env: &'static str,
    /// Whether `elroy config` masks it (API keys).
    pub secret: bool,
    /// One line on what it does (for `docs/configuration.md` and `elroy config --help`).
    pub doc: &'static str,
}

const fn key(
    name: &'static str,
    ty: KeyType,
    default: Option<&'static str>,
    env: &'static str,
    doc: &'static str,
) -> KeyDef {
    KeyDef {
        name,
        ty,
        default,
        env,
        secret: false,
        doc,
    }
}

const fn secret(name: &'static str, env: &'static str, doc: &'static str) -> KeyDef {
    KeyDef {
        name,
        ty: KeyType::Str,
        default: None,
        env,
        secret: true,
        doc,
    }
}

const B: KeyType = KeyType::Bool;
const I: KeyType = KeyType::Int { min: 0 };
const I1: KeyType = KeyType::Int { min: 1 };
const F: KeyType = KeyType::Float;
const S: KeyType = KeyType::Str;

/// Every key, in the order of the spec's tables (Elroy's keys first, then ours).
pub const KEYS: &[KeyDef] = &[
    key(
        "user_token",
        S,
        Some("DEFAULT"),
        "ELROY_USER_TOKEN",
        "selects the user and the user home",
    ),
    key(
        "database_url",
        S,
        None,
        "ELROY_DATABASE_URL",
        "database location (default sqlite:///$ELROY_HOME/state.db)",
    ),
    key(
        "chroma_path",
        S,
        None,
        "ELROY_CHROMA_PATH",
        "accepted, ignored (vectors live in state.db)",
    ),
    key(
        "debug",
        B,
        Some("false"),
        "ELROY_DEBUG",
        "log level DEBUG unless ELROY_LOG_LEVEL is set",
    ),
    key(
        "default_assistant_name",
        S,
        Some("Elroy"),
        "ELROY_DEFAULT_ASSISTANT_NAME",
        "assistant name when the user set none",
    ),
    key(
        "include_base_tools",
        B,
        Some("true"),
        "ELROY_INCLUDE_BASE_TOOLS",
        "register the 41 built-in tools",
    ),
    key(
        "custom_tools_path",
        KeyType::PathList,
        None,
        "ELROY_CUSTOM_TOOLS_PATH",
        "plugin paths",
    ),
    key(
        "inline_tool_calls",
        B,
        Some("false"),
        "ELROY_INLINE_TOOL_CALLS",
        "tools in the system prompt, calls parsed from text",
    ),
    key(
        "max_ingested_doc_lines",
        I,
        Some("1000"),
        "ELROY_MAX_INGESTED_DOC_LINES",
        "accepted, unused",
    ),
    key(
        "reflect",
        B,
        Some("false"),
        "ELROY_REFLECT",
        "reflective recall",
    ),
    key(
        "chat_model",
        S,
        None,
        "ELROY_CHAT_MODEL",
        "main model (inferred from API keys when unset)",
    ),
    key(
        "chat_model_api_base",
        S,
        None,
        "ELROY_CHAT_MODEL_API_BASE",
        "OpenAI-compatible (or Anthropic) base URL",
    ),
    secret(
        "chat_model_api_key",
        "ELROY_CHAT_MODEL_API_KEY",
        "key for the chat model",
    ),
    key(
        "fast_model",
        S,
        None,
        "ELROY_FAST_MODEL",
        "background model (default: the chat model)",
    ),
    key(
        "fast_model_api_base",
        S,
        None,
        "ELROY_FAST_MODEL_API_BASE",
        "base URL for the fast model",
    ),
    secret(
        "fast_model_api_key",
        "ELROY_FAST_MODEL_API_KEY",
        "key for the fast model",
    ),
    key(
        "embedding_model",
        S,
        Some("text-embedding-3-small"),
        "ELROY_EMBEDDING_MODEL",
        "embedding model; empty disables embeddings",
    ),
    key(
        "embedding_model_size",
        I,
        Some("1536"),
        "ELROY_EMBEDDING_MODEL_SIZE",
        "informational",
    ),
    key(
        "embedding_model_api_base",
        S,
        None,
        "ELROY_EMBEDDING_MODEL_API_BASE",
        "base URL for embeddings",
    ),
    secret(
        "embedding_model_api_key",
        "ELROY_EMBEDDING_MODEL_API_KEY",
        "key for embeddings",
    ),
    key(
        "enable_caching",
        B,
        Some("true"),
        "ELROY_ENABLE_CACHING",
        "Anthropic prompt-cache markers",
    ),
    secret(
        "openai_api_key",
        "OPENAI_API_KEY",
        "deprecated fallback key",
    ),
    key(
        "openai_api_base",
        S,
        None,
        "OPENAI_API_BASE",
        "deprecated fallback base URL",
    ),
    key(
        "openai_embedding_api_base",
        S,
        None,
        "ELROY_OPENAI_EMBEDDING_API_BASE",
        "deprecated fallback for embeddings",
    ),
    key(
        "openai_organization",
        S,
        None,
        "ELROY_OPENAI_ORGANIZATION",
        "deprecated",
    ),
    secret(
        "anthropic_api_key",
        "ELROY_ANTHROPIC_API_KEY",
        "deprecated fallback key",
    ),
    key(
        "max_assistant_loops",
        I,
        Some("4"),
        "ELROY_MAX_ASSISTANT_LOOPS",
        "tool rounds allowed: 0..=this",
    ),
    key(
        "max_tokens",
        I1,
        Some("100000"),
        "ELROY_MAX_TOKENS",
        "context size that triggers a refresh; target is a third",
    ),
    key(
        "max_context_age_minutes",
        F,
        Some("720.0"),
        "ELROY_MAX_CONTEXT_AGE_MINUTES",
        "age-out and compression cut-off",
    ),
    key(
        "min_convo_age_for_greeting_minutes",
        F,
        Some("120.0"),
        "ELROY_MIN_CONVO_AGE_FOR_GREETING_MINUTES",
        "accepted, unused",
    ),
    key(
        "memory_cluster_similarity_threshold",
        F,
        Some("0.21125"),
        "ELROY_MEMORY_CLUSTER_SIMILARITY_THRESHOLD",
        "clustering distance",
    ),
    key(
        "memories_between_consolidation",
        I,
        Some("4"),
        "ELROY_MEMORIES_BETWEEN_CONSOLIDATION",
        "consolidation trigger",
    ),
    key(
        "messages_between_memory",
        I,
        Some("20"),
        "ELROY_MESSAGES_BETWEEN_MEMORY",
        "automatic memory trigger; 0 disables",
    ),
    key(
        "messages_between_self_reflection",
        I,
        Some("10"),
        "ELROY_MESSAGES_BETWEEN_SELF_REFLECTION",
        "self-reflection trigger; 0 disables",
    ),
    key(
        "l2_memory_relevance_distance_threshold",
        F,
        Some("1.4"),
        "ELROY_L2_MEMORY_RELEVANCE_DISTANCE_THRESHOLD",
        "sets the default cosine threshold",
    ),
    key(
        "max_memory_cluster_size",
        I,
        Some("5"),
        "ELROY_MAX_MEMORY_CLUSTER_SIZE",
        "largest consolidation cluster",
    ),
    key(
        "min_memory_cluster_size",
        I,
        Some("3"),
        "ELROY_MIN_MEMORY_CLUSTER_SIZE",
        "smallest consolidation cluster",
    ),
    key(
        "memory_recall_classifier_enabled",
        B,
        Some("false"),
        "ELROY_MEMORY_RECALL_CLASSIFIER_ENABLED",
        "LLM recall gate",
    ),
    key(
        "memory_recall_classifier_window",
        I,
        Some("3"),
        "ELROY_MEMORY_RECALL_CLASSIFIER_WINDOW",
        "messages the recall gate reads",
    ),
    key(
        "show_internal_thought",
        B,
        Some("true"),
        "ELROY_SHOW_INTERNAL_THOUGHT",
        "show thoughts and injected context",
    ),
    key(
        "system_message_color",
        S,
        Some("'#9ACD32'"),
        "ELROY_SYSTEM_MESSAGE_COLOR",
        "UI colour",
    ),
    key(
        "user_input_color",
        S,
        Some("'#FFE377'"),
        "ELROY_USER_INPUT_COLOR",
        "UI colour",
    ),
    key(
        "assistant_color",
        S,
        Some("'#77DFD8'"),
        "ELROY_ASSISTANT_COLOR",
        "UI colour",
    ),
    key(
        "warning_color",
        S,
        Some("yellow"),
        "ELROY_WARNING_COLOR",
        "UI colour",
    ),
    key(
        "internal_thought_color",
        S,
        Some("'#708090'"),
        "ELROY_INTERNAL_THOUGHT_COLOR",
        "UI colour",
    ),
    key(
        "shell_commands",
        B,
        Some("false"),
        "ELROY_SHELL_COMMANDS",
        "accepted, unused (no shell tool)",
    ),
    key(
        "allowed_shell_command_prefixes",
        KeyType::List,
        Some("['.*']"),
        "ELROY_ALLOWED_SHELL_COMMAND_PREFIXES",
        "accepted, unused",
    ),
    key(
        "memory_dir",
        S,
        None,
        "ELROY_MEMORY_DIR",
        "memory directory (default <user home>/memories)",
    ),
    key(
        "exclude_tools",
        KeyType::List,
        Some("[]"),
        "ELROY_EXCLUDE_TOOLS",
        "tools not registered",
    ),
    // Keys that are ours.
    key(
        "timezone",
        S,
        None,
        "ELROY_TIMEZONE",
        "zone for naive times and displays (IANA name, UTC or local; default: TZ, else the system zone)",
    ),
    key(
        "memory_relevance_cosine_threshold",
        F,
        None,
        "ELROY_MEMORY_RELEVANCE_COSINE_THRESHOLD",
        "embedding recall cut (default 1 - l2 threshold / 2)",
    ),
    key(
        "max_tool_failures_per_turn",
        I1,
        Some("3"),
        "ELROY_MAX_TOOL_FAILURES_PER_TURN",
        "repeated-failure stop",
    ),
    key(
        "llm_timeout_seconds",
        I1,
        Some("120"),
        "ELROY_LLM_TIMEOUT_SECONDS",
        "stream idle timeout",
    ),
    key(
        "web_search_url",
        S,
        Some("https://html.duckduckgo.com/html/"),
        "ELROY_WEB_SEARCH_URL",
        "web_search endpoint",
    ),
    key(
        "web_timeout_seconds",
        I1,
        Some("20"),
        "ELROY_WEB_TIMEOUT_SECONDS",
        "fetch_page/web_search timeout",
    ),
    key(
        "contrib_tools_path",
        KeyType::PathList,
        None,
        "ELROY_CONTRIB_TOOLS_PATH",
        "plugin paths",
    ),
    key(
        "plugin_timeout_seconds",
        I1,
        Some("60"),
        "ELROY_PLUGIN_TIMEOUT_SECONDS",
        "plugin call timeout",
    ),
    key(
        "codex_command",
        S,
        Some("codex"),
        "ELROY_CODEX_COMMAND",
        "Codex program and leading arguments",
    ),
    key(
        "codex_timeout_seconds",
        I1,
        Some("900"),
        "ELROY_CODEX_TIMEOUT_SECONDS",
        "Codex run timeout",
    ),
    key(
        "elroy_source_path",
        S,
        None,
        "ELROY_ELROY_SOURCE_PATH",
        "tree for inspect_elroy_with_codex",
    ),
    key(
        "elroy_db_path",
        S,
        None,
        "ELROY_ELROY_DB_PATH",
        "Elroy's database, read-only, for memory names (default $ELROY_HOME/elroy.db)",
    ),
    key(
        "versioned_home",
        B,
        Some("true"),
        "ELROY_VERSIONED_HOME",
        "commit every change elroy makes to the markdown stores to a git repository in the home (elroy history, elroy undo)",
    ),
];

/// Keys that still work but warn (`orchestrator.md` §15.2): the first five only in the file.
pub const DEPRECATED_IN_FILE: &[&str] = &[
    "openai_api_key",
    "openai_api_base",
    "openai_embedding_api_base",
    "openai_organization",
    "anthropic_api_key",
];

/// Keys Elroy had that are ignored with a warning.
pub const IGNORED_KEYS: &[&str] = &[
    "context_refresh_target_tokens",
    "context_refresh_trigger_tokens",
];

/// The definition of `name`.
pub fn key_def(name: &str) -> Option<&'static KeyDef> {
    KEYS.iter().find(|k| k.name == name)
}
