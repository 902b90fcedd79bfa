//! Replays every call of the Elroy fixture's `expected.json` that belongs to the agenda and
//! due-item tools, in order, in one fresh home, at each call's recorded instant, in the fixture's
//! time zone (`IST-5:30`) and with its user token, and compares each result with Elroy's.
//! Differences allowed by the spec: D7 (trigger times shown in local time with the offset).
//! Then the final listings and the files themselves are compared with the fixture.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use crate::common;

use common::{Home, TOOLS, d7_trigger_time, shared};
use elroy_markdown::{Document, Value};
use jiff::tz::TimeZone;
use serde_json::Value as Json;

fn fixture() -> Json {
    let path = shared().join("fixtures/elroy-home-0.5.0/expected.json");
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

fn replayed_home(expected: &Json) -> Home {
    let env = &expected["environment"];
    let tz = TimeZone::posix(env["timezone"]["posix_tz"].as_str().unwrap()).unwrap();
    let mut home = Home::new(env["user_token"].as_str().unwrap(), tz.clone());
    let mut replayed = 0;
    for call in expected["calls"].as_array().unwrap() {
        let tool = call["tool"].as_str().unwrap();
        if !TOOLS.contains(&tool) {
            continue;
        }
        home.set_now(call["clock_utc"].as_str().unwrap());
        let args = call["arguments"].to_string();
        let result = home.call(tool, &args);
        let mut want = call["content"].as_str().unwrap().to_owned();
        if tool == "print_due_item" && !call["is_error"].as_bool().unwrap() {
            want = d7_trigger_time(&want, &tz);
        }
        assert_eq!(
            (result.content.as_str(), result.is_error),
            (want.as_str(), call["is_error"].as_bool().unwrap()),
            "seq {} {tool} {args}",
            call["seq"]
        );
        replayed += 1;
    }
    assert_eq!(
        replayed, 43,
        "every agenda and due-item call of the fixture"
    );
    home
}

#[test]
fn replay_matches_elroy_call_by_call_and_final_state() {
    let expected = fixture();
    let mut home = replayed_home(&expected);
    let tz = home.ctx.time.tz.clone();
    home.set_now("2026-03-17T04:00:00Z");
    let final_state = &expected["final"];
    for (date, want) in final_state["list_agenda_items"].as_object().unwrap() {
        let got = home.call("list_agenda_items", &format!(r#"{{"item_date":"{date}"}}"#));
        assert_eq!(got.content, want.as_str().unwrap(), "{date}");
    }
    for (name, want) in final_state["print_due_item"].as_object().unwrap() {
        let got = home.call(
            "print_due_item",
            &serde_json::json!({ "name": name }).to_string(),
        );
        assert_eq!(got.content, d7_trigger_time(want.as_str().unwrap(), &tz));
    }
}

/// The files the replay leaves are Elroy's files, apart from the `name` key (D6) and the YAML
/// style (no folding, raw UTF-8: D5): same file names, same front-matter values, same bodies.
#[test]
fn replay_leaves_elroy_files() {
    let expected = fixture();
    let home = replayed_home(&expected);
    let fixture_dir = shared().join("fixtures/elroy-home-0.5.0/home/agenda");
    let mut want: Vec<String> = std::fs::read_dir(&fixture_dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    want.sort();
    assert_eq!(home.files(), want);
    for file in want {
        let elroy = Document::parse(
            &std::fs::read_to_string(fixture_dir.join(&file)).unwrap(),
            &file,
        )
        .unwrap();
        let ours = Document::parse(&home.file(&file), &file).unwrap();
        let Some(Value::String(name)) = ours.front_matter.get("name").cloned() else {
            panic!("{file} has no name key")
        };
        assert!(!name.is_empty());
        let mut ours_fm = ours.front_matter.clone();
        ours_fm.remove("name");
        let norm = |m: &elroy_markdown::Mapping| {
            let mut v: Vec<(String, String)> = m
                .iter()
                .map(|(k, v)| {
                    (
                        k.to_owned(),
                        format!("{v:?}").replace("Timestamp(", "String("),
                    )
                })
                .collect();
            v.sort();
            v
        };
        assert_eq!(norm(&ours_fm), norm(&elroy.front_matter), "{file}");
        assert_eq!(ours.raw_body, elroy.raw_body, "{file}");
        assert!(
            !home.file(&file).ends_with('\n'),
            "{file}: no trailing newline"
        );
    }
}
