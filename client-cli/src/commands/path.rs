//! `berth path PATH [--cwd DIR]`: how a tool path resolves (docs/reference.md, "Qualified paths and
//! file tools").

use std::path::PathBuf;

use berth_proto::pb;
use clap::Args;

use crate::context::Ctx;
use crate::output::{self, CliError};

/// Arguments of `berth path`.
#[derive(Args, Debug)]
pub struct PathArgs {
    /// A tool path: `/`, `./x`, `<workspace>/x`, an absolute path, or an unqualified one
    /// (which may start with `-`, as a file name may).
    #[arg(allow_hyphen_values = true)]
    pub path: String,
    /// Resolve as a session in this directory would (default: the current directory).
    #[arg(long)]
    pub cwd: Option<PathBuf>,
}

/// Runs `berth path`.
pub async fn cmd_path(ctx: &mut Ctx, args: PathArgs) -> Result<(), CliError> {
    let mut caller = ctx.caller()?;
    if let Some(cwd) = args.cwd {
        let cwd = std::path::absolute(&cwd)
            .map_err(|e| CliError::failed(format!("--cwd {}: {e}", cwd.display())))?;
        caller.cwd = crate::context::utf8(cwd.into_os_string(), "--cwd")?;
    }
    let req = pb::QualifyPathRequest {
        caller: Some(caller),
        path: args.path,
        session_id: String::new(),
    };
    let reply = ctx
        .unary(req, |mut c, r| async move { c.qualify_path(r).await })
        .await?;
    if ctx.json {
        return output::json(&serde_json::json!({
            "qualified": reply.qualified,
            "absolute": output::nullable(&reply.absolute),
            "workspace": output::nullable(&reply.workspace),
        }));
    }
    use berth_vocab::text::escaped;
    let mut s = format!("{}\n", escaped(&reply.qualified));
    if !reply.absolute.is_empty() {
        s.push_str(&format!("absolute: {}\n", escaped(&reply.absolute)));
    }
    if reply.qualified.starts_with("./") {
        s.push_str("(in the scratch folder an agent session here would get)\n");
    }
    output::text(&s)
}
