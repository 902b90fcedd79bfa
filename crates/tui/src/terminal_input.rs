//! Reading the terminal: a thread reads standard input's bytes, cuts out bracketed pastes itself
//! and hands every other byte to termina's escape-sequence parser; the events go to the event loop
//! as crossterm events (the type the rest of the interface uses).
//!
//! Why not crossterm's own reader: its parser waits for a paste's end marker with no time limit,
//! so a start marker without an end (`ESC[200~abc`, which a half-transmitted paste over ssh
//! produces) made the interface ignore every key, Esc, Ctrl+C and Ctrl+D included. Here a paste
//! whose end marker does not come within [`PASTE_TIMEOUT`] of its last byte ends there: the text so
//! far becomes input and the keys after it work again.

use std::io::Write as _;
use std::os::fd::AsFd;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use ratatui::crossterm::event::{
    Event, KeyCode, KeyEvent, KeyEventKind, KeyEventState, KeyModifiers, MouseButton, MouseEvent,
    MouseEventKind,
};
use tokio::sync::mpsc;

/// How long a paste may go without a byte before it is taken as ended (the end marker lost).
pub const PASTE_TIMEOUT: Duration = Duration::from_secs(1);
/// What a terminal sends before pasted text when bracketed paste is on.
const PASTE_START: &[u8] = b"\x1b[200~";
/// What it sends after.
const PASTE_END: &[u8] = b"\x1b[201~";
/// How often the thread looks at its flags while no byte arrives and nothing is pending.
const POLL: Duration = Duration::from_millis(200);
/// The same while a paste or a partial marker waits for its time out.
const POLL_PENDING: Duration = Duration::from_millis(50);

/// Splits the byte stream into pasted text and everything else, and parses the rest into
/// events. Pure: the tests feed it bytes and a clock.
#[derive(Debug, Default)]
pub struct Decoder {
    parser: termina::Parser,
    /// The pasted bytes so far while inside a paste, and when the last one came.
    paste: Option<(Vec<u8>, Instant)>,
    /// A proper prefix of [`PASTE_START`] at the end of the last read, held for the next.
    held: Vec<u8>,
}

impl Decoder {
    /// Takes the bytes of one read at `now`; returns the events they complete.
    pub fn feed(&mut self, bytes: &[u8], now: Instant) -> Vec<Event> {
        let mut out = Vec::new();
        let mut data = std::mem::take(&mut self.held);
        data.extend_from_slice(bytes);
        let mut rest: &[u8] = &data;
        while !rest.is_empty() {
            if let Some((pasted, last)) = &mut self.paste {
                pasted.extend_from_slice(rest);
                *last = now;
                rest = &[];
                if let Some(end) = find(pasted, PASTE_END) {
                    let after = pasted.split_off(end);
                    let text = std::mem::take(pasted);
                    self.paste = None;
                    out.push(Event::Paste(paste_text(&text)));
                    let after = after[PASTE_END.len()..].to_vec();
                    out.extend(self.feed(&after, now));
                }
                continue;
            }
            match find(rest, PASTE_START) {
                Some(start) => {
                    out.extend(self.parse(&rest[..start]));
                    self.paste = Some((Vec::new(), now));
                    rest = &rest[start + PASTE_START.len()..];
                }
                None => {
                    let keep = held_prefix(rest);
                    out.extend(self.parse(&rest[..rest.len() - keep]));
                    self.held = rest[rest.len() - keep..].to_vec();
                    rest = &[];
                }
            }
        }
        out
    }

    /// No byte came for a while (`now`): a paste without its end marker for [`PASTE_TIMEOUT`]
    /// ends with the text so far, and a held partial marker is parsed as the keys it is.
    pub fn idle(&mut self, now: Instant) -> Vec<Event> {
        let mut out = Vec::new();
        if let Some((_, last)) = &self.paste
            && now.duration_since(*last) >= PASTE_TIMEOUT
            && let Some((text, _)) = self.paste.take()
        {
            out.push(Event::Paste(paste_text(&text)));
        }
        if self.paste.is_none() && !self.held.is_empty() {
            let held = std::mem::take(&mut self.held);
            out.extend(self.parse(&held));
        }
        out
    }

    /// Whether a paste or a partial marker waits (the reader then looks more often).
    pub fn pending(&self) -> bool {
        self.paste.is_some() || !self.held.is_empty()
    }

    fn parse(&mut self, bytes: &[u8]) -> Vec<Event> {
        if bytes.is_empty() {
            return Vec::new();
        }
        // The end of a read is the end of what the terminal sent for now: a lone ESC is Esc.
        self.parser.parse(bytes, false);
        let mut out = Vec::new();
        while let Some(event) = self.parser.pop() {
            out.extend(convert(event));
        }
        out
    }
}

fn find(haystack: &[u8], needle: &[u8]) -> Option<usize> {
    haystack.windows(needle.len()).position(|w| w == needle)
}

/// The length of the longest proper prefix of [`PASTE_START`] (at least `ESC [`) that `bytes`
/// ends with: the start of a marker split between two reads. A lone ESC is not held (Esc must
/// act at once).
fn held_prefix(bytes: &[u8]) -> usize {
    (2..PASTE_START.len())
        .rev()
        .find(|&n| bytes.ends_with(&PASTE_START[..n]))
        .unwrap_or(0)
}

fn paste_text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// A termina event as the crossterm event the interface handles; `None` for what it ignores
/// (terminal responses, focus changes, keys crossterm has no code for).
fn convert(event: termina::Event) -> Option<Event> {
    match event {
        termina::Event::Key(key) => Some(Event::Key(KeyEvent {
            code: key_code(key.code)?,
            modifiers: modifiers(key.modifiers),
            kind: match key.kind {
                termina::event::KeyEventKind::Press => KeyEventKind::Press,
                termina::event::KeyEventKind::Release => KeyEventKind::Release,
                termina::event::KeyEventKind::Repeat => KeyEventKind::Repeat,
            },
            state: KeyEventState::NONE,
        })),
        termina::Event::Mouse(mouse) => {
            use termina::event::MouseEventKind as K;
            let button = |b: termina::event::MouseButton| match b {
                termina::event::MouseButton::Left => MouseButton::Left,
                termina::event::MouseButton::Right => MouseButton::Right,
                termina::event::MouseButton::Middle => MouseButton::Middle,
            };
            let kind = match mouse.kind {
                K::Down(b) => MouseEventKind::Down(button(b)),
                K::Up(b) => MouseEventKind::Up(button(b)),
                K::Drag(b) => MouseEventKind::Drag(button(b)),
                K::Moved => MouseEventKind::Moved,
                K::ScrollDown => MouseEventKind::ScrollDown,
                K::ScrollUp => MouseEventKind::ScrollUp,
                K::ScrollLeft => MouseEventKind::ScrollLeft,
                K::ScrollRight => MouseEventKind::ScrollRight,
            };
            Some(Event::Mouse(MouseEvent {
                kind,
                column: mouse.column,
                row: mouse.row,
                modifiers: modifiers(mouse.modifiers),
            }))
        }
        termina::Event::Paste(text) => Some(Event::Paste(text)),
        _ => None,
    }
}

fn key_code(code: termina::event::KeyCode) -> Option<KeyCode> {
    use termina::event::KeyCode as T;
    Some(match code {
        T::Char(c) => KeyCode::Char(c),
        T::Enter => KeyCode::Enter,
        T::Backspace => KeyCode::Backspace,
        T::Tab => KeyCode::Tab,
        T::Escape => KeyCode::Esc,
        T::Left => KeyCode::Left,
        T::Right => KeyCode::Right,
        T::Up => KeyCode::Up,
        T::Down => KeyCode::Down,
        T::Home => KeyCode::Home,
        T::End => KeyCode::End,
        T::BackTab => KeyCode::BackTab,
        T::PageUp => KeyCode::PageUp,
        T::PageDown => KeyCode::PageDown,
        T::Insert => KeyCode::Insert,
        T::Delete => KeyCode::Delete,
        T::Null => KeyCode::Null,
        T::Function(n) => KeyCode::F(n),
        _ => return None,
    })
}

fn modifiers(m: termina::event::Modifiers) -> KeyModifiers {
    use termina::event::Modifiers as M;
    let mut out = KeyModifiers::NONE;
    for (from, to) in [
        (M::SHIFT, KeyModifiers::SHIFT),
        (M::ALT, KeyModifiers::ALT),
        (M::CONTROL, KeyModifiers::CONTROL),
        (M::SUPER, KeyModifiers::SUPER),
        (M::HYPER, KeyModifiers::HYPER),
        (M::META, KeyModifiers::META),
    ] {
        if m.contains(from) {
            out |= to;
        }
    }
    out
}

/// The reading thread. Pausing it (around `$EDITOR`) leaves the terminal's input to the child;
/// dropping it stops the thread (within [`POLL`]) so nothing after the interface loses input
/// to it.
pub struct Reader {
    flags: Arc<Flags>,
    thread: Option<JoinHandle<()>>,
}

#[derive(Default)]
struct Flags {
    stop: AtomicBool,
    pause: AtomicBool,
    parked: AtomicBool,
}

impl Reader {
    /// Starts reading standard input; events go to `tx` (the thread ends when `tx` is closed or
    /// standard input ends).
    pub fn start(tx: mpsc::UnboundedSender<Event>) -> Reader {
        let flags = Arc::new(Flags::default());
        let thread_flags = Arc::clone(&flags);
        let thread = std::thread::Builder::new()
            .name("elroy-terminal-input".into())
            .spawn(move || read_loop(&thread_flags, &tx))
            .ok();
        Reader { flags, thread }
    }

    /// Stops reading until [`Reader::resume`]; returns once the thread no longer reads.
    pub fn pause(&self) {
        self.flags.pause.store(true, Ordering::SeqCst);
        let start = Instant::now();
        while !self.flags.parked.load(Ordering::SeqCst)
            && self.thread.as_ref().is_some_and(|t| !t.is_finished())
            && start.elapsed() < POLL * 4
        {
            std::thread::sleep(Duration::from_millis(2));
        }
    }

    /// Reads again after [`Reader::pause`].
    pub fn resume(&self) {
        self.flags.pause.store(false, Ordering::SeqCst);
    }
}

impl Drop for Reader {
    fn drop(&mut self) {
        self.flags.stop.store(true, Ordering::SeqCst);
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

fn read_loop(flags: &Flags, tx: &mpsc::UnboundedSender<Event>) {
    use rustix::event::{PollFd, PollFlags, Timespec, poll};
    let stdin = std::io::stdin();
    let fd = stdin.as_fd();
    let mut decoder = Decoder::default();
    let mut buf = vec![0u8; 8192];
    let timespec = |d: Duration| Timespec {
        tv_sec: 0,
        tv_nsec: i64::try_from(d.as_nanos()).unwrap_or(50_000_000),
    };
    while !flags.stop.load(Ordering::SeqCst) && !tx.is_closed() {
        if flags.pause.load(Ordering::SeqCst) {
            flags.parked.store(true, Ordering::SeqCst);
            std::thread::sleep(Duration::from_millis(10));
            continue;
        }
        flags.parked.store(false, Ordering::SeqCst);
        let mut fds = [PollFd::new(&fd, PollFlags::IN)];
        let wait = if decoder.pending() {
            POLL_PENDING
        } else {
            POLL
        };
        let ready = match poll(&mut fds, Some(&timespec(wait))) {
            Ok(n) => n,
            Err(rustix::io::Errno::INTR) => 0,
            Err(_) => return,
        };
        let events = if ready > 0 && !flags.pause.load(Ordering::SeqCst) {
            match rustix::io::read(fd, &mut buf) {
                Ok(0) => return,
                Ok(n) => decoder.feed(&buf[..n], Instant::now()),
                Err(rustix::io::Errno::INTR | rustix::io::Errno::AGAIN) => Vec::new(),
                Err(_) => return,
            }
        } else {
            decoder.idle(Instant::now())
        };
        for event in events {
            if tx.send(event).is_err() {
                return;
            }
        }
    }
    let _ = std::io::stderr().flush();
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key(code: KeyCode) -> Event {
        Event::Key(KeyEvent::new(code, KeyModifiers::NONE))
    }

    /// A paste start marker without an end marker ends after [`PASTE_TIMEOUT`] without bytes:
    /// the text so far becomes input and the keys after it work. Cases: `ESC[200~abc` (issue
    /// 22's example) and a paste cut inside a multi-line text, then Ctrl+C.
    #[test]
    fn an_unterminated_paste_times_out_and_the_keys_after_it_work() {
        let t0 = Instant::now();
        let mut d = Decoder::default();
        assert!(d.feed(b"\x1b[200~abc", t0).is_empty());
        assert!(d.idle(t0 + Duration::from_millis(500)).is_empty());
        assert_eq!(
            d.idle(t0 + PASTE_TIMEOUT),
            [Event::Paste("abc".into())],
            "timed out"
        );
        assert_eq!(d.feed(b"\x1b", t0 + PASTE_TIMEOUT), [key(KeyCode::Esc)]);

        let mut d = Decoder::default();
        assert!(d.feed(b"x\x1b[200~line one\nline", t0).len() == 1);
        let late = t0 + Duration::from_millis(900);
        assert!(d.feed(b" two", late).is_empty(), "bytes keep it open");
        assert!(d.idle(late + Duration::from_millis(900)).is_empty());
        assert_eq!(
            d.idle(late + PASTE_TIMEOUT),
            [Event::Paste("line one\nline two".into())]
        );
        assert_eq!(
            d.feed(b"\x03", late + PASTE_TIMEOUT),
            [Event::Key(KeyEvent::new(
                KeyCode::Char('c'),
                KeyModifiers::CONTROL
            ))]
        );
    }

    #[test]
    fn complete_pastes_and_keys_around_them() {
        let t0 = Instant::now();
        let mut d = Decoder::default();
        assert_eq!(
            d.feed(b"a\x1b[200~one\r\ntwo\x1b[201~\r", t0),
            [
                key(KeyCode::Char('a')),
                Event::Paste("one\r\ntwo".into()),
                key(KeyCode::Enter)
            ]
        );
        // Markers split between reads.
        assert!(d.feed(b"\x1b[20", t0).is_empty());
        assert!(d.feed(b"0~hi\x1b[2", t0).is_empty());
        assert_eq!(d.feed(b"01~", t0), [Event::Paste("hi".into())]);
        assert_eq!(
            d.feed(b"\x1b[A\x1b\r", t0),
            [
                key(KeyCode::Up),
                Event::Key(KeyEvent::new(KeyCode::Enter, KeyModifiers::ALT))
            ]
        );
    }
}
