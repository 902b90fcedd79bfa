use std::collections::HashMap;

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
    assert_eq!(c.max_tokens(), 100_000);
    assert_eq!(c.entry("max_tokens").unwrap().source, Source::Default);
    assert!(c.bool("show_internal_thought"));
    assert_eq!(
        c.float("memory_cluster_similarity_threshold"),
        Some(0.21125)
    );
    assert_eq!(c.string("system_message_color"), Some("#9ACD32"));
    assert_eq!(c.list("allowed_shell_command_prefixes"), [".*"]);
    assert_eq!(c.user_token(), "DEFAULT");
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
    assert_eq!(file.max_tokens(), 2000);
    assert_eq!(
        file.entry("max_tokens").unwrap().source,
        Source::File(dir.path().join("elroy.conf.yaml"))
    );
    let env = Config::load(&o).unwrap();
    assert_eq!(env.max_tokens(), 3000);
    assert_eq!(
        env.entry("max_tokens").unwrap().source,
        Source::Env("ELROY_MAX_TOKENS".into())
    );
    assert_eq!(
        env.max_assistant_loops(),
        2,
        "an empty environment value does not override"
    );
    o.flags
        .push(("max_tokens".into(), "4000".into(), "--max-tokens".into()));
    let flag = Config::load(&o).unwrap();
    assert_eq!(flag.max_tokens(), 4000);
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
    let c = Config::load(&opts(
        dir.path(),
        &[("ELROY_SHOW_INTERNAL_THOUGHT", "false")],
    ))
    .unwrap();
    assert!(!c.bool("show_internal_thought"));
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
    assert_eq!(c.string("openai_api_key"), Some("sk-x"));
}
