//! `berth explain [PATH]`: the walk behind a resolution, drawn for a person.

use std::path::PathBuf;

use berth_vocab::text::escaped;
use clap::Args;

use crate::context::Ctx;
use crate::output::{self, CliError};

/// Arguments of `berth explain`.
#[derive(Args, Debug)]
pub struct ExplainArgs {
    /// The directory (or a file, meaning its folder); default: the current directory.
    pub path: Option<PathBuf>,
    /// Use this workspace explicitly.
    #[arg(long, short)]
    pub workspace: Option<String>,
    /// Explain as an agent session would resolve.
    #[arg(long)]
    pub agent: bool,
}

/// Runs `berth explain`.
pub async fn cmd_explain(ctx: &mut Ctx, args: ExplainArgs) -> Result<(), CliError> {
    let req = super::resolve::request(ctx, args.path, args.workspace, args.agent)?;
    let reply = ctx
        .unary(req, |mut c, r| async move { c.explain(r).await })
        .await?;
    let r = reply.resolution.clone().unwrap_or_default();
    if ctx.json {
        let mut doc = super::resolution_json(&r);
        doc["steps"] = reply
            .steps
            .iter()
            .map(|s| serde_json::json!({"directory": s.directory, "findings": s.findings}))
            .collect();
        doc["stopped"] = reply.stopped.clone().into();
        doc["decided"] = reply.decided.clone().into();
        return output::json(&doc);
    }
    // Every part is escaped on its own: a folder's name may hold control characters.
    let mut s = String::new();
    s.push_str(&format!("{}\n", escaped(&r.directory)));
    for step in &reply.steps {
        s.push_str(&format!("  {}\n", escaped(&step.directory)));
        if step.findings.is_empty() {
            s.push_str("      nothing here\n");
        }
        for f in &step.findings {
            s.push_str(&format!("      {}\n", escaped(f)));
        }
    }
    s.push_str(&format!("  {}\n\n", escaped(&reply.stopped)));
    s.push_str(&format!(
        "=> {} ({}): {}\n",
        output::bold(&escaped(&r.workspace)),
        escaped(&r.reason),
        escaped(&reply.decided)
    ));
    for n in &r.notes {
        s.push_str(&format!("note: {}\n", escaped(n)));
    }
    output::text(&s)
}
