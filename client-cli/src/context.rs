//! What every command needs: the output mode, the environment, the caller
//! to forward, and a connection to the daemon opened on first use.

use std::path::PathBuf;

use berth_client::client::Connection;
use berth_client::paths::EnvCtx;
use berth_proto::pb;

use crate::output::CliError;

/// A command's context.
pub struct Ctx {
    /// `--json`.
    pub json: bool,
    /// The environment that decides berth's paths.
    pub env: EnvCtx,
    conn: Option<Connection>,
}

impl Ctx {
    /// Reads the environment.
    pub fn new(json: bool) -> Ctx {
        Ctx {
            json,
            env: EnvCtx::from_process(),
            conn: None,
        }
    }

    /// The daemon connection, starting the daemon when needed.
    pub async fn conn(&mut self) -> Result<&mut Connection, CliError> {
        if self.conn.is_none() {
            self.conn = Some(Connection::open(&self.env).await?);
        }
        Ok(self.conn.as_mut().expect("just opened"))
    }

    /// Sends one request, cloned for the connector's one retry.
    pub async fn unary<Req, T, F, Fut>(&mut self, req: Req, rpc: F) -> Result<T, CliError>
    where
        Req: Clone,
        F: Fn(berth_client::client::Client, Req) -> Fut,
        Fut: std::future::Future<Output = Result<tonic::Response<T>, tonic::Status>>,
    {
        let conn = self.conn().await?;
        Ok(conn.call(|c| rpc(c, req.clone())).await?)
    }

    /// The caller forwarded with requests: the cwd (`BERTH_CWD` overrides
    /// it, for bridges), `BERTH_WORKSPACE` and `BERTH_EXTRA_HOME`.
    pub fn caller(&self) -> Result<pb::Caller, CliError> {
        let cwd = match std::env::var_os("BERTH_CWD").filter(|v| !v.is_empty()) {
            Some(c) => PathBuf::from(c),
            None => std::env::current_dir()
                .map_err(|e| CliError::failed(format!("cannot read the current directory: {e}")))?,
        };
        Ok(pb::Caller {
            cwd: utf8(cwd.into_os_string(), "the current directory")?,
            env_workspace: env_utf8("BERTH_WORKSPACE")?,
            extra_home: env_utf8("BERTH_EXTRA_HOME")?,
        })
    }
}

fn env_utf8(key: &str) -> Result<String, CliError> {
    match std::env::var_os(key) {
        None => Ok(String::new()),
        Some(v) => utf8(v, key),
    }
}

/// Paths cross to the daemon as UTF-8; anything else is refused clearly.
pub fn utf8(value: std::ffi::OsString, what: &str) -> Result<String, CliError> {
    value.into_string().map_err(|v| {
        CliError::failed(format!(
            "{what} ({}) is not valid UTF-8; berth handles UTF-8 paths and names only",
            v.to_string_lossy()
        ))
    })
}
