//! The bounded pool that the daemon's blocking work runs on, with a deadline
//! for each call (docs/decisions/0015-stop-means-stopped.md).
//!
//! A call that blocks (a hung network mount, a file that never answers)
//! costs its caller a clear "timed out" and one thread, never the daemon:
//! the async workers only wait, and each lane holds a bounded number of
//! threads, so file tools stuck by the dozen leave registry requests,
//! resolution and `status` answered. A call given up at its deadline may
//! still be running; it can no longer commit a write (the store asks
//! [`fate::may_commit`]), so a caller told "timed out" never finds the write done
//! later. And a call that did commit is answered by its real outcome, however
//! late: the answer never contradicts the registry.

pub(crate) mod fate;

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use tokio::sync::{Semaphore, watch};

use crate::error::BerthError;
use fate::{Current, Fate};

/// How long a call may take, waiting for a thread included. Below the
/// clients' 5 s answer timeout, so the caller reads berth's own message
/// rather than a lost connection.
pub const CALL_DEADLINE: Duration = Duration::from_secs(4);
/// Threads for file tools at once.
pub const TOOL_THREADS: usize = 16;
/// Threads for everything else (registry, resolution, hooks, sessions).
pub const REQUEST_THREADS: usize = 32;

/// Which lane a call runs in: file tools cannot crowd out the rest.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Lane {
    /// MCP file tools, which touch whatever the user's folders hold.
    Tools,
    /// Registry reads and writes, resolution, hooks, sessions.
    Requests,
}

/// The pool: two lanes of bounded threads, and the count of calls running.
pub struct Pool {
    tools: Arc<Semaphore>,
    requests: Arc<Semaphore>,
    deadline: Duration,
    running: Arc<watch::Sender<usize>>,
    stopping: AtomicBool,
    /// Set once writes are closed: calls still waiting are answered then.
    closed: watch::Sender<bool>,
}

impl Default for Pool {
    fn default() -> Self {
        Pool::new(TOOL_THREADS, REQUEST_THREADS, CALL_DEADLINE)
    }
}

impl Pool {
    /// A pool with these many threads per lane and this deadline per call.
    pub fn new(tools: usize, requests: usize, deadline: Duration) -> Pool {
        Pool {
            tools: Arc::new(Semaphore::new(tools)),
            requests: Arc::new(Semaphore::new(requests)),
            deadline,
            running: Arc::new(watch::channel(0).0),
            stopping: AtomicBool::new(false),
            closed: watch::channel(false).0,
        }
    }

    /// Runs `f` on a pool thread of `lane` and answers by the deadline.
    /// Refused once the daemon is stopping.
    pub async fn run<T: Send + 'static>(
        &self,
        lane: Lane,
        f: impl FnOnce() -> Result<T, BerthError> + Send + 'static,
    ) -> Result<T, BerthError> {
        self.refuse_when_stopping()?;
        let deadline = tokio::time::Instant::now() + self.deadline;
        let permits = match lane {
            Lane::Tools => self.tools.clone(),
            Lane::Requests => self.requests.clone(),
        };
        let mut closed = self.closed.subscribe();
        let permit = tokio::select! {
            got = tokio::time::timeout_at(deadline, permits.acquire_owned()) => match got {
                Ok(Ok(permit)) => permit,
                Ok(Err(_)) => return Err(BerthError::internal("the daemon's thread pool is closed")),
                Err(_) => return Err(self.busy(lane)),
            },
            () = until_closed(&mut closed) => return Err(stopped_before_done()),
        };
        self.refuse_when_stopping()?;
        let fate = Arc::new(Fate::default());
        let call = fate.clone();
        self.running.send_modify(|n| *n += 1);
        let running = Running(self.running.clone());
        let mut handle = tokio::task::spawn_blocking(move || {
            // Held until the work really ends: a stuck call keeps its thread
            // counted, so the lane stays bounded.
            let _permit = permit;
            let _running = running;
            let _current = Current::enter(call);
            f()
        });
        tokio::select! {
            joined = &mut handle => joined_result(joined),
            // The daemon stopped while this ran: answer before it exits.
            () = until_closed(&mut closed) => {
                if fate.abandon() {
                    Err(stopped_before_done())
                } else {
                    joined_result(handle.await)
                }
            }
            () = tokio::time::sleep_until(deadline) => {
                if fate.abandon() {
                    Err(BerthError::timed_out(format!(
                        "the call did not finish within {} s, so berth gave up on it and nothing it would have written will be written; a file or mount it touches may hang (a network filesystem?). Try again, or check that folder",
                        self.deadline.as_secs_f32()
                    )))
                } else {
                    // It committed a write: its real answer, however late.
                    joined_result(handle.await)
                }
            }
        }
    }

    /// Whether new calls are still taken (work answered without the pool asks too, so that a
    /// stopping daemon refuses everything alike).
    pub fn is_taking_work(&self) -> bool {
        !self.stopping.load(Ordering::SeqCst)
    }

    /// From now on, new calls are refused.
    pub fn stop_taking_work(&self) {
        self.stopping.store(true, Ordering::SeqCst);
    }

    /// Answers every call still waiting or running: they were stopped before
    /// they finished (writes are closed by now, so none of them can commit).
    pub fn close(&self) {
        self.closed.send_replace(true);
    }

    /// The calls running now, stuck ones included.
    pub fn running(&self) -> usize {
        *self.running.borrow()
    }

    /// Waits until no call runs, or `grace` passes; `true` when none runs.
    pub async fn drain(&self, grace: Duration) -> bool {
        let mut rx = self.running.subscribe();
        tokio::time::timeout(grace, rx.wait_for(|n| *n == 0))
            .await
            .is_ok()
    }

    fn refuse_when_stopping(&self) -> Result<(), BerthError> {
        if self.stopping.load(Ordering::SeqCst) {
            return Err(BerthError::shutting_down(
                "berthd is stopping and takes no new work, so nothing was done; run the command again in a moment (it starts a new berthd)",
            ));
        }
        Ok(())
    }

    fn busy(&self, lane: Lane) -> BerthError {
        let what = match lane {
            Lane::Tools => "file tool calls",
            Lane::Requests => "requests",
        };
        BerthError::timed_out(format!(
            "berthd is busy: every thread for {what} is taken (calls stuck on a hung folder?), and none came free within {} s; nothing was done. Try again, or restart berthd with `berth daemon stop`",
            self.deadline.as_secs_f32()
        ))
    }
}

async fn until_closed(closed: &mut watch::Receiver<bool>) {
    let _ = closed.wait_for(|c| *c).await;
}

fn stopped_before_done() -> BerthError {
    BerthError::shutting_down(
        "berthd stopped before this call finished, so nothing it would have written was written; run the command again (it starts a new berthd)",
    )
}

fn joined_result<T>(
    joined: Result<Result<T, BerthError>, tokio::task::JoinError>,
) -> Result<T, BerthError> {
    joined.unwrap_or_else(|e| Err(BerthError::internal(format!("the operation failed: {e}"))))
}

/// Counts a call as running until its thread lets go of this.
struct Running(Arc<watch::Sender<usize>>);

impl Drop for Running {
    fn drop(&mut self) {
        self.0.send_modify(|n| *n -= 1);
    }
}

#[cfg(test)]
mod tests {
    use super::fate::may_commit;
    use super::*;
    use berth_vocab::codes::Code;
    use std::sync::mpsc;
    use tokio::sync::oneshot;
    use tokio::task::JoinHandle;
    use tokio::time::advance;

    // Every test runs on tokio's paused clock and steps it: a deadline passes exactly when the
    // test says, never because the machine was slow. A pool thread at work keeps the clock from
    // moving by itself.
    const DEADLINE: Duration = Duration::from_secs(4);
    const GRACE: Duration = Duration::from_secs(2);
    const JUST: Duration = Duration::from_millis(1);

    /// Lets every task woken so far run (each yield also turns the timer driver).
    async fn settle() {
        for _ in 0..16 {
            tokio::task::yield_now().await;
        }
    }

    /// Starts `f` on `lane` as a task of its own, and returns once it runs on its thread.
    async fn started<T: Send + 'static>(
        pool: &Arc<Pool>,
        lane: Lane,
        f: impl FnOnce() -> Result<T, BerthError> + Send + 'static,
    ) -> JoinHandle<Result<T, BerthError>> {
        let (tx, on_start) = oneshot::channel();
        let pool = pool.clone();
        let call = tokio::spawn(async move {
            pool.run(lane, move || {
                let _ = tx.send(());
                f()
            })
            .await
        });
        on_start.await.expect("the call started");
        call
    }

    /// Steps the clock to just before `after`, checks `task` is still waiting, then to `after`.
    async fn finishes_at<T>(task: &JoinHandle<T>, after: Duration, what: &str) {
        settle().await;
        advance(after - JUST).await;
        settle().await;
        assert!(!task.is_finished(), "{what}: finished before its time");
        advance(JUST).await;
        settle().await;
        assert!(task.is_finished(), "{what}: not finished on time");
    }

    #[tokio::test(start_paused = true)]
    async fn a_call_that_blocks_for_ever_times_out_while_other_calls_still_run() {
        let pool = Arc::new(Pool::new(2, 2, DEADLINE));
        // Never sent: the closure blocks until the test ends.
        let (_keep, never) = mpsc::channel::<()>();
        let stuck = started(&pool, Lane::Tools, move || {
            let _ = never.recv();
            Ok(())
        })
        .await;
        finishes_at(&stuck, DEADLINE, "the stuck call").await;
        let err = stuck.await.unwrap().unwrap_err();
        assert_eq!(err.code, Code::TimedOut, "{err}");
        // The stuck thread still runs; the other lane, and the tool lane's
        // other thread, still answer.
        assert_eq!(pool.run(Lane::Requests, || Ok(7)).await.unwrap(), 7);
        assert_eq!(pool.run(Lane::Tools, || Ok(8)).await.unwrap(), 8);
    }

    #[tokio::test(start_paused = true)]
    async fn a_full_lane_times_out_with_busy_and_leaves_the_other_lane_answering() {
        let pool = Arc::new(Pool::new(1, 1, DEADLINE));
        let (_keep, never) = mpsc::channel::<()>();
        let _stuck = started(&pool, Lane::Tools, move || {
            let _ = never.recv();
            Ok(())
        })
        .await;
        let p = pool.clone();
        let waiting = tokio::spawn(async move { p.run(Lane::Tools, || Ok(())).await });
        finishes_at(&waiting, DEADLINE, "the call waiting for a thread").await;
        let err = waiting.await.unwrap().unwrap_err();
        assert!(err.message.contains("busy"), "{err}");
        assert_eq!(pool.run(Lane::Requests, || Ok(1)).await.unwrap(), 1);
    }

    #[tokio::test(start_paused = true)]
    async fn a_call_given_up_can_no_longer_commit_and_one_that_committed_is_awaited() {
        let pool = Arc::new(Pool::new(2, 2, DEADLINE));
        let (tx, rx) = mpsc::channel();
        let (go, wait) = mpsc::channel::<()>();
        let late = started(&pool, Lane::Requests, move || {
            let _ = wait.recv();
            tx.send(may_commit()).unwrap();
            Ok(())
        })
        .await;
        finishes_at(&late, DEADLINE, "the late call").await;
        assert_eq!(late.await.unwrap().unwrap_err().code, Code::TimedOut);
        go.send(()).unwrap();
        assert!(!rx.recv().unwrap(), "a call given up may not commit");
        // One that committed before its deadline is answered by its outcome, however late.
        let (go, wait) = mpsc::channel::<()>();
        let slow = started(&pool, Lane::Requests, move || {
            assert!(may_commit());
            let _ = wait.recv();
            Ok("done")
        })
        .await;
        settle().await;
        advance(DEADLINE * 2).await;
        settle().await;
        assert!(
            !slow.is_finished(),
            "a call that committed was given up at its deadline"
        );
        go.send(()).unwrap();
        assert_eq!(slow.await.unwrap().unwrap(), "done");
        assert!(may_commit(), "outside the pool, writes are not gated");
    }

    #[tokio::test(start_paused = true)]
    async fn once_stopping_new_calls_are_refused_and_drain_waits_for_running_ones() {
        let pool = Arc::new(Pool::new(2, 2, DEADLINE));
        let (go, wait) = mpsc::channel::<()>();
        let running = started(&pool, Lane::Requests, move || {
            let _ = wait.recv();
            Ok(())
        })
        .await;
        pool.stop_taking_work();
        let err = pool.run(Lane::Requests, || Ok(())).await.unwrap_err();
        assert_eq!(err.code, Code::ShuttingDown, "{err}");
        assert_eq!(pool.running(), 1);
        // The call cannot end before it is let go, so the drain waits the whole grace.
        let p = pool.clone();
        let drain = tokio::spawn(async move { p.drain(GRACE).await });
        finishes_at(&drain, GRACE, "the drain").await;
        assert!(!drain.await.unwrap(), "drain did not wait for the call");
        go.send(()).unwrap();
        assert!(pool.drain(GRACE).await);
        assert_eq!(pool.running(), 0);
        running.await.unwrap().unwrap();
    }

    #[tokio::test(start_paused = true)]
    async fn closing_answers_a_stuck_call_at_once_and_it_can_no_longer_commit() {
        let pool = Arc::new(Pool::new(2, 2, Duration::from_secs(60)));
        let (tx, rx) = mpsc::channel();
        let (go, wait) = mpsc::channel::<()>();
        let stuck = started(&pool, Lane::Requests, move || {
            let _ = wait.recv();
            tx.send(may_commit()).unwrap();
            Ok(())
        })
        .await;
        pool.stop_taking_work();
        let p = pool.clone();
        let drain = tokio::spawn(async move { p.drain(GRACE).await });
        finishes_at(&drain, GRACE, "the drain").await;
        assert!(!drain.await.unwrap(), "the stuck call still runs");
        pool.close();
        // The clock stands still: only the close can answer it.
        settle().await;
        assert!(stuck.is_finished(), "closing did not answer the stuck call");
        let err = stuck.await.unwrap().unwrap_err();
        assert_eq!(err.code, Code::ShuttingDown, "{err}");
        go.send(()).unwrap();
        assert!(
            !rx.recv().unwrap(),
            "a call answered as stopped may not commit"
        );
    }
}
