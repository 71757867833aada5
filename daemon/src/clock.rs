//! Where the daemon reads the time (docs/decisions/0054-the-daemon-on-its-own-clock.md).
//!
//! - **Deadlines and silences** are measured on tokio's clock: the pool's deadlines, the idle
//!   sweep, the data folder's poll and the stop's waits are tokio timers, and what they compare
//!   against is read with [`now`]. In production it is the system's monotonic clock; a test
//!   pauses it (`start_paused`) and steps it with `tokio::time::advance`, so no test waits.
//! - **The time of day** (compared with the disk's timestamps, stored in the registry) is a
//!   [`WallClock`] the daemon is given: [`system`] in production, [`ManualWall`] in tests.
//!   Tokio's paused clock does not move `SystemTime`, hence a clock of its own.

use std::sync::Arc;
use std::time::{Instant, SystemTime, UNIX_EPOCH};

/// Where the time of day is read from.
pub type WallClock = Arc<dyn Fn() -> SystemTime + Send + Sync>;

/// The system's time of day.
// The one reading of the real time of day; everything else is handed this clock.
#[allow(clippy::disallowed_methods)]
pub fn system() -> WallClock {
    Arc::new(SystemTime::now)
}

/// Now, on the clock deadlines are measured on: tokio's, which a test may have paused. Safe
/// outside a runtime and on the pool's threads (they run inside it).
pub(crate) fn now() -> Instant {
    tokio::time::Instant::now().into_std()
}

/// Seconds since the epoch, as the registry stores times.
pub(crate) fn secs(at: SystemTime) -> i64 {
    at.duration_since(UNIX_EPOCH)
        .map(|d| d.as_secs() as i64)
        .unwrap_or_default()
}

/// A time of day that moves only when the test says.
#[cfg(test)]
#[derive(Clone)]
pub(crate) struct ManualWall(Arc<std::sync::Mutex<SystemTime>>);

#[cfg(test)]
impl ManualWall {
    /// A clock standing at the system's time of day now.
    pub(crate) fn new() -> ManualWall {
        ManualWall(Arc::new(std::sync::Mutex::new(SystemTime::now())))
    }

    /// Moves the clock on by `by`.
    pub(crate) fn advance(&self, by: std::time::Duration) {
        *self.0.lock().unwrap() += by;
    }

    /// The clock, for whoever reads it.
    pub(crate) fn clock(&self) -> WallClock {
        let at = self.0.clone();
        Arc::new(move || *at.lock().unwrap())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[test]
    fn a_manual_wall_moves_only_when_told() {
        let manual = ManualWall::new();
        let clock = manual.clock();
        let before = clock();
        assert_eq!(clock(), before);
        manual.advance(Duration::from_secs(3));
        assert_eq!(clock(), before + Duration::from_secs(3));
    }

    #[tokio::test(start_paused = true)]
    async fn now_follows_tokios_paused_clock() {
        let before = now();
        tokio::time::advance(Duration::from_secs(60)).await;
        assert_eq!(now() - before, Duration::from_secs(60));
    }
}
