//! A tiny loopback HTTP/1.1 server for the web tool tests, and a tool context whose configuration
//! points `web_search_url` at it.

#![allow(dead_code, clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use elroy_config::{Config, LoadOptions};
use elroy_core::{ToolContext, ToolRegistry, ToolResult, UserInfo};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpListener;

/// A canned answer.
#[derive(Clone)]
pub struct Route {
    pub status: &'static str,
    pub headers: Vec<(String, String)>,
    pub body: Arc<Vec<u8>>,
}

impl Route {
    pub fn ok(content_type: &str, body: impl Into<Vec<u8>>) -> Self {
        Route {
            status: "200 OK",
            headers: vec![("Content-Type".into(), content_type.into())],
            body: Arc::new(body.into()),
        }
    }

    pub fn status(status: &'static str, body: &str) -> Self {
        Route {
            status,
            headers: vec![("Content-Type".into(), "text/html".into())],
            body: Arc::new(body.as_bytes().to_vec()),
        }
    }

    pub fn redirect(location: &str) -> Self {
        Route {
            status: "302 Found",
            headers: vec![("Location".into(), location.into())],
            body: Arc::new(Vec::new()),
        }
    }
}

pub struct Server {
    pub base: String,
    /// Request targets seen (path and query).
    pub seen: Arc<Mutex<Vec<String>>>,
}

/// Serves `routes` (keyed by path without query) on 127.0.0.1; unknown paths get 404.
pub async fn serve(routes: Vec<(&str, Route)>) -> Server {
    let routes: Arc<HashMap<String, Route>> =
        Arc::new(routes.into_iter().map(|(p, r)| (p.to_owned(), r)).collect());
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let base = format!("http://{}", listener.local_addr().unwrap());
    let seen = Arc::new(Mutex::new(Vec::new()));
    let seen_in = Arc::clone(&seen);
    tokio::spawn(async move {
        loop {
            let Ok((mut socket, _)) = listener.accept().await else {
                return;
            };
            let routes = Arc::clone(&routes);
            let seen = Arc::clone(&seen_in);
            tokio::spawn(async move {
                let mut head = Vec::new();
                let mut buf = [0u8; 4096];
                while !head.windows(4).any(|w| w == b"\r\n\r\n") {
                    match socket.read(&mut buf).await {
                        Ok(0) | Err(_) => return,
                        Ok(n) => head.extend_from_slice(&buf[..n]),
                    }
                }
                let text = String::from_utf8_lossy(&head).into_owned();
                let target = text.split(' ').nth(1).unwrap_or("/").to_owned();
                seen.lock().unwrap().push(target.clone());
                let path = target.split('?').next().unwrap_or("/");
                let route = routes
                    .get(path)
                    .cloned()
                    .unwrap_or_else(|| Route::status("404 Not Found", "<p>missing</p>"));
                let mut response = format!(
                    "HTTP/1.1 {}\r\nContent-Length: {}\r\nConnection: close\r\n",
                    route.status,
                    route.body.len()
                );
                for (k, v) in &route.headers {
                    response.push_str(&format!("{k}: {v}\r\n"));
                }
                response.push_str("\r\n");
                if socket.write_all(response.as_bytes()).await.is_err() {
                    return;
                }
                // The client may stop reading at its cap; a failed write is fine.
                let _ = socket.write_all(&route.body).await;
                let _ = socket.shutdown().await;
            });
        }
    });
    Server { base, seen }
}

pub fn data(name: &str) -> String {
    std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/data")
            .join(name),
    )
    .unwrap()
}

pub fn shared_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../testdata")
}

/// The setting that lets the web tools reach loopback servers like the one of [`serve`].
pub const ALLOW_PRIVATE: &str = "ELROY_FETCH_ALLOW_PRIVATE_ADDRESSES";

/// A context on a temporary home with `env` as the configuration environment. Loopback addresses
/// are allowed (`fetch_allow_private_addresses: true`) unless `env` sets [`ALLOW_PRIVATE`].
pub fn context(home: &Path, env: &[(&str, &str)]) -> ToolContext {
    let allow = (!env.iter().any(|(k, _)| *k == ALLOW_PRIVATE))
        .then(|| (ALLOW_PRIVATE.to_owned(), "true".to_owned()));
    let config = Config::load(&LoadOptions {
        home: Some(home.to_path_buf()),
        env: env
            .iter()
            .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
            .chain([("TZ".to_owned(), "UTC0".to_owned())])
            .chain(allow)
            .collect(),
        cwd: home.to_path_buf(),
        user_dir: Some(home.join("user")),
        ..Default::default()
    })
    .unwrap();
    let mut ctx = ToolContext::new(UserInfo {
        id: None,
        token: "DEFAULT".into(),
        elroy_home: home.to_path_buf(),
        user_home: home.to_path_buf(),
    });
    ctx.services.insert(Arc::new(config));
    ctx
}

pub fn registry() -> ToolRegistry {
    let mut r = ToolRegistry::new();
    elroy_tools_web::register(&mut r);
    r
}

pub async fn call(ctx: &ToolContext, name: &str, args: serde_json::Value) -> ToolResult {
    registry().invoke(name, Some(&args.to_string()), ctx).await
}
