//! # elroy-feature-requests
//!
//! The feature-request backlog of a user home: `<user home>/feature-requests/*.md` in Elroy
//! 0.5.0's format (`docs/formats.md#feature-requests`), identifier lookup, and Elroy's duplicate
//! merging (`docs/tool-rules.md#matching-feature-requests`). Every file Elroy writes loads here,
//! and every file written here loads in Elroy with the same fields (K4).
//!
//! - [`FeatureRequestStore`]: listing, lookup, [`make`](FeatureRequestStore::make) and
//!   [`edit`](FeatureRequestStore::edit) under the home lock with atomic writes (D12).
//! - [`FeatureRequest`]: one file, read with Elroy's loader rules and rendered in its layout.
//! - [`similarity`]: normalisation, the difflib ratio `S`, the token overlap `O` and the
//!   best-match rule; [`difflib`]: the port of Python's `SequenceMatcher.ratio`.
//! - [`FeatureRequestStore::record_reflection`]: self-reflection's request
//!   (`docs/behaviour.md#self-reflection` step 4).

pub mod difflib;
mod record;
mod reflection;
pub mod similarity;
mod store;

pub use record::{FeatureRequest, INACTIVE_STATUSES, infer_source, parse_body, render_body};
pub use reflection::{ReflectionAction, ReflectionProposal};
pub use store::{EditRequest, Entry, FEATURE_REQUESTS_DIR, FeatureRequestStore, MakeOutcome};

/// A UTC instant as Python's `datetime.isoformat()` writes it for an aware UTC datetime
/// (`docs/formats.md#timestamps-elroy-writes`): `YYYY-MM-DDTHH:MM:SS.ffffff+00:00`, the `.ffffff`
/// part left out when the microseconds are zero. Sub-microsecond digits are truncated (Python
/// datetimes have none).
pub fn isoformat_utc(ts: jiff::Timestamp) -> String {
    let dt = ts.to_zoned_datetime(jiff::tz::TimeZone::UTC).datetime();
    let micros = dt.subsec_nanosecond() / 1000;
    let base = format!(
        "{:04}-{:02}-{:02}T{:02}:{:02}:{:02}",
        dt.year(),
        dt.month(),
        dt.day(),
        dt.hour(),
        dt.minute(),
        dt.second()
    );
    if micros == 0 {
        format!("{base}+00:00")
    } else {
        format!("{base}.{micros:06}+00:00")
    }
}

// The integration tests (`tests/*.rs`) run in this crate's unit-test executable, so the package
// builds one test executable (docs/development.md, "Test layout"); they use the crate by its name.
#[cfg(test)]
extern crate self as elroy_feature_requests;
#[cfg(test)]
#[path = "../tests/main.rs"]
mod integration_tests;
