//! One file per subcommand: its clap `Args` and a `cmd_*` function.

pub mod claim;
pub mod completions;
pub mod daemon;
pub mod doctor;
pub mod exec;
pub mod explain;
pub mod init;
pub mod install;
pub mod man;
pub mod path;
pub mod prompt;
pub mod resolve;
pub mod root;
pub mod sessions;
pub mod setting;
pub mod uninstall;
pub mod workspace;

use crate::context::Ctx;
use crate::output::CliError;

/// What an agent session in `path` (empty: the caller's cwd) would get, with `workspace` as
/// its pin (empty: none): one `Resolve` in the agent mode, as `exec` and `prompt` ask it.
/// With `open_home` the daemon also makes the workspace's home ready and names it.
pub async fn resolve_as_agent(
    ctx: &mut Ctx,
    path: String,
    workspace: String,
    open_home: bool,
) -> Result<berth_proto::pb::Resolution, CliError> {
    let req = berth_proto::pb::ResolveRequest {
        caller: Some(ctx.caller()?),
        path,
        workspace,
        mode: berth_proto::pb::Mode::Agent as i32,
        open_home,
    };
    Ok(ctx
        .unary(req, |mut c, r| async move { c.resolve(r).await })
        .await?
        .resolution
        .unwrap_or_default())
}

/// A path argument as the UTF-8 string the protocol carries.
pub fn path_arg(p: Option<std::path::PathBuf>, what: &str) -> Result<String, CliError> {
    match p {
        None => Ok(String::new()),
        Some(p) => crate::context::utf8(p.into_os_string(), what),
    }
}

/// The JSON shape of a resolution (docs/reference.md, "The CLI").
pub fn resolution_json(r: &berth_proto::pb::Resolution) -> serde_json::Value {
    use crate::output::nullable;
    serde_json::json!({
        "workspace": r.workspace,
        "reason": r.reason,
        "directory": r.directory,
        "project": nullable(&r.project),
        "project_file": nullable(&r.project_file),
        "proposal": nullable(&r.proposal),
        "notes": r.notes,
    })
}

/// A resolution as text, one `key: value` line each, every value escaped.
pub fn resolution_text(r: &berth_proto::pb::Resolution) -> String {
    use berth_vocab::text::escaped;
    let mut s = format!(
        "workspace: {}\nreason: {}\ndirectory: {}\n",
        crate::output::bold(&escaped(&r.workspace)),
        escaped(&r.reason),
        escaped(&r.directory)
    );
    let mut line = |k: &str, v: &str| {
        if !v.is_empty() {
            s.push_str(&format!("{k}: {}\n", escaped(v)));
        }
    };
    line("project", &r.project);
    line("project_file", &r.project_file);
    line("proposal", &r.proposal);
    for n in &r.notes {
        line("note", n);
    }
    s
}
