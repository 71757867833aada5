//! `berth setting unset KEY`

use berth_proto::pb;

use super::KeyArg;
use crate::context::Ctx;
use crate::output::{self, CliError};

/// Runs `berth setting unset`.
pub async fn cmd_setting_unset(ctx: &mut Ctx, args: KeyArg) -> Result<(), CliError> {
    let req = pb::SettingRequest {
        key: args.key,
        value: String::new(),
    };
    let reply = ctx
        .unary(req, |mut c, r| async move { c.unset_setting(r).await })
        .await?;
    if ctx.json {
        output::json(&super::setting_json(&reply.key, None))
    } else {
        output::text(&format!("{} unset\n", reply.key))
    }
}
