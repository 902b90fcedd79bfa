//! `probe_local_servers` against loopback servers on chosen ports (an injected candidate list).
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::time::{Duration, Instant};

use elroy_llm::probe::{LocalCandidate, PROBE_TIMEOUT, probe_local_servers};
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
