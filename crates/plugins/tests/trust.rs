//! Plugin trust (`docs/tool-rules.md#plugin-trust`): an untrusted plugin is never run — not for
//! `--schema`, not for `--panel`, not for a call — whether it is new, its content changed, or its
//! path now resolves to another file; trusting records path, target and hash; untrusting undoes it.
//! Every test plugin appends a line to a marker file whenever it is executed, with any argument.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

use elroy_core::{ToolContext, ToolEffect, ToolRegistry, UserInfo};
use elroy_plugins::{Change, LoadReport, TrustState, TrustStore};

const NOW: &str = "2026-11-30T10:00:00Z";

/// A plugin `name` in `dir` declaring tool `tool` and a panel; every run appends `{name} {args}`
/// to `marker`. `variant` changes its content without changing what it does.
fn marked(dir: &Path, name: &str, tool: &str, marker: &Path, variant: &str) -> PathBuf {
    let path = dir.join(name);
    let script = format!(
        "#!/bin/sh\n# {variant}\necho \"{name} $*\" >> '{marker}'\n\
         if [ \"$1\" = --schema ]; then\n  \
         echo '[{{\"type\":\"function\",\"function\":{{\"name\":\"{tool}\",\"description\":\"Marked.\"}}}},{{\"type\":\"panel\",\"title\":\"{tool} panel\"}}]'\n  exit 0\nfi\n\
         if [ \"$1\" = --panel ]; then echo '# {tool}'; exit 0; fi\n\
         echo 'ran {tool}'\n",
        marker = marker.display()
    );
    write_exec(&path, &script);
    path
}

fn write_exec(path: &Path, script: &str) {
    std::fs::write(path, script).unwrap();
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o755)).unwrap();
}

fn runs(marker: &Path) -> Vec<String> {
    std::fs::read_to_string(marker)
        .unwrap_or_default()
        .lines()
        .map(str::to_owned)
        .collect()
}

fn ctx(home: &Path) -> ToolContext {
    let mut ctx = ToolContext::new(UserInfo {
        id: None,
        token: "alice".into(),
        elroy_home: home.to_path_buf(),
        user_home: home.to_path_buf(),
    });
    ctx.cwd = home.to_path_buf();
    ctx
}

struct Setup {
    home: tempfile::TempDir,
    contrib: PathBuf,
    extra: PathBuf,
    marker: PathBuf,
    trust: TrustStore,
}

impl Setup {
    /// A home with `contrib/` and a configured plugin directory `extra/`.
    fn new() -> Self {
        let home = tempfile::tempdir().unwrap();
        let contrib = home.path().join("contrib");
        let extra = home.path().join("extra");
        std::fs::create_dir_all(&contrib).unwrap();
        std::fs::create_dir_all(&extra).unwrap();
        let marker = home.path().join("ran.log");
        let trust = TrustStore::new(home.path());
        Setup {
            home,
            contrib,
            extra,
            marker,
            trust,
        }
    }

    fn load(&self) -> (ToolRegistry, LoadReport) {
        let mut registry = ToolRegistry::new();
        let report = elroy_plugins::load_from(
            &self.contrib,
            std::slice::from_ref(&self.extra),
            &self.trust,
            &[],
            5,
            &mut registry,
        );
        (registry, report)
    }
}

#[tokio::test]
async fn new_plugins_in_contrib_and_a_configured_path_are_never_run_until_trusted() {
    let s = Setup::new();
    let a = marked(&s.contrib, "a_tool", "tool_a", &s.marker, "1");
    let b = marked(&s.extra, "b_tool", "tool_b", &s.marker, "1");

    let (registry, report) = s.load();
    assert!(registry.names().is_empty());
    assert!(report.panels.is_empty());
    assert_eq!(
        report.untrusted,
        [(a.clone(), TrustState::New), (b.clone(), TrustState::New)]
    );
    // One summary line for both, not one per plugin.
    assert_eq!(
        report.warnings,
        [
            "2 plugins not run because not trusted: a_tool (new), b_tool (new); `elroy plugins` \
          lists them, `elroy plugins trust PATH` trusts one after you have read it"
        ]
    );
    assert_eq!(runs(&s.marker), Vec::<String>::new());

    // Trusting one runs that one only.
    let entries = s.trust.trust(std::slice::from_ref(&a), NOW).unwrap();
    assert_eq!(entries[0].path, a);
    assert_eq!(
        entries[0].sha256,
        elroy_plugins::fingerprint(&a).unwrap().sha256
    );
    let (registry, report) = s.load();
    assert_eq!(registry.names(), ["tool_a"]);
    assert_eq!(report.untrusted, [(b.clone(), TrustState::New)]);
    assert_eq!(runs(&s.marker), ["a_tool --schema"]);
    // A plugin tool is `execute`, whatever it declares.
    assert_eq!(
        registry.get("tool_a").unwrap().spec().effect,
        ToolEffect::EXECUTE
    );
    let called = registry.invoke("tool_a", None, &ctx(s.home.path())).await;
    assert_eq!(
        (called.content.as_str(), called.is_error),
        ("ran tool_a", false)
    );
    assert_eq!(elroy_plugins::render_panel(&report.panels[0]), "# tool_a\n");
    assert_eq!(
        runs(&s.marker),
        ["a_tool --schema", "a_tool ", "a_tool --panel"]
    );

    // The configured path's plugin, trusted too.
    s.trust.trust(std::slice::from_ref(&b), NOW).unwrap();
    let (registry, report) = s.load();
    assert_eq!(registry.names(), ["tool_a", "tool_b"]);
    assert!(report.untrusted.is_empty() && report.warnings.is_empty());

    // Untrusting makes it new again: not run.
    std::fs::remove_file(&s.marker).unwrap();
    let removed = s.trust.untrust(std::slice::from_ref(&a)).unwrap();
    assert_eq!(removed[0].path, a);
    let (registry, report) = s.load();
    assert_eq!(registry.names(), ["tool_b"]);
    assert_eq!(report.untrusted, [(a, TrustState::New)]);
    assert_eq!(runs(&s.marker), ["b_tool --schema"]);
}

#[tokio::test]
async fn a_changed_plugin_is_not_run_by_load_call_or_panel() {
    let s = Setup::new();
    let a = marked(&s.contrib, "a_tool", "tool_a", &s.marker, "1");
    let b = marked(&s.extra, "b_tool", "tool_b", &s.marker, "1");
    s.trust.trust(&[a.clone(), b.clone()], NOW).unwrap();
    let (registry, report) = s.load();
    assert_eq!(registry.names(), ["tool_a", "tool_b"]);
    let panels = report.panels;

    // Edited in place (a contrib plugin) and replaced by a rename (a configured one).
    marked(&s.contrib, "a_tool", "tool_a", &s.marker, "2");
    let staged = s.home.path().join("staged");
    marked(s.home.path(), "staged", "tool_b", &s.marker, "2");
    std::fs::rename(&staged, &b).unwrap();
    std::fs::remove_file(&s.marker).unwrap();

    // A session loaded before the change runs neither the tool nor the panel.
    let home = s.home.path();
    for (tool, path) in [("tool_a", &a), ("tool_b", &b)] {
        let refused = registry.invoke(tool, None, &ctx(home)).await;
        assert!(refused.is_error);
        assert_eq!(
            refused.content,
            format!(
                "Error invoking tool {tool}: plugin {p} is not run: it changed since it was \
                 trusted; read it, then run `elroy plugins trust {p}`",
                p = path.display()
            )
        );
    }
    assert!(
        elroy_plugins::render_panel(&panels[0]).starts_with(&format!(
            "Panel error: plugin {} is not run: it changed",
            a.display()
        ))
    );
    // A new load does not probe them.
    let (registry, report) = s.load();
    assert!(registry.names().is_empty());
    assert_eq!(
        report.untrusted,
        [
            (a.clone(), TrustState::Changed(Change::Content)),
            (b.clone(), TrustState::Changed(Change::Content))
        ]
    );
    assert!(report.warnings[0].contains("a_tool (changed), b_tool (changed)"));
    assert_eq!(runs(&s.marker), Vec::<String>::new());

    // Trusting the new content runs it again.
    s.trust.trust(&[a, b], NOW).unwrap();
    assert_eq!(s.load().0.names(), ["tool_a", "tool_b"]);
}

#[test]
fn a_retargeted_symlink_is_changed_even_to_identical_content() {
    let s = Setup::new();
    let store = s.home.path().join("store");
    std::fs::create_dir_all(&store).unwrap();
    let one = marked(&store, "one", "linked", &s.marker, "same");
    let two = store.join("two");
    std::fs::copy(&one, &two).unwrap();
    let link = s.contrib.join("linked");
    std::os::unix::fs::symlink(&one, &link).unwrap();
    s.trust.trust(std::slice::from_ref(&link), NOW).unwrap();
    assert_eq!(s.load().0.names(), ["linked"]);

    std::fs::remove_file(&link).unwrap();
    std::os::unix::fs::symlink(&two, &link).unwrap();
    std::fs::remove_file(&s.marker).unwrap();
    let (registry, report) = s.load();
    assert!(registry.names().is_empty());
    assert_eq!(
        report.untrusted,
        [(
            link.clone(),
            TrustState::Changed(Change::Target {
                was: std::fs::canonicalize(&one).unwrap(),
                now: std::fs::canonicalize(&two).unwrap(),
            })
        )]
    );
    assert_eq!(runs(&s.marker), Vec::<String>::new());

    // Trusting the link's target is not trusting the link.
    let found = elroy_plugins::discover(&s.contrib, &[]).plugins;
    let (resolved, loaded) = elroy_plugins::resolve_plugin_path(&two, &found).unwrap();
    assert_eq!((resolved, loaded), (two.clone(), false));
}

#[test]
fn the_report_lists_states_and_stale_entries() {
    let s = Setup::new();
    let a = marked(&s.contrib, "a_tool", "tool_a", &s.marker, "1");
    let b = marked(&s.contrib, "b_tool", "tool_b", &s.marker, "1");
    let c = marked(&s.extra, "c_tool", "tool_c", &s.marker, "1");
    let gone = marked(&s.extra, "gone", "tool_g", &s.marker, "1");
    let elsewhere_dir = s.home.path().join("elsewhere");
    std::fs::create_dir_all(&elsewhere_dir).unwrap();
    let elsewhere = marked(&elsewhere_dir, "later", "tool_l", &s.marker, "1");
    s.trust
        .trust(
            &[a.clone(), b.clone(), gone.clone(), elsewhere.clone()],
            NOW,
        )
        .unwrap();
    marked(&s.contrib, "b_tool", "tool_b", &s.marker, "2");
    std::fs::remove_file(&gone).unwrap();

    let report = elroy_plugins::trust_report(&s.contrib, std::slice::from_ref(&s.extra), &s.trust);
    let states: Vec<(PathBuf, TrustState)> = report
        .plugins
        .iter()
        .map(|p| (p.path.clone(), p.state.clone()))
        .collect();
    assert_eq!(
        states,
        [
            (a.clone(), TrustState::Trusted),
            (b.clone(), TrustState::Changed(Change::Content)),
            (c.clone(), TrustState::New),
        ]
    );
    let stale: Vec<(PathBuf, elroy_plugins::Stale)> = report
        .stale
        .iter()
        .map(|(e, k)| (e.path.clone(), *k))
        .collect();
    assert_eq!(
        stale,
        [
            (gone.clone(), elroy_plugins::Stale::Missing),
            (elsewhere.clone(), elroy_plugins::Stale::NotLoaded)
        ]
    );
    assert_eq!(report.untrusted().count(), 2);
    // Listing ran nothing.
    assert_eq!(runs(&s.marker), Vec::<String>::new());
    // What `elroy plugins` lists and `elroy plugins trust --all` picks.
    let rows: Vec<(&str, PathBuf)> = report
        .rows()
        .into_iter()
        .map(|r| (r.state, r.path))
        .collect();
    assert_eq!(
        rows,
        [
            ("trusted", a),
            ("untrusted", b.clone()),
            ("untrusted", c.clone()),
            ("missing", gone.clone()),
            ("not loaded", elsewhere),
        ]
    );
    let all = report.choose(&[], true).unwrap();
    assert_eq!(all.plugins, [(b.clone(), true), (c.clone(), true)]);
    let json = report.to_json(&s.trust);
    assert_eq!(json["plugins"][1]["state"], "changed");
    assert_eq!(json["stale"][1]["state"], "not loaded");

    // A missing entry can be untrusted; a path never trusted is an error that changes nothing.
    assert_eq!(
        s.trust.untrust(std::slice::from_ref(&gone)).unwrap().len(),
        1
    );
    let before = std::fs::read_to_string(s.trust.file()).unwrap();
    let err = s.trust.untrust(&[b.clone(), c.clone()]).unwrap_err();
    assert_eq!(err.to_string(), format!("{} is not trusted", c.display()));
    assert_eq!(std::fs::read_to_string(s.trust.file()).unwrap(), before);
}

#[test]
fn a_typed_path_is_matched_to_the_plugin_elroy_loads() {
    let s = Setup::new();
    let a = marked(&s.contrib, "a_tool", "tool_a", &s.marker, "1");
    // The home reached through a symlink: the same plugin, keyed as the loader finds it.
    let alias = s.home.path().join("alias");
    std::os::unix::fs::symlink(&s.contrib, &alias).unwrap();
    let found = elroy_plugins::discover(&s.contrib, &[]).plugins;
    assert_eq!(
        elroy_plugins::resolve_plugin_path(&alias.join("a_tool"), &found).unwrap(),
        (a.clone(), true)
    );
    assert_eq!(
        elroy_plugins::resolve_plugin_path(&a, &found).unwrap(),
        (a, true)
    );
    // Not plugins: missing, not executable, hidden.
    let plain = s.contrib.join("notes.txt");
    std::fs::write(&plain, "x").unwrap();
    let hidden = s.contrib.join(".hidden");
    write_exec(&hidden, "#!/bin/sh\n");
    for (path, reason) in [
        (s.contrib.join("nope"), "no such file"),
        (plain, "not a plugin"),
        (hidden, "not a plugin"),
    ] {
        let err = elroy_plugins::resolve_plugin_path(&path, &found)
            .unwrap_err()
            .to_string();
        assert!(
            err.starts_with(&format!("{}: {reason}", path.display())),
            "{err}"
        );
    }
}

#[test]
fn the_summary_names_three_and_counts_the_rest() {
    let list: Vec<(PathBuf, TrustState)> = ["a", "b", "c", "d", "e"]
        .iter()
        .map(|n| (PathBuf::from(format!("/p/{n}")), TrustState::New))
        .collect();
    assert_eq!(elroy_plugins::untrusted_summary(&[]), None);
    let line = elroy_plugins::untrusted_summary(&list).unwrap();
    assert!(
        line.starts_with(
            "5 plugins not run because not trusted: a (new), b (new), c (new) and 2 more;"
        ),
        "{line}"
    );
    let one = elroy_plugins::untrusted_summary(&list[..1]).unwrap();
    assert!(
        one.starts_with("1 plugin not run because not trusted: a (new);"),
        "{one}"
    );
}
