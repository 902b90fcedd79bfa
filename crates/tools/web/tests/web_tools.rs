//! `fetch_page` and `web_search` against loopback servers (`docs/tools.md#web`).

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use crate::common;

use std::sync::{Arc, Mutex};

use common::{ALLOW_PRIVATE, Route, call, context, data, serve};
use elroy_core::{BoxFuture, GateCall, InstalledGate, PermissionGate, Refused, ToolContext};
use serde_json::json;

const SPEC_PAGE: &str = "<html><head><title>Example Domain</title><style>p{color:red}</style></head>\n<body><nav>Home | About</nav>\n<h1>Example Domain</h1>\n<p>This domain is for use in   illustrative\nexamples.</p>\n<ul><li>One</li><li>Two <b>bold</b></li></ul>\n<script>var x = 1;</script>\n<footer>© 2026</footer></body></html>";

#[tokio::test]
async fn page_with_scripts_styles_and_navigation_becomes_clean_text() {
    let server = serve(vec![(
        "/article",
        Route::ok("text/html; charset=utf-8", data("article.html")),
    )])
    .await;
    let home = tempfile::tempdir().unwrap();
    let ctx = context(home.path(), &[]);
    let url = format!("{}/article", server.base);
    let r = call(&ctx, "fetch_page", json!({ "url": url })).await;
    assert!(!r.is_error, "{}", r.content);
    assert_eq!(
        r.content,
        format!(
            "Title: Tide Pools of the North Coast | Field Notes\nURL: {url}\n\n\
# Tide Pools of the North Coast\n\n\
By Ana Ruiz · March 3, 2026\n\n\
At low tide the rocks reveal a second coastline: anemones, sea stars and hermit crabs.\n\n\
## What to bring\n\n\
1. Boots with a good grip\n2. A tide table\n\n\
Month | Best low tide\nMarch | -0.4 m\n\n\
high  05:12\nlow   11:40\n\n\
Buy sunscreen!"
        )
    );
    for absent in [
        "gtag",
        "Archive",
        "cookies",
        "icon text",
        "JavaScript",
        "decorative",
        "Privacy",
        "font-family",
    ] {
        assert!(!r.content.contains(absent), "{absent} leaked into the text");
    }
}

#[tokio::test]
async fn spec_example_and_max_chars_truncation() {
    let server = serve(vec![("/page", Route::ok("text/html", SPEC_PAGE))]).await;
    let home = tempfile::tempdir().unwrap();
    let ctx = context(home.path(), &[]);
    let url = format!("{}/page", server.base);
    let full = call(&ctx, "fetch_page", json!({ "url": url })).await;
    assert_eq!(
        full.content,
        format!(
            "Title: Example Domain\nURL: {url}\n\n# Example Domain\n\nThis domain is for use in illustrative examples.\n\n- One\n- Two bold"
        )
    );
    let cut = call(&ctx, "fetch_page", json!({ "url": url, "max_chars": 20 })).await;
    assert_eq!(
        cut.content,
        format!(
            "Title: Example Domain\nURL: {url}\n\n# Example Domain\n\nTh\n\n[truncated: showing 20 of 84 characters]"
        )
    );
    let zero = call(&ctx, "fetch_page", json!({ "url": url, "max_chars": 0 })).await;
    assert_eq!(
        zero.content,
        "Error invoking tool fetch_page: max_chars must be at least 1"
    );
}

#[tokio::test]
async fn file_and_ftp_urls_are_refused() {
    let home = tempfile::tempdir().unwrap();
    let ctx = context(home.path(), &[]);
    for (url, scheme) in [
        ("file:///etc/passwd", "file"),
        ("ftp://ftp.example.org/pub/x", "ftp"),
    ] {
        let r = call(&ctx, "fetch_page", json!({ "url": url })).await;
        assert!(r.is_error);
        assert_eq!(
            r.content,
            format!(
                "Error invoking tool fetch_page: unsupported URL scheme '{scheme}': only http and https are allowed"
            )
        );
    }
    let invalid = call(&ctx, "fetch_page", json!({ "url": "http://[::1" })).await;
    assert_eq!(
        invalid.content,
        "Error invoking tool fetch_page: invalid URL: http://[::1"
    );
}

#[tokio::test]
async fn body_over_the_cap_is_cut_at_the_cap() {
    let big = vec![b'a'; elroy_tools_web::MAX_BODY_BYTES + 1_000_000];
    let server = serve(vec![("/big.txt", Route::ok("text/plain", big))]).await;
    let home = tempfile::tempdir().unwrap();
    let ctx = context(home.path(), &[]);
    let url = format!("{}/big.txt", server.base);
    // max_chars above 100,000 is lowered to 100,000; the total counts only the 5,242,880 bytes read.
    let r = call(
        &ctx,
        "fetch_page",
        json!({ "url": url, "max_chars": 1_000_000 }),
    )
    .await;
    assert!(!r.is_error, "{}", r.content);
    let expected_tail = "\n\n[truncated: showing 100000 of 5242880 characters]";
    assert!(
        r.content.ends_with(expected_tail),
        "{}",
        &r.content[r.content.len() - 80..]
    );
    assert_eq!(
        r.content.len(),
        format!("URL: {url}\n\n").len() + 100_000 + expected_tail.len()
    );
}

#[tokio::test]
async fn http_errors_content_types_and_redirects() {
    let server = serve(vec![
        ("/image", Route::ok("image/png", b"\x89PNG\r\n".to_vec())),
        ("/json", Route::ok("application/json", "{\"a\": 1}")),
        (
            "/empty",
            Route::ok(
                "text/html",
                "<html><body><script>x()</script></body></html>",
            ),
        ),
        ("/to-ftp", Route::redirect("ftp://ftp.example.org/file")),
        ("/loop", Route::redirect("/loop")),
        ("/moved", Route::redirect("/json")),
    ])
    .await;
    let home = tempfile::tempdir().unwrap();
    let ctx = context(home.path(), &[]);
    let b = &server.base;
    let fetch = |path: &str| {
        let url = format!("{b}{path}");
        let ctx = &ctx;
        async move { call(ctx, "fetch_page", json!({ "url": url })).await.content }
    };
    assert_eq!(
        fetch("/missing").await,
        format!("Error invoking tool fetch_page: HTTP 404 Not Found for {b}/missing")
    );
    assert_eq!(
        fetch("/image").await,
        format!(
            "Error invoking tool fetch_page: unsupported content type 'image/png' at {b}/image"
        )
    );
    assert_eq!(
        fetch("/json").await,
        format!("URL: {b}/json\n\n{{\"a\": 1}}")
    );
    assert_eq!(
        fetch("/moved").await,
        format!("URL: {b}/json\n\n{{\"a\": 1}}")
    );
    assert_eq!(
        fetch("/empty").await,
        format!("URL: {b}/empty\n\n(no readable text)")
    );
    assert_eq!(
        fetch("/to-ftp").await,
        "Error invoking tool fetch_page: redirect to unsupported URL scheme 'ftp': ftp://ftp.example.org/file"
    );
    assert_eq!(
        fetch("/loop").await,
        format!("Error invoking tool fetch_page: too many redirects: {b}/loop")
    );
    assert_eq!(
        server
            .seen
            .lock()
            .unwrap()
            .iter()
            .filter(|t| *t == "/loop")
            .count(),
        11
    );
}

#[tokio::test]
async fn timeouts_and_refused_connections() {
    // A server that accepts and never answers.
    let silent = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let silent_url = format!("http://{}/slow", silent.local_addr().unwrap());
    let _keep = tokio::spawn(async move {
        let mut open = Vec::new();
        while let Ok((socket, _)) = silent.accept().await {
            open.push(socket);
        }
    });
    let home = tempfile::tempdir().unwrap();
    let ctx = context(home.path(), &[("ELROY_WEB_TIMEOUT_SECONDS", "1")]);
    let r = call(&ctx, "fetch_page", json!({ "url": silent_url })).await;
    assert_eq!(
        r.content,
        format!("Error invoking tool fetch_page: request timed out after 1 seconds: {silent_url}")
    );
    // A port nobody listens on.
    let closed = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let closed_url = format!("http://{}/", closed.local_addr().unwrap());
    drop(closed);
    let refused = call(&ctx, "fetch_page", json!({ "url": closed_url })).await;
    assert!(
        refused.content.starts_with(&format!(
            "Error invoking tool fetch_page: request failed: {closed_url}: "
        )),
        "{}",
        refused.content
    );
}

async fn search_server(
    route: Route,
) -> (common::Server, tempfile::TempDir, elroy_core::ToolContext) {
    let server = serve(vec![("/html/", route)]).await;
    let home = tempfile::tempdir().unwrap();
    let url = format!("{}/html/", server.base);
    let ctx = context(home.path(), &[("ELROY_WEB_SEARCH_URL", url.as_str())]);
    (server, home, ctx)
}

#[tokio::test]
async fn saved_duckduckgo_page_yields_titles_decoded_urls_and_snippets() {
    let (server, _home, ctx) = search_server(Route::ok(
        "text/html; charset=UTF-8",
        data("duckduckgo_rust.html"),
    ))
    .await;
    let r = call(
        &ctx,
        "web_search",
        json!({ "query": "  rust async runtime ", "max_results": 20 }),
    )
    .await;
    assert!(!r.is_error, "{}", r.content);
    assert_eq!(
        r.content,
        "1. Tokio - An asynchronous Rust runtime\n   https://tokio.rs/\n   Tokio is an asynchronous runtime for the Rust programming language. It provides the building blocks needed for writing network applications.\n\n\
2. The Async Ecosystem - Asynchronous Programming in Rust\n   https://rust-lang.github.io/async-book/08_ecosystem/00_chapter.html?highlight=runtime#async-runtimes\n   Rust currently provides only the bare essentials for writing async code. Importantly, executors, tasks, reactors\u{2026}\n\n\
3. async_std - Rust\n   https://docs.rs/async-std/latest/async_std/\n   Async version of the Rust standard library.\n\n\
4. GitHub - smol-rs/smol: A small and fast async runtime for Rust\n   https://github.com/smol-rs/smol\n   A small and fast async runtime. This crate simply re-exports other smaller async crates."
    );
    assert_eq!(
        server.seen.lock().unwrap().as_slice(),
        ["/html/?q=rust+async+runtime"]
    );
}

#[tokio::test]
async fn max_results_is_clamped() {
    let (_server, _home, ctx) =
        search_server(Route::ok("text/html", data("duckduckgo_rust.html"))).await;
    let count = |content: &str| content.split("\n\n").count();
    for (max, expected) in [
        (json!(0), 1),
        (json!(-3), 1),
        (json!(2), 2),
        (json!(500), 4),
        (json!(null), 4),
    ] {
        let r = call(
            &ctx,
            "web_search",
            json!({ "query": "rust async runtime", "max_results": max }),
        )
        .await;
        assert!(!r.is_error, "{}", r.content);
        assert_eq!(
            count(&r.content),
            expected,
            "max_results {max}: {}",
            r.content
        );
    }
    let one = call(
        &ctx,
        "web_search",
        json!({ "query": "rust", "max_results": 0 }),
    )
    .await;
    assert!(
        one.content
            .starts_with("1. Tokio - An asynchronous Rust runtime\n   https://tokio.rs/\n")
    );
}

#[tokio::test]
async fn search_errors_and_empty_results() {
    let (_s, _h, ctx) = search_server(Route::ok("text/html", data("duckduckgo_empty.html"))).await;
    let none = call(&ctx, "web_search", json!({ "query": "zzqqxx" })).await;
    assert_eq!(
        (none.content.as_str(), none.is_error),
        ("No results found for 'zzqqxx'.", false)
    );
    let blank = call(&ctx, "web_search", json!({ "query": "   " })).await;
    assert_eq!(
        blank.content,
        "Error invoking tool web_search: query must not be empty"
    );

    let (_s, _h, ctx) = search_server(Route::status("202 Accepted", "")).await;
    let limited = call(&ctx, "web_search", json!({ "query": "x" })).await;
    assert_eq!(
        limited.content,
        "Error invoking tool web_search: search request was rate limited (HTTP 202); try again later"
    );
    let (_s, _h, ctx) = search_server(Route::status("503 Service Unavailable", "")).await;
    let failed = call(&ctx, "web_search", json!({ "query": "x" })).await;
    assert_eq!(
        failed.content,
        "Error invoking tool web_search: search request failed: HTTP 503 Service Unavailable"
    );
}

#[test]
fn schemas_equal_golden() {
    let golden: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(common::shared_dir().join("golden/tools_schema.json")).unwrap(),
    )
    .unwrap();
    let registry = common::registry();
    assert_eq!(registry.names(), ["fetch_page", "web_search"]);
    for spec in registry.specs() {
        let expected = golden
            .as_array()
            .unwrap()
            .iter()
            .find(|e| e["function"]["name"] == spec.name.as_str())
            .unwrap();
        // preserve_order: equal strings mean equal values and key order.
        assert_eq!(
            serde_json::to_string(&spec.to_json()).unwrap(),
            serde_json::to_string(expected).unwrap()
        );
    }
}

#[tokio::test]
async fn proxies_are_used_except_for_loopback_hosts() {
    // The "proxy" is a loopback server that answers every request itself.
    let proxy = serve(vec![(
        "http://example.invalid/doc",
        Route::ok("text/plain", "via proxy"),
    )])
    .await;
    let direct = serve(vec![("/doc", Route::ok("text/plain", "direct"))]).await;
    let env = |name: &str| (name == "HTTP_PROXY").then(|| proxy.base.clone());
    let client = elroy_tools_web::WebClient::new(5, true, &env).unwrap();
    let home = tempfile::tempdir().unwrap();
    let mut ctx = context(home.path(), &[]);
    ctx.services.insert(std::sync::Arc::new(client));

    let loopback = call(
        &ctx,
        "fetch_page",
        json!({ "url": format!("{}/doc", direct.base) }),
    )
    .await;
    assert!(
        loopback.content.ends_with("\n\ndirect"),
        "{}",
        loopback.content
    );
    let remote = call(
        &ctx,
        "fetch_page",
        json!({ "url": "http://example.invalid/doc" }),
    )
    .await;
    assert_eq!(
        remote.content,
        "URL: http://example.invalid/doc\n\nvia proxy"
    );
    assert_eq!(
        proxy.seen.lock().unwrap().as_slice(),
        ["http://example.invalid/doc"]
    );
    assert_eq!(direct.seen.lock().unwrap().as_slice(), ["/doc"]);
}

/// Kind: the model makes elroy reach an address it must not. Loopback and
/// private addresses need `fetch_allow_private_addresses`, directly, through a redirect and
/// through a DNS name; link-local and cloud metadata addresses are refused even with it.
#[tokio::test]
async fn local_and_private_addresses_are_refused_unless_allowed() {
    let server = serve(vec![("/admin", Route::ok("text/plain", "secret token"))]).await;
    let home = tempfile::tempdir().unwrap();
    let strict = context(home.path(), &[(ALLOW_PRIVATE, "false")]);
    let open = context(home.path(), &[(ALLOW_PRIVATE, "true")]);
    let b = &server.base;
    let admin = format!("{b}/admin");
    let loopback_hint = "a loopback address (set fetch_allow_private_addresses: true to allow loopback and private addresses)";

    // Directly: refused with the key off, fetched with it on.
    let refused = call(&strict, "fetch_page", json!({ "url": admin })).await;
    assert!(refused.is_error);
    assert_eq!(
        refused.content,
        format!(
            "Error invoking tool fetch_page: refused to fetch {admin}: 127.0.0.1 is {loopback_hint}"
        )
    );
    let allowed = call(&open, "fetch_page", json!({ "url": admin })).await;
    assert_eq!(allowed.content, format!("URL: {admin}\n\nsecret token"));

    // The same address written another way: decimal IPv4 and IPv4-mapped IPv6.
    let port = b.rsplit(':').next().unwrap();
    for (url, ip) in [
        (format!("http://2130706433:{port}/admin"), "127.0.0.1"),
        (
            format!("http://[::ffff:127.0.0.1]:{port}/admin"),
            "::ffff:127.0.0.1",
        ),
    ] {
        let r = call(&strict, "fetch_page", json!({ "url": url })).await;
        assert!(
            r.content.contains(&format!(": {ip} is a loopback address")),
            "{url}: {}",
            r.content
        );
    }

    // A DNS name that resolves to loopback is refused after resolution.
    let by_name = format!("http://localhost:{port}/admin");
    let r = call(&strict, "fetch_page", json!({ "url": by_name })).await;
    assert!(
        r.content.starts_with(&format!(
            "Error invoking tool fetch_page: refused to fetch {by_name}: localhost resolves to "
        )) && r.content.ends_with(loopback_hint),
        "{}",
        r.content
    );

    // A redirect's target is checked on its own: the redirecting page must be allowed while its
    // target is not, so the page comes through a (trusted) proxy on loopback and the key is off.
    let proxy = serve(vec![
        ("http://example.invalid/to-admin", Route::redirect(&admin)),
        (
            "http://example.invalid/to-localhost",
            Route::redirect(&by_name),
        ),
        (
            "http://example.invalid/to-metadata",
            Route::redirect("http://169.254.169.254/latest/meta-data/"),
        ),
        (
            "http://example.invalid/to-file",
            Route::redirect("file:///etc/passwd"),
        ),
        (
            "http://example.invalid/to-data",
            Route::redirect("data:text/plain,hello"),
        ),
        (
            "http://example.invalid/to-javascript",
            Route::redirect("javascript:alert(1)"),
        ),
    ])
    .await;
    let env = |name: &str| (name == "HTTP_PROXY").then(|| proxy.base.clone());
    let client = elroy_tools_web::WebClient::new(5, false, &env).unwrap();
    let mut via_proxy = context(home.path(), &[(ALLOW_PRIVATE, "false")]);
    via_proxy.services.insert(std::sync::Arc::new(client));
    let fetch = |path: &str| {
        let url = format!("http://example.invalid{path}");
        let ctx = &via_proxy;
        async move { call(ctx, "fetch_page", json!({ "url": url })).await.content }
    };
    assert_eq!(
        fetch("/to-admin").await,
        format!(
            "Error invoking tool fetch_page: refused to fetch {admin}: 127.0.0.1 is {loopback_hint}"
        )
    );
    let r = fetch("/to-localhost").await;
    assert!(
        r.starts_with(&format!(
            "Error invoking tool fetch_page: refused to fetch {by_name}: localhost resolves to "
        )),
        "{r}"
    );
    assert_eq!(
        fetch("/to-metadata").await,
        "Error invoking tool fetch_page: refused to fetch http://169.254.169.254/latest/meta-data/: 169.254.169.254 is a cloud metadata address, which elroy never fetches"
    );
    // A redirect that is not followed is an error naming its target's scheme, never an empty
    // page (kind: a redirect elroy does not follow).
    for (path, scheme, target) in [
        ("/to-file", "file", "file:///etc/passwd"),
        ("/to-data", "data", "data:text/plain,hello"),
        ("/to-javascript", "javascript", "javascript:alert(1)"),
    ] {
        assert_eq!(
            fetch(path).await,
            format!(
                "Error invoking tool fetch_page: redirect to unsupported URL scheme '{scheme}': {target}"
            )
        );
    }
    // The loopback server itself was only reached when allowed.
    assert_eq!(server.seen.lock().unwrap().as_slice(), ["/admin"]);

    // Link-local and metadata addresses are refused even with the key on.
    for (url, ip, what) in [
        (
            "http://169.254.169.254/latest/meta-data/",
            "169.254.169.254",
            "a cloud metadata address",
        ),
        (
            "http://[fd00:ec2::254]/latest/",
            "fd00:ec2::254",
            "a cloud metadata address",
        ),
        (
            "http://100.100.100.200/latest/",
            "100.100.100.200",
            "a cloud metadata address",
        ),
        (
            "http://169.254.10.10/",
            "169.254.10.10",
            "a link-local address",
        ),
        ("http://[fe80::1]/", "fe80::1", "a link-local address"),
    ] {
        let r = call(&open, "fetch_page", json!({ "url": url })).await;
        assert_eq!(
            r.content,
            format!(
                "Error invoking tool fetch_page: refused to fetch {url}: {ip} is {what}, which elroy never fetches"
            )
        );
    }
    // web_search follows the same rules, its base URL included.
    let search = context(
        home.path(),
        &[
            (ALLOW_PRIVATE, "false"),
            ("ELROY_WEB_SEARCH_URL", &format!("{b}/html/")),
        ],
    );
    let r = call(&search, "web_search", json!({ "query": "x" })).await;
    assert_eq!(
        r.content,
        format!(
            "Error invoking tool web_search: refused to fetch {b}/html/?q=x: 127.0.0.1 is {loopback_hint}"
        )
    );
}

/// A permission check that records what it is asked and refuses one host.
struct RefuseHost {
    host: &'static str,
    asked: Mutex<Vec<String>>,
}

impl PermissionGate for RefuseHost {
    fn check<'a>(
        &'a self,
        _ctx: &'a ToolContext,
        call: GateCall<'a>,
    ) -> BoxFuture<'a, Result<(), Refused>> {
        let url = call.arguments["url"]
            .as_str()
            .unwrap_or_default()
            .to_owned();
        let refused = reqwest::Url::parse(&url).unwrap().host_str() == Some(self.host);
        self.asked
            .lock()
            .unwrap()
            .push(format!("{} {url}", call.spec.name));
        Box::pin(std::future::ready(if refused {
            Err(Refused(format!(
                "not permitted: {} is not allowed",
                self.host
            )))
        } else {
            Ok(())
        }))
    }
}

#[tokio::test]
async fn a_redirect_to_another_host_is_checked_like_a_new_fetch() {
    let target = serve(vec![("/json", Route::ok("application/json", "{\"a\": 1}"))]).await;
    let port = target.base.rsplit(':').next().unwrap().to_owned();
    let server = serve(vec![
        (
            "/away",
            Route::redirect(&format!("http://localhost:{port}/json")),
        ),
        (
            "/near",
            Route::redirect(&format!("http://127.0.0.1:{port}/json")),
        ),
        ("/moved", Route::redirect("/json")),
        ("/json", Route::ok("application/json", "{\"b\": 2}")),
    ])
    .await;
    let home = tempfile::tempdir().unwrap();
    let mut ctx = context(home.path(), &[]);
    let gate = Arc::new(RefuseHost {
        host: "localhost",
        asked: Mutex::new(Vec::new()),
    });
    ctx.services.insert(Arc::new(InstalledGate(
        Arc::clone(&gate) as Arc<dyn PermissionGate>
    )));
    let b = &server.base;

    // Refused: the other host is never contacted, and the model reads why.
    let away = call(&ctx, "fetch_page", json!({ "url": format!("{b}/away") })).await;
    assert_eq!(
        away.content,
        format!(
            "Error invoking tool fetch_page: not permitted: localhost is not allowed \
             (redirected from {b}/away)"
        )
    );
    assert!(target.seen.lock().unwrap().is_empty());
    // The same host is not asked again: a rule names hosts, not paths or ports.
    let moved = call(&ctx, "fetch_page", json!({ "url": format!("{b}/moved") })).await;
    assert_eq!(moved.content, format!("URL: {b}/json\n\n{{\"b\": 2}}"));
    let near = call(&ctx, "fetch_page", json!({ "url": format!("{b}/near") })).await;
    assert!(!near.is_error, "{}", near.content);
    assert_eq!(
        *gate.asked.lock().unwrap(),
        vec![format!("fetch_page http://localhost:{port}/json")]
    );

    // Without a check installed (the tools used as a library), redirects are followed.
    let plain = context(home.path(), &[]);
    let away = call(&plain, "fetch_page", json!({ "url": format!("{b}/away") })).await;
    assert_eq!(
        away.content,
        format!("URL: http://localhost:{port}/json\n\n{{\"a\": 1}}")
    );
}
