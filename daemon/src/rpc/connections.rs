//! Bounded connections: every accepted connection is tracked, one that
//! stays silent past the idle timeout is closed, and past the cap the
//! longest-silent one makes room for the newcomer.
//!
//! "Silent" means the daemon has read nothing from it. The server sends
//! HTTP/2 keep-alive pings more often than the idle timeout, and every live
//! HTTP/2 client acks them on its own, so a live client (a `berth-mcp` that
//! holds one connection for a whole session) keeps being read from while a
//! socket that never spoke, or stopped half-way through the preface, does
//! not. See docs/decisions/0014-bounded-connections.md.

use std::collections::HashMap;
use std::future::Future as _;
use std::io;
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};
use std::time::{Duration, Instant};

use berth_client::transport::LocalStream;
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio_util::sync::{CancellationToken, WaitForCancellationFutureOwned};

use crate::clock;
use crate::ops::live::Peer;

/// The HTTP/2 client preface and the header of the SETTINGS frame that must
/// follow it: a connection that sent no more has not spoken HTTP/2 yet.
const HANDSHAKE_BYTES: u64 = 24 + 9;

/// How long a connection may stay silent, and how many may be open at once.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    /// A connection the daemon has read nothing from for this long is closed.
    pub idle_timeout: Duration,
    /// At most this many connections are open; a new one past it closes the
    /// longest-silent one.
    pub max_connections: usize,
}

impl Default for Limits {
    fn default() -> Limits {
        Limits {
            idle_timeout: Duration::from_secs(60),
            max_connections: 512,
        }
    }
}

impl Limits {
    /// How often the server pings a connection it has read nothing from: a
    /// quarter of the idle timeout, so a live client acks three times over
    /// before it could be taken for idle.
    pub fn keepalive_interval(&self) -> Duration {
        self.idle_timeout / 4
    }

    /// The cap, lowered when the descriptor limit is small: half of the
    /// descriptors stay for the database, watches, file tools and logs.
    pub fn within_descriptors(self, descriptor_limit: u64) -> Limits {
        let half = usize::try_from(descriptor_limit / 2).unwrap_or(usize::MAX);
        Limits {
            max_connections: self.max_connections.min(half).max(1),
            ..self
        }
    }
}

/// Raises this process's soft descriptor limit to its hard limit (where the
/// platform allows), so the cap, not the kernel, decides when connections
/// are refused. Returns the soft limit now in force.
#[cfg(windows)]
pub fn raise_descriptor_limit() -> io::Result<u64> {
    // Windows has no per-process descriptor limit to raise; a process may hold about 16
    // million handles, so the connection cap alone bounds what clients can hold open.
    Ok(1 << 24)
}

/// See the Windows version above.
#[cfg(unix)]
pub fn raise_descriptor_limit() -> io::Result<u64> {
    let mut lim = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: getrlimit writes into the struct we pass and nothing else.
    if unsafe { libc::getrlimit(libc::RLIMIT_NOFILE, &mut lim) } != 0 {
        return Err(io::Error::last_os_error());
    }
    if lim.rlim_cur < lim.rlim_max {
        let target = lim.rlim_max;
        // macOS refuses more than OPEN_MAX (10240, <sys/syslimits.h>; libc
        // does not export it) for the soft limit.
        #[cfg(target_os = "macos")]
        let target = target.min(10_240);
        let raised = libc::rlimit {
            rlim_cur: target,
            rlim_max: lim.rlim_max,
        };
        // SAFETY: setrlimit reads the struct we pass and nothing else.
        if unsafe { libc::setrlimit(libc::RLIMIT_NOFILE, &raised) } == 0 {
            lim = raised;
        }
    }
    Ok(lim.rlim_cur)
}

/// One tracked connection's shared state.
struct Slot {
    /// Milliseconds since the table's epoch of the last read that got bytes.
    last_read: AtomicU64,
    /// Bytes read so far (saturating at what tells a handshake happened).
    bytes_read: AtomicU64,
    /// Cancelled to close the connection.
    close: CancellationToken,
    /// Set when `close` is cancelled: a plain flag for the scans, which the
    /// token's own check (a lock) would slow down at the cap.
    closing: AtomicBool,
}

impl Slot {
    fn close(&self) {
        self.closing.store(true, Ordering::Relaxed);
        self.close.cancel();
    }

    fn is_closing(&self) -> bool {
        self.closing.load(Ordering::Relaxed)
    }

    fn spoke_http2(&self) -> bool {
        self.bytes_read.load(Ordering::Relaxed) > HANDSHAKE_BYTES
    }
}

/// Every open connection, for the idle sweep and the cap.
pub struct Table {
    limits: Limits,
    /// When the table was made, on the daemon's clock (tokio's: a test steps it).
    epoch: Instant,
    slots: Mutex<Slots>,
}

#[derive(Default)]
struct Slots {
    next_id: u64,
    open: HashMap<u64, Arc<Slot>>,
}

impl Table {
    /// An empty table under `limits`.
    pub fn new(limits: Limits) -> Arc<Table> {
        Arc::new(Table {
            limits,
            epoch: clock::now(),
            slots: Mutex::default(),
        })
    }

    /// The limits in force.
    pub fn limits(&self) -> Limits {
        self.limits
    }

    fn now_ms(&self) -> u64 {
        let elapsed = clock::now().saturating_duration_since(self.epoch);
        u64::try_from(elapsed.as_millis()).unwrap_or(u64::MAX)
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Slots> {
        self.slots.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Starts tracking `stream`. At the cap, first closes the connection to
    /// evict: one that never finished the HTTP/2 handshake if any (the
    /// oldest of those), else the longest-silent one. Returns the tracked
    /// stream and how many were closed to make room.
    pub fn admit(self: &Arc<Self>, stream: LocalStream, peer: Peer) -> (Tracked, usize) {
        let (id, slot, evicted) = self.register();
        let closed = Box::pin(slot.close.clone().cancelled_owned());
        let tracked = Tracked {
            inner: stream,
            early: Vec::new(),
            slot,
            closed,
            id,
            table: self.clone(),
            peer,
        };
        (tracked, evicted)
    }

    fn register(&self) -> (u64, Arc<Slot>, usize) {
        let slot = Arc::new(Slot {
            last_read: AtomicU64::new(self.now_ms()),
            bytes_read: AtomicU64::new(0),
            close: CancellationToken::new(),
            closing: AtomicBool::new(false),
        });
        let mut slots = self.lock();
        let mut evicted = 0;
        loop {
            // One pass: how many are live, and which to evict first
            // (never-spoken ones first, as `false` sorts first, then by
            // silence).
            let key = |s: &Slot| (s.spoke_http2(), s.last_read.load(Ordering::Relaxed));
            let mut live = 0;
            let mut victim: Option<&Arc<Slot>> = None;
            for s in slots.open.values().filter(|s| !s.is_closing()) {
                live += 1;
                if victim.is_none_or(|v| key(s) < key(v)) {
                    victim = Some(s);
                }
            }
            let Some(victim) = victim.filter(|_| live >= self.limits.max_connections) else {
                break;
            };
            victim.close();
            evicted += 1;
            if live - 1 < self.limits.max_connections {
                break;
            }
        }
        let id = slots.next_id;
        slots.next_id += 1;
        slots.open.insert(id, slot.clone());
        (id, slot, evicted)
    }

    /// Closes every connection silent for the idle timeout or longer;
    /// returns how many.
    pub fn close_idle(&self) -> usize {
        let limit = u64::try_from(self.limits.idle_timeout.as_millis()).unwrap_or(u64::MAX);
        let now = self.now_ms();
        let slots = self.lock();
        let mut closed = 0;
        for slot in slots.open.values() {
            let silent = now.saturating_sub(slot.last_read.load(Ordering::Relaxed));
            if silent >= limit && !slot.is_closing() {
                slot.close();
                closed += 1;
            }
        }
        closed
    }

    /// Sweeps idle connections for as long as the daemon runs, often enough
    /// that one is closed within a quarter of the timeout (at most a second)
    /// after it went idle.
    pub async fn sweep_idle(self: Arc<Self>) {
        let tick =
            (self.limits.idle_timeout / 4).clamp(Duration::from_millis(10), Duration::from_secs(1));
        let mut every = tokio::time::interval(tick);
        every.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        loop {
            every.tick().await;
            let closed = self.close_idle();
            if closed > 0 {
                tracing::debug!(closed, "closed idle connections");
            }
        }
    }
}

/// An accepted connection whose reads are timed: it reads end-of-file once
/// the table closes it, so the HTTP/2 server drops it and its descriptor.
pub struct Tracked {
    inner: LocalStream,
    /// Bytes read before HTTP/2 started (see [`Tracked::first_bytes`]),
    /// handed out first.
    early: Vec<u8>,
    slot: Arc<Slot>,
    closed: Pin<Box<WaitForCancellationFutureOwned>>,
    id: u64,
    table: Arc<Table>,
    /// The process at the other end, which every request on it comes from.
    peer: Peer,
}

impl Tracked {
    /// Waits until the peer sends its first bytes, and keeps them for the
    /// HTTP/2 server, which is only started then: a socket that never says
    /// anything costs a descriptor and a small task until the idle timeout
    /// or the cap closes it, never an HTTP/2 connection's buffers. `None`:
    /// the peer left or the table closed it first.
    pub async fn first_bytes(mut self) -> Option<Tracked> {
        use tokio::io::AsyncReadExt;
        let mut buf = [0u8; 512];
        match self.read(&mut buf).await {
            Ok(n) if n > 0 => {
                self.early = buf[..n].to_vec();
                Some(self)
            }
            _ => None,
        }
    }

    fn is_closed(&mut self, cx: &mut Context<'_>) -> bool {
        self.closed.as_mut().poll(cx).is_ready()
    }
}

impl AsyncRead for Tracked {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        if self.is_closed(cx) {
            return Poll::Ready(Ok(()));
        }
        if !self.early.is_empty() {
            let n = self.early.len().min(buf.remaining());
            buf.put_slice(&self.early[..n]);
            self.early.drain(..n);
            return Poll::Ready(Ok(()));
        }
        let before = buf.filled().len();
        let polled = Pin::new(&mut self.inner).poll_read(cx, buf);
        let got = (buf.filled().len() - before) as u64;
        if got > 0 {
            let now = self.table.now_ms();
            self.slot.last_read.store(now, Ordering::Relaxed);
            let total = self.slot.bytes_read.load(Ordering::Relaxed);
            if total <= HANDSHAKE_BYTES {
                self.slot.bytes_read.store(total + got, Ordering::Relaxed);
            }
        }
        polled
    }
}

fn closed_error() -> io::Error {
    io::Error::new(io::ErrorKind::BrokenPipe, "connection closed by berthd")
}

impl AsyncWrite for Tracked {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        // A peer that stops reading must not keep a closed connection open.
        if self.is_closed(cx) {
            return Poll::Ready(Err(closed_error()));
        }
        Pin::new(&mut self.inner).poll_write(cx, buf)
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        if self.is_closed(cx) {
            return Poll::Ready(Err(closed_error()));
        }
        Pin::new(&mut self.inner).poll_flush(cx)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.inner).poll_shutdown(cx)
    }
}

/// Every request on the connection carries its peer (read with `Request::extensions`).
impl tonic::transport::server::Connected for Tracked {
    type ConnectInfo = Peer;

    fn connect_info(&self) -> Self::ConnectInfo {
        self.peer
    }
}

impl Drop for Tracked {
    fn drop(&mut self) {
        self.table.lock().open.remove(&self.id);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const IDLE: Duration = Duration::from_secs(60);
    const JUST: Duration = Duration::from_millis(1);

    /// Lets the sweep run on what the clock says now.
    async fn settle() {
        for _ in 0..16 {
            tokio::task::yield_now().await;
        }
    }

    fn table(max: usize) -> Arc<Table> {
        Table::new(Limits {
            idle_timeout: IDLE,
            max_connections: max,
        })
    }

    fn spoke(slot: &Slot, at_ms: u64) {
        slot.bytes_read
            .store(HANDSHAKE_BYTES + 1, Ordering::Relaxed);
        slot.last_read.store(at_ms, Ordering::Relaxed);
    }

    #[test]
    fn past_the_cap_a_connection_that_never_spoke_makes_room_first() {
        let t = table(3);
        let (_, live, _) = t.register();
        spoke(&live, 0);
        let (_, silent_old, _) = t.register();
        let (_, silent_new, _) = t.register();
        silent_new.last_read.store(5, Ordering::Relaxed);
        let (_, _, evicted) = t.register();
        assert_eq!(evicted, 1);
        assert!(silent_old.close.is_cancelled());
        assert!(!silent_new.close.is_cancelled());
        assert!(
            !live.close.is_cancelled(),
            "a client that spoke HTTP/2 stays"
        );
    }

    #[test]
    fn among_clients_that_spoke_the_longest_silent_makes_room() {
        let t = table(2);
        let (_, a, _) = t.register();
        spoke(&a, 10);
        let (_, b, _) = t.register();
        spoke(&b, 3);
        let (_, c, evicted) = t.register();
        assert_eq!(evicted, 1);
        assert!(b.close.is_cancelled());
        assert!(!a.close.is_cancelled() && !c.close.is_cancelled());
    }

    #[test]
    fn closed_connections_do_not_count_against_the_cap() {
        let t = table(1);
        let (_, a, _) = t.register();
        a.close();
        let (_, _, evicted) = t.register();
        assert_eq!(evicted, 0);
    }

    // Paused: the test steps tokio's clock, which the table reads.
    #[tokio::test(start_paused = true)]
    async fn only_connections_silent_for_the_timeout_are_closed() {
        let t = table(10);
        let (_, old, _) = t.register();
        tokio::time::advance(IDLE - JUST).await;
        let (_, fresh, _) = t.register();
        assert_eq!(t.close_idle(), 0, "closed before its timeout");
        tokio::time::advance(JUST).await;
        assert_eq!(t.close_idle(), 1);
        assert!(old.close.is_cancelled());
        assert!(!fresh.close.is_cancelled());
    }

    #[tokio::test(start_paused = true)]
    async fn the_sweep_closes_a_silent_connection_within_a_second_of_its_timeout() {
        let t = table(10);
        tokio::spawn(t.clone().sweep_idle());
        let (_, silent, _) = t.register();
        let (_, talking, _) = t.register();
        let mut waited = Duration::ZERO;
        while waited < IDLE - JUST {
            // `talking` is read from every ten seconds, as a client acking pings is.
            let step = Duration::from_secs(10).min(IDLE - JUST - waited);
            tokio::time::advance(step).await;
            settle().await;
            waited += step;
            talking.last_read.store(t.now_ms(), Ordering::Relaxed);
        }
        assert!(!silent.is_closing(), "closed before its timeout");
        tokio::time::advance(Duration::from_secs(1)).await;
        settle().await;
        assert!(
            silent.close.is_cancelled(),
            "still open a second after its timeout"
        );
        assert!(!talking.is_closing(), "a connection read from was closed");
    }

    #[test]
    fn the_cap_leaves_half_the_descriptors_free() {
        let l = Limits::default();
        assert_eq!(l.within_descriptors(20_000).max_connections, 512);
        assert_eq!(l.within_descriptors(256).max_connections, 128);
        assert_eq!(l.within_descriptors(0).max_connections, 1);
    }
}
