//! The process: `lifecycle` runs it from start-up to exit, `lock` holds the data folder's and
//! the socket's instance locks, `logging` sets up the log file.

pub(crate) mod lifecycle;
pub(crate) mod lock;
pub(crate) mod logging;
