//! The configuration keys (`docs/configuration.md#keys`, decision K7), each declared once in
//! [`declare_keys!`]: name, Rust type, key type, default, environment variable, documentation,
//! where it comes from, and flags. From that one declaration come the typed [`Settings`] struct the
//! code reads, the [`KEYS`] metadata (`elroy config`, `docs/configuration.md`, validation
//! messages), and [`Settings`]' rustdoc.

use std::path::PathBuf;

use crate::value::ConfigValue;

/// The type of a configuration value (`docs/configuration.md#sources`).
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
    /// A mapping (a YAML mapping; from the environment or a flag, a JSON object).
    Map,
}

impl KeyType {
    /// The family of this type, for the compile-time check that a key's Rust type matches it.
    const fn family(self) -> u8 {
        match self {
            KeyType::Bool => 0,
            KeyType::Int { .. } => 1,
            KeyType::Float => 2,
            KeyType::Str => 3,
            KeyType::List => 4,
            KeyType::PathList => 5,
            KeyType::Map => 6,
        }
    }
}

/// One configuration key's metadata, generated from its declaration.
#[derive(Debug, Clone, Copy)]
pub struct KeyDef {
    /// The key as written in `elroy.conf.yaml` (and the field name in [`Settings`]).
    pub name: &'static str,
    /// Its type.
    pub ty: KeyType,
    /// The default as YAML text, or `None` for null.
    pub default: Option<&'static str>,
    /// The environment variable that sets it.
    pub env: &'static str,
    /// Whether `elroy config` masks it (API keys).
    pub secret: bool,
    /// Whether setting it in the file warns that it is deprecated
    /// (`docs/configuration.md#sources`).
    pub deprecated: bool,
    /// `false` for keys Elroy has that elroy does not implement: setting one to anything but its
    /// default stops start-up with `<key> is not implemented by elroy …`.
    pub implemented: bool,
    /// One line on what it does (for `docs/configuration.md` and `elroy config --help`).
    pub doc: &'static str,
    /// Where the key comes from: Elroy 0.5.0, a docs heading (`docs/behaviour.md#embeddings`), a
    /// decision (`D16`, `K7`) or an issue.
    pub spec: &'static str,
}

/// A Rust type a key can have in [`Settings`], and how it is taken from a parsed value.
pub(crate) trait FieldType: Sized + Default {
    /// The [`KeyType`] family this Rust type holds (checked against the declaration at compile time).
    const FAMILY: u8;
    /// Whether the key needs a default (a plain `String`, `bool`, … cannot be null).
    const NEEDS_DEFAULT: bool;
    /// The typed value, `None` when `value` does not fit (a broken declaration; tested).
    fn extract(value: &ConfigValue) -> Option<Self>;
}

impl FieldType for bool {
    const FAMILY: u8 = KeyType::Bool.family();
    const NEEDS_DEFAULT: bool = true;
    fn extract(value: &ConfigValue) -> Option<Self> {
        match value {
            ConfigValue::Bool(b) => Some(*b),
            _ => None,
        }
    }
}

impl FieldType for u64 {
    const FAMILY: u8 = KeyType::Int { min: 0 }.family();
    const NEEDS_DEFAULT: bool = true;
    fn extract(value: &ConfigValue) -> Option<Self> {
        match value {
            ConfigValue::Int(i) => u64::try_from(*i).ok(),
            _ => None,
        }
    }
}

impl FieldType for f64 {
    const FAMILY: u8 = KeyType::Float.family();
    const NEEDS_DEFAULT: bool = true;
    fn extract(value: &ConfigValue) -> Option<Self> {
        match value {
            ConfigValue::Float(f) => Some(*f),
            _ => None,
        }
    }
}

impl FieldType for Option<f64> {
    const FAMILY: u8 = KeyType::Float.family();
    const NEEDS_DEFAULT: bool = false;
    fn extract(value: &ConfigValue) -> Option<Self> {
        match value {
            ConfigValue::Null => Some(None),
            other => f64::extract(other).map(Some),
        }
    }
}

impl FieldType for String {
    const FAMILY: u8 = KeyType::Str.family();
    const NEEDS_DEFAULT: bool = true;
    fn extract(value: &ConfigValue) -> Option<Self> {
        match value {
            ConfigValue::Str(s) if !s.trim().is_empty() => Some(s.clone()),
            _ => None,
        }
    }
}

impl FieldType for Option<String> {
    const FAMILY: u8 = KeyType::Str.family();
    const NEEDS_DEFAULT: bool = false;
    fn extract(value: &ConfigValue) -> Option<Self> {
        match value {
            // Null and blank never reach here from a layer; both mean "unset".
            ConfigValue::Null => Some(None),
            ConfigValue::Str(s) => Some(Some(s.clone()).filter(|s| !s.trim().is_empty())),
            _ => None,
        }
    }
}

impl FieldType for Vec<String> {
    const FAMILY: u8 = KeyType::List.family();
    const NEEDS_DEFAULT: bool = false;
    fn extract(value: &ConfigValue) -> Option<Self> {
        match value {
            ConfigValue::Null => Some(Vec::new()),
            ConfigValue::List(items) => Some(items.clone()),
            _ => None,
        }
    }
}

impl FieldType for Vec<PathBuf> {
    const FAMILY: u8 = KeyType::PathList.family();
    const NEEDS_DEFAULT: bool = false;
    fn extract(value: &ConfigValue) -> Option<Self> {
        match value {
            ConfigValue::Null => Some(Vec::new()),
            ConfigValue::List(items) => Some(items.iter().map(PathBuf::from).collect()),
            _ => None,
        }
    }
}

impl FieldType for serde_json::Map<String, serde_json::Value> {
    const FAMILY: u8 = KeyType::Map.family();
    const NEEDS_DEFAULT: bool = false;
    fn extract(value: &ConfigValue) -> Option<Self> {
        match value {
            ConfigValue::Null => Some(serde_json::Map::new()),
            ConfigValue::Map(map) => Some(map.clone()),
            _ => None,
        }
    }
}

/// `Some("text")` for a declared default, `None` for `null`.
macro_rules! key_default {
    (null) => {
        None
    };
    ($text:literal) => {
        Some($text)
    };
}

/// The default as shown in [`Settings`]' rustdoc.
macro_rules! key_default_doc {
    (null) => {
        "null"
    };
    ($text:literal) => {
        concat!("`", $text, "`")
    };
}

/// Sets one flag of a [`KeyDef`] under construction; an unknown flag does not compile.
macro_rules! key_flag {
    ($def:ident, secret) => {
        $def.secret = true
    };
    ($def:ident, deprecated) => {
        $def.deprecated = true
    };
    ($def:ident, unimplemented) => {
        $def.implemented = false
    };
}

/// Declares every key once. Each entry is
///
/// ```text
/// /// one-line effect (docs/configuration.md, elroy config --help)
/// /// more rustdoc lines (optional)
/// name: RustType = KeyType, default "yaml text" | null, env "ELROY_NAME", spec "where it comes from" [, flag …];
/// ```
///
/// with flags `secret`, `deprecated`, `unimplemented`. It generates [`Settings`] (one field per
/// key), its construction from the resolved values, and [`KEYS`]; at compile time it checks that
/// the Rust type matches the key type and that non-optional types have a default.
macro_rules! declare_keys {
    ($(
        #[doc = $doc:literal]
        $(#[doc = $more:literal])*
        $name:ident : $rust:ty = $ty:expr,
            default $default:tt,
            env $env:literal,
            spec $spec:literal
            $(, $flag:ident)* ;
    )*) => {
        /// Every configuration key with its resolved, typed value (`docs/configuration.md#keys`):
        /// read `config.settings.max_tokens`, never a key by its name, so a misspelt key does not
        /// compile. Integers are `u64` (every integer key is `>= 0`, some `>= 1` as noted),
        /// optional strings are `None` when unset or blank, lists are empty when unset, path
        /// lists are the paths as written (resolve them with [`crate::resolve_path`]).
        #[derive(Debug, Clone, PartialEq)]
        pub struct Settings {
            $(
                #[doc = $doc]
                $(#[doc = $more])*
                #[doc = ""]
                #[doc = concat!(
                    "Key `", stringify!($name), "`, environment variable `", $env,
                    "`, default ", key_default_doc!($default), "; from ", $spec, "."
                )]
                pub $name: $rust,
            )*
        }

        $(
            const _: () = {
                assert!(
                    <$rust as FieldType>::FAMILY == KeyType::family($ty),
                    concat!("key ", stringify!($name), ": its Rust type does not hold its key type")
                );
                let default: Option<&str> = key_default!($default);
                assert!(
                    !<$rust as FieldType>::NEEDS_DEFAULT || default.is_some(),
                    concat!("key ", stringify!($name), ": a non-optional type needs a default")
                );
            };
        )*

        /// Every key at its declared default (what [`crate::Config::load`] gives with no file,
        /// environment or flags).
        impl Default for Settings {
            fn default() -> Self {
                Settings {
                    $(
                        $name: <$rust as FieldType>::extract(&crate::value::default_value(
                            $ty,
                            key_default!($default),
                        ))
                        .unwrap_or_default(),
                    )*
                }
            }
        }

        impl Settings {
            /// The typed values of `resolved` (in [`KEYS`] order, as the loader builds it).
            ///
            /// # Errors
            /// [`crate::ConfigError::InvalidValue`] naming the key when a value does not fit its
            /// Rust type (only a broken declaration can cause it; the defaults test covers each).
            pub(crate) fn from_resolved(
                resolved: &[crate::Resolved],
            ) -> Result<Settings, crate::ConfigError> {
                let mut entries = resolved.iter();
                Ok(Settings {
                    $(
                        $name: {
                            let entry = entries
                                .next()
                                .filter(|e| e.def.name == stringify!($name))
                                .ok_or_else(|| crate::ConfigError::InvalidValue {
                                    key: stringify!($name).into(),
                                    origin: crate::Source::Default,
                                    expected: "the declared key order".into(),
                                    got: "a different order".into(),
                                })?;
                            <$rust as FieldType>::extract(&entry.value).ok_or_else(|| {
                                crate::ConfigError::InvalidValue {
                                    key: stringify!($name).into(),
                                    origin: entry.source.clone(),
                                    expected: stringify!($rust).into(),
                                    got: entry.value.display(),
                                }
                            })?
                        },
                    )*
                })
            }
        }

        /// Every key, in the order of the spec's tables (Elroy's keys first, then ours).
        pub const KEYS: &[KeyDef] = &[
            $({
                #[allow(unused_mut)]
                let mut def = KeyDef {
                    name: stringify!($name),
                    ty: $ty,
                    default: key_default!($default),
                    env: $env,
                    secret: false,
                    deprecated: false,
                    implemented: true,
                    doc: $doc.trim_ascii(),
                    spec: $spec,
                };
                $(key_flag!(def, $flag);)*
                def
            },)*
        ];
    };
}

const B: KeyType = KeyType::Bool;
const I: KeyType = KeyType::Int { min: 0 };
const I1: KeyType = KeyType::Int { min: 1 };
const F: KeyType = KeyType::Float;
const S: KeyType = KeyType::Str;
const L: KeyType = KeyType::List;
const P: KeyType = KeyType::PathList;
const M: KeyType = KeyType::Map;

declare_keys! {
    /// selects the user and the user home
    user_token: String = S, default "DEFAULT", env "ELROY_USER_TOKEN",
        spec "Elroy 0.5.0, docs/formats.md#user-tokens";
    /// database location (default sqlite:///$ELROY_HOME/state.db)
    database_url: Option<String> = S, default null, env "ELROY_DATABASE_URL",
        spec "Elroy 0.5.0, docs/formats.md#connection-and-migrations, D11";
    /// Elroy's Chroma vector store; elroy keeps vectors in state.db
    chroma_path: Option<String> = S, default null, env "ELROY_CHROMA_PATH",
        spec "Elroy 0.5.0, D9", unimplemented;
    /// log level DEBUG unless ELROY_LOG_LEVEL is set
    debug: bool = B, default "false", env "ELROY_DEBUG", spec "Elroy 0.5.0";
    /// assistant name when the user set none
    default_assistant_name: String = S, default "Elroy", env "ELROY_DEFAULT_ASSISTANT_NAME",
        spec "Elroy 0.5.0";
    /// register the built-in tools (`docs/tools.md`)
    include_base_tools: bool = B, default "true", env "ELROY_INCLUDE_BASE_TOOLS",
        spec "Elroy 0.5.0";
    /// plugin paths
    custom_tools_path: Vec<PathBuf> = P, default null, env "ELROY_CUSTOM_TOOLS_PATH",
        spec "Elroy 0.5.0, docs/tool-rules.md#plugins";
    /// tools in the system prompt, calls parsed from text
    inline_tool_calls: bool = B, default "false", env "ELROY_INLINE_TOOL_CALLS",
        spec "Elroy 0.5.0";
    /// Elroy's document-ingestion limit; elroy has no document ingestion
    max_ingested_doc_lines: u64 = I, default "1000", env "ELROY_MAX_INGESTED_DOC_LINES",
        spec "Elroy 0.5.0", unimplemented;
    /// reflective recall
    reflect: bool = B, default "false", env "ELROY_REFLECT",
        spec "Elroy 0.5.0, docs/behaviour.md#injection-and-reflective-recall";
    /// main model (inferred from API keys when unset)
    chat_model: Option<String> = S, default null, env "ELROY_CHAT_MODEL",
        spec "Elroy 0.5.0, docs/behaviour.md#choosing-the-chat-model";
    /// OpenAI-compatible (or Anthropic) base URL
    chat_model_api_base: Option<String> = S, default null, env "ELROY_CHAT_MODEL_API_BASE",
        spec "Elroy 0.5.0, docs/behaviour.md#provider-endpoint-and-key";
    /// key for the chat model
    chat_model_api_key: Option<String> = S, default null, env "ELROY_CHAT_MODEL_API_KEY",
        spec "Elroy 0.5.0, docs/behaviour.md#provider-endpoint-and-key", secret;
    /// background model (default: the chat model)
    fast_model: Option<String> = S, default null, env "ELROY_FAST_MODEL",
        spec "Elroy 0.5.0, docs/behaviour.md#choosing-the-chat-model";
    /// base URL for the fast model
    fast_model_api_base: Option<String> = S, default null, env "ELROY_FAST_MODEL_API_BASE",
        spec "Elroy 0.5.0, docs/behaviour.md#provider-endpoint-and-key";
    /// key for the fast model
    fast_model_api_key: Option<String> = S, default null, env "ELROY_FAST_MODEL_API_KEY",
        spec "Elroy 0.5.0, docs/behaviour.md#provider-endpoint-and-key", secret;
    /// embedding model; empty disables embeddings
    embedding_model: Option<String> = S, default "text-embedding-3-small",
        env "ELROY_EMBEDDING_MODEL", spec "Elroy 0.5.0, docs/behaviour.md#embeddings";
    /// Elroy's embedding vector size; elroy stores what the embedding model returns
    embedding_model_size: u64 = I, default "1536", env "ELROY_EMBEDDING_MODEL_SIZE",
        spec "Elroy 0.5.0", unimplemented;
    /// base URL for embeddings
    embedding_model_api_base: Option<String> = S, default null,
        env "ELROY_EMBEDDING_MODEL_API_BASE", spec "Elroy 0.5.0, docs/behaviour.md#embeddings";
    /// key for embeddings
    embedding_model_api_key: Option<String> = S, default null,
        env "ELROY_EMBEDDING_MODEL_API_KEY",
        spec "Elroy 0.5.0, docs/behaviour.md#embeddings", secret;
    /// Anthropic prompt-cache markers
    enable_caching: bool = B, default "true", env "ELROY_ENABLE_CACHING",
        spec "Elroy 0.5.0, docs/behaviour.md#requests";
    /// deprecated fallback key
    openai_api_key: Option<String> = S, default null, env "OPENAI_API_KEY",
        spec "Elroy 0.5.0, docs/behaviour.md#provider-endpoint-and-key", secret, deprecated;
    /// deprecated fallback base URL
    openai_api_base: Option<String> = S, default null, env "OPENAI_API_BASE",
        spec "Elroy 0.5.0, docs/behaviour.md#provider-endpoint-and-key", deprecated;
    /// deprecated fallback for embeddings
    openai_embedding_api_base: Option<String> = S, default null,
        env "ELROY_OPENAI_EMBEDDING_API_BASE",
        spec "Elroy 0.5.0, docs/behaviour.md#provider-endpoint-and-key", deprecated;
    /// deprecated
    openai_organization: Option<String> = S, default null, env "ELROY_OPENAI_ORGANIZATION",
        spec "Elroy 0.5.0, docs/behaviour.md#provider-endpoint-and-key", deprecated;
    /// deprecated fallback key
    anthropic_api_key: Option<String> = S, default null, env "ELROY_ANTHROPIC_API_KEY",
        spec "Elroy 0.5.0, docs/behaviour.md#provider-endpoint-and-key", secret, deprecated;
    /// tool rounds allowed: 0..=this
    max_assistant_loops: u64 = I, default "4", env "ELROY_MAX_ASSISTANT_LOOPS",
        spec "Elroy 0.5.0, docs/behaviour.md#rounds";
    /// context size that triggers a refresh; target is a third
    max_tokens: u64 = I1, default "100000", env "ELROY_MAX_TOKENS", spec "Elroy 0.5.0";
    /// age-out and compression cut-off
    max_context_age_minutes: f64 = F, default "720.0", env "ELROY_MAX_CONTEXT_AGE_MINUTES",
        spec "Elroy 0.5.0";
    /// Elroy's greeting-turn threshold; elroy has no greeting turn
    min_convo_age_for_greeting_minutes: f64 = F, default "120.0",
        env "ELROY_MIN_CONVO_AGE_FOR_GREETING_MINUTES",
        spec "Elroy 0.5.0, docs/behaviour.md#the-session-context-pair",
        unimplemented;
    /// clustering distance
    memory_cluster_similarity_threshold: f64 = F, default "0.21125",
        env "ELROY_MEMORY_CLUSTER_SIMILARITY_THRESHOLD",
        spec "Elroy 0.5.0, docs/behaviour.md#consolidation";
    /// consolidation trigger
    memories_between_consolidation: u64 = I, default "4",
        env "ELROY_MEMORIES_BETWEEN_CONSOLIDATION",
        spec "Elroy 0.5.0, docs/behaviour.md#automatic-memory-creation";
    /// automatic memory trigger; 0 disables
    messages_between_memory: u64 = I, default "20", env "ELROY_MESSAGES_BETWEEN_MEMORY",
        spec "Elroy 0.5.0";
    /// self-reflection trigger; 0 disables
    messages_between_self_reflection: u64 = I, default "10",
        env "ELROY_MESSAGES_BETWEEN_SELF_REFLECTION", spec "Elroy 0.5.0";
    /// sets the default cosine threshold
    l2_memory_relevance_distance_threshold: f64 = F, default "1.4",
        env "ELROY_L2_MEMORY_RELEVANCE_DISTANCE_THRESHOLD",
        spec "Elroy 0.5.0, docs/behaviour.md#embedding-leg";
    /// largest consolidation cluster
    max_memory_cluster_size: u64 = I, default "5", env "ELROY_MAX_MEMORY_CLUSTER_SIZE",
        spec "Elroy 0.5.0, docs/behaviour.md#consolidation";
    /// smallest consolidation cluster
    min_memory_cluster_size: u64 = I, default "3", env "ELROY_MIN_MEMORY_CLUSTER_SIZE",
        spec "Elroy 0.5.0, docs/behaviour.md#consolidation";
    /// LLM recall gate
    memory_recall_classifier_enabled: bool = B, default "false",
        env "ELROY_MEMORY_RECALL_CLASSIFIER_ENABLED",
        spec "Elroy 0.5.0, docs/behaviour.md#whether-to-recall, D9";
    /// messages the recall gate reads
    memory_recall_classifier_window: u64 = I, default "3",
        env "ELROY_MEMORY_RECALL_CLASSIFIER_WINDOW",
        spec "Elroy 0.5.0, docs/behaviour.md#whether-to-recall";
    /// show thoughts and injected context
    show_internal_thought: bool = B, default "true", env "ELROY_SHOW_INTERNAL_THOUGHT",
        spec "Elroy 0.5.0, K7";
    /// UI colour
    system_message_color: String = S, default "'#9ACD32'", env "ELROY_SYSTEM_MESSAGE_COLOR",
        spec "Elroy 0.5.0";
    /// UI colour
    user_input_color: String = S, default "'#FFE377'", env "ELROY_USER_INPUT_COLOR",
        spec "Elroy 0.5.0";
    /// UI colour
    assistant_color: String = S, default "'#77DFD8'", env "ELROY_ASSISTANT_COLOR",
        spec "Elroy 0.5.0";
    /// UI colour
    warning_color: String = S, default "yellow", env "ELROY_WARNING_COLOR",
        spec "Elroy 0.5.0";
    /// UI colour
    internal_thought_color: String = S, default "'#708090'", env "ELROY_INTERNAL_THOUGHT_COLOR",
        spec "Elroy 0.5.0";
    /// interactive interface on a terminal: full (the full-screen interface) or plain (the line REPL; also --plain)
    ui: String = S, default "full", env "ELROY_UI", spec "elroy";
    /// Elroy's shell tool switch; elroy has no shell tool
    shell_commands: bool = B, default "false", env "ELROY_SHELL_COMMANDS",
        spec "Elroy 0.5.0", unimplemented;
    /// Elroy's shell-command allow list; elroy has no shell tool
    allowed_shell_command_prefixes: Vec<String> = L, default "['.*']",
        env "ELROY_ALLOWED_SHELL_COMMAND_PREFIXES", spec "Elroy 0.5.0", unimplemented;
    /// memory directory (default <user home>/memories)
    memory_dir: Option<String> = S, default null, env "ELROY_MEMORY_DIR",
        spec "Elroy 0.5.0, D4";
    /// tools not registered
    exclude_tools: Vec<String> = L, default "[]", env "ELROY_EXCLUDE_TOOLS",
        spec "Elroy 0.5.0, K7";
    /// what a model's tool calls may do unasked: {mode: ask | read-only | auto, allow: [RULE], ask: [RULE], deny: [RULE]}; a RULE is a tool name or glob, optionally with a path glob or domain:HOST, e.g. read_file(~/notes/**), fetch_page(domain:en.wikipedia.org), mcp__github__* (docs/security.md). ELROY_PERMISSION_MODE and --permission-mode set the mode; --allow RULE and --deny RULE add rules
    /// The typed settings are [`crate::Config::permissions`].
    permissions: serde_json::Map<String, serde_json::Value> = M, default null,
        env "ELROY_PERMISSIONS", spec "docs/security.md#rules";
    // Keys that are ours.
    /// zone for naive times and displays (IANA name, UTC or local; default: TZ, else the system zone)
    timezone: Option<String> = S, default null, env "ELROY_TIMEZONE",
        spec "Elroy 0.5.0, D7";
    /// built-in embedder's model directory (default $ELROY_HOME/models/all-MiniLM-L6-v2); used when embedding_model is builtin or no embeddings API is configured
    embedding_model_path: Option<String> = S, default null, env "ELROY_EMBEDDING_MODEL_PATH",
        spec "elroy";
    /// seconds the embedding worker keeps the built-in model loaded after its last request, answering other elroy processes' questions on a socket in the user home so they need not load it; 0: the worker exits when every memory has its vector, and each process loads the model itself
    embedding_worker_idle_seconds: u64 = I, default "300",
        env "ELROY_EMBEDDING_WORKER_IDLE_SECONDS", spec "docs/behaviour.md#embeddings";
    /// where elroy models fetch downloads model files from (<base>/<NAME>/resolve/main/<file>)
    models_base_url: String = S, default "https://huggingface.co/sentence-transformers",
        env "ELROY_MODELS_BASE_URL", spec "elroy";
    /// embedding recall cut (default 1 - l2 threshold / 2)
    memory_relevance_cosine_threshold: Option<f64> = F, default null,
        env "ELROY_MEMORY_RELEVANCE_COSINE_THRESHOLD",
        spec "Elroy 0.5.0, docs/behaviour.md#embedding-leg";
    /// repeated-failure stop
    max_tool_failures_per_turn: u64 = I1, default "3", env "ELROY_MAX_TOOL_FAILURES_PER_TURN",
        spec "Elroy 0.5.0, R3";
    /// stream idle timeout
    llm_timeout_seconds: u64 = I1, default "120", env "ELROY_LLM_TIMEOUT_SECONDS",
        spec "Elroy 0.5.0";
    /// web_search endpoint
    web_search_url: String = S, default "https://html.duckduckgo.com/html/",
        env "ELROY_WEB_SEARCH_URL", spec "Elroy 0.5.0";
    /// fetch_page/web_search timeout
    web_timeout_seconds: u64 = I1, default "20", env "ELROY_WEB_TIMEOUT_SECONDS",
        spec "Elroy 0.5.0";
    /// fetch_page/web_search may reach loopback, private and unspecified addresses
    fetch_allow_private_addresses: bool = B, default "false",
        env "ELROY_FETCH_ALLOW_PRIVATE_ADDRESSES", spec "elroy";
    /// plugin paths
    contrib_tools_path: Vec<PathBuf> = P, default null, env "ELROY_CONTRIB_TOOLS_PATH",
        spec "Elroy 0.5.0, docs/tool-rules.md#plugins";
    /// plugin call timeout
    plugin_timeout_seconds: u64 = I1, default "60", env "ELROY_PLUGIN_TIMEOUT_SECONDS",
        spec "Elroy 0.5.0";
    /// program run for each `elroy remind` announcement with the title and the body as its last two arguments, e.g. notify-send (words split as a shell would, no shell run)
    notify_command: Option<String> = S, default null, env "ELROY_NOTIFY_COMMAND",
        spec "elroy";
    /// when a day said without a time starts (`HH:MM`): the time of a due item for `friday`, `tomorrow` or `every monday`
    day_start_time: String = S, default "'09:00'", env "ELROY_DAY_START_TIME",
        spec "elroy";
    /// full-screen interface: when a due item comes due while no turn runs, the assistant speaks first (starts a turn on its own with the item, tools on)
    proactive_reminders: bool = B, default "false", env "ELROY_PROACTIVE_REMINDERS",
        spec "elroy";
    /// Codex program and leading arguments
    codex_command: String = S, default "codex", env "ELROY_CODEX_COMMAND",
        spec "Elroy 0.5.0, D16";
    /// Codex run timeout
    codex_timeout_seconds: u64 = I1, default "900", env "ELROY_CODEX_TIMEOUT_SECONDS",
        spec "Elroy 0.5.0, D16";
    /// tree for inspect_elroy_with_codex
    elroy_source_path: Option<String> = S, default null, env "ELROY_ELROY_SOURCE_PATH",
        spec "Elroy 0.5.0, D16";
    /// Elroy's database, read-only, for memory names (default $ELROY_HOME/elroy.db)
    elroy_db_path: Option<String> = S, default null, env "ELROY_ELROY_DB_PATH",
        spec "Elroy 0.5.0, docs/formats.md#names-from-elroys-database";
    /// commit every change elroy makes to the markdown stores to a git repository in the home (elroy history, elroy undo)
    versioned_home: bool = B, default "true", env "ELROY_VERSIONED_HOME",
        spec "elroy";
    /// git remote elroy sync pulls from and pushes to: a path, file://, ssh:// or https:// URL, or scp-like user@host:path (elroy sync --remote URL sets it the first time)
    sync_remote: Option<String> = S, default null, env "ELROY_SYNC_REMOTE", spec "elroy";
    /// this machine's name in the history and in sync conflict files (default: the host name)
    machine_name: Option<String> = S, default null, env "ELROY_MACHINE_NAME", spec "elroy";
    /// interactive sessions sync with sync_remote when they start (short timeout, one status line)
    sync_on_start: bool = B, default "false", env "ELROY_SYNC_ON_START", spec "elroy";
    /// interactive sessions sync with sync_remote when they end (short timeout, one status line)
    sync_on_exit: bool = B, default "false", env "ELROY_SYNC_ON_EXIT", spec "elroy";
    /// elroy remind --watch syncs with sync_remote every this many minutes (0: never)
    sync_interval_minutes: u64 = I, default "0", env "ELROY_SYNC_INTERVAL_MINUTES",
        spec "elroy";
    /// MCP servers whose tools elroy uses, as Claude Desktop's mcpServers: NAME: {command, args, env, cwd} (stdio) or NAME: {url, headers} (streamable HTTP); ${VAR} and ${VAR:-default} in values are expanded from the environment
    /// The typed, merged servers are [`crate::Config::mcp_servers`].
    mcp_servers: serde_json::Map<String, serde_json::Value> = M, default null,
        env "ELROY_MCP_SERVERS", spec "elroy";
    /// a JSON file {"mcpServers": {...}} (Claude Desktop's claude_desktop_config.json, Claude Code's .mcp.json) whose servers are merged over mcp_servers (also --mcp-config FILE)
    mcp_config_path: Option<String> = S, default null, env "ELROY_MCP_CONFIG_PATH",
        spec "elroy";
    /// seconds an MCP server has to start and answer initialize and tools/list
    mcp_startup_timeout_seconds: u64 = I1, default "10", env "ELROY_MCP_STARTUP_TIMEOUT_SECONDS",
        spec "elroy";
    /// seconds an MCP tool call may take
    mcp_call_timeout_seconds: u64 = I1, default "60", env "ELROY_MCP_CALL_TIMEOUT_SECONDS",
        spec "elroy";
    /// elroy serve: keys ({API_KEY: USER_TOKEN}, each bearer key and the user whose memories it reaches), bind (ADDR:PORT, default 127.0.0.1:8765), tool_activity (hidden or summary: elroy's tool calls as a line of the reply), keep_alive_seconds (SSE keep-alive comments while a turn runs, default 10)
    serve: serde_json::Map<String, serde_json::Value> = M, default null, env "ELROY_SERVE",
        spec "docs/serve.md", secret;
    /// a bearer key elroy serve accepts for the configured user_token (besides serve.keys)
    serve_key: Option<String> = S, default null, env "ELROY_SERVE_KEY", spec "elroy",
        secret;
}

/// Keys Elroy had that are ignored with a warning (`docs/configuration.md#sources`).
pub const IGNORED_KEYS: &[&str] = &[
    "context_refresh_target_tokens",
    "context_refresh_trigger_tokens",
];

/// The definition of `name` (for the file layer, which reads keys by name).
pub(crate) fn key_def(name: &str) -> Option<&'static KeyDef> {
    KEYS.iter().find(|k| k.name == name)
}
