//! The relay's threads: lines from the client to the server and back, each
//! shown to the rules, and one writer that owns the server's stdin
//! (docs/decisions/0051-a-roots-relay-for-wrapped-servers.md).
//!
//! Memory stays flat whatever the peers send: a line longer than
//! [`LOOK_LIMIT`] is not looked at but streamed through in pieces, and the
//! client's side may have at most [`IN_FLIGHT`] bytes queued for the server.

use std::collections::VecDeque;
use std::io::{self, Read, Write};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::mpsc::{Receiver, Sender};
use std::sync::{Condvar, Mutex, PoisonError};

use super::rules::{FromClient, FromServer, Rules};

/// The longest line the rules see; a longer one passes unread. Every
/// message the relay acts on is a few hundred bytes.
pub const LOOK_LIMIT: usize = 1024 * 1024;
/// Bytes the client's side may queue for the server before it waits.
const IN_FLIGHT: usize = 4 * 1024 * 1024;
/// The size of one read.
const CHUNK: usize = 64 * 1024;

/// One piece of a stream cut at newlines.
#[derive(Debug, PartialEq, Eq)]
pub enum Piece<'a> {
    /// A whole line of at most [`LOOK_LIMIT`] bytes, its newline included
    /// (the last line of a stream may have none).
    Line(&'a [u8]),
    /// The start of a longer line.
    Start(&'a [u8]),
    /// More of it.
    More(&'a [u8]),
    /// Its end, newline included (empty at the end of the stream).
    End(&'a [u8]),
}

/// Reads `from` to its end and hands each piece to `each`, holding at most
/// `limit` bytes of a line.
pub fn split_lines<R: Read>(
    mut from: R,
    limit: usize,
    mut each: impl FnMut(Piece<'_>) -> io::Result<()>,
) -> io::Result<()> {
    let mut chunk = vec![0u8; CHUNK];
    let mut line: Vec<u8> = Vec::new();
    let mut streaming = false;
    loop {
        let n = match from.read(&mut chunk) {
            Ok(0) => break,
            Ok(n) => n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(e),
        };
        let mut rest = &chunk[..n];
        while !rest.is_empty() {
            let (seg, ends) = match memchr::memchr(b'\n', rest) {
                Some(i) => (&rest[..=i], true),
                None => (rest, false),
            };
            rest = &rest[seg.len()..];
            if streaming {
                streaming = !ends;
                each(if ends {
                    Piece::End(seg)
                } else {
                    Piece::More(seg)
                })?;
            } else if line.len() + seg.len() > limit {
                each(Piece::Start(&line))?;
                line.clear();
                if line.capacity() > CHUNK {
                    line.shrink_to(CHUNK);
                }
                streaming = !ends;
                each(if ends {
                    Piece::End(seg)
                } else {
                    Piece::More(seg)
                })?;
            } else {
                line.extend_from_slice(seg);
                if ends {
                    each(Piece::Line(&line))?;
                    line.clear();
                }
            }
        }
    }
    if streaming {
        each(Piece::End(&[]))?;
    } else if !line.is_empty() {
        each(Piece::Line(&line))?;
    }
    Ok(())
}

/// A line without its newline (and a `\r` before it), as the rules read it.
fn bare(line: &[u8]) -> &[u8] {
    let line = line.strip_suffix(b"\n").unwrap_or(line);
    line.strip_suffix(b"\r").unwrap_or(line)
}

/// What the writer thread is asked to send to the server.
pub enum ToServer {
    /// Bytes from the client; `ends` when they end a line.
    Client { bytes: Vec<u8>, ends: bool },
    /// The relay's own line (an answer or a retry).
    Relay(Vec<u8>),
    /// The client closed its side: the server's stdin closes.
    ClientDone,
}

/// The bytes the client's side has queued, which it waits on.
#[derive(Default)]
pub struct Credit {
    queued: Mutex<usize>,
    freed: Condvar,
}

impl Credit {
    fn take(&self, n: usize) {
        let mut q = self.queued.lock().unwrap_or_else(PoisonError::into_inner);
        while *q > 0 && *q + n > IN_FLIGHT {
            q = self.freed.wait(q).unwrap_or_else(PoisonError::into_inner);
        }
        *q += n;
    }

    fn give(&self, n: usize) {
        let mut q = self.queued.lock().unwrap_or_else(PoisonError::into_inner);
        *q = q.saturating_sub(n);
        self.freed.notify_all();
    }
}

/// Locks the rules; a panic in another thread leaves them usable.
fn lock(rules: &Mutex<Rules>) -> std::sync::MutexGuard<'_, Rules> {
    rules.lock().unwrap_or_else(PoisonError::into_inner)
}

/// The client's lines to the server, through the rules, until the client
/// closes its side.
pub fn client_to_server(
    from: impl Read,
    rules: &Mutex<Rules>,
    to: &Sender<ToServer>,
    credit: &Credit,
) {
    let send = |bytes: Vec<u8>, ends: bool| {
        credit.take(bytes.len());
        // The writer outlives this thread's sends; a send that fails has
        // nowhere to go anyway.
        let _ = to.send(ToServer::Client { bytes, ends });
        Ok(())
    };
    // A read error ends the client's side as its end would.
    let _ = split_lines(from, LOOK_LIMIT, |piece| match piece {
        Piece::Line(l) => {
            // The rules are unlocked before the send, which may wait on the
            // server: the other side must reach them meanwhile.
            let action = lock(rules).client_line(bare(l));
            match action {
                FromClient::Pass => send(l.to_vec(), true),
                FromClient::Replace(b) => send(b, true),
                FromClient::Drop => Ok(()),
            }
        }
        Piece::Start(b) | Piece::More(b) => send(b.to_vec(), false),
        Piece::End(b) => send(b.to_vec(), true),
    });
    let _ = to.send(ToServer::ClientDone);
}

/// The server's lines to `out` (the client), through the rules; the
/// relay's answers go to the writer. It ends when the server closes its
/// stdout, or when the client stops reading (then the server's stdout
/// closes, and the server meets a broken pipe as it would without berth).
pub fn server_to_client(
    from: impl Read,
    mut out: impl Write,
    rules: &Mutex<Rules>,
    to: &Sender<ToServer>,
    moved: &AtomicU64,
) {
    let _ = split_lines(from, LOOK_LIMIT, |piece| {
        moved.fetch_add(1, Ordering::Relaxed);
        match piece {
            Piece::Line(l) => {
                // Unlocked before the write, which may wait on the client.
                let action = lock(rules).server_line(bare(l));
                match action {
                    FromServer::Pass => out.write_all(l).and_then(|()| out.flush()),
                    FromServer::ToClient(b) => out.write_all(&b).and_then(|()| out.flush()),
                    FromServer::ToServer(b) => {
                        let _ = to.send(ToServer::Relay(b));
                        Ok(())
                    }
                }
            }
            Piece::Start(b) | Piece::More(b) => out.write_all(b),
            Piece::End(b) => out.write_all(b).and_then(|()| out.flush()),
        }
    });
    let _ = out.flush();
}

/// Writes to the server's stdin what both sides send, never inside a line
/// of the client's: the relay's lines wait for its end. It stops writing
/// (and closes the pipe) when the client is done or the server stops
/// reading, and returns when both sides are gone.
pub fn write_to_server(mut to: Option<impl Write>, from: Receiver<ToServer>, credit: &Credit) {
    let mut inside_line = false;
    let mut waiting: VecDeque<Vec<u8>> = VecDeque::new();
    let write = |to: &mut Option<_>, bytes: &[u8]| {
        if let Some(w) = to.as_mut() {
            let w: &mut dyn Write = w;
            if w.write_all(bytes).and_then(|()| w.flush()).is_err() {
                // The server stopped reading: the rest goes nowhere, as a
                // write to its closed pipe would.
                *to = None;
            }
        }
    };
    for msg in from {
        match msg {
            ToServer::Client { bytes, ends } => {
                write(&mut to, &bytes);
                credit.give(bytes.len());
                inside_line = !ends;
                if !inside_line {
                    while let Some(b) = waiting.pop_front() {
                        write(&mut to, &b);
                    }
                }
            }
            ToServer::Relay(b) if inside_line => waiting.push_back(b),
            ToServer::Relay(b) => write(&mut to, &b),
            ToServer::ClientDone => {
                // A line the client left unfinished is finished by nothing:
                // the server reads it to its end, as it would without berth.
                while let Some(b) = waiting.pop_front() {
                    write(&mut to, &b);
                }
                to = None;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use super::*;

    /// The pieces of `input` cut with `limit`, as text for comparison.
    fn pieces(input: &[u8], limit: usize) -> Vec<String> {
        let mut got = Vec::new();
        split_lines(input, limit, |p| {
            got.push(match p {
                Piece::Line(b) => format!("L{}", String::from_utf8_lossy(b)),
                Piece::Start(b) => format!("S{}", String::from_utf8_lossy(b)),
                Piece::More(b) => format!("M{}", String::from_utf8_lossy(b)),
                Piece::End(b) => format!("E{}", String::from_utf8_lossy(b)),
            });
            Ok(())
        })
        .unwrap();
        got
    }

    #[test]
    fn short_lines_come_whole_and_the_last_may_lack_its_newline() {
        assert_eq!(pieces(b"a\nbc\n\nd", 10), ["La\n", "Lbc\n", "L\n", "Ld"]);
        assert!(pieces(b"", 10).is_empty());
    }

    #[test]
    fn a_line_past_the_limit_streams_in_pieces() {
        assert_eq!(pieces(b"abcdef\nxy\n", 4), ["S", "Eabcdef\n", "Lxy\n"]);
        assert_eq!(pieces(b"abcdefgh", 4), ["S", "Mabcdefgh", "E"]);
    }

    #[test]
    fn a_long_line_across_reads_keeps_every_byte_in_order() {
        let mut input = vec![b'x'; 3 * CHUNK + 17];
        input.push(b'\n');
        input.extend_from_slice(b"after\n");
        let mut out = Vec::new();
        let mut held = 0;
        split_lines(&input[..], CHUNK, |p| {
            let (Piece::Line(b) | Piece::Start(b) | Piece::More(b) | Piece::End(b)) = p;
            held = held.max(b.len());
            out.extend_from_slice(b);
            Ok(())
        })
        .unwrap();
        assert_eq!(out, input);
        assert!(held <= CHUNK, "a piece held {held} bytes");
    }

    #[test]
    fn the_relays_lines_wait_for_the_end_of_the_clients_line() {
        let (tx, rx) = std::sync::mpsc::channel();
        let credit = Credit::default();
        for m in [
            ToServer::Client {
                bytes: b"ab".to_vec(),
                ends: false,
            },
            ToServer::Relay(b"R\n".to_vec()),
            ToServer::Client {
                bytes: b"c\n".to_vec(),
                ends: true,
            },
            ToServer::Relay(b"Q\n".to_vec()),
            ToServer::ClientDone,
            ToServer::Relay(b"lost\n".to_vec()),
        ] {
            tx.send(m).unwrap();
        }
        drop(tx);
        let out = Arc::new(Mutex::new(Vec::new()));
        struct Shared(Arc<Mutex<Vec<u8>>>);
        impl Write for Shared {
            fn write(&mut self, b: &[u8]) -> io::Result<usize> {
                self.0.lock().unwrap().extend_from_slice(b);
                Ok(b.len())
            }
            fn flush(&mut self) -> io::Result<()> {
                Ok(())
            }
        }
        write_to_server(Some(Shared(out.clone())), rx, &credit);
        assert_eq!(&*out.lock().unwrap(), b"abc\nR\nQ\n");
    }

    /// A writer that says when a write starts, then waits to be let go: a client that stops
    /// reading.
    struct Stalled {
        started: std::sync::mpsc::Sender<()>,
        go: std::sync::mpsc::Receiver<()>,
    }

    impl Write for Stalled {
        fn write(&mut self, b: &[u8]) -> io::Result<usize> {
            let _ = self.started.send(());
            let _ = self.go.recv();
            Ok(b.len())
        }
        fn flush(&mut self) -> io::Result<()> {
            Ok(())
        }
    }

    const LINE: &[u8] = b"{\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\"}\n";

    /// Held across a write that waits on the client, the rules would stop the client's side
    /// too, and with the server's stdin full the two sides would wait on each other for ever.
    #[test]
    fn the_rules_are_free_while_the_servers_side_waits_on_the_client() {
        let rules = Mutex::new(Rules::new(&[]));
        let (to, _from) = std::sync::mpsc::channel();
        let moved = AtomicU64::new(0);
        let (started, on_start) = std::sync::mpsc::channel();
        let (let_go, go) = std::sync::mpsc::channel();
        std::thread::scope(|s| {
            s.spawn(|| server_to_client(LINE, Stalled { started, go }, &rules, &to, &moved));
            on_start
                .recv_timeout(std::time::Duration::from_secs(10))
                .expect("the write started");
            let free = rules.try_lock().is_ok();
            let_go.send(()).unwrap();
            assert!(free, "the rules were held across the write to the client");
        });
    }
}
