//! The versioned home (elroy-history), started on first use: before the first tool call the
//! registry observes ([`VersionedHome::resume`]: time independent of the home's size), or when a
//! session starts (which also commits outside edits, [`VersionedHome::commit_outside_edits`]).

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

    /// [`LazyHistory::home`], after committing what was edited by hand since the last commit as
    /// `external edit` (a session start: one stat per store file).
    pub(crate) fn home_with_outside_edits(&self) -> Option<VersionedHome> {
        let home = self.home()?;
        if let Err(e) = home.commit_outside_edits(self.time.now()) {
            (self.warn)(&format!("versioned home: {e}"));
        }
        Some(home)
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
        match self.started() {
            Some((_, recorder)) => recorder.call_starting(ctx, name, arguments),
            None => Box::new(Unrecorded),
        }
    }
}
