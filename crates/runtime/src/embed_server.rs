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

/// How long a client may take to send its request line once connected.
const REQUEST_WAIT: Duration = Duration::from_millis(500);

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
    /// A memory was written without its vector: embed what is pending. Answered with
    /// [`Reply::Ok`], or a refusal when the worker embeds with another model (it then ends, so a
    /// worker of the client's model can start).
    Pending {
        /// The model name the client stores vectors under.
        model: String,
    },
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
    /// A pending notice was taken.
    Ok,
}

/// Why [`Server::serve`] returned.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Ended {
    /// No request came for the idle time.
    Idle,
    /// The socket file is gone or no longer the one it bound.
    SocketGone,
    /// A client asked it to yield (a foreground embedding wants the lock).
    Yielded,
    /// A client uses another model: this worker's configuration is out of date.
    OtherModel,
}

/// What [`notify_pending`] found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Notified {
    /// The worker took the notice and will embed what is pending.
    Taken,
    /// No worker answered (none listens, or it did not answer in time).
    NoWorker,
    /// The worker embeds with another model and is ending.
    OtherModel,
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
/// exchange, or a worker too busy to take the connection; [`AskError::Refused`] when the worker
/// cannot answer for that model.
pub fn ask(socket: &Path, model: &str, text: &str, wait: Duration) -> Result<Vec<f32>, AskError> {
    let request = Request::Embed {
        model: model.to_owned(),
        text: text.to_owned(),
    };
    match exchange(socket, &request, wait)? {
        Reply::Vector(vector) => Ok(vector),
        Reply::Error(e) => Err(AskError::Refused(e)),
        Reply::Ok => Err(AskError::Refused("no vector in the answer".into())),
    }
}

/// Tells the worker at `socket` that memories of `model` wait for their vectors.
pub fn notify_pending(socket: &Path, model: &str) -> Notified {
    let request = Request::Pending {
        model: model.to_owned(),
    };
    match exchange(socket, &request, Duration::from_secs(2)) {
        Ok(Reply::Ok) => Notified::Taken,
        Ok(_) => Notified::OtherModel,
        Err(_) => Notified::NoWorker,
    }
}

/// Asks the worker at `socket` to stop serving and exit after the work in hand. `false` when
/// no worker listens.
pub fn ask_to_yield(socket: &Path) -> bool {
    connect(socket)
        .and_then(|stream| {
            stream.set_write_timeout(Some(Duration::from_secs(1)))?;
            send(&stream, &Request::Yield).map_err(AskError::Io)
        })
        .is_ok()
}

/// Sends `request` and reads the one-line reply, waiting at most `wait` for each step.
fn exchange(socket: &Path, request: &Request, wait: Duration) -> Result<Reply, AskError> {
    let stream = connect(socket)?;
    stream.set_read_timeout(Some(wait))?;
    stream.set_write_timeout(Some(wait))?;
    send(&stream, request)?;
    let mut line = String::new();
    BufReader::new(&stream).read_line(&mut line)?;
    serde_json::from_str::<Reply>(&line)
        .map_err(|e| AskError::Refused(format!("unreadable answer: {e}")))
}

/// Connects without waiting: a worker that is stopped or flooded (its connection queue full)
/// makes a blocking connect wait forever, so a full queue is an error here, and the caller
/// embeds locally.
fn connect(socket: &Path) -> Result<UnixStream, AskError> {
    use rustix::net::{AddressFamily, SocketAddrUnix, SocketFlags, SocketType};
    let fd = rustix::net::socket_with(
        AddressFamily::UNIX,
        SocketType::STREAM,
        SocketFlags::CLOEXEC | SocketFlags::NONBLOCK,
        None,
    )
    .map_err(|e| AskError::Io(e.into()))?;
    let addr = SocketAddrUnix::new(socket).map_err(|e| AskError::Io(e.into()))?;
    match rustix::net::connect(&fd, &addr) {
        Ok(()) => {}
        Err(rustix::io::Errno::NOENT | rustix::io::Errno::CONNREFUSED) => {
            return Err(AskError::NoWorker);
        }
        Err(e) => return Err(AskError::Io(e.into())),
    }
    let stream = UnixStream::from(fd);
    stream.set_nonblocking(false)?;
    Ok(stream)
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
    /// a client asks it to yield, or a client uses another model than `model` (the worker's
    /// configuration is then out of date; the client gets a refusal). `embed` requests are
    /// answered with `embed(text)`; `pending` notices are taken (answered `ok`) and passed on
    /// `pending` to the worker's embedding loop, which runs beside, so a question never waits
    /// behind a batch. On return the socket is closed and its file removed (a client that
    /// connected meanwhile sees the connection closed, not a wait); dropping `pending` tells the
    /// loop no more will come.
    pub fn serve(
        self,
        idle: Duration,
        model: &str,
        embed: &dyn Fn(&str) -> Result<Vec<f32>, elroy_core::EmbedError>,
        pending: Sender<()>,
    ) -> Ended {
        let mut last = Instant::now();
        loop {
            let left = idle.saturating_sub(last.elapsed());
            if left.is_zero() {
                return Ended::Idle;
            }
            if !self.owns_path() {
                return Ended::SocketGone;
            }
            match wait_readable(&self.listener, left.min(CHECK_INTERVAL)) {
                Ok(false) => continue,
                Ok(true) => {}
                Err(_) => return Ended::SocketGone,
            }
            let Ok((stream, _)) = self.listener.accept() else {
                continue;
            };
            let asked = match read_request(&stream) {
                Some(Request::Yield) => return Ended::Yielded,
                Some(Request::Embed { model: m, .. } | Request::Pending { model: m })
                    if m != model =>
                {
                    reply(
                        &stream,
                        &Reply::Error(format!("this worker embeds with {model}, not {m}")),
                    );
                    return Ended::OtherModel;
                }
                Some(Request::Embed { text, .. }) => match embed(&text) {
                    Ok(vector) => Reply::Vector(vector),
                    Err(e) => Reply::Error(e.to_string()),
                },
                Some(Request::Pending { .. }) => {
                    let _ = pending.send(());
                    Reply::Ok
                }
                None => continue,
            };
            reply(&stream, &asked);
            last = Instant::now();
        }
    }
}

/// Writes one reply line (a client that went away is not an error here).
fn reply(mut stream: &UnixStream, reply: &Reply) {
    let mut line = serde_json::to_vec(reply).unwrap_or_default();
    line.push(b'\n');
    let _ = stream.write_all(&line);
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

/// One request line (at most [`MAX_REQUEST_BYTES`]) read within [`REQUEST_WAIT`] in all, so a
/// client that sends nothing, or a byte at a time, holds the worker that long at most; `None`
/// for anything else.
fn read_request(stream: &UnixStream) -> Option<Request> {
    stream
        .set_write_timeout(Some(Duration::from_secs(2)))
        .ok()?;
    let deadline = Instant::now() + REQUEST_WAIT;
    let mut line = Vec::new();
    let mut chunk = [0u8; 8192];
    while !line.contains(&b'\n') {
        let left = deadline.checked_duration_since(Instant::now())?;
        stream
            .set_read_timeout(Some(left.max(Duration::from_millis(1))))
            .ok()?;
        let n = io::Read::read(&mut &*stream, &mut chunk).ok()?;
        if n == 0 || line.len() as u64 + n as u64 > MAX_REQUEST_BYTES {
            return None;
        }
        line.extend_from_slice(&chunk[..n]);
    }
    serde_json::from_slice(&line).ok()
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]
    use super::*;

    fn fake_embed(text: &str) -> Result<Vec<f32>, elroy_core::EmbedError> {
        if text == "fail" {
            return Err(elroy_core::EmbedError("the model failed".into()));
        }
        Ok(vec![text.len() as f32, 1.0])
    }

    /// A question's vector over the socket, the embedder's failure as a refusal, a pending
    /// notice taken and passed to the embedding loop, a malformed line ignored; the socket is the
    /// owner's only. A client of another model is refused and ends the worker, which a client
    /// then sees as no worker.
    #[test]
    fn the_worker_answers_until_a_client_of_another_model_comes() {
        let dir = tempfile::tempdir().unwrap();
        let path = socket_path(dir.path());
        let server = Server::bind(&path).unwrap();
        let mode = std::fs::metadata(&path).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o600);
        let (tx, rx) = std::sync::mpsc::channel();
        let wait = Duration::from_secs(10);
        let ended = std::thread::scope(|s| {
            let serving =
                s.spawn(move || server.serve(Duration::from_secs(60), "m", &fake_embed, tx));
            assert_eq!(ask(&path, "m", "four", wait).unwrap(), vec![4.0, 1.0]);
            let failed = ask(&path, "m", "fail", wait).unwrap_err();
            assert!(failed.to_string().contains("the model failed"), "{failed}");
            let mut junk = UnixStream::connect(&path).unwrap();
            junk.write_all(b"not json\n").unwrap();
            assert_eq!(notify_pending(&path, "m"), Notified::Taken);
            rx.recv_timeout(wait).unwrap();
            assert_eq!(ask(&path, "m", "", wait).unwrap(), vec![0.0, 1.0]);
            let refused = ask(&path, "other", "four", wait).unwrap_err();
            assert!(refused.to_string().contains("not other"), "{refused}");
            serving.join().unwrap()
        });
        assert_eq!(ended, Ended::OtherModel);
        assert!(rx.recv().is_err());
        assert!(!path.exists());
        assert!(matches!(
            ask(&path, "m", "x", wait),
            Err(AskError::NoWorker)
        ));
        assert_eq!(notify_pending(&path, "m"), Notified::NoWorker);
    }

    /// Another way to end: a pending notice of another model is refused, a client asks it to
    /// yield, or the socket file is removed.
    #[test]
    fn a_worker_ends_on_another_models_notice_a_yield_or_its_socket_removed() {
        let dir = tempfile::tempdir().unwrap();
        let path = socket_path(dir.path());
        type Client<'a> = &'a dyn Fn(&Path);
        let ends: [(Client, Ended); 3] = [
            (
                &|p: &Path| assert_eq!(notify_pending(p, "other"), Notified::OtherModel),
                Ended::OtherModel,
            ),
            (&|p: &Path| assert!(ask_to_yield(p)), Ended::Yielded),
            (
                &|p: &Path| std::fs::remove_file(p).unwrap(),
                Ended::SocketGone,
            ),
        ];
        for (client, expected) in ends {
            let server = Server::bind(&path).unwrap();
            let (tx, rx) = std::sync::mpsc::channel();
            let ended = std::thread::scope(|s| {
                let serving =
                    s.spawn(move || server.serve(Duration::from_secs(60), "m", &fake_embed, tx));
                client(&path);
                serving.join().unwrap()
            });
            assert_eq!(ended, expected);
            assert!(rx.recv().is_err());
            assert!(!path.exists());
        }
    }

    /// A client that connects and sends nothing, and one that sends a byte at a time, hold the
    /// worker at most [`REQUEST_WAIT`] each: the next question is answered (within the ask's
    /// own wait) while the dripping client still sends.
    #[test]
    fn silent_and_dripping_clients_do_not_hold_the_worker() {
        let dir = tempfile::tempdir().unwrap();
        let path = socket_path(dir.path());
        let server = Server::bind(&path).unwrap();
        let (tx, _rx) = std::sync::mpsc::channel();
        let stop = std::sync::atomic::AtomicBool::new(false);
        std::thread::scope(|s| {
            s.spawn(move || server.serve(Duration::from_secs(60), "m", &fake_embed, tx));
            let _silent = UnixStream::connect(&path).unwrap();
            let drip = UnixStream::connect(&path).unwrap();
            let stop = &stop;
            s.spawn(move || {
                for byte in b"{\"op\":\"embed\",\"model\":\"m\",\"text\":\""
                    .iter()
                    .cycle()
                {
                    if stop.load(std::sync::atomic::Ordering::Relaxed)
                        || (&drip).write_all(&[*byte]).is_err()
                    {
                        return;
                    }
                    std::thread::sleep(Duration::from_millis(50));
                }
            });
            let answer = ask(&path, "m", "four", Duration::from_secs(10));
            stop.store(true, std::sync::atomic::Ordering::Relaxed);
            assert_eq!(answer.unwrap(), vec![4.0, 1.0]);
            assert!(ask_to_yield(&path));
        });
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
        let (tx, _rx) = std::sync::mpsc::channel();
        std::thread::scope(|s| {
            let serving = s.spawn(move || old.serve(Duration::from_secs(60), "m", &fake_embed, tx));
            std::fs::remove_dir_all(&home).unwrap();
            std::fs::create_dir_all(&home).unwrap();
            let new = Server::bind(&path).unwrap();
            assert_eq!(serving.join().unwrap(), Ended::SocketGone);
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
        let ended = server.serve(Duration::from_millis(50), "m", &fake_embed, tx);
        assert_eq!(ended, Ended::Idle);
        assert!(!path.exists());
    }
}
