//! `berth root ...`

pub mod add;
pub mod list;
pub mod remove;
