//! The versioned home (elroy-history), started on first use: before the first tool call the
//! registry observes, or when a session starts ([`VersionedHome::resume`]: time independent of the
//! home's size). Outside edits are not looked for then: that is one stat per store file (110,000
//! at large scale), and nothing a session does needs it. The recorder commits a hand
//! edit of a file a call writes first, as `external edit` (so no tool takes it); the others are
//! committed by `elroy history`, `elroy undo`, `/history` and `/undo`, before they read the
//! history ([`VersionedHome::commit_outside_edits`]).

use std::path::PathBuf;
use std::sync::OnceLock;

use elroy_core::{CallObserver, ObservedCall, TimeContext, ToolContext, ToolResult};
use elroy_history::{Recorder, VersionedHome};
use serde_json::{Map, Value};

use crate::WarningSink;

/// Starts the versioned home once, on first use; then records every tool call like
/// [`Recorder`]. With `versioned_home` off it records nothing and never touches git.
pub(crate) struct LazyHistory {
    enabled: bool,
    elroy_home: PathBuf,
    time: TimeContext,
    warn: WarningSink,
    started: OnceLock<Option<(VersionedHome, Recorder)>>,
}

impl LazyHistory {
    pub(crate) fn new(
        enabled: bool,
        elroy_home: PathBuf,
        time: TimeContext,
        warn: WarningSink,
    ) -> Self {
        LazyHistory {
            enabled,
            elroy_home,
            time,
            warn,
            started: OnceLock::new(),
        }
    }

    /// The started home (`VersionedHome::resume` on first use); `None` when versioning is off
    /// or the start failed (a warning).
    pub(crate) fn home(&self) -> Option<VersionedHome> {
        self.started().map(|(home, _)| home.clone())
    }

    fn started(&self) -> Option<&(VersionedHome, Recorder)> {
        self.started
            .get_or_init(|| {
                if !self.enabled {
                    return None;
                }
                match VersionedHome::resume(&self.elroy_home, self.time.now()) {
                    Ok(home) => Some((home.clone(), Recorder::new(home))),
                    Err(e) => {
                        (self.warn)(&format!("versioned home: {e}"));
                        None
                    }
                }
            })
            .as_ref()
    }
}

/// Records nothing (versioning off or not started).
struct Unrecorded;

impl ObservedCall for Unrecorded {
    fn finished(self: Box<Self>, _ctx: &ToolContext, _result: &ToolResult) -> Option<String> {
        None
    }
}

impl CallObserver for LazyHistory {
    fn call_starting(
        &self,
        ctx: &ToolContext,
        name: &str,
        arguments: &Map<String, Value>,
    ) -> Box<dyn ObservedCall> {
        let inner = match self.started() {
            Some((_, recorder)) => recorder.call_starting(ctx, name, arguments),
            None => Box::new(Unrecorded),
        };
        crate::write_failure::explained(inner, &self.elroy_home)
    }
}
