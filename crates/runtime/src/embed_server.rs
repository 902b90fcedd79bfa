//! The resident embedding worker's socket: a process whose built-in model is not loaded asks the
//! worker that has it loaded for a question's vector, instead of loading the model itself.
//!
//! Loading the built-in model costs a one-shot process ~90 ms of CPU (reading the weights,
//! parsing `tokenizer.json`), more than everything else an `examine_memories` process does;
//! embedding one question in a process that has the model costs ~5–15 ms. So the detached worker
//! (`crate::embed_worker`) keeps the model it loaded for `embedding_worker_idle_seconds` after
//! its last request and answers on a Unix socket in the user home ([`socket_path`], mode 0600).
//!
//! The protocol is one JSON line each way per connection: a [`Request`] (`{"op":"embed",
//! "model":…,"text":…}` or `{"op":"pending"}`), then for `embed` a [`Reply`] (`{"vector":[…]}`
//! or `{"error":"…"}`); `pending` gets no reply (the writer that sent it exits at once). The
//! worker answers only for the model the client names (vectors of another model are never
//! compared), and the client falls back to loading the model itself on any failure: the socket
//! only ever saves time, it is never needed for an answer. What crosses it is the text the
//! client sent and its vector; nothing of the home.

use std::io::{self, BufRead, BufReader, Write};
use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::os::unix::net::{UnixListener, UnixStream};
use std::path::{Path, PathBuf};
use std::sync::mpsc::Sender;
use std::time::{Duration, Instant};

use serde::{Deserialize, Serialize};

/// The socket of a user home's resident worker: `<user home>/.embed-worker.sock`.
pub fn socket_path(user_home: &Path) -> PathBuf {
    user_home.join(".embed-worker.sock")
}

/// Bytes a request line may have (a question, JSON-escaped); longer ones are refused.
const MAX_REQUEST_BYTES: u64 = 1 << 20;

/// How often the serving loop looks whether its socket file is still its own (a removed home or
/// socket, or a home made again at the same path, ends the worker) while it waits for a
/// connection.
const CHECK_INTERVAL: Duration = Duration::from_secs(1);

/// What a client asks the resident worker.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "op", rename_all = "lowercase")]
pub enum Request {
    /// The vector of `text` under `model` (the embedder's stored model name).
    Embed {
        /// The model name the client stores vectors under; another model's worker refuses.
        model: String,
        /// The text to embed (a question).
        text: String,
    },
    /// A memory was written without its vector: embed what is pending.
    Pending,
    /// Stop serving and exit once the work in hand is done: another process wants the worker
    /// lock to embed in the foreground with its own progress (`elroy models embed`, a session).
    Yield,
}

/// The worker's answer to [`Request::Embed`].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Reply {
    /// The embedding (as the embedder returned it).
    Vector(Vec<f32>),
    /// Why there is none (another model, the model failed).
    Error(String),
}

/// Why [`ask`] got no vector.
#[derive(Debug, thiserror::Error)]
pub enum AskError {
    /// No worker listens (no socket file, or a stale one left by a killed worker).
    #[error("no resident embedding worker")]
    NoWorker,
    /// The connection failed or timed out midway.
    #[error("resident embedding worker: {0}")]
    Io(#[from] io::Error),
    /// The worker answered with an error or something that is not a [`Reply`].
    #[error("resident embedding worker: {0}")]
    Refused(String),
}

/// Asks the worker at `socket` for the vector of `text` under `model`, waiting at most `wait`
/// for each read and write.
///
/// # Errors
/// [`AskError::NoWorker`] when nothing listens; [`AskError::Io`] on a failed or timed-out
/// exchange; [`AskError::Refused`] when the worker cannot answer for that model.
pub fn ask(socket: &Path, model: &str, text: &str, wait: Duration) -> Result<Vec<f32>, AskError> {
    let stream = connect(socket)?;
    stream.set_read_timeout(Some(wait))?;
    stream.set_write_timeout(Some(wait))?;
    let request = Request::Embed {
        model: model.to_owned(),
        text: text.to_owned(),
    };
    send(&stream, &request)?;
    let mut line = String::new();
    BufReader::new(&stream).read_line(&mut line)?;
    match serde_json::from_str::<Reply>(&line) {
        Ok(Reply::Vector(vector)) => Ok(vector),
        Ok(Reply::Error(e)) => Err(AskError::Refused(e)),
        Err(e) => Err(AskError::Refused(format!("unreadable answer: {e}"))),
    }
}

/// Tells the worker at `socket` that memories wait for their vectors. `false` when no worker
/// listens (the caller then starts one).
pub fn notify_pending(socket: &Path) -> bool {
    tell(socket, &Request::Pending)
}

/// Asks the worker at `socket` to stop serving and exit after the work in hand. `false` when
/// no worker listens.
pub fn ask_to_yield(socket: &Path) -> bool {
    tell(socket, &Request::Yield)
}

/// Sends a request that gets no reply; whether it was sent.
fn tell(socket: &Path, request: &Request) -> bool {
    connect(socket)
        .and_then(|stream| {
            stream.set_write_timeout(Some(Duration::from_secs(1)))?;
            send(&stream, request).map_err(AskError::Io)
        })
        .is_ok()
}

fn connect(socket: &Path) -> Result<UnixStream, AskError> {
    UnixStream::connect(socket).map_err(|e| match e.kind() {
        io::ErrorKind::NotFound | io::ErrorKind::ConnectionRefused => AskError::NoWorker,
        _ => AskError::Io(e),
    })
}

fn send(mut stream: &UnixStream, request: &Request) -> io::Result<()> {
    let mut line = serde_json::to_vec(request).map_err(io::Error::other)?;
    line.push(b'\n');
    stream.write_all(&line)
}

/// The worker's listening socket. Bind it only while holding the worker lock: binding removes
/// a socket file a killed worker left. Dropping it removes the socket file.
#[derive(Debug)]
pub struct Server {
    listener: UnixListener,
    path: PathBuf,
    /// `(device, inode)` of the socket file it bound: a file at `path` that is not this one
    /// (the home was removed and made again, another worker bound there) is not its own.
    file: (u64, u64),
}

impl Server {
    /// Listens at `path` (replacing a stale socket file), readable and writable by the owner only.
    ///
    /// # Errors
    /// The bind's error (a path longer than the platform's socket path limit, a read-only home).
    pub fn bind(path: &Path) -> io::Result<Server> {
        match std::fs::remove_file(path) {
            Err(e) if e.kind() != io::ErrorKind::NotFound => return Err(e),
            _ => {}
        }
        let listener = UnixListener::bind(path)?;
        let meta = std::fs::symlink_metadata(path)?;
        let server = Server {
            listener,
            path: path.to_owned(),
            file: (meta.dev(), meta.ino()),
        };
        std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o600))?;
        Ok(server)
    }

    /// Whether the file at its path is still the socket it bound.
    fn owns_path(&self) -> bool {
        std::fs::symlink_metadata(&self.path).is_ok_and(|m| (m.dev(), m.ino()) == self.file)
    }

    /// Where it listens.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Answers requests until none came for `idle`, the socket file is gone or no longer its own,
    /// or a client asks it to yield: `embed` with
    /// `embed(model, text)`, `pending` by a message on `pending` (the worker's embedding loop
    /// runs beside; `embed` requests are never queued behind it). Returns when done, having
    /// closed the socket and removed its file (a client that connected meanwhile sees the
    /// connection closed, not a wait); dropping `pending` then tells the loop no more will come.
    pub fn serve(self, idle: Duration, embed: &dyn Fn(&str, &str) -> Reply, pending: Sender<()>) {
        let mut last = Instant::now();
        loop {
            let left = idle.saturating_sub(last.elapsed());
            if left.is_zero() || !self.owns_path() {
                return;
            }
            match wait_readable(&self.listener, left.min(CHECK_INTERVAL)) {
                Ok(false) => continue,
                Ok(true) => {}
                Err(_) => return,
            }
            let Ok((stream, _)) = self.listener.accept() else {
                continue;
            };
            match read_request(&stream) {
                Some(Request::Embed { model, text }) => {
                    let mut line = serde_json::to_vec(&embed(&model, &text)).unwrap_or_default();
                    line.push(b'\n');
                    let _ = (&stream).write_all(&line);
                }
                Some(Request::Pending) => {
                    let _ = pending.send(());
                }
                Some(Request::Yield) => return,
                None => {}
            }
            last = Instant::now();
        }
    }
}

impl Drop for Server {
    /// Removes the socket file, unless another worker's socket has taken its path.
    fn drop(&mut self) {
        if self.owns_path() {
            let _ = std::fs::remove_file(&self.path);
        }
    }
}

/// Whether `listener` has a connection waiting within `wait`.
fn wait_readable(listener: &UnixListener, wait: Duration) -> io::Result<bool> {
    use rustix::event::{PollFd, PollFlags, Timespec, poll};
    let mut fds = [PollFd::new(listener, PollFlags::IN)];
    let timeout = Timespec {
        tv_sec: i64::try_from(wait.as_secs()).unwrap_or(i64::MAX),
        tv_nsec: i64::from(wait.subsec_nanos()),
    };
    match poll(&mut fds, Some(&timeout)) {
        Ok(n) => Ok(n > 0),
        Err(rustix::io::Errno::INTR) => Ok(false),
        Err(e) => Err(e.into()),
    }
}

/// One request line (at most [`MAX_REQUEST_BYTES`], read within a second); `None` for anything
/// else.
fn read_request(stream: &UnixStream) -> Option<Request> {
    stream.set_read_timeout(Some(Duration::from_secs(1))).ok()?;
    stream
        .set_write_timeout(Some(Duration::from_secs(5)))
        .ok()?;
    let mut line = String::new();
    io::Read::take(BufReader::new(stream), MAX_REQUEST_BYTES)
        .read_line(&mut line)
        .ok()?;
    serde_json::from_str(&line).ok()
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]
    use super::*;

    fn fake_embed(model: &str, text: &str) -> Reply {
        if model == "m" {
            Reply::Vector(vec![text.len() as f32, 1.0])
        } else {
            Reply::Error(format!("this worker embeds with m, not {model}"))
        }
    }

    /// A question's vector over the socket, a refusal for another model, a pending notice
    /// passed to the embedding loop, a malformed line ignored; the socket is the owner's only,
    /// and the worker stops when its socket file is removed, which a client then sees as no
    /// worker, or when a client asks it to yield.
    #[test]
    fn the_worker_answers_over_its_socket_until_the_socket_is_gone() {
        let dir = tempfile::tempdir().unwrap();
        let path = socket_path(dir.path());
        let server = Server::bind(&path).unwrap();
        let mode = std::fs::metadata(&path).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o600);
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::scope(|s| {
            s.spawn(move || server.serve(Duration::from_secs(60), &fake_embed, tx));
            let wait = Duration::from_secs(10);
            assert_eq!(ask(&path, "m", "four", wait).unwrap(), vec![4.0, 1.0]);
            let refused = ask(&path, "other", "four", wait).unwrap_err();
            assert!(refused.to_string().contains("not other"), "{refused}");
            let mut junk = UnixStream::connect(&path).unwrap();
            junk.write_all(b"not json\n").unwrap();
            assert!(notify_pending(&path));
            rx.recv_timeout(wait).unwrap();
            assert_eq!(ask(&path, "m", "", wait).unwrap(), vec![0.0, 1.0]);
            std::fs::remove_file(&path).unwrap();
        });
        // Another of the kind: a client asks it to yield.
        let server = Server::bind(&path).unwrap();
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::scope(|s| {
            s.spawn(move || server.serve(Duration::from_secs(60), &fake_embed, tx));
            assert!(ask_to_yield(&path));
        });
        assert!(rx.recv().is_err());
        assert!(!path.exists());
        // The serving thread ended and dropped its sender.
        assert!(rx.recv().is_err());
        assert!(matches!(
            ask(&path, "m", "x", Duration::from_secs(1)),
            Err(AskError::NoWorker)
        ));
        assert!(!notify_pending(&path));
    }

    /// A home removed and made again at the same path while a worker serves: the new home's
    /// worker binds there; the old one ends and leaves the new socket in place.
    #[test]
    fn a_worker_whose_home_was_made_again_ends_and_leaves_the_new_socket() {
        let dir = tempfile::tempdir().unwrap();
        let home = dir.path().join("home");
        std::fs::create_dir_all(&home).unwrap();
        let path = socket_path(&home);
        let old = Server::bind(&path).unwrap();
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::scope(|s| {
            let serving = s.spawn(move || old.serve(Duration::from_secs(60), &fake_embed, tx));
            std::fs::remove_dir_all(&home).unwrap();
            std::fs::create_dir_all(&home).unwrap();
            let new = Server::bind(&path).unwrap();
            serving.join().unwrap();
            assert!(rx.recv().is_err());
            assert!(path.exists(), "the old worker removed the new socket");
            drop(new);
            assert!(!path.exists());
        });
    }

    /// A socket file left by a killed worker: clients see no worker; the next worker's bind
    /// replaces it; the idle time ends the serving loop and the drop removes the file.
    #[test]
    fn a_stale_socket_is_replaced_and_idle_ends_the_worker() {
        let dir = tempfile::tempdir().unwrap();
        let path = socket_path(dir.path());
        drop(UnixListener::bind(&path).unwrap());
        assert!(path.exists());
        assert!(matches!(
            ask(&path, "m", "x", Duration::from_secs(1)),
            Err(AskError::NoWorker)
        ));
        let server = Server::bind(&path).unwrap();
        let (tx, _rx) = std::sync::mpsc::channel();
        server.serve(Duration::from_millis(50), &fake_embed, tx);
        assert!(!path.exists());
    }
}
