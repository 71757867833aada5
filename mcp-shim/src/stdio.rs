//! The shim's stdio transport, in front of rmcp: it reads the client's lines
//! with a bound on their length, sorts each one (`triage`), answers itself
//! the ones JSON-RPC answers with an error, and hands the rest to rmcp. One
//! writer carries its answers and rmcp's, each a whole line
//! (docs/decisions/0040-malformed-mcp-input-gets-a-json-rpc-error.md).
//!
//! rmcp polls `receive` inside a `select!`, so it may be dropped at any
//! await: every piece of a half-read line, and every answer not yet written,
//! lives in the transport, never in the future.

use std::future::Future;
use std::io;
use std::sync::Arc;

use rmcp::RoleServer;
use rmcp::service::{RxJsonRpcMessage, TxJsonRpcMessage};
use rmcp::transport::Transport;
use tokio::io::{AsyncBufReadExt, AsyncRead, AsyncWrite, AsyncWriteExt, BufReader};
use tokio::sync::Mutex;

use crate::scan::Scan;
use crate::triage::{MAX_LINE_BYTES, Triage, too_long, triage};

/// As rmcp's: tokio zeroes the buffer, and a larger one cost every session's
/// start more than the fewer reads of a rare large message gain.
const READ_BUFFER_BYTES: usize = 8 * 1024;

/// A buffer grown past this for one long line is given back after it.
const KEEP_BUFFER_BYTES: usize = 1024 * 1024;

/// The transport over the client's stdin and stdout.
pub struct Stdio<R, W> {
    reader: BufReader<R>,
    /// The line read so far.
    line: Vec<u8>,
    /// While the rest of a too-long line is read past: its scan, for its id.
    discarding: Option<Scan>,
    /// An answer of ours, not yet handed to the writer.
    answer: Option<Vec<u8>>,
    /// An answer handed to the writer that may not all be written yet.
    owed: bool,
    out: Arc<Mutex<Out<W>>>,
}

/// The one writer: what is queued goes out before anything queued after it.
struct Out<W> {
    writer: Option<W>,
    pending: Vec<u8>,
    written: usize,
}

/// What reading one line gave.
enum Read {
    /// A whole line is in `line`, its newline removed.
    Line,
    /// A line longer than the bound ended; its id, if the scan read one.
    TooLong(Option<rmcp::model::RequestId>),
    /// The client closed stdin (a line without its newline is dropped).
    End,
    Failed(io::Error),
}

impl<R: AsyncRead + Unpin, W: AsyncWrite + Unpin> Stdio<R, W> {
    pub fn new((read, write): (R, W)) -> Self {
        Stdio {
            reader: BufReader::with_capacity(READ_BUFFER_BYTES, read),
            line: Vec::new(),
            discarding: None,
            answer: None,
            owed: false,
            out: Arc::new(Mutex::new(Out {
                writer: Some(write),
                pending: Vec::new(),
                written: 0,
            })),
        }
    }

    /// Reads up to the next newline, keeping at most [`MAX_LINE_BYTES`] of
    /// it; a longer line is scanned as it streams past and dropped.
    async fn read_line(&mut self) -> Read {
        loop {
            let available = match self.reader.fill_buf().await {
                Ok(available) => available,
                Err(e) => return Read::Failed(e),
            };
            if available.is_empty() {
                return Read::End;
            }
            let newline = memchr::memchr(b'\n', available);
            let content = newline.unwrap_or(available.len());
            let taken = newline.map_or(available.len(), |i| i + 1);
            let mut long = None;
            if let Some(scan) = &mut self.discarding {
                scan.feed(&available[..content]);
            } else if self.line.len() + content > MAX_LINE_BYTES {
                let mut scan = Scan::default();
                scan.feed(&self.line);
                scan.feed(&available[..content]);
                // Give the memory back now: the rest is never kept.
                self.line = Vec::new();
                long = Some(scan);
            } else {
                self.line.extend_from_slice(&available[..content]);
            }
            self.reader.consume(taken);
            if let Some(scan) = long {
                self.discarding = Some(scan);
            }
            if newline.is_some() {
                return match self.discarding.take() {
                    Some(scan) => Read::TooLong(scan.id()),
                    None => Read::Line,
                };
            }
        }
    }

    /// Empties the line for the next one, giving back a large buffer.
    fn clear_line(&mut self) {
        if self.line.capacity() > KEEP_BUFFER_BYTES {
            self.line = Vec::new();
        } else {
            self.line.clear();
        }
    }
}

impl<W: AsyncWrite + Unpin> Out<W> {
    /// Writes everything queued, then flushes.
    async fn drain(&mut self) -> io::Result<()> {
        let Some(writer) = self.writer.as_mut() else {
            return Err(io::Error::new(
                io::ErrorKind::NotConnected,
                "the transport is closed",
            ));
        };
        while self.written < self.pending.len() {
            let n = writer.write(&self.pending[self.written..]).await?;
            if n == 0 {
                return Err(io::ErrorKind::WriteZero.into());
            }
            self.written += n;
        }
        self.written = 0;
        if self.pending.capacity() > KEEP_BUFFER_BYTES {
            self.pending = Vec::new();
        } else {
            self.pending.clear();
        }
        writer.flush().await
    }
}

impl<R, W> Transport<RoleServer> for Stdio<R, W>
where
    R: AsyncRead + Unpin + Send + 'static,
    W: AsyncWrite + Unpin + Send + 'static,
{
    type Error = io::Error;

    fn send(
        &mut self,
        item: TxJsonRpcMessage<RoleServer>,
    ) -> impl Future<Output = Result<(), io::Error>> + Send + 'static {
        let out = self.out.clone();
        async move {
            let mut out = out.lock().await;
            // Written straight into the queue: no copy of a large result.
            let start = out.pending.len();
            if let Err(e) = serde_json::to_writer(&mut out.pending, &item) {
                out.pending.truncate(start);
                return Err(io::Error::other(e));
            }
            out.pending.push(b'\n');
            out.drain().await
        }
    }

    async fn receive(&mut self) -> Option<RxJsonRpcMessage<RoleServer>> {
        loop {
            // Our answer to the last line goes out before the next is read:
            // answers keep the lines' order, and a client that floods bad
            // lines without reading is not answered faster than it reads.
            if self.answer.is_some() || self.owed {
                let out = self.out.clone();
                let mut out = out.lock().await;
                if let Some(answer) = self.answer.take() {
                    out.pending.extend_from_slice(&answer);
                    self.owed = true;
                }
                if let Err(e) = out.drain().await {
                    tracing::warn!("cannot answer the client on stdout: {e}");
                    return None;
                }
                self.owed = false;
            }
            let answer = match self.read_line().await {
                Read::Line => {
                    let line = self.line.strip_suffix(b"\r").unwrap_or(&self.line);
                    let sorted = triage(line);
                    self.clear_line();
                    match sorted {
                        Triage::Message(message) => return Some(*message),
                        Triage::Answer(answer) => answer,
                        Triage::Ignore(why) => {
                            tracing::debug!("left a line unanswered: {why}");
                            continue;
                        }
                    }
                }
                Read::TooLong(id) => too_long(id),
                Read::End => return None,
                Read::Failed(e) => {
                    tracing::error!("cannot read stdin: {e}");
                    return None;
                }
            };
            tracing::debug!("answered a line rmcp cannot take: {answer}");
            let mut line = answer.to_string().into_bytes();
            line.push(b'\n');
            self.answer = Some(line);
        }
    }

    async fn close(&mut self) -> Result<(), io::Error> {
        let mut out = self.out.lock().await;
        if out.writer.is_none() {
            return Ok(());
        }
        let drained = out.drain().await;
        out.writer = None;
        drained
    }
}
