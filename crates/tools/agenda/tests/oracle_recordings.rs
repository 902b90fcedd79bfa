//! Differential runs against Elroy 0.5.0: call sequences made by the oracle's generator
//! (`shared/tools/elroy-oracle/gen_calls.py SEED 60 --strict`) and recorded through the real Elroy
//! (`record.py`), replayed here for the agenda and due-item tools in one fresh home each, at the
//! recorded instants, zone and user. Results must equal Elroy's, apart from D7 (trigger times in
//! local time with the offset), D1 (an error may end with a hint; successes compare exactly) and the
//! listed calls whose difference the spec decides.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use crate::common;

use std::path::Path;

use common::{Home, TOOLS, d7_trigger_time};
use jiff::tz::TimeZone;
use serde_json::Value;

/// `(recording, seq, why)`: calls whose result differs from Elroy's on purpose.
const DECIDED: &[(&str, u64, &str)] = &[
    // Call 42 renamed "Überweisung an Vermieter" to "Überweisung an Vermieter :", which sanitizes
    // to the same base: `docs/tools.md#rename_due_item` keeps the file, Elroy moves it to `…-2`.
    // Call 43 then creates "üBERWEISUNG AN vERMIETER :", whose file is `…-2` with us (unique names
    // ignore case, D12), so `Überweisung_an_Vermieter-2` names another item in the calls below.
    (
        "oracle_seed31.json",
        57,
        "`docs/tools.md#rename_due_item` rename keeps the file; D12",
    ),
    ("oracle_seed31.json", 59, "follows from call 57"),
    ("oracle_seed31.json", 67, "follows from call 57"),
];

fn replay(file: &str) -> usize {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data")
        .join(file);
    let recording: Value = serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    let env = &recording["environment"];
    let tz = TimeZone::posix(env["timezone"]["posix_tz"].as_str().unwrap()).unwrap();
    let mut home = Home::new(env["user_token"].as_str().unwrap(), tz.clone());
    let mut compared = 0;
    for call in recording["calls"].as_array().unwrap() {
        let tool = call["tool"].as_str().unwrap();
        if !TOOLS.contains(&tool) {
            continue;
        }
        let seq = call["seq"].as_u64().unwrap();
        home.set_now(call["clock_utc"].as_str().unwrap());
        let args = call["arguments"].to_string();
        let result = home.call(tool, &args);
        if DECIDED.iter().any(|(f, s, _)| *f == file && *s == seq) {
            continue;
        }
        let is_error = call["is_error"].as_bool().unwrap();
        let mut want = call["content"].as_str().unwrap().to_owned();
        if tool == "print_due_item" && !is_error {
            want = d7_trigger_time(&want, &tz);
        }
        assert_eq!(
            result.is_error, is_error,
            "{file} #{seq} {tool} {args}: {}",
            result.content
        );
        if is_error {
            // D1: a short hint may follow Elroy's error message.
            assert!(
                result.content.starts_with(&want),
                "{file} #{seq} {tool} {args}\n  elroy: {want}\n  ours:  {}",
                result.content
            );
        } else {
            // Kind: a success result with anything added, dropped or changed after Elroy's
            // text is a difference (only errors may carry a D1 hint), so it compares exactly.
            assert_eq!(
                result.content, want,
                "{file} #{seq} {tool} {args}: success result differs from Elroy's"
            );
        }
        compared += 1;
    }
    compared
}

#[test]
fn seed_31() {
    assert_eq!(replay("oracle_seed31.json"), 38);
}

#[test]
fn seed_47() {
    assert_eq!(replay("oracle_seed47.json"), 49);
}

#[test]
fn seed_58() {
    assert_eq!(replay("oracle_seed58.json"), 44);
}
