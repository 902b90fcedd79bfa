use std::collections::HashMap;
use std::path::PathBuf;

use super::*;

fn opts(dir: &std::path::Path, env: &[(&str, &str)]) -> LoadOptions {
    LoadOptions {
        home: Some(dir.to_path_buf()),
        env: env
            .iter()
            .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
            .collect::<HashMap<_, _>>(),
        cwd: dir.to_path_buf(),
        user_dir: Some(dir.join("user")),
        ..Default::default()
    }
}

#[test]
fn defaults() {
    let dir = tempfile::tempdir().unwrap();
    let c = Config::load(&opts(dir.path(), &[("TZ", "UTC0")])).unwrap();
    assert_eq!(c.settings.max_tokens, 100_000);
    assert_eq!(c.entry("max_tokens").unwrap().source, Source::Default);
    assert!(c.settings.show_internal_thought);
    assert_eq!(c.settings.memory_cluster_similarity_threshold, 0.21125);
    assert_eq!(c.settings.system_message_color, "#9ACD32");
    assert_eq!(c.settings.allowed_shell_command_prefixes, [".*"]);
    assert_eq!(c.settings.user_token, "DEFAULT");
    assert_eq!(c.paths.user_home, dir.path());
    assert_eq!(c.paths.memory_dir, dir.path().join("memories"));
    assert_eq!(
        c.paths.database,
        DatabaseLocation::File(dir.path().join("state.db"))
    );
    assert_eq!(c.config_file, None);
}

#[test]
fn every_layer_in_order() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("elroy.conf.yaml"),
        "max_tokens: 2000\nmax_assistant_loops: 2\ndebug: ~\n",
    )
    .unwrap();
    let mut o = opts(
        dir.path(),
        &[
            ("ELROY_MAX_TOKENS", "3000"),
            ("ELROY_MAX_ASSISTANT_LOOPS", ""),
        ],
    );
    let file = Config::load(&opts(dir.path(), &[])).unwrap();
    assert_eq!(file.settings.max_tokens, 2000);
    assert_eq!(
        file.entry("max_tokens").unwrap().source,
        Source::File(dir.path().join("elroy.conf.yaml"))
    );
    let env = Config::load(&o).unwrap();
    assert_eq!(env.settings.max_tokens, 3000);
    assert_eq!(
        env.entry("max_tokens").unwrap().source,
        Source::Env("ELROY_MAX_TOKENS".into())
    );
    assert_eq!(
        env.settings.max_assistant_loops, 2,
        "an empty environment value does not override"
    );
    o.flags
        .push(("max_tokens".into(), "4000".into(), "--max-tokens".into()));
    let flag = Config::load(&o).unwrap();
    assert_eq!(flag.settings.max_tokens, 4000);
    assert_eq!(
        flag.entry("max_tokens").unwrap().source,
        Source::Flag("--max-tokens".into())
    );
}

#[test]
fn bad_values_name_key_value_and_source() {
    let dir = tempfile::tempdir().unwrap();
    let e = Config::load(&opts(dir.path(), &[("ELROY_MAX_TOKENS", "abc")])).unwrap_err();
    assert_eq!(
        e.to_string(),
        r#"invalid value for max_tokens (environment variable ELROY_MAX_TOKENS): expected an integer, got "abc""#
    );
    let e = Config::load(&opts(
        dir.path(),
        &[("ELROY_SHOW_INTERNAL_THOUGHT", "maybe")],
    ))
    .unwrap_err();
    assert_eq!(
        e.to_string(),
        r#"invalid value for show_internal_thought (environment variable ELROY_SHOW_INTERNAL_THOUGHT): expected a boolean, got "maybe""#
    );
    let e = Config::load(&opts(dir.path(), &[("ELROY_UI", "fullscreen")])).unwrap_err();
    assert_eq!(
        e.to_string(),
        r#"invalid value for ui (environment variable ELROY_UI): expected full or plain, got "fullscreen""#
    );
    let c = Config::load(&opts(
        dir.path(),
        &[("ELROY_SHOW_INTERNAL_THOUGHT", "false")],
    ))
    .unwrap();
    assert!(!c.settings.show_internal_thought);
    std::fs::write(
        dir.path().join("elroy.conf.yaml"),
        "max_context_age_minutes: soon\n",
    )
    .unwrap();
    let e = Config::load(&opts(dir.path(), &[])).unwrap_err();
    assert_eq!(
        e.to_string(),
        format!(
            r#"invalid value for max_context_age_minutes ({}): expected a number, got "soon""#,
            dir.path().join("elroy.conf.yaml").display()
        )
    );
}

#[test]
fn constraints_and_file_errors() {
    let dir = tempfile::tempdir().unwrap();
    let e = Config::load(&opts(dir.path(), &[("ELROY_MAX_TOKENS", "0")])).unwrap_err();
    assert!(
        e.to_string().contains("expected an integer >= 1, got 0"),
        "{e}"
    );
    let e = Config::load(&opts(dir.path(), &[("ELROY_USER_TOKEN", "../x")])).unwrap_err();
    assert!(e.to_string().starts_with("invalid user_token '../x'"));
    let e = Config::load(&opts(dir.path(), &[("ELROY_DATABASE_URL", "postgres://x")])).unwrap_err();
    assert_eq!(e.to_string(), "Unsupported database URL: postgres://x");
    let e = Config::load(&opts(dir.path(), &[("ELROY_TIMEZONE", "Mars/Base")])).unwrap_err();
    assert!(
        e.to_string()
            .starts_with("invalid value for timezone (environment variable ELROY_TIMEZONE)"),
        "{e}"
    );
    let e = Config::load(&opts(dir.path(), &[("ELROY_NOW", "yesterday")])).unwrap_err();
    assert!(e.to_string().starts_with("invalid ELROY_NOW"), "{e}");
    std::fs::write(dir.path().join("elroy.conf.yaml"), "max_tokens: [\n").unwrap();
    let e = Config::load(&opts(dir.path(), &[])).unwrap_err();
    assert!(e.to_string().starts_with("cannot parse config file"), "{e}");
    assert_eq!(e.to_string().lines().count(), 1, "one line: {e}");
    let mut o = opts(dir.path(), &[]);
    o.config_file = Some(dir.path().join("missing.yaml"));
    assert!(
        Config::load(&o)
            .unwrap_err()
            .to_string()
            .starts_with("cannot read config file")
    );
}

#[test]
fn user_tokens_and_warnings() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("elroy.conf.yaml"),
        "colour: red\nopenai_api_key: sk-x\n",
    )
    .unwrap();
    let mut o = opts(dir.path(), &[("ELROY_NOW", "2026-03-16T08:30:00Z")]);
    o.flags
        .push(("user_token".into(), "alice".into(), "--user".into()));
    let c = Config::load(&o).unwrap();
    assert_eq!(c.paths.user_home, dir.path().join("users/alice"));
    assert_eq!(c.paths.memory_dir, dir.path().join("users/alice/memories"));
    assert_eq!(c.now.unwrap().to_string(), "2026-03-16T08:30:00Z");
    assert_eq!(c.warnings.len(), 2, "{:?}", c.warnings);
    assert!(c.warnings[0].starts_with("unknown config key 'colour'"));
    assert_eq!(c.settings.openai_api_key.as_deref(), Some("sk-x"));
}

/// Kind: a key whose declared default does not fit its declared Rust type. Every key's default
/// must load into `Settings`, and an explicit value of every key (from the environment) too.
#[test]
fn every_key_loads_into_its_typed_field() {
    let dir = tempfile::tempdir().unwrap();
    let defaults = Config::load(&opts(dir.path(), &[])).unwrap();
    assert_eq!(defaults.resolved().len(), KEYS.len());
    for r in defaults.resolved() {
        assert_eq!(
            r.value.is_null(),
            r.def.default.is_none(),
            "{}: its default does not parse",
            r.def.name
        );
    }
    assert_eq!(defaults.settings, Settings::default());
    assert_eq!(
        defaults.settings.web_search_url,
        "https://html.duckduckgo.com/html/"
    );
    assert_eq!(defaults.settings.exclude_tools, Vec::<String>::new());
    assert_eq!(defaults.settings.custom_tools_path, Vec::<PathBuf>::new());
    assert_eq!(defaults.settings.memory_relevance_cosine_threshold, None);
    assert_eq!(
        defaults.settings.embedding_model.as_deref(),
        Some("text-embedding-3-small")
    );

    // One valid value per key, by type; keys elroy does not implement keep their defaults.
    let mcp_json = dir.path().join("mcp.json");
    std::fs::write(&mcp_json, r#"{"mcpServers": {"x": {"command": "true"}}}"#).unwrap();
    let mcp_json = mcp_json.to_string_lossy().into_owned();
    let env: Vec<(String, String)> = KEYS
        .iter()
        .filter(|k| k.implemented)
        .map(|k| {
            let value = match (k.name, k.ty) {
                ("user_token", _) => "alice",
                ("database_url", _) => "sqlite::memory:",
                ("timezone", _) => "UTC",
                ("ui", _) => "plain",
                ("mcp_config_path", _) => mcp_json.as_str(),
                ("permissions", _) => r#"{"mode": "auto", "deny": ["web_search"]}"#,
                (_, KeyType::Bool) => "off",
                (_, KeyType::Int { .. }) => "7",
                (_, KeyType::Float) => "0.5",
                (_, KeyType::Str) => "text",
                (_, KeyType::List) => "a,b",
                (_, KeyType::PathList) => "/a:/b",
                (_, KeyType::Map) => r#"{"y": {"url": "http://127.0.0.1:9/mcp"}}"#,
            };
            (k.env.to_owned(), value.to_owned())
        })
        .collect();
    let env: Vec<(&str, &str)> = env.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
    let c = Config::load(&opts(dir.path(), &env)).unwrap();
    for r in c.resolved() {
        let expected = if r.def.implemented {
            Source::Env(r.def.env.into())
        } else {
            Source::Default
        };
        assert_eq!(r.source, expected, "{}", r.def.name);
    }
    let s = &c.settings;
    assert_eq!(s.user_token, "alice");
    assert!(!s.versioned_home && !s.show_internal_thought && !s.include_base_tools);
    assert_eq!((s.max_tokens, s.codex_timeout_seconds), (7, 7));
    assert_eq!(s.max_context_age_minutes, 0.5);
    assert_eq!(s.memory_relevance_cosine_threshold, Some(0.5));
    assert_eq!(s.codex_command, "text");
    assert_eq!(s.chat_model_api_key.as_deref(), Some("text"));
    assert_eq!(s.exclude_tools, ["a", "b"]);
    let servers: Vec<&str> = c.mcp_servers.iter().map(|s| s.name.as_str()).collect();
    assert_eq!(servers, ["x", "y"]);
    assert_eq!(
        s.contrib_tools_path,
        [PathBuf::from("/a"), PathBuf::from("/b")]
    );
}

/// Kind: a key Elroy has that elroy does not implement, set to something other than its default,
/// from any layer. It stops start-up naming the key, the value and the source; its default (or
/// leaving it unset) is accepted.
#[test]
fn keys_elroy_does_not_implement_are_refused_when_set() {
    let unimplemented: Vec<&str> = KEYS
        .iter()
        .filter(|k| !k.implemented)
        .map(|k| k.name)
        .collect();
    assert_eq!(
        unimplemented,
        [
            "chroma_path",
            "max_ingested_doc_lines",
            "embedding_model_size",
            "min_convo_age_for_greeting_minutes",
            "shell_commands",
            "allowed_shell_command_prefixes",
        ]
    );
    let dir = tempfile::tempdir().unwrap();
    let e = Config::load(&opts(dir.path(), &[("ELROY_SHELL_COMMANDS", "yes")])).unwrap_err();
    assert_eq!(
        e.to_string(),
        "shell_commands is not implemented by elroy: remove it (environment variable ELROY_SHELL_COMMANDS sets it to true)"
    );
    let file = dir.path().join("elroy.conf.yaml");
    std::fs::write(&file, "chroma_path: /srv/chroma\n").unwrap();
    let e = Config::load(&opts(dir.path(), &[])).unwrap_err();
    assert_eq!(
        e.to_string(),
        format!(
            "chroma_path is not implemented by elroy: remove it ({} sets it to /srv/chroma)",
            file.display()
        )
    );
    // Another of the kind, from a flag.
    std::fs::write(&file, "").unwrap();
    let mut o = opts(dir.path(), &[]);
    o.flags.push((
        "embedding_model_size".into(),
        "384".into(),
        "--embedding-model-size".into(),
    ));
    let e = Config::load(&o).unwrap_err();
    assert!(
        e.to_string()
            .starts_with("embedding_model_size is not implemented by elroy"),
        "{e}"
    );
    // The defaults themselves are fine, written out or not.
    std::fs::write(
        &file,
        "shell_commands: false\nallowed_shell_command_prefixes: ['.*']\nmax_ingested_doc_lines: 1000\n",
    )
    .unwrap();
    let c = Config::load(&opts(
        dir.path(),
        &[("ELROY_MIN_CONVO_AGE_FOR_GREETING_MINUTES", "120")],
    ))
    .unwrap();
    assert!(!c.settings.shell_commands);
}

/// the kind in the configuration file: a key given twice is read as Elroy
/// (PyYAML) reads it, the last value wins, instead of stopping with the YAML library's hint
/// (found by the adversarial run). Another of the kind: a repeated boolean key.
#[test]
fn a_key_given_twice_in_the_file_takes_the_last_value() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("elroy.conf.yaml"),
        "web_timeout_seconds: 5\nenable_caching: true\nweb_timeout_seconds: 7\nenable_caching: false\n",
    )
    .unwrap();
    let c = Config::load(&opts(dir.path(), &[])).unwrap();
    assert_eq!(c.settings.web_timeout_seconds, 7);
    assert!(!c.settings.enable_caching);
}

#[test]
fn the_first_sync_remote_is_saved_and_a_later_one_is_for_one_sync() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("elroy.conf.yaml");
    std::fs::write(&file, "# mine\nuser_token: me\n").unwrap();
    let config = Config::load(&opts(dir.path(), &[])).unwrap();
    match config.keep_sync_remote("/srv/a.git") {
        RemoteSaved::Saved(saved) => assert_eq!(saved, file),
        other => panic!("{other:?}"),
    }
    let text = std::fs::read_to_string(&file).unwrap();
    assert!(text.starts_with("# mine\nuser_token: me\n"), "{text}");
    let config = Config::load(&opts(dir.path(), &[])).unwrap();
    assert_eq!(config.settings.sync_remote.as_deref(), Some("/srv/a.git"));
    assert!(matches!(
        config.keep_sync_remote("/srv/a.git"),
        RemoteSaved::Same
    ));
    match config.keep_sync_remote("me@host:b.git") {
        RemoteSaved::OneOff { saved } => assert_eq!(saved, "/srv/a.git"),
        other => panic!("{other:?}"),
    }
    assert_eq!(std::fs::read_to_string(&file).unwrap(), text);
    // A file that is not a mapping is left alone, and the reason is given.
    let other = tempfile::tempdir().unwrap();
    let config = Config::load(&opts(other.path(), &[])).unwrap();
    std::fs::write(other.path().join("elroy.conf.yaml"), "- a list\n").unwrap();
    assert!(matches!(
        config.keep_sync_remote("/srv/a.git"),
        RemoteSaved::NotSaved { .. }
    ));
    assert_eq!(
        std::fs::read_to_string(other.path().join("elroy.conf.yaml")).unwrap(),
        "- a list\n"
    );
}

#[test]
fn a_home_that_only_is_read_must_exist() {
    let dir = tempfile::tempdir().unwrap();
    let config = Config::load(&opts(dir.path(), &[])).unwrap();
    assert!(config.require_home().is_ok());
    let missing = dir.path().join("nowhere");
    let config = Config::load(&opts(&missing, &[])).unwrap();
    let err = config.require_home().unwrap_err().to_string();
    assert!(
        err.starts_with(&format!("no elroy home at {} (", missing.display())),
        "{err}"
    );
    assert!(
        err.contains(&format!("mkdir -p {}", missing.display())),
        "{err}"
    );
    assert!(!missing.exists());
}

#[test]
fn options_for_a_user_replace_the_user_token_flag() {
    let dir = tempfile::tempdir().unwrap();
    let mut options = opts(dir.path(), &[]);
    options.flag("user_token", "alice", "--user");
    options.flag("chat_model", "gpt-5", "--model");
    let bob = options.for_user("bob", "serve.keys");
    let config = Config::load(&bob).unwrap();
    assert_eq!(config.settings.user_token, "bob");
    assert_eq!(config.settings.chat_model.as_deref(), Some("gpt-5"));
    assert_eq!(
        config.entry("user_token").unwrap().source.to_string(),
        "command-line flag serve.keys"
    );
    assert_eq!(Config::load(&options).unwrap().settings.user_token, "alice");
}
