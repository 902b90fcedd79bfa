//! The recorder as the registry's call observer: what a call changed is committed under the
//! tool's name; hand edits are never taken for the tool's.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::path::Path;
use std::sync::{Arc, Mutex};

use elroy_core::{
    NoArgs, TimeContext, ToolContext, ToolError, ToolOutput, ToolRegistry, TypedTool, UserInfo,
    sync_tool,
};
use elroy_history::{Recorder, VersionedHome};

/// Files to write (`None`: delete), relative to the home.
type Files = Vec<(String, Option<Vec<u8>>)>;

/// Writes (or deletes) the files it is given before each call.
#[derive(Default, Clone)]
struct Put(Arc<Mutex<Files>>);

impl TypedTool for Put {
    type Args = NoArgs;
    const NAME: &'static str = "put_files";
    const DESCRIPTION: &'static str = "Writes files.";
    fn run(&self, ctx: &ToolContext, _: NoArgs) -> Result<ToolOutput, ToolError> {
        let mut fail = false;
        for (path, bytes) in self.0.lock().unwrap().drain(..) {
            if path == "FAIL" {
                fail = true;
                continue;
            }
            let file = ctx.user.elroy_home.join(&path);
            match bytes {
                Some(bytes) => {
                    std::fs::create_dir_all(file.parent().unwrap()).unwrap();
                    std::fs::write(file, bytes).unwrap();
                }
                None => std::fs::remove_file(file).unwrap(),
            }
        }
        if fail {
            return Err(ToolError::new("asked to fail"));
        }
        Ok(ToolOutput::text("done"))
    }
}

struct Setup {
    _dir: tempfile::TempDir,
    home: VersionedHome,
    registry: ToolRegistry,
    put: Put,
    ctx: ToolContext,
}

impl Setup {
    fn new() -> Self {
        let dir = tempfile::tempdir().unwrap();
        let now = "2026-03-16T08:30:00Z".parse().unwrap();
        let home = VersionedHome::start(dir.path(), now).unwrap();
        let put = Put::default();
        let mut registry = ToolRegistry::new();
        registry.register(sync_tool(put.clone()));
        registry.set_call_observer(Arc::new(Recorder::new(home.clone())));
        let mut ctx = ToolContext::new(UserInfo {
            id: None,
            token: "DEFAULT".into(),
            elroy_home: dir.path().to_path_buf(),
            user_home: dir.path().to_path_buf(),
        });
        ctx.time = TimeContext::fixed(now, jiff::tz::TimeZone::UTC);
        Setup {
            _dir: dir,
            home,
            registry,
            put,
            ctx,
        }
    }

    fn root(&self) -> &Path {
        self.home.root()
    }

    fn call(&self, files: &[(&str, Option<&[u8]>)]) -> elroy_core::ToolResult {
        *self.put.0.lock().unwrap() = files
            .iter()
            .map(|(p, b)| ((*p).to_owned(), b.map(<[u8]>::to_vec)))
            .collect();
        block_on(self.registry.invoke("put_files", None, &self.ctx))
    }

    fn summaries(&self) -> Vec<String> {
        self.home
            .history(None)
            .unwrap()
            .into_iter()
            .map(|c| c.summary)
            .collect()
    }
}

fn block_on<F: std::future::Future>(f: F) -> F::Output {
    let mut f = std::pin::pin!(f);
    let mut cx = std::task::Context::from_waker(std::task::Waker::noop());
    match f.as_mut().poll(&mut cx) {
        std::task::Poll::Ready(v) => v,
        std::task::Poll::Pending => panic!("sync tools are ready at once"),
    }
}

#[test]
fn a_call_commits_what_it_changed_under_the_tools_name() {
    let s = Setup::new();
    s.call(&[("agenda/a.md", Some(b"a\n")), ("agenda/b.md", Some(b"b\n"))]);
    s.call(&[("agenda/a.md", None)]);
    s.call(&[]);
    s.call(&[
        ("memories/1.md", Some(b"1")),
        ("memories/2.md", Some(b"2")),
        ("memories/3.md", Some(b"3")),
        ("memories/4.md", Some(b"4")),
    ]);
    assert_eq!(
        s.summaries(),
        [
            "put_files: memories/1.md, memories/2.md, memories/3.md and 1 more",
            "put_files: agenda/a.md",
            "put_files: agenda/a.md, agenda/b.md",
            "initial import",
        ]
    );
    let last = &s.home.history(None).unwrap()[0];
    assert!(
        last.message
            .ends_with("\n\nmemories/1.md\nmemories/2.md\nmemories/3.md\nmemories/4.md")
    );
}

#[test]
fn a_hand_edit_the_call_did_not_touch_is_left_for_external_edit() {
    let s = Setup::new();
    std::fs::write(s.root().join("MEMORY.md"), "by hand\n").unwrap();
    s.call(&[("agenda/a.md", Some(b"a\n"))]);
    assert_eq!(s.summaries(), ["put_files: agenda/a.md", "initial import"]);
    let now = "2026-03-16T09:00:00Z".parse().unwrap();
    VersionedHome::start(s.root(), now).unwrap();
    assert_eq!(
        s.summaries(),
        ["external edit", "put_files: agenda/a.md", "initial import"]
    );
}

#[test]
fn a_hand_edit_overwritten_by_the_call_is_committed_first_and_survives_undo() {
    let s = Setup::new();
    s.call(&[("agenda/a.md", Some(b"elroy 1\n"))]);
    std::fs::write(s.root().join("agenda/a.md"), "by hand\n").unwrap();
    s.call(&[("agenda/a.md", Some(b"elroy 2\n"))]);
    assert_eq!(
        s.summaries(),
        [
            "put_files: agenda/a.md",
            "external edit",
            "put_files: agenda/a.md",
            "initial import"
        ]
    );
    let now = "2026-03-16T09:00:00Z".parse().unwrap();
    s.home.undo(now).unwrap();
    assert_eq!(
        std::fs::read(s.root().join("agenda/a.md")).unwrap(),
        b"by hand\n"
    );
}

#[test]
fn a_tool_error_still_commits_what_the_tool_wrote() {
    // The observer runs for failed calls too: a tool that wrote and then failed leaves no
    // uncommitted change behind. Invalid arguments run nothing and commit nothing.
    let s = Setup::new();
    let result = s.call(&[("agenda/a.md", Some(b"a\n")), ("FAIL", None)]);
    assert_eq!(
        result.content,
        "Error invoking tool put_files: asked to fail"
    );
    assert_eq!(s.summaries(), ["put_files: agenda/a.md", "initial import"]);
    std::fs::write(s.root().join("USER.md"), "by hand\n").unwrap();
    let result = block_on(s.registry.invoke("put_files", Some("[1]"), &s.ctx));
    assert!(result.is_error);
    assert_eq!(s.summaries(), ["put_files: agenda/a.md", "initial import"]);
}

#[test]
fn work_outside_a_tool_call_is_recorded_under_its_label() {
    let s = Setup::new();
    std::fs::write(s.root().join("USER.md"), "by hand\n").unwrap();
    let now = "2026-03-16T09:00:00Z".parse().unwrap();
    let answer = s.home.record(now, "automatic memory", || {
        std::fs::create_dir_all(s.root().join("memories")).unwrap();
        std::fs::write(s.root().join("memories/Fact.md"), "fact\n").unwrap();
        42
    });
    assert_eq!(answer, 42);
    assert_eq!(
        s.summaries(),
        ["automatic memory: memories/Fact.md", "initial import"]
    );
}
