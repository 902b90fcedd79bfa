//! `probe_local_servers` against loopback servers on chosen ports (an injected candidate list).
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::time::{Duration, Instant};

use elroy_llm::probe::{
    LOCAL_SERVERS, LocalCandidate, PROBE_TIMEOUT, candidates, find_local_servers, model_for_key,
    probe_local_servers,
};
use elroy_testkit::{MockServer, Reply};

fn port_of(server: &MockServer) -> u16 {
    let url = server.base_url();
    let port = url
        .trim_start_matches("http://127.0.0.1:")
        .trim_end_matches("/v1");
    port.parse().unwrap()
}

/// A port nobody listens on (bound, then released).
fn closed_port() -> u16 {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    listener.local_addr().unwrap().port()
}

/// The first candidate in list order that answers 200 with JSON wins; refused connections and
/// error statuses are skipped; `GET /v1/models` is what is asked.
#[tokio::test]
async fn finds_the_first_answering_server_in_order() {
    let failing = MockServer::start();
    failing.fallback(Reply::status(404, "no such route"));
    let good = MockServer::start();
    good.fallback(Reply::text(""));
    let also_good = MockServer::start();
    also_good.fallback(Reply::text(""));
    let candidates = [
        LocalCandidate {
            name: "closed",
            port: closed_port(),
        },
        LocalCandidate {
            name: "failing",
            port: port_of(&failing),
        },
        LocalCandidate {
            name: "good",
            port: port_of(&good),
        },
        LocalCandidate {
            name: "also good",
            port: port_of(&also_good),
        },
    ];
    let found = probe_local_servers(&candidates, PROBE_TIMEOUT)
        .await
        .expect("a server");
    assert_eq!(found.name, "good");
    assert_eq!(found.base_url, good.base_url());
    let asked = good.requests();
    assert_eq!(asked.len(), 1);
    assert_eq!(
        (asked[0].method.as_str(), asked[0].path.as_str()),
        ("GET", "/v1/models")
    );
    assert!(found.settings()[0].starts_with("ELROY_CHAT_MODEL_API_BASE=http://127.0.0.1:"));
}

/// A server that does not answer within the timeout counts as absent, and the candidates are
/// asked at once: four servers that never answer in time take about one timeout (1 s), not four
/// (sequential probing would take 4 s; the bound is 3 s).
#[tokio::test]
async fn slow_servers_time_out_together() {
    let slow: Vec<MockServer> = (0..4)
        .map(|_| {
            let s = MockServer::start();
            s.fallback(Reply::text("")).delay(Duration::from_secs(5));
            s
        })
        .collect();
    let candidates: Vec<LocalCandidate> = slow
        .iter()
        .map(|s| LocalCandidate {
            name: "slow",
            port: port_of(s),
        })
        .collect();
    let start = Instant::now();
    assert_eq!(
        probe_local_servers(&candidates, Duration::from_secs(1)).await,
        None
    );
    assert!(
        start.elapsed() < Duration::from_secs(3),
        "{:?}",
        start.elapsed()
    );
    assert_eq!(
        probe_local_servers(
            &[LocalCandidate {
                name: "closed",
                port: closed_port()
            }],
            PROBE_TIMEOUT
        )
        .await,
        None
    );
}

/// Every answering server is found, in candidate order, each port asked once.
#[tokio::test]
async fn every_answering_server_is_listed_in_order() {
    let first = MockServer::start();
    first.fallback(Reply::text(""));
    let second = MockServer::start();
    second.fallback(Reply::text(""));
    let list = [
        LocalCandidate {
            name: "second",
            port: port_of(&second),
        },
        LocalCandidate {
            name: "closed",
            port: closed_port(),
        },
        LocalCandidate {
            name: "first",
            port: port_of(&first),
        },
        LocalCandidate {
            name: "second again",
            port: port_of(&second),
        },
    ];
    let found = find_local_servers(&list, PROBE_TIMEOUT).await;
    let names: Vec<&str> = found.iter().map(|s| s.name).collect();
    assert_eq!(names, ["second", "first"]);
    assert_eq!(second.requests().len(), 1);
}

/// The searched ports: the usual ones, or the listed ones named after the usual server on
/// that port; words that are not ports are skipped, and a list without a port is the usual one.
#[test]
fn the_searched_ports_can_be_replaced() {
    assert_eq!(candidates(None), LOCAL_SERVERS);
    assert_eq!(candidates(Some(" , x,0")), LOCAL_SERVERS);
    let listed = candidates(Some("8080, 45123,nope"));
    assert_eq!(
        listed,
        [
            LocalCandidate {
                name: "llama.cpp",
                port: 8080
            },
            LocalCandidate {
                name: "a local server",
                port: 45123
            },
        ]
    );
}

/// A pasted key names its provider's model; a key of another form names none.
#[test]
fn a_key_names_its_provider_s_model() {
    assert_eq!(
        model_for_key("sk-ant-api03-abc"),
        Some("claude-sonnet-4-5-20250929")
    );
    assert_eq!(model_for_key(" sk-proj-abc "), Some("openai/gpt-5"));
    assert_eq!(model_for_key("AIzaSyabc"), Some("gemini/gemini-2.0-flash"));
    assert_eq!(model_for_key("hello"), None);
    assert_eq!(model_for_key(""), None);
}
