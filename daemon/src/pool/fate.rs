//! A call's fate on the pool (given up, or committed) and the thread-local the store asks
//! before it commits (docs/decisions/0015-stop-means-stopped.md). A file of its own so that the
//! store, which asks, does not depend on the pool, which answers with `BerthError`s.
// Clippy misreads the Windows expansion of `thread_local!`; the initializer below is const.
#![cfg_attr(windows, allow(clippy::missing_const_for_thread_local))]

use std::cell::RefCell;
use std::sync::Arc;
use std::sync::atomic::{AtomicU8, Ordering};

/// A call's fate, decided once: it committed a write, or it was given up.
#[derive(Default)]
pub(super) struct Fate(AtomicU8);

const RUNNING: u8 = 0;
const COMMITTED: u8 = 1;
const ABANDONED: u8 = 2;

impl Fate {
    /// Gives the call up, unless it already committed.
    pub(super) fn abandon(&self) -> bool {
        self.0
            .compare_exchange(RUNNING, ABANDONED, Ordering::SeqCst, Ordering::SeqCst)
            .is_ok()
    }

    /// Lets the call commit, unless it was given up.
    fn commit(&self) -> bool {
        match self
            .0
            .compare_exchange(RUNNING, COMMITTED, Ordering::SeqCst, Ordering::SeqCst)
        {
            Ok(_) => true,
            Err(now) => now == COMMITTED,
        }
    }
}

thread_local! {
    static CURRENT: RefCell<Option<Arc<Fate>>> = const { RefCell::new(None) };
}

/// The call running on this thread, for as long as this lives.
pub(super) struct Current;

impl Current {
    pub(super) fn enter(fate: Arc<Fate>) -> Current {
        CURRENT.with(|c| *c.borrow_mut() = Some(fate));
        Current
    }
}

impl Drop for Current {
    fn drop(&mut self) {
        CURRENT.with(|c| c.borrow_mut().take());
    }
}

/// Whether the call on this thread may commit a write: `false` once it was
/// given up at its deadline (its caller was told it failed). Work outside the
/// pool (start-up, the periodic sweep) may always commit.
pub fn may_commit() -> bool {
    CURRENT.with(|c| c.borrow().as_ref().is_none_or(|fate| fate.commit()))
}
