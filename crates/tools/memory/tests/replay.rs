//! Replays every call of the fixture's `expected.json` that belongs to the memory tools, in order,
//! in one fresh home, at each call's recorded instant, in `IST-5:30`, for the recorded user token,
//! and compares with Elroy's content. Differences allowed by the spec are applied explicitly.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use crate::common;

use common::*;
use serde_json::Value;

const TOOLS: &[&str] = &[
    "create_memory",
    "print_memory",
    "update_outdated_or_incorrect_memory",
    "examine_memories",
    "get_source_content_for_memory",
    "add_memory_to_current_context",
    "drop_memory_from_current_context",
];

#[test]
fn replay_expected_json_memory_calls() {
    let expected: Value = serde_json::from_str(
        &std::fs::read_to_string(shared().join("fixtures/elroy-home-0.5.0/expected.json")).unwrap(),
    )
    .unwrap();
    assert_eq!(expected["environment"]["user_token"], TOKEN);
    assert_eq!(expected["environment"]["timezone"]["posix_tz"], "IST-5:30");
    let env = Env::new(TOKEN, |_| None);
    let mut replayed = 0;
    let mut update_local_time = None;
    for call in expected["calls"].as_array().unwrap() {
        let tool = call["tool"].as_str().unwrap();
        if !TOOLS.contains(&tool) {
            continue;
        }
        let now = ts(call["clock_utc"].as_str().unwrap());
        let args = serde_json::to_string(&call["arguments"]).unwrap();
        let result = env.call(tool, &args, now);
        let mut want = call["content"].as_str().unwrap().to_owned();
        if tool == "update_outdated_or_incorrect_memory" {
            update_local_time = Some(
                now.to_zoned_datetime(ist())
                    .strftime("%Y-%m-%d %H:%M:%S")
                    .to_string(),
            );
        }
        if want.contains("\n\nUpdate (2026-03-16 19:00:00):\n") {
            // We (D8): the update stamp is the time of the update (2026-03-17 07:45:00 local),
            // not the original memory's creation time.
            let stamp = update_local_time.as_deref().unwrap();
            assert_eq!(stamp, "2026-03-17 07:45:00");
            want = want.replace("2026-03-16 19:00:00", stamp);
        }
        assert_eq!(result.content, want, "seq {}", call["seq"]);
        assert_eq!(
            result.is_error,
            call["is_error"].as_bool().unwrap(),
            "seq {}",
            call["seq"]
        );
        replayed += 1;
    }
    assert_eq!(replayed, 8);

    // Files: D8 archives the superseded version instead of leaving a `-2` file.
    let mem = env.home().join("memories");
    assert_eq!(
        std::fs::read_to_string(mem.join("Priya_s_coffee_preference.md")).unwrap(),
        "---\nid: 2\n---\n\nPriya prefers a flat white with oat milk and avoids café lattes."
    );
    assert_eq!(
        std::fs::read_to_string(mem.join("archive/Priya_s_plan__Kyoto_trip__2026.md")).unwrap(),
        "---\nid: 1\n---\n\nPriya plans to visit Kyoto (京都) in April 2026 with her sister."
    );
    assert_eq!(
        std::fs::read_to_string(mem.join("Priya_s_plan__Kyoto_trip__2026.md")).unwrap(),
        "---\nid: 3\n---\n\n\nPriya plans to visit Kyoto (京都) in April 2026 with her sister.\n\nUpdate (2026-03-17 07:45:00):\nThe trip moved to May 2026; she also wants to see Nara (奈良)."
    );
    assert!(!mem.join("Priya_s_plan__Kyoto_trip__2026-2.md").exists());
    // Context: the update swapped id 1 for id 3; coffee (2) was dropped and re-added.
    assert_eq!(env.pinned(), [3, 2]);
}
