//! At most one log line per interval for an event that can repeat without
//! end (a failing accept, a flood of refused peers), with the count of the
//! lines held back, so a flood cannot fill the disk or bury the log.

use std::time::{Duration, Instant};

/// One throttled log line.
#[derive(Debug)]
pub struct Throttle {
    every: Duration,
    last: Option<Instant>,
    held: u64,
}

impl Throttle {
    /// At most one line per `every`.
    pub fn new(every: Duration) -> Throttle {
        Throttle {
            every,
            last: None,
            held: 0,
        }
    }

    /// The event happened at `now`. `Some(held)` means log it now, saying
    /// that `held` more happened since the last line; `None` means hold
    /// it back.
    pub fn admit(&mut self, now: Instant) -> Option<u64> {
        if self
            .last
            .is_some_and(|last| now.saturating_duration_since(last) < self.every)
        {
            self.held += 1;
            return None;
        }
        self.last = Some(now);
        Some(std::mem::take(&mut self.held))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_line_per_interval_with_the_count_held_back() {
        let t0 = Instant::now();
        let ms = Duration::from_millis;
        let mut t = Throttle::new(Duration::from_secs(1));
        assert_eq!(t.admit(t0), Some(0));
        // A hundred a second, as a descriptor-starved accept loop did.
        let held = (1..100).filter_map(|i| t.admit(t0 + ms(i * 10))).count();
        assert_eq!(held, 0);
        assert_eq!(t.admit(t0 + ms(1000)), Some(99));
        assert_eq!(t.admit(t0 + ms(1500)), None);
        assert_eq!(t.admit(t0 + ms(5000)), Some(1));
        assert_eq!(t.admit(t0 + ms(7000)), Some(0));
    }
}
